// One connection of a sandboxed command (policy-format.md, "Sandboxed commands": the network,
// per connection). The sandbox's proxy asks, for each connection a command opens, what the rules
// with `domains` or `urls` say about that host (and, for plain HTTP, that URL) for that command.
// The command's parts are judged each on its own, as for a call; the connection is refused when
// any part's deciding rule denies it, let through when a rule allows it for some part (the host
// is what that rule allowed the command line to reach: which of its programs opened the
// connection cannot be known), and asked otherwise. Rules without `domains` or `urls` never
// decide a connection: `allow` on `git *` lets git run, not reach every host.
import type { RuleRef } from './compile.js';
import type { ToolCall, ToolDescriptor } from './call.js';
import type { ConnectionPartJudgement } from './judgement.js';
import type { Decision } from '../file/schema.js';

/** Where a connection goes: a host and port (an HTTPS tunnel, SOCKS), or a plain HTTP request's URL too. */
export interface ConnectionTarget {
  host: string;
  port: number;
  /** The absolute URL of a plain HTTP request; undefined for an opaque tunnel (CONNECT, SOCKS). */
  url?: string;
}

export interface ConnectionDecision {
  decision: Decision;
  /** The rule that decided (for a deny, the first denying part's; for an allow, the first allowing part's); null: no rule. */
  rule: RuleRef | null;
  reason?: string;
  /** The part of the command line the deciding rule judged, when the line has several. */
  part?: string;
  /** The URL the rules judged. */
  url: string;
}

/** The tool the connection is judged as: run_command, with the connection's URL as its one URL argument. */
const CONNECTION_TOOL: ToolDescriptor = { id: 'builtin.run_command', kind: 'builtin', commandArg: 'command', urlArgs: ['url'], pathArgs: [] };

/**
 * The URL a connection is judged by: a plain HTTP request's own URL; for a tunnel, whose path
 * cannot be seen, the root of its host (`https://host/`, the port kept unless 443 or 80), so a
 * `urls` allow naming a path never lets a tunnel through, while a `urls` deny of the whole host
 * still refuses it.
 */
export function connectionUrl(target: ConnectionTarget): string {
  if (target.url !== undefined) return target.url;
  const host = target.host.includes(':') && !target.host.startsWith('[') ? `[${target.host}]` : target.host;
  if (target.port === 443) return `https://${host}/`;
  if (target.port === 80) return `http://${host}/`;
  return `https://${host}:${target.port}/`;
}

/** The call a connection is judged as, for the agent whose command opened it. */
export function connectionCall(command: string, target: ConnectionTarget, agent: string): ToolCall {
  return { tool: CONNECTION_TOOL, input: { command, url: connectionUrl(target) }, agent };
}

/** Deny when any part is denied by a rule, allow when any part is allowed, else ask. */
export function combineConnection(parts: readonly ConnectionPartJudgement[], url: string): ConnectionDecision {
  const several = parts.length > 1;
  const pick = (j: ConnectionPartJudgement): ConnectionDecision => ({
    decision: j.decision, rule: j.rule?.ref ?? null, url,
    ...(j.reason !== undefined ? { reason: j.reason } : {}),
    ...(several && j.part !== '' ? { part: j.part } : {}),
  });
  const denied = parts.find((p) => p.decision === 'deny');
  if (denied) return pick(denied);
  const allowed = parts.find((p) => p.decision === 'allow');
  if (allowed) return pick(allowed);
  return pick(parts.find((p) => p.rule !== null) ?? parts[0]!);
}
