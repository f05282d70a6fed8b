// How callbacks are named to a person: in notifications, the tree and the quick pick.
import type { OpenCallback } from '../runtime/answers.js';
import { summarizeInput } from '../runtime/audit.js';
import type { PolicyDecision } from '../policy/policy.js';
import type { CommandSandboxReport } from '../runtime/sandboxNote.js';
import { describeSandbox } from '../runtime/sandboxProbe.js';
import { SANDBOXED_TOOL } from '../runtime/sandboxRun.js';
import type { ListedSession } from '../runtime/listedSession.js';

export function callbackSummary(c: OpenCallback): string {
  if (c.type === 'approval') return summarizeInput(c.request.input, 80);
  if (c.type === 'elicitation') return defang(summarizeInput(c.request.message, 80));
  if (c.type === 'result-review') return `${summarizeInput(c.request.input, 80)} · result of ${c.request.chars} characters`;
  return c.sources.map((s) => `${s.name} (${s.mode})`).join(', ');
}

export const CALLBACK_ICONS: Record<OpenCallback['type'], string> = { approval: 'question', 'sign-in': 'account', elicitation: 'comment-discussion', 'result-review': 'eye' };
export const CALLBACK_KINDS: Record<OpenCallback['type'], string> = { approval: 'Approval', 'sign-in': 'Sign-in', elicitation: 'Request for input', 'result-review': 'Result review' };

/** The label of a callback in the tree and the quick pick. */
export function callbackLabel(c: OpenCallback): string {
  if (c.type === 'approval') return c.request.tool.id;
  if (c.type === 'elicitation') return `${c.request.source.name} asks for input`;
  if (c.type === 'result-review') return `Review result: ${c.request.tool.id}`;
  return `Sign in: ${c.sources.map((s) => s.name).join(', ')}`;
}

/**
 * Server and agent text can carry markdown links (`command:` links included), which
 * notifications render: break them so they show as text.
 */
export function defang(text: string): string {
  return text.replace(/\]\(/g, '] (');
}

/** "main", "main › researcher", or for another agent's hook "Claude Code" or "Claude Code › Explore" (its subagent). */
export function describeAsker(hosted: ListedSession, c: OpenCallback): string {
  if (hosted.external) {
    // A host's subagent has no session of its own here: the callback's agent (`claude:Explore`) names it.
    const prefix = `${hosted.external.host}:`;
    return c.agent.startsWith(prefix) ? `${hosted.external.hostLabel} › ${c.agent.slice(prefix.length)}` : hosted.external.hostLabel;
  }
  const chain = hosted.pathOf(c.sessionId);
  return chain.length > 0 ? chain.map((n) => n.agent).join(' › ') : c.agent;
}

/** The rule that asked, with its reason: `rule "edit-src" (.agentpolicy.jsonc:15): the agent wants to change the code`. */
export function describeRule(c: OpenCallback): string {
  if (c.type === 'sign-in') return 'a sign-in';
  if (c.type === 'elicitation') return `the MCP server ${c.request.source.name}${c.request.toolId ? ` while running ${c.request.toolId}` : ''}`;
  if (c.type !== 'result-review' && c.request.hook) return `the ${c.request.hook} hook`;
  const d = c.request.decision;
  if (!d) return 'the policy';
  const where = d.rule
    ? `${d.rule.layer} rule ${d.rule.id !== null ? `"${d.rule.id}"` : d.rule.index + 1} (${d.rule.file.split(/[\\/]/).pop()}:${d.rule.line})`
    : d.defaultFrom ? `the ${d.defaultFrom} policy's default` : 'the default';
  // A call of several parts: say which part asked (the others were allowed, asked too, or are granted already).
  const granted: readonly string[] = c.type === 'approval' ? (c.request.grantedParts ?? []) : [];
  const asking = d.parts?.filter((p) => p.decision === d.decision && !granted.includes(p.part)) ?? [];
  const already = granted.length > 0 ? `; ${granted.map((p) => JSON.stringify(p)).join(', ')} already granted` : '';
  const part = asking.length > 0 ? ` for ${asking.map((p) => JSON.stringify(p.part)).join(', ')} (${asking.length} of ${d.parts!.length} parts${already})` : '';
  return `${where}${part}${d.reason ? `: ${d.reason}` : ''}`;
}

/** For a command: how it would run if allowed (` If allowed, it runs sandboxed, with network.`). */
export function sandboxSentence(sandbox: CommandSandboxReport | undefined): string {
  if (!sandbox) return '';
  if (!sandbox.sandboxed) return ' If allowed, it runs NOT sandboxed.';
  return ` If allowed, it runs sandboxed, ${sandbox.network ? 'with' : 'without'} network${sandbox.protectedWritable ? ', protected files writable' : ''}.`;
}

/**
 * The Explain view's sandbox paragraph for a command: how the policy lets it run, and whether this
 * machine can sandbox at all ("sandboxed here"). Nothing for other tools or a denied command.
 */
export function explainSandbox(toolId: string, decision: PolicyDecision): string | undefined {
  if (toolId !== SANDBOXED_TOOL || decision.decision === 'deny') return undefined;
  const s = decision.sandbox;
  // A command a person allowed runs sandboxed (where the decision says so) with the network on.
  const asked = decision.decision === 'ask';
  const how = !s
    ? 'not sandboxed (the decision names no sandbox)'
    : !s.sandboxed ? 'NOT sandboxed' : `sandboxed, ${s.network || asked ? 'with' : 'without'} network`;
  return `Sandbox: ${asked ? 'if a person allows it, it runs' : 'it runs'} ${how}. ${describeSandbox()}`;
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  return `${Math.round(m / 60)}h`;
}

/** A grant's time left, rounded up so that it never shows less than remains: "14m", "59s", "1h 5m". */
export function formatTimeLeft(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.ceil(s / 60);
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h${m % 60 ? ` ${m % 60}m` : ''}`;
}

/** The notification text for one ask. */
export function askMessage(hosted: ListedSession, c: OpenCallback): string {
  // Every part may come from a server, an agent or a workspace file (tool ids, inputs, reasons): the whole text is defanged.
  if (c.type === 'sign-in') return defang(`Agent Policy: ${describeAsker(hosted, c)} needs a sign-in to ${callbackSummary(c)}.`);
  if (c.type === 'elicitation') {
    return defang(`Agent Policy: the MCP server ${c.request.source.name} asks for input${c.request.toolId ? ` (${describeAsker(hosted, c)} is running ${c.request.toolId})` : ''}: "${callbackSummary(c)}"`);
  }
  if (c.type === 'result-review') {
    const failed = c.request.ok ? '' : ' (it failed; its error is the result)';
    return defang(`Agent Policy: review the result of ${c.request.tool.id} before ${describeAsker(hosted, c)} sees it: ${summarizeInput(c.request.input, 80)}, ${c.request.chars} characters${failed} — held by ${describeRule(c)}.`);
  }
  // Managed controls: why no longer grant is offered than the buttons show.
  const capped = c.request.decision?.ask?.cappedBy;
  const cap = capped !== undefined ? ` ${capped.charAt(0).toUpperCase()}${capped.slice(1)}.` : '';
  return defang(`Agent Policy: ${describeAsker(hosted, c)} wants to run ${c.request.tool.id}: ${callbackSummary(c)} — asked by ${describeRule(c)}.${sandboxSentence(c.request.sandbox)}${cap}`);
}
