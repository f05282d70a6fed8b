// `agentpolicy explain --marks` and `agentpolicy test` with flow rules: the session's marks reach
// the `when` matchers, the text says which `when` failed and which marks the call adds, a mark that
// is not one is a usage error, and an inline test's call takes `marks`.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

let cwd = '';

async function run(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l), cwd });
  return { code, out, err };
}

const POLICY = {
  version: 1,
  rules: [
    { id: 'read-env', tools: ['builtin.read_file'], paths: ['**/.env'], decision: 'allow', marks: ['secret'] },
    { id: 'fetch-after-secret', tools: ['builtin.fetch'], when: { marked: ['secret'] }, decision: 'ask', reason: 'this session read a secret' },
    { id: 'fetch', tools: ['builtin.fetch'], decision: 'allow', marks: ['web'] },
  ],
  tests: [
    { call: { tool: 'builtin.fetch', input: { url: 'https://a.example/' } }, expect: 'allow', rule: 'fetch' },
    { call: { tool: 'builtin.fetch', input: { url: 'https://a.example/' }, marks: ['secret'] }, expect: 'ask', rule: 'fetch-after-secret' },
  ],
};

describe('agentpolicy with flow rules', () => {
  before(async () => {
    await initShellParser();
  });
  beforeEach(() => {
    cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'explain-marks-')));
    fs.writeFileSync(path.join(cwd, '.agentpolicy.jsonc'), JSON.stringify(POLICY, null, 2));
  });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('explain without marks: a fresh session; the text names the when that failed and the marks the call adds', async () => {
    const r = await run(['explain', '--tool', 'builtin.fetch', '--input', '{"url":"https://a.example/"}']);
    assert.equal(r.code, 0);
    assert.match(r.out[0]!, /^allow by workspace rule 3 "fetch"/);
    assert.ok(r.out.includes('session marks: none'), r.out.join('\n'));
    assert.ok(r.out.includes('marks if it runs: web'), r.out.join('\n'));
    assert.ok(r.out.some((l) => /rule 2 "fetch-after-secret" .* ask: when did not match \(the session lacks the mark "secret"\)/.test(l)), r.out.join('\n'));
  });

  it('explain --marks secret: the when rule decides, its reason says why; --json lists the session marks', async () => {
    const r = await run(['explain', '--tool', 'builtin.fetch', '--input', '{"url":"https://a.example/"}', '--marks', 'secret, other']);
    assert.match(r.out[0]!, /^ask by workspace rule 2 "fetch-after-secret"/);
    assert.ok(r.out.includes('reason: this session read a secret (because this session carries the mark "secret")'), r.out.join('\n'));
    assert.ok(r.out.includes('session marks: secret, other'), r.out.join('\n'));
    const json = await run(['explain', '--tool', 'builtin.read_file', '--input', '{"path":".env"}', '--marks', 'web', '--json']);
    const body = JSON.parse(json.out.join('\n')) as { sessionMarks: string[]; marks: string[] };
    assert.deepEqual(body.sessionMarks, ['web']);
    assert.deepEqual(body.marks, ['secret']);
  });

  it('a mark that is not a mark is a usage error', async () => {
    const r = await run(['explain', '--tool', 'builtin.fetch', '--marks', 'a b']);
    assert.equal(r.code, 2);
    assert.match(r.err.join('\n'), /--marks: "a b" is not a mark/);
  });

  it('test runs inline tests whose calls carry marks; check reports nothing', async () => {
    assert.equal((await run(['test'])).code, 0);
    const check = await run(['check']);
    assert.equal(check.code, 0, check.out.join('\n'));
  });

  it('audit --marks SESSION rebuilds the marks of a session\'s tree from the log', async () => {
    const lines = [
      { time: 't', event: 'session-started', session: 'root' },
      { time: 't', event: 'session-started', session: 'sub', parentSession: 'root' },
      { time: 't', event: 'decision', session: 'sub', tool: 'builtin.read_file', decision: 'allow', marks: ['secret'] },
      { time: 't', event: 'callback-settled', session: 'root', callback: 'cb', answer: 'allow-once', marks: ['web'] },
      { time: 't', event: 'decision', session: 'other', tool: 'builtin.fetch', decision: 'allow', marks: ['x'] },
    ];
    fs.writeFileSync(path.join(cwd, 'audit.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    assert.deepEqual((await run(['audit', 'audit.jsonl', '--marks', 'root'])).out, ['secret, web']);
    assert.deepEqual((await run(['audit', 'audit.jsonl', '--marks', 'sub', '--json'])).out, ['["secret","web"]']);
    const table = await run(['audit', 'audit.jsonl']);
    assert.ok(table.out.some((l) => /allow \+marks secret/.test(l)), table.out.join('\n'));
  });
});
