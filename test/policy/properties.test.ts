// Property-based tests of the policy engine's safety invariants (policy-format.md).
//
// Generators build random but meaningful policies (rules with random decisions and random
// subsets of matchers over small alphabets) and random calls; rules are serialised to JSONC
// text and loaded with loadPolicyText, so every property exercises the whole pipeline:
// parse → schema → compile → index → decide.
//
//  1. First match decides, across managed → workspace → user; rules after the deciding one change nothing.
//  2. An untrusted workspace never allows; trust only ever lowers a workspace allow to ask.
//  3. An invalid file never allows (broken), and a stale one decides exactly as its last good version.
//  4. Adding a part (another path, another simple command) never turns a non-allow into allow.
//  5. Loading never throws; valid ⇔ no error diagnostic; ranges lie within the text.
//  6. `covers` / `shadowed` are sound: a rule reported shadowed never decides.
//  7. Decisions are deterministic, whatever was decided before on the same Policy.
//
// Each property also asserts that its interesting case occurred often enough, so a generator
// that drifts into trivial inputs fails loudly instead of passing vacuously.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { isRemember } from '../../src/policy/file/grantLength.js';
import type { ToolCall, ToolDescriptor } from '../../src/policy/rules/call.js';
import { mismatch, type LayerName } from '../../src/policy/rules/compile.js';
import { PreparedCall } from '../../src/policy/rules/preparedCall.js';
import { judgeTesting } from '../../src/policy/rules/judgement.js';
import { lintShadowed } from '../../src/policy/checking/lint.js';
import { covers } from '../../src/policy/rules/ruleCoverage.js';
import { isNormalRelative, PathResolver } from '../../src/policy/paths/paths.js';
import { loadPolicyText, nextLayerState, Policy, type DecideOptions, type LayerState, type PolicyDecision, type PolicyLayer } from '../../src/policy/policy.js';
import { hintNames, toolKinds, type Decision } from '../../src/policy/file/schema.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

// ---------------------------------------------------------------------------------------------
// Alphabets

const TOOL_IDS = [
  'builtin.read_file',
  'builtin.write_file',
  'builtin.run_command',
  'mcp.github.push',
  'mcp.github.list_issues',
  'mcp.fs.read',
  'client.x',
  'client.lookup_price',
  'agents.spawn',
  'agents.message',
  'plugin.p.q',
  'connector.drive.search',
] as const;
const TOOL_GLOBS = [
  ...TOOL_IDS,
  'builtin.*',
  'mcp.*',
  'mcp.github.*',
  'mcp.*.read',
  '*.read*',
  'client.*',
  'agents.*',
  '*',
  '**',
  'builtin.{read,write}_file',
  'mcp.?s.*',
  '{builtin,mcp}.*',
  '[bm]*',
  'builtin.read_fil?',
  'mcp.github.+(push|list_issues)',
] as const;
const AGENT_GLOBS = ['main', 'deployer', 'reviewer', 'sub-*', 'rev*', '*', '*', '**'] as const;
// Agent names are what the agents file allows (letters, digits, `_`, `.`, `-`): `.` and `..` included.
const AGENT_NAMES = ['main', 'deployer', 'reviewer', 'sub-a', 'sub-b', 'helper', '.hidden', '.', '..'] as const;
const TAGS = ['createHint', 'updateHint', 'net', 'fs'] as const;
const PATH_GLOBS = ['src/**', 'src/*.ts', '**/.env', 'docs/**', '/etc/**', '**', '*.md', 'src/a.ts', '.env', 'src/secret/**', '/tmp/**'] as const;
const PATH_EXCLUDES = ['**/.env', 'src/secret/**', '/etc/passwd', 'docs/**', 'src/*.ts'] as const;
const CALL_PATHS = [
  'src/a.ts',
  'src/b.js',
  'src/.env',
  '.env',
  'src/secret/k.pem',
  'src/lib/deep/c.ts',
  'docs/readme.md',
  'README.md',
  '/etc/passwd',
  '../outside.txt',
  'src/../.env',
  './src/a.ts',
  'link-out/passwd', // a symbolic link inside the workspace to /etc
  'file:///etc/hosts',
  '.',
] as const;
const COMMAND_PATTERNS = [
  'npm test',
  'npm test *',
  'npm run *',
  'npm run lint *',
  'git status',
  'git *',
  'git push *',
  'rm *',
  'ls',
  'ls *',
  'echo *',
  'cat *',
  'FOO=1 npm test',
  '*',
] as const;
const SIMPLE_COMMANDS = [
  'npm test',
  'npm run build',
  'npm run lint --fix',
  'git status',
  'git push origin main',
  'rm -rf dist',
  'ls',
  'ls -la src',
  'echo hi',
  'cat src/a.ts',
  'curl http://example.com',
  'FOO=1 npm test',
  "echo 'a b'",
  'echo "$(git status)"',
  'cat <(ls)',
  "echo 'a; rm -rf /'",
  '(cd src && ls)',
  'echo `git status`',
  'ls # a comment; rm -rf /',
  'git status 2>/dev/null',
] as const;
const REDIRECTS = ['', '', '', ' > out.txt', ' >> log.txt', ' 2>&1', ' > /dev/null', ' 2> err.txt', ' &> all.txt'] as const;
const JOINERS = [' ; ', ' && ', ' || ', ' | ', '\n', ' & '] as const;
const UNPARSABLE = ['echo "unterminated', 'for x in', 'echo $(', 'if true; then', ')'] as const;
const INPUT_POINTERS = ['/branch', '/recipient_email', '/mode', '/x/y', '/command', '/path', '/paths/0', '/paths/1'] as const;
const STRING_GLOBS = ['main', '*@acme.com', '*', 'feat*', 'src/*', 'npm *', 'rm *', 'src/a.ts'] as const;

// ---------------------------------------------------------------------------------------------
// Generators

type InputMatcherSpec = string | { equals: unknown } | { regex: string } | { glob: string } | { exists: boolean };

interface RuleSpec {
  id?: string;
  decision: Decision;
  reason?: string;
  tools?: string[];
  kinds?: string[];
  agents?: string[];
  hints?: Partial<Record<(typeof hintNames)[number], boolean>>;
  tags?: string[];
  paths?: string[];
  commands?: string[];
  input?: Record<string, InputMatcherSpec>;
  timeout?: number;
  onTimeout?: 'deny' | 'keep';
  remember?: 'session' | 'never';
}

interface PolicySpec {
  default?: Decision;
  rules: RuleSpec[];
  /** Cosmetic variations of the JSONC text: comments and trailing commas. */
  comments: boolean;
  trailingCommas: boolean;
}

const decisionArb = fc.constantFrom<Decision>('allow', 'ask', 'deny');

/** 1–3 positive globs and 0–2 `!` excludes; now and then a list of excludes only (matches nothing). */
function globListArb(positives: readonly string[], excludes: readonly string[]): fc.Arbitrary<string[]> {
  const normal = fc
    .tuple(fc.uniqueArray(fc.constantFrom(...positives), { minLength: 1, maxLength: 3 }), fc.uniqueArray(fc.constantFrom(...excludes), { maxLength: 2 }))
    .map(([pos, neg]) => [...pos, ...neg.map((n) => `!${n}`)]);
  const excludesOnly = fc.uniqueArray(fc.constantFrom(...excludes), { minLength: 1, maxLength: 2 }).map((neg) => neg.map((n) => `!${n}`));
  return fc.oneof({ weight: 12, arbitrary: normal }, { weight: 1, arbitrary: excludesOnly });
}

const inputMatcherArb: fc.Arbitrary<InputMatcherSpec> = fc.oneof(
  fc.constantFrom(...STRING_GLOBS),
  fc.record({ equals: fc.constantFrom<unknown>('main', 'npm test', 'src/a.ts', 1, true, null, ['src/a.ts'], { a: 1 }) }),
  fc.record({ regex: fc.constantFrom('^feat', 'acme\\.com$', '.*', 'rm', '^npm test$') }),
  fc.record({ glob: fc.constantFrom(...STRING_GLOBS) }),
  fc.record({ exists: fc.boolean() }),
);

const inputArbForRule = fc
  .uniqueArray(fc.tuple(fc.constantFrom(...INPUT_POINTERS), inputMatcherArb), { minLength: 1, maxLength: 2, selector: ([p]) => p })
  .map((entries) => Object.fromEntries(entries) as Record<string, InputMatcherSpec>);

const hintsArb = fc.record(
  { readOnlyHint: fc.boolean(), destructiveHint: fc.boolean(), idempotentHint: fc.boolean(), openWorldHint: fc.boolean() },
  { requiredKeys: [] },
);
/** A rule's hints: one or two of them (all four rarely match anything). */
const ruleHintsArb = fc
  .uniqueArray(fc.tuple(fc.constantFrom(...hintNames), fc.boolean()), { minLength: 1, maxLength: 2, selector: ([n]) => n })
  .map((entries) => Object.fromEntries(entries) as RuleSpec['hints']);

const MATCHER_NAMES = ['tools', 'kinds', 'agents', 'hints', 'tags', 'paths', 'commands', 'input'] as const;

/**
 * A rule without id: a random decision and a random subset of (at most four) matchers, so that
 * rules match random calls often enough for their decisions, not only defaults, to be tested.
 */
const ruleArb: fc.Arbitrary<RuleSpec> = fc
  .record({
    decision: decisionArb,
    matchers: fc.subarray([...MATCHER_NAMES], { maxLength: 4 }),
    reason: fc.option(fc.constantFrom('because', 'policy says so'), { nil: undefined }),
    tools: globListArb(TOOL_GLOBS, TOOL_GLOBS),
    kinds: fc.uniqueArray(fc.constantFrom(...toolKinds), { minLength: 1, maxLength: 3 }),
    agents: globListArb(AGENT_GLOBS, ['deployer', 'sub-*', 'reviewer']),
    hints: ruleHintsArb,
    tags: fc.uniqueArray(fc.constantFrom(...TAGS), { minLength: 1, maxLength: 2 }),
    paths: globListArb(PATH_GLOBS, PATH_EXCLUDES),
    commands: fc.uniqueArray(fc.constantFrom(...COMMAND_PATTERNS), { minLength: 1, maxLength: 3 }),
    input: inputArbForRule,
    ask: fc.record(
      { timeout: fc.constantFrom(1, 30, 300), onTimeout: fc.constantFrom<'deny' | 'keep'>('deny', 'keep'), remember: fc.constantFrom<'session' | 'never'>('session', 'never') },
      { requiredKeys: [] },
    ),
  })
  .map((r) => {
    const rule: RuleSpec = { decision: r.decision };
    if (r.reason !== undefined) rule.reason = r.reason;
    for (const m of r.matchers) (rule as unknown as Record<string, unknown>)[m] = r[m];
    // `timeout`, `onTimeout` and `remember` are for ask rules only (a schema error elsewhere).
    if (rule.decision === 'ask') Object.assign(rule, r.ask);
    return rule;
  });

/** Rules that match often: fewer matchers. Mixed with `ruleArb` so decisions come from rules, not only defaults. */
const broadRuleArb: fc.Arbitrary<RuleSpec> = fc.record(
  {
    decision: decisionArb,
    tools: globListArb(TOOL_GLOBS, TOOL_GLOBS),
    paths: globListArb(PATH_GLOBS, PATH_EXCLUDES),
    commands: fc.uniqueArray(fc.constantFrom(...COMMAND_PATTERNS), { minLength: 1, maxLength: 3 }),
  },
  { requiredKeys: ['decision'] },
);

const anyRuleArb = fc.oneof(ruleArb, broadRuleArb);

function withIds(rules: RuleSpec[], named: boolean[], prefix = 'r'): RuleSpec[] {
  return rules.map((r, i) => (named[i] ? { id: `${prefix}${i}`, ...r } : r));
}

const rulesArb = (maxLength: number): fc.Arbitrary<RuleSpec[]> =>
  fc.tuple(fc.array(anyRuleArb, { maxLength }), fc.array(fc.boolean(), { minLength: maxLength, maxLength })).map(([rules, named]) => withIds(rules, named));

const policyArb = (maxRules = 6): fc.Arbitrary<PolicySpec> =>
  fc.record({
    default: fc.option(decisionArb, { nil: undefined }),
    rules: rulesArb(maxRules),
    comments: fc.boolean(),
    trailingCommas: fc.boolean(),
  });

const simpleCommandArb = fc
  .tuple(fc.constantFrom(...SIMPLE_COMMANDS), fc.constantFrom(...REDIRECTS))
  .map(([cmd, redirect]) => `${cmd}${redirect}`);

/** A command line: simple commands joined by ; && || | & and newlines, now and then with text that does not parse. */
const commandLineArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.tuple(simpleCommandArb, fc.array(fc.tuple(fc.constantFrom(...JOINERS), simpleCommandArb), { maxLength: 3 })).map(([first, rest]) => first + rest.map(([j, c]) => j + c).join('')) },
  { weight: 1, arbitrary: fc.tuple(simpleCommandArb, fc.constantFrom(...JOINERS), fc.constantFrom(...UNPARSABLE)).map(([a, j, b]) => a + j + b) },
  { weight: 1, arbitrary: fc.constant('cat <<EOF\nhello\nEOF') },
);

const callPathArb = fc.constantFrom(...CALL_PATHS);

interface CallInput {
  path?: string;
  paths?: unknown[];
  command?: string;
  branch?: string;
  recipient_email?: string;
  mode?: unknown;
  x?: { y: string };
}

const callInputArb: fc.Arbitrary<CallInput> = fc.record(
  {
    path: callPathArb,
    paths: fc.array(fc.oneof({ weight: 12, arbitrary: callPathArb as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: fc.constantFrom<unknown>(42, null, ['src/a.ts']) }), { maxLength: 3 }),
    command: commandLineArb,
    branch: fc.constantFrom('main', 'feat/x', 'fix-1'),
    recipient_email: fc.constantFrom('bob@acme.com', 'eve@evil.com'),
    mode: fc.constantFrom<unknown>('fast', 1, true, null, ['src/a.ts'], { a: 1 }),
    x: fc.record({ y: fc.constantFrom('main', 'feat1') }),
  },
  { requiredKeys: [] },
);

const callArb: fc.Arbitrary<ToolCall> = fc
  .record(
    {
      id: fc.constantFrom(...TOOL_IDS),
      kind: fc.option(fc.constantFrom(...toolKinds), { freq: 6, nil: undefined }),
      annotations: fc.option(fc.oneof({ weight: 6, arbitrary: hintsArb as fc.Arbitrary<Record<string, unknown>> }, { weight: 1, arbitrary: fc.constant({ readOnlyHint: 'yes', destructiveHint: 0 }) }), { nil: undefined }),
      tags: fc.option(fc.uniqueArray(fc.constantFrom(...TAGS), { maxLength: 3 }), { nil: undefined }),
      pathArgs: fc.option(fc.constantFrom<readonly string[]>(['path'], ['path', 'paths'], []), { freq: 5, nil: undefined }),
      agent: fc.constantFrom(...AGENT_NAMES),
      input: callInputArb,
    },
    { requiredKeys: ['id', 'agent', 'input'] },
  )
  .map(({ id, kind, annotations, tags, pathArgs, agent, input }) => {
    const tool: ToolDescriptor = { id };
    if (kind !== undefined) tool.kind = kind;
    // Annotations come from servers and are untrusted: now and then they are not booleans.
    if (annotations !== undefined) tool.annotations = annotations as ToolDescriptor['annotations'];
    if (tags !== undefined) tool.tags = tags;
    if (pathArgs !== undefined) tool.pathArgs = pathArgs;
    return { tool, input, agent };
  });

// ---------------------------------------------------------------------------------------------
// Serialisation and evaluation helpers

/** JSONC text with one rule per line (so appending rules never moves an earlier rule's line). */
function policyText(p: PolicySpec, extraRules: RuleSpec[] = []): string {
  const rules = [...p.rules, ...extraRules];
  const lines: string[] = ['{'];
  if (p.comments) lines.push('  // generated by properties.test.ts', '  /* a block comment */');
  lines.push('  "version": 1,');
  if (p.default !== undefined) lines.push(`  "default": ${JSON.stringify(p.default)},${p.comments ? ' // the default' : ''}`);
  lines.push('  "rules": [');
  rules.forEach((r, i) => {
    const last = i === rules.length - 1;
    const comma = last ? (p.trailingCommas ? ',' : '') : ',';
    lines.push(`    ${JSON.stringify(r)}${comma}${p.comments ? ` // rule ${i}` : ''}`);
  });
  lines.push(`  ]${p.trailingCommas ? ',' : ''}`);
  lines.push('}');
  return lines.join('\n');
}

function load(p: PolicySpec, layer: LayerName = 'workspace', extraRules: RuleSpec[] = []): PolicyLayer {
  const text = policyText(p, extraRules);
  const loaded = loadPolicyText(text, `${layer}.agentpolicy.jsonc`, layer);
  if (!loaded.valid) {
    throw new Error(`generated policy is invalid:\n${text}\n${JSON.stringify(loaded.diagnostics, null, 2)}`);
  }
  return loaded;
}

function onePolicy(rules: RuleSpec[], dflt?: Decision): PolicySpec {
  return { rules, comments: false, trailingCommas: false, ...(dflt !== undefined ? { default: dflt } : {}) };
}

/** Input matchers over the parts that properties 4 changes (paths, command) compare whole values. */
function withoutPartInputs(rule: RuleSpec): RuleSpec {
  if (!rule.input) return rule;
  const kept = Object.entries(rule.input).filter(([pointer]) => !/^\/(path|paths|command|cmd)(\/|$)/.test(pointer));
  const copy = { ...rule };
  if (kept.length === 0) delete copy.input;
  else copy.input = Object.fromEntries(kept);
  return copy;
}

const shown = (x: unknown): string => JSON.stringify(x, null, 1);

let workspace = '';
let options: DecideOptions;

before(async function () {
  await initShellParser();
  workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-props-')));
  fs.mkdirSync(path.join(workspace, 'src', 'secret'), { recursive: true });
  fs.writeFileSync(path.join(workspace, 'src', 'a.ts'), '');
  fs.writeFileSync(path.join(workspace, '.env'), '');
  fs.symlinkSync('/etc', path.join(workspace, 'link-out'));
  options = { workspaceFolder: workspace };
});

after(function () {
  if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
});

const LAYERS: readonly LayerName[] = ['managed', 'workspace', 'user'];

/** The decision of the command's parts alone: the files a command names are judged on top (commandPaths.ts), a tightening tested in test/policy/programs/commandPaths.test.ts. */
function decide(layers: Partial<Record<LayerName, LayerState | PolicyLayer>>, call: ToolCall, extra: Partial<DecideOptions> = {}): PolicyDecision {
  return new Policy(layers).decide(call, { ...options, commandPaths: false, ...extra });
}

// ---------------------------------------------------------------------------------------------
// Properties

describe('policy properties (fast-check)', function () {
  this.timeout(120_000);

  it('1. the first matching rule decides, and rules after it change nothing', function () {
    // Up to three layers; the workspace layer is always there. The oracle tests every rule alone.
    const layersArb = fc.record({
      managed: fc.option(policyArb(3), { nil: undefined, freq: 2 }),
      workspace: policyArb(),
      user: fc.option(policyArb(3), { nil: undefined, freq: 2 }),
    });
    let decidedByRule = 0;
    let runs = 0;
    fc.assert(
      fc.property(layersArb, callArb, fc.array(anyRuleArb, { minLength: 1, maxLength: 3 }), (specs, call, extra) => {
        runs++;
        const present = LAYERS.filter((name) => specs[name] !== undefined).map((name) => ({ name, spec: specs[name]! }));
        const loaded = Object.fromEntries(present.map(({ name, spec }) => [name, load(spec, name)]));
        const full = decide(loaded, call);
        const resolver = new PathResolver(workspace);
        // Each part (or the whole call when it has one) is judged alone: its first matching rule
        // across the layers in order (tested by `mismatch` on that part, and, for a one-part
        // call, by a one-rule policy too: the two must agree), else the first layer's default.
        const prepared = new PreparedCall(call, resolver);
        const views = prepared.parts() ?? [prepared];
        const oracle = views.map((view) => {
          let first: { layer: LayerName; index: number; decision: Decision } | undefined;
          for (const { name, spec } of present) {
            spec.rules.forEach((r, index) => {
              const alone = load(onePolicy([r]), name);
              const byMismatch = mismatch(alone.rules[0]!, view) === null;
              if (views.length === 1) {
                const byPolicy = decide({ [name]: alone }, call).rule !== null;
                assert.equal(byPolicy, byMismatch, `${name} rule ${index} alone: decide and mismatch disagree`);
              }
              if (byMismatch && first === undefined) first = { layer: name, index, decision: r.decision };
            });
          }
          return first;
        });
        const withDefault = present.find(({ spec }) => spec.default !== undefined);
        const defaultDecision: Decision = withDefault?.spec.default ?? 'ask';
        const decisions = oracle.map((first) => first?.decision ?? defaultDecision);
        const rank = { allow: 0, ask: 1, deny: 2 } as const;
        const strictest = decisions.reduce((best, d, i) => (rank[d] > rank[decisions[best]!] ? i : best), 0);
        const first = oracle[strictest];
        assert.equal(full.decision, decisions[strictest], 'the call takes its strictest part');
        if (views.length > 1) {
          assert.deepEqual(full.parts?.map((p) => [p.decision, p.rule && [p.rule.layer, p.rule.index]]), oracle.map((o, i) => [decisions[i], o ? [o.layer, o.index] : null]), 'each part as judged alone');
        } else {
          assert.equal(full.parts, undefined, 'a call of one part lists no parts');
        }
        if (first === undefined) {
          assert.equal(full.rule, null, `no rule matches the strictest part alone, yet ${shown(full.rule)} decided`);
          assert.equal(full.defaultFrom, withDefault?.name ?? null, 'the default comes from the first layer that sets one');
          return;
        }
        decidedByRule++;
        assert.ok(full.rule !== null, `${first.layer} rule ${first.index} matches alone, yet the default decided`);
        assert.deepEqual([full.rule.layer, full.rule.index], [first.layer, first.index], 'not the first matching rule of the strictest part');
        if (views.length > 1) return; // appended rules may decide parts no earlier rule matched
        // Rules appended after the deciding one (to its layer and to every later layer) change nothing at all.
        const at = LAYERS.indexOf(first.layer);
        const appended = Object.fromEntries(
          present.map(({ name, spec }) => [name, LAYERS.indexOf(name) >= at ? load(spec, name, withIds(extra, extra.map(() => true), 'extra')) : loaded[name]!]),
        );
        assert.deepEqual(decide(appended, call), full);
      }),
      { numRuns: 400 },
    );
    assert.ok(decidedByRule > runs / 4, `a rule decided in only ${decidedByRule} of ${runs} runs`);
  });

  it('2. an untrusted workspace never allows', function () {
    // Only a workspace layer: never allow (the runtime's fallback is not the workspace's).
    fc.assert(
      fc.property(policyArb(), callArb, fc.constantFrom<Decision | undefined>(undefined, 'ask', 'deny', 'allow'), (p, call, fallbackDefault) => {
        const d = decide({ workspace: load(p) }, call, { trusted: false, ...(fallbackDefault ? { fallbackDefault } : {}) });
        if (d.decision === 'allow') {
          assert.equal(fallbackDefault, 'allow', `untrusted workspace allowed: ${shown(d)}`);
          assert.equal(d.rule, null);
          assert.equal(d.defaultFrom, null);
        }
      }),
      { numRuns: 500 },
    );
    // With managed and user layers: an allow never comes from the workspace, and the only
    // difference trust makes is that a workspace allow is lowered to ask.
    fc.assert(
      fc.property(
        fc.option(policyArb(3), { nil: undefined }),
        policyArb(),
        fc.option(policyArb(3), { nil: undefined }),
        callArb,
        (managed, ws, user, call) => {
          const layers: Partial<Record<LayerName, PolicyLayer>> = { workspace: load(ws) };
          if (managed) layers.managed = load(managed, 'managed');
          if (user) layers.user = load(user, 'user');
          const untrusted = decide(layers, call, { trusted: false });
          const trusted = decide(layers, call, { trusted: true });
          if (untrusted.decision === 'allow') {
            assert.notEqual(untrusted.rule?.layer, 'workspace', shown(untrusted));
            if (untrusted.rule === null) assert.notEqual(untrusted.defaultFrom, 'workspace', shown(untrusted));
          }
          // Per part, trust never changes which rule decides (it may change which part is the strictest).
          if (trusted.parts) assert.deepEqual(untrusted.parts?.map((p) => p.rule), trusted.parts.map((p) => p.rule), 'trust changed which rule decides a part');
          else assert.deepEqual(untrusted.rule, trusted.rule, 'trust changed which rule decides');
          const fromWorkspace = trusted.parts
            ? trusted.parts.some((p) => (p.rule ? p.rule.layer === 'workspace' : trusted.defaultFrom === 'workspace' || (layers.managed?.default === undefined && ws.default !== undefined)))
            : trusted.rule ? trusted.rule.layer === 'workspace' : trusted.defaultFrom === 'workspace';
          if (trusted.decision === 'allow' && fromWorkspace) {
            assert.equal(untrusted.decision, 'ask');
            assert.equal(untrusted.lowered, true);
            assert.ok(untrusted.reason && untrusted.reason.length > 0, 'a lowered decision says why');
          } else {
            assert.equal(untrusted.decision, trusted.decision);
            // A part may still be lowered (it names the first strictest part); a call of one part is not.
            if (!trusted.parts) assert.equal(untrusted.lowered, false);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('3. an invalid policy never allows, and never more than the last good version', function () {
    type Edit =
      | { kind: 'replace'; at: number; ch: string }
      | { kind: 'delete'; at: number; len: number }
      | { kind: 'unknownField'; at: number; key: string }
      | { kind: 'wrongType'; which: number };
    const editArb: fc.Arbitrary<Edit> = fc.oneof(
      fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), ch: fc.constantFrom('{', '}', '[', ']', '"', ':', ',', '/', '*', 'x', '1', ' ', '\\', '\u0000', 'é') }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 6 }) }),
      fc.record({
        kind: fc.constant('unknownField' as const),
        at: fc.nat(),
        key: fc.constantFrom('tool', 'decisions', 'path', 'command', 'Tools', 'agent', 'whatever', '__proto__', 'constructor', 'toString', 'hasOwnProperty'),
      }),
      fc.record({ kind: fc.constant('wrongType' as const), which: fc.nat() }),
    );
    const WRONG_TYPES: ReadonlyArray<readonly [RegExp, string]> = [
      [/"version": 1/, '"version": "1"'],
      [/"version": 1/, '"version": 2'],
      [/"decision":"(allow|ask|deny)"/, '"decision":"yes"'],
      [/"decision":"(allow|ask|deny)"/, '"decision":true'],
      [/"tools":\[/, '"tools":"mcp.*","x":['],
      [/"paths":\[/, '"paths":[1,'],
      [/"commands":\[/, '"commands":[""],"c":['],
      [/"hints":\{/, '"hints":{"readOnly":1,'],
      [/"rules": \[/, '"rules": {"0":['],
      [/"kinds":\[/, '"kinds":["shell",'],
      [/"input":\{/, '"input":{"nopointer":"x",'],
      [/"default": "(allow|ask|deny)"/, '"default": "maybe"'],
      // Valid JSON and schema, but a glob or regex that does not compile, or a repeated id.
      [/"regex":"[^"]*"/, '"regex":"(a"'],
      [/"tools":\[/, '"tools":["+(a",'],
      [/"id":"r\d+"/, '"id":"r0"'],
    ];
    const applyEdit = (text: string, e: Edit): string => {
      switch (e.kind) {
        case 'replace': {
          const at = e.at % (text.length + 1);
          return text.slice(0, at) + e.ch + text.slice(at + 1);
        }
        case 'delete': {
          const at = e.at % (text.length + 1);
          return text.slice(0, at) + text.slice(at + e.len);
        }
        case 'unknownField': {
          const starts = [...text.matchAll(/\{"(id|decision)"/g)].map((m) => m.index);
          if (starts.length === 0) return text.replace('{', `{${JSON.stringify(e.key)}: 1, `);
          const at = starts[e.at % starts.length]!;
          return `${text.slice(0, at + 1)}${JSON.stringify(e.key)}:{"tools":["*"]},${text.slice(at + 1)}`;
        }
        case 'wrongType': {
          const applicable = WRONG_TYPES.filter(([re]) => re.test(text));
          if (applicable.length === 0) return text.replace('"version": 1', '"version": null');
          const [re, by] = applicable[e.which % applicable.length]!;
          return text.replace(re, by);
        }
      }
    };
    let tried = 0;
    let invalidated = 0;
    fc.assert(
      fc.property(
        policyArb(),
        fc.array(editArb, { minLength: 1, maxLength: 8 }),
        fc.array(callArb, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        fc.option(policyArb(2), { nil: undefined }),
        fc.option(policyArb(2), { nil: undefined }),
        (p, edits, calls, trusted, managedSpec, userSpec) => {
          tried++;
          const good = load(p);
          let text = policyText(p);
          let bad: PolicyLayer | undefined;
          for (const e of edits) {
            text = applyEdit(text, e);
            const loaded = loadPolicyText(text, good.file, 'workspace');
            if (!loaded.valid) {
              bad = loaded;
              break;
            }
          }
          if (!bad) return; // every edit kept the file valid: nothing to check here
          invalidated++;
          assert.ok(bad.diagnostics.some((d) => d.severity === 'error'), 'an invalid layer reports an error');
          assert.equal(bad.rules.length, 0, 'an invalid layer contributes no rules');
          assert.equal(bad.default, undefined, 'an invalid layer contributes no default');

          const brokenState = nextLayerState(undefined, bad);
          assert.equal(brokenState.kind, 'broken');
          const goodState = nextLayerState(undefined, good);
          const staleState = nextLayerState(goodState, bad);
          assert.ok(staleState.kind === 'ok' && staleState.layer === good && staleState.stale?.current === bad);
          // A broken state stays broken, a stale one keeps the last good version, whatever comes next that is invalid.
          assert.equal(nextLayerState(brokenState, bad).kind, 'broken');
          const staleAgain = nextLayerState(staleState, bad);
          assert.ok(staleAgain.kind === 'ok' && staleAgain.layer === good);

          const brokenPolicy = new Policy({ workspace: brokenState });
          // The last good version stands in for the broken file among the other layers.
          const others: Partial<Record<LayerName, PolicyLayer>> = {};
          if (managedSpec) others.managed = load(managedSpec, 'managed');
          if (userSpec) others.user = load(userSpec, 'user');
          const brokenAmongOthers = new Policy({ ...others, workspace: brokenState });
          const stalePolicy = new Policy({ ...others, workspace: staleState });
          const goodPolicy = new Policy({ ...others, workspace: goodState });
          assert.equal(brokenPolicy.degraded, true);
          assert.equal(stalePolicy.degraded, true);
          for (const call of calls) {
            for (const fallbackDefault of ['allow', 'ask', 'deny'] as const) {
              const o = { ...options, trusted, fallbackDefault };
              const broken = brokenPolicy.decide(call, o);
              assert.notEqual(broken.decision, 'allow', `a broken policy allowed ${shown(call)}:\n${text}`);
              // Among other layers, only a managed rule (judged before the broken file) can still allow.
              const amongOthers = brokenAmongOthers.decide(call, o);
              if (amongOthers.decision === 'allow') assert.equal(amongOthers.rule?.layer, 'managed', shown(amongOthers));
              const stale = stalePolicy.decide(call, o);
              const { warnings: goodWarnings, ...expected } = goodPolicy.decide(call, o);
              const { warnings: staleWarnings, ...actual } = stale;
              assert.deepEqual(actual, expected, `the stale layer decides differently from the last good version:\n${text}`);
              for (const w of goodWarnings) assert.ok(staleWarnings.includes(w));
              // Once judging reaches the stale layer (no managed rule decided first), the decision says so.
              if (stale.rule?.layer !== 'managed') assert.ok(staleWarnings.length > goodWarnings.length, 'a stale layer is reported in the warnings');
            }
          }
        },
      ),
      { numRuns: 400 },
    );
    assert.ok(invalidated > tried / 2, `only ${invalidated} of ${tried} corrupted policies were invalid`);
  });

  it('4. adding a part (a path, a simple command) never turns a non-allow into allow', function () {
    // Input matchers compare whole values (`{"/command": {"equals": "npm test"}}`), so a rule with
    // one over the part being changed may stop matching for a reason that has nothing to do with
    // parts; such matchers are left out here (the spec's every/any rule is about `paths` and `commands`).
    const partSafePolicyArb = policyArb().map((p) => ({ ...p, rules: p.rules.map(withoutPartInputs) }));
    const resolver = new PathResolver(workspace);
    let pathCases = 0;
    let commandCases = 0;
    fc.assert(
      fc.property(
        partSafePolicyArb,
        callArb,
        callPathArb,
        fc.constantFrom(' ; ', ' && ', '; ', '&&'),
        simpleCommandArb,
        fc.boolean(),
        (p, call, extraPath, joiner, extraCommand, trusted) => {
          const policy = new Policy({ workspace: load(p) });
          const o = { ...options, trusted };
          const before = policy.decide(call, o);
          if (before.decision === 'allow') return;
          const input = call.input as CallInput;
          // Another path: the call must have one already (a first path is not "another part": a
          // call with no path matches no rule with `paths`, and its first path may well be allowed).
          if (resolver.collect(input, call.tool.pathArgs).paths.length > 0) {
            pathCases++;
            const morePaths: ToolCall = { ...call, input: { ...input, paths: [...(input.paths ?? []), extraPath] } };
            const afterPath = policy.decide(morePaths, o);
            assert.notEqual(afterPath.decision, 'allow', `adding path ${extraPath} allowed ${shown(morePaths)} (before: ${shown(before)})`);
          }
          if (typeof input.command === 'string') {
            commandCases++;
            const moreCommands: ToolCall = { ...call, input: { ...input, command: input.command + joiner + extraCommand } };
            const afterCommand = policy.decide(moreCommands, o);
            assert.notEqual(afterCommand.decision, 'allow', `appending a command allowed ${shown(moreCommands)} (before: ${shown(before)})`);
          }
        },
      ),
      { numRuns: 600 },
    );
    assert.ok(pathCases > 50 && commandCases > 50, `too few cases: ${pathCases} with paths, ${commandCases} with commands`);
  });

  it('5. loading never throws, and a result is valid exactly when it has no error', function () {
    const checkLoaded = (text: string): PolicyLayer => {
      let loaded: PolicyLayer | undefined;
      for (const layer of ['managed', 'workspace', 'user'] as const) {
        loaded = loadPolicyText(text, 'p.jsonc', layer);
      }
      const l = loaded!;
      const errors = l.diagnostics.filter((d) => d.severity === 'error');
      if (l.valid) assert.equal(errors.length, 0, 'a valid policy has no error diagnostics');
      else assert.ok(errors.length >= 1, 'an invalid policy has at least one error diagnostic');
      for (const d of l.diagnostics) {
        assert.ok(Number.isInteger(d.offset) && Number.isInteger(d.length), `range is not integral: ${shown(d)}`);
        assert.ok(d.offset >= 0 && d.length >= 0, `negative range: ${shown(d)}`);
        assert.ok(d.offset + d.length <= text.length + 1, `range beyond the text (${text.length}): ${shown(d)}`);
        assert.equal(typeof d.message, 'string');
        assert.ok(d.message.length > 0);
      }
      // Whatever jsonc-parser's tolerant parse cannot read cleanly is never valid.
      const errs: ParseError[] = [];
      const value = parseJsonc(text, errs, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
      if (errs.length > 0) assert.equal(l.valid, false, 'text with syntax errors loaded as valid');
      if (l.valid) assert.ok(looksLikeValidPolicy(value), `loaded as valid, but it is not a policy by the spec: ${text}`);
      return l;
    };

    // JSON-ish text with random comments and trailing commas.
    const jsoncishArb = fc
      .tuple(fc.json(), fc.array(fc.tuple(fc.nat(), fc.constantFrom('// c\n', '/* c */', ',', '/*', '//', '\n', ',}', ',]', '"', '\uFEFF')), { maxLength: 4 }))
      .map(([json, inserts]) => inserts.reduce((t, [at, s]) => { const i = at % (t.length + 1); return t.slice(0, i) + s + t.slice(i); }, json));
    // Policy-shaped values: known and unknown keys with random values, so schema errors are reached.
    const ruleKeys = ['id', 'decision', 'reason', 'tools', 'kinds', 'agents', 'hints', 'tags', 'paths', 'commands', 'input', 'timeout', 'onTimeout', 'remember', 'tool', '__proto__', 'constructor'];
    const policyishArb = fc
      .record(
        {
          version: fc.oneof(fc.constant(1), fc.jsonValue()),
          default: fc.oneof(decisionArb, fc.jsonValue()),
          rules: fc.oneof(
            fc.array(fc.oneof(anyRuleArb as fc.Arbitrary<unknown>, fc.dictionary(fc.constantFrom(...ruleKeys), fc.oneof(fc.jsonValue(), fc.array(fc.string()), decisionArb), { maxKeys: 4 })), { maxLength: 3 }),
            fc.jsonValue(),
          ),
          tests: fc.jsonValue(),
          extra: fc.jsonValue(),
        },
        { requiredKeys: [] },
      )
      .map((v) => JSON.stringify(v));
    fc.assert(fc.property(fc.oneof(jsoncishArb, policyishArb), (text) => void checkLoaded(text)), { numRuns: 1000 });
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => void checkLoaded(text)), { numRuns: 500 });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => void checkLoaded(Buffer.from(bytes).toString('utf8'))), { numRuns: 500 });
    // Valid generated policies stay valid, whatever their comments and commas.
    fc.assert(fc.property(policyArb(), (p) => assert.equal(checkLoaded(policyText(p)).valid, true)), { numRuns: 300 });
  });

  it('6. `shadowed` is sound', function () {
    // Each random call is also tried from every agent and for every tool id of the alphabets.
    const variants = (call: ToolCall): ToolCall[] => [
      call,
      ...AGENT_NAMES.map((agent) => ({ ...call, agent })),
      ...TOOL_IDS.map((id) => ({ ...call, tool: { ...call.tool, id } })),
    ];
    // `later` is often a narrowed copy of `earlier` (matchers added, lists cut to a literal), so
    // that `covers` holds in a good share of pairs; now and then it is an unrelated rule.
    const narrowArb = fc.record(
      {
        tools: fc.constantFrom(...TOOL_IDS).map((t) => [t]),
        paths: fc.constantFrom('src/a.ts', 'docs/readme.md', '.env', 'src/secret/k.pem', 'README.md').map((t) => [t]),
        commands: fc.constantFrom('npm test', 'git status', 'git push origin main', 'rm -rf dist', 'npm run lint --fix').map((t) => [t]),
      },
      { requiredKeys: [] },
    );
    const pairArb = fc
      .tuple(
        anyRuleArb,
        ruleArb,
        narrowArb,
        fc.constantFrom('add', 'narrow', 'override', 'drop', 'independent'),
        fc.array(fc.boolean(), { minLength: MATCHER_NAMES.length, maxLength: MATCHER_NAMES.length }),
        fc.constantFrom('tools', 'agents'),
        fc.constantFrom(['*'], ['**'], ['*', 'main'], ['main', '**']),
        fc.array(callArb, { minLength: 1, maxLength: 8 }),
      )
      .map(([original, other, narrow, mode, dropped, wildField, wildcard, calls]) => {
        let earlier = original;
        let later: RuleSpec;
        if (mode === 'independent') later = other;
        else if (mode === 'override') later = { ...earlier, ...other };
        else if (mode === 'drop') {
          // The earlier rule's tools or agents match everything (`*`, `**`); the later rule
          // leaves that matcher out (and maybe others): `covers` takes such a list as match-all.
          earlier = { ...earlier, [wildField]: wildcard };
          later = { ...earlier, decision: other.decision };
          delete later[wildField];
          MATCHER_NAMES.forEach((m, i) => {
            if (dropped[i]) delete later[m];
          });
        } else later = { ...other, ...earlier, ...(mode === 'narrow' ? narrow : {}), decision: other.decision };
        if (later.decision !== 'ask') {
          later = { ...later };
          delete later.timeout;
          delete later.onTimeout;
          delete later.remember;
        }
        return { earlier, later, calls };
      });
    let covered = 0;
    let laterMatched = 0;
    fc.assert(
      fc.property(pairArb, ({ earlier, later, calls }) => {
        const layer = load(onePolicy([earlier, later]));
        const [e, l] = [layer.rules[0]!, layer.rules[1]!];
        if (!covers(e, l)) return;
        covered++;
        const resolver = new PathResolver(workspace);
        for (const call of calls.flatMap(variants)) {
          const prepared = new PreparedCall(call, resolver);
          if (mismatch(l, prepared) !== null) continue;
          laterMatched++;
          assert.equal(mismatch(e, prepared), null, `covers(earlier, later) holds and later matches ${shown(call)}, but earlier does not`);
        }
      }),
      { numRuns: 1000 },
    );
    assert.ok(covered > 50, `covers held in only ${covered} pairs`);
    assert.ok(laterMatched > 0, 'no call ever matched a covered rule');

    // Whole policies: a rule reported as shadowed never decides.
    const shadowPolicyArb = fc
      .tuple(policyArb(4), fc.array(fc.tuple(fc.nat(), ruleArb), { maxLength: 3 }), fc.array(callArb, { minLength: 1, maxLength: 10 }))
      .map(([p, derived, calls]) => {
        const rules = [...p.rules];
        for (const [from, overrides] of derived) {
          if (rules.length === 0) break;
          const base = rules[from % rules.length]!;
          const r: RuleSpec = { ...base, ...overrides };
          delete r.id;
          if (r.decision !== 'ask') {
            delete r.timeout;
            delete r.onTimeout;
            delete r.remember;
          }
          rules.push(r);
        }
        return { p: { ...p, rules }, calls };
      });
    let reported = 0;
    fc.assert(
      fc.property(shadowPolicyArb, ({ p, calls }) => {
        const layer = load(p);
        const shadowed = new Set(lintShadowed(layer).map((d) => layer.rules.findIndex((r) => r.offset === d.offset)));
        assert.ok(!shadowed.has(-1), 'a shadowed diagnostic is placed on a rule');
        reported += shadowed.size;
        const policy = new Policy({ workspace: layer });
        for (const call of calls.flatMap(variants)) {
          const d = policy.decide(call, options);
          if (d.rule !== null) assert.ok(!shadowed.has(d.rule.index), `rule ${d.rule.index} is reported shadowed but decides ${shown(call)}`);
        }
      }),
      { numRuns: 400 },
    );
    assert.ok(reported > 20, `only ${reported} rules were reported shadowed`);
  });

  it('8. the index by leading command words decides exactly as the plain ordered scan', function () {
    const wordsArb = fc.constantFrom('npm test', 'npm run lint', 'npm run lint --fix', 'npm run', 'npm', 'git status', 'git push origin', 'git push', 'rm -rf x', 'ls', '/bin/rm x', 'env rm x', '$X y', 'r{m,} x', 'FOO=1 npm test', '');
    const patternArb = fc.constantFrom('npm *', 'npm test', 'npm run *', 'npm run lint', 'npm run lint *', 'npm run l* *', 'git *', 'git status', 'git push origin *', 'git * origin', 'rm *', '*', 'l? *', 'ls', 'FOO=1 npm *', 'env *', '/bin/rm *', '* x');
    const ruleArb = fc.record({
      tools: fc.option(fc.constantFrom(['builtin.run_command'], ['builtin.*'], ['mcp.*']), { nil: undefined }),
      commands: fc.option(fc.array(patternArb, { minLength: 1, maxLength: 3 }), { nil: undefined, freq: 5 }),
      decision: fc.constantFrom('allow', 'ask', 'deny'),
    }, { requiredKeys: ['decision'] });
    const commandArb = fc.array(wordsArb, { minLength: 1, maxLength: 3 }).chain((parts) => fc.constantFrom(' && ', '; ', ' | ', ' $(', '\n').map((j) => (j === ' $(' ? `${parts.join(' ; ')} $(ls)` : parts.join(j))));
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 12 }), fc.option(fc.constantFrom('allow', 'ask', 'deny'), { nil: undefined }), commandArb, fc.constantFrom('builtin.run_command', 'mcp.shell.exec'), fc.boolean(), (rules, dflt, command, tool, trusted) => {
        const spec = { version: 1, ...(dflt ? { default: dflt } : {}), rules };
        const layer = loadPolicyText(JSON.stringify(spec), 'p.jsonc', 'workspace');
        const call: ToolCall = { tool: { id: tool }, input: { command }, agent: 'main' };
        const o = { ...options, trusted };
        judgeTesting.plainScan = false;
        const indexed = new Policy({ workspace: layer }).decide(call, o);
        judgeTesting.plainScan = true;
        try {
          assert.deepEqual(indexed, new Policy({ workspace: layer }).decide(call, o), `${command}`);
        } finally {
          judgeTesting.plainScan = false;
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('9. the index by leading path segments decides exactly as the plain ordered scan', function () {
    const globArb = fc.constantFrom('src/lib/**', 'src/lib/a.ts', 'src/*/a.ts', 'docs/api/*.md', 'src/**', 'src', './src/**', 'src/../docs/**', 'docs/../src/a.ts', 'src//a.ts', 'src/', '**', '*.md', 'docs/*.md', '.env', '**/.env', '/tmp/**', '/**', 'link-out/**', 'sr?/**', '{src,docs}/**', 'src/a.ts', 'README.md', 'docs');
    const ruleArb = fc.record({
      tools: fc.option(fc.constantFrom(['builtin.read_file'], ['builtin.*'], ['mcp.*']), { nil: undefined }),
      paths: fc.option(fc.array(fc.oneof(globArb, globArb.map((g) => `!${g}`)), { minLength: 1, maxLength: 3 }), { nil: undefined, freq: 5 }),
      decision: fc.constantFrom('allow', 'ask', 'deny'),
    }, { requiredKeys: ['decision'] });
    const pathArb = fc.constantFrom('src/lib/a.ts', 'src/lib', 'src/lib/deep/b.ts', 'docs/api/x.md', 'src/a.ts', './src/a.ts', 'src', 'src/../docs/r.md', '../outside.txt', '/tmp/y', '', '.', 'docs/r.md', 'README.md', '.env', 'link-out/passwd', 'srcx/a', 'docs');
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 12 }), fc.option(fc.constantFrom('allow', 'ask', 'deny'), { nil: undefined }), fc.array(pathArb, { minLength: 1, maxLength: 3 }), fc.constantFrom('builtin.read_file', 'mcp.fs.read'), fc.boolean(), (rules, dflt, paths, tool, trusted) => {
        const layer = loadPolicyText(JSON.stringify({ version: 1, ...(dflt ? { default: dflt } : {}), rules }), 'p.jsonc', 'workspace');
        const call: ToolCall = { tool: { id: tool }, input: paths.length === 1 ? { path: paths[0] } : { paths }, agent: 'main' };
        const o = { ...options, trusted };
        judgeTesting.plainScan = false;
        // Warnings say what was worked out, which the index may work out sooner: compared without them.
        const { warnings: _a, ...indexed } = new Policy({ workspace: layer }).decide(call, o);
        judgeTesting.plainScan = true;
        try {
          const { warnings: _b, ...plain } = new Policy({ workspace: layer }).decide(call, o);
          assert.deepEqual(indexed, plain, JSON.stringify(paths));
        } finally {
          judgeTesting.plainScan = false;
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('10. a path is read as path.resolve and path.relative read it, also by the quick way for one in normal form', function () {
    // Values built from pieces that make every shape: normal form, `.`/`..` segments, doubled, leading and trailing `/`.
    const valueArb = fc.array(fc.constantFrom('a', 'b', '.', '..', '/', '//', '.a', 'a.', '...', '~', ' ', '\\'), { maxLength: 8 }).map((p) => p.join(''));
    const plain = new PathResolver(workspace, { followSymlinks: false });
    let quick = 0;
    fc.assert(
      fc.property(valueArb, (value) => {
        if (isNormalRelative(value)) quick++;
        const absolute = path.resolve(workspace, value);
        const rel = path.relative(workspace, absolute);
        const inside = rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
        assert.deepEqual(plain.resolve(value), { absolute, relative: inside ? rel : null }, JSON.stringify(value));
        assert.equal(plain.outsideAsWritten(value), !inside, JSON.stringify(value));
      }),
      { numRuns: 3000 },
    );
    assert.ok(quick > 300, `only ${quick} values took the quick way`);
  });

  it('7. decisions are deterministic', function () {
    // One Policy judges a sequence of calls (its tool index memo, its path resolver and the
    // shell parser are shared); each decision must equal a fresh Policy's for that call alone,
    // and deciding twice gives deep-equal results.
    fc.assert(
      fc.property(policyArb(), fc.option(policyArb(2), { nil: undefined }), fc.array(callArb, { minLength: 1, maxLength: 6 }), fc.boolean(), (p, managed, calls, trusted) => {
        const build = (): Policy => new Policy({ workspace: load(p), ...(managed ? { managed: load(managed, 'managed') } : {}) });
        const policy = build();
        const o = { ...options, trusted };
        const firsts = calls.map((call) => policy.decide(call, o));
        calls.forEach((call, i) => {
          const first = firsts[i]!;
          assert.deepEqual(policy.decide(call, o), first, 'deciding twice differs');
          assert.deepEqual(build().decide(structuredClone(call), o), first, 'a fresh policy decides differently');
          const { trace, ...explained } = policy.explain(call, o);
          assert.deepEqual(explained, first, 'explain decides as decide does');
          // Per part (or for the whole call), the trace ends at the rule that decided it.
          const parts = first.parts ?? [{ rule: first.rule }];
          parts.forEach((part, index) => {
            const own = trace.filter((t) => t.partIndex === (first.parts ? index : undefined));
            // One rule matched, or two when what the command reaches (commandReach.ts) made a second one decide: its entry, marked `reach`, last.
            const matched = own.filter((t) => t.failed === null);
            if (!part.rule) {
              assert.equal(matched.length, 0, 'no rule decided, none matched');
              return;
            }
            const reached = matched.filter((t) => t.reach === true);
            assert.ok(reached.length <= 1 && matched.length - reached.length <= 1 && matched.length >= 1, 'the trace ends at the deciding rule');
            if (reached.length === 1) assert.equal(own[own.length - 1], reached[0], 'the rule what the command reaches made decide is the last entry');
            assert.deepEqual(own[own.length - 1]!.rule, part.rule);
          });
        });
        // And in the reverse order, on the same policy.
        [...calls].reverse().forEach((call, j) => assert.deepEqual(policy.decide(call, o), firsts[calls.length - 1 - j]));
      }),
      { numRuns: 400 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// An independent reading of the schema of policy-format.md, used as an oracle: anything the
// loader accepts must satisfy it (the loader may reject more: bad globs, duplicate ids).

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function onlyKeys(v: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(v).every((k) => allowed.includes(k));
}

const isNonEmptyStringList = (v: unknown): boolean => Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string' && s.length > 0);
const isDecision = (v: unknown): boolean => v === 'allow' || v === 'ask' || v === 'deny';
const isHints = (v: unknown): boolean => isObject(v) && onlyKeys(v, hintNames) && Object.values(v).every((b) => typeof b === 'boolean');

function isInputMatcher(v: unknown): boolean {
  if (typeof v === 'string') return true;
  if (!isObject(v)) return false;
  const keys = Object.keys(v);
  if (keys.length !== 1) return false;
  const [k] = keys;
  if (k === 'equals') return true;
  if (k === 'regex' || k === 'glob') return typeof v[k] === 'string';
  if (k === 'exists') return typeof v[k] === 'boolean';
  return false;
}

function isRule(v: unknown): boolean {
  if (!isObject(v)) return false;
  const known = ['id', 'decision', 'reason', 'tools', 'kinds', 'agents', 'hints', 'tags', 'paths', 'commands', 'input', 'timeout', 'onTimeout', 'remember'];
  if (!onlyKeys(v, known) || !isDecision(v.decision)) return false;
  if ('id' in v && !(typeof v.id === 'string' && v.id.length > 0)) return false;
  if ('reason' in v && typeof v.reason !== 'string') return false;
  for (const k of ['tools', 'agents', 'paths', 'tags', 'commands']) if (k in v && !isNonEmptyStringList(v[k])) return false;
  if ('kinds' in v && !(Array.isArray(v.kinds) && v.kinds.length > 0 && v.kinds.every((k) => (toolKinds as readonly unknown[]).includes(k)))) return false;
  if ('hints' in v && !isHints(v.hints)) return false;
  if ('input' in v && !(isObject(v.input) && Object.entries(v.input).every(([p, m]) => (p === '' || p.startsWith('/')) && isInputMatcher(m)))) return false;
  if ('timeout' in v && !(typeof v.timeout === 'number' && v.timeout > 0)) return false;
  if ('onTimeout' in v && v.onTimeout !== 'deny' && v.onTimeout !== 'keep') return false;
  if ('remember' in v && !(typeof v.remember === 'string' && isRemember(v.remember))) return false;
  if (v.decision !== 'ask' && ('timeout' in v || 'onTimeout' in v || 'remember' in v)) return false;
  return true;
}

function isInlineTest(v: unknown): boolean {
  if (!isObject(v) || !onlyKeys(v, ['name', 'call', 'expect', 'rule']) || !isDecision(v.expect) || !isObject(v.call)) return false;
  const c = v.call;
  if (!onlyKeys(c, ['tool', 'input', 'kind', 'agent', 'hints', 'tags']) || !(typeof c.tool === 'string' && c.tool.length > 0)) return false;
  if ('hints' in c && !isHints(c.hints)) return false;
  return true;
}

function looksLikeValidPolicy(v: unknown): boolean {
  if (!isObject(v) || !onlyKeys(v, ['$schema', 'version', 'default', 'rules', 'tests']) || v.version !== 1) return false;
  if ('default' in v && !isDecision(v.default)) return false;
  if ('rules' in v && !(Array.isArray(v.rules) && v.rules.every(isRule))) return false;
  if ('tests' in v && !(Array.isArray(v.tests) && v.tests.every(isInlineTest))) return false;
  const ids = Array.isArray(v.rules) ? v.rules.map((r) => (r as Record<string, unknown>).id).filter((id) => id !== undefined) : [];
  return new Set(ids).size === ids.length;
}
