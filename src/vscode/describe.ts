// How callbacks are named to a person: in notifications, the tree and the quick pick.
import type { OpenCallback } from '../runtime/answers.js';
import { summarizeInput } from '../runtime/audit.js';
import type { HostedSession } from '../runtime/sessionHost.js';

export function callbackSummary(c: OpenCallback): string {
  return c.type === 'approval' ? summarizeInput(c.request.input, 80) : c.sources.map((s) => `${s.name} (${s.mode})`).join(', ');
}

/** "main" or "main › researcher". */
export function describeAsker(hosted: HostedSession, c: OpenCallback): string {
  const chain = hosted.pathOf(c.sessionId);
  return chain.length > 0 ? chain.map((n) => n.agent).join(' › ') : c.agent;
}

/** The rule that asked, with its reason: `rule "edit-src" (.agentpolicy.jsonc:15): the agent wants to change the code`. */
export function describeRule(c: OpenCallback): string {
  if (c.type !== 'approval') return 'a sign-in';
  if (c.request.hook) return `the ${c.request.hook} hook`;
  const d = c.request.decision;
  if (!d) return 'the policy';
  const where = d.rule
    ? `${d.rule.layer} rule ${d.rule.id !== null ? `"${d.rule.id}"` : d.rule.index + 1} (${d.rule.file.split(/[\\/]/).pop()}:${d.rule.line})`
    : d.defaultFrom ? `the ${d.defaultFrom} policy's default` : 'the default';
  return `${where}${d.reason ? `: ${d.reason}` : ''}`;
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  return `${Math.round(m / 60)}h`;
}

/** The notification text for one ask. */
export function askMessage(hosted: HostedSession, c: OpenCallback): string {
  if (c.type === 'sign-in') return `Agent Policy: ${describeAsker(hosted, c)} needs a sign-in to ${callbackSummary(c)}.`;
  return `Agent Policy: ${describeAsker(hosted, c)} wants to run ${c.request.tool.id}: ${callbackSummary(c)} — asked by ${describeRule(c)}.`;
}
