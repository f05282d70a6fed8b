// Bugs found by review and property tests, pinned.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shellParser.js';

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
});
