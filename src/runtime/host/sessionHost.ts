// The sessions an editor window runs: each root session is driven to its end in the
// background, its callbacks stay open until a person answers them (from a notification, the
// tree or the command palette), and its transcript grows as it runs. Next to them, the sessions
// of other makers' agents whose hooks ask this window (externalSession.ts), listed and answered
// the same way. Plain TypeScript: the VS Code layer only shows what this holds.
import type { Agent } from '../agents/agent.js';
import { SdkError, type AnswerResult, type CallbackAnswer, type OpenCallback, type TurnState } from '../tree/answers.js';
import type { ManagedControls } from '../../policy/rules/managedControls.js';
import type { AuditSink } from '../audit/audit.js';
import { interruptedSessions, readAuditLog, type RecoveredSession } from '../audit/auditRead.js';
import type { RuntimeEvent } from '../tree/events.js';
import { ExternalSession, externalSessionId } from './externalSession.js';
import type { ExternalHost, ListedSession, SessionNodeInfo } from './listedSession.js';
import type { Session } from '../session.js';
import type { Grant } from '../tree/sessionGrants.js';
import type { StartSessionOptions } from '../tree/sessionOptions.js';
import { describeEvent } from './transcript.js';

export type HostedState = 'running' | 'completed' | 'failed' | 'cancelled';

/** Where in the editor a person answered a callback. */
export type AnswerSurface = 'notification' | 'tree' | 'palette' | 'chat';

export class HostedSession implements ListedSession {
  state: HostedState = 'running';
  readonly transcript: string[] = [];
  finalText = '';
  error = '';
  /** Every session of the tree: the root and its subagents. */
  readonly nodes = new Map<string, SessionNodeInfo>();
  readonly startedAt = Date.now();
  /** How many prompts a person gave it: the first, then each `SessionHost.continue`. */
  turns = 1;
  /** Cancelled or closed by a person (also once its turn had ended): it takes no more prompts. */
  closed = false;
  /** Per root turn: resolved when the transcript has recorded its end (its last message comes before it). */
  private readonly turnEnds = new Map<string, { recorded: Promise<void>; resolve: () => void }>();
  private ended = false;

  /** @internal Resolved once the transcript has recorded the end of the root's turn `turnId` (or the events ended). */
  rootTurnEnded(turnId: string): Promise<void> {
    return this.turnEnd(turnId).recorded;
  }

  /** @internal `turnId` undefined: the events ended (the session was cancelled); nothing more will be recorded. */
  recordedRootTurnEnd(turnId: string | undefined): void {
    if (turnId === undefined) {
      this.ended = true;
      for (const end of this.turnEnds.values()) end.resolve();
    } else this.turnEnd(turnId).resolve();
  }

  private turnEnd(turnId: string): { recorded: Promise<void>; resolve: () => void } {
    let end = this.turnEnds.get(turnId);
    if (!end) {
      let resolve!: () => void;
      const recorded = new Promise<void>((r) => (resolve = r));
      end = { recorded, resolve };
      this.turnEnds.set(turnId, end);
      if (this.ended) resolve();
    }
    return end;
  }

  constructor(
    readonly session: Session,
    readonly agent: string,
    readonly prompt: string,
  ) {
    this.nodes.set(session.id, { id: session.id, agent, parentId: undefined, rootTurnId: '' });
  }

  get id(): string {
    return this.session.id;
  }

  /** Flow rules: the marks the tree carries (a subagent's included), sorted. */
  get marks(): readonly string[] {
    return [...this.session.marks].sort();
  }

  /** The root's latest turn id. */
  get currentTurnId(): string {
    return this.session.currentTurn?.id ?? '';
  }

  openCallbacks(): OpenCallback[] {
    return this.session.openCallbacks();
  }

  grants(): Array<{ sessionId: string; grant: Grant }> {
    // A finished turn can be continued (`SessionHost.continue`) with the same grants, so they are
    // listed while in force; a cancelled or closed session takes no prompts, and its grants go with it.
    return this.takesPrompts ? this.session.grants() : [];
  }

  /** Whether a next prompt may still come (a cancelled or closed session takes none). */
  get takesPrompts(): boolean {
    return this.state !== 'cancelled' && !this.closed;
  }

  revokeGrant(grantId: string): boolean {
    return this.session.revokeGrant(grantId);
  }

  /** A subagent's callback left open by an earlier turn of the root (runtime.md rule 15). */
  fromEarlierTurn(callback: OpenCallback): boolean {
    const node = this.nodes.get(callback.sessionId);
    if (!node || node.parentId === undefined) return false;
    return node.rootTurnId !== '' && node.rootTurnId !== this.currentTurnId;
  }

  /** The chain of agent names from the root to the session that asked, e.g. ["main", "researcher"]. */
  pathOf(sessionId: string): SessionNodeInfo[] {
    const chain: SessionNodeInfo[] = [];
    for (let n = this.nodes.get(sessionId); n; n = n.parentId ? this.nodes.get(n.parentId) : undefined) chain.unshift(n);
    return chain;
  }
}

/** A root session the log shows interrupted, with the callbacks its whole tree left open. */
export interface InterruptedSession extends RecoveredSession {
  /** The root and its subagents' sessions. */
  members: string[];
}

/** Puts each interrupted subagent's open callbacks under its root session. */
export function foldSubagents(sessions: readonly RecoveredSession[]): InterruptedSession[] {
  const byId = new Map(sessions.map((s) => [s.session, s]));
  const rootOf = (s: RecoveredSession): RecoveredSession => {
    let r = s;
    for (let parent = r.parentSession; parent !== undefined && byId.has(parent); parent = r.parentSession) r = byId.get(parent)!;
    return r;
  };
  const roots = new Map<string, InterruptedSession>();
  for (const s of sessions) {
    const root = rootOf(s);
    let folded = roots.get(root.session);
    if (!folded) roots.set(root.session, (folded = { ...root, openCallbacks: [], members: [] }));
    folded.members.push(s.session);
    folded.openCallbacks.push(...s.openCallbacks);
  }
  return [...roots.values()];
}

export interface SessionHostOptions {
  /** Where the audit log is appended; also read at start to find sessions a reload interrupted. */
  audit?: { sink: AuditSink; file?: string };
  /** The managed controls in force now, which cap the answers to other agents' hook asks (the window's managed policy). */
  controls?: () => ManagedControls;
}

/** Host sessions kept at most; beyond it, the oldest with nothing open are forgotten (and their Allow for Session with them). */
const MAX_EXTERNAL_SESSIONS = 200;

export class SessionHost {
  private readonly hosted = new Map<string, HostedSession>();
  private readonly external = new Map<string, ExternalSession>();
  private listeners = new Set<() => void>();
  private callbackListeners = new Set<(callback: OpenCallback, session: ListedSession) => void>();
  private failureListeners = new Set<(session: HostedSession) => void>();
  /** The surface each callback of our sessions was answered from, when it said. */
  private readonly answeredVia = new Map<string, AnswerSurface>();
  /** How many calls each rule decided in this window, by `file#index`. */
  readonly ruleCounts = new Map<string, number>();
  /** Sessions a reload or crash ended while they ran, with what was still open in them and their subagents. */
  interrupted: InterruptedSession[] = [];

  constructor(private readonly options: SessionHostOptions = {}) {
    const file = options.audit?.file;
    if (file) this.interrupted = foldSubagents(interruptedSessions(readAuditLog(file).entries));
  }

  /** Called on any change a view shows (callbacks, states, transcripts). */
  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Called when a session ends failed (not cancelled): a bad key, an unknown model, a server that cannot be reached. */
  onDidFail(listener: (session: HostedSession) => void): { dispose(): void } {
    this.failureListeners.add(listener);
    return { dispose: () => this.failureListeners.delete(listener) };
  }

  /** Called once for each callback as it opens. */
  onDidOpenCallback(listener: (callback: OpenCallback, session: ListedSession) => void): { dispose(): void } {
    this.callbackListeners.add(listener);
    return { dispose: () => this.callbackListeners.delete(listener) };
  }

  /** Our sessions, then other agents' sessions whose hooks asked here. */
  sessions(): ListedSession[] {
    return [...this.hosted.values(), ...this.external.values()];
  }

  get(id: string): ListedSession | undefined {
    return this.hosted.get(id) ?? this.external.get(id);
  }

  /** The session of another maker's agent whose hook asks this window, made at its first ask. */
  externalSession(who: ExternalHost): ExternalSession {
    const id = externalSessionId(who.host, who.hostSession);
    let session = this.external.get(id);
    if (!session) {
      session = new ExternalSession(who, {
        ...(this.options.audit ? { audit: this.options.audit.sink } : {}),
        opened: (callback, listed) => {
          for (const l of this.callbackListeners) l(callback, listed);
        },
        changed: () => this.changed(),
        ...(this.options.controls ? { controls: this.options.controls } : {}),
      });
      this.external.set(id, session);
      this.forgetIdleExternal();
    }
    return session;
  }

  private forgetIdleExternal(): void {
    for (const [id, session] of this.external) {
      if (this.external.size <= MAX_EXTERNAL_SESSIONS) return;
      if (session.openCallbacks().length === 0) this.external.delete(id);
    }
  }

  /** Takes back a grant of any session (the tree's Revoke); false when it had lapsed or is unknown. */
  revokeGrant(grantId: string): boolean {
    const changed = this.sessions().some((session) => session.revokeGrant(grantId));
    if (changed) this.changed();
    return changed;
  }

  /** Every open callback of every session, with the session tree it belongs to. */
  openCallbacks(): Array<{ session: ListedSession; callback: OpenCallback }> {
    return this.sessions().flatMap((session) => session.openCallbacks().map((callback) => ({ session, callback })));
  }

  /** Starts a session and drives it to its end in the background; callbacks wait for answers. */
  async start(agent: Agent, prompt: string, options: Omit<StartSessionOptions, 'onApproval' | 'onSignIn' | 'audit'>): Promise<HostedSession> {
    const session = await agent.startSession({ ...options, ...(this.options.audit ? { audit: this.options.audit.sink } : {}) });
    const hosted = new HostedSession(session, agent.name, prompt);
    this.hosted.set(session.id, hosted);
    for (const w of session.warnings) hosted.transcript.push(`warning: ${w}`);
    void this.follow(hosted);
    void this.drive(hosted, prompt);
    this.changed();
    return hosted;
  }

  private async follow(hosted: HostedSession): Promise<void> {
    for await (const event of hosted.session.events()) {
      this.record(hosted, event);
      this.changed();
    }
    // The events ended (the session was cancelled): nothing more will be recorded.
    hosted.recordedRootTurnEnd(undefined);
  }

  private record(hosted: HostedSession, event: RuntimeEvent): void {
    if (event.type === 'subagent-started') {
      const parent = hosted.nodes.get(event.parentSessionId);
      const rootTurnId = parent?.parentId === undefined ? event.parentTurnId : parent.rootTurnId;
      hosted.nodes.set(event.sessionId, { id: event.sessionId, agent: event.agent, parentId: event.parentSessionId, rootTurnId });
    }
    if (event.type === 'tool-call' && event.decision.rule) {
      const key = `${event.decision.rule.file}#${event.decision.rule.index}`;
      this.ruleCounts.set(key, (this.ruleCounts.get(key) ?? 0) + 1);
    }
    const lines = describeEvent(event, hosted.id);
    // Which surface a person answered from (the notification, the tree, the palette, the chat), when one said.
    const via = event.type === 'callback-settled' ? this.answeredVia.get(event.callbackId) : undefined;
    hosted.transcript.push(...(via === undefined ? lines : lines.map((l) => `${l} from the ${via}`)));
    if (event.type === 'turn-ended' && event.sessionId === hosted.id) hosted.recordedRootTurnEnd(event.turnId);
    if (event.type === 'callback-opened') for (const l of this.callbackListeners) l(event.callback, hosted);
  }

  /**
   * A next prompt to a hosted session whose turn has ended (completed or failed, not cancelled):
   * a new turn of the same session, with its history, grants and marks, driven in the background
   * like the first. Throws SdkError while a turn still runs or once the session was cancelled.
   */
  continue(id: string, prompt: string): HostedSession {
    const hosted = this.hosted.get(id);
    if (!hosted) throw new SdkError(`no session ${id} runs in this window`);
    if (!hosted.takesPrompts) throw new SdkError(`session ${id} was cancelled; start a new one`);
    if (hosted.state === 'running' || hosted.session.busy) throw new SdkError(`session ${id} is still running: answer what it asks, or wait for its answer`);
    hosted.state = 'running';
    hosted.error = '';
    hosted.turns++;
    void this.drive(hosted, prompt);
    this.changed();
    return hosted;
  }

  private async drive(hosted: HostedSession, prompt: string): Promise<void> {
    try {
      let state: TurnState = await hosted.session.run(prompt);
      while (state.type === 'blocked') state = await hosted.session.turn(state.turnId).result({ after: state });
      // The events are followed on their own: the turn's last message is written before the outcome.
      await hosted.rootTurnEnded(state.turnId);
      this.finish(hosted, state);
      // Its MCP servers stop when this prompt and every subagent it left running are done; a later prompt (continue) starts them again.
      void hosted.session.closeToolSourcesWhenDone();
    } catch (error) {
      if (hosted.state === 'running') {
        hosted.state = 'failed';
        hosted.error = error instanceof Error ? error.message : String(error);
        hosted.transcript.push(`failed: ${hosted.error}`);
      }
    }
    this.changed();
  }

  private finish(hosted: HostedSession, state: TurnState): void {
    if (hosted.state !== 'running') return;
    if (state.type === 'completed') {
      hosted.state = 'completed';
      hosted.finalText = state.text;
      hosted.transcript.push(`completed: ${state.text}`);
    } else if (state.type === 'failed') {
      hosted.state = state.error === 'cancelled' ? 'cancelled' : 'failed';
      hosted.error = state.error;
      hosted.transcript.push(`${hosted.state}: ${state.error}`);
      if (hosted.state === 'failed') for (const l of this.failureListeners) l(hosted);
    }
  }

  /**
   * Answers a callback of any session from the root's turn. `AlreadySettled` or `NotFound`
   * means it was answered elsewhere (or closed): nothing ran.
   */
  async answer(callbackId: string, answer: CallbackAnswer, options: { via?: AnswerSurface } = {}): Promise<AnswerResult | undefined> {
    for (const session of this.external.values()) if (session.knowsCallback(callbackId)) return session.answer(callbackId, answer);
    for (const hosted of this.hosted.values()) {
      if (!hosted.session.knowsCallback(callbackId)) continue;
      const turn = hosted.session.currentTurn;
      if (!turn) throw new SdkError(`session ${hosted.id} has no turn`);
      // Remembered before answering (the settlement's event is recorded with it), and only by the answer that settles it.
      const names = options.via !== undefined && !this.answeredVia.has(callbackId) && hosted.openCallbacks().some((c) => c.id === callbackId);
      if (names) this.answeredVia.set(callbackId, options.via!);
      try {
        return await turn.answer(callbackId, answer, { by: 'person' });
      } catch (error) {
        if (names) this.forgetVia(callbackId, hosted);
        throw error;
      }
    }
    return undefined;
  }

  /** Where a person answered this callback from, when the surface said (the notification, the tree, the palette, the chat). */
  viaOf(callbackId: string): AnswerSurface | undefined {
    return this.answeredVia.get(callbackId);
  }

  /** A refused answer (SdkError) leaves the callback open: the surface it named did not settle it. */
  private forgetVia(callbackId: string, hosted: HostedSession): void {
    if (hosted.openCallbacks().some((c) => c.id === callbackId)) this.answeredVia.delete(callbackId);
  }

  async cancel(id: string): Promise<void> {
    const hosted = this.hosted.get(id);
    if (!hosted) return;
    const wasRunning = hosted.state === 'running';
    hosted.closed = true;
    await hosted.session.cancel();
    if (wasRunning) {
      hosted.state = 'cancelled';
      hosted.transcript.push('cancelled by a person');
    }
    this.changed();
  }

  /** Forgets an interrupted session: the audit log records that a person saw it. */
  dismissInterrupted(sessionId: string): void {
    const recovered = this.interrupted.find((s) => s.session === sessionId);
    if (!recovered) return;
    this.interrupted = this.interrupted.filter((s) => s !== recovered);
    for (const session of recovered.members) {
      this.options.audit?.sink.write({ time: new Date().toISOString(), event: 'session-ended', session, state: 'interrupted' });
    }
    this.changed();
  }

  async dispose(): Promise<void> {
    this.listeners.clear();
    this.callbackListeners.clear();
    this.failureListeners.clear();
    // Other agents' asks end with the window: their hooks answer on their own (the rule's onTimeout).
    for (const session of this.external.values()) session.closeAll('the editor window closed');
    // The window is closing: MCP servers stop with it (the sessions themselves are left for the audit log to show as interrupted).
    await Promise.allSettled([...this.hosted.values()].map((h) => h.session.closeToolSources()));
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
