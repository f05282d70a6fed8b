// Flow rules (issue 14): a rule's `marks` label the session when it decides a call that runs,
// and `when: { marked, unmarked }` makes a rule depend on the session's marks. The schema, the
// diagnostics, the decision's `marks` (every part's deciding rule), the explanation, inline
// tests, `shadowed`, the marks unknown (a hook), and fast-check properties: a `when` rule never
// decides a call in a session that lacks the marks it needs, and decides it once they are there.
import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import fc from 'fast-check';
import { checkPolicyLayer } from '../../src/policy/checking/check.js';
import { runInlineTests } from '../../src/policy/checking/inlineTests.js';
import { lintShadowed } from '../../src/policy/checking/lint.js';
import { covers } from '../../src/policy/rules/ruleCoverage.js';
import { describeChange, heldDecision, looseningDiff } from '../../src/policy/editing/loosening.js';
import { loadPolicyText, Policy, type DecideOptions, type PolicyLayer } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { bareCall, validLayer } from './validLayer.js';

const FOLDER = os.tmpdir();

const layer = validLayer;
const call = bareCall;

function options(marks: readonly string[] | 'unknown' = []): DecideOptions {
  return { workspaceFolder: FOLDER, followSymlinks: false, marks: marks === 'unknown' ? 'unknown' : new Set(marks) };
}

const TRIFECTA = [
  { id: 'read-env', tools: ['builtin.read_file'], paths: ['**/.env'], decision: 'allow', marks: ['secret'] },
  { id: 'fetch-after-secret', tools: ['client.fetch'], when: { marked: ['secret'] }, decision: 'ask', reason: 'this session read a secret' },
  { id: 'fetch', tools: ['client.fetch'], decision: 'allow', marks: ['web'] },
  { id: 'write-after-web', tools: ['builtin.write_file'], paths: ['src/**'], when: { marked: ['web'] }, decision: 'ask' },
  { id: 'write', tools: ['builtin.write_file'], paths: ['src/**'], decision: 'allow' },
];

before(async () => {
  await initShellParser();
});

describe('flow rules: schema and diagnostics', () => {
  it('takes marks on allow and ask rules, and when with marked or unmarked', () => {
    layer(TRIFECTA);
    layer([{ tools: ['x.y'], when: { unmarked: ['a'], marked: ['b.c', 'd:e', 'f-g_h'] }, decision: 'allow', marks: ['z'] }]);
  });

  it('refuses marks on a deny rule (a denied call never runs), with the position of the field', () => {
    const text = '{\n  "version": 1,\n  "rules": [\n    { "tools": ["x"], "decision": "deny", "marks": ["secret"] }\n  ]\n}\n';
    const l = loadPolicyText(text, 'p.jsonc');
    assert.equal(l.valid, false);
    const d = l.diagnostics.find((x) => x.code === 'schema')!;
    assert.match(d.message, /"marks" applies only to rules whose decision is "allow" or "ask"/);
    assert.equal(text.slice(d.offset, d.offset + d.length).startsWith('["secret"]') || text.slice(d.offset).startsWith('"marks"'), true);
  });

  it('refuses an empty when, an unknown field in when, an empty list and a mark with a space or a comma', () => {
    for (const rule of [
      { tools: ['x'], decision: 'ask', when: {} },
      { tools: ['x'], decision: 'ask', when: { marked: ['a'], mark: ['b'] } },
      { tools: ['x'], decision: 'ask', when: { marked: [] } },
      { tools: ['x'], decision: 'ask', marks: ['two words'] },
      { tools: ['x'], decision: 'ask', marks: ['a,b'] },
      { tools: ['x'], decision: 'ask', marks: [] },
    ]) {
      const l = loadPolicyText(JSON.stringify({ version: 1, rules: [rule] }), 'p.jsonc');
      assert.equal(l.valid, false, JSON.stringify(rule));
      assert.ok(l.diagnostics.some((d) => d.code === 'schema'), JSON.stringify(l.diagnostics));
    }
  });

  it('suggests the right name for a misspelt field of when', () => {
    const l = loadPolicyText(JSON.stringify({ version: 1, rules: [{ tools: ['x'], decision: 'ask', when: { marke: ['a'] } }] }), 'p.jsonc');
    assert.equal(l.valid, false);
    assert.ok(l.diagnostics.some((d) => /marked/.test(d.message)), JSON.stringify(l.diagnostics));
  });
});

describe('flow rules: decisions', () => {
  const policy = new Policy({ workspace: layer(TRIFECTA) });

  it('a when rule decides only in a session that carries its marks', () => {
    assert.equal(policy.decide(call('client.fetch'), options()).decision, 'allow');
    const after = policy.decide(call('client.fetch'), options(['secret']));
    assert.equal(after.decision, 'ask');
    assert.equal(after.rule?.id, 'fetch-after-secret');
    assert.match(after.reason!, /this session read a secret \(because this session carries the mark "secret"\)/);
  });

  it("the decision lists the deciding rule's marks, never on a deny", () => {
    assert.deepEqual(policy.decide(call('builtin.read_file', { path: '.env' }), options()).marks, ['secret']);
    assert.deepEqual(policy.decide(call('client.fetch'), options()).marks, ['web']);
    assert.equal(policy.decide(call('client.fetch'), options(['secret'])).marks, undefined);
    const deny = new Policy({ workspace: layer([{ tools: ['a'], decision: 'allow', marks: ['m'] }, { tools: ['b'], decision: 'deny' }], { default: 'deny' }) });
    assert.equal(deny.decide(call('b'), options()).marks, undefined);
  });

  it('unmarked: the mirror', () => {
    const p = new Policy({ workspace: layer([{ id: 'clean', tools: ['t'], when: { unmarked: ['web', 'secret'] }, decision: 'allow' }], { default: 'ask' }) });
    assert.equal(p.decide(call('t'), options()).decision, 'allow');
    assert.equal(p.decide(call('t'), options(['other'])).decision, 'allow');
    assert.equal(p.decide(call('t'), options(['web'])).decision, 'ask');
    assert.equal(p.decide(call('t'), options(['secret'])).decision, 'ask');
  });

  it('a call of several parts takes the marks of every part\'s deciding rule', () => {
    const p = new Policy({
      workspace: layer([
        { tools: ['builtin.run_command'], commands: ['cat .env'], decision: 'allow', marks: ['secret'] },
        { tools: ['builtin.run_command'], commands: ['curl *'], decision: 'ask', marks: ['web'] },
        { tools: ['builtin.run_command'], commands: ['ls *'], decision: 'allow' },
      ]),
    });
    const d = p.decide(call('builtin.run_command', { command: 'cat .env && curl x && ls' }), { ...options(), sandbox: true });
    assert.equal(d.decision, 'ask');
    assert.deepEqual(d.marks, ['secret', 'web']);
  });

  it('with the marks unknown (a hook), an ask or deny when rule holds and an allow when rule never does', () => {
    const p = new Policy({
      workspace: layer([
        { id: 'ask-after', tools: ['a'], when: { marked: ['secret'] }, decision: 'ask' },
        { id: 'allow-before', tools: ['b'], when: { unmarked: ['secret'] }, decision: 'allow' },
        { id: 'deny-before', tools: ['c'], when: { unmarked: ['secret'] }, decision: 'deny' },
        { tools: ['*'], decision: 'allow' },
      ]),
    });
    assert.equal(p.decide(call('a'), options('unknown')).rule?.id, 'ask-after');
    // The allow with `when` does not hold, so the catch-all rule after it decides.
    assert.equal(p.decide(call('b'), options('unknown')).rule?.index, 3);
    assert.equal(p.decide(call('c'), options('unknown')).decision, 'deny');
  });

  it('marks only perhaps there: an ask or deny takes them, an allow does not, and the reason says "may carry"', () => {
    const p = new Policy({
      workspace: layer([
        { id: 'ask-after', tools: ['a'], when: { marked: ['secret'] }, decision: 'ask' },
        { id: 'allow-after', tools: ['b'], when: { marked: ['secret'] }, decision: 'allow' },
        { id: 'allow-before', tools: ['c'], when: { unmarked: ['secret'] }, decision: 'allow' },
      ], { default: 'deny' }),
    });
    const uncertain: DecideOptions = { ...options(), marks: { known: new Set(), maybe: new Set(['secret']) } };
    const asked = p.decide(call('a'), uncertain);
    assert.equal(asked.rule?.id, 'ask-after');
    assert.match(asked.reason!, /because this session may carry the mark "secret"/);
    assert.equal(p.decide(call('b'), uncertain).decision, 'deny');
    assert.equal(p.decide(call('c'), uncertain).decision, 'deny');
    assert.match(p.explain(call('c'), uncertain).trace[0]!.why!, /not known whether the session carries the mark "secret"/);
    const known: DecideOptions = { ...options(), marks: { known: new Set(['secret']), maybe: new Set() } };
    assert.equal(p.decide(call('b'), known).rule?.id, 'allow-after');
  });

  it('a session with no marks given is a fresh one', () => {
    assert.equal(policy.decide(call('client.fetch'), { workspaceFolder: FOLDER }).decision, 'allow');
  });
});

describe('flow rules: explain and inline tests', () => {
  it("the trace names the when that failed and the mark it lacked", () => {
    const policy = new Policy({ workspace: layer(TRIFECTA) });
    const e = policy.explain(call('client.fetch'), options());
    const entry = e.trace.find((t) => t.rule.id === 'fetch-after-secret')!;
    assert.equal(entry.failed, 'when');
    assert.equal(entry.why, 'the session lacks the mark "secret"');
    const carried = new Policy({ workspace: layer([{ id: 'u', tools: ['t'], when: { unmarked: ['web'] }, decision: 'allow' }]) }).explain(call('t'), options(['web']));
    assert.equal(carried.trace[0]!.why, 'the session carries the mark "web"');
  });

  it('an inline test takes the marks its session already carries', () => {
    const l = layer(TRIFECTA, {
      tests: [
        { call: { tool: 'client.fetch' }, expect: 'allow', rule: 'fetch' },
        { call: { tool: 'client.fetch', marks: ['secret'] }, expect: 'ask', rule: 'fetch-after-secret' },
        { call: { tool: 'builtin.write_file', input: { path: 'src/a.ts' }, marks: ['web'] }, expect: 'allow' },
      ],
    });
    const results = runInlineTests(l, FOLDER);
    assert.deepEqual(results.map((r) => r.passed), [true, true, false]);
    assert.equal(results[2]!.actual.rule?.id, 'write-after-web');
  });

  it('an inline test with a mark that is not a mark is a schema error', () => {
    const l = loadPolicyText(JSON.stringify({ version: 1, rules: [], tests: [{ call: { tool: 'x', marks: ['a b'] }, expect: 'ask' }] }), 'p.jsonc');
    assert.equal(l.valid, false);
  });
});

describe('flow rules: shadowed', () => {
  const rules = (list: unknown[]): PolicyLayer => layer(list);

  it('an earlier when rule does not shadow a later rule that can decide without its marks', () => {
    const l = rules([
      { tools: ['t'], when: { marked: ['secret'] }, decision: 'ask' },
      { tools: ['t'], decision: 'allow' },
    ]);
    assert.deepEqual(lintShadowed(l), []);
  });

  it('it does shadow a later rule that asks for at least the same marks', () => {
    const l = rules([
      { tools: ['t'], when: { marked: ['secret'] }, decision: 'ask' },
      { tools: ['t'], when: { marked: ['secret', 'web'], unmarked: ['x'] }, decision: 'deny' },
    ]);
    assert.equal(lintShadowed(l).length, 1);
  });

  it('a later when rule is shadowed by an earlier rule without when', () => {
    const l = rules([{ tools: ['t'], decision: 'ask' }, { tools: ['t'], when: { unmarked: ['a'] }, decision: 'allow' }]);
    assert.equal(lintShadowed(l).length, 1);
  });

  it('an earlier when allow never shadows a later ask or deny (with the marks unknown only the ask decides)', () => {
    const l = rules([{ tools: ['t'], when: { marked: ['a'] }, decision: 'allow' }, { tools: ['t'], when: { marked: ['a'] }, decision: 'deny' }]);
    assert.deepEqual(lintShadowed(l), []);
  });

  it('check reports no shadowed warning for the trifecta rules', () => {
    const diagnostics = checkPolicyLayer(layer(TRIFECTA), { workspaceFolder: FOLDER });
    assert.deepEqual(diagnostics.filter((d) => d.code === 'shadowed'), []);
  });
});

describe('flow rules: loosening held for a person', () => {
  it('a new allow that holds only in a marked session is listed, saying in which session', () => {
    const accepted = layer([{ tools: ['client.x'], decision: 'ask' }]);
    const next = layer([{ tools: ['client.x'], when: { marked: ['reviewed'] }, decision: 'allow' }, { tools: ['client.x'], decision: 'ask' }]);
    const changes = looseningDiff(accepted, next, { workspaceFolder: FOLDER });
    assert.equal(changes.length, 1);
    assert.deepEqual(changes[0]!.marks, ['reviewed']);
    assert.match(describeChange(changes[0]!), /in a session marked reviewed/);
  });

  it('the hold asks for an allow the accepted version gives only without the marks', () => {
    const accepted = new Policy({ workspace: layer([{ tools: ['client.x'], when: { unmarked: ['web'] }, decision: 'allow' }]) });
    const next = new Policy({ workspace: layer([{ tools: ['client.x'], decision: 'allow' }]) });
    assert.equal(heldDecision(next, accepted, call('client.x'), options(['web'])).decision, 'ask');
    assert.equal(heldDecision(next, accepted, call('client.x'), options()).decision, 'allow');
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const MARKS = ['secret', 'web', 'pii', 'ci'] as const;
const TOOLS = ['t.a', 't.b', 't.c'] as const;
const markSet = fc.subarray([...MARKS]);
const when = fc.record({ marked: fc.option(fc.subarray([...MARKS], { minLength: 1 }), { nil: undefined }), unmarked: fc.option(fc.subarray([...MARKS], { minLength: 1 }), { nil: undefined }) })
  .filter((w) => w.marked !== undefined || w.unmarked !== undefined)
  .map((w) => Object.fromEntries(Object.entries(w).filter(([, v]) => v !== undefined)) as { marked?: string[]; unmarked?: string[] });
const decision = fc.constantFrom('allow', 'ask', 'deny');
const plainRule = fc.record({ tools: fc.subarray([...TOOLS, 't.*'], { minLength: 1 }), decision }, { requiredKeys: ['tools', 'decision'] });
const flowRule = fc.record({ tools: fc.subarray([...TOOLS, 't.*'], { minLength: 1 }), decision, when }, { requiredKeys: ['tools', 'decision', 'when'] });
const anyRule = fc.oneof(plainRule, flowRule);

function holds(w: { marked?: string[]; unmarked?: string[] }, marks: ReadonlySet<string>): boolean {
  return (w.marked ?? []).every((m) => marks.has(m)) && !(w.unmarked ?? []).some((m) => marks.has(m));
}

describe('flow rules: properties', () => {
  it('a when rule never decides a call in a session whose marks do not fit it, and decides it once they do when it is the first rule that matches otherwise', () => {
    let decidedByFlow = 0;
    let skipped = 0;
    fc.assert(
      // All marks and none are common: there `marked` and `unmarked` rules hold.
      fc.property(fc.array(anyRule, { minLength: 1, maxLength: 6 }), fc.constantFrom(...TOOLS), fc.oneof(markSet, fc.constant([...MARKS]), fc.constant([])), (rules, tool, marks) => {
        const withIds = rules.map((r, i) => ({ ...r, id: `r${i}` }));
        const policy = new Policy({ workspace: layer(withIds) });
        const present = new Set(marks);
        const d = policy.decide(call(tool), options(marks));
        const matches = (r: (typeof withIds)[number]): boolean => r.tools.some((g) => g === tool || g === 't.*');
        // The first rule whose tools match and whose when holds (or that has none) decides.
        const expected = withIds.find((r) => matches(r) && (!('when' in r) || r.when === undefined || holds(r.when, present)));
        assert.equal(d.rule?.id ?? null, expected?.id ?? null);
        for (const r of withIds) {
          if (!matches(r) || !('when' in r) || r.when === undefined) continue;
          if (!holds(r.when, present)) {
            assert.notEqual(d.rule?.id, r.id, 'a when rule decided in a session whose marks do not fit it');
            skipped++;
          } else if (withIds.slice(0, withIds.indexOf(r)).every((e) => !matches(e) || ('when' in e && e.when !== undefined && !holds(e.when, present)))) {
            // Every rule before it that fits the call is a when rule whose marks do not fit: this one decides.
            assert.equal(d.rule?.id, r.id, 'the first matching when rule did not decide although its marks are there');
            decidedByFlow++;
          }
        }
      }),
      { numRuns: 1000 },
    );
    assert.ok(decidedByFlow > 50, `only ${decidedByFlow} calls decided by a when rule`);
    assert.ok(skipped > 50, `only ${skipped} when rules skipped`);
  });

  it('marked: adding the marks a rule needs makes it decide; taking one away makes it stop (unmarked: the mirror)', () => {
    fc.assert(
      fc.property(when, fc.constantFrom('allow', 'ask', 'deny'), markSet, (w, d, others) => {
        const policy = new Policy({ workspace: layer([{ id: 'flow', tools: ['t.a'], when: w, decision: d }]) });
        const fitting = new Set([...others.filter((m) => !(w.unmarked ?? []).includes(m)), ...(w.marked ?? [])]);
        if ((w.marked ?? []).some((m) => (w.unmarked ?? []).includes(m))) return; // a when no session can meet
        assert.equal(policy.decide(call('t.a'), options([...fitting])).rule?.id, 'flow');
        for (const m of w.marked ?? []) {
          const without = new Set(fitting);
          without.delete(m);
          assert.equal(policy.decide(call('t.a'), options([...without])).rule, null);
        }
        for (const m of w.unmarked ?? []) {
          assert.equal(policy.decide(call('t.a'), options([...fitting, m])).rule, null);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('with some marks only perhaps there, an allow holds only where it holds for every session they could describe', () => {
    let allowed = 0;
    fc.assert(
      fc.property(fc.array(anyRule, { maxLength: 6 }), fc.constantFrom(...TOOLS), markSet, markSet, (rules, tool, known, maybe) => {
        const policy = new Policy({ workspace: layer(rules) });
        const uncertain = policy.decide(call(tool), { ...options(), marks: { known: new Set(known), maybe: new Set(maybe) } });
        if (uncertain.decision !== 'allow') return;
        allowed++;
        // Every session with the known marks and any of the perhaps ones.
        const perhaps = maybe.filter((m) => !known.includes(m));
        for (let bits = 0; bits < 1 << perhaps.length; bits++) {
          const marks = [...known, ...perhaps.filter((_, i) => (bits >> i) & 1)];
          assert.equal(policy.decide(call(tool), options(marks)).decision, 'allow', `allowed with ${JSON.stringify({ known, maybe })} but not with ${JSON.stringify(marks)}`);
        }
      }),
      { numRuns: 400 },
    );
    assert.ok(allowed > 30, `only ${allowed} allows`);
  });

  it('with the marks unknown, a when rule never allows more than with any marks at all', () => {
    fc.assert(
      fc.property(fc.array(anyRule, { maxLength: 6 }), fc.constantFrom(...TOOLS), fc.array(markSet, { minLength: 1, maxLength: 4 }), (rules, tool, sets) => {
        const policy = new Policy({ workspace: layer(rules) });
        const unknown = policy.decide(call(tool), options('unknown'));
        if (unknown.decision !== 'allow') return;
        for (const marks of sets) assert.equal(policy.decide(call(tool), options(marks)).decision, 'allow');
      }),
      { numRuns: 300 },
    );
  });

  it('shadowed stays sound with when rules: a rule reported shadowed never decides, whatever the marks', () => {
    let reported = 0;
    fc.assert(
      fc.property(fc.array(anyRule, { minLength: 2, maxLength: 5 }), (rules) => {
        const l = layer(rules);
        const policy = new Policy({ workspace: l });
        const shadowedIndexes = lintShadowed(l).map((d) => l.rules.findIndex((r) => r.offset === d.offset));
        reported += shadowedIndexes.length;
        for (const index of shadowedIndexes) {
          for (const tool of TOOLS) {
            for (const marks of [[], ['secret'], ['web'], ['secret', 'web'], [...MARKS]] as string[][]) {
              assert.notEqual(policy.decide(call(tool), options(marks)).rule?.index, index);
            }
            assert.notEqual(policy.decide(call(tool), options('unknown')).rule?.index, index);
          }
        }
        // covers() is what lint uses: it must agree with the report.
        for (const index of shadowedIndexes) assert.ok(l.rules.slice(0, index).some((e) => covers(e, l.rules[index]!)));
      }),
      { numRuns: 300 },
    );
    assert.ok(reported > 20, `only ${reported} shadowed rules reported`);
  });
});
