// How callbacks are named to a person: in notifications, the tree and the quick pick. Plain
// functions tested in plain Node, so their strings go through @vscode/l10n (English there; core.ts
// hands it VS Code's bundle): the same keys as vscode.l10n.t, in the same l10n/bundle.l10n.json.
import * as l10n from '@vscode/l10n';
import type { OpenCallback } from '../../runtime/tree/answers.js';
import { summarizeInput } from '../../runtime/audit/auditSummary.js';
import type { PolicyDecision } from '../../policy/policy.js';
import type { CommandSandboxReport } from '../../runtime/sandbox/sandboxNote.js';
import { describeSandbox } from '../../runtime/sandbox/sandboxProbe.js';
import { SANDBOXED_TOOL } from '../../runtime/calls/sandboxRun.js';
import type { ListedSession } from '../../runtime/host/listedSession.js';
import type { Grant } from '../../runtime/tree/sessionGrants.js';

export function callbackSummary(c: OpenCallback): string {
  if (c.type === 'approval') return summarizeInput(c.request.input, 80);
  if (c.type === 'elicitation') return defang(summarizeInput(c.request.message, 80));
  if (c.type === 'result-review') return l10n.t('{0} · result of {1} characters', summarizeInput(c.request.input, 80), c.request.chars);
  return c.sources.map((s) => `${s.name} (${s.mode})`).join(', ');
}

export const CALLBACK_ICONS: Record<OpenCallback['type'], string> = { approval: 'question', 'sign-in': 'account', elicitation: 'comment-discussion', 'result-review': 'eye' };
/** "Approval", "Sign-in", "Request for input", "Result review". */
export function callbackKind(type: OpenCallback['type']): string {
  if (type === 'approval') return l10n.t('Approval');
  if (type === 'sign-in') return l10n.t('Sign-in');
  if (type === 'elicitation') return l10n.t('Request for input');
  return l10n.t('Result review');
}

/** The label of a callback in the tree and the quick pick. */
export function callbackLabel(c: OpenCallback): string {
  if (c.type === 'approval' && c.request.connection) return l10n.t('Reach {0}', `${c.request.connection.host}:${c.request.connection.port}`);
  if (c.type === 'approval') return c.request.tool.id;
  if (c.type === 'elicitation') return l10n.t('{0} asks for input', c.request.source.name);
  if (c.type === 'result-review') return l10n.t('Review result: {0}', c.request.tool.id);
  return l10n.t('Sign in: {0}', c.sources.map((s) => s.name).join(', '));
}

/** A session's state as the tree and the quick picks show it. */
export function sessionState(state: ListedSession['state']): string {
  if (state === 'running') return l10n.t('running');
  if (state === 'completed') return l10n.t('completed');
  if (state === 'failed') return l10n.t('failed');
  if (state === 'cancelled') return l10n.t('cancelled');
  return l10n.t('external');
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
  if (c.type === 'sign-in') return l10n.t('a sign-in');
  if (c.type === 'elicitation') {
    return c.request.toolId ? l10n.t('the MCP server {0} while running {1}', c.request.source.name, c.request.toolId) : l10n.t('the MCP server {0}', c.request.source.name);
  }
  // A call held because its MCP tool changed since it was approved says so (docs/mcp.md, "MCP tools pinned").
  if (c.type !== 'result-review' && c.request.hook === 'mcp-tool-changed') return l10n.t('a changed MCP tool definition, not accepted yet (Agent Policy: Review Changed MCP Tools)');
  if (c.type !== 'result-review' && c.request.hook) return l10n.t('the {0} hook', c.request.hook);
  const d = c.request.decision;
  if (!d) return l10n.t('the policy');
  // The layer (managed, workspace, user) is the policy format's word for it, as the files say.
  const where = d.rule
    ? l10n.t('{0} rule {1} ({2}:{3})', d.rule.layer, d.rule.id !== null ? `"${d.rule.id}"` : d.rule.index + 1, d.rule.file.split(/[\\/]/).pop() ?? '', d.rule.line)
    : d.defaultFrom ? l10n.t("the {0} policy's default", d.defaultFrom) : l10n.t('the default');
  // A call of several parts: say which part asked (the others were allowed, asked too, or are granted already).
  const granted: readonly string[] = c.type === 'approval' ? (c.request.grantedParts ?? []) : [];
  const asking = d.parts?.filter((p) => p.decision === d.decision && !granted.includes(p.part)) ?? [];
  const already = granted.length > 0 ? l10n.t('; {0} already granted', granted.map((p) => JSON.stringify(p)).join(', ')) : '';
  const part = asking.length > 0 ? ` ${l10n.t('for {0} ({1} of {2} parts{3})', asking.map((p) => JSON.stringify(p.part)).join(', '), asking.length, d.parts!.length, already)}` : '';
  return `${where}${part}${d.reason ? `: ${d.reason}` : ''}`;
}

/** For a command: how it would run if allowed (` If allowed, it runs sandboxed, with network.`). */
export function sandboxSentence(sandbox: CommandSandboxReport | undefined): string {
  if (!sandbox) return '';
  if (!sandbox.sandboxed) return ` ${l10n.t('If allowed, it runs NOT sandboxed.')}`;
  if (sandbox.protectedWritable) {
    return ` ${sandbox.network ? l10n.t('If allowed, it runs sandboxed, with network, protected files writable.')
      : sandbox.hostsJudged ? l10n.t('If allowed, it runs sandboxed, each host it reaches judged by the policy, protected files writable.')
      : l10n.t('If allowed, it runs sandboxed, without network, protected files writable.')}`;
  }
  return ` ${sandbox.network ? l10n.t('If allowed, it runs sandboxed, with network.')
    : sandbox.hostsJudged ? l10n.t('If allowed, it runs sandboxed, each host it reaches judged by the policy.')
    : l10n.t('If allowed, it runs sandboxed, without network.')}`;
}

/**
 * The Explain view's sandbox paragraph for a command: how the policy lets it run, and whether this
 * machine can sandbox at all ("sandboxed here"). Nothing for other tools or a denied command.
 */
export function explainSandbox(toolId: string, decision: PolicyDecision): string | undefined {
  if (toolId !== SANDBOXED_TOOL || decision.decision === 'deny') return undefined;
  const s = decision.sandbox;
  // A command a person allowed runs as the policy's allow would: its connections still judged per host.
  const asked = decision.decision === 'ask';
  const how = !s
    ? l10n.t('not sandboxed (the decision names no sandbox)')
    : !s.sandboxed ? l10n.t('NOT sandboxed') : s.network ? l10n.t('sandboxed, with network') : s.offline ? l10n.t('sandboxed, without network')
    : l10n.t('sandboxed, each host it reaches judged by the policy');
  // describeSandbox() is the runtime's (English, also the CLI's): passed through.
  return asked ? l10n.t('Sandbox: if a person allows it, it runs {0}. {1}', how, describeSandbox()) : l10n.t('Sandbox: it runs {0}. {1}', how, describeSandbox());
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return l10n.t('{0}s', s);
  const m = Math.round(s / 60);
  if (m < 60) return l10n.t('{0}m', m);
  return l10n.t('{0}h', Math.round(m / 60));
}

/** A grant's time left, rounded up so that it never shows less than remains: "14m", "59s", "1h 5m". */
export function formatTimeLeft(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return l10n.t('{0}s', s);
  const m = Math.ceil(s / 60);
  if (m < 60) return l10n.t('{0}m', m);
  return m % 60 ? l10n.t('{0}h {1}m', Math.floor(m / 60), m % 60) : l10n.t('{0}h', m / 60);
}

/**
 * A grant's row in the tree. A time-limited grant's time left comes first in its label, so a long
 * command never cuts it off; a grant for the session says so in its description.
 */
export function grantRow(grant: Pick<Grant, 'label' | 'toolId' | 'expiresAt'>, now: number): { label: string; description: string; left: string } {
  if (grant.expiresAt === undefined) {
    const left = l10n.t('allowed for the session');
    return { label: defang(grant.label), description: `${grant.toolId} · ${left}`, left };
  }
  const left = l10n.t('{0} left', formatTimeLeft(grant.expiresAt - now));
  return { label: `${left} · ${defang(grant.label)}`, description: grant.toolId, left };
}

/** The notification text for one ask. */
export function askMessage(hosted: ListedSession, c: OpenCallback): string {
  // Every part may come from a server, an agent or a workspace file (tool ids, inputs, reasons): the whole text is defanged.
  if (c.type === 'sign-in') return defang(l10n.t('Agent Policy: {0} needs a sign-in to {1}.', describeAsker(hosted, c), callbackSummary(c)));
  if (c.type === 'elicitation') {
    return defang(c.request.toolId
      ? l10n.t('Agent Policy: the MCP server {0} asks for input ({1} is running {2}): "{3}"', c.request.source.name, describeAsker(hosted, c), c.request.toolId, callbackSummary(c))
      : l10n.t('Agent Policy: the MCP server {0} asks for input: "{1}"', c.request.source.name, callbackSummary(c)));
  }
  if (c.type === 'result-review') {
    const args = [c.request.tool.id, describeAsker(hosted, c), summarizeInput(c.request.input, 80), c.request.chars, describeRule(c)];
    return defang(c.request.ok
      ? l10n.t('Agent Policy: review the result of {0} before {1} sees it: {2}, {3} characters — held by {4}.', ...args)
      : l10n.t('Agent Policy: review the result of {0} before {1} sees it: {2}, {3} characters (it failed; its error is the result) — held by {4}.', ...args));
  }
  const connection = c.request.connection;
  if (connection) {
    // A running sandboxed command's connection: the host is the question, the command its context.
    const why = c.request.decision?.rule ? l10n.t('asked by {0}', describeRule(c)) : l10n.t('no rule with domains or urls decides this host for this command');
    if (c.request.tool.kind === 'mcp') {
      return defang(l10n.t('Agent Policy: the sandboxed MCP server {0} ({1}) wants to reach {2} — {3}.', c.request.tool.id.replace(/^mcp\./, ''), describeAsker(hosted, c), `${connection.host}:${connection.port}`, why));
    }
    return defang(l10n.t('Agent Policy: a sandboxed command of {0} wants to reach {1}: {2} — {3}.', describeAsker(hosted, c), `${connection.host}:${connection.port}`, summarizeInput(connection.command, 80), why));
  }
  // Managed controls: why no longer grant is offered than the buttons show (the engine's sentence, English).
  const capped = c.request.decision?.ask?.cappedBy;
  const cap = capped !== undefined ? ` ${capped.charAt(0).toUpperCase()}${capped.slice(1)}.` : '';
  const ask = l10n.t('Agent Policy: {0} wants to run {1}: {2} — asked by {3}.', describeAsker(hosted, c), c.request.tool.id, callbackSummary(c), describeRule(c));
  return defang(`${ask}${sandboxSentence(c.request.sandbox)}${cap}`);
}
