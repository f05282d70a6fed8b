// Another maker's agent session (Claude Code, Codex, …) as an editor window sees it: its pre-tool
// hook (`agentpolicy hook`) judged a call with the policy, the policy asks, and the hook put the
// question to this window. Each ask is an open callback of this session, made, timed out,
// settled and audited by the same code as our own sessions' (callbacks.ts), so the notification,
// the Open Callbacks tree and the palette answer it like any other. The window never runs the
// call: the answer goes back to the hook, and the host runs it or not.
//
// Nothing the hook sent decides anything here: only a person answers, or the same person's
// earlier grant (Allow for Session, for 15 minutes…) of the same call, or of the same asking parts
// of a compound command, in the same host session (sessionGrants.ts).
import { hash } from 'node:crypto';
import { kindFromId } from '../../policy/rules/call.js';
import { canonicalJson } from '../../policy/rules/compile.js';
import type { Remember } from '../../policy/file/grantLength.js';
import { capRemember, NO_CONTROLS, type ManagedControls } from '../../policy/rules/managedControls.js';
import type { PartDecision, PolicyDecision } from '../../policy/policy.js';
import { OpenApproval, type AnswerResult, type ApprovalRequest, type CallbackAnswer, type OpenCallback } from '../tree/answers.js';
import { auditTime, type AuditEntry, type AuditSink } from '../audit/audit.js';
import { auditParts, inputDigest, summarizeInput } from '../audit/auditSummary.js';
import { answerCallback, closeCallbacks, openCallback, type CallbackHost, type CallbackRecord, type Outcome } from '../tree/callbacks.js';
import type { RuntimeEvent } from '../tree/events.js';
import type { ExternalHost, ListedSession, SessionNodeInfo } from './listedSession.js';
import { grantAuditFields, grantedUntil, grantRevokedEntry, longestGrant, type Grant, type GrantCall, SessionGrants } from '../tree/sessionGrants.js';
import { describeEvent } from './transcript.js';
import { newId } from '../tree/tree.js';

/** One ask of a host's hook, checked (the bridge's server checks shapes and sizes before this). */
export interface ExternalAsk {
  /** Our stable tool id: `builtin.run_command`, `mcp.github.create_issue`, `claude.Glob`. */
  toolId: string;
  /** The host's own name for the tool (`Bash`), when it differs. */
  toolName?: string;
  /** Our mapped input (`{ command: "rm -rf build" }`). */
  input: unknown;
  /** The host's subagent that calls, when the host says. */
  agent?: string;
  reason?: string;
  rule: PolicyDecision['rule'];
  /** When no rule decided: the layer whose `default` asked (null: the built-in default). */
  defaultFrom?: PolicyDecision['defaultFrom'];
  parts?: PartDecision[];
  /** The workspace is untrusted and its allow became this ask. */
  lowered: boolean;
  /** The widest grant a person may give: `never` (a protected file, a `remember: never` rule), a duration (`15m`) or `session`. */
  remember: Remember;
  /** The rule's ask timeout in seconds, and what happens when it lapses (callbacks.ts). */
  timeoutSeconds?: number;
  onTimeout: 'deny' | 'keep';
  /** Flow rules: the marks the host session carried when it asked, and those only perhaps there. */
  marks?: string[];
  maybeMarks?: string[];
}

/** What the hook is told. `by: 'timeout'`: the rule's timeout lapsed with `onTimeout: deny`. */
export type ExternalAnswer = { answer: 'allow-once' | 'allow-session' | 'allow-duration' | 'deny'; by: 'person' | 'session' | 'timeout'; reason?: string };

/** An ask in flight: the callback it opened (none when Allow for Session answered it at once) and its answer; undefined when the callback was closed. */
export interface PendingExternalAsk {
  callbackId: string | undefined;
  answer: Promise<ExternalAnswer | undefined>;
}

/** What the session tells the window it belongs to. */
export interface ExternalSessionWiring {
  audit?: AuditSink;
  opened(callback: OpenCallback, session: ExternalSession): void;
  changed(): void;
  /** Epoch milliseconds, for when time-limited grants lapse (default `Date.now`). */
  clock?: () => number;
  /** The window's managed controls now: they cap what a person may give a hook's ask, whatever the hook was run with. */
  controls?: () => ManagedControls;
}

function grantedPartsField(parts: string[]): { grantedParts?: string[] } {
  return parts.length > 0 ? { grantedParts: parts } : {};
}

/** Transcript lines kept per host session: a host session can live for days. */
const TRANSCRIPT_LINES = 1000;

const SAFE_SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,127}$/;

/**
 * The session id the window and the audit log use: `claude:<host session id>`. A host id that is
 * empty, long or holds anything but plain characters is replaced by a digest of it, so that it
 * can be shown and logged as is.
 */
export function externalSessionId(host: string, hostSession: string): string {
  if (hostSession === '') return `${host}:unknown`;
  return SAFE_SESSION_ID.test(hostSession) ? `${host}:${hostSession}` : `${host}:h-${hash('sha256', hostSession, 'hex').slice(0, 16)}`;
}

export class ExternalSession implements CallbackHost, ListedSession {
  readonly id: string;
  readonly state = 'external' as const;
  readonly prompt = '';
  readonly currentTurnId = '';
  readonly transcript: string[] = [];
  readonly callbacks = new Map<string, CallbackRecord>();
  readonly nodes: ReadonlyMap<string, SessionNodeInfo>;
  private readonly allowances: SessionGrants;

  constructor(
    readonly external: ExternalHost,
    private readonly wiring: ExternalSessionWiring,
  ) {
    this.id = externalSessionId(external.host, external.hostSession);
    this.nodes = new Map([[this.id, { id: this.id, agent: external.hostLabel, parentId: undefined, rootTurnId: '' }]]);
    this.allowances = new SessionGrants(wiring.clock);
  }

  /** Flow rules: the host session's marks as its latest ask said (its hook keeps them, hookMarks.ts). */
  marks: readonly string[] = [];
  maybeMarks: readonly string[] = [];

  get agent(): string {
    return this.external.hostLabel;
  }

  openCallbacks(): OpenCallback[] {
    return [...this.callbacks.values()].filter((r) => r.open).map((r) => r.callback);
  }

  knowsCallback(callbackId: string): boolean {
    return this.callbacks.has(callbackId);
  }

  pathOf(): SessionNodeInfo[] {
    return [...this.nodes.values()];
  }

  fromEarlierTurn(): boolean {
    return false;
  }

  /** Puts one ask to a person, or answers it at once when the same person allowed the same call for this session. */
  ask(ask: ExternalAsk): PendingExternalAsk {
    // The latest ask says what the host session carries now (its hook keeps the marks).
    this.marks = ask.marks ?? [];
    this.maybeMarks = ask.maybeMarks ?? [];
    const canonical = canonicalJson(ask.input);
    // The name the hook judged the call with (rules' `agents` match it; Explain uses it): `claude`, `claude:Explore`.
    const agent = ask.agent !== undefined ? `${this.external.host}:${ask.agent}` : this.external.host;
    // The hook judged with the managed policy it was given; the window's own managed controls cap the answer too.
    const capped = capRemember(ask.remember, this.wiring.controls?.() ?? NO_CONTROLS);
    const widest: Remember = ask.lowered ? 'never' : capped.remember;
    const decision: PolicyDecision = {
      decision: 'ask', rule: ask.rule, lowered: ask.lowered, warnings: [],
      ...(ask.reason !== undefined ? { reason: ask.reason } : {}),
      ...(ask.parts ? { parts: ask.parts } : {}),
      ...(ask.defaultFrom !== undefined ? { defaultFrom: ask.defaultFrom } : {}),
      ask: {
        onTimeout: ask.onTimeout, remember: capped.remember,
        ...(capped.cappedBy !== undefined ? { cappedBy: capped.cappedBy } : {}), ...(ask.timeoutSeconds !== undefined ? { timeout: ask.timeoutSeconds } : {}),
      },
    };
    const turnId = newId('hook');
    const auditBase = {
      session: this.id, turn: turnId, agent, tool: ask.toolId, inputDigest: inputDigest(ask.input, canonical), summary: summarizeInput(ask.input),
      rule: ask.rule, lowered: ask.lowered, ...(ask.rule === null ? { default: ask.defaultFrom ?? 'builtin' } : {}), ...(ask.reason !== undefined ? { reason: ask.reason } : {}), ...auditParts(ask.parts),
    } satisfies Omit<AuditEntry, 'time' | 'event'>;
    const event = { sessionId: this.id, turnId, agent, callId: turnId, toolId: ask.toolId, name: ask.toolName ?? ask.toolId, input: ask.input, decision };

    const grantCall: GrantCall = { toolId: ask.toolId, input: ask.input, canonical, decision, summary: summarizeInput(ask.input) };
    const granted = this.allowances.answering(grantCall);
    if (granted !== undefined) {
      const fields = grantAuditFields(granted);
      this.audit({ event: 'decision', ...auditBase, decision: 'allow', answeredBy: 'session', ...fields });
      this.emit({ type: 'tool-call', ...event, effective: 'allow', by: 'session', ...grantedUntil(granted) });
      this.changed();
      return { callbackId: undefined, answer: Promise.resolve({ answer: fields.answer, by: 'session' }) };
    }

    const request: ApprovalRequest = {
      tool: { id: ask.toolId, name: ask.toolName ?? ask.toolId, kind: kindFromId(ask.toolId) ?? 'unknown', annotations: {} },
      title: `${this.external.hostLabel} wants to run ${ask.toolId}: ${summarizeInput(ask.input)}`,
      input: ask.input,
      decision,
      sessionAllowed: widest === 'session',
      longestGrant: longestGrant(decision, false),
      ...(widest === 'never' ? {} : grantedPartsField(this.allowances.grantedParts(grantCall))),
      ...(ask.timeoutSeconds !== undefined ? { timeout: { at: Date.now() + ask.timeoutSeconds * 1000, onTimeout: ask.onTimeout } } : {}),
    };
    const callback = new OpenApproval(newId('cb'), this.id, turnId, agent, Date.now(), request);
    // As for our own asks: one line is the decision and the open callback (a reload reads it back).
    this.audit({ event: 'callback-opened', ...auditBase, decision: 'ask', callback: callback.id });
    this.emit({ type: 'tool-call', ...event, effective: 'ask', by: `hook:${this.external.host}` });
    const answer = openCallback(this, callback, ask.timeoutSeconds, ask.onTimeout).then((outcome) => this.answerOf(outcome, ask, grantCall));
    return { callbackId: callback.id, answer };
  }

  private answerOf(outcome: Outcome, ask: ExternalAsk, grantCall: GrantCall): ExternalAnswer | undefined {
    if (outcome.kind === 'closed') return undefined;
    const a = outcome.answer;
    if (a.type === 'allow') {
      if (a.scope !== 'once') this.allowances.grant(grantCall, a.scope === 'duration' ? a.seconds : undefined);
      return { answer: `allow-${a.scope}`, by: 'person' };
    }
    if (outcome.by === 'timeout') return { answer: 'deny', by: 'timeout', reason: `no one answered in the editor within ${ask.timeoutSeconds} s` };
    const reason = a.type === 'deny' ? a.options.reason : undefined;
    return { answer: 'deny', by: 'person', ...(reason ? { reason } : {}) };
  }

  /** A person's answer, checked against the callback (validateAnswer: no Allow for Session where it is not offered). */
  answer(callbackId: string, answer: CallbackAnswer): AnswerResult {
    return answerCallback(this, this.id, callbackId, answer, 'person');
  }

  /** The grants in force in this host session (the Open Callbacks tree lists them). */
  grants(): Array<{ sessionId: string; grant: Grant }> {
    return this.allowances.list().map((grant) => ({ sessionId: this.id, grant }));
  }

  /** Takes a grant back, audited; false when it had lapsed or was not there. */
  revokeGrant(grantId: string): boolean {
    const grant = this.allowances.revoke(grantId);
    if (grant) {
      this.audit(grantRevokedEntry(this.id, this.external.host, grant));
      this.changed();
    }
    return grant !== undefined;
  }

  /** Closes one callback: the hook went away (its deadline passed, or the host stopped it). */
  close(callbackId: string, reason: string): void {
    const record = this.callbacks.get(callbackId);
    if (record?.open) record.settle({ kind: 'closed', reason });
  }

  /** Closes every open callback (the window is closing). */
  closeAll(reason: string): void {
    closeCallbacks(this, this.id, undefined, reason);
  }

  // CallbackHost: how callbacks.ts reaches the window.

  audit(entry: Omit<AuditEntry, 'time'>): void {
    this.wiring.audit?.write({ time: auditTime(), ...entry });
  }

  emit(event: RuntimeEvent): void {
    this.transcript.push(...describeEvent(event, this.id));
    if (this.transcript.length > TRANSCRIPT_LINES) this.transcript.splice(0, this.transcript.length - TRANSCRIPT_LINES);
    if (event.type === 'callback-opened') this.wiring.opened(event.callback, this);
    if (event.type === 'callback-settled') {
      // Settled callbacks are not kept (a host session asks for as long as it lives); one
      // answered again is then NotFound, which the window tells as answered elsewhere.
      const settled = event.callbackId;
      queueMicrotask(() => {
        if (this.callbacks.get(settled)?.open === false) this.callbacks.delete(settled);
      });
    }
  }

  changed(): void {
    this.wiring.changed();
  }

  inSubtree(sessionId: string, ancestorId: string): boolean {
    return sessionId === ancestorId && sessionId === this.id;
  }
}
