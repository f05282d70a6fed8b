// Glob sets compiled once per policy. Two flavours:
//  - path globs: minimatch over workspace-relative paths, where `*` stays within one segment;
//  - name globs (tool ids, agent names, command words, input strings): one opaque string in
//    which `*` matches any run of characters, dots and slashes included.
import { Minimatch, type MinimatchOptions } from 'minimatch';

const options: MinimatchOptions = {
  dot: true, // `secrets/**` must cover `secrets/.key`
  nocomment: true,
  nonegate: true, // `!` is handled here, uniformly for every glob list
  platform: 'linux', // the same meaning on every OS: `/` separates, `\` escapes
};

// A name is one segment: stand in for `/` so minimatch never treats it as a separator.
const SLASH_STANDIN = '\u2215';
const asSegment = (s: string): string => (s.indexOf('/') === -1 ? s : s.replaceAll('/', SLASH_STANDIN));

export type GlobTest = (value: string) => boolean;

export class GlobError extends Error {}

function compile(pattern: string, segment: boolean): GlobTest {
  let mm: Minimatch;
  try {
    mm = new Minimatch(segment ? asSegment(pattern) : pattern, options);
  } catch (error) {
    throw new GlobError(`glob ${JSON.stringify(pattern)} does not compile: ${(error as Error).message}`);
  }
  if (!mm.hasMagic()) {
    // Literal: a string comparison is both faster and exact.
    const literal = pattern.replace(/\\(.)/g, '$1');
    return (value) => value === literal;
  }
  return segment ? (value) => mm.match(asSegment(value)) : (value) => mm.match(value);
}

export function compileNameGlob(pattern: string): GlobTest {
  return compile(pattern, true);
}

export function compilePathGlob(pattern: string): GlobTest {
  return compile(pattern, false);
}

/** Characters that can make a glob match more than its literal text. */
const MAGIC = /[*?[\]{}()!+@\\]/;

/** The literal text every match of `pattern` starts with (used to index rules by tool id). */
export function literalPrefix(pattern: string): string {
  const i = pattern.search(MAGIC);
  return i === -1 ? pattern : pattern.slice(0, i);
}

export function isLiteral(pattern: string): boolean {
  return !MAGIC.test(pattern);
}

/**
 * A list of globs where `!glob` excludes: a value matches when it matches at least one
 * positive glob and no negative one. A list with no positive glob matches nothing.
 */
export interface GlobSet {
  readonly positives: readonly string[];
  readonly negatives: readonly string[];
  test(value: string): boolean;
}

export function compileGlobSet(patterns: readonly string[], flavour: 'name' | 'path'): GlobSet {
  const positives: string[] = [];
  const negatives: string[] = [];
  for (const p of patterns) (p.startsWith('!') ? negatives : positives).push(p.startsWith('!') ? p.slice(1) : p);
  const make = flavour === 'name' ? compileNameGlob : compilePathGlob;
  const pos = positives.map(make);
  const neg = negatives.map(make);
  return {
    positives,
    negatives,
    test(value: string): boolean {
      let hit = false;
      for (const t of pos) {
        if (t(value)) {
          hit = true;
          break;
        }
      }
      if (!hit) return false;
      for (const t of neg) if (t(value)) return false;
      return true;
    },
  };
}
