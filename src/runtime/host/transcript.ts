// A session's transcript as lines a person reads: the CLI prints them, the editor shows them.
import * as path from 'node:path';
import type { RuntimeEvent } from '../tree/events.js';
import type { CommandSandboxReport } from '../sandbox/sandboxNote.js';

export function compact(value: unknown, max = 100): string {
  return truncated(JSON.stringify(value) ?? '', max);
}

export function truncated(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** How a run_command call runs (or, asked, would run): ` [sandboxed, hosts judged]`; nothing for other tools or a denial. */
function sandboxText(effective: string, sandbox: CommandSandboxReport | undefined): string {
  if (!sandbox || effective === 'deny') return '';
  const how = !sandbox.sandboxed
    ? 'not sandboxed'
    : `sandboxed, ${sandbox.network ? 'network' : sandbox.hostsJudged ? 'hosts judged' : 'no network'}${sandbox.protectedWritable ? ', protected files writable' : ''}`;
  return effective === 'ask' ? ` [if allowed: ${how}]` : ` [${how}]`;
}

/** A time of day in the local zone, to the minute: when a grant ends. */
function clockTime(epochMs: number): string {
  const at = new Date(epochMs);
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

/** The lines an event adds to the transcript of the session tree rooted at `rootId`. */
export function describeEvent(e: RuntimeEvent, rootId: string): string[] {
  const who = (agent: string, sessionId: string): string => (sessionId === rootId ? `[${agent}]` : `[${agent} ${sessionId}]`);
  switch (e.type) {
    case 'turn-started':
      return [`${who(e.agent, e.sessionId)} > ${e.prompt}`];
    case 'tool-call': {
      const rule = e.decision.rule;
      const source = e.grantedUntil !== undefined ? `grant until ${clockTime(e.grantedUntil)}` : e.by !== 'policy' ? e.by : rule ? `${rule.layer} ${path.basename(rule.file)}:${rule.line}${rule.id ? ` "${rule.id}"` : ''}` : 'default';
      return [`${who(e.agent, e.sessionId)} ${e.toolId} ${compact(e.input)} -> ${e.effective} (${source})${sandboxText(e.effective, e.sandbox)}`];
    }
    case 'tool-result':
      return [`${who(e.agent, e.sessionId)}   ${e.ok ? 'result' : 'error'}: ${truncated(e.content, 120)}`];
    case 'message':
      return [`${who(e.agent, e.sessionId)} says: ${e.text}`];
    case 'callback-opened':
      // Only a held result gets a line: an ask's own line is its tool call's.
      return e.callback.type === 'result-review'
        ? [`${who(e.agent, e.sessionId)}   result held for review (${e.callback.request.chars} characters, ${e.callback.request.digest.slice(0, 19)}…)`]
        : [];
    case 'callback-settled':
      return [`${who(e.agent, e.sessionId)}   answered ${e.outcome} by ${e.by}`];
    case 'turn-ended':
      return e.state === 'failed' ? [`${who(e.agent, e.sessionId)} failed: ${e.error}`] : [];
    case 'warning':
      return [`warning: ${e.message}`];
    case 'sandbox':
      return [`sandbox: ${e.message}`];
    case 'tools-hidden':
      return e.hidden.length === 0
        ? [`${who(e.agent, e.sessionId)}   every tool is offered to its model again`]
        : [`${who(e.agent, e.sessionId)}   not offered to its model (every call denied): ${e.hidden.map((h) => `${h.toolId} by ${h.by}`).join('; ')}`];
    case 'marks':
      return [`${who(e.agent, e.sessionId)}   marked the session: ${e.added.join(', ')} (by ${e.toolId}; it carries ${e.marks.join(', ')})`];
    default:
      return [];
  }
}
