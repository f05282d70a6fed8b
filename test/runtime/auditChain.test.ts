// The audit log's hash chain (auditChain.ts, auditLock.ts, auditVerify.ts): a line changed,
// removed, reordered or inserted is named by its number; a torn last line (a crash mid-write) is
// told apart from tampering; real processes writing at once, or killed, leave a chain that holds.
import * as assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileAuditLog, MAX_LINE_BYTES, type AuditEntry } from '../../src/runtime/audit/audit.js';
import { chainLine, GENESIS, readAuditHead } from '../../src/runtime/audit/auditChain.js';
import { parseAuditText } from '../../src/runtime/audit/auditRead.js';
import { verifyAuditBytes, verifyAuditFiles, type VerifyResult } from '../../src/runtime/audit/auditVerify.js';
import { runWriter, startWriter, waitFor, writersAtOnce } from './auditWriters.js';

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-chain-'));
});
after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

let counter = 0;
const tempFile = (): string => path.join(tmp, `t${++counter}`, 'audit.jsonl');

function entry(i: number): AuditEntry {
  return { time: '2026-01-02T03:04:05.000Z', event: 'decision', session: 's1', turn: String(i), tool: 'builtin.run_command', summary: `echo ${i}`, decision: 'allow', rule: null, default: 'builtin' };
}

/** A log of `n` lines (turns 0…n-1) written through FileAuditLog; its lines, each with its newline. */
function writtenLog(n: number): { file: string; lines: string[]; head: string } {
  const file = tempFile();
  const log = new FileAuditLog(file);
  for (let i = 0; i < n; i++) log.write(entry(i));
  const head = log.head!;
  log.close();
  return { file, lines: fs.readFileSync(file, 'utf8').split(/(?<=\n)/), head };
}

function verify(text: string, options: { head?: string } = {}): VerifyResult {
  return verifyAuditBytes(Buffer.from(text), 'audit.jsonl', options);
}

function assertBroken(result: VerifyResult, line: number, kind: string): void {
  assert.ok(result.broken, `a break at line ${line} (${kind}) was expected; it verified`);
  assert.deepEqual({ line: result.broken.line, kind: result.broken.kind }, { line, kind }, result.broken.message);
}

describe('the audit hash chain', () => {
  describe('lines as written', () => {
    it('end in prev and hash: the first names GENESIS, each the one before, and the hash is of the bytes without it', () => {
      const { lines, head, file } = writtenLog(3);
      const parsed = lines.map((l) => JSON.parse(l) as { prev: string; hash: string });
      assert.equal(parsed[0]!.prev, GENESIS);
      assert.equal(parsed[1]!.prev, parsed[0]!.hash);
      assert.equal(parsed[2]!.prev, parsed[1]!.hash);
      for (const [i, line] of lines.entries()) {
        const hashed = line.replace(/,"hash":"sha256:[0-9a-f]{64}"\}\n$/, '}');
        assert.equal(parsed[i]!.hash, `sha256:${hash('sha256', hashed, 'hex')}`);
      }
      assert.equal(head, parsed[2]!.hash);
      assert.equal(readAuditHead(file), head);
      assert.equal(readAuditHead(path.join(tmp, 'none.jsonl')), GENESIS);
      // The reader gives back the entries as they were written, without the chain's fields.
      assert.deepEqual(parseAuditText(lines.join('')).entries, [entry(0), entry(1), entry(2)]);
    });

    it('a chained line stays within MAX_LINE_BYTES', () => {
      const file = tempFile();
      const log = new FileAuditLog(file);
      log.write({ ...entry(0), reason: 'é'.repeat(5000), session: 'S'.repeat(3000) });
      log.close();
      const line = fs.readFileSync(file);
      assert.ok(line.length <= MAX_LINE_BYTES, `${line.length} bytes`);
      assert.equal(verify(line.toString()).broken, undefined);
    });

    it('several writers of one file in one process make one chain; a new writer chains after what is there', () => {
      const file = tempFile();
      const a = new FileAuditLog(file);
      const b = new FileAuditLog(file);
      a.write(entry(0));
      b.writeAll([entry(1), entry(2)]);
      a.write(entry(3));
      a.close();
      b.close();
      const c = new FileAuditLog(file);
      c.write(entry(4));
      c.close();
      const result = verify(fs.readFileSync(file, 'utf8'));
      assert.equal(result.broken, undefined, result.broken?.message);
      assert.equal(result.lines, 5);
      assert.equal(result.head, c.head);
    });
  });

  describe('verify names the first line tampered with', () => {
    it('passes an intact log and gives its head', () => {
      const { lines, head } = writtenLog(10);
      const result = verify(lines.join(''));
      assert.deepEqual(result, { notes: [], lines: 10, head });
    });

    it('a line edited', () => {
      const { lines } = writtenLog(10);
      lines[4] = lines[4]!.replace('"decision":"allow"', '"decision":"deny"');
      assertBroken(verify(lines.join('')), 5, 'changed');
    });

    it('a line removed', () => {
      const { lines } = writtenLog(10);
      lines.splice(4, 1);
      assertBroken(verify(lines.join('')), 5, 'removed');
    });

    it('the first line removed', () => {
      const { lines } = writtenLog(10);
      lines.splice(0, 1);
      assertBroken(verify(lines.join('')), 1, 'removed');
    });

    it('two lines swapped', () => {
      const { lines } = writtenLog(10);
      [lines[3], lines[4]] = [lines[4]!, lines[3]!];
      assertBroken(verify(lines.join('')), 4, 'reordered');
    });

    it('a line moved further down', () => {
      const { lines } = writtenLog(10);
      const [moved] = lines.splice(2, 1);
      lines.splice(7, 0, moved!);
      assertBroken(verify(lines.join('')), 3, 'reordered');
    });

    it('a forged line inserted, chained properly after the line before it', () => {
      const { lines } = writtenLog(10);
      const prev = (JSON.parse(lines[3]!) as { hash: string }).hash;
      lines.splice(4, 0, chainLine(JSON.stringify({ ...entry(99), summary: 'rm -rf /' }), prev).line);
      assertBroken(verify(lines.join('')), 5, 'inserted');
    });

    it('a forged line inserted with a made-up hash, or a copy of an earlier line', () => {
      const { lines } = writtenLog(10);
      const forged = [...lines];
      forged.splice(4, 0, lines[2]!.replace('echo 2', 'echo 9'));
      assertBroken(verify(forged.join('')), 5, 'inserted');
      const copied = [...lines];
      copied.splice(6, 0, lines[2]!);
      assertBroken(verify(copied.join('')), 7, 'inserted');
      const plain = [...lines];
      plain.splice(4, 0, `${JSON.stringify(entry(99))}\n`);
      assertBroken(verify(plain.join('')), 5, 'inserted');
    });

    it('lines removed from the end: caught against a head kept elsewhere', () => {
      const { lines, head } = writtenLog(10);
      const cut = lines.slice(0, 8).join('');
      assert.equal(verify(cut).broken, undefined, 'without the head, a log cut at a line boundary looks whole');
      assertBroken(verify(cut, { head }), 8, 'head');
      // A head kept earlier is still in a log that grew since.
      assert.equal(verify(lines.join(''), { head: (JSON.parse(lines[6]!) as { hash: string }).hash }).broken, undefined);
    });
  });

  describe('crashes are not tampering', () => {
    it('a torn last line is reported, and the lines before it verify', () => {
      const { lines } = writtenLog(10);
      const torn = lines.slice(0, 9).join('') + lines[9]!.slice(0, 57);
      const result = verify(torn);
      assert.equal(result.broken, undefined, result.broken?.message);
      assert.equal(result.lines, 9);
      assert.equal(result.notes.length, 1);
      assert.match(result.notes[0]!.message, /last line is cut off \(a crash mid-write\)/);
      assert.equal(result.notes[0]!.line, 10);
    });

    it('a writer after the crash chains past the torn line', () => {
      const { file, lines } = writtenLog(10);
      fs.truncateSync(file, lines.slice(0, 9).join('').length + 40);
      const log = new FileAuditLog(file);
      log.write(entry(10));
      log.close();
      const result = verify(fs.readFileSync(file, 'utf8'));
      assert.equal(result.broken, undefined, result.broken?.message);
      assert.equal(result.lines, 10);
      assert.deepEqual(result.notes.map((n) => n.line), [10]);
      assert.match(result.notes[0]!.message, /crash mid-write; the next line chains past it/);
    });

    it('lines from before the chain are noted, and the chain starts after them', () => {
      const file = tempFile();
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${JSON.stringify(entry(0))}\n${JSON.stringify(entry(1))}\n`);
      const log = new FileAuditLog(file);
      log.write(entry(2));
      log.close();
      const text = fs.readFileSync(file, 'utf8');
      const result = verify(text);
      assert.equal(result.broken, undefined, result.broken?.message);
      assert.match(result.notes[0]!.message, /lines 1–2 carry no hash/);
      // The chain covers the last of them: changing it breaks the chain at the first chained line.
      assertBroken(verify(text.replace('"turn":"1"', '"turn":"7"')), 3, 'removed');
    });

    it('a log continued in a new file names the old file\'s head; verify checks the link', () => {
      const { file: old, head } = writtenLog(3);
      const next = tempFile();
      const log = new FileAuditLog(next, { after: head });
      log.write(entry(3));
      log.close();
      const results = verifyAuditFiles([old, next]);
      assert.ok(results.every((r) => r.broken === undefined));
      const other = writtenLog(2).file;
      const mismatched = verifyAuditFiles([other, next]);
      assert.equal(mismatched[1]!.broken?.line, 1);
    });
  });

  describe('real processes', function () {
    this.timeout(120000);

    it('killed with SIGKILL after writing: verify passes', () => {
      const file = tempFile();
      const result = runWriter(tmp, [file, '200', 'crash', 'kill']);
      assert.equal(result.signal, 'SIGKILL', result.stderr);
      const verified = verify(fs.readFileSync(file, 'utf8'));
      assert.deepEqual(verified, { notes: [], lines: 200, head: verified.head });
    });

    it('killed with SIGKILL at random moments while writing: verify passes, reporting at most a torn last line', async () => {
      const file = tempFile();
      for (let round = 0; round < 3; round++) {
        const { child, done } = startWriter(tmp, [file, '100000', `k${round}`, round === 1 ? 'batches' : 'close']);
        await waitFor(() => fs.existsSync(file) && fs.statSync(file).size > 200000 * (round + 1), 90000);
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 50)));
        child.kill('SIGKILL');
        assert.equal((await done).signal, 'SIGKILL');
      }
      const result = verify(fs.readFileSync(file, 'utf8'));
      assert.equal(result.broken, undefined, result.broken?.message);
      assert.ok(result.lines > 100);
      for (const note of result.notes) assert.match(note.message, /crash mid-write/);
    });

    it('a writer killed holding the lock: the next writer breaks the stale lock and the chain holds', () => {
      const file = tempFile();
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const died = runWriter(tmp, [file, '0', 'dead', 'die-locked']);
      assert.equal(died.signal, 'SIGKILL', died.stderr);
      assert.ok(fs.lstatSync(`${file}.lock`, { throwIfNoEntry: false }), 'the lock is left behind');
      const started = Date.now();
      const log = new FileAuditLog(file);
      log.write(entry(0));
      log.close();
      assert.ok(Date.now() - started < 2000, `broken in ${Date.now() - started} ms (the holder is dead)`);
      assert.equal(fs.lstatSync(`${file}.lock`, { throwIfNoEntry: false }), undefined);
      assert.equal(verify(fs.readFileSync(file, 'utf8')).lines, 1);
    });

    it('three processes writing at once, line by line and in batches: one chain, every writer\'s lines in order', async () => {
      const file = tempFile();
      const text = await writersAtOnce(tmp, file, 'mixed', 3, 300);
      const result = verify(text);
      assert.equal(result.broken, undefined, result.broken?.message);
      assert.deepEqual(result.notes, []);
      assert.equal(result.lines, 900);
      const read = parseAuditText(text);
      for (const name of ['w1', 'w2', 'w3'])
        assert.deepEqual(read.entries.filter((e) => e.session === name).map((e) => e.turn), Array.from({ length: 300 }, (_, i) => String(i)));
      // Interleaved, not one after another: the lock is taken per write.
      const sessions = read.entries.map((e) => e.session);
      assert.ok(sessions.some((s, i) => i > 0 && s !== sessions[i - 1] && sessions.indexOf(s) < i - 1), 'the writers took turns');
    });
  });
});
