// Callbacks: an approval, a sign-in, an elicitation or a result review that waits for an answer. Opening one
// records it in the tree and arms its timeout; settling it (an answer, a timeout, or closing it
// when its turn ends) is audited before the waiting call acts on it; `turn.answer` lands in
// `answerCallback`, and every answer is checked against the callback it answers first.
// Imports answers, audit, elicitationForm and types only. It knows the tree through
// `CallbackHost`, which tree.ts implements, so it never imports the tree.
import {
  AlreadySettled, Answered, ElicitationAnswer, NotFound, ResultReviewAnswer, SdkError,
  type AnswerResult, type ApprovalRequest, type CallbackAnswer, type OpenCallback,
} from './answers.js';
import { rememberSeconds } from '../../policy/file/grantLength.js';
import { type AuditEntry } from '../audit/audit.js';
import { inputDigest, summarizeInput } from '../audit/auditSummary.js';
import { checkFieldValue } from './elicitationForm.js';
import type { RuntimeEvent } from './events.js';
import type { ElicitationSchema } from '../tools/tools.js';

/** Who settled a callback, for the audit log. */
export type AnsweredBy = 'handler' | 'person' | 'timeout' | 'cancel';

export type Outcome = { kind: 'answer'; answer: CallbackAnswer; by: AnsweredBy } | { kind: 'closed'; reason: string };

export interface CallbackRecord {
  callback: OpenCallback;
  open: boolean;
  /** Closes it (once). Returns the error when the audit log could not record the settlement; the call is then not run. */
  settle(outcome: Outcome): unknown;
  /** The drivers that already offered it to a handler. */
  offeredBy: Set<number>;
  /** A handler is deciding it now: no other driver offers it meanwhile. */
  handling: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

/** What callbacks need of the session tree (tree.ts). */
export interface CallbackHost {
  readonly callbacks: Map<string, CallbackRecord>;
  audit(entry: Omit<AuditEntry, 'time'>): void;
  emit(event: RuntimeEvent): void;
  /** Something observable changed: wakes the drivers. */
  changed(): void;
  /** Whether the session `sessionId` is `ancestorId` or one of its subagents (at any depth). */
  inSubtree(sessionId: string, ancestorId: string): boolean;
}

const ELICITATION_OUTCOME = { accept: 'accepted', decline: 'declined', cancel: 'cancelled' } as const;
const REVIEW_OUTCOME = { pass: 'passed', withhold: 'withheld' } as const;

/**
 * Opens a callback of the session and turn it names, and resolves once it is settled. With a
 * timeout, an approval is denied when it lapses, or (onTimeout: keep) stays open with a warning.
 */
export function openCallback(host: CallbackHost, callback: OpenCallback, timeoutSeconds: number | undefined, onTimeout: 'deny' | 'keep'): Promise<Outcome> {
  const { sessionId, turnId, agent } = callback;
  return new Promise<Outcome>((resolve) => {
    const record: CallbackRecord = {
      callback,
      open: true,
      offeredBy: new Set(),
      handling: false,
      settle: (outcome) => {
        if (!record.open) return;
        record.open = false;
        if (record.timer) clearTimeout(record.timer);
        const described = outcome.kind === 'closed' ? 'closed'
          : outcome.answer.type === 'allow' ? `allow-${outcome.answer.scope}`
          : outcome.answer.type === 'deny' ? 'deny'
          : outcome.answer.type === 'elicitation' ? ELICITATION_OUTCOME[outcome.answer.action]
          : outcome.answer.type === 'result-review' ? REVIEW_OUTCOME[outcome.answer.action]
          : outcome.answer.denied.length > 0 ? 'refused' : 'connected';
        const by = outcome.kind === 'closed' ? 'cancel' : outcome.by;
        let failure: unknown;
        try {
          host.audit({
            event: 'callback-settled', session: sessionId, turn: turnId, agent, callback: callback.id,
            answer: described as AuditEntry['answer'], answeredBy: by,
            ...(outcome.kind === 'answer' && outcome.answer.type === 'allow' && outcome.answer.scope === 'duration' ? { grantSeconds: outcome.answer.seconds } : {}),
            ...(callback.type === 'approval' ? { tool: callback.request.tool.id, inputDigest: inputDigest(callback.request.input) } : {}),
            // A result review records the digest of what was reviewed, never the result itself.
            ...(callback.type === 'result-review' ? { tool: callback.request.tool.id, inputDigest: inputDigest(callback.request.input), resultDigest: callback.request.digest } : {}),
            // Flow rules: an approval allowed lets the call run, which puts its rules' marks on the session.
            ...(callback.type === 'approval' && described.startsWith('allow-') && callback.request.decision?.marks ? { marks: callback.request.decision.marks } : {}),
          });
        } catch (error) {
          // An answer the log could not record is not acted on; the waiting call must still end, or the turn hangs.
          failure = error ?? new Error('the audit log could not be written');
        }
        const settled: Outcome = failure === undefined ? outcome
          : { kind: 'closed', reason: `the audit log could not record the answer (${failure instanceof Error ? failure.message : String(failure)})` };
        host.emit({ type: 'callback-settled', sessionId, turnId, agent, callbackId: callback.id, outcome: failure === undefined ? described : 'closed', by });
        host.changed();
        resolve(settled);
        return failure;
      },
    };
    if (timeoutSeconds !== undefined) {
      record.timer = setTimeout(() => {
        // A result review that lapses is withheld: the model never sees a result no person passed.
        if (onTimeout === 'deny') record.settle({ kind: 'answer', answer: callback.type === 'result-review' ? new ResultReviewAnswer({ action: 'withhold' }) : { type: 'deny', options: { reason: 'timed out' } } as CallbackAnswer, by: 'timeout' });
        else {
          let unrecorded = '';
          try {
            host.audit({ event: 'callback-settled', session: sessionId, turn: turnId, agent, callback: callback.id, answer: 'kept', answeredBy: 'timeout' });
          } catch (error) {
            // A timer has no caller to raise in: say it, rather than crash the process.
            unrecorded = ` (the audit log could not record it: ${error instanceof Error ? error.message : String(error)})`;
          }
          host.emit({ type: 'warning', sessionId, message: `${callback.type === 'result-review' ? 'result review' : 'approval'} ${callback.id} timed out after ${timeoutSeconds} s and stays open (onTimeout: keep)${unrecorded}` });
        }
      }, timeoutSeconds * 1000);
      record.timer.unref?.();
    }
    host.callbacks.set(callback.id, record);
    // An approval's `callback-opened` line is written by the tool call, with its decision; a result review's by resultReview.ts.
    if (callback.type === 'sign-in') {
      host.audit({ event: 'callback-opened', session: sessionId, turn: turnId, agent, callback: callback.id, summary: callback.sources.map((s) => s.name).join(', ') });
    } else if (callback.type === 'elicitation') {
      host.audit({
        event: 'callback-opened', session: sessionId, turn: turnId, agent, callback: callback.id,
        ...(callback.request.toolId ? { tool: callback.request.toolId } : {}), summary: summarizeInput(`${callback.request.source.name}: ${callback.request.message}`),
      });
    }
    host.emit({ type: 'callback-opened', sessionId, turnId, agent, callback });
    host.changed();
  });
}

/**
 * Settles every open callback of the session `sessionId` (of one of its turns, if `turnId` is
 * given) as closed: nothing may run for a turn or session that ended.
 */
export function closeCallbacks(host: CallbackHost, sessionId: string, turnId: string | undefined, reason: string): void {
  for (const r of host.callbacks.values()) {
    if (r.open && r.callback.sessionId === sessionId && (turnId === undefined || r.callback.turnId === turnId)) r.settle({ kind: 'closed', reason });
  }
}

/**
 * `turn.answer`: answers a callback of the session `sessionId` or, from an ancestor, of a
 * subagent's. Its own callback that is no longer open is AlreadySettled; a subagent's is NotFound,
 * as is one outside its subtree (NotFound: it never opened it and no subagent has it open).
 */
export function answerCallback(host: CallbackHost, sessionId: string, callbackId: string, answer: unknown, by: AnsweredBy): AnswerResult {
  const record = host.callbacks.get(callbackId);
  if (!record || !host.inSubtree(record.callback.sessionId, sessionId)) return new NotFound(sessionId, callbackId);
  const own = record.callback.sessionId === sessionId;
  if (!record.open) return own ? new AlreadySettled(sessionId, callbackId) : new NotFound(sessionId, callbackId);
  const valid = checkAnswer(host, record.callback, answer, 'turn.answer');
  const unrecorded = record.settle({ kind: 'answer', answer: valid, by });
  if (unrecorded !== undefined) throw unrecorded;
  return new Answered(record.callback.sessionId, callbackId, valid);
}

/**
 * validateAnswer, and an allow for longer than once that is refused (the ask may not be given that
 * grant: a hook's ask, its rule's remember, an untrusted workspace, the managed controls) is
 * recorded in the audit log as `answer-refused` before the SdkError is raised: a person (or a
 * program) tried to give more than the policy lets anyone give.
 */
export function checkAnswer(host: Pick<CallbackHost, 'audit'>, callback: OpenCallback, answer: unknown, where: string): CallbackAnswer {
  try {
    return validateAnswer(callback, answer, where);
  } catch (error) {
    const scope = typeof answer === 'object' && answer !== null && (answer as { type?: unknown }).type === 'allow' ? (answer as { scope?: unknown }).scope : undefined;
    if (error instanceof SdkError && callback.type === 'approval' && (scope === 'session' || scope === 'duration')) {
      const seconds = (answer as { seconds?: unknown }).seconds;
      host.audit({
        event: 'answer-refused', session: callback.sessionId, turn: callback.turnId, agent: callback.agent, callback: callback.id,
        tool: callback.request.tool.id, answer: scope === 'session' ? 'allow-session' : 'allow-duration',
        ...(scope === 'duration' && typeof seconds === 'number' ? { grantSeconds: seconds } : {}), reason: error.message,
      });
    }
    throw error;
  }
}

/** Checks an answer against the callback it answers; throws SdkError and sends nothing when it does not fit. */
export function validateAnswer(callback: OpenCallback, answer: unknown, where: string): CallbackAnswer {
  const type = typeof answer === 'object' && answer !== null ? (answer as { type?: unknown }).type : undefined;
  if (type === 'keep') throw new SdkError(`${where}: KeepCallbackOpen is a handler's return, not an answer`);
  if (callback.type === 'approval') {
    if (type === 'allow') {
      const scope = (answer as { scope?: unknown }).scope;
      if (scope !== 'once' && scope !== 'session' && scope !== 'duration') throw new SdkError(`${where}: AllowApproval scope must be "once", "session" or "duration"`);
      if (scope === 'duration') checkDuration(callback.request, (answer as { seconds?: unknown }).seconds, where);
      if (scope === 'session' && callback.request.hook !== undefined) {
        throw new SdkError(`${where}: the approval of hook "${callback.request.hook}" cannot be allowed for the session; answer AllowApproval() once`);
      }
      if (scope === 'session' && !callback.request.sessionAllowed) {
        const why = callback.request.decision?.ask?.cappedBy ?? 'its rule says remember: never or a duration, or the workspace is untrusted';
        throw new SdkError(`${where}: this approval cannot be allowed for the session (${why}); answer AllowApproval() once`);
      }
      return answer as CallbackAnswer;
    }
    if (type === 'deny') return answer as CallbackAnswer;
    throw new SdkError(`${where} must return AllowApproval, DenyApproval or KeepCallbackOpen for an approval, not ${describe(answer)}`);
  }
  if (callback.type === 'elicitation') return validateElicitationAnswer(callback.request.requestedSchema, answer, where);
  if (callback.type === 'result-review') {
    const action = type === 'result-review' ? (answer as { action?: unknown }).action : undefined;
    if (action !== 'pass' && action !== 'withhold') throw new SdkError(`${where} must return ResultReviewAnswer (pass or withhold) or KeepCallbackOpen for a result review, not ${describe(answer)}`);
    return answer instanceof ResultReviewAnswer ? answer : new ResultReviewAnswer({ action });
  }
  if (type !== 'sign-in') throw new SdkError(`${where} must return SignInAnswer or KeepCallbackOpen for a sign-in, not ${describe(answer)}`);
  const a = answer as { connected: readonly string[]; denied: readonly string[] };
  const named = new Set([...a.connected, ...a.denied]);
  const missing = callback.sources.filter((s) => !named.has(s.id));
  if (missing.length > 0) {
    throw new SdkError(`${where}: a SignInAnswer must name every source asked for, as connected or denied; missing ${missing.map((s) => s.id).join(', ')}`);
  }
  return answer as CallbackAnswer;
}

/** A time-limited grant: whole seconds, no longer than the ask's widest grant, never for a hook's ask. */
function checkDuration(request: ApprovalRequest, seconds: unknown, where: string): void {
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds <= 0) {
    throw new SdkError(`${where}: AllowApproval({ scope: "duration" }) needs seconds, a positive whole number`);
  }
  if (request.hook !== undefined) {
    throw new SdkError(`${where}: the approval of hook "${request.hook}" cannot be allowed for a while; answer AllowApproval() once`);
  }
  const widest = rememberSeconds(request.longestGrant);
  if (seconds > widest) {
    const allowed = widest === 0 ? 'it can only be allowed once' : `the longest grant it may be given is ${request.longestGrant}`;
    const why = request.decision?.ask?.cappedBy ?? "its rule's remember, or the workspace is untrusted";
    throw new SdkError(`${where}: this approval cannot be allowed for ${seconds} s (${allowed}: ${why}); answer AllowApproval() once`);
  }
}

/** An accepted form must fit the schema the server asked with: required fields, types, enums, bounds, email format. */
function validateElicitationAnswer(schema: ElicitationSchema, answer: unknown, where: string): CallbackAnswer {
  if (!(answer instanceof ElicitationAnswer)) {
    throw new SdkError(`${where} must return ElicitationAnswer or KeepCallbackOpen for an elicitation, not ${describe(answer)}`);
  }
  if (answer.action !== 'accept') return answer;
  const content = answer.content ?? {};
  const problems: string[] = [];
  for (const name of schema.required ?? []) if (content[name] === undefined) problems.push(`"${name}" is required`);
  for (const [name, value] of Object.entries(content)) {
    const field = schema.properties[name];
    if (!field) {
      problems.push(`"${name}" is not a field of the form`);
      continue;
    }
    const problem = checkFieldValue(field, value);
    if (problem !== undefined) problems.push(`"${name}": ${problem}`);
  }
  if (problems.length > 0) throw new SdkError(`${where}: the answer does not fit the form: ${problems.join('; ')}`);
  return answer;
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'object') return (value as object).constructor?.name ?? 'an object';
  return typeof value;
}
