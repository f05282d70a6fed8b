// Result review (issue 14): `"review": "result"` on an allow or ask rule holds the tool's result
// for a person. The schema (only "result"; never on a deny), the decision's `review` (any part's
// deciding rule: the safe reading), explain's line, inline tests' `review`, and the CLI.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { main } from '../../src/cli/agentpolicy.js';
import { runInlineTests, testDiagnostics } from '../../src/policy/checking/inlineTests.js';
import { describeChange, heldDecision, looseningDiff } from '../../src/policy/editing/loosening.js';
import { loadPolicyText, Policy, type DecideOptions } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { bareCall, validLayer } from './validLayer.js';

const FOLDER = os.tmpdir();
const OPTIONS: DecideOptions = { workspaceFolder: FOLDER, followSymlinks: false };

const layer = validLayer;
const call = bareCall;

before(async () => {
  await initShellParser();
});

describe('result review: schema and diagnostics', () => {
  it('takes review "result" on allow and ask rules', () => {
    layer([
      { tools: ['builtin.fetch'], decision: 'allow', review: 'result' },
      { tools: ['mcp.*'], decision: 'ask', review: 'result', timeout: 60 },
    ]);
  });

  it('refuses review on a deny rule (a denied call has no result), at the field', () => {
    const text = '{\n  "version": 1,\n  "rules": [\n    { "tools": ["x"], "decision": "deny", "review": "result" }\n  ]\n}\n';
    const l = loadPolicyText(text, 'p.jsonc');
    assert.equal(l.valid, false);
    const d = l.diagnostics.find((x) => x.code === 'schema')!;
    assert.match(d.message, /"review" applies only to rules whose decision is "allow" or "ask"/);
    assert.equal(text.slice(d.offset).startsWith('"result"') || text.slice(d.offset).startsWith('"review"'), true);
  });

  it('refuses any other value (a strict enum: "results", true, "call")', () => {
    for (const value of ['results', true, 'call', 'none']) {
      const l = loadPolicyText(JSON.stringify({ version: 1, rules: [{ tools: ['x'], decision: 'allow', review: value }] }), 'p.jsonc');
      assert.equal(l.valid, false, String(value));
      assert.ok(l.diagnostics.some((d) => d.code === 'schema'), String(value));
    }
  });
});

describe('result review: the decision', () => {
  it('an allow or ask by a review rule carries review "result"; other rules and the default do not', () => {
    const policy = new Policy({ workspace: layer([
      { id: 'fetch', tools: ['builtin.fetch'], decision: 'allow', review: 'result' },
      { id: 'mcp', tools: ['mcp.*'], decision: 'ask', review: 'result' },
      { id: 'read', tools: ['builtin.read_file'], decision: 'allow' },
    ]) });
    assert.equal(policy.decide(call('builtin.fetch', { url: 'https://a.example/' }), OPTIONS).review, 'result');
    const mcp = policy.decide(call('mcp.web.get'), OPTIONS);
    assert.equal(mcp.decision, 'ask');
    assert.equal(mcp.review, 'result');
    assert.equal(policy.decide(call('builtin.read_file', { path: 'a' }), OPTIONS).review, undefined);
    assert.equal(policy.decide(call('client.other'), OPTIONS).review, undefined);
  });

  it('a lowered allow (untrusted workspace) still reviews the result', () => {
    const policy = new Policy({ workspace: layer([{ tools: ['builtin.fetch'], decision: 'allow', review: 'result' }]) });
    const d = policy.decide(call('builtin.fetch', { url: 'https://a.example/' }), { ...OPTIONS, trusted: false });
    assert.equal(d.decision, 'ask');
    assert.equal(d.review, 'result');
  });

  it('a call of several parts is reviewed when any part was decided by a review rule, and never when it is denied', () => {
    const policy = new Policy({ workspace: layer([
      { tools: ['builtin.run_command'], commands: ['rm *'], decision: 'deny' },
      { tools: ['builtin.run_command'], commands: ['curl *'], decision: 'allow', review: 'result' },
      { tools: ['builtin.run_command'], commands: ['jq *'], decision: 'allow' },
    ]) });
    const mixed = policy.decide(call('builtin.run_command', { command: 'curl https://a.example/ | jq .' }), { ...OPTIONS, sandbox: true });
    assert.equal(mixed.decision, 'allow');
    assert.equal(mixed.review, 'result');
    const plain = policy.decide(call('builtin.run_command', { command: 'jq . x.json' }), { ...OPTIONS, sandbox: true });
    assert.equal(plain.review, undefined);
    const denied = policy.decide(call('builtin.run_command', { command: 'curl https://a.example/ && rm -rf x' }), { ...OPTIONS, sandbox: true });
    assert.equal(denied.decision, 'deny');
    assert.equal(denied.review, undefined);
  });

  it('property: a call is reviewed exactly when it is not denied and some part was decided by a review rule', () => {
    const words = ['curl', 'jq', 'ls', 'rm'];
    fc.assert(fc.property(
      fc.array(fc.record({ word: fc.constantFrom(...words), decision: fc.constantFrom('allow', 'ask', 'deny'), review: fc.boolean() }), { minLength: 1, maxLength: 4 }),
      fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 3 }),
      (rules, command) => {
        const compiled = rules.map((r) => ({ tools: ['builtin.run_command'], commands: [`${r.word} *`], decision: r.decision, ...(r.review && r.decision !== 'deny' ? { review: 'result' } : {}) }));
        const policy = new Policy({ workspace: layer(compiled) });
        const d = policy.decide(call('builtin.run_command', { command: command.map((w) => `${w} x`).join(' && ') }), { ...OPTIONS, sandbox: true });
        const firstFor = (w: string) => compiled.find((r) => r.commands[0] === `${w} *`);
        const expected = d.decision !== 'deny' && command.some((w) => firstFor(w)?.review !== undefined);
        assert.equal(d.review === 'result', expected);
      },
    ), { numRuns: 200 });
  });
});

describe('result review: explain and inline tests', () => {
  it('explain says the result waits for a person', () => {
    const policy = new Policy({ workspace: layer([{ tools: ['builtin.fetch'], decision: 'allow', review: 'result' }]) });
    assert.equal(policy.explain(call('builtin.fetch', { url: 'https://a.example/' }), OPTIONS).review, 'result');
  });

  it('an inline test may expect review "result" or "none", and fails with a message saying which', () => {
    const l = layer([{ id: 'fetch', tools: ['builtin.fetch'], decision: 'allow', review: 'result' }, { id: 'read', tools: ['builtin.read_file'], decision: 'allow' }], {
      tests: [
        { call: { tool: 'builtin.fetch', input: { url: 'https://a.example/' } }, expect: 'allow', review: 'result' },
        { call: { tool: 'builtin.read_file', input: { path: 'a' } }, expect: 'allow', review: 'none' },
        { name: 'wrong', call: { tool: 'builtin.fetch', input: { url: 'https://a.example/' } }, expect: 'allow', review: 'none' },
      ],
    });
    const results = runInlineTests(l, FOLDER);
    assert.deepEqual(results.map((r) => r.passed), [true, true, false]);
    const [d] = testDiagnostics(l, results);
    assert.match(d!.message, /expected allow with no result review, got allow by .* with its result reviewed/);
  });

  it('an inline test refuses another review value', () => {
    const l = loadPolicyText(JSON.stringify({ version: 1, tests: [{ call: { tool: 'x' }, expect: 'allow', review: 'yes' }] }), 'p.jsonc');
    assert.equal(l.valid, false);
  });

  it('agentpolicy explain prints the review line; agentpolicy test prints a review failure', async () => {
    const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'review-cli-')));
    try {
      fs.writeFileSync(path.join(cwd, '.agentpolicy.jsonc'), JSON.stringify({
        version: 1,
        rules: [{ id: 'fetch', tools: ['builtin.fetch'], decision: 'allow', review: 'result' }],
        tests: [{ name: 'unreviewed', call: { tool: 'builtin.fetch', input: { url: 'https://a.example/' } }, expect: 'allow', review: 'none' }],
      }));
      const out: string[] = [];
      const io = { out: (l: string) => out.push(l), err: () => undefined, cwd };
      assert.equal(await main(['explain', '--tool', 'builtin.fetch', '--input', '{"url":"https://a.example/"}'], io), 0);
      assert.ok(out.includes('review: the result waits for a person (Pass / Withhold) before the model sees it'), out.join('\n'));
      out.length = 0;
      assert.equal(await main(['test'], io), 1);
      assert.match(out.join('\n'), /FAIL {2}unreviewed .*expected allow with no result review, got allow by .* with its result reviewed/);
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('result review: a change that drops it', () => {
  const reviewed = [{ id: 'fetch', tools: ['builtin.fetch'], decision: 'allow', review: 'result' }];
  const unreviewed = [{ id: 'fetch', tools: ['builtin.fetch'], decision: 'allow' }];

  it('is a loosening held for a person, and the result stays reviewed until it is accepted', () => {
    const accepted = layer(reviewed);
    const next = layer(unreviewed);
    const changes = looseningDiff(accepted, next, { workspaceFolder: FOLDER, followSymlinks: false });
    const fetch = changes.find((c) => c.call.tool.id === 'builtin.fetch');
    assert.ok(fetch, changes.map(describeChange).join('\n'));
    assert.match(describeChange(fetch), /allow \(rule 1 "fetch", result reviewed\) → allow \(rule 1 "fetch"\)/);
    const held = heldDecision(new Policy({ workspace: next }), new Policy({ workspace: accepted }), call('builtin.fetch', { url: 'https://a.example/' }), OPTIONS);
    assert.equal(held.decision, 'allow');
    assert.equal(held.review, 'result');
  });

  it('adding a review is no loosening', () => {
    assert.deepEqual(looseningDiff(layer(unreviewed), layer(reviewed), { workspaceFolder: FOLDER, followSymlinks: false }).filter((c) => c.call.tool.id === 'builtin.fetch'), []);
  });
});
