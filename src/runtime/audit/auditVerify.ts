// `agentpolicy audit verify`: walks an audit file's hash chain (auditChain.ts) and names the first
// line that was changed, removed, reordered or inserted. A last line cut off by a crash mid-write
// is told apart from tampering: it is reported, and the lines before it still verify. So is a line
// cut off mid-file that the next writer chained past (a crash, then more lines).
import * as fs from 'node:fs';
import { GENESIS, isBlank, readChained, nameOf, splitLines, type ChainedLine } from './auditChain.js';

export type ChainBreak = 'changed' | 'removed' | 'reordered' | 'inserted' | 'unchained' | 'head';

export interface VerifyFinding {
  file: string;
  /** 1-based line number in the file. */
  line: number;
  message: string;
}

export interface VerifyResult {
  /** The first line that breaks the chain (verifying stops there); undefined when the chain holds. */
  broken?: VerifyFinding & { kind: ChainBreak };
  /** What is not tampering: a torn last line, a torn line the chain passes, lines from before the chain. */
  notes: VerifyFinding[];
  /** Chained lines verified. */
  lines: number;
  /** The hash of the last whole line verified (the chain's head), GENESIS for none. */
  head: string;
}

interface Line {
  number: number;
  bytes: Buffer;
  terminated: boolean;
  chained: ChainedLine | undefined;
}

/**
 * Verifies one file's lines. `after`: the head of the file this one continues (a first line may
 * name it instead of GENESIS). `head`: a head kept elsewhere (a syslog), which must be one of the
 * file's lines: a log cut short before it, or rewritten, fails.
 */
export function verifyAuditBytes(bytes: Buffer, file: string, options: { after?: string; head?: string } = {}): VerifyResult {
  const lines: Line[] = splitLines(bytes)
    .filter((l) => !isBlank(l.bytes))
    .map((l) => ({ ...l, chained: readChained(l.bytes) }));
  const notes: VerifyFinding[] = [];
  const at = (line: Line, message: string): VerifyFinding => ({ file, line: line.number, message });
  const broken = (line: Line, kind: ChainBreak, message: string): VerifyResult => ({ broken: { ...at(line, message), kind }, notes, lines: count, head: expect });

  // Lines from before the chain existed: not covered, but the first chained line names the last of them.
  const first = lines.findIndex((l) => l.chained !== undefined);
  const legacy = first === -1 ? lines.length : first;
  if (legacy > 0) notes.push({ file, line: lines[0]!.number, message: `lines ${lines[0]!.number}–${lines[legacy - 1]!.number} carry no hash (written before the chain): not verified` });
  const starts = legacy > 0 ? [nameOf(lines[legacy - 1]!.bytes)] : [GENESIS, ...(options.after !== undefined ? [options.after] : [])];
  let expect = starts[0]!;
  let before: string | undefined;
  let count = 0;

  const where = new Map<string, number[]>();
  for (const l of lines) if (l.chained) where.set(l.chained.hash, [...(where.get(l.chained.hash) ?? []), l.number]);
  const seen = new Set<string>();

  for (let i = legacy; i < lines.length; i++) {
    const line = lines[i]!;
    const c = line.chained;
    const next = lines[i + 1]?.chained;
    if (count === 0 && c?.prev !== undefined && starts.includes(c.prev)) expect = c.prev;
    const whole = c !== undefined && c.actual === c.hash && c.prev === expect;
    if (!line.terminated && !whole) {
      notes.push(at(line, `the last line is cut off (a crash mid-write): not verified; the ${count} line(s) before it verify`));
      break;
    }
    if (c === undefined) {
      if (next?.prev === expect && !isJson(line.bytes)) {
        notes.push(at(line, 'cut off by a crash mid-write; the next line chains past it'));
        continue;
      }
      if (next?.prev === expect) return broken(line, 'inserted', 'inserted: it carries no hash, and the line after it follows the line before it');
      return broken(line, 'unchained', 'carries no hash: written without the chain (by an older writer) or forged');
    }
    if (!whole) {
      const later = c.prev === undefined ? undefined : where.get(c.prev)?.find((n) => n > line.number);
      const copies = where.get(c.hash)!.filter((n) => n !== line.number);
      if (c.actual !== c.hash) {
        if (next?.prev === expect) return broken(line, 'inserted', 'inserted: it does not match its hash, and the line after it follows the line before it');
        return broken(line, 'changed', `changed: its text does not match its hash ${c.hash}`);
      }
      if (copies.length > 0 && seen.has(c.hash)) return broken(line, 'inserted', `inserted: a copy of line ${copies[0]}`);
      if (later !== undefined) return broken(line, 'reordered', `out of order: it names line ${later} as the line before it`);
      if (next?.prev === expect) return broken(line, 'inserted', 'inserted: the line after it follows the line before it');
      if (before !== undefined && c.prev === before) {
        const previous = lines[i - 1]!;
        return broken(previous, 'inserted', `inserted: line ${line.number} follows the line before it`);
      }
      return broken(line, 'removed', `a line before it was removed (or the line before it changed and rehashed): it names ${c.prev ?? 'no line'} as the line before it`);
    }
    seen.add(c.hash);
    before = expect;
    expect = c.hash;
    count++;
  }
  if (options.head !== undefined && options.head !== expect && !seen.has(options.head)) {
    const last = lines[lines.length - 1];
    return { broken: { file, line: last?.number ?? 0, kind: 'head', message: `the head ${options.head} is not in the file: lines were removed from its end, or it was rewritten` }, notes, lines: count, head: expect };
  }
  return { notes, lines: count, head: expect };
}

/** Verifies files in order: each may continue the one before it (its first line naming that file's head). */
export function verifyAuditFiles(files: readonly string[], options: { head?: string } = {}): VerifyResult[] {
  const results: VerifyResult[] = [];
  let after: string | undefined;
  for (const [i, file] of files.entries()) {
    const last = i === files.length - 1;
    const result = verifyAuditBytes(fs.readFileSync(file), file, { ...(after !== undefined ? { after } : {}), ...(last && options.head !== undefined ? { head: options.head } : {}) });
    results.push(result);
    if (result.broken) break;
    after = result.head;
  }
  return results;
}

function isJson(line: Buffer): boolean {
  try {
    JSON.parse(line.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}
