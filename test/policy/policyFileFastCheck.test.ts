// The hand check of the policy file (src/policy/file/policyFileFastCheck.ts) stands in for zod on the
// common valid shapes. Soundness: whenever it gives a value, zod accepts the same input and gives
// data that is deepStrictEqual to it (prototypes compared: plain objects on both sides), that
// serialises to the same text (the same key order) and holds the same objects of the input as
// they are (an `equals` value; everything else is new on both sides). Use: it gives a value for
// every valid policy the generators build, the bench's policies and the shipped ones.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { generate } from '../../bench/policyBench.js';
import { readJsoncFast } from '../../src/policy/file/jsoncFast.js';
import { parseJsoncWithSchema } from '../../src/policy/file/parse.js';
import { FAST_CHECK_SHAPES, policyFileFastCheck } from '../../src/policy/file/policyFileFastCheck.js';
import { loadPolicyText } from '../../src/policy/policy.js';
import * as schema from '../../src/policy/file/schema.js';
import { decisionValues, hintNames, MAX_ASK_TIMEOUT_SECONDS, PolicyFileSchema, sandboxModes, toolKinds } from '../../src/policy/file/schema.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const DEPTH = 512;

/** The property's claim for one input: fast says nothing, or zod agrees exactly. Returns whether fast gave a value. */
function agreesWithZod(value: unknown): boolean {
  const fast = policyFileFastCheck(value);
  if (fast === undefined) return false;
  const zod = PolicyFileSchema.safeParse(value);
  assert.ok(zod.success, `the fast check took what zod refuses: ${JSON.stringify(value)}\n${zod.error?.message}`);
  assert.deepStrictEqual(fast, zod.data);
  assert.equal(JSON.stringify(fast), JSON.stringify(zod.data), 'key order');
  assert.deepEqual(sharedWith(value, fast), sharedWith(value, zod.data), 'the same objects of the input passed on as they are');
  return true;
}

/** The objects and lists of `input` that `output` holds itself (not copies of them). */
function sharedWith(input: unknown, output: unknown): Set<object> {
  const own = new Set<object>();
  const walk = (v: unknown, into: Set<object>): void => {
    if (v === null || typeof v !== 'object' || into.has(v)) return;
    into.add(v);
    for (const child of Object.values(v)) walk(child, into);
  };
  walk(input, own);
  const held = new Set<object>();
  walk(output, held);
  return new Set([...held].filter((o) => own.has(o)));
}

/** The value as each reader makes it: the fast reader (no prototypes; it refuses `__proto__` keys) and JSON.parse. */
function readings(value: unknown): unknown[] {
  const text = JSON.stringify(value);
  const fast = readJsoncFast(text, DEPTH);
  return fast ? [fast.value, JSON.parse(text)] : [JSON.parse(text)];
}

// ------------------------------------------------------------------ valid policies, every field

const word = fc.stringMatching(/^[a-z*!./_-]{1,6}$/);
const anyText = fc.oneof(word, fc.string({ maxLength: 6 }));
const nonEmpty = fc.oneof(word, fc.string({ minLength: 1, maxLength: 6 }));
const globs = fc.array(nonEmpty, { minLength: 1, maxLength: 3 });
const mark = fc.oneof(fc.constantFrom('read-secret', 'net:out', 'a.b_c', 'x'), fc.stringMatching(/^[A-Za-z0-9_.:-]{1,64}$/));
const marks = fc.array(mark, { minLength: 1, maxLength: 3 });
const hints = fc.record(Object.fromEntries(hintNames.map((h) => [h, fc.boolean()])), { requiredKeys: [] });
const matcher = fc.oneof(
  anyText,
  fc.record({ equals: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ regex: anyText }),
  fc.record({ glob: anyText }),
  fc.record({ exists: fc.boolean() }),
);
const pointer = fc.oneof(fc.constantFrom('/to', '/level', '', '/a/0', 'constructor'), fc.stringMatching(/^\/[a-z]{0,4}$/));
const remember = fc.constantFrom('session', 'never', '15m', '1h', '24h', '86400s', '1440m', '90s', '1s');
const timeout = fc.oneof(fc.constantFrom(MAX_ASK_TIMEOUT_SECONDS, 1, 0.001, 5e-324), fc.integer({ min: 1, max: MAX_ASK_TIMEOUT_SECONDS }), fc.double({ min: 1e-6, max: MAX_ASK_TIMEOUT_SECONDS, noNaN: true }));
const when = fc.oneof(fc.record({ marked: marks }), fc.record({ unmarked: marks }), fc.record({ marked: marks, unmarked: marks }));

const ruleFields = {
  id: nonEmpty,
  reason: anyText,
  tools: globs,
  kinds: fc.array(fc.constantFrom(...toolKinds), { minLength: 1, maxLength: 3 }),
  agents: globs,
  hints,
  tags: globs,
  paths: globs,
  commands: globs,
  domains: globs,
  urls: globs,
  input: fc.dictionary(pointer, matcher, { maxKeys: 3 }),
  timeout,
  onTimeout: fc.constantFrom('deny', 'keep'),
  remember,
  sandbox: fc.oneof(fc.constant(true), fc.record({ network: fc.boolean() })),
  marks,
  when,
  review: fc.constant('result'),
};

/** A valid rule: any fields, then those its decision does not allow taken out (the schema's cross-field rules). */
const rule = fc.tuple(fc.constantFrom(...decisionValues), fc.record(ruleFields, { requiredKeys: [] })).map(([decision, fields]) => {
  const r: Record<string, unknown> = { decision, ...fields };
  if (decision !== 'ask') for (const k of ['timeout', 'onTimeout', 'remember']) delete r[k];
  if (decision !== 'allow') delete r.sandbox;
  if (decision === 'deny') for (const k of ['marks', 'review']) delete r[k];
  return r as { [key: string]: Json };
});

const test = fc.record(
  {
    name: anyText,
    call: fc.record(
      {
        tool: nonEmpty,
        input: fc.jsonValue({ maxDepth: 2 }),
        kind: fc.constantFrom(...toolKinds),
        agent: nonEmpty,
        hints,
        tags: fc.array(anyText, { maxLength: 2 }),
        marks: fc.array(mark, { maxLength: 2 }),
      },
      { requiredKeys: ['tool'] },
    ),
    expect: fc.constantFrom(...decisionValues),
    rule: nonEmpty,
    sandbox: fc.boolean(),
    review: fc.constantFrom('result', 'none'),
    hidden: fc.boolean(),
  },
  { requiredKeys: ['call', 'expect'] },
);

const controls = fc
  .record(
    {
      allowForSession: fc.boolean(),
      addRule: fc.boolean(),
      longestGrant: remember,
      mcpServers: fc.record({ allow: globs, deny: globs }, { requiredKeys: [] }),
      telemetry: fc.record({ enabled: fc.boolean(), content: fc.boolean(), endpoint: fc.constantFrom('http://127.0.0.1:4318', 'https://otel.example.com') }, { requiredKeys: [] }),
    },
    { requiredKeys: [] },
  )
  .map((c) => {
    // The schema's cross-field rule: allowForSession and longestGrant must agree.
    if (c.allowForSession === false && c.longestGrant === 'session') delete c.longestGrant;
    if (c.allowForSession === true && c.longestGrant !== undefined && c.longestGrant !== 'session') delete c.longestGrant;
    return c;
  });

const validPolicy = fc.record(
  {
    $schema: anyText,
    version: fc.constant(1),
    default: fc.constantFrom(...decisionValues),
    sandbox: fc.constantFrom(...sandboxModes),
    controls,
    rules: fc.array(rule, { maxLength: 4 }),
    tests: fc.array(test, { maxLength: 2 }),
  },
  { requiredKeys: ['version'] },
) as fc.Arbitrary<{ [key: string]: Json }>;

// ------------------------------------------------------------------ mutations

const BAD_VALUES: Json[] = [
  null, true, false, 0, -0, -1, 0.5, 1, 2, MAX_ASK_TIMEOUT_SECONDS, MAX_ASK_TIMEOUT_SECONDS + 1, MAX_ASK_TIMEOUT_SECONDS + 0.001, 1e308, -1e308,
  '', ' ', 'x', 'allow', 'ask', 'deny', 'result', 'none', 'keep', 'session', 'never', '0m', '25h', '86401s', '15m', 'builtin', 'off', 'a b', '!',
  [], [''], ['x'], ['allow'], [1], [null], ['a b'], {}, { network: true }, { network: 1 }, { equals: 1 }, { equals: null }, { regex: 'x' },
  { glob: 1 }, { exists: false }, { exists: 'no' }, { marked: ['a'] }, { marked: [] }, { unmarked: ['b'], marked: ['a'] }, { readOnlyHint: true },
  { equals: 1, regex: 'x' }, { tool: 'x' },
];

/** Keys put into some object: unknown ones, prototype names, and every schema key (in the wrong place, or against the decision). */
const ADDED_KEYS = [
  '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'tool', 'x', 'Decision',
  'timeout', 'onTimeout', 'remember', 'sandbox', 'marks', 'review', 'decision', 'id', 'tools', 'input', 'when', 'hints',
  'equals', 'regex', 'glob', 'exists', 'network', 'marked', 'unmarked', 'readOnlyHint',
  'version', 'rules', 'tests', 'controls', 'default', '$schema', 'call', 'expect', 'kind', 'longestGrant', 'allowForSession', 'mcpServers', 'allow', 'deny',
];

/** A change at a random place, or `ruleField`: one field of one rule (or of the controls) set, to a value valid for that field or not (against its decision, at a bound). */
type Mutation = { at: number; op: 'replace' | 'delete' | 'add' | 'empty' | 'ruleField'; value: Json; key: string; ruleField: readonly [string, Json] };

/** Values at a field's bounds, beside the general bad ones. */
const EDGES: Readonly<Record<string, Json[]>> = {
  timeout: [0, -0, -1, 1e-300, MAX_ASK_TIMEOUT_SECONDS, MAX_ASK_TIMEOUT_SECONDS + 0.001, MAX_ASK_TIMEOUT_SECONDS + 1, 1e308],
  remember: ['0s', '86400s', '86401s', '1440m', '1441m', '24h', '25h', '1000000s', 'Session', '15'],
  longestGrant: ['session', 'never', '1h', '25h'],
};

/** A field of a rule or of the controls, and a value for it: valid for the field (perhaps not for its decision), at a bound, or bad. */
const ruleFieldValue = fc.oneof(
  ...Object.entries({ ...ruleFields, decision: fc.constantFrom(...decisionValues), allowForSession: fc.boolean(), longestGrant: remember }).map(([key, valid]) =>
    fc.tuple(fc.constant(key), fc.oneof(valid as fc.Arbitrary<Json>, fc.constantFrom(...(EDGES[key] ?? BAD_VALUES)), fc.constantFrom(...BAD_VALUES))),
  ),
);
const CONTROLS_KEYS = new Set(['allowForSession', 'longestGrant']);

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('replace', 'replace', 'delete', 'add', 'add', 'empty', 'ruleField', 'ruleField', 'ruleField'),
  value: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...BAD_VALUES) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json> }),
  key: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...ADDED_KEYS) }, { weight: 1, arbitrary: fc.string({ maxLength: 4 }) }),
  ruleField: ruleFieldValue,
});

/** Every container in the value, with where it sits. */
function containers(value: Json, out: Json[] = []): Json[] {
  if (value !== null && typeof value === 'object') {
    out.push(value);
    for (const child of Object.values(value)) containers(child, out);
  }
  return out;
}

/** Sets an own property, even `__proto__` (which assignment would take as the prototype). */
function setOwn(object: object, key: string, value: Json): void {
  // A copy each time: one shared value put inside itself would make a cycle.
  Object.defineProperty(object, key, { value: JSON.parse(JSON.stringify(value)) as Json, enumerable: true, writable: true, configurable: true });
}

function mutate(policy: Json, mutations: readonly Mutation[]): Json {
  const copy = JSON.parse(JSON.stringify(policy)) as Json;
  for (const m of mutations) {
    const all = containers(copy);
    const target = all[m.at % all.length]!;
    const keys = Array.isArray(target) ? target.map((_, i) => i) : Object.keys(target as object);
    const key = keys.length > 0 ? keys[Math.floor(m.at / all.length) % keys.length] : undefined;
    switch (m.op) {
      case 'replace':
        if (key !== undefined) setOwn(target as object, String(key), m.value);
        break;
      case 'delete':
        if (Array.isArray(target)) target.splice(Number(key ?? 0), 1);
        else if (key !== undefined) delete (target as Record<string, Json>)[key];
        break;
      case 'add':
        if (Array.isArray(target)) target.push(JSON.parse(JSON.stringify(m.value)) as Json);
        else setOwn(target as object, m.key, m.value);
        break;
      case 'ruleField': {
        if (CONTROLS_KEYS.has(m.ruleField[0])) {
          const root = copy as { controls?: Json };
          if (root !== null && typeof root === 'object' && !Array.isArray(root)) {
            if (root.controls === undefined) setOwn(root, 'controls', {});
            if (root.controls !== null && typeof root.controls === 'object' && !Array.isArray(root.controls)) setOwn(root.controls, m.ruleField[0], m.ruleField[1]);
          }
          break;
        }
        const rules = (copy as { rules?: Json }).rules;
        const chosen = Array.isArray(rules) && rules.length > 0 ? rules[m.at % rules.length] : undefined;
        if (chosen !== null && typeof chosen === 'object' && !Array.isArray(chosen)) setOwn(chosen, m.ruleField[0], m.ruleField[1]);
        break;
      }
      case 'empty':
        if (key !== undefined) setOwn(target as object, String(key), Array.isArray((target as Record<string, Json>)[key]) ? [] : {});
        break;
    }
  }
  return copy;
}

// ------------------------------------------------------------------ the properties

describe('the fast check of the policy file', () => {
  it('gives a value only when zod accepts the input, and then exactly zod\'s data (fast-check, mutated policies)', () => {
    let taken = 0;
    let refusedByZod = 0;
    fc.assert(
      fc.property(validPolicy, fc.array(mutation, { minLength: 1, maxLength: 3 }), (policy, mutations) => {
        for (const value of readings(mutate(policy, mutations))) {
          if (agreesWithZod(value)) taken++;
          else if (!PolicyFileSchema.safeParse(value).success) refusedByZod++;
        }
      }),
      { numRuns: 5000 },
    );
    // Both sides were exercised: mutants the fast check took (still valid) and many zod refuses.
    if (process.env.FAST_CHECK_STATS) console.log({ taken, refusedByZod });
    assert.ok(taken > 1000, `only ${taken} mutants taken`);
    assert.ok(refusedByZod > 4000, `only ${refusedByZod} mutants refused by zod`);
  });

  it('gives a value only when zod accepts, on any JSON value with a version and rules (fast-check)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 3 }), (any, rules) => {
        agreesWithZod(any);
        for (const value of readings({ version: 1, rules })) agreesWithZod(value);
      }),
      { numRuns: 1000 },
    );
  });

  it('gives a value, zod\'s, for every valid policy built from every field (fast-check)', () => {
    fc.assert(
      fc.property(validPolicy, (policy) => {
        for (const value of readings(policy)) assert.ok(agreesWithZod(value), `not taken: ${JSON.stringify(policy)}`);
      }),
      { numRuns: 1500 },
    );
  });

  it('knows exactly the keys of every strict object of the schema, in its order', () => {
    // A key the check knows and the schema does not would be an unknown field let through; the
    // mutations add only the keys they know of and short random ones, so this covers every other name.
    const shapeOf = (name: string): readonly string[] => {
      const [object, member] = name.split('.') as [keyof typeof schema, string | undefined];
      let found = schema[object] as unknown as { shape?: Record<string, unknown>; options?: unknown[]; unwrap?: () => unknown };
      if (member !== undefined) {
        if (found.options) found = found.options.find((o) => member in ((o as { shape?: object }).shape ?? {})) as typeof found;
        else found = (found.shape![member] as { unwrap: () => typeof found }).unwrap();
      }
      return Object.keys(found.shape!);
    };
    assert.deepEqual([...FAST_CHECK_SHAPES.keys()].sort(), [
      'ControlsSchema', 'ControlsSchema.mcpServers', 'ControlsSchema.telemetry', 'HintsSchema', 'InlineTestSchema', 'InputMatcherSchema.equals', 'InputMatcherSchema.exists',
      'InputMatcherSchema.glob', 'InputMatcherSchema.regex', 'PolicyFileSchema', 'RuleSandboxSchema.network', 'RuleSchema', 'TestCallSchema', 'WhenSchema',
    ]);
    for (const [name, keys] of FAST_CHECK_SHAPES) assert.deepEqual(keys, shapeOf(name), name);
  });

  it('gives zod\'s value at the boundaries: timeout at the maximum, rules absent, every decision\'s own fields', () => {
    const taken = (value: unknown): void => assert.ok(agreesWithZod(value), JSON.stringify(value));
    const refused = (value: unknown): void => {
      assert.equal(policyFileFastCheck(value), undefined, JSON.stringify(value));
      assert.equal(PolicyFileSchema.safeParse(value).success, false, JSON.stringify(value));
    };
    taken({ version: 1 });
    assert.deepEqual(policyFileFastCheck({ version: 1 })?.rules, []);
    taken({ version: 1, rules: [{ decision: 'ask', timeout: MAX_ASK_TIMEOUT_SECONDS, onTimeout: 'keep', remember: '24h' }] });
    refused({ version: 1, rules: [{ decision: 'ask', timeout: MAX_ASK_TIMEOUT_SECONDS + 0.001 }] });
    refused({ version: 1, rules: [{ decision: 'ask', timeout: 0 }] });
    refused({ version: 1, rules: [{ decision: 'allow', timeout: 5 }] });
    refused({ version: 1, rules: [{ decision: 'ask', sandbox: true }] });
    refused({ version: 1, rules: [{ decision: 'deny', marks: ['a'] }] });
    refused({ version: 1, rules: [{ decision: 'deny', review: 'result' }] });
    refused({ version: 1, rules: [{ decision: 'allow', when: {} }] });
    refused({ version: 1, rules: [{ decision: 'allow', tool: ['x'] }] });
    refused({ version: 1, rules: [{ decision: 'allow', tools: [] }] });
    refused({ version: 1, rules: [{ decision: 'ask', remember: '25h' }] });
    refused({ version: 1, controls: { allowForSession: false, longestGrant: 'session' } });
    refused(JSON.parse('{"version":1,"__proto__":{}}'));
    refused({ version: 2 });
  });

  it('gives a value for the bench\'s generated policies and the shipped policies/*.jsonc', () => {
    const folder = path.join(__dirname, '..', '..', 'policies');
    const texts = [
      ...fs.readdirSync(folder).filter((f) => f.endsWith('.jsonc')).map((f) => fs.readFileSync(path.join(folder, f), 'utf8')),
      generate('matchers', 300).text,
      generate('id-only', 300).text,
    ];
    for (const text of texts) {
      const value = readJsoncFast(text, DEPTH)?.value;
      assert.ok(value !== undefined);
      assert.ok(agreesWithZod(value), text.slice(0, 200));
    }
  });

  it('lets parseJsoncWithSchema skip the schema when it gives a value, and run it when not sure', () => {
    let built = 0;
    const schema = (): typeof PolicyFileSchema => (built++, PolicyFileSchema);
    const options = { what: 'the policy file', fastValidate: policyFileFastCheck };
    const valid = parseJsoncWithSchema('{ "version": 1, "rules": [{ "tools": ["a.*"], "decision": "allow" }] }', 'f.jsonc', schema, options);
    assert.deepEqual(valid.value, { version: 1, rules: [{ decision: 'allow', tools: ['a.*'] }] });
    assert.equal(built, 0);
    // An input matcher `{}`: not sure, so zod decides, and says where.
    const unsure = parseJsoncWithSchema('{ "version": 1, "rules": [{ "input": { "/a": {} }, "decision": "allow" }] }', 'f.jsonc', schema, options);
    assert.ok(built > 0);
    assert.equal(unsure.value, undefined);
    assert.match(unsure.diagnostics[0]!.message, /no matcher form fits at rules\[0\]\.input\./);
  });

  it('leaves the diagnostics of an invalid policy file to zod (loadPolicyText)', () => {
    const layer = loadPolicyText('{ "version": 1, "rules": [{ "decision": "allow", "timeout": 5 }] }', 'f.jsonc');
    assert.equal(layer.valid, false);
    assert.match(layer.diagnostics[0]!.message, /"timeout" applies only to rules whose decision is "ask"/);
  });
});
