// Sessions (runtime.md): `startSession` and the `Session` a program holds. A root session and the
// sessions of its subagents form a tree that shares one set of callbacks, one change counter and
// one set of handlers (tree.ts). A session starts turns (turn.ts), runs each through its model
// loop (modelLoop.ts), whose tool calls are judged, asked and run in toolCall.ts; the callbacks
// they open are in callbacks.ts, and handlers run only inside a driver (drivers.ts).
// Imports the session modules above; none of them imports this file (they see a session through
// TreeSession and TurnOwner), and agent.ts imports it to start sessions.
import * as path from 'node:path';
import { SPAWN_TOOL } from '../policy/hiddenTools.js';
import { initShellParser } from '../policy/shell/shellParser.js';
import { SdkError, type AnswerResult, type Blocked, type OpenCallback, type TurnState } from './tree/answers.js';
import { answerCallback, closeCallbacks, type AnsweredBy } from './tree/callbacks.js';
import { drive } from './tree/drivers.js';
import type { RuntimeEvent } from './tree/events.js';
import { ModelLoop } from './modelLoop.js';
import { noBashHook } from './calls/noBashHook.js';
import { protectedFilesHook, protectedPathsOf } from './calls/protected.js';
import { sessionSandboxLine } from './calls/sandboxRun.js';
import { definitionOf, type SessionDefinition } from './tree/sessionDefinition.js';
import type { RootAgentDefinition, StartSessionOptions } from './tree/sessionOptions.js';
import { ToolCalls } from './calls/toolCall.js';
import { toolDenial } from './calls/offeredTools.js';
import { grantRevokedEntry, type Grant } from './tree/sessionGrants.js';
import { newId, Tree, type TreeSession } from './tree/tree.js';
import { endTurn, Turn, TurnCore, type TurnOwner } from './tree/turn.js';
import type { SubagentHost } from './tools/tools.js';

export class Session implements TreeSession, TurnOwner {
  readonly id = newId('sess');
  readonly warnings: string[] = [];
  readonly children: Session[] = [];
  private readonly turns = new Map<string, TurnCore>();
  private current: TurnCore | undefined;
  private turnCount = 0;
  private readonly modelLoop: ModelLoop;
  private cancelled = false;
  /** A subagent's result, as `agents.wait` reports it. */
  task = '';

  /** @internal Use `agent.startSession()`. */
  constructor(
    private readonly tree: Tree,
    readonly definition: SessionDefinition,
    readonly parent: Session | undefined,
    readonly root: RootAgentDefinition,
  ) {
    tree.sessions.set(this.id, this);
    const toolCalls = new ToolCalls(tree, this, definition.tools, definition.canSpawn ? this.subagentHost() : undefined);
    this.modelLoop = new ModelLoop(tree, this, definition, toolCalls);
  }

  get agentName(): string {
    return this.definition.name;
  }

  /** Flow rules: the marks of this session's tree (shared with its parent, subagents and their siblings). */
  get marks(): ReadonlySet<string> {
    return this.tree.marks;
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
        if (this.tree.inSubtree(e.sessionId, this.id)) yield e;
      }
      if (this.cancelled) return;
      await this.tree.nextWake();
    }
  }

  /** Whether this session or one of its subagents ever opened this callback. */
  /** The grants in force in this session and its subagents (Allow for Session, time-limited), each with the session that holds it. */
  grants(): Array<{ sessionId: string; grant: Grant }> {
    return [...this.tree.sessions.keys()].filter((id) => this.tree.inSubtree(id, this.id)).flatMap((id) => this.tree.grantsOf(id).list().map((grant) => ({ sessionId: id, grant })));
  }

  /** Takes back a grant of this session or a subagent's, audited; false when it had lapsed or is not theirs. */
  revokeGrant(grantId: string): boolean {
    for (const { sessionId } of this.grants()) {
      const grant = this.tree.grantsOf(sessionId).revoke(grantId);
      if (!grant) continue;
      this.tree.audit(grantRevokedEntry(sessionId, this.tree.sessions.get(sessionId)?.agentName ?? this.agentName, grant));
      this.tree.changed();
      return true;
    }
    return false;
  }

  knowsCallback(callbackId: string): boolean {
    const record = this.tree.callbacks.get(callbackId);
    return record !== undefined && this.tree.inSubtree(record.callback.sessionId, this.id);
  }

  /** Every open callback of this session and its subagents. */
  openCallbacks(): OpenCallback[] {
    return this.tree.openCallbacks(this.id);
  }

  /** Cancels every turn of this session and its subagents and closes their callbacks. */
  async cancel(): Promise<void> {
    if (this.cancelled) return;
    this.cancelled = true;
    for (const child of this.children) await child.cancel();
    closeCallbacks(this.tree, this.id, undefined, 'the session was cancelled');
    const wasRunning = this.current?.state === 'running';
    const lastState = this.current?.state;
    for (const t of this.turns.values()) {
      t.abort.abort();
      if (t.state === 'running') endTurn(this.tree, this, t, 'failed', 'cancelled');
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

  /** @internal Drops the tools its tool sources listed (their connections were closed). */
  forgetSourceTools(): void {
    this.modelLoop.forgetSourceTools();
  }

  /** Interrupts this (subagent) session's running turn: its callbacks close, the turn fails as interrupted. */
  interrupt(): void {
    const t = this.current;
    if (!t || t.state !== 'running') return;
    closeCallbacks(this.tree, this.id, undefined, 'the subagent was interrupted');
    t.abort.abort();
    endTurn(this.tree, this, t, 'failed', 'interrupted');
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
    void this.modelLoop.run(turn, prompt);
    return turn;
  }

  /** @internal Answers a callback of this session or, from an ancestor, of a subagent's. */
  answerCallback(callbackId: string, answer: unknown, by: AnsweredBy): AnswerResult {
    return answerCallback(this.tree, this.id, callbackId, answer, by);
  }

  /** @internal Waits for a turn, running the handlers for open callbacks of this session's subtree. */
  drive(turn: TurnCore, after: Blocked | undefined): Promise<TurnState> {
    return drive(this.tree, this.id, turn, after);
  }

  private get rootSession(): Session {
    let s: Session = this;
    while (s.parent) s = s.parent;
    return s;
  }

  /** The subagent tools' view of this session. */
  private subagentHost(): SubagentHost {
    return {
      spawn: (name, task) => this.spawn(name, task, this.current?.id ?? ''),
      children: () => this.children,
      find: (id) => this.children.find((c) => c.id === id),
      waiting: (work) => this.tree.waiting(work),
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
}

export async function startSession(agent: RootAgentDefinition, options: StartSessionOptions = {}): Promise<Session> {
  // Commands are judged with the shell parser: loaded here (once per process) so that a program
  // using the runtime need not know to. Where it cannot load, a command's decision says why.
  await initShellParser().catch(() => undefined);
  const workspaceFolder = path.resolve(options.workspaceFolder ?? process.cwd());
  const protectedFiles = protectedPathsOf(workspaceFolder, options.protectedFiles ?? []);
  // The policy may add persistence files, and may change while the session runs: the tree knows the list in force.
  let tree: Tree | undefined;
  const hooks = [protectedFilesHook(() => tree?.protectedPaths() ?? protectedFiles), noBashHook(), ...(options.hooks ?? [])];
  tree = new Tree(options, options.policy ?? agent.permissionPolicy, agent.permissionMode, workspaceFolder, hooks, protectedFiles);
  const session = new Session(tree, definitionOf(agent, agent), undefined, agent);
  tree.audit({ event: 'session-started', session: session.id, agent: agent.name });
  if (agent.builtins.commands || agent.subagents.some((s) => s.builtins.commands)) {
    // Said plainly at the start: whether this session's commands run sandboxed here, and why not.
    const line = sessionSandboxLine(tree.currentPolicy());
    tree.emit({ type: 'sandbox', sessionId: session.id, available: line.available, message: line.text });
  }
  if (agent.subagents.length > 0 && agent.builtins.subagents) {
    // Every start denied whatever its input (spawn-denied's proof): the spawn tool is then hidden from the model too.
    const d = toolDenial(tree, agent.name, SPAWN_TOOL);
    if (d !== undefined) {
      const message = `This agent declares subagents, but its permission policy denies 'agents.spawn' (${d.rule ? `rule ${d.rule.index + 1}${d.rule.id ? ` "${d.rule.id}"` : ''}` : 'the default'}), so every start is denied and the spawn tool is not offered to its model. Add a rule allowing (or asking for) agents.spawn before it.`;
      session.warnings.push(message);
      tree.emit({ type: 'warning', sessionId: session.id, message });
      process.emitWarning(message, { code: 'AGENT_POLICY_SPAWN_DENIED' });
    }
  }
  return session;
}
