// The session tree: a root session and the sessions of its subagents share one set of callbacks,
// one change counter, one set of handlers and one connection per tool source. This file keeps
// that shared state, counts the work in flight, and wakes whoever waits for a change or for the
// tree to go quiet (drivers.ts returns Blocked then).
// Imports types only; it knows sessions through `TreeSession`, never through session.ts.
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { Policy } from '../../policy/policy.js';
import type { OpenCallback } from './answers.js';
import { auditTime, type AuditEntry } from '../audit/audit.js';
import type { CallbackHost, CallbackRecord } from './callbacks.js';
import type { RuntimeEvent } from './events.js';
import { SessionGrants } from './sessionGrants.js';
import type { PermissionMode, StartSessionOptions, ToolHook } from './sessionOptions.js';
import type { ToolConnection } from '../tools/tools.js';

let nextId = 0;
/** An id unique in this process (a counter) and unlikely to repeat in another (a random part). */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().slice(0, 8)}${(++nextId).toString(36)}`;
}

/** Whose a callback, an event or an audit line is. */
export interface SessionScope {
  readonly id: string;
  readonly agentName: string;
}

/** What the tree needs of each of its sessions (session.ts's Session). */
export interface TreeSession extends SessionScope {
  readonly parent: TreeSession | undefined;
  readonly warnings: string[];
  /** Its latest turn is running. */
  readonly busy: boolean;
  /** Drops the tools its tool sources listed (their connections were closed). */
  forgetSourceTools(): void;
}

export class Tree implements CallbackHost {
  version = 0;
  /** Model calls and tool runs in flight: while > 0 the tree is making progress on its own. */
  running = 0;
  readonly callbacks = new Map<string, CallbackRecord>();
  readonly sessions = new Map<string, TreeSession>();
  /** One connection per tool source for the whole tree (a subagent shares its parent's servers). */
  readonly connections = new Map<string, ToolConnection>();
  readonly events: RuntimeEvent[] = [];
  /**
   * Flow rules: the marks of the whole tree. A subagent's calls mark its parent and siblings too
   * (and the parent's its subagents): what one session read, the others can be given.
   */
  readonly marks = new Set<string>();
  private wakers: Array<() => void> = [];
  private driverCount = 0;

  constructor(
    readonly options: StartSessionOptions,
    readonly policySource: Policy | (() => Policy) | undefined,
    readonly permissionMode: PermissionMode,
    readonly workspaceFolder: string,
    readonly hooks: readonly ToolHook[],
    /** The protected paths, absolute: the protected-files hook asks for them, the sandbox binds them read-only. */
    readonly protectedFiles: readonly string[] = [],
  ) {}

  private protectedFor: { policy: Policy | undefined; paths: readonly string[] } | undefined;

  /** The policy in force now (a source may be a getter: the editor reloads it), or undefined. */
  currentPolicy(): Policy | undefined {
    const source = this.policySource;
    return typeof source === 'function' ? source() : source;
  }

  /** Workspace trust now. */
  trustedNow(): boolean {
    const trust = this.options.trusted;
    return typeof trust === 'function' ? trust() : (trust ?? true);
  }

  /**
   * The protected paths in force: `protectedFiles` and the policy's `persistenceFiles`, read
   * again when the policy changes (worked out once per policy).
   */
  protectedPaths(): readonly string[] {
    const policy = this.currentPolicy();
    if (this.protectedFor !== undefined && this.protectedFor.policy === policy) return this.protectedFor.paths;
    const added = policy?.persistenceFiles() ?? [];
    const paths = added.length === 0 ? this.protectedFiles : [...this.protectedFiles, ...added.map((f) => path.resolve(this.workspaceFolder, f))];
    this.protectedFor = { policy, paths };
    return paths;
  }

  /** What a person allowed beyond one call, per session of the tree (toolCall.ts grants, the editor lists and revokes). */
  private readonly sessionGrants = new Map<string, SessionGrants>();

  grantsOf(sessionId: string): SessionGrants {
    let grants = this.sessionGrants.get(sessionId);
    if (!grants) this.sessionGrants.set(sessionId, (grants = new SessionGrants(this.options.clock)));
    return grants;
  }

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

  warn(session: TreeSession, message: string): void {
    session.warnings.push(message);
    this.emit({ type: 'warning', sessionId: session.id, message });
  }

  audit(entry: Omit<AuditEntry, 'time'>): void {
    const sink = this.options.audit;
    // No line is made without a sink (a batch is only ever held for one).
    if (sink === undefined) return;
    const line: AuditEntry = { time: auditTime(), ...entry };
    if (this.auditBatch) this.auditBatch.entries.push(line);
    else sink.write(line);
  }

  /**
   * Runs `start`, which decides a response's parallel calls, with their audit lines held, then
   * writes them together (the sink's `writeAll`): one system call per ~9 lines, not per line. A
   * tool started meanwhile waits for `auditWritten()` first, so no tool runs before its line is
   * written, as before; what changes is that a response's tools start after all its calls are
   * decided. `written` rejects when the lines could not be written (a tool waiting on it then does
   * not run); the caller awaits it too, so a line that was lost fails the turn as a failed write did.
   * No `written` when nothing was held (no audit sink, or one without `writeAll`).
   */
  batchAudit<T>(start: () => T): { result: T; written?: Promise<void> } {
    const sink = this.options.audit;
    if (sink?.writeAll === undefined || this.auditBatch !== undefined) return { result: start() };
    let settle!: { resolve: () => void; reject: (error: unknown) => void };
    const written = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    // Handled here and rethrown to whoever awaits it: a batch of denials has no tool waiting.
    written.catch(() => undefined);
    const batch = { entries: [] as AuditEntry[], written };
    this.auditBatch = batch;
    let result: T;
    try {
      result = start();
    } finally {
      this.auditBatch = undefined;
      try {
        sink.writeAll(batch.entries);
        settle.resolve();
      } catch (error) {
        settle.reject(error);
      }
    }
    return { result, written };
  }

  /** While a batch's lines are held: its promise of their being written (tools wait on it); else undefined. */
  auditWritten(): Promise<void> | undefined {
    return this.auditBatch?.written;
  }

  private auditBatch: { entries: AuditEntry[]; written: Promise<void> } | undefined;

  /** Adds the marks of a call that runs; says which were new (nothing when none was). */
  mark(session: SessionScope, toolId: string, marks: readonly string[] | undefined): void {
    const added = (marks ?? []).filter((m) => !this.marks.has(m));
    if (added.length === 0) return;
    for (const m of added) this.marks.add(m);
    // An event, not a change: the callbacks are as they were, so no driver wakes for it.
    this.emit({ type: 'marks', sessionId: session.id, agent: session.agentName, toolId, added, marks: [...this.marks].sort() });
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

  /** Marks the tree as waiting (not making progress) while `work` runs. */
  async waiting<T>(work: Promise<T>): Promise<T> {
    this.running--;
    if (this.running === 0) this.wakeDrivers();
    try {
      return await work;
    } finally {
      this.running++;
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

  inSubtree(sessionId: string, ancestorId: string): boolean {
    for (let s = this.sessions.get(sessionId); s; s = s.parent) if (s.id === ancestorId) return true;
    return false;
  }

  /** Every open callback of the session `ancestorId` and its subagents. */
  openCallbacks(ancestorId: string): OpenCallback[] {
    const out: OpenCallback[] = [];
    for (const r of this.callbacks.values()) if (r.open && this.inSubtree(r.callback.sessionId, ancestorId)) out.push(r.callback);
    return out;
  }

  rootOf(session: TreeSession): TreeSession {
    let s = session;
    while (s.parent) s = s.parent;
    return s;
  }
}
