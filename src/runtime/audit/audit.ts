// The audit log: one JSON line per event (a session starting or ending, a decision on a tool
// call, a callback opened or settled). The runtime writes a decision line BEFORE the tool runs,
// so the log must never lose a line once `write` has returned, even if the process dies the
// next instant. The reader is tolerant: a half-written last line (a crash mid-write) or a
// garbage line is reported and skipped, never the end of reading (auditRead.ts). Each line is
// chained to the line before it by a hash (auditChain.ts), under a lock shared by every writer of
// the file (auditLock.ts), so that `agentpolicy audit verify` finds a line changed, removed,
// reordered or inserted.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CHAIN_BYTES, chainLine, headOfFile } from './auditChain.js';
import { withAuditLock } from './auditLock.js';
import type { AuditSandbox } from './auditSandbox.js';

export type AuditEvent = 'session-started' | 'session-ended' | 'decision' | 'callback-opened' | 'callback-settled' | 'sandbox-cleanup' | 'grant-revoked' | 'answer-refused' | 'tools-hidden' | 'connection' | 'server-started'
  | 'mcp-tool-pinned' | 'mcp-tool-changed' | 'mcp-tool-accepted';

export const AUDIT_EVENTS: readonly AuditEvent[] = [
  'session-started',
  'session-ended',
  'decision',
  'callback-opened',
  'callback-settled',
  'sandbox-cleanup',
  'grant-revoked',
  // An answer the runtime refused (a grant longer than the ask may be given: its rule, trust, the managed controls); the callback stays open.
  'answer-refused',
  // Hidden tools: before a model request, the tools not offered to the session's model (denied outright), when that list changed.
  'tools-hidden',
  // A sandboxed command's connection, judged by the policy's rules with domains or urls (or let through by a person's earlier answer).
  'connection',
  // An MCP server's stdio process started in the sandbox (docs/mcp.md, "Sandboxed servers"): `tool` is
  // `mcp.<server>`, `summary` its command line as written, `sandbox` how it runs, `reason` why it is sandboxed.
  'server-started',
  // MCP tools pinned (docs/mcp.md): `tool` is `mcp.<server>.<tool>`, `definitionDigest` the definition's digest.
  // Pinned: at the server's first listing after a person allowed it to start (or after a reset).
  'mcp-tool-pinned',
  // Changed: a listing offered a definition that is not the one pinned (`pinnedDigest`; absent for a
  // new tool), `summary` says what changed; its calls ask until a person accepts.
  'mcp-tool-changed',
  // Accepted: a person accepted the change; `definitionDigest` is pinned in place of `pinnedDigest`.
  'mcp-tool-accepted',
];

export interface AuditEntry {
  /** ISO 8601. */
  time: string;
  event: AuditEvent;
  /** Session id. */
  session: string;
  /** For a subagent's session-started: the session that started it. */
  parentSession?: string;
  turn?: string;
  /** Agent or subagent name. */
  agent?: string;
  /** Stable tool id. */
  tool?: string;
  /**
   * Another maker's hook (src/hooks): the milliseconds from the hook's start to its decision line,
   * its start being the process's for `agentpolicy hook`, the request's arrival for the decision
   * service (what the host waited, but for the hook's own start-up around it and the transport).
   */
  hookMs?: number;
  /** 'sha256:' + hex of the canonical JSON of the input (see `inputDigest`). */
  inputDigest?: string;
  /** Short human summary of the input (at most 160 characters; see `summarizeInput`). */
  summary?: string;
  decision?: 'allow' | 'ask' | 'deny';
  /** The rule that decided; null when a default decided. */
  rule?: { layer: string; id: string | null; index: number; file: string; line: number } | null;
  /** When rule is null: which layer's default, or 'permissionMode', or 'builtin'. */
  default?: string;
  lowered?: boolean;
  reason?: string;
  /** A call of several parts: each part (cut like `summary`) with its own decision and rule; at most AUDIT_PARTS_MAX, then `partsOmitted`. */
  parts?: Array<{ part: string; decision: 'allow' | 'ask' | 'deny'; rule: { layer: string; id: string | null; index: number; file: string; line: number } | null }>;
  partsOmitted?: number;
  /** For tools-hidden: the tools not offered to the model and the rule (null: the default) that denies every call of each; at most AUDIT_HIDDEN_MAX, then `hiddenOmitted`. */
  hidden?: Array<{ tool: string; rule: { layer: string; id: string | null; index: number; file: string; line: number } | null; default?: string }>;
  hiddenOmitted?: number;
  hook?: string;
  /** Callback id, for asks and their answers. */
  callback?: string;
  answeredBy?: 'handler' | 'person' | 'timeout' | 'session' | 'cancel';
  /** Elicitations log only the action, never the content a person typed. */
  answer?: 'allow-once' | 'allow-session' | 'allow-duration' | 'deny' | 'kept' | 'closed' | 'connected' | 'refused' | 'accepted' | 'declined' | 'cancelled' | 'passed' | 'withheld';
  /** For an `allow-duration` answer, and a grant revoked: how long the grant was given for, in seconds. */
  grantSeconds?: number;
  /** A call answered by grants of the parts of a compound command (not of the call itself): those parts. */
  grantParts?: string[];
  /** For session-ended. */
  state?: 'completed' | 'failed' | 'cancelled' | 'interrupted';
  /** For builtin.run_command: whether it runs sandboxed and with network (on callback-opened: if a person allows it); on server-started, how the server runs. */
  sandbox?: AuditSandbox;
  /** For sandbox-cleanup: the changes to protected paths undone (or found) after a sandboxed command ended. */
  undone?: string[];
  /**
   * Flow rules: the marks a call that runs puts on its session tree, on the line where it was let
   * run (a `decision` allow, or the `callback-settled` of an ask allowed). `sessionMarks` in
   * auditRead.ts rebuilds a session's marks from them.
   */
  marks?: string[];
  /** Result review: on the `decision` line of a call whose result a person reviews, and on its review's callback lines. */
  review?: 'result';
  /** Result review: 'sha256:' + hex of the result reviewed (the result itself is never logged). */
  resultDigest?: string;
  /** A sandboxed command's connection (a `connection` line, or the `callback-opened` of its ask): the host and port it reached for. */
  host?: string;
  port?: number;
  /** MCP tools pinned: the digest of the tool's definition offered (pinned, changed to, accepted). */
  definitionDigest?: string;
  /** MCP tools pinned: the digest pinned before a change or an acceptance. */
  pinnedDigest?: string;
}

export interface AuditSink {
  write(entry: AuditEntry): void;
  /**
   * Writes these entries' lines in order in as few writes as the 4 KiB limit allows (each write
   * whole lines): the runtime's lines of a response's parallel calls (tree.ts, `batchAudit`).
   * Without it they are written one by one.
   */
  writeAll?(entries: readonly AuditEntry[]): void;
  /** A chained log's head after this writer's last line (FileAuditLog): exported where the person cannot rewrite it. */
  readonly head?: string | undefined;
  close(): void;
}

/** The longest summary kept, in UTF-16 code units (an ellipsis marks a cut). */
export const SUMMARY_MAX = 160;

/**
 * The longest line written, in bytes with its newline. Kept under 4 KiB (PIPE_BUF on Linux,
 * and one page) so that one `write(2)` on an O_APPEND descriptor lands as one unit even with
 * another process appending to the same file: lines of two writers never interleave.
 */
export const MAX_LINE_BYTES = 4000;
/** The longest entry text: a line is it, the chain fields and a newline. */
const MAX_BODY_BYTES = MAX_LINE_BYTES - CHAIN_BYTES - 1;

/** No string field is cut shorter than this when a line has to be shrunk. */
const FIELD_FLOOR = 32;

// ---------------------------------------------------------------------------------------------
// Sinks

export interface FileAuditLogOptions {
  /**
   * Also call fdatasync(2) after every line. Default false.
   *
   * Without it, a line is in the kernel's page cache when `write` returns: it survives any
   * crash of this process (an exception, `process.abort()`, SIGKILL, an out-of-memory kill,
   * the window being closed or reloaded), because the kernel, not the process, owns the data
   * from then on. What it does not survive is the machine going down before the kernel
   * flushes (power loss, kernel panic, a VM being killed), typically up to ~30 s of lines.
   *
   * With it, each line is on stable storage when `write` returns, at the price of one disk
   * flush per line: tens of microseconds to milliseconds on a local SSD, far more on a
   * spinning disk or a network file system, and the event loop is blocked meanwhile (the
   * write is synchronous by design). Choose it when the log is evidence that must survive
   * the host itself failing.
   */
  fsync?: boolean;
  /**
   * A log continued in a new file: the head of the file before it (`readAuditHead`), which the
   * new file's first line names instead of GENESIS, so `agentpolicy audit verify OLD NEW` checks
   * that nothing was lost between them. Used only while the file is empty.
   */
  after?: string;
}

/**
 * Appends one JSON line per entry to a file, synchronously, with no buffering in user space.
 *
 * - The file is opened lazily, once, with flag 'a+' (O_APPEND): every write goes to the current
 *   end of the file, whatever other writers (another window) have appended meanwhile.
 * - Each write holds the file's lock (auditLock.ts) while it reads the hash of the file's last
 *   line (unless the file still ends where this writer's last write did) and appends lines
 *   chained after it (auditChain.ts): with several writers the file is still one chain.
 * - `writeAll` joins several lines into writes of at most 4 KiB, whole lines each (the runtime's
 *   lines of one response's parallel calls); everything below holds for each such write.
 * - Each line goes out in a single `writeSync` of the whole buffer (looping only if the kernel
 *   reports a short write, which regular local files do not do), so a line is either all in
 *   the kernel or, if this process dies during the call, at worst cut at its end. A line is at
 *   most MAX_LINE_BYTES long (long summaries, reasons and then other strings are truncated),
 *   so concurrent writers' lines do not interleave.
 * - If the file ends in a half-written line left by an earlier crash, a newline is written
 *   first so that the first new line is not glued onto it, and the new line chains past it.
 * - A failing write throws: the caller (which writes the decision before running the tool)
 *   must treat an entry that could not be recorded as a reason not to go on.
 */
export class FileAuditLog implements AuditSink {
  private fd: number | undefined;
  private closed = false;
  /** The hash of the last line this writer appended, and where the file ended after it. */
  private last: { hash: string; end: number } | undefined;
  private readonly fsync: boolean;
  private readonly after: string | undefined;
  private readonly lineBuffer = Buffer.allocUnsafe(LINE_BUFFER_BYTES);

  constructor(
    readonly file: string,
    options: FileAuditLogOptions = {},
  ) {
    this.fsync = options.fsync ?? false;
    this.after = options.after;
  }

  write(entry: AuditEntry): void {
    if (this.closed) throw new Error(`audit log ${this.file} is closed`);
    this.append([encodeAuditBody(entry)]);
  }

  /** The hash of the last line this writer appended (the chain's head as this writer left it); undefined before its first. */
  get head(): string | undefined {
    return this.last?.hash;
  }

  /**
   * Several lines, in order, joined into writes of at most LINE_BUFFER_BYTES (4 KiB, as one long
   * line may be): each write is still whole lines under PIPE_BUF, so another writer's lines never
   * land inside one, and a system call is made per ~9 lines instead of per line.
   */
  writeAll(entries: readonly AuditEntry[]): void {
    if (this.closed) throw new Error(`audit log ${this.file} is closed`);
    if (entries.length === 0) return;
    this.append(entries.map(encodeAuditBody));
  }

  /** The lines of these bodies chained after the file's last line, written under the file's lock; synced after it. */
  private append(bodies: readonly string[]): void {
    const fd = this.open();
    withAuditLock(this.file, () => {
      const size = fs.fstatSync(fd).size;
      const { prev, cut } = this.last?.end === size ? { prev: this.last.hash, cut: false }
        : size === 0 && this.after !== undefined ? { prev: this.after, cut: false } : headOfFile(fd, size);
      let head = prev;
      const lines = bodies.map((body) => {
        const chained = chainLine(body, head);
        head = chained.hash;
        return chained.line;
      });
      if (cut) lines[0] = `\n${lines[0]}`;
      let end = size;
      for (const chunk of joinedLines(lines)) end += this.writeText(fd, chunk);
      this.last = { hash: head, end };
    });
    if (this.fsync) fs.fdatasyncSync(fd);
  }

  /** One `writeSync` of the text (looping only on a short write); the bytes written. */
  private writeText(fd: number, text: string): number {
    // Text that surely fits is encoded into the one buffer kept for it: no new Buffer per write.
    const line = text.length * 3 <= LINE_BUFFER_BYTES ? this.lineBuffer.subarray(0, this.lineBuffer.write(text, 0)) : Buffer.from(text);
    let offset = 0;
    while (offset < line.length) {
      const n = fs.writeSync(fd, line, offset, line.length - offset);
      if (n <= 0) throw new Error(`audit log ${this.file}: write made no progress`);
      offset += n;
    }
    return line.length;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined) fs.closeSync(fd);
  }

  private open(): number {
    if (this.fd !== undefined) return this.fd;
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    // Read too: the last line's hash is read under the lock before each write.
    this.fd = fs.openSync(this.file, 'a+');
    return this.fd;
  }
}

let lastTimeMs = Number.NaN;
let lastTime = '';

/** The time of an entry, ISO 8601: the same text for every line of one millisecond, made once. */
export function auditTime(): string {
  const now = Date.now();
  if (now !== lastTimeMs) {
    lastTime = new Date(now).toISOString();
    lastTimeMs = now;
  }
  return lastTime;
}

/** Keeps entries in memory (tests, and a session's own view of its log). */
export class MemoryAuditLog implements AuditSink {
  readonly entries: AuditEntry[] = [];
  private closed = false;

  write(entry: AuditEntry): void {
    if (this.closed) throw new Error('audit log is closed');
    // A copy: a caller reusing its object must not rewrite history.
    this.entries.push(structuredClone(entry));
  }

  close(): void {
    this.closed = true;
  }
}

/** One entry as its line without the chain's fields: JSON, newline-terminated (with them at most MAX_LINE_BYTES bytes). */
export function encodeAuditLine(entry: AuditEntry): Buffer {
  return Buffer.from(`${encodeAuditBody(entry)}\n`);
}

/** The entry's JSON text, cut to fit a line with the chain's fields (MAX_BODY_BYTES). */
function encodeAuditBody(entry: AuditEntry): string {
  let e: AuditEntry = entry;
  if (e.summary !== undefined && e.summary.length > SUMMARY_MAX) e = { ...e, summary: truncate(e.summary, SUMMARY_MAX) };
  const body = JSON.stringify(e);
  if (body.length <= MAX_BODY_BYTES / 3 || Buffer.byteLength(body) <= MAX_BODY_BYTES) return body;
  return JSON.stringify(shrink(e));
}

/** The buffer a line is encoded into: a line of up to a third of it in UTF-16 units always fits (3 bytes a unit at most). */
const LINE_BUFFER_BYTES = 3 * 1024 + 1024;

/**
 * Lines (each ending in a newline, each at most MAX_LINE_BYTES) joined in order into texts of at
 * most LINE_BUFFER_BYTES (4 KiB, PIPE_BUF): each one write, whole lines only.
 */
export function joinedLines(lines: readonly string[]): string[] {
  const out: string[] = [];
  let chunk = '';
  let chunkBytes = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line);
    if (chunkBytes > 0 && chunkBytes + bytes > LINE_BUFFER_BYTES) {
      out.push(chunk);
      chunk = '';
      chunkBytes = 0;
    }
    chunk += line;
    chunkBytes += bytes;
  }
  if (chunk !== '') out.push(chunk);
  return out;
}

/** Fields never cut: short by nature, and what readers match on. */
const UNCUT = new Set(['time', 'event', 'decision', 'answeredBy', 'answer', 'state']);
/** Cut first: prose, meant to be read, not matched. */
const CUT_FIRST = new Set(['reason', 'summary']);
/** Cut last: the ids recovery and tables match entries on. */
const CUT_LAST = new Set(['session', 'parentSession', 'turn', 'callback']);

/**
 * Cuts strings until the line fits: the reason and summary first, then whichever other string
 * is longest (tool, agent, hook, the rule's file and id, unknown fields), and the ids that
 * entries are matched on (session, turn, callback) only last. Each string keeps at least
 * FIELD_FLOOR characters; if the line is still too long after that (only possible with huge
 * non-string extra fields), it is written as it is.
 */
function shrink(entry: AuditEntry): AuditEntry {
  const e = { ...entry } as AuditEntry & Record<string, unknown>;
  if (entry.rule) e.rule = { ...entry.rule };
  type Slot = { get(): string; set(v: string): void };
  const phaseOf = (key: string): 1 | 2 | 3 => (CUT_FIRST.has(key) ? 1 : CUT_LAST.has(key) ? 3 : 2);
  const slots = (phase: 1 | 2 | 3): Slot[] => {
    const out: Slot[] = [];
    for (const key of Object.keys(e))
      if (!UNCUT.has(key) && phaseOf(key) === phase && typeof e[key] === 'string')
        out.push({ get: () => e[key] as string, set: (v) => (e[key] = v) });
    if (phase === 2 && e.rule) {
      const rule = e.rule as Record<string, unknown>;
      for (const key of ['file', 'id', 'layer'])
        if (typeof rule[key] === 'string') out.push({ get: () => rule[key] as string, set: (v) => (rule[key] = v) });
    }
    return out;
  };
  for (const phase of [1, 2, 3] as const) {
    for (;;) {
      const excess = Buffer.byteLength(JSON.stringify(e)) - MAX_BODY_BYTES;
      if (excess <= 0) return e;
      let longest: Slot | undefined;
      for (const slot of slots(phase))
        if (slot.get().length > FIELD_FLOOR && (!longest || slot.get().length > longest.get().length)) longest = slot;
      if (!longest) break;
      longest.set(cutToBytes(longest.get(), excess));
    }
  }
  return e;
}

/**
 * The longest cut of `value` (not below FIELD_FLOOR) whose JSON is at least `excess` bytes
 * shorter than the JSON of `value`, found by bisection over the cut length.
 */
function cutToBytes(value: string, excess: number): string {
  const jsonBytes = (s: string) => Buffer.byteLength(JSON.stringify(s));
  const target = jsonBytes(value) - excess;
  // Every character is at least one byte of JSON, so no fitting cut is longer than `target`.
  let lo = FIELD_FLOOR;
  let hi = Math.max(FIELD_FLOOR, Math.min(value.length - 1, target));
  const head = value.slice(0, hi + 1);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (jsonBytes(truncate(head, mid)) <= target) lo = mid;
    else hi = mid - 1;
  }
  return truncate(head, lo);
}

/** Cuts to at most `max` UTF-16 units, the last being '…', never splitting a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  let cut = max - 1;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return `${text.slice(0, cut)}…`;
}
