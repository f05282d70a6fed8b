// Command patterns and JSON Pointers are read without intermediate lists; these properties hold
// them to the plain readings (trim, split on blanks, drop empties; split, unescape every token).
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileCommandPattern } from '../../src/policy/rules/commandPatterns.js';
import { parsePointer } from '../../src/policy/rules/compile.js';
import { compileNameGlob, GlobError } from '../../src/policy/globs/globs.js';

const blank = fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u2003', '\ufeff', '\u2028');
const word = fc.constantFrom('git', '*', 'a*b', '-C', 'x~1', '');

describe('command patterns and pointers as read', () => {
  it('a command pattern has the words of the plain split, the last * making it open (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(word, blank), { maxLength: 8 }), (parts) => {
        const text = parts.join('');
        const words = text.trim().split(/\s+/).filter((w) => w.length > 0);
        if (words.length === 0) {
          assert.throws(() => compileCommandPattern(text), GlobError);
          return;
        }
        const open = words[words.length - 1] === '*';
        const pattern = compileCommandPattern(text);
        assert.equal(pattern.open, open);
        // Compiled globs are shared per distinct text: the same word gives the same test.
        assert.deepEqual(pattern.words, (open ? words.slice(0, -1) : words).map(compileNameGlob));
      }),
    );
  });

  it('a pointer has the tokens of the plain split and unescape (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('/', '~0', '~1', '~', 'a', '01', '~01'), { maxLength: 6 }), (parts) => {
        const pointer = parts.join('');
        const expected = pointer === '' ? [] : pointer.startsWith('/') ? pointer.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~')) : undefined;
        assert.deepEqual(parsePointer(pointer), expected, pointer);
      }),
    );
  });
});
