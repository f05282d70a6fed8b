// Bugs found by review and property tests, pinned.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

const decide = (rules: unknown[], call: { id: string; input: unknown }, defaultDecision = 'allow') =>
  new Policy({ workspace: loadPolicyText(JSON.stringify({ version: 1, default: defaultDecision, rules }), 'p.jsonc') })
    .decide({ tool: { id: call.id }, input: call.input, agent: 'main' }, { workspaceFolder: os.tmpdir(), followSymlinks: false });

describe('regressions', () => {
  before(() => initShellParser());

  it('a one-character class means its character: [e] and [.] match e and .', () => {
    const rules = [{ tools: ['builtin.read_fil[e]'], paths: ['**/[.]env'], decision: 'deny' }];
    assert.equal(decide(rules, { id: 'builtin.read_file', input: { path: '.env' } }).decision, 'deny');
    assert.equal(decide(rules, { id: 'builtin.read_file', input: { path: 'a/.env' } }).decision, 'deny');
  });

  it('an input nested too deeply to compare never matches an allow and is taken by a deny', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const allow = [{ tools: ['client.t'], input: { '/v': { equals: [1] } }, decision: 'allow' }];
    assert.equal(decide(allow, { id: 'client.t', input: { v: deep } }, 'ask').decision, 'ask');
    const deny = [{ tools: ['client.t'], input: { '/v': { equals: [1] } }, decision: 'deny' }];
    assert.equal(decide(deny, { id: 'client.t', input: { v: deep } }).decision, 'deny');
  });

  // Found by random lines of odd tokens run by bash (shellVsBash.test.ts holds the readings to
  // bash): each let a deny on arguments miss what bash runs.
  describe('a deny on arguments sees the words bash runs', () => {
    const rules = [
      { tools: ['builtin.run_command'], commands: ['git push *--force*', 'git reset --hard*', 'rm *'], decision: 'deny' },
      { tools: ['builtin.run_command'], commands: ['*'], decision: 'allow' },
    ];
    const run = (command: string) => decide(rules, { id: 'builtin.run_command', input: { command } }, 'ask').decision;
    for (const command of [
      // tree-sitter hangs the words after a redirect of a pipeline, list or negation, or after a
      // here-document's delimiter, on the redirect
      'true | git push 2>/dev/null --force',
      'true && git push >&2 --force',
      '! git push 2>/dev/null --force',
      'git push <<EOF --force\nx\nEOF\n',
      // `<&-`/`>&-` take no file, and a descriptor before < or > is not a word
      'git push 2>&- --force',
      'git reset 0<&- --hard',
      'git reset {fd}>/dev/null --hard',
      // tree-sitter reads the keyword time as a program, and `!` after it as the program it runs
      'time ! rm -rf /tmp/x',
      'time -p ! ! rm -rf /tmp/x',
    ]) {
      it(`denies ${command}`, () => assert.equal(run(command), 'deny'));
    }
    for (const command of ['- a=b 2>/dev/null', 'FOO=1 - a=b >/dev/null', 'x } } y 2>/dev/null', 'ls [ ] >/dev/null', '\\  rm x']) {
      it(`never allows ${command}, which the parser misreads`, () => assert.notEqual(run(command), 'allow'));
    }
    it('still allows what it reads whole', () => {
      assert.equal(run('true | git push 2>/dev/null origin main'), 'allow');
      assert.equal(run('time git status'), 'allow');
    });
  });
});
