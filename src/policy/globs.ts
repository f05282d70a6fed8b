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
  magicalBraces: true, // else `{a,b}` alone counts as a literal below and matches only its own text
};

// A name is one segment: stand in for `/` so minimatch never treats it as a separator.
const SLASH_STANDIN = '\u2215';
// ...and starts with a fixed letter, so that minimatch's rules for the names `.`, `..` and ``
// (which no glob matches) never apply: `*` matches every name, e.g. an agent named `..`.
const NAME_START = 'n';
const asSegment = (s: string): string => NAME_START + (s.indexOf('/') === -1 ? s : s.replaceAll('/', SLASH_STANDIN));

export type GlobTest = (value: string) => boolean;

export class GlobError extends Error {}

/** Longer patterns are refused by minimatch ("pattern is too long"): they take its path to fail the same way. */
const MAX_FAST_PATTERN = 64 * 1024;

function compile(pattern: string, segment: boolean): GlobTest {
  // Fast paths for the common shapes, skipping minimatch's construction (the bulk of compiling
  // a policy) but giving exactly its answer: a literal is a string comparison, and a name glob
  // whose only magic is `*` is a match of its literal pieces in order.
  if (pattern.length <= MAX_FAST_PATTERN) {
    if (!MAGIC.test(pattern)) return (value) => value === pattern;
    if (segment && STAR_ONLY.test(pattern)) return starGlob(pattern);
  }
  let mm: Minimatch;
  try {
    mm = new Minimatch(segment ? asSegment(pattern) : pattern, options);
  } catch (error) {
    throw new GlobError(`glob ${JSON.stringify(pattern)} does not compile: ${(error as Error).message}`);
  }
  // No shortcut for "literal" patterns: minimatch calls `[e]` non-magic, yet it means `e`, not `[e]`.
  if (segment) return (value) => mm.match(asSegment(value));
  // A path glob whose every alternative starts with a literal segment (`src/**`, `/etc/*`)
  // can only match a path that starts with one of them: checking that first spares the
  // minimatch call for most of the path rules a call is tested against.
  const heads = literalFirstSegments(mm);
  if (heads === undefined) return (value) => mm.match(value);
  return (value) => {
    for (const h of heads) {
      if (value.startsWith(h) && (value.length === h.length || value.charCodeAt(h.length) === SLASH)) return mm.match(value);
    }
    return false;
  };
}

const SLASH = 0x2f;

/** The first segment of each of minimatch's alternatives, when every one is literal text. */
function literalFirstSegments(mm: Minimatch): string[] | undefined {
  const heads: string[] = [];
  for (const row of mm.set) {
    const first = row[0];
    if (typeof first !== 'string') return undefined;
    heads.push(first);
  }
  return heads.length > 0 ? heads : undefined;
}

/** Magic characters other than `*`: a name glob without them is a run of literals and stars. */
const STAR_ONLY = /^[^?[\]{}()!+@\\]*$/;

/**
 * A name glob of literals and `*`s, matched like minimatch matches it as one segment with
 * `dot: true` (and, through `asSegment`, never as the special names `.`, `..` or ``):
 * `*` takes any run of characters.
 */
function starGlob(pattern: string): GlobTest {
  const pieces = asSegment(pattern).split('*');
  const head = pieces[0]!;
  const tail = pieces[pieces.length - 1]!;
  const middle = pieces.slice(1, -1).filter((p) => p.length > 0);
  const fixed = head.length + tail.length;
  return (raw) => {
    const value = asSegment(raw);
    if (value.length < fixed || !value.startsWith(head) || !value.endsWith(tail)) return false;
    let at = head.length;
    const end = value.length - tail.length;
    for (const piece of middle) {
      const found = value.indexOf(piece, at);
      if (found === -1 || found + piece.length > end) return false;
      at = found + piece.length;
    }
    return true;
  };
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
