// Hidden tools (issue 14): a tool the policy denies outright for an agent (every call of it
// denied, whatever its input and the session's marks) is not offered to its model. Unit tests of
// the proof (src/policy/hiddenTools.ts), the spawn-denied lint kept consistent with it, and a
// fast-check property: a hidden tool's every call is denied (soundness), and the simple cases hide.
import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import fc from 'fast-check';
import type { ToolCall, ToolDescriptor } from '../../src/policy/rules/call.js';
import type { LayerName } from '../../src/policy/rules/compile.js';
import type { SessionMarks } from '../../src/policy/rules/flowMarks.js';
import { describeDenial, outrightDenial, SPAWN_TOOL, unlistedToolsHidden } from '../../src/policy/hiddenTools.js';
import { runInlineTests, testDiagnostics } from '../../src/policy/checking/inlineTests.js';
import { lintSpawnDenied } from '../../src/policy/checking/lint.js';
import { loadPolicyText, nextLayerState, Policy, type LayerState, type PolicyLayer } from '../../src/policy/policy.js';
import { toolKinds, type Decision } from '../../src/policy/file/schema.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

const FOLDER = os.tmpdir();

function layer(rules: readonly unknown[], extra: Record<string, unknown> = {}, name: LayerName = 'workspace'): PolicyLayer {
  const l = loadPolicyText(JSON.stringify({ version: 1, rules, ...extra }, null, 2), `${name}.agentpolicy.jsonc`, name);
  assert.equal(l.valid, true, JSON.stringify(l.diagnostics));
  return l;
}

const policyOf = (rules: readonly unknown[], extra: Record<string, unknown> = {}): Policy => new Policy({ workspace: layer(rules, extra) });
const tool = (id: string, more: Partial<ToolDescriptor> = {}): ToolDescriptor => ({ id, ...more });

before(async () => {
  await initShellParser();
});

describe('hidden tools: the proof', () => {
  it('a deny on the tool id reached first hides it, naming the rule', () => {
    const p = policyOf([{ id: 'no-github', tools: ['mcp.github.*'], decision: 'deny', reason: 'no pushes' }]);
    const d = outrightDenial(p, tool('mcp.github.push'), 'main');
    assert.equal(d?.rule?.id, 'no-github');
    assert.equal(d?.reason, 'no pushes');
    assert.equal(outrightDenial(p, tool('mcp.files.read'), 'main'), undefined);
    assert.match(describeDenial(d!), /^workspace rule 1 "no-github" \(workspace\.agentpolicy\.jsonc:\d+\)$/);
  });

  it('an earlier rule that could allow or ask for some call keeps the tool offered', () => {
    for (const earlier of [
      { tools: ['mcp.github.*'], decision: 'allow' },
      { tools: ['mcp.github.*'], decision: 'ask' },
      { tools: ['mcp.*'], paths: ['src/**'], decision: 'allow' },
      { tools: ['mcp.*'], input: { '/branch': 'feat*' }, decision: 'ask' },
      { tools: ['mcp.*'], when: { marked: ['secret'] }, decision: 'ask' },
      { tools: ['mcp.*'], domains: ['example.com'], decision: 'allow' },
    ]) {
      const p = policyOf([earlier, { tools: ['mcp.github.*'], decision: 'deny' }]);
      assert.equal(outrightDenial(p, tool('mcp.github.push'), 'main'), undefined, JSON.stringify(earlier));
    }
  });

  it('an earlier deny that reads the input is walked past: it denies or lets the walk go on', () => {
    const p = policyOf([
      { tools: ['mcp.*'], input: { '/branch': 'main' }, decision: 'deny' },
      { tools: ['mcp.*'], when: { unmarked: ['ok'] }, decision: 'deny' },
      { id: 'all', tools: ['mcp.github.*'], decision: 'deny' },
    ]);
    assert.equal(outrightDenial(p, tool('mcp.github.push'), 'main')?.rule?.id, 'all');
  });

  it('a deny that reads the input never hides alone', () => {
    const p = policyOf([{ tools: ['builtin.run_command'], commands: ['*'], decision: 'deny' }]);
    assert.equal(outrightDenial(p, tool('builtin.run_command'), 'main'), undefined);
  });

  it('rules for other agents, kinds, hints or tags do not count; matching ones do', () => {
    const p = policyOf([
      { tools: ['mcp.*'], agents: ['deployer'], decision: 'allow' },
      { tools: ['mcp.*'], kinds: ['client'], decision: 'allow' },
      { tools: ['mcp.*'], hints: { readOnlyHint: true }, decision: 'allow' },
      { tools: ['mcp.*'], tags: ['safe'], decision: 'allow' },
      { id: 'rest', tools: ['mcp.*'], decision: 'deny' },
    ]);
    assert.equal(outrightDenial(p, tool('mcp.github.push', { kind: 'mcp' }), 'main')?.rule?.id, 'rest');
    assert.equal(outrightDenial(p, tool('mcp.github.push', { kind: 'mcp' }), 'deployer'), undefined);
    assert.equal(outrightDenial(p, tool('mcp.github.list', { kind: 'mcp', annotations: { readOnlyHint: true } }), 'main'), undefined);
    assert.equal(outrightDenial(p, tool('mcp.github.push', { kind: 'mcp', tags: ['safe'] }), 'main'), undefined);
  });

  it('the default counts: a deny default with no rule that could allow hides; the permission mode counts where no policy sets one', () => {
    assert.deepEqual(outrightDenial(policyOf([], { default: 'deny' }), tool('builtin.fetch'), 'main'), { rule: null, defaultFrom: 'workspace' });
    assert.equal(outrightDenial(policyOf([{ tools: ['builtin.*'], paths: ['docs/**'], decision: 'allow' }], { default: 'deny' }), tool('builtin.read_file'), 'main'), undefined);
    assert.equal(outrightDenial(policyOf([]), tool('builtin.fetch'), 'main'), undefined);
    assert.deepEqual(outrightDenial(policyOf([]), tool('builtin.fetch'), 'main', { fallbackDefault: 'deny' }), { rule: null, defaultFrom: null });
    assert.deepEqual(outrightDenial(undefined, tool('builtin.fetch'), 'main', { fallbackDefault: 'deny' }), { rule: null, defaultFrom: null });
    assert.equal(outrightDenial(undefined, tool('builtin.fetch'), 'main', { fallbackDefault: 'ask' }), undefined);
  });

  it('layers in order: a managed deny hides whatever the workspace allows; a workspace allow before a user deny keeps it', () => {
    const managed = layer([{ id: 'm', tools: ['builtin.fetch'], decision: 'deny' }], {}, 'managed');
    const workspace = layer([{ tools: ['builtin.fetch'], decision: 'allow' }]);
    const user = layer([{ tools: ['builtin.fetch'], decision: 'deny' }], {}, 'user');
    assert.equal(outrightDenial(new Policy({ managed, workspace }), tool('builtin.fetch'), 'main')?.rule?.layer, 'managed');
    assert.equal(outrightDenial(new Policy({ workspace, user }), tool('builtin.fetch'), 'main'), undefined);
    assert.equal(outrightDenial(new Policy({ user }), tool('builtin.fetch'), 'main')?.rule?.layer, 'user');
  });

  it('an invalid layer with no valid version (every call it reaches asks) ends the proof; a stale one decides as its last good version', () => {
    const broken = loadPolicyText('{ "version": 1, "rules": [ { "tool": "x" } ] }', 'broken.jsonc', 'workspace');
    const user = layer([{ tools: ['builtin.fetch'], decision: 'deny' }], {}, 'user');
    assert.equal(outrightDenial(new Policy({ workspace: broken, user }), tool('builtin.fetch'), 'main'), undefined);
    const good = layer([{ id: 'd', tools: ['builtin.fetch'], decision: 'deny' }]);
    const stale = nextLayerState(nextLayerState(undefined, good), broken);
    assert.equal(outrightDenial(new Policy({ workspace: stale }), tool('builtin.fetch'), 'main')?.rule?.id, 'd');
  });

  it('trust does not matter: a lowered allow asks, it never denies', () => {
    const p = policyOf([{ tools: ['builtin.fetch'], decision: 'allow' }, { tools: ['*'], decision: 'deny' }]);
    assert.equal(outrightDenial(p, tool('builtin.fetch'), 'main'), undefined);
    assert.equal(p.decide({ tool: tool('builtin.fetch'), input: {}, agent: 'main' }, { workspaceFolder: FOLDER, trusted: false }).decision, 'ask');
  });
});

describe('hidden tools: an MCP server before it lists its tools', () => {
  it('all hidden when a deny covers every name under the server and nothing earlier could allow one', () => {
    const p = policyOf([{ id: 'no-github', tools: ['mcp.github.*'], decision: 'deny' }]);
    assert.equal(unlistedToolsHidden(p, { sourceId: 'mcp.github' }, 'main').all?.rule?.id, 'no-github');
    assert.deepEqual(unlistedToolsHidden(p, { sourceId: 'mcp.files' }, 'main'), { some: [] });
    assert.equal(unlistedToolsHidden(policyOf([], { default: 'deny' }), { sourceId: 'mcp.files' }, 'main').all?.defaultFrom, 'workspace');
  });

  it('some hidden: a deny on some of its names, hints or tags; an earlier allow on hints stops the proof for all', () => {
    const p = policyOf([{ id: 'no-push', tools: ['mcp.github.push*'], decision: 'deny' }, { id: 'risky', tools: ['mcp.*'], hints: { destructiveHint: true }, decision: 'deny' }]);
    const h = unlistedToolsHidden(p, { sourceId: 'mcp.github' }, 'main');
    assert.equal(h.all, undefined);
    assert.deepEqual(h.some.map((r) => r.id), ['no-push', 'risky']);
    const q = policyOf([{ tools: ['mcp.*'], hints: { readOnlyHint: true }, decision: 'allow' }, { tools: ['mcp.github.*'], decision: 'deny' }]);
    assert.deepEqual(unlistedToolsHidden(q, { sourceId: 'mcp.github' }, 'main'), { some: [] });
  });

  it('an exclude in the deny keeps some tools: not all hidden', () => {
    const p = policyOf([{ id: 'd', tools: ['mcp.github.*', '!mcp.github.list_issues'], decision: 'deny' }]);
    const h = unlistedToolsHidden(p, { sourceId: 'mcp.github' }, 'main');
    assert.equal(h.all, undefined);
    assert.deepEqual(h.some.map((r) => r.id), ['d']);
  });
});

describe('hidden tools: a client tool an agents file names, by its id alone', () => {
  it('all hidden by a deny on its id; an earlier rule on hints it may declare keeps the proof from saying so', () => {
    const client = { id: 'client.lookup', kind: 'client' } as const;
    assert.equal(unlistedToolsHidden(policyOf([{ id: 'c', tools: ['client.*'], decision: 'deny' }]), client, 'main').all?.rule?.id, 'c');
    const p = policyOf([{ tools: ['client.*'], hints: { readOnlyHint: true }, decision: 'allow' }, { tools: ['client.*'], decision: 'deny' }]);
    assert.deepEqual(unlistedToolsHidden(p, client, 'main'), { some: [] });
    assert.deepEqual(unlistedToolsHidden(policyOf([{ tools: ['client.other'], decision: 'deny' }]), client, 'main'), { some: [] });
  });
});

describe('hidden tools: inline tests', () => {
  it('"hidden": true or false beside expect: passes when the tool is (or is not) denied outright for the call\'s agent; a failure says which', () => {
    const l = layer([{ id: 'no-fetch', tools: ['builtin.fetch'], agents: ['reviewer'], decision: 'deny' }, { id: 'rm', tools: ['builtin.run_command'], commands: ['rm *'], decision: 'deny' }], {
      tests: [
        { call: { tool: 'builtin.fetch', agent: 'reviewer' }, expect: 'deny', hidden: true },
        { call: { tool: 'builtin.fetch' }, expect: 'ask', hidden: false },
        { call: { tool: 'builtin.run_command', input: { command: 'rm x' } }, expect: 'deny', hidden: true },
      ],
    });
    const results = runInlineTests(l, FOLDER);
    assert.deepEqual(results.map((r) => [r.passed, r.hidden]), [[true, true], [true, false], [false, false]]);
    const [failed] = testDiagnostics(l, results);
    assert.match(failed!.message, /expected deny and hidden from the agent's model, got deny by workspace rule 2 "rm" .* and offered to the agent's model/);
  });

  it('"hidden" must be a boolean (schema)', () => {
    const l = loadPolicyText(JSON.stringify({ version: 1, tests: [{ call: { tool: 'x.y' }, expect: 'ask', hidden: 'yes' }] }), 'p.jsonc');
    assert.equal(l.valid, false);
  });
});

describe('hidden tools: spawn-denied says the same', () => {
  const agents = [{ name: 'main', subagents: ['reviewer'] }];
  const cases: Array<[string, readonly unknown[], Record<string, unknown>]> = [
    ['a deny default', [], { default: 'deny' }],
    ['a deny rule', [{ tools: ['agents.*'], decision: 'deny' }], {}],
    ['an allow for one subagent before a deny default', [{ tools: ['agents.spawn'], input: { '/agent': 'reviewer' }, decision: 'allow' }], { default: 'deny' }],
    ['a deny on an input only', [{ tools: ['agents.spawn'], input: { '/agent': { exists: false } }, decision: 'deny' }], {}],
    ['a deny on the worst-case hints the spawn tool does not have', [{ tools: ['agents.*'], hints: { destructiveHint: true }, decision: 'deny' }], {}],
    ['an allow', [{ tools: ['agents.spawn'], decision: 'allow' }], { default: 'deny' }],
  ];
  for (const [name, rules, extra] of cases) {
    it(`${name}: warned exactly when the spawn tool is hidden`, () => {
      const l = layer(rules, extra);
      const hidden = outrightDenial(new Policy({ workspace: l }), SPAWN_TOOL, 'main') !== undefined;
      assert.equal(lintSpawnDenied(l, agents).length > 0, hidden);
    });
  }

  it('an allow for one subagent before a deny default: no warning (a start of that subagent is allowed)', () => {
    assert.deepEqual(lintSpawnDenied(layer([{ tools: ['agents.spawn'], input: { '/agent': 'reviewer' }, decision: 'allow' }], { default: 'deny' }), agents), []);
  });
});

// ---------------------------------------------------------------------------------------------
// The property: a hidden tool's every call is denied.

const TOOL_IDS = ['builtin.read_file', 'builtin.run_command', 'builtin.fetch', 'mcp.github.push', 'mcp.github.list', 'mcp.files.read', 'client.x', 'agents.spawn'] as const;
const TOOL_GLOBS = [...TOOL_IDS, 'builtin.*', 'mcp.*', 'mcp.github.*', 'mcp.github.push*', '*', 'agents.*', '!mcp.github.list', '!builtin.fetch'] as const;
const AGENTS = ['main', 'deployer', 'sub-a'] as const;
const TAGS = ['net', 'fs'] as const;
const HINTS = ['readOnlyHint', 'destructiveHint', 'openWorldHint'] as const;

const decisionArb = fc.constantFrom<Decision>('allow', 'ask', 'deny');
const markArb = fc.constantFrom('secret', 'web');

/** One matcher that reads only the tool, or one that reads the call or the session. */
const matcherArb = fc.oneof(
  { weight: 4, arbitrary: fc.uniqueArray(fc.constantFrom(...TOOL_GLOBS), { minLength: 1, maxLength: 2 }).filter((g) => g.some((x) => !x.startsWith('!'))).map((tools) => ({ tools })) },
  { weight: 1, arbitrary: fc.uniqueArray(fc.constantFrom(...toolKinds), { minLength: 1, maxLength: 2 }).map((kinds) => ({ kinds })) },
  { weight: 1, arbitrary: fc.uniqueArray(fc.constantFrom('main', 'deployer', 'sub-*'), { minLength: 1, maxLength: 2 }).map((agents) => ({ agents })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...HINTS), fc.boolean()).map(([h, v]) => ({ hints: { [h]: v } })) },
  { weight: 1, arbitrary: fc.uniqueArray(fc.constantFrom(...TAGS), { minLength: 1 }).map((tags) => ({ tags })) },
  { weight: 1, arbitrary: fc.constantFrom({ paths: ['src/**'] }, { paths: ['**', '!**/.env'] }) },
  { weight: 1, arbitrary: fc.constantFrom({ commands: ['rm *'] }, { commands: ['npm test', 'git *'] }) },
  { weight: 1, arbitrary: fc.constantFrom({ input: { '/branch': 'main' } }, { input: { '/x': { exists: false } } }) },
  { weight: 1, arbitrary: fc.constantFrom({ domains: ['example.com'] }, { urls: ['https://docs.example.com/**'] }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('marked', 'unmarked'), markArb).map(([k, m]) => ({ when: { [k]: [m] } })) },
);

const ruleArb = fc.tuple(decisionArb, fc.array(matcherArb, { maxLength: 3 }), fc.boolean()).map(([decision, matchers, sandboxed]) => {
  const rule: Record<string, unknown> = Object.assign({}, ...matchers, { decision });
  if (decision === 'allow' && sandboxed) rule.sandbox = true;
  return rule;
});

const layerSpecArb = fc.record({ rules: fc.array(ruleArb, { maxLength: 5 }), default: fc.option(decisionArb, { nil: undefined }) });

const toolArb: fc.Arbitrary<ToolDescriptor> = fc
  .record({
    id: fc.constantFrom(...TOOL_IDS),
    annotations: fc.option(fc.record({ readOnlyHint: fc.boolean(), destructiveHint: fc.boolean(), openWorldHint: fc.boolean() }, { requiredKeys: [] }), { nil: undefined }),
    tags: fc.option(fc.uniqueArray(fc.constantFrom(...TAGS)), { nil: undefined }),
  })
  .map(({ id, annotations, tags }) => ({ id, ...(annotations ? { annotations } : {}), ...(tags ? { tags } : {}) }));

const inputArb = fc.record(
  {
    path: fc.constantFrom('src/a.ts', '.env', 'docs/x.md', '/etc/passwd'),
    paths: fc.array(fc.constantFrom<unknown>('src/a.ts', 'README.md', 42), { maxLength: 2 }),
    command: fc.constantFrom('npm test', 'rm -rf x', 'git status && rm x', 'echo "unterminated', 'curl https://example.com/a', '/bin/rm x', 'env FOO=1 ls'),
    url: fc.constantFrom('https://example.com/x', 'https://docs.example.com/a/b', 'not a url'),
    urls: fc.array(fc.constantFrom('https://example.com/', 'https://evil.test/'), { maxLength: 2 }),
    branch: fc.constantFrom('main', 'feat'),
    x: fc.constant(1),
  },
  { requiredKeys: [] },
);

const layerStateArb = fc.constantFrom<'valid' | 'stale' | 'broken'>('valid', 'valid', 'valid', 'valid', 'valid', 'valid', 'stale', 'broken');

const marksArb: fc.Arbitrary<SessionMarks> = fc.oneof(
  fc.uniqueArray(markArb).map((m) => new Set(m)),
  fc.constant<SessionMarks>('unknown'),
  fc.tuple(fc.uniqueArray(markArb), fc.uniqueArray(markArb)).map(([known, maybe]) => ({ known: new Set(known), maybe: new Set(maybe) })),
);

function loadSpec(spec: { rules: unknown[]; default: Decision | undefined }, name: LayerName): PolicyLayer {
  return layer(spec.rules, spec.default !== undefined ? { default: spec.default } : {}, name);
}

describe('hidden tools: properties (fast-check)', function () {
  this.timeout(120_000);

  it('the simple case hides: { "tools": ["mcp.github.*"], "decision": "deny" } first', () => {
    const p = policyOf([{ tools: ['mcp.github.*'], decision: 'deny' }, { tools: ['*'], decision: 'allow' }]);
    for (const id of ['mcp.github.push', 'mcp.github.list']) assert.ok(outrightDenial(p, tool(id), 'main'));
  });

  it('sound: a hidden tool is denied for every input, session marks, trust, sandbox and permission mode; and it hides often', () => {
    let runs = 0;
    let hidden = 0;
    let staticOnly = 0;
    fc.assert(
      fc.property(
        fc.record({ managed: fc.option(layerSpecArb, { nil: undefined, freq: 3 }), workspace: layerSpecArb, user: fc.option(layerSpecArb, { nil: undefined, freq: 3 }) }),
        // Now and then a layer's file is invalid now: stale (its last valid version in force) or broken (never valid: it asks).
        fc.record({ managed: layerStateArb, workspace: layerStateArb, user: layerStateArb }),
        toolArb, fc.constantFrom(...AGENTS), fc.constantFrom<Decision>('allow', 'ask', 'deny'),
        fc.array(fc.tuple(inputArb, marksArb, fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 8 }),
        (specs, states, t, agent, fallbackDefault, calls) => {
          runs++;
          const layers: Partial<Record<LayerName, LayerState>> = {};
          for (const name of ['managed', 'workspace', 'user'] as const) {
            if (!specs[name]) continue;
            const good = loadSpec(specs[name]!, name);
            const invalid = loadPolicyText('{ "version": 1, "rules": [ { "tool": ["x"], "decision": "allow" } ] }', `${name}.jsonc`, name);
            layers[name] = states[name] === 'valid' ? nextLayerState(undefined, good)
              : states[name] === 'stale' ? nextLayerState(nextLayerState(undefined, good), invalid) : nextLayerState(undefined, invalid);
          }
          const policy = new Policy(layers);
          const denial = outrightDenial(policy, t, agent, { fallbackDefault });
          if (denial === undefined) return;
          hidden++;
          if (denial.rule !== null) staticOnly++;
          for (const [input, marks, trusted, sandbox] of calls) {
            const c: ToolCall = { tool: t, input, agent };
            const d = policy.decide(c, { workspaceFolder: FOLDER, followSymlinks: false, fallbackDefault, marks, trusted, sandbox });
            assert.equal(d.decision, 'deny', `hidden by ${describeDenial(denial)} but ${JSON.stringify(input)} is ${d.decision} (${JSON.stringify(d.rule)})`);
          }
        },
      ),
      { numRuns: 1500 },
    );
    // Reported (mocha prints it), and held above a floor so a drifting generator fails loudly.
    console.log(`      hidden in ${hidden} of ${runs} runs (${staticOnly} by a rule, ${hidden - staticOnly} by a default)`);
    assert.ok(hidden > runs / 10, `only ${hidden} of ${runs} runs hid the tool`);
    assert.ok(staticOnly > runs / 20, `only ${staticOnly} of ${runs} runs hid by a rule`);
  });

  // (With no command: a command's parts judged only by ask and deny rules, `/bin/rm` as `rm`, can deny one input that an allow lets through in others.)
  it('complete where the rules read only the tool: hidden exactly when a call with no command is denied', () => {
    const toolOnly = matcherArb.filter((m) => ['tools', 'kinds', 'agents', 'hints', 'tags'].includes(Object.keys(m)[0]!));
    const rule = fc.tuple(decisionArb, fc.array(toolOnly, { maxLength: 3 })).map(([decision, ms]) => Object.assign({}, ...ms, { decision }) as Record<string, unknown>);
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 6 }), fc.option(decisionArb, { nil: undefined }), toolArb, fc.constantFrom(...AGENTS), inputArb.map(({ command: _, ...rest }) => rest), (rules, dflt, t, agent, input) => {
        const policy = new Policy({ workspace: loadSpec({ rules, default: dflt }, 'workspace') });
        const denied = policy.decide({ tool: t, input, agent }, { workspaceFolder: FOLDER, followSymlinks: false }).decision === 'deny';
        assert.equal(outrightDenial(policy, t, agent) !== undefined, denied);
      }),
      { numRuns: 800 },
    );
  });

  it('a server said to be all hidden hides each tool it could list', () => {
    fc.assert(
      fc.property(layerSpecArb, toolArb.filter((t) => t.id.startsWith('mcp.github.')), fc.constantFrom(...AGENTS), (spec, t, agent) => {
        const policy = new Policy({ workspace: loadSpec(spec, 'workspace') });
        const all = unlistedToolsHidden(policy, { sourceId: 'mcp.github' }, agent).all;
        if (all !== undefined) assert.ok(outrightDenial(policy, { ...t, kind: 'mcp' }, agent), `server hidden by ${describeDenial(all)} but ${t.id} is not`);
      }),
      { numRuns: 800 },
    );
  });
});
