// Sessions, turns and callbacks (runtime.md). A root session and the sessions of its subagents
// form a tree that shares one set of callbacks, one change counter and one set of handlers.
//
// Concurrency model: every turn runs as its own async loop. A tool call that must be asked
// opens a callback and awaits its settlement. Handlers are run only by a *driver*: a pending
// `run()` or `result()`. A driver returns `Blocked` once the tree is quiet (no model call or
// tool in flight) and some callback is left open.
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { ToolCall } from '../policy/call.js';
import { canonicalJson, InputTooDeepError } from '../policy/compile.js';
import { permissionModeDecision } from '../policy/lint.js';
import type { Policy, PolicyDecision } from '../policy/policy.js';
import type { Agent, PermissionMode, Subagent, ToolHook } from './agent.js';
import {
  AlreadySettled, Answered, Blocked, Completed, ElicitationAnswer, Failed, NotFound, OpenApproval, OpenElicitation, OpenSignIn, SdkError,
  type AnswerResult, type ApprovalRequest, type CallbackAnswer, type OpenCallback, type SignInSourceRequest, type TurnState,
} from './answers.js';
import { inputDigest, summarizeInput, type AuditEntry, type AuditSink } from './audit.js';
import { builtinFileTools, runCommandTool } from './builtins.js';
import type { Message, Model, ModelToolCall } from './model.js';
import { checkFieldValue } from './elicitationForm.js';
import { protectedFilesHook } from './protected.js';
import { subagentTools } from './subagentTools.js';
import type { ElicitationRequest, ElicitationResult, ElicitationSchema, RuntimeTool, SignInSource, SubagentHost, ToolConnection, ToolSource } from './tools.js';

export interface CallbackContext {
  session: { id: string; turnId: string; agent: string };
  callback: OpenCallback;
}

type Awaitable<T> = T | Promise<T>;
export type ApprovalHandler = (ctx: CallbackContext, request: ApprovalRequest) => Awaitable<unknown>;
export type SignInHandler = (ctx: CallbackContext, sources: readonly SignInSourceRequest[]) => Awaitable<unknown>;
export type ElicitationHandler = (ctx: CallbackContext, request: OpenElicitation['request']) => Awaitable<unknown>;

export interface StartSessionOptions {
  onApproval?: ApprovalHandler;
  onSignIn?: SignInHandler;
  /** Answers a tool source's request for input (an MCP server's elicitation) with an ElicitationAnswer. */
  onElicitation?: ElicitationHandler;
  /** Replaces the agent's policy for this session (and its subagents). A function is asked at each decision, so a reloaded policy applies to the next call. */
  policy?: Policy | (() => Policy);
  /** The folder paths resolve against and builtin tools are confined to (default: the current folder). */
  workspaceFolder?: string;
  /** VS Code workspace trust: when false, the workspace layer's allows only ask. A function is asked at each decision. */
  trusted?: boolean | (() => boolean);
  /** Where every decision is appended. */
  audit?: AuditSink;
  /** Files no tool call may write, rename or delete without a person (absolute, or relative to the workspace). Added to the defaults. */
  protectedFiles?: readonly string[];
  /** Extra hooks that can ask before any call. */
  hooks?: readonly ToolHook[];
}

/** Who settled a callback, for the audit log. */
export type AnsweredBy = 'handler' | 'person' | 'timeout' | 'cancel';

type Outcome = { kind: 'answer'; answer: CallbackAnswer; by: AnsweredBy } | { kind: 'closed'; reason: string };

interface CallbackRecord {
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

export type RuntimeEvent =
  | { type: 'turn-started'; sessionId: string; turnId: string; agent: string; prompt: string }
  | { type: 'message'; sessionId: string; turnId: string; agent: string; text: string }
  | { type: 'tool-call'; sessionId: string; turnId: string; agent: string; callId: string; toolId: string; name: string; input: unknown; decision: PolicyDecision; effective: 'allow' | 'ask' | 'deny'; by: string }
  | { type: 'tool-result'; sessionId: string; turnId: string; agent: string; callId: string; toolId: string; ok: boolean; content: string }
  | { type: 'callback-opened'; sessionId: string; turnId: string; agent: string; callback: OpenCallback }
  | { type: 'callback-settled'; sessionId: string; turnId: string; agent: string; callbackId: string; outcome: string; by: string }
  | { type: 'turn-ended'; sessionId: string; turnId: string; agent: string; state: 'completed' | 'failed'; text?: string; error?: string }
  | { type: 'subagent-started'; sessionId: string; parentSessionId: string; parentTurnId: string; agent: string; task: string }
  | { type: 'warning'; sessionId: string; message: string };

const NEVER_ASK = new Set(['agents.message', 'agents.wait', 'agents.interrupt']);

/** Shared by a root session and all its subagents' sessions. */
class Tree {
  version = 0;
  /** Model calls and tool runs in flight: while > 0 the tree is making progress on its own. */
  running = 0;
  readonly callbacks = new Map<string, CallbackRecord>();
  readonly sessions = new Map<string, Session>();
  /** One connection per tool source for the whole tree (a subagent shares its parent's servers). */
  readonly connections = new Map<string, ToolConnection>();
  readonly events: RuntimeEvent[] = [];
  private wakers: Array<() => void> = [];
  private driverCount = 0;

  constructor(
    readonly options: StartSessionOptions,
    readonly policySource: Policy | (() => Policy) | undefined,
    readonly permissionMode: PermissionMode,
    readonly workspaceFolder: string,
    readonly hooks: readonly ToolHook[],
  ) {}

  nextDriverId(): number {
    return ++this.driverCount;
  }

  /** Something observable changed (a callback opened or settled, a turn ended). */
  changed(): void {
    this.version++;
    this.wake();
    this.wakeDrivers();
  }

  // Drivers only care about changes and about the tree going quiet, not about every event.
  private driverWakers: Array<() => void> = [];
  driverWakes = 0;

  wakeDrivers(): void {
    this.driverWakes++;
    const w = this.driverWakers;
    this.driverWakers = [];
    for (const f of w) f();
  }

  /** Resolves at the first driver wake-up after the count `seen` (at once if one already happened). */
  driverWokenSince(seen: number): Promise<void> {
    return this.driverWakes !== seen ? Promise.resolve() : new Promise((resolve) => this.driverWakers.push(resolve));
  }

  wake(): void {
    const w = this.wakers;
    this.wakers = [];
    for (const f of w) f();
  }

  nextWake(): Promise<void> {
    return new Promise((resolve) => this.wakers.push(resolve));
  }


  emit(event: RuntimeEvent): void {
    this.events.push(event);
    this.wake();
  }

  audit(entry: Omit<AuditEntry, 'time'>): void {
    this.options.audit?.write({ time: new Date().toISOString(), ...entry });
  }

  async track<T>(work: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      if (this.running === 0) this.wakeDrivers();
    }
  }

  /** True when nothing is in flight after the pending promise jobs have run. */
  async quiet(): Promise<boolean> {
    for (let i = 0; i < 2; i++) {
      const v = this.version;
      const n = this.events.length;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.running > 0 || v !== this.version || n !== this.events.length) return false;
    }
    return this.running === 0;
  }
}

class TurnCore {
  state: 'running' | 'completed' | 'failed' = 'running';
  text = '';
  error = '';
  readonly abort = new AbortController();
  private resolveDone!: () => void;
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(
    readonly id: string,
    readonly session: Session,
  ) {}

  finish(state: 'completed' | 'failed', value: string): void {
    if (this.state !== 'running') return;
    this.state = state;
    if (state === 'completed') this.text = value;
    else this.error = value;
    this.resolveDone();
  }

  get finalState(): TurnState | undefined {
    if (this.state === 'completed') return new Completed(this.id, this.text);
    if (this.state === 'failed') return new Failed(this.id, this.error);
    return undefined;
  }
}

/** A turn of a session: answer its (and its subagents') callbacks, and wait for its result. */
export class Turn {
  constructor(private readonly core: TurnCore) {}

  get id(): string {
    return this.core.id;
  }

  /** A bad answer (KeepCallbackOpen, a session allow of a hook's approval, …) rejects with SdkError; it never throws synchronously. */
  async answer(callbackId: string, answer: CallbackAnswer, options: { by?: AnsweredBy } = {}): Promise<AnswerResult> {
    return this.core.session.answerCallback(callbackId, answer, options.by ?? 'person');
  }

  result(options: { after?: Blocked } = {}): Promise<TurnState> {
    return this.core.session.drive(this.core, options.after);
  }
}

let nextId = 0;
function newId(prefix: string): string {
  return `${prefix}_${randomUUID().slice(0, 8)}${(++nextId).toString(36)}`;
}

interface SessionDefinition {
  name: string;
  model: Model;
  instructions: string;
  tools: Map<string, RuntimeTool>;
  toolSources: readonly ToolSource[];
  canSpawn: boolean;
  maxSteps: number;
}

export class Session {
  readonly id = newId('sess');
  readonly warnings: string[] = [];
  readonly children: Session[] = [];
  private readonly messages: Message[] = [];
  private readonly turns = new Map<string, TurnCore>();
  private current: TurnCore | undefined;
  private turnCount = 0;
  private readonly allowedForSession = new Set<string>();
  /** Tool sources listed so far (by source id), so a source is listed once per session. */
  private readonly listedSources = new Set<string>();
  /** Sources that failed to list in the current turn: tried again at the next turn, not at every step. */
  private failedSources = new Set<string>();
  private cancelled = false;
  /** A subagent's result, as `agents.wait` reports it. */
  task = '';

  /** @internal Use `agent.startSession()`. */
  constructor(
    private readonly tree: Tree,
    readonly definition: SessionDefinition,
    readonly parent: Session | undefined,
    readonly root: Agent,
  ) {
    tree.sessions.set(this.id, this);
  }

  get agentName(): string {
    return this.definition.name;
  }

  get isRoot(): boolean {
    return this.parent === undefined;
  }

  /** The latest turn, if any. */
  get currentTurn(): Turn | undefined {
    return this.current ? new Turn(this.current) : undefined;
  }

  get busy(): boolean {
    return this.current?.state === 'running';
  }

  /** Starts a turn with this prompt and waits for it: Completed, Failed, or Blocked on open callbacks. */
  async run(prompt: string): Promise<TurnState> {
    const turn = this.startTurn(prompt);
    return this.drive(turn, undefined);
  }

  turn(turnId: string): Turn {
    const core = this.turns.get(turnId);
    if (!core) throw new SdkError(`session ${this.id} has no turn ${turnId}`);
    return new Turn(core);
  }

  /** Everything that happens in this session and its subagents, from the start; never runs a handler. */
  async *events(): AsyncGenerator<RuntimeEvent, void, undefined> {
    let i = 0;
    for (;;) {
      while (i < this.tree.events.length) {
        const e = this.tree.events[i++]!;
        if (this.inSubtree(e.sessionId)) yield e;
      }
      if (this.cancelled) return;
      await this.tree.nextWake();
    }
  }

  /** Whether this session or one of its subagents ever opened this callback. */
  knowsCallback(callbackId: string): boolean {
    const record = this.tree.callbacks.get(callbackId);
    return record !== undefined && this.inSubtree(record.callback.sessionId);
  }

  /** Every open callback of this session and its subagents. */
  openCallbacks(): OpenCallback[] {
    const out: OpenCallback[] = [];
    for (const r of this.tree.callbacks.values()) if (r.open && this.inSubtree(r.callback.sessionId)) out.push(r.callback);
    return out;
  }

  /** Cancels every turn of this session and its subagents and closes their callbacks. */
  async cancel(): Promise<void> {
    if (this.cancelled) return;
    this.cancelled = true;
    for (const child of this.children) await child.cancel();
    for (const r of this.tree.callbacks.values()) {
      if (r.open && r.callback.sessionId === this.id) r.settle({ kind: 'closed', reason: 'the session was cancelled' });
    }
    const wasRunning = this.current?.state === 'running';
    const lastState = this.current?.state;
    for (const t of this.turns.values()) {
      t.abort.abort();
      if (t.state === 'running') this.endTurn(t, 'failed', 'cancelled');
    }
    // Closing a session whose turns are over is an ordinary end, not a cancellation.
    const state = wasRunning ? 'cancelled' : lastState === 'failed' ? 'failed' : 'completed';
    this.tree.audit({ event: 'session-ended', session: this.id, agent: this.agentName, state });
    if (this.isRoot) await this.closeToolSources();
    this.tree.wake();
  }

  /**
   * Stops the tree's tool sources once no turn of the tree runs: subagents that an ended turn
   * left running still use them.
   */
  async closeToolSourcesWhenDone(): Promise<void> {
    const root = this.rootSession;
    while ([...this.tree.sessions.values()].some((s) => s.busy)) await this.tree.nextWake();
    await root.closeToolSources();
  }

  /**
   * Stops the tree's tool sources (MCP servers); a failure to stop one does not keep the others
   * running. A later model call of the tree starts them again.
   */
  async closeToolSources(): Promise<void> {
    if (!this.isRoot) return this.rootSession.closeToolSources();
    for (const s of this.tree.sessions.values()) s.forgetSourceTools();
    const connections = [...this.tree.connections.values()];
    this.tree.connections.clear();
    await Promise.allSettled(connections.map((c) => c.close()));
  }

  /** Interrupts this (subagent) session's running turn: its callbacks close, the turn fails as interrupted. */
  interrupt(): void {
    const t = this.current;
    if (!t || t.state !== 'running') return;
    for (const r of this.tree.callbacks.values()) {
      if (r.open && r.callback.sessionId === this.id) r.settle({ kind: 'closed', reason: 'the subagent was interrupted' });
    }
    t.abort.abort();
    this.endTurn(t, 'failed', 'interrupted');
  }

  private inSubtree(sessionId: string): boolean {
    for (let s = this.tree.sessions.get(sessionId); s; s = s.parent) if (s === this) return true;
    return false;
  }

  /** @internal */
  startTurn(prompt: string): TurnCore {
    if (this.cancelled) throw new SdkError(`session ${this.id} was cancelled`);
    if (this.current?.state === 'running') {
      throw new SdkError(`session ${this.id} is still running turn ${this.current.id}: answer its callbacks and wait with turn.result()`);
    }
    const turn = new TurnCore(`${this.id}.t${++this.turnCount}`, this);
    this.turns.set(turn.id, turn);
    this.current = turn;
    this.tree.emit({ type: 'turn-started', sessionId: this.id, turnId: turn.id, agent: this.agentName, prompt });
    void this.loop(turn, prompt);
    return turn;
  }

  private endTurn(turn: TurnCore, state: 'completed' | 'failed', value: string): void {
    if (turn.state !== 'running') return;
    // A turn that fails with calls still asked (a parallel call threw) closes them: nothing may run for an ended turn.
    for (const r of this.tree.callbacks.values()) {
      if (r.open && r.callback.sessionId === this.id && r.callback.turnId === turn.id) r.settle({ kind: 'closed', reason: `the turn ended (${state}${state === 'failed' ? `: ${value}` : ''})` });
    }
    turn.finish(state, value);
    this.tree.emit({
      type: 'turn-ended', sessionId: this.id, turnId: turn.id, agent: this.agentName, state,
      ...(state === 'completed' ? { text: value } : { error: value }),
    });
    this.tree.changed();
  }

  private async loop(turn: TurnCore, prompt: string): Promise<void> {
    this.messages.push({ role: 'user', content: prompt });
    this.failedSources = new Set();
    try {
      for (let step = 0; step < this.definition.maxSteps; step++) {
        if (turn.abort.signal.aborted) return;
        if (this.listedSources.size + this.failedSources.size < this.definition.toolSources.length) await this.listToolSources(turn);
        if (turn.abort.signal.aborted) return;
        const tools = [...this.definition.tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputJsonSchema }));
        const response = await this.tree.track(() =>
          this.definition.model.respond({
            agent: this.agentName, sessionId: this.id, instructions: this.definition.instructions,
            messages: this.messages, tools, signal: turn.abort.signal,
          }),
        );
        if (turn.abort.signal.aborted) return;
        this.messages.push({ role: 'assistant', content: response.text, toolCalls: response.toolCalls });
        if (response.text) this.tree.emit({ type: 'message', sessionId: this.id, turnId: turn.id, agent: this.agentName, text: response.text });
        if (response.toolCalls.length === 0) {
          this.endTurn(turn, 'completed', response.text);
          return;
        }
        const results = await Promise.all(response.toolCalls.map((call) => this.callTool(turn, call)));
        if (turn.abort.signal.aborted) return;
        response.toolCalls.forEach((call, i) => this.messages.push({ role: 'tool', callId: call.id, name: call.name, content: results[i]! }));
      }
      this.endTurn(turn, 'failed', `the agent made ${this.definition.maxSteps} model calls without finishing the turn`);
    } catch (error) {
      this.endTurn(turn, 'failed', turn.abort.signal.aborted ? 'cancelled' : error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * Connects the session's tool sources that are not listed yet and adds their tools. A source
   * that needs a sign-in opens one first; one that cannot be listed is left out with a warning,
   * so one broken server does not stop the agent.
   */
  private async listToolSources(turn: TurnCore): Promise<void> {
    const pending = this.definition.toolSources.filter((s) => !this.listedSources.has(s.id) && !this.failedSources.has(s.id));
    await Promise.all(pending.map(async (source) => {
      let connection = this.tree.connections.get(source.id);
      if (!connection) {
        connection = source.connect({ sessionId: this.rootSession.id, workspaceFolder: this.tree.workspaceFolder });
        this.tree.connections.set(source.id, connection);
      }
      if (connection.signIn) {
        const signedIn = await this.ensureSignedIn(turn, connection.signIn);
        if (signedIn !== true) {
          this.listedSources.add(source.id);
          this.warn(`the tools of ${source.name} are not available in this session: ${signedIn}`);
          return;
        }
      }
      let tools: RuntimeTool[];
      try {
        try {
          tools = await this.tree.track(() => connection.tools(turn.abort.signal));
        } catch (error) {
          // The server refused the credentials it was given (a 401): ask the person to sign in again, then list once more.
          if (!(error instanceof Error && error.name === 'McpSignInRequired' && connection.signIn)) throw error;
          const signedIn = await this.ensureSignedIn(turn, connection.signIn);
          if (signedIn !== true) throw new Error(signedIn);
          tools = await this.tree.track(() => connection.tools(turn.abort.signal));
        }
      } catch (error) {
        this.failedSources.add(source.id);
        this.warn(`the tools of ${source.name} could not be listed: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      this.listedSources.add(source.id);
      for (const t of tools) {
        if (!t.id.startsWith(`${source.id}.`)) {
          this.warn(`${source.name} offered a tool with id ${t.id}, outside ${source.id}.*: left out`);
          continue;
        }
        const clash = this.definition.tools.get(t.name);
        if (clash) {
          this.warn(`${source.name} offered a tool named "${t.name}", already the name of ${clash.id}: left out`);
          continue;
        }
        this.definition.tools.set(t.name, t);
      }
    }));
  }

  /** Drops the tools of listed sources (their connection is closed); the next model call lists them again. */
  private forgetSourceTools(): void {
    for (const [name, t] of this.definition.tools) if (this.definition.toolSources.some((s) => t.id.startsWith(`${s.id}.`))) this.definition.tools.delete(name);
    this.listedSources.clear();
  }

  private warn(message: string): void {
    this.warnings.push(message);
    this.tree.emit({ type: 'warning', sessionId: this.id, message });
  }

  private get rootSession(): Session {
    let s: Session = this;
    while (s.parent) s = s.parent;
    return s;
  }

  /** Judges one call, asks when it must, runs it when allowed; returns the content for the model. */
  private async callTool(turn: TurnCore, call: ModelToolCall): Promise<string> {
    const tool = this.definition.tools.get(call.name);
    if (!tool) {
      return JSON.stringify({ error: `there is no tool named "${call.name}"; the tools are: ${[...this.definition.tools.keys()].join(', ')}` });
    }
    const checked = tool.check(call.input);
    if (!checked.ok) return JSON.stringify({ error: `invalid input for ${call.name}: ${checked.error}` });
    const input = checked.value;
    // Computed once: the depth check, the audit digest and the session key all use it.
    let canonical: string;
    try {
      canonical = canonicalJson(input);
    } catch (error) {
      if (error instanceof InputTooDeepError) return JSON.stringify({ error: `invalid input for ${call.name}: ${error.message}` });
      throw error;
    }
    const policyCall: ToolCall = { tool, input, agent: this.agentName };
    const decision = this.decide(policyCall);
    const hookTitle = decision.decision === 'deny' ? undefined : this.hookAsks(tool, input);
    const base = { sessionId: this.id, turnId: turn.id, agent: this.agentName, callId: call.id, toolId: tool.id, name: call.name, input, decision };
    // Digest and summary cost more than the decision itself: only made when there is an audit log.
    const auditBase: Omit<AuditEntry, 'time' | 'event'> = this.tree.options.audit === undefined ? { session: this.id } : {
      session: this.id, turn: turn.id, agent: this.agentName, tool: tool.id, inputDigest: inputDigest(input, canonical),
      summary: summarizeInput(input), rule: decision.rule, lowered: decision.lowered,
      ...(decision.rule === null ? { default: decision.defaultFrom ?? 'permissionMode' } : {}),
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    };

    let effective = decision.decision;
    if (effective === 'ask' && NEVER_ASK.has(tool.id)) effective = 'allow';

    if (hookTitle !== undefined) {
      return this.askThenRun(turn, tool, call, input, canonical, decision, base, auditBase, { hook: hookTitle.hook, title: hookTitle.title });
    }
    if (effective === 'deny') {
      this.tree.audit({ event: 'decision', ...auditBase, decision: 'deny' });
      this.tree.emit({ type: 'tool-call', ...base, effective: 'deny', by: 'policy' });
      return this.denial(tool.id, decision.reason ?? 'the policy denies this call', call, turn);
    }
    if (effective === 'ask' && this.allowedForSession.has(sessionKey(tool.id, canonical))) {
      this.tree.audit({ event: 'decision', ...auditBase, decision: 'allow', answeredBy: 'session', answer: 'allow-session' });
      this.tree.emit({ type: 'tool-call', ...base, effective: 'allow', by: 'session' });
      return this.runTool(turn, tool, call, input);
    }
    if (effective === 'ask') {
      return this.askThenRun(turn, tool, call, input, canonical, decision, base, auditBase, undefined);
    }
    this.tree.audit({ event: 'decision', ...auditBase, decision: 'allow' });
    this.tree.emit({ type: 'tool-call', ...base, effective: 'allow', by: 'policy' });
    return this.runTool(turn, tool, call, input);
  }

  private async askThenRun(
    turn: TurnCore, tool: RuntimeTool, call: ModelToolCall, input: unknown, canonical: string, decision: PolicyDecision,
    base: Omit<Extract<RuntimeEvent, { type: 'tool-call' }>, 'type' | 'effective' | 'by'>,
    auditBase: Omit<AuditEntry, 'time' | 'event'>,
    hook: { hook: string; title: string } | undefined,
  ): Promise<string> {
    const sessionAllowed = hook === undefined && decision.ask?.remember !== 'never' && !decision.lowered;
    const timeoutSeconds = hook === undefined ? decision.ask?.timeout : undefined;
    const request: ApprovalRequest = {
      tool: {
        id: tool.id, name: call.name, kind: tool.kind, description: tool.description, annotations: { ...tool.annotations },
        ...(tool.pathArgs ? { pathArgs: tool.pathArgs } : {}),
        ...(tool.commandArg ? { commandArg: tool.commandArg } : {}),
        ...(tool.tags ? { tags: tool.tags } : {}),
      },
      ...(hook ? { hook: hook.hook } : {}),
      title: hook?.title ?? `${this.agentName} wants to run ${tool.id}: ${summarizeInput(input)}`,
      input,
      decision,
      sessionAllowed,
      ...(timeoutSeconds !== undefined ? { timeout: { at: Date.now() + timeoutSeconds * 1000, onTimeout: decision.ask?.onTimeout ?? 'deny' } } : {}),
    };
    const callback = new OpenApproval(newId('cb'), this.id, turn.id, this.agentName, Date.now(), request);
    // The ask is both a decision and an open callback: one line says both, so a reload can tell what was left open.
    this.tree.audit({ event: 'callback-opened', ...auditBase, decision: 'ask', callback: callback.id, ...(hook ? { hook: hook.hook } : {}) });
    this.tree.emit({ type: 'tool-call', ...base, effective: 'ask', by: hook ? `hook:${hook.hook}` : 'policy' });
    const outcome = await this.openCallback(turn, callback, timeoutSeconds, decision.ask?.onTimeout ?? 'deny');
    if (outcome.kind === 'closed') return JSON.stringify({ error: `not run: ${outcome.reason}` });
    const answer = outcome.answer;
    if (answer.type === 'allow') {
      if (answer.scope === 'session') this.allowedForSession.add(sessionKey(tool.id, canonical));
      return this.runTool(turn, tool, call, input);
    }
    if (outcome.by === 'timeout') {
      return this.denial(tool.id, `the approval timed out after ${timeoutSeconds} s and the call was denied`, call, turn);
    }
    const reason = answer.type === 'deny' && answer.options.reason ? answer.options.reason : 'a person denied this call';
    return this.denial(tool.id, reason, call, turn);
  }

  private denial(toolId: string, reason: string, call: ModelToolCall, turn: TurnCore): string {
    const content = JSON.stringify({ error: `denied: ${reason}`, tool: toolId });
    this.tree.emit({ type: 'tool-result', sessionId: this.id, turnId: turn.id, agent: this.agentName, callId: call.id, toolId, ok: false, content });
    return content;
  }

  private async runTool(turn: TurnCore, tool: RuntimeTool, call: ModelToolCall, input: unknown): Promise<string> {
    if (tool.signIn) {
      const signedIn = await this.ensureSignedIn(turn, tool.signIn);
      if (signedIn !== true) return this.finishCall(turn, tool, call, false, JSON.stringify({ error: signedIn }));
    }
    let content: string;
    let ok = true;
    // Made at the first request for input: most calls make none.
    let elicitations: CallElicitations | undefined;
    let ended = false;
    try {
      const result = await this.tree.track(async () => {
        try {
          return await tool.run(input, {
            sessionId: this.id, turnId: turn.id, agent: this.agentName, workspaceFolder: this.tree.workspaceFolder, signal: turn.abort.signal,
            elicit: (request, options) => this.elicit(turn, tool, request, (elicitations ??= { ids: new Set(), pending: new Set(), closed: ended }), options?.signal),
            ...(this.definition.canSpawn ? { subagents: this.subagentHost } : {}),
          });
        } finally {
          // A request for input cannot outlive the call that made it: nothing would receive the answer.
          ended = true;
          if (elicitations) await this.closeElicitations(elicitations, 'the tool call ended');
        }
      });
      content = typeof result === 'string' ? result : (JSON.stringify(result) ?? 'null');
    } catch (error) {
      ok = false;
      content = JSON.stringify({ error: error instanceof Error ? error.message : String(error) });
    }
    return this.finishCall(turn, tool, call, ok, content);
  }

  private finishCall(turn: TurnCore, tool: RuntimeTool, call: ModelToolCall, ok: boolean, content: string): string {
    this.tree.emit({ type: 'tool-result', sessionId: this.id, turnId: turn.id, agent: this.agentName, callId: call.id, toolId: tool.id, ok, content });
    return content;
  }

  /**
   * A running tool asks a person for input: an elicitation callback on this session and turn.
   * While it is open the tree is waiting, not working, so a driver can return Blocked.
   */
  private async elicit(
    turn: TurnCore, tool: RuntimeTool, request: ElicitationRequest, call: CallElicitations, signal: AbortSignal | undefined,
  ): Promise<ElicitationResult> {
    if (turn.state !== 'running' || call.closed || signal?.aborted) return { action: 'cancel' };
    const callback = new OpenElicitation(newId('cb'), this.id, turn.id, this.agentName, Date.now(), {
      source: { ...request.source }, message: request.message, requestedSchema: request.requestedSchema, toolId: tool.id,
    });
    call.ids.add(callback.id);
    const opened = this.openCallback(turn, callback, undefined, 'deny');
    const gaveUp = (): void => {
      this.tree.callbacks.get(callback.id)?.settle({ kind: 'closed', reason: 'the server stopped waiting for the answer' });
    };
    signal?.addEventListener('abort', gaveUp, { once: true });
    const waited = this.waiting(opened);
    call.pending.add(waited);
    try {
      const outcome = await waited;
      if (outcome.kind === 'closed' || outcome.answer.type !== 'elicitation') return { action: 'cancel' };
      const answer = outcome.answer;
      return answer.action === 'accept' ? { action: 'accept', content: { ...answer.content } } : { action: answer.action };
    } finally {
      signal?.removeEventListener('abort', gaveUp);
      call.pending.delete(waited);
    }
  }

  private async closeElicitations(call: CallElicitations, reason: string): Promise<void> {
    call.closed = true;
    for (const id of call.ids) {
      const record = this.tree.callbacks.get(id);
      if (record?.open) record.settle({ kind: 'closed', reason });
    }
    // Their waits end before the call's own tracking does, so the tree's count of work in flight stays right.
    if (call.pending.size > 0) await Promise.allSettled([...call.pending]);
  }

  /** true when connected; otherwise the message for the model. */
  private async ensureSignedIn(turn: TurnCore, source: SignInSource): Promise<true | string> {
    // Checking is work in flight: a driver must not take the tree for quiet (and return an empty Blocked) meanwhile.
    const connected = (): Promise<boolean> => this.tree.track(async () => await source.isConnected());
    if (await connected()) return true;
    const request: SignInSourceRequest = {
      source: source.source, id: source.id, name: source.name, mode: source.wasConnected?.() ? 'reconnect' : 'connect',
    };
    const callback = new OpenSignIn(newId('cb'), this.id, turn.id, this.agentName, Date.now(), [request]);
    const outcome = await this.openCallback(turn, callback, undefined, 'deny');
    if (outcome.kind === 'closed') return `not run: ${outcome.reason}`;
    if (outcome.answer.type !== 'sign-in') return `the sign-in to ${source.name} was not completed`;
    if (outcome.answer.denied.includes(source.id)) return `the user refused to connect ${source.name}`;
    if (!(await connected())) return `${source.name} is still not connected: the user said it was, but it is not`;
    return true;
  }

  private openCallback(turn: TurnCore, callback: OpenCallback, timeoutSeconds: number | undefined, onTimeout: 'deny' | 'keep'): Promise<Outcome> {
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
            : outcome.answer.denied.length > 0 ? 'refused' : 'connected';
          const by = outcome.kind === 'closed' ? 'cancel' : outcome.by;
          let failure: unknown;
          try {
            this.tree.audit({
              event: 'callback-settled', session: this.id, turn: turn.id, agent: this.agentName, callback: callback.id,
              answer: described as AuditEntry['answer'], answeredBy: by,
              ...(callback.type === 'approval' ? { tool: callback.request.tool.id, inputDigest: inputDigest(callback.request.input) } : {}),
            });
          } catch (error) {
            // An answer the log could not record is not acted on; the waiting call must still end, or the turn hangs.
            failure = error ?? new Error('the audit log could not be written');
          }
          const settled: Outcome = failure === undefined ? outcome
            : { kind: 'closed', reason: `the audit log could not record the answer (${failure instanceof Error ? failure.message : String(failure)})` };
          this.tree.emit({ type: 'callback-settled', sessionId: this.id, turnId: turn.id, agent: this.agentName, callbackId: callback.id, outcome: failure === undefined ? described : 'closed', by });
          this.tree.changed();
          resolve(settled);
          return failure;
        },
      };
      if (timeoutSeconds !== undefined) {
        record.timer = setTimeout(() => {
          if (onTimeout === 'deny') record.settle({ kind: 'answer', answer: { type: 'deny', options: { reason: 'timed out' } } as CallbackAnswer, by: 'timeout' });
          else {
            let unrecorded = '';
            try {
              this.tree.audit({ event: 'callback-settled', session: this.id, turn: turn.id, agent: this.agentName, callback: callback.id, answer: 'kept', answeredBy: 'timeout' });
            } catch (error) {
              // A timer has no caller to raise in: say it, rather than crash the process.
              unrecorded = ` (the audit log could not record it: ${error instanceof Error ? error.message : String(error)})`;
            }
            this.tree.emit({ type: 'warning', sessionId: this.id, message: `approval ${callback.id} timed out after ${timeoutSeconds} s and stays open (onTimeout: keep)${unrecorded}` });
          }
        }, timeoutSeconds * 1000);
        record.timer.unref?.();
      }
      this.tree.callbacks.set(callback.id, record);
      if (callback.type === 'sign-in') {
        this.tree.audit({ event: 'callback-opened', session: this.id, turn: turn.id, agent: this.agentName, callback: callback.id, summary: callback.sources.map((s) => s.name).join(', ') });
      } else if (callback.type === 'elicitation') {
        this.tree.audit({
          event: 'callback-opened', session: this.id, turn: turn.id, agent: this.agentName, callback: callback.id,
          ...(callback.request.toolId ? { tool: callback.request.toolId } : {}), summary: summarizeInput(`${callback.request.source.name}: ${callback.request.message}`),
        });
      }
      this.tree.emit({ type: 'callback-opened', sessionId: this.id, turnId: turn.id, agent: this.agentName, callback });
      this.tree.changed();
    });
  }

  /** @internal Answers a callback of this session or, from an ancestor, of a subagent's. */
  answerCallback(callbackId: string, answer: unknown, by: AnsweredBy): AnswerResult {
    const record = this.tree.callbacks.get(callbackId);
    if (!record || !this.inSubtree(record.callback.sessionId)) return new NotFound(this.id, callbackId);
    const own = record.callback.sessionId === this.id;
    if (!record.open) return own ? new AlreadySettled(this.id, callbackId) : new NotFound(this.id, callbackId);
    const valid = validateAnswer(record.callback, answer, 'turn.answer');
    const unrecorded = record.settle({ kind: 'answer', answer: valid, by });
    if (unrecorded !== undefined) throw unrecorded;
    return new Answered(record.callback.sessionId, callbackId, valid);
  }

  /** @internal Waits for a turn, running the handlers for open callbacks of this session's subtree. */
  async drive(turn: TurnCore, after: Blocked | undefined): Promise<TurnState> {
    const driver = this.tree.nextDriverId();
    if (after) {
      // The same Blocked again is no news: wait for a later change.
      while (turn.state === 'running' && this.tree.version === after.version) await this.tree.nextWake();
    }
    for (;;) {
      const seen = this.tree.driverWakes;
      const final = turn.finalState;
      if (final) return final;
      if (await this.offerToHandlers(driver)) continue;
      if (await this.tree.quiet()) {
        const settled = turn.finalState;
        if (settled) return settled;
        if (this.hasUnoffered(driver)) continue;
        return new Blocked(turn.id, this.openCallbacks(), this.tree.version);
      }
      await Promise.race([this.tree.driverWokenSince(seen), turn.done]);
    }
  }

  private hasUnoffered(driver: number): boolean {
    for (const r of this.tree.callbacks.values()) {
      if (r.open && !r.offeredBy.has(driver) && this.handlerFor(r.callback) && this.inSubtree(r.callback.sessionId)) return true;
    }
    return false;
  }

  private handlerFor(callback: OpenCallback): ApprovalHandler | SignInHandler | ElicitationHandler | undefined {
    if (callback.type === 'approval') return this.tree.options.onApproval;
    return callback.type === 'sign-in' ? this.tree.options.onSignIn : this.tree.options.onElicitation;
  }

  /** Offers each open callback not yet offered by this driver to its handler. True if any was offered. */
  private async offerToHandlers(driver: number): Promise<boolean> {
    let offered = false;
    for (const record of [...this.tree.callbacks.values()]) {
      const handler = this.handlerFor(record.callback);
      if (!record.open || !handler || record.offeredBy.has(driver) || !this.inSubtree(record.callback.sessionId)) continue;
      record.offeredBy.add(driver);
      // Another waiting call's handler is deciding it: one approval is put to the handler once at a time.
      if (record.handling) continue;
      offered = true;
      const callback = record.callback;
      const ctx: CallbackContext = { session: { id: callback.sessionId, turnId: callback.turnId, agent: callback.agent }, callback };
      // A throwing handler or a bad return raises in this waiting call; the callback stays open.
      // While it decides, the tree is not quiet: other waiting calls wait for its answer rather than return Blocked.
      record.handling = true;
      let returned: unknown;
      try {
        returned = await this.tree.track(async () =>
          callback.type === 'approval' ? await (handler as ApprovalHandler)(ctx, callback.request)
            : callback.type === 'sign-in' ? await (handler as SignInHandler)(ctx, callback.sources)
            : await (handler as ElicitationHandler)(ctx, callback.request),
        );
      } finally {
        record.handling = false;
      }
      if (isKeep(returned)) continue;
      const answer = validateAnswer(callback, returned, HANDLER_NAME[callback.type]);
      const unrecorded = record.open ? record.settle({ kind: 'answer', answer, by: 'handler' }) : undefined;
      if (unrecorded !== undefined) throw unrecorded;
    }
    return offered;
  }

  private decide(call: ToolCall): PolicyDecision {
    const source = this.tree.policySource;
    const policy = typeof source === 'function' ? source() : source;
    const trust = this.tree.options.trusted;
    const trusted = typeof trust === 'function' ? trust() : (trust ?? true);
    const fallback = permissionModeDecision(this.tree.permissionMode);
    if (!policy) return { decision: fallback, rule: null, lowered: false, warnings: [], defaultFrom: null, ...(fallback === 'ask' ? { ask: { onTimeout: 'deny', remember: 'session' } } : {}) };
    return policy.decide(call, { workspaceFolder: this.tree.workspaceFolder, trusted, fallbackDefault: fallback });
  }

  private hookAsks(tool: RuntimeTool, input: unknown): { hook: string; title: string } | undefined {
    for (const hook of this.tree.hooks) {
      const title = hook.check({ tool, input, agent: this.agentName, workspaceFolder: this.tree.workspaceFolder });
      if (title !== undefined) return { hook: hook.name, title };
    }
    return undefined;
  }

  /** The subagent tools' view of this session. */
  private get subagentHost(): SubagentHost {
    return {
      spawn: (name, task) => this.spawn(name, task, this.current?.id ?? ''),
      children: () => this.children,
      find: (id) => this.children.find((c) => c.id === id),
      waiting: (work) => this.waiting(work),
    };
  }

  private spawn(name: string, task: string, parentTurnId: string): Session {
    const sub = this.root.subagents.find((s) => s.name === name);
    if (!sub) throw new Error(`there is no subagent named "${name}"; the subagents are: ${this.root.subagents.map((s) => s.name).join(', ') || 'none'}`);
    const child = new Session(this.tree, definitionOf(sub, this.root), this, this.root);
    child.task = task;
    this.children.push(child);
    this.tree.audit({ event: 'session-started', session: child.id, parentSession: this.id, agent: sub.name });
    this.tree.emit({ type: 'subagent-started', sessionId: child.id, parentSessionId: this.id, parentTurnId, agent: sub.name, task });
    child.startTurn(task);
    return child;
  }

  /** @internal For agents.wait: the latest turn's outcome once it ends. */
  async settledTurn(): Promise<{ state: 'completed' | 'failed'; text?: string; error?: string }> {
    const t = this.current;
    if (!t) return { state: 'completed', text: '' };
    await t.done;
    return t.state === 'completed' ? { state: 'completed', text: t.text } : { state: 'failed', error: t.error };
  }

  /** @internal For agents.message: a new turn once the current one ends. */
  async deliver(message: string): Promise<string> {
    if (this.current?.state === 'running') await this.current.done;
    return this.startTurn(message).id;
  }

  /** Marks the tree as waiting (not making progress) while `work` runs. */
  private async waiting<T>(work: Promise<T>): Promise<T> {
    this.tree.running--;
    if (this.tree.running === 0) this.tree.wakeDrivers();
    try {
      return await work;
    } finally {
      this.tree.running++;
    }
  }
}

/** "The same call": the same tool id and the same input, as canonical JSON (`canonicalJson(input)`). */
function sessionKey(toolId: string, canonicalInput: string): string {
  return `${toolId}\u0000${canonicalInput}`;
}

/** The requests for input one tool call made, so they can be closed when it ends. */
interface CallElicitations {
  ids: Set<string>;
  pending: Set<Promise<unknown>>;
  /** The call ended: a later request is cancelled at once. */
  closed: boolean;
}

const ELICITATION_OUTCOME = { accept: 'accepted', decline: 'declined', cancel: 'cancelled' } as const;
const HANDLER_NAME = { approval: 'onApproval', 'sign-in': 'onSignIn', elicitation: 'onElicitation' } as const;

function isKeep(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'keep';
}

/** Checks an answer against the callback it answers; throws SdkError and sends nothing when it does not fit. */
function validateAnswer(callback: OpenCallback, answer: unknown, where: string): CallbackAnswer {
  const type = typeof answer === 'object' && answer !== null ? (answer as { type?: unknown }).type : undefined;
  if (type === 'keep') throw new SdkError(`${where}: KeepCallbackOpen is a handler's return, not an answer`);
  if (callback.type === 'approval') {
    if (type === 'allow') {
      const scope = (answer as { scope?: unknown }).scope;
      if (scope !== 'once' && scope !== 'session') throw new SdkError(`${where}: AllowApproval scope must be "once" or "session"`);
      if (scope === 'session' && callback.request.hook !== undefined) {
        throw new SdkError(`${where}: the approval of hook "${callback.request.hook}" cannot be allowed for the session; answer AllowApproval() once`);
      }
      if (scope === 'session' && !callback.request.sessionAllowed) {
        throw new SdkError(`${where}: this approval cannot be allowed for the session (its rule says remember: never, or the workspace is untrusted); answer AllowApproval() once`);
      }
      return answer as CallbackAnswer;
    }
    if (type === 'deny') return answer as CallbackAnswer;
    throw new SdkError(`${where} must return AllowApproval, DenyApproval or KeepCallbackOpen for an approval, not ${describe(answer)}`);
  }
  if (callback.type === 'elicitation') return validateElicitationAnswer(callback.request.requestedSchema, answer, where);
  if (type !== 'sign-in') throw new SdkError(`${where} must return SignInAnswer or KeepCallbackOpen for a sign-in, not ${describe(answer)}`);
  const a = answer as { connected: readonly string[]; denied: readonly string[] };
  const named = new Set([...a.connected, ...a.denied]);
  const missing = callback.sources.filter((s) => !named.has(s.id));
  if (missing.length > 0) {
    throw new SdkError(`${where}: a SignInAnswer must name every source asked for, as connected or denied; missing ${missing.map((s) => s.id).join(', ')}`);
  }
  return answer as CallbackAnswer;
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

function definitionOf(def: Agent | Subagent, root: Agent): SessionDefinition {
  const isRoot = def === root;
  const builtins = def.builtins;
  const tools: RuntimeTool[] = [...def.tools];
  if (builtins.files) tools.push(...builtinFileTools());
  if (builtins.commands) tools.push(runCommandTool());
  const canSpawn = builtins.subagents && root.subagents.length > 0;
  if (canSpawn) tools.push(...subagentTools());
  const byName = new Map<string, RuntimeTool>();
  for (const t of tools) {
    if (byName.has(t.name)) throw new SdkError(`two tools of ${def.name} are named "${t.name}" (${byName.get(t.name)!.id} and ${t.id})`);
    byName.set(t.name, t);
  }
  return {
    name: def.name,
    model: (isRoot ? root.model : (def as Subagent).model ?? root.model),
    instructions: def.instructions,
    tools: byName,
    toolSources: def.toolSources,
    canSpawn,
    maxSteps: root.maxSteps,
  };
}

/** Default protected files: the policy and agents files, and the VS Code files that could widen what agents may do. */
export const DEFAULT_PROTECTED_FILES = ['.agentpolicy.jsonc', '.agents.jsonc', '.vscode/settings.json', '.vscode/mcp.json'];

export async function startSession(agent: Agent, options: StartSessionOptions = {}): Promise<Session> {
  const workspaceFolder = path.resolve(options.workspaceFolder ?? process.cwd());
  const protectedFiles = [...DEFAULT_PROTECTED_FILES, ...(options.protectedFiles ?? [])].map((f) => path.resolve(workspaceFolder, f));
  const hooks = [protectedFilesHook(protectedFiles), ...(options.hooks ?? [])];
  const tree = new Tree(options, options.policy ?? agent.permissionPolicy, agent.permissionMode, workspaceFolder, hooks);
  const session = new Session(tree, definitionOf(agent, agent), undefined, agent);
  tree.audit({ event: 'session-started', session: session.id, agent: agent.name });
  if (agent.subagents.length > 0 && agent.builtins.subagents) {
    const d = session['decide']({ tool: { id: 'agents.spawn', kind: 'builtin' }, input: {}, agent: agent.name });
    if (d.decision === 'deny') {
      const message = `This agent declares subagents, but its permission policy denies 'agents.spawn' (${d.rule ? `rule ${d.rule.index + 1}${d.rule.id ? ` "${d.rule.id}"` : ''}` : 'the default'}), so every start is denied. Add a rule allowing (or asking for) agents.spawn before it.`;
      session.warnings.push(message);
      tree.emit({ type: 'warning', sessionId: session.id, message });
      process.emitWarning(message, { code: 'AGENT_POLICY_SPAWN_DENIED' });
    }
  }
  return session;
}
