// The glob fast paths must give minimatch's answer exactly: a fast path that matched a little
// more would widen an allow rule, one that matched a little less would narrow a deny.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { Minimatch } from 'minimatch';
import { compileGlobSet, compileNameGlob, compilePathGlob, MINIMATCH_OPTIONS } from '../../src/policy/globs/globs.js';
import { isNormalPath, normalSegments, simplePathGlob } from '../../src/policy/globs/simplePathGlob.js';

const minimatchPath = (pattern: string, value: string): boolean => new Minimatch(pattern, MINIMATCH_OPTIONS).match(value);

// Small alphabets so that patterns and paths often meet; dots because `.x`, `.` and `..` are where globs differ.
const name = fc.constantFrom('a', 'b', 'ab', '.a', 'a.ts', 'b.md', '.', '..', '', '@a', '!a', 'a+', '(a)');
const patternSegment = fc.constantFrom('a', 'b', 'ab', '.a', '*', '**', 'a*', '*.ts', '*b*', '.*', '*.*', '.', '..', '', '***', '@a', '!a', '+(a)', '@(a|b)', '!*', 'a+');
const joined = (segments: string[], absolute: boolean): string => (absolute ? '/' : '') + segments.join('/');
const pathArb = fc.tuple(fc.array(name, { minLength: 0, maxLength: 5 }), fc.boolean()).map(([s, abs]) => joined(s, abs));
const patternArb = fc.tuple(fc.array(patternSegment, { minLength: 1, maxLength: 5 }), fc.boolean()).map(([s, abs]) => joined(s, abs));

describe('glob fast paths', () => {
  it('a simple path glob answers as minimatch does, on every path (fast-check)', function () {
    this.timeout(60_000);
    let simple = 0;
    let normal = 0;
    fc.assert(
      fc.property(patternArb, pathArb, (pattern, value) => {
        if (simplePathGlob(pattern)) simple++;
        if (normalSegments(value)) normal++;
        assert.equal(compilePathGlob(pattern)(value), minimatchPath(pattern, value), `${JSON.stringify(pattern)} on ${JSON.stringify(value)}`);
      }),
      { numRuns: 20_000 },
    );
    assert.ok(simple > 5_000 && normal > 5_000, `the fast path was taken too rarely (${simple} patterns, ${normal} paths)`);
  });

  it('answers the shapes policies use like minimatch, paths in normal form included', () => {
    const cases: [string, string, boolean][] = [
      ['src/**', 'src/a.ts', true],
      ['src/**', 'src', false], // minimatch: a trailing `**` takes at least one segment
      ['src/**', 'src/.env', true],
      ['src/**', 'srcx/a', false],
      ['src/**/*.ts', 'src/a.ts', true],
      ['src/**/*.ts', 'src/x/y/a.ts', true],
      ['src/**/*.ts', 'src/x/y/a.js', false],
      ['docs/*.md', 'docs/a/b.md', false],
      ['/etc/**', '/etc/passwd', true],
      ['/etc/**', 'etc/passwd', false],
      ['**', 'a/b/c', true],
      ['**/*.key', 'a/.b/c.key', true],
    ];
    for (const [pattern, value, expected] of cases) {
      assert.ok(simplePathGlob(pattern), `${pattern} takes the fast path`);
      assert.equal(minimatchPath(pattern, value), expected, `minimatch: ${pattern} on ${value}`);
      assert.equal(compilePathGlob(pattern)(value), expected, `${pattern} on ${value}`);
    }
  });

  it('leaves every other shape to minimatch', () => {
    for (const pattern of ['src/{a,b}/**', 'src/[ab].ts', 'src/?.ts', 'src/**/**', 'a//b', 'src/./a', '@(a)/**', 'a\\*b']) {
      assert.equal(simplePathGlob(pattern), undefined, pattern);
    }
  });

  it('a name glob of stars answers as minimatch does on the name as one segment (fast-check)', () => {
    const nameGlob = fc.array(fc.constantFrom('a', 'b', '.', '/', '*', '-', '@', '+', '!', '(', ')', '|'), { minLength: 1, maxLength: 6 }).map((c) => c.join(''));
    const value = fc.array(fc.constantFrom('a', 'b', '.', '/', '-', '@', '+', '!', '(', ')'), { minLength: 0, maxLength: 6 }).map((c) => c.join(''));
    fc.assert(
      fc.property(nameGlob, value, (pattern, v) => {
        // As globs.ts reads a name: one segment, `/` stood in for, a fixed first letter.
        const segment = (s: string): string => `n${s.replaceAll('/', '\u2215')}`;
        assert.equal(compileNameGlob(pattern)(v), new Minimatch(segment(pattern), MINIMATCH_OPTIONS).match(segment(v)), `${pattern} on ${v}`);
      }),
      { numRuns: 5_000 },
    );
  });
});

describe('glob sets built once per list', () => {
  it('a list of name globs built again is the same set, and lists that differ are told apart (fast-check)', () => {
    const glob = fc.constantFrom('a', 'b', '!a', '!b', 'a*', '["a","b"]', '["a"]', '/a', '!/a', 'a,b');
    fc.assert(
      fc.property(fc.array(glob, { minLength: 1, maxLength: 3 }), fc.array(glob, { minLength: 1, maxLength: 3 }), fc.constantFrom('name', 'path') as fc.Arbitrary<'name' | 'path'>, (one, other, flavour) => {
        const set = compileGlobSet(one, flavour);
        const positives = one.filter((g) => !g.startsWith('!'));
        const negatives = one.filter((g) => g.startsWith('!')).map((g) => g.slice(1));
        assert.deepEqual([set.positives, set.negatives], [positives, negatives]);
        if (flavour === 'name') assert.equal(compileGlobSet([...one], flavour), set, 'the same list again');
        if (JSON.stringify(one) !== JSON.stringify(other)) assert.notEqual(compileGlobSet(other, flavour), set);
        const otherFlavour = flavour === 'name' ? 'path' : 'name';
        assert.notEqual(compileGlobSet(one, otherFlavour), set, 'name and path globs are separate');
      }),
    );
  });
});

describe('paths in normal form', () => {
  it('isNormalPath says what normalSegments says (fast-check)', () => {
    const value = fc.array(fc.constantFrom('a', '.', '/', 'b'), { maxLength: 8 }).map((c) => c.join(''));
    fc.assert(fc.property(value, (v) => assert.equal(isNormalPath(v), normalSegments(v) !== undefined, JSON.stringify(v))), { numRuns: 5_000 });
  });
});
