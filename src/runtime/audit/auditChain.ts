// The audit log's hash chain (docs/teams.md, "A tamper-evident audit"). Every line written ends in
// two fields, `prev` and `hash`:
//
//   {"time":…,"event":…,…,"prev":"sha256:<hex>","hash":"sha256:<hex>"}
//
// `hash` is SHA-256 of the line's exact UTF-8 bytes up to the `,"hash":` that ends it, with a `}`
// put back: the line as written without its hash field. Bytes, not a re-serialised object, so no
// reader depends on key order, number formatting or escapes. `prev` is the `hash` of the line
// before it in the file (blank lines aside); a file's first line names GENESIS. A line before it
// without a hash (written before the chain existed) is named by the SHA-256 of its bytes. A line
// cut off by a crash mid-write is never named: the next line chains past it.
import { createHash, hash } from 'node:crypto';
import * as fs from 'node:fs';

/** What a file's first line names as the line before it. */
export const GENESIS = `sha256:${'0'.repeat(64)}`;

const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** The end of every chained line: its hash field. */
const HASH_TAIL = /,"hash":"(sha256:[0-9a-f]{64})"\}\r?$/;
const HASH_TAIL_BYTES = ',"hash":"sha256:"}'.length + 64;

/** The bytes the chain fields add to a line (the line's budget for everything else is MAX_LINE_BYTES less this). */
export const CHAIN_BYTES = `,"prev":"${GENESIS}","hash":"${GENESIS}"`.length;

/** `body`: an entry's JSON object text. The line (newline-terminated) that chains it after `prev`, and its hash. */
export function chainLine(body: string, prev: string): { line: string; hash: string } {
  const open = body.length > 2 ? `${body.slice(0, -1)},` : '{';
  const hashed = `${open}"prev":"${prev}"}`;
  const digest = `sha256:${hash('sha256', hashed, 'hex')}`;
  return { line: `${hashed.slice(0, -1)},"hash":"${digest}"}\n`, hash: digest };
}

export interface ChainedLine {
  /** The hash the line claims. */
  hash: string;
  /** The hash of its bytes as written without its hash field: equal to `hash` unless the line was changed. */
  actual: string;
  /** The `prev` it names; undefined when it has none that is a digest. */
  prev: string | undefined;
}

/** A line (without its newline) read as a chained line; undefined for one with no hash field, or not JSON. */
export function readChained(line: Buffer): ChainedLine | undefined {
  const tail = line.subarray(Math.max(0, line.length - HASH_TAIL_BYTES - 1)).toString('latin1');
  const match = HASH_TAIL.exec(tail);
  if (!match) return undefined;
  const end = line.length - (tail.length - match.index);
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8'));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const prev = (value as { prev?: unknown }).prev;
  const actual = `sha256:${createHash('sha256').update(line.subarray(0, end)).update('}').digest('hex')}`;
  return { hash: match[1]!, actual, prev: typeof prev === 'string' && DIGEST.test(prev) ? prev : undefined };
}

/** What a later line names this whole line by: its hash field, or for a line without one the SHA-256 of its bytes. */
export function nameOf(line: Buffer): string {
  const tail = line.subarray(Math.max(0, line.length - HASH_TAIL_BYTES - 1)).toString('latin1');
  const match = HASH_TAIL.exec(tail);
  return match ? match[1]! : `sha256:${hash('sha256', line, 'hex')}`;
}

/** Lines of a file's bytes: each without its newline, with its 1-based number; `terminated` false for a last line without one. */
export function splitLines(bytes: Buffer, firstNumber = 1): Array<{ number: number; bytes: Buffer; terminated: boolean }> {
  const out: Array<{ number: number; bytes: Buffer; terminated: boolean }> = [];
  let start = 0;
  let number = firstNumber;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl;
    out.push({ number: number++, bytes: bytes.subarray(start, end), terminated: nl !== -1 });
    start = end + 1;
  }
  return out;
}

/** Whether a line is blank (spaces, tabs, a carriage return): skipped by readers and by the chain. */
export function isBlank(line: Buffer): boolean {
  for (const byte of line) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  return true;
}

/**
 * The end of a file: the name of its last line a new line must chain to (GENESIS for a file with
 * none), and whether the file ends in a cut-off line (so a new line needs a newline first). A last
 * line without its newline that is whole (its hash holds) is chained to; one that is not, skipped.
 * `tail`: the file's last bytes; `whole`: whether that is the whole file. Undefined when the tail
 * holds no line that settles it (a longer tail is needed).
 */
export function headOfTail(tail: Buffer, whole: boolean): { prev: string; cut: boolean } | undefined {
  const lines = splitLines(tail);
  // A tail that starts mid-file may start mid-line: its first piece is not a line.
  if (!whole) lines.shift();
  const cut = tail.length > 0 && tail[tail.length - 1] !== 0x0a;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (isBlank(line.bytes)) continue;
    if (!line.terminated) {
      const chained = readChained(line.bytes);
      if (chained === undefined || chained.actual !== chained.hash) continue;
    }
    return { prev: nameOf(line.bytes), cut };
  }
  return whole ? { prev: GENESIS, cut } : undefined;
}

/** The first window of a file's end read for its last line (lines are at most 4 KiB). */
const TAIL_BYTES = 8192;

/** `headOfTail` of a file open for reading, `size` bytes long, reading as little of its end as settles it. */
export function headOfFile(fd: number, size: number): { prev: string; cut: boolean } {
  for (let window = TAIL_BYTES; ; window *= 4) {
    const length = Math.min(size, window);
    const tail = Buffer.allocUnsafe(length);
    const n = fs.readSync(fd, tail, 0, length, size - length);
    const head = headOfTail(tail.subarray(0, n), length === size);
    if (head !== undefined) return head;
  }
}

/**
 * The chain's head: the hash of the last whole line of an audit file (GENESIS for a file with none
 * or none yet), for whoever keeps it where the file's writers cannot rewrite it (a syslog, an
 * OpenTelemetry exporter): a log cut short after that line, or rewritten, no longer ends in it.
 */
export function readAuditHead(file: string): string {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return GENESIS;
    throw error;
  }
  try {
    return headOfFile(fd, fs.fstatSync(fd).size).prev;
  } finally {
    fs.closeSync(fd);
  }
}
