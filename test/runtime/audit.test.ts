import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { canonicalJson } from '../../src/policy/rules/compile.js';
import { encodeAuditLine, FileAuditLog, joinedLines, MAX_LINE_BYTES, MemoryAuditLog, type AuditEntry } from '../../src/runtime/audit/audit.js';
import { inputDigest, summarizeInput } from '../../src/runtime/audit/auditSummary.js';
import { auditTable, interruptedSessions, parseAuditText, readAuditLog } from '../../src/runtime/audit/auditRead.js';
import { runWriter, writersAtOnce } from './auditWriters.js';

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-test-'));
});
after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

let fileCounter = 0;
function tempFile(name = 'audit.jsonl'): string {
  return path.join(tmp, `t${++fileCounter}`, name);
}

const T0 = '2025-01-02T03:04:05.000Z';

function entry(over: Partial<AuditEntry> & Pick<AuditEntry, 'event' | 'session'>): AuditEntry {
  return { time: T0, ...over };
}

/** A decision with every field that a decision can carry. */
const fullDecision: AuditEntry = {
  time: '2025-01-02T03:04:05.678Z',
  event: 'decision',
  session: 's-1',
  parentSession: 's-0',
  turn: 't-3',
  agent: 'reviewer',
  tool: 'builtin.shell',
  inputDigest: inputDigest({ command: 'npm test' }),
  summary: 'npm test',
  decision: 'ask',
  rule: { layer: 'workspace', id: 'ask-shell', index: 4, file: '.agentpolicy/policy.jsonc', line: 17 },
  lowered: true,
  reason: 'Shell commands need a look',
  hook: 'pre-tool',
  callback: 'cb-7',
  answeredBy: 'person',
  answer: 'allow-session',
  state: 'completed',
};

const everyShape: AuditEntry[] = [
  fullDecision,
  { time: T0, event: 'decision', session: 's-1', tool: 'builtin.read', decision: 'allow', rule: null, default: 'permissionMode' },
  { time: T0, event: 'decision', session: 's-1', tool: 'builtin.read', decision: 'deny', rule: { layer: 'managed', id: null, index: 0, file: '/etc/p.jsonc', line: 1 } },
  { time: T0, event: 'session-started', session: 's-2', parentSession: 's-1', agent: 'sub' },
  { time: T0, event: 'callback-opened', session: 's-2', turn: 't-1', callback: 'cb-1', summary: 'path: a.ts' },
  { time: T0, event: 'callback-settled', session: 's-2', callback: 'cb-1', answeredBy: 'timeout', answer: 'deny' },
  { time: T0, event: 'session-ended', session: 's-2', state: 'interrupted' },
];

describe('audit log', () => {
  describe('inputDigest', () => {
    it('is sha256 of the canonical JSON, stable across key order', () => {
      const a = { path: 'src/a.ts', options: { b: 1, a: [1, { y: 2, x: 1 }] } };
      const b = { options: { a: [1, { x: 1, y: 2 }], b: 1 }, path: 'src/a.ts' };
      assert.match(inputDigest(a), /^sha256:[0-9a-f]{64}$/);
      assert.equal(inputDigest(a), inputDigest(b));
      const expected = createHash('sha256').update(canonicalJson(a)).digest('hex');
      assert.equal(inputDigest(a), `sha256:${expected}`);
    });

    it('differs when a value, or the order of an array, differs', () => {
      assert.notEqual(inputDigest({ a: 1 }), inputDigest({ a: 2 }));
      assert.notEqual(inputDigest({ a: [1, 2] }), inputDigest({ a: [2, 1] }));
      assert.notEqual(inputDigest('1'), inputDigest(1));
    });
  });

  describe('summarizeInput', () => {
    it('shows a path as `path: …` and a command as it is', () => {
      assert.equal(summarizeInput({ path: 'src/a.ts' }), 'path: src/a.ts');
      assert.equal(summarizeInput({ path: 'src/a.ts', content: 'x'.repeat(10000) }), 'path: src/a.ts');
      assert.equal(summarizeInput({ command: 'npm test' }), 'npm test');
      assert.equal(summarizeInput({ command: ['git', 'status'] }), 'git status');
      assert.equal(summarizeInput({ file_path: '/tmp/x' }), 'file_path: /tmp/x');
      assert.equal(summarizeInput({ url: 'https://example.com' }), 'url: https://example.com');
      assert.equal(summarizeInput('just text'), 'just text');
    });

    it('falls back to compact JSON, cut with an ellipsis', () => {
      assert.equal(summarizeInput({ a: 1, b: [true, null], c: 'x' }), '{"a":1,"b":[true,null],"c":"x"}');
      assert.equal(summarizeInput(42), '42');
      assert.equal(summarizeInput(null), 'null');
      const long = summarizeInput({ items: Array.from({ length: 1000 }, (_, i) => i) });
      assert.equal(long.length, 160);
      assert.ok(long.startsWith('{"items":[0,1,2,'));
      assert.ok(long.endsWith('…'));
      assert.equal(summarizeInput({ text: 'y'.repeat(100) }, 20), '{"text":"yyyyyyyyyy…');
    });

    it('keeps to one line, never splits a surrogate pair, and survives cycles', () => {
      assert.equal(summarizeInput({ command: 'echo a\n\n  echo b\t' }), 'echo a echo b');
      const emoji = summarizeInput('a' + '😀'.repeat(100), 10);
      assert.ok(emoji.length <= 10);
      assert.ok(!/[\ud800-\udbff]…$/.test(emoji));
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = cyclic;
      assert.equal(summarizeInput(cyclic), '{"a":1,"self":"[Circular]"}');
    });
  });

  describe('FileAuditLog and readAuditLog', () => {
    it('round-trips every field of every kind of entry', () => {
      const file = tempFile();
      const log = new FileAuditLog(file);
      for (const e of everyShape) log.write(e);
      log.close();
      const read = readAuditLog(file);
      assert.deepEqual(read.problems, []);
      assert.deepEqual(read.entries, everyShape);
      const text = fs.readFileSync(file, 'utf8');
      assert.equal(text.split('\n').length, everyShape.length + 1);
      assert.ok(text.endsWith('\n'));
    });

    it('writes each line as encodeAuditLine makes it, short or long, whatever its characters (one kept buffer is reused)', () => {
      const file = tempFile();
      const log = new FileAuditLog(file);
      const texts = ['plain', 'é ü 中文 🚀 \ud800 lone', '🚀'.repeat(700), 'x'.repeat(1300), '中'.repeat(1400), 'short again'];
      const entries = texts.map((reason, i) => entry({ event: 'decision', session: 's1', reason, turn: `t${i}` }));
      for (const e of entries) log.write(e);
      log.close();
      // Each line is encodeAuditLine's with the chain's fields before its closing brace.
      const unchained = fs.readFileSync(file, 'utf8').replace(/,"prev":"sha256:[0-9a-f]{64}","hash":"sha256:[0-9a-f]{64}"\}\n/g, '}\n');
      assert.deepEqual(Buffer.from(unchained), Buffer.concat(entries.map(encodeAuditLine)));
    });

    it('opens lazily, creates parent directories, appends to what is there, and refuses writes after close', () => {
      const file = path.join(tempFile(), 'deeper', 'audit.jsonl');
      const log = new FileAuditLog(file);
      assert.equal(fs.existsSync(path.dirname(file)), false);
      log.write(everyShape[1]!);
      log.close();
      log.close();
      assert.throws(() => log.write(everyShape[1]!), /closed/);
      const again = new FileAuditLog(file);
      again.write(everyShape[2]!);
      again.close();
      assert.deepEqual(readAuditLog(file).entries, [everyShape[1], everyShape[2]]);
    });

    it('keeps each line under 4 KiB, cutting the summary and reason first and ids last', () => {
      const file = tempFile();
      const log = new FileAuditLog(file);
      const big = entry({
        event: 'decision',
        session: 's-big',
        callback: 'cb-big',
        summary: 's'.repeat(5000),
        reason: 'é'.repeat(5000),
        tool: 'mcp.server.tool',
      });
      log.write(big);
      log.write(entry({ event: 'decision', session: 'S'.repeat(1000), callback: 'c'.repeat(500), tool: 't'.repeat(9000) }));
      log.close();
      const lines = fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
      assert.equal(lines.length, 2);
      for (const line of lines) assert.ok(Buffer.byteLength(line) + 1 <= MAX_LINE_BYTES, `${Buffer.byteLength(line)} bytes`);
      const [first, second] = readAuditLog(file).entries;
      assert.equal(first!.summary!.length, 160);
      assert.ok(first!.summary!.endsWith('…'));
      assert.ok(first!.reason!.endsWith('…'));
      assert.ok(first!.reason!.length > 1000, 'the reason keeps what fits');
      assert.equal(first!.session, 's-big');
      assert.equal(first!.callback, 'cb-big');
      assert.equal(first!.tool, 'mcp.server.tool');
      assert.ok(second!.tool!.startsWith('ttt') && second!.tool!.endsWith('…'));
      assert.equal(second!.session, 'S'.repeat(1000), 'ids are cut last');
      assert.equal(second!.callback, 'c'.repeat(500));
    });

    it('reads everything before a half-written last line and reports that line once', () => {
      const file = tempFile();
      const log = new FileAuditLog(file);
      for (const e of everyShape) log.write(e);
      log.close();
      const whole = JSON.stringify(fullDecision);
      fs.appendFileSync(file, whole.slice(0, whole.length / 2));
      const read = readAuditLog(file);
      assert.deepEqual(read.entries, everyShape);
      assert.equal(read.problems.length, 1);
      assert.equal(read.problems[0]!.line, everyShape.length + 1);
      assert.match(read.problems[0]!.message, /half-written/);

      // A writer that comes later starts on a fresh line: the cut line stays the only problem.
      const later = new FileAuditLog(file);
      later.write(everyShape[1]!);
      later.close();
      const reread = readAuditLog(file);
      assert.deepEqual(reread.entries, [...everyShape, everyShape[1]]);
      assert.deepEqual(
        reread.problems.map((p) => p.line),
        [everyShape.length + 1],
      );
    });

    it('reports garbage and wrong types by line and goes on; keeps unknown fields', () => {
      const good = JSON.stringify(everyShape[1]);
      const text = [
        good,
        'not json at all',
        '',
        JSON.stringify({ time: T0, event: 'decision', session: 's', lowered: 'yes' }),
        JSON.stringify({ time: T0, event: 'exploded', session: 's' }),
        '[1,2]',
        JSON.stringify({ time: T0, event: 'decision', session: 's', rule: { layer: 'user', id: 3, index: 0, file: 'f', line: 1 } }),
        `${JSON.stringify({ ...everyShape[2], extra: { nested: true } })}\r`,
        good,
        '',
      ].join('\n');
      const read = parseAuditText(text);
      assert.deepEqual(read.entries, [everyShape[1], { ...everyShape[2], extra: { nested: true } }, everyShape[1]]);
      assert.deepEqual(
        read.problems.map((p) => p.line),
        [2, 4, 5, 6, 7],
      );
      assert.match(read.problems[0]!.message, /not JSON/);
      assert.match(read.problems[1]!.message, /lowered/);
      assert.match(read.problems[2]!.message, /event/);
      assert.match(read.problems[4]!.message, /rule\.id/);
    });

    it('reads a file that does not exist as empty', () => {
      assert.deepEqual(readAuditLog(path.join(tmp, 'nope', 'audit.jsonl')), { entries: [], problems: [] });
    });
  });

  describe('durability', function () {
    // Child processes start slowly on a busy machine (tsx compiles on the way in).
    this.timeout(120000);

    it('keeps every line written before the process is killed (SIGKILL, no close)', () => {
      const file = tempFile();
      const result = runWriter(tmp, [file, '300', 'crash', 'kill']);
      assert.equal(result.signal, 'SIGKILL', result.stderr);
      const read = readAuditLog(file);
      assert.deepEqual(read.problems, []);
      assert.equal(read.entries.length, 300);
      assert.deepEqual(
        read.entries.map((e) => e.turn),
        Array.from({ length: 300 }, (_, i) => String(i)),
      );
    });

    it('keeps every line with fsync on too', () => {
      const file = tempFile();
      const result = runWriter(tmp, [file, '50', 'synced', 'fsync']);
      assert.equal(result.signal, 'SIGKILL', result.stderr);
      const read = readAuditLog(file);
      assert.deepEqual(read.problems, []);
      assert.equal(read.entries.length, 50);
    });

    it('two processes appending at once produce 1000 whole lines', async () => {
      const text = await writersAtOnce(tmp, tempFile(), 'close', 2);
      assert.ok(text.endsWith('\n'));
      // A writer opening while the other's line is being copied in may see the file end mid-line
      // (Linux grows the size as it copies) and start with a newline: a blank line, which readers skip.
      assert.equal(text.split('\n').filter((l) => l !== '').length, 1000);
      const read = parseAuditText(text);
      assert.deepEqual(read.problems, []);
      for (const name of ['w1', 'w2']) {
        const mine = read.entries.filter((e) => e.session === name);
        assert.deepEqual(
          mine.map((e) => e.turn),
          Array.from({ length: 500 }, (_, i) => String(i)),
          `${name}'s lines, whole and in order`,
        );
        for (const e of mine) assert.ok(e.reason!.startsWith(`${name}:${e.turn} `));
      }
    });
  });

  describe('writing several lines at once (writeAll)', function () {
    this.timeout(120000);

    it('joins lines in order into writes of at most 4 KiB, whole lines only', () => {
      const lines = Array.from({ length: 200 }, (_, i) => `${'é'.repeat((i * 37) % 700)}${i}\n`);
      const chunks = joinedLines(lines);
      assert.equal(chunks.join(''), lines.join(''));
      for (const chunk of chunks) {
        assert.ok(Buffer.byteLength(chunk) <= 4096, `a write of ${Buffer.byteLength(chunk)} bytes`);
        assert.ok(chunk.endsWith('\n'));
      }
      // Each chunk is whole lines: its lines are a run of the input's.
      let at = 0;
      for (const chunk of chunks) {
        const mine = chunk.slice(0, -1).split('\n').map((l) => `${l}\n`);
        assert.deepEqual(mine, lines.slice(at, at + mine.length));
        at += mine.length;
      }
      assert.equal(at, lines.length);
      assert.ok(chunks.length < lines.length / 2, `${chunks.length} writes for ${lines.length} lines`);
    });

    it('writes what write would, entry by entry', () => {
      const [one, all] = [tempFile(), tempFile()];
      const a = new FileAuditLog(one);
      for (const e of everyShape) a.write(e);
      a.close();
      const b = new FileAuditLog(all);
      b.writeAll(everyShape);
      b.writeAll([]);
      b.close();
      assert.equal(fs.readFileSync(all, 'utf8'), fs.readFileSync(one, 'utf8'));
    });

    it('two processes appending batches at once produce 1000 whole lines, each writer\'s in order', async () => {
      const read = parseAuditText(await writersAtOnce(tmp, tempFile(), 'batches', 2));
      assert.deepEqual(read.problems, []);
      for (const name of ['w1', 'w2']) {
        assert.deepEqual(read.entries.filter((e) => e.session === name).map((e) => e.turn), Array.from({ length: 500 }, (_, i) => String(i)));
      }
    });
  });

  describe('MemoryAuditLog', () => {
    it('keeps copies of what it was given', () => {
      const log = new MemoryAuditLog();
      const e = entry({ event: 'decision', session: 's', rule: { layer: 'user', id: 'a', index: 0, file: 'f', line: 1 } });
      log.write(e);
      e.rule!.id = 'changed';
      e.session = 'changed';
      assert.equal(log.entries[0]!.session, 's');
      assert.equal(log.entries[0]!.rule!.id, 'a');
      log.close();
      assert.throws(() => log.write(e), /closed/);
    });
  });

  describe('auditTable', () => {
    const entries: AuditEntry[] = [
      entry({ event: 'session-started', session: 'root', agent: 'main' }),
      entry({
        event: 'decision',
        session: 'root',
        agent: 'main',
        tool: 'builtin.shell',
        decision: 'ask',
        rule: { layer: 'workspace', id: 'ask-shell', index: 2, file: 'policy.jsonc', line: 9 },
        callback: 'cb-1',
        summary: 'npm test',
      }),
      entry({ event: 'callback-opened', session: 'root', agent: 'main', tool: 'builtin.shell', callback: 'cb-1', summary: 'npm test' }),
      entry({ event: 'callback-settled', session: 'root', agent: 'main', callback: 'cb-1', answeredBy: 'person', answer: 'allow-once' }),
      entry({
        event: 'decision',
        session: 'root',
        agent: 'main',
        tool: 'builtin.read',
        decision: 'allow',
        rule: { layer: 'user', id: null, index: 3, file: '/home/u/p.jsonc', line: 4 },
        summary: 'path: src/a.ts',
      }),
      entry({ event: 'decision', session: 'root', agent: 'main', tool: 'builtin.write', decision: 'deny', rule: null, default: 'permissionMode', lowered: true }),
      entry({ event: 'session-ended', session: 'root', agent: 'main', state: 'completed' }),
    ];

    it('has a header, a rule of dashes, and one aligned row per entry', () => {
      const table = auditTable(entries);
      const lines = table.split('\n');
      assert.equal(lines.length, entries.length + 2);
      assert.match(lines[0]!, /^time +session +agent +tool +decision +rule +answered +summary$/);
      assert.match(lines[1]!, /^-+( +-+){7}$/);
      // Cells start under their headers: two spaces before each column (or the row ended), and the
      // session and decision cells, never empty here, right there.
      const starts = ['session', 'agent', 'tool', 'decision', 'rule', 'answered', 'summary'].map((h) => lines[0]!.indexOf(h));
      for (const line of lines.slice(2)) {
        for (const at of starts) if (line.length > at) assert.equal(line.slice(at - 2, at), '  ', line);
        for (const at of [starts[0]!, starts[3]!]) assert.notEqual(line[at], ' ', line);
      }

      const row = (needle: string) => lines.find((l) => l.includes(needle))!;
      assert.match(row('builtin.shell'), /root +main +builtin\.shell +ask +workspace:ask-shell@policy\.jsonc:9 +npm test$/);
      assert.match(row('builtin.read'), /allow +user:#3@\/home\/u\/p\.jsonc:4 +path: src\/a\.ts$/);
      assert.match(row('builtin.write'), /deny \(lowered\) +default \(permissionMode\)$/);
      assert.match(row('callback-settled'), /person\/allow-once/);
      assert.match(row('callback-opened'), /open cb-1 +npm test$/);
      assert.match(row('session-ended'), /session-ended: completed/);
    });

    it('shows only the events asked for', () => {
      const lines = auditTable(entries, { events: ['decision'] }).split('\n');
      assert.equal(lines.length, 2 + 3);
      assert.ok(lines.slice(2).every((l) => l.includes('builtin.')));
      assert.equal(auditTable([]).split('\n').length, 2);
    });
  });

  describe('interruptedSessions', () => {
    it('finds sessions started and never ended, with their unsettled callbacks', () => {
      const log: AuditEntry[] = [
        entry({ event: 'session-started', session: 'done', agent: 'main', time: '2025-01-01T00:00:00.000Z' }),
        entry({ event: 'callback-opened', session: 'done', callback: 'cb-x' }),
        entry({ event: 'session-started', session: 'root', agent: 'main', time: '2025-01-01T00:00:01.000Z' }),
        entry({ event: 'session-started', session: 'sub', agent: 'helper', parentSession: 'root', time: '2025-01-01T00:00:02.000Z' }),
        entry({ event: 'decision', session: 'root', decision: 'ask', callback: 'cb-1' }),
        entry({ event: 'callback-opened', session: 'root', callback: 'cb-1', tool: 'builtin.shell' }),
        entry({ event: 'callback-opened', session: 'root', callback: 'cb-2', tool: 'builtin.write' }),
        entry({ event: 'callback-settled', session: 'root', callback: 'cb-1', answeredBy: 'person', answer: 'deny' }),
        entry({ event: 'callback-opened', session: 'sub', callback: 'cb-1', tool: 'builtin.read' }),
        entry({ event: 'callback-opened', session: 'sub', callback: 'cb-3', tool: 'builtin.read' }),
        entry({ event: 'callback-settled', session: 'sub', callback: 'cb-3', answeredBy: 'handler', answer: 'allow-once' }),
        entry({ event: 'session-ended', session: 'done', state: 'completed' }),
      ];
      const found = interruptedSessions(log);
      assert.deepEqual(
        found.map((s) => [s.session, s.agent, s.parentSession, s.startedAt]),
        [
          ['root', 'main', undefined, '2025-01-01T00:00:01.000Z'],
          ['sub', 'helper', 'root', '2025-01-01T00:00:02.000Z'],
        ],
      );
      assert.deepEqual(
        found[0]!.openCallbacks.map((e) => [e.callback, e.tool]),
        [['cb-2', 'builtin.write']],
      );
      assert.deepEqual(
        found[1]!.openCallbacks.map((e) => [e.callback, e.tool]),
        [['cb-1', 'builtin.read']],
      );
    });

    it('returns nothing when every session ended, and tracks a session started again afresh', () => {
      const closed: AuditEntry[] = [
        entry({ event: 'session-started', session: 'a' }),
        entry({ event: 'callback-opened', session: 'a', callback: 'cb-1' }),
        entry({ event: 'session-ended', session: 'a', state: 'cancelled' }),
      ];
      assert.deepEqual(interruptedSessions(closed), []);
      const again = [...closed, entry({ event: 'session-started', session: 'a', time: '2025-02-01T00:00:00.000Z' })];
      assert.deepEqual(interruptedSessions(again), [{ session: 'a', startedAt: '2025-02-01T00:00:00.000Z', openCallbacks: [] }]);
    });

    it('counts a session with no start line only when it left a callback open (hooks of other agents log sessions that never start here)', () => {
      const log: AuditEntry[] = [
        entry({ event: 'decision', session: 'claude:a', decision: 'allow' }),
        entry({ event: 'decision', session: 'claude:b', decision: 'ask' }),
        entry({ event: 'callback-opened', session: 'claude:b', callback: 'cb-1', agent: 'Claude Code' }),
        entry({ event: 'callback-settled', session: 'claude:b', callback: 'cb-1', answer: 'closed', answeredBy: 'cancel' }),
        entry({ event: 'callback-opened', session: 'claude:c', callback: 'cb-2', agent: 'Claude Code' }),
      ];
      assert.deepEqual(interruptedSessions(log).map((s) => [s.session, s.agent, s.openCallbacks.map((e) => e.callback)]), [['claude:c', 'Claude Code', ['cb-2']]]);
    });

    it('works on what the reader recovered from a crashed window', () => {
      const file = tempFile();
      const log = new FileAuditLog(file);
      log.write(entry({ event: 'session-started', session: 'w', agent: 'main' }));
      log.write(entry({ event: 'callback-opened', session: 'w', callback: 'cb-9' }));
      log.close();
      fs.appendFileSync(file, '{"time":"2025-01-02T03:04:05.000Z","event":"callback-sett');
      const read = readAuditLog(file);
      assert.equal(read.problems.length, 1);
      const [w] = interruptedSessions(read.entries);
      assert.equal(w!.session, 'w');
      assert.deepEqual(
        w!.openCallbacks.map((e) => e.callback),
        ['cb-9'],
      );
    });
  });
});
