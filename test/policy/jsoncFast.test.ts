// The fast reader must take a text only when the full reader finds nothing wrong with it, and
// then give exactly its value and the places of the top-level arrays' elements: a policy read
// the fast way must be the same policy, its rules on the same lines.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { getNodeValue, parseTree, type Node, type ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { readJsoncFast } from '../../src/policy/file/jsoncFast.js';
import { parseJsoncWithSchema } from '../../src/policy/file/parse.js';
import { loadPolicyText } from '../../src/policy/policy.js';

const DEPTH = 512;

/** What the full reader says: its value and tree when the text has no error of any kind. */
function full(text: string): { root: Node; value: unknown } | undefined {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  if (errors.length > 0 || root === undefined) return undefined;
  const checked = parseJsoncWithSchema(text, 'f.jsonc', z.unknown(), { what: 'the file' });
  if (checked.diagnostics.length > 0) return undefined; // duplicate keys, nesting
  return { root, value: getNodeValue(root) };
}

/** JSON text with comments, blank space and trailing commas where JSONC allows them. */
const jsoncText = fc
  .tuple(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom(0, 2), fc.array(fc.constantFrom(' ', '\n', '/* c */', '// c\n', ','), { maxLength: 4 }), fc.nat())
  .map(([value, indent, extras, seed]) => {
    let text = JSON.stringify(value, null, indent) ?? 'null';
    let at = seed;
    for (const extra of extras) {
      // Insert after a structural character, where a comment or (before a closing bracket) a comma may go.
      const places = [...text.matchAll(/[[{,:]/g)].map((m) => m.index! + 1);
      if (places.length === 0) break;
      const place = places[at % places.length]!;
      at = Math.floor(at / 3) + 7;
      text = text.slice(0, place) + (extra === ',' ? '' : extra) + text.slice(place);
      if (extra === ',') text = text.replace(/([^[{,\s])(\s*)([\]}])/, '$1,$2$3');
    }
    return text;
  });

/** Texts one character away from valid: the fast reader must never take what the full one refuses. */
const brokenText = fc.tuple(jsoncText, fc.nat(), fc.constantFrom('', ',', ':', '"', '{', '}', '[', ']', '/', 'x', '1', '-')).map(([text, at, ch]) => {
  const i = at % (text.length + 1);
  return text.slice(0, i) + ch + text.slice(i + 1);
});

describe('the fast JSONC reader', () => {
  it('takes a text only when the full reader finds nothing wrong, and then gives its value (fast-check)', () => {
    let taken = 0;
    fc.assert(
      fc.property(fc.oneof(jsoncText, brokenText), (text) => {
        const fast = readJsoncFast(text, DEPTH);
        const truth = full(text);
        if (fast === undefined) return;
        taken++;
        assert.ok(truth !== undefined, `taken, yet the full reader refuses ${JSON.stringify(text)}`);
        assert.deepEqual(fast.value, truth.value, text);
      }),
      { numRuns: 4000 },
    );
    assert.ok(taken > 1000, `the fast reader took only ${taken} texts`);
  });

  it('takes every valid text without special keys, duplicates or deep nesting (fast-check)', () => {
    fc.assert(
      fc.property(jsoncText, (text) => {
        if (/"(?:__proto__|0|[1-9]\d*)"\s*:/.test(text)) return;
        if (full(text) === undefined) return;
        assert.ok(readJsoncFast(text, DEPTH) !== undefined, `not taken: ${JSON.stringify(text)}`);
      }),
      { numRuns: 2000 },
    );
  });

  it('places the elements of the top-level arrays where the syntax tree does (fast-check)', () => {
    const element = fc.jsonValue({ maxDepth: 2 });
    fc.assert(
      fc.property(jsoncText, fc.array(element, { maxLength: 5 }), (_, rules) => {
        const text = `// a policy\n{\n  "version": 1,\n  "rules": [\n${rules.map((r) => `    ${JSON.stringify(r)}`).join(',\n')}\n  ],\n}`;
        const fast = readJsoncFast(text, DEPTH);
        if (fast === undefined) return; // a special key in a generated rule
        const tree = full(text)!;
        const nodes = tree.root.children!.find((p) => p.children?.[0]?.value === 'rules')!.children![1]!.children!;
        assert.deepEqual(fast.topLevelArrays.get('rules'), nodes.map((n) => ({ offset: n.offset, length: n.length })));
      }),
      { numRuns: 1000 },
    );
  });

  it('leaves to the full reader what it must report or build specially', () => {
    for (const text of ['{"a":1,"a":2}', '{"__proto__":{"x":1}}', '{"0":1}', '{"a":}', '[1,,2]', '{,}', '', '{"a" 1}', '[1 2]', '1 2', '{"a":1}}']) {
      assert.equal(readJsoncFast(text, DEPTH), undefined, text);
    }
    assert.equal(readJsoncFast('['.repeat(20) + ']'.repeat(20), 10), undefined, 'deeper than allowed');
    assert.deepEqual(JSON.stringify(readJsoncFast('{"a":[1,],}', DEPTH)?.value), '{"a":[1]}', 'trailing commas are JSONC');
  });

  it('finds a repeated key among names an object with a prototype would inherit, and builds objects without one', () => {
    for (const text of ['{"toString":1,"toString":2}', '{"constructor":{},"a":1,"constructor":2}', '{"a":{"hasOwnProperty":1},"b":{"hasOwnProperty":1,"hasOwnProperty":2}}']) {
      assert.equal(readJsoncFast(text, DEPTH), undefined, text);
    }
    const text = '{"toString":1,"constructor":{"valueOf":[{"x":null}]}}';
    const value = readJsoncFast(text, DEPTH)?.value as Record<string, unknown>;
    assert.deepEqual(value, full(text)?.value, 'the full reader\'s value, prototypes included');
    assert.equal(Object.getPrototypeOf(value), null);
    assert.equal(Object.getPrototypeOf((value['constructor'] as { valueOf: object[] }).valueOf[0]), null);
  });

  it('a policy read the fast way has its rules on the lines the tree gives, and diagnostics still find their place', () => {
    const text = '{\n  "version": 1,\n  "rules": [\n    { "id": "a", "decision": "allow", "tools": ["x"] },\n\n    {\n      "id": "b",\n      "decision": "deny"\n    }\n  ]\n}';
    const layer = loadPolicyText(text, 'p.jsonc', 'workspace');
    assert.ok(layer.parsed.topLevelArrays, 'read the fast way');
    const nodes = full(text)!.root.children![1]!.children![1]!.children!;
    assert.deepEqual(layer.rules.map((r) => [r.ref.line, r.offset, r.length]), [[4, nodes[0]!.offset, nodes[0]!.length], [6, nodes[1]!.offset, nodes[1]!.length]]);
    assert.equal(text.slice(layer.rules[1]!.offset, layer.rules[1]!.offset + layer.rules[1]!.length).replace(/\s+/g, ''), '{"id":"b","decision":"deny"}');
    assert.equal(layer.parsed.root?.type, 'object', 'the tree is still there when asked for');
    const bomb = '{a,b}'.repeat(30); // expands to more alternatives than are allowed
    const bad = loadPolicyText(text.replace('["x"]', `["${bomb}"]`), 'p.jsonc', 'workspace');
    const d = bad.diagnostics.find((x) => x.code === 'bad-glob');
    assert.ok(d, JSON.stringify(bad.diagnostics));
    assert.equal(bad.parsed.text.slice(d.offset, d.offset + d.length), `["${bomb}"]`, "on the rule's tools, as before");
  });
});
