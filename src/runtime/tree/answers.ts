// The values that cross the runtime's surface: answers to callbacks, what answering returns,
// the states a turn reaches, and the callbacks themselves (runtime.md; names from the seed).
import type { ToolAnnotations, ToolKind } from '../../policy/rules/call.js';
import type { ElicitationRequest } from '../tools/tools.js';
import type { Remember } from '../../policy/file/grantLength.js';
import type { PolicyDecision } from '../../policy/policy.js';
import type { CommandSandboxReport } from '../sandbox/sandboxNote.js';

/** An error in how the runtime was used: a bad handler return, an answer it cannot take. */
export class SdkError extends Error {
  override name = 'SdkError';
}

/**
 * Allow a call: once, for the rest of the session, or for `seconds` (`scope: 'duration'`, a
 * time-limited grant: "Allow for 15 Minutes" is `{ scope: 'duration', seconds: 900 }`). A grant
 * also answers later asks of the same call (and of a compound command's same asking parts).
 */
export class AllowApproval {
  readonly type = 'allow' as const;
  readonly scope: 'once' | 'session' | 'duration';
  /** For `scope: 'duration'`: how long the grant lasts, in whole seconds. */
  readonly seconds: number | undefined;
  constructor(options: { scope?: 'once' | 'session' } | { scope: 'duration'; seconds: number } = {}) {
    this.scope = options.scope ?? 'once';
    this.seconds = options.scope === 'duration' ? options.seconds : undefined;
  }
}

export class DenyApproval {
  readonly type = 'deny' as const;
  constructor(readonly options: { reason?: string } = {}) {}
}

/** A handler's return only, never an answer: leaves the callback open for someone to answer later. */
export class KeepCallbackOpen {
  readonly type = 'keep' as const;
}

export class SignInAnswer {
  readonly type = 'sign-in' as const;
  readonly connected: readonly string[];
  readonly denied: readonly string[];
  constructor(options: { connected?: Iterable<string>; denied?: Iterable<string> } = {}) {
    this.connected = [...(options.connected ?? [])];
    this.denied = [...(options.denied ?? [])];
  }
}

/** The answer to an elicitation: `accept` with the form's content, `decline`, or `cancel`. */
export class ElicitationAnswer {
  readonly type = 'elicitation' as const;
  readonly action: 'accept' | 'decline' | 'cancel';
  readonly content: Readonly<Record<string, string | number | boolean>> | undefined;
  constructor(options: { action: 'accept'; content: Record<string, string | number | boolean> } | { action: 'decline' | 'cancel' }) {
    this.action = options.action;
    this.content = options.action === 'accept' ? { ...options.content } : undefined;
  }
}

/**
 * The answer to a result review: `pass` gives the model the tool's result, `withhold` gives it
 * only a note that a person withheld it (never the content).
 */
export class ResultReviewAnswer {
  readonly type = 'result-review' as const;
  readonly action: 'pass' | 'withhold';
  constructor(options: { action: 'pass' | 'withhold' }) {
    this.action = options.action;
  }
}

export type ApprovalAnswer = AllowApproval | DenyApproval;
export type CallbackAnswer = ApprovalAnswer | SignInAnswer | ElicitationAnswer | ResultReviewAnswer;

/** The callback was open when read, and it was answered. */
export class Answered {
  readonly type = 'answered' as const;
  constructor(
    readonly sessionId: string,
    readonly callbackId: string,
    readonly answer: CallbackAnswer,
  ) {}
}

/** The callback is no longer open (answered elsewhere, timed out, or its turn or session ended). Nothing changed. */
export class AlreadySettled {
  readonly type = 'already-settled' as const;
  constructor(
    readonly sessionId: string,
    readonly callbackId: string,
  ) {}
}

/** The session never opened this callback, and none of its subagents has it open. Nothing changed. */
export class NotFound {
  readonly type = 'not-found' as const;
  constructor(
    readonly sessionId: string,
    readonly callbackId: string,
  ) {}
}

export type AnswerResult = Answered | AlreadySettled | NotFound;

export interface ApprovalTool {
  /** The stable id: decide on this, never on `name`. */
  id: string;
  /** The name the model used. */
  name: string;
  kind: ToolKind | 'unknown';
  description?: string;
  annotations: ToolAnnotations;
  /** What the policy read the call's paths, command and URLs from, so the same call can be judged again. */
  pathArgs?: readonly string[];
  commandArg?: string;
  urlArgs?: readonly string[];
  tags?: readonly string[];
}

export interface ApprovalRequest {
  tool: ApprovalTool;
  /** Set when a hook (not the policy) asks; such an approval cannot be allowed for the session. */
  hook?: string;
  title: string;
  input: unknown;
  /** The policy's decision that opened it (the rule that asked, its reason). */
  decision?: PolicyDecision;
  /** Whether "allow for this session" may be offered (`longestGrant` is "session"). */
  sessionAllowed: boolean;
  /**
   * The widest grant a person may give: "never" (once only: a hook's ask, `remember: never`, an
   * untrusted workspace's lowered allow), a duration such as "15m" (`remember: "15m"`), or "session".
   * The editor offers the durations of `offeredDurations(longestGrant)`.
   */
  longestGrant: Remember;
  /** Of a compound command, the asking parts a grant in force already covers (only the others need the answer). */
  grantedParts?: readonly string[];
  /** For an ask with a timeout: when it lapses (epoch ms) and what happens then. */
  timeout?: { at: number; onTimeout: 'deny' | 'keep' };
  /** For `builtin.run_command`: how the command would run if allowed (sandboxed or not, with or without network). */
  sandbox?: CommandSandboxReport;
  /**
   * Set when the question is about one connection of a sandboxed command that is running (its
   * host no rule decides), not about a call: the command, the host and port, and the URL judged.
   */
  connection?: { host: string; port: number; url: string; command: string };
}

export interface SignInSourceRequest {
  source: 'connector' | 'mcp';
  id: string;
  name: string;
  mode: 'connect' | 'reconnect';
}

interface CallbackBase {
  id: string;
  /** The session that asked (a subagent's own session for its calls). */
  sessionId: string;
  /** The turn of that session that asked. */
  turnId: string;
  /** The agent or subagent name of that session. */
  agent: string;
  openedAt: number;
}

/** A callback that carries one request (an approval, an elicitation, a result review). */
abstract class RequestCallback<Request> implements CallbackBase {
  constructor(
    readonly id: string,
    readonly sessionId: string,
    readonly turnId: string,
    readonly agent: string,
    readonly openedAt: number,
    readonly request: Request,
  ) {}
}

export class OpenApproval extends RequestCallback<ApprovalRequest> {
  readonly type = 'approval' as const;
}

export class OpenSignIn implements CallbackBase {
  readonly type = 'sign-in' as const;
  constructor(
    readonly id: string,
    readonly sessionId: string,
    readonly turnId: string,
    readonly agent: string,
    readonly openedAt: number,
    readonly sources: readonly SignInSourceRequest[],
  ) {}
}

/** A tool source (an MCP server) asks a person for input while one of its tools runs. */
/** `toolId` in its request: the running call the request came with. */
export class OpenElicitation extends RequestCallback<ElicitationRequest & { toolId?: string }> {
  readonly type = 'elicitation' as const;
}

/** What a person reviews: a tool's result, held before the model sees it (a rule's `"review": "result"`). */
export interface ResultReviewRequest {
  tool: { id: string; name: string; kind: ToolKind | 'unknown' };
  title: string;
  input: unknown;
  /** The input as a short line (summarizeInput). */
  summary: string;
  /** Whether the tool returned (true) or failed (its error is the result reviewed). */
  ok: boolean;
  /** The whole result, as the model would get it. Untrusted text: show it plainly, never render it. Never audited. */
  result: string;
  /** Its first RESULT_PREVIEW_CHARS characters, for a notification or a tooltip. */
  preview: string;
  /** The result's length in characters. */
  chars: number;
  /** 'sha256:' + hex of the result: the audit log's record of what was reviewed. */
  digest: string;
  /** The decision that let the call run (the rule that asked for the review). */
  decision?: PolicyDecision;
  /** When the review lapses (epoch ms) and what happens then (deny: withheld). */
  timeout?: { at: number; onTimeout: 'deny' | 'keep' };
}

/** A tool ran and its result waits for a person (Pass / Withhold) before the model sees it. */
export class OpenResultReview extends RequestCallback<ResultReviewRequest> {
  readonly type = 'result-review' as const;
}

export type OpenCallback = OpenApproval | OpenSignIn | OpenElicitation | OpenResultReview;

export class Completed {
  readonly type = 'completed' as const;
  constructor(
    readonly turnId: string,
    readonly text: string,
  ) {}
}

export class Blocked {
  readonly type = 'blocked' as const;
  constructor(
    /** The root session's turn: answer on it, then wait with `turn.result({ after: this })`. */
    readonly turnId: string,
    /** Every open callback of the whole tree. */
    readonly callbacks: readonly OpenCallback[],
    /** The tree's change counter when this was taken (what `after` compares against). */
    readonly version: number,
  ) {}
}

export class Failed {
  readonly type = 'failed' as const;
  constructor(
    readonly turnId: string,
    readonly error: string,
  ) {}
}

export type TurnState = Completed | Blocked | Failed;
