// Issue 11, part 8: loading never throws. Whatever the text, loadPolicyText returns a layer;
// what cannot be compiled is a diagnostic at the offending place, and hostile but small
// files (deep nesting, brace bombs) compile in milliseconds.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { createScanner, SyntaxKind } from 'jsonc-parser';
import { maxNesting } from '../../src/policy/file/parse.js';
import { loadPolicyText, type PolicyLayer } from '../../src/policy/policy.js';

const policy = (rules: unknown[]): string => JSON.stringify({ version: 1, rules });

function load(text: string): PolicyLayer {
  let layer: PolicyLayer | undefined;
  assert.doesNotThrow(() => {
    layer = loadPolicyText(text, 'f.jsonc');
  });
  return layer!;
}

function assertDiagnostic(layer: PolicyLayer, code: string, pattern: RegExp): void {
  assert.equal(layer.valid, false);
  assert.equal(layer.rules.length, 0);
  const hit = layer.diagnostics.find((d) => d.code === code && pattern.test(d.message));
  assert.ok(hit, `no ${code} diagnostic matching ${String(pattern)}: ${JSON.stringify(layer.diagnostics)}`);
  for (const d of layer.diagnostics) {
    assert.ok(d.offset >= 0 && d.length >= 0 && d.offset + d.length <= Math.max(layer.parsed.text.length, 1), 'range inside the text');
  }
}

describe('loading never throws (issue 11, part 8)', () => {
  it('accepts a byte order mark, and positions stay right', () => {
    const body = '{\n  "version": 1,\n  "rules": [{ "decision": "deny", "tools": ["a"], "bogus": 1 }]\n}';
    const good = load('\uFEFF' + body.replace(', "bogus": 1', ''));
    assert.equal(good.valid, true, JSON.stringify(good.diagnostics));
    assert.equal(good.rules.length, 1);
    const text = '\uFEFF' + body;
    const bad = load(text);
    const d = bad.diagnostics.find((x) => x.code === 'schema');
    assert.ok(d);
    assert.equal(text.slice(d.offset, d.offset + d.length), '"bogus"');
    assert.equal(bad.rules.length, 0);
  });

  it('an equals value nested too deeply is a schema diagnostic at its matcher', () => {
    for (const depth of [300, 10_000]) {
      const text = `{"version":1,"rules":[{"decision":"allow","input":{"/a":{"equals":${'['.repeat(depth)}${']'.repeat(depth)}}}}]}`;
      const layer = load(text);
      assertDiagnostic(layer, 'schema', /"equals" value at input "\/a" is nested more than 256 levels deep/);
      const d = layer.diagnostics.find((x) => x.code === 'schema')!;
      assert.ok(text.slice(d.offset).startsWith('{"equals":'), `at the matcher, depth ${depth}`);
    }
    // Just within the bound: valid.
    const ok = load(policy([{ decision: 'deny', input: { '/a': { equals: JSON.parse('['.repeat(200) + ']'.repeat(200)) } } }]));
    assert.equal(ok.valid, true, JSON.stringify(ok.diagnostics));
  });

  it('deeply nested text is a diagnostic, not a stack overflow', () => {
    for (const text of ['['.repeat(100_000), '['.repeat(100_000) + ']'.repeat(100_000), '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000)]) {
      const layer = load(text);
      assertDiagnostic(layer, 'syntax', /nested more than \d+ levels deep/);
    }
    // Deep inside an inline test's call input, too.
    const layer = load(`{"version":1,"rules":[],"tests":[{"call":{"tool":"t","input":${'['.repeat(20_000)}${']'.repeat(20_000)}},"expect":"ask"}]}`);
    assertDiagnostic(layer, 'syntax', /nested more than \d+ levels deep/);
  });

  it('the quick nesting count is never below the depth the parser will reach (fast-check)', () => {
    // The parser recurses once per level: a count below it would let deep text past the guard.
    const scannerDepth = (text: string): number => {
      const scanner = createScanner(text, true);
      let depth = 0;
      let max = 0;
      for (let t = scanner.scan(); t !== SyntaxKind.EOF; t = scanner.scan()) {
        if (t === SyntaxKind.OpenBraceToken || t === SyntaxKind.OpenBracketToken) max = Math.max(max, ++depth);
        else if ((t === SyntaxKind.CloseBraceToken || t === SyntaxKind.CloseBracketToken) && depth > 0) depth--;
      }
      return max;
    };
    const text = fc.array(fc.constantFrom('[', ']', '{', '}', '"', '\\', '/', '*', '\n', '\r', 'a', ' ', ':', ','), { maxLength: 40 }).map((c) => c.join(''));
    fc.assert(fc.property(text, (t) => assert.ok(maxNesting(t) >= scannerDepth(t), `${JSON.stringify(t)}: ${maxNesting(t)} < ${scannerDepth(t)}`)), { numRuns: 20_000 });
  });

  it('a glob whose braces expand too far is bad-glob, and a few KB of them compile in milliseconds', () => {
    const bombs = [
      '{a,b}'.repeat(30),
      '{a,'.repeat(500) + 'b' + '}'.repeat(500),
      '{'.repeat(40) + 'a' + '}'.repeat(40),
      '{1..100000}',
      'x{a..z}{a..z}{a..z}',
    ];
    for (const glob of bombs) {
      for (const field of ['tools', 'paths', 'agents'] as const) {
        assertDiagnostic(load(policy([{ decision: 'deny', [field]: [glob] }])), 'bad-glob', /expands to more than 1000 alternatives|nests braces more than/);
      }
      assertDiagnostic(load(policy([{ decision: 'deny', commands: [`git ${glob}`] }])), 'bad-glob', /expands to more than|nests braces/);
      assertDiagnostic(load(policy([{ decision: 'deny', input: { '/a': glob } }])), 'bad-glob', /expands to more than|nests braces/);
    }
    const rules = Array.from({ length: 40 }, (_, i) => ({ decision: 'deny', tools: ['{a,b}'.repeat(30) + String(i)], paths: ['{1..100000}'] }));
    const text = policy(rules);
    assert.ok(text.length > 4000);
    const layer = load(text);
    assert.equal(layer.valid, false);
    assert.equal(layer.diagnostics.filter((d) => d.code === 'bad-glob').length, 80);
    // Ordinary braces still work.
    const ok = load(policy([{ id: 'r', decision: 'deny', tools: ['mcp.{github,gitlab}.*'], paths: ['{src,test}/**/*.{ts,js}', 'f{1..9}'] }]));
    assert.equal(ok.valid, true, JSON.stringify(ok.diagnostics));
  });

  it('an ask timeout a timer cannot hold is a schema error at the field', () => {
    const text = JSON.stringify({ version: 1, rules: [{ decision: 'ask', tools: ['a'], timeout: 2147484 }] });
    const layer = load(text);
    assertDiagnostic(layer, 'schema', /at most 2147483/);
    const d = layer.diagnostics[0]!;
    assert.equal(text.slice(d.offset, d.offset + d.length), '"timeout"');
    assert.equal(load(policy([{ decision: 'ask', tools: ['a'], timeout: 2147483 }])).valid, true);
    assertDiagnostic(load('{"version":1,"rules":[{"decision":"ask","timeout":1e400}]}'), 'schema', /timeout/);
  });

  it('other hostile input: bad regexes, "__proto__" pointers, huge keys, deep extglobs', () => {
    assertDiagnostic(load(policy([{ decision: 'deny', input: { '/a': { regex: '(' } } }])), 'bad-glob', /regex "\(" does not compile/);
    // A "__proto__" key must not vanish from the parsed record and widen an allow rule.
    assertDiagnostic(load('{"version":1,"rules":[{"decision":"allow","input":{"__proto__":{"equals":1}}}]}'), 'schema', /"__proto__" is not a JSON Pointer/);
    const huge = load(`{"version":1,"${'x'.repeat(200_000)}":1}`);
    assertDiagnostic(huge, 'schema', /unknown field/);
    assertDiagnostic(load(policy([{ decision: 'deny', paths: ['+(a|'.repeat(3000) + 'b' + ')'.repeat(3000)] }])), 'bad-glob', /does not compile/);
    assertDiagnostic(load(policy([{ decision: 'deny', tools: ['x'.repeat(70_000) + '*?'] }])), 'bad-glob', /does not compile/);
  });

  it('property: loadPolicyText never throws on arbitrary text', () => {
    const pieces = fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', '/*', '*/', '//', '\n', '\uFEFF', 'version', '1', 'rules', '"decision"', '"ask"', '{a,b}', '..', '\u0000');
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.array(pieces, { maxLength: 200 }).map((a) => a.join(''))), (text) => {
        const layer = load(text);
        assert.equal(typeof layer.valid, 'boolean');
        if (!layer.valid) assert.ok(layer.diagnostics.some((d) => d.severity === 'error'));
      }),
      { numRuns: 500 },
    );
  });

  it('property: loadPolicyText never throws on JSON-ish policies with random nesting', () => {
    const { value: leaf } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constantFrom<unknown>(null, true, false, 0, -1, 1e308, 2147484, 'a', '', '*', '!x', '{a,b}', '{1..2000}', '/a', '__proto__', '(', '[', 'equals', 'regex', 'glob', 'exists', 'allow', 'ask', 'deny'),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.constantFrom('equals', 'regex', 'glob', 'exists', '/a', '', '__proto__', 'x', 'tools', 'paths'), tie('value'), { maxKeys: 4 }),
      ),
    }));
    const nested = fc.tuple(fc.nat({ max: 1200 }), leaf).map(([depth, v]) => {
      let out: unknown = v;
      for (let i = 0; i < depth; i++) out = [out];
      return out;
    });
    const rule = fc.record(
      {
        id: fc.string({ maxLength: 3 }),
        decision: fc.constantFrom<unknown>('allow', 'ask', 'deny', 'maybe', 1),
        tools: fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('{a,b}'.repeat(12), '{1..5000}', 'mcp.*')), { maxLength: 3 }),
        paths: fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('{{{{{{{{{{{{a}}}}}}}}}}}}', '**/x', '+(a|b)')), { maxLength: 3 }),
        commands: fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 }),
        input: fc.dictionary(fc.constantFrom('/a', '', 'a', '__proto__', '/b/0'), fc.oneof(leaf, nested, nested.map((equals) => ({ equals })))),
        timeout: fc.oneof(fc.double(), fc.integer()),
        onTimeout: fc.constantFrom('deny', 'keep', 'x'),
        extra: leaf,
      },
      { requiredKeys: ['decision'] },
    );
    const file = fc.record(
      { version: fc.constantFrom<unknown>(1, 2, '1'), rules: fc.oneof(fc.array(rule, { maxLength: 4 }), leaf), tests: leaf, default: leaf },
      { requiredKeys: ['version'] },
    );
    fc.assert(
      fc.property(file, fc.boolean(), (value, bom) => {
        const text = (bom ? '\uFEFF' : '') + JSON.stringify(value);
        const layer = load(text);
        if (!layer.valid) assert.ok(layer.diagnostics.some((d) => d.severity === 'error'));
        for (const d of layer.diagnostics) assert.ok(d.offset >= 0 && d.offset + d.length <= text.length);
      }),
      { numRuns: 300 },
    );
  });
});
