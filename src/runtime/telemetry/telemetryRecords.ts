// An audit line as an OpenTelemetry log record (docs/teams.md, "Decisions in OpenTelemetry"): its
// event name and attributes, named `agentpolicy.*`. Only ids, decisions, rules, answers and times
// go out by default; what a call was about (the summary with its command text or paths, the
// reason, the rule's file, the input's digest, hosts, the parts' text, paths undone) only when the
// managed policy allows it (`controls.telemetry.content`). Plain data: the OpenTelemetry SDK is
// otelExport.ts's alone.
import { HOST_AGENTS } from '../../policy/file/policyNames.js';
import type { AuditEntry, AuditEvent } from '../audit/audit.js';

export type AttributeValue = string | number | boolean | string[];
export type Attributes = Record<string, AttributeValue>;

export interface TelemetryRecord {
  /** The log record's event name, e.g. `agentpolicy.decision`. */
  eventName: string;
  /** Milliseconds since the epoch: the audit line's time. */
  timeMs: number;
  /** INFO, or WARN for a deny (a decision, a connection refused, an answer refused). */
  severity: 'INFO' | 'WARN';
  body: string;
  attributes: Attributes;
}

/** The event name of each audit event. */
export const EVENT_NAMES: Readonly<Record<AuditEvent, string>> = {
  'session-started': 'agentpolicy.session_started',
  'session-ended': 'agentpolicy.session_ended',
  decision: 'agentpolicy.decision',
  'callback-opened': 'agentpolicy.ask',
  'callback-settled': 'agentpolicy.answer',
  'sandbox-cleanup': 'agentpolicy.sandbox_cleanup',
  'grant-revoked': 'agentpolicy.grant_revoked',
  'answer-refused': 'agentpolicy.answer_refused',
  'tools-hidden': 'agentpolicy.tools_hidden',
  connection: 'agentpolicy.connection',
  'server-started': 'agentpolicy.server_started',
  'mcp-tool-pinned': 'agentpolicy.mcp_tool_pinned',
  'mcp-tool-changed': 'agentpolicy.mcp_tool_changed',
  'mcp-tool-accepted': 'agentpolicy.mcp_tool_accepted',
};

/** The attributes that carry what a call was about: exported only when the managed policy allows content. */
export const CONTENT_ATTRIBUTES: readonly string[] = [
  'agentpolicy.summary', 'agentpolicy.reason', 'agentpolicy.rule.file', 'agentpolicy.input.digest', 'agentpolicy.parts',
  'agentpolicy.grant.parts', 'agentpolicy.undone', 'agentpolicy.network.host', 'agentpolicy.network.port', 'agentpolicy.hidden.tools',
];

/** A hook's session id is `<host>:<the host's session>` (docs/hooks.md). */
const HOST_SESSION = new RegExp(`^(${HOST_AGENTS.join('|')}):`);

/**
 * The record of one audit line. `content`: whether what a call was about may go out.
 * `askLatencyMs`: for a settled ask, the milliseconds since it was opened (AskClock).
 */
export function telemetryRecord(entry: AuditEntry, content: boolean, askLatencyMs?: number, auditHead?: string): TelemetryRecord {
  const a: Attributes = { 'agentpolicy.event': entry.event, 'agentpolicy.session.id': entry.session };
  const put = (key: string, value: AttributeValue | undefined | null): void => {
    if (value !== undefined && value !== null) a[key] = value;
  };
  const host = HOST_SESSION.exec(entry.session)?.[1];
  put('agentpolicy.host', host);
  put('agentpolicy.source', host !== undefined ? 'hook' : 'runtime');
  put('agentpolicy.session.parent_id', entry.parentSession);
  put('agentpolicy.turn.id', entry.turn);
  put('agentpolicy.agent', entry.agent);
  put('agentpolicy.tool.id', entry.tool);
  put('agentpolicy.decision', entry.decision);
  if (entry.rule) {
    put('agentpolicy.rule.id', entry.rule.id);
    put('agentpolicy.rule.layer', entry.rule.layer);
    put('agentpolicy.rule.index', entry.rule.index);
    put('agentpolicy.rule.line', entry.rule.line);
    if (content) put('agentpolicy.rule.file', entry.rule.file);
  } else if (entry.rule === null || entry.default !== undefined) {
    // No rule decided: which layer's default (or permissionMode, or builtin) did.
    put('agentpolicy.rule.default', entry.default ?? 'builtin');
  }
  put('agentpolicy.lowered', entry.lowered);
  put('agentpolicy.hook', entry.hook);
  put('agentpolicy.decision_ms', entry.hookMs);
  put('agentpolicy.callback.id', entry.callback);
  put('agentpolicy.answer', entry.answer);
  put('agentpolicy.answered_by', entry.answeredBy);
  put('agentpolicy.grant.seconds', entry.grantSeconds);
  put('agentpolicy.ask.latency_ms', askLatencyMs);
  put('agentpolicy.session.state', entry.state);
  put('agentpolicy.review', entry.review);
  // The audit chain's head after this line (docs/teams.md): a copy the person at the keyboard cannot rewrite.
  put('agentpolicy.audit.hash', auditHead);
  put('agentpolicy.mcp.definition_digest', entry.definitionDigest);
  put('agentpolicy.mcp.pinned_digest', entry.pinnedDigest);
  if (entry.sandbox) {
    put('agentpolicy.sandbox.sandboxed', entry.sandbox.sandboxed);
    put('agentpolicy.sandbox.network', entry.sandbox.network);
  }
  if (entry.parts) put('agentpolicy.parts.count', entry.parts.length + (entry.partsOmitted ?? 0));
  if (entry.undone) put('agentpolicy.undone.count', entry.undone.length);
  if (entry.hidden) put('agentpolicy.hidden.count', entry.hidden.length + (entry.hiddenOmitted ?? 0));
  if (content) {
    put('agentpolicy.summary', entry.summary);
    put('agentpolicy.reason', entry.reason);
    put('agentpolicy.input.digest', entry.inputDigest);
    put('agentpolicy.network.host', entry.host);
    put('agentpolicy.network.port', entry.port);
    if (entry.parts) put('agentpolicy.parts', entry.parts.map((p) => `${p.decision}: ${p.part}`));
    if (entry.grantParts) put('agentpolicy.grant.parts', entry.grantParts);
    if (entry.undone) put('agentpolicy.undone', entry.undone);
    if (entry.hidden) put('agentpolicy.hidden.tools', entry.hidden.map((h) => h.tool));
  }
  const timeMs = Date.parse(entry.time);
  const denied = entry.decision === 'deny' || entry.answer === 'deny' || entry.answer === 'refused' || entry.event === 'answer-refused';
  return {
    eventName: EVENT_NAMES[entry.event] ?? `agentpolicy.${String(entry.event).replace(/-/g, '_')}`,
    timeMs: Number.isFinite(timeMs) ? timeMs : Date.now(),
    severity: denied ? 'WARN' : 'INFO',
    body: bodyOf(entry),
    attributes: a,
  };
}

/** A short body, no content: "decision deny builtin.run_command". */
function bodyOf(entry: AuditEntry): string {
  return [entry.event, entry.decision ?? entry.answer, entry.tool].filter((x) => x !== undefined).join(' ');
}

/** The most asks kept open on the clock (a session that never settles its asks must not grow it without end). */
const OPEN_ASKS_MAX = 10_000;

/** When each ask was opened, to give its answer the time it took (`agentpolicy.ask.latency_ms`). */
export class AskClock {
  private readonly opened = new Map<string, number>();

  /** The milliseconds a settled ask took, undefined for any other line (or an ask opened before this process saw it). */
  see(entry: AuditEntry): number | undefined {
    if (entry.callback === undefined) return undefined;
    const at = Date.parse(entry.time);
    if (!Number.isFinite(at)) return undefined;
    if (entry.event === 'callback-opened') {
      if (this.opened.size >= OPEN_ASKS_MAX) this.opened.delete(this.opened.keys().next().value!);
      this.opened.set(entry.callback, at);
      return undefined;
    }
    if (entry.event !== 'callback-settled') return undefined;
    const start = this.opened.get(entry.callback);
    if (start === undefined) return undefined;
    this.opened.delete(entry.callback);
    return Math.max(0, at - start);
  }
}
