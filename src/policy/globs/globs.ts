// Glob sets compiled once per policy. Two flavours:
//  - path globs: minimatch over workspace-relative paths, where `*` stays within one segment;
//  - name globs (tool ids, agent names, command words, input strings): one opaque string in
//    which `*` matches any run of characters, dots and slashes included.
import { Minimatch, type MinimatchOptions } from 'minimatch';
import { isNormalPath, normalSegments, simplePathGlob } from './simplePathGlob.js';

export const MINIMATCH_OPTIONS: MinimatchOptions = {
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
  // a policy) but giving exactly its answer.
  if (pattern.length <= MAX_FAST_PATTERN) {
    const fast = segment ? fastNameGlob(pattern) : fastPathGlob(pattern);
    if (fast) return fast;
  }
  const source = segment ? asSegment(pattern) : pattern;
  const braces = braceProblem(source);
  if (braces !== undefined) throw new GlobError(`glob ${JSON.stringify(pattern)} ${braces}`);
  let mm: Minimatch;
  try {
    mm = new Minimatch(source, MINIMATCH_OPTIONS);
  } catch (error) {
    throw new GlobError(`glob ${JSON.stringify(pattern)} does not compile: ${(error as Error).message}`);
  }
  // The estimate above is an upper bound for the usual shapes; bash's odd ones (`{a},b}`) are checked here.
  if (mm.set.length > MAX_BRACE_ALTERNATIVES) throw new GlobError(`glob ${JSON.stringify(pattern)} ${tooMany()}`);
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

/** A name glob of literals and `*`s: a string comparison, or a match of its literal pieces in order. */
function fastNameGlob(pattern: string): GlobTest | undefined {
  if (!STAR_ONLY.test(pattern)) return undefined;
  return pattern.includes('*') ? starGlob(pattern) : (value) => value === pattern;
}

/**
 * A path glob of the simple shapes (simplePathGlob.ts), answered without minimatch for paths in
 * normal form (what the resolver gives); any other path gets minimatch's own answer, built once if ever.
 */
function fastPathGlob(pattern: string): GlobTest | undefined {
  const simple = simplePathGlob(pattern);
  if (!simple) return undefined;
  let mm: Minimatch | undefined;
  const minimatch = (value: string): boolean => (mm ??= new Minimatch(pattern, MINIMATCH_OPTIONS)).match(value);
  // A literal matches itself; minimatch also reads `a/` as `a`, and folds `a/../b`.
  if (!MAGIC.test(pattern)) return (value) => value === pattern || (!isNormalPath(value) && minimatch(value));
  return (value) => {
    const segments = normalSegments(value);
    return segments ? simple(segments) : minimatch(value);
  };
}

/** minimatch expands `{a,b}` into one pattern per alternative: more than this is refused. */
export const MAX_BRACE_ALTERNATIVES = 1000;
/** Braces nested deeper than this are refused (expanding them rescans every level). */
export const MAX_BRACE_DEPTH = 10;

const tooMany = (): string => `expands to more than ${MAX_BRACE_ALTERNATIVES} alternatives; split it into several globs`;

const NUMERIC_SEQUENCE = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/;
const ALPHA_SEQUENCE = /^([a-zA-Z])\.\.([a-zA-Z])(?:\.\.(-?\d+))?$/;

/**
 * Why the braces of `pattern` would expand too far, or undefined. One linear pass: the count is
 * an upper bound on brace expansion's, the product over brace groups of their alternatives
 * (commas + 1, or the length of a `{x..y}` sequence), so it never expands anything itself.
 */
function braceProblem(pattern: string): string | undefined {
  if (pattern.indexOf('{') === -1) return undefined;
  // Per open group: its start and the number of top-level commas seen in it.
  const open: { start: number; commas: number }[] = [];
  let count = 1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
    } else if (c === '{') {
      open.push({ start: i, commas: 0 });
      if (open.length > MAX_BRACE_DEPTH) return `nests braces more than ${MAX_BRACE_DEPTH} deep`;
    } else if (c === ',' && open.length > 0) {
      open[open.length - 1]!.commas++;
    } else if (c === '}' && open.length > 0) {
      const group = open.pop()!;
      let alternatives = group.commas + 1;
      if (group.commas === 0) alternatives = sequenceLength(pattern.slice(group.start + 1, i));
      count *= alternatives;
      if (count > MAX_BRACE_ALTERNATIVES) return tooMany();
    }
  }
  return undefined;
}

/** The number of values of a `{1..9}`, `{a..z}` or `{0..100..5}` sequence; 1 for other text. */
function sequenceLength(body: string): number {
  const numeric = NUMERIC_SEQUENCE.exec(body);
  const alpha = numeric ? null : ALPHA_SEQUENCE.exec(body);
  const m = numeric ?? alpha;
  if (!m) return 1;
  const from = numeric ? Number(m[1]) : m[1]!.charCodeAt(0);
  const to = numeric ? Number(m[2]) : m[2]!.charCodeAt(0);
  const step = Math.abs(m[3] === undefined ? 1 : Number(m[3])) || 1;
  const n = Math.floor(Math.abs(to - from) / step) + 1;
  return Number.isFinite(n) ? n : Infinity;
}

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

/**
 * Magic characters other than `*`: a name glob without them is a run of literals and stars.
 * `@`, `+` and `!` are magic only before `(` (an extglob), so an e-mail glob stays fast.
 */
const STAR_ONLY = /^[^?[\]{}()\\]*$/;

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

/**
 * Each distinct glob is compiled once (a policy repeats `src/**` across rules, and an edited
 * file is compiled again): a compiled glob is a pure test, safe to share. Bounded; a glob
 * that does not compile is not remembered, so its error is raised each time.
 */
const compiledNames = new Map<string, GlobTest>();
const compiledPaths = new Map<string, GlobTest>();
const COMPILED_LIMIT = 20_000;
const COMPILED_MAX_LENGTH = 1024;

// One map per flavour, keyed by the pattern itself: no key string is built per glob.
function compileOnce(pattern: string, segment: boolean): GlobTest {
  const cache = segment ? compiledNames : compiledPaths;
  let test = cache.get(pattern);
  if (test === undefined) {
    test = compile(pattern, segment);
    if (pattern.length > COMPILED_MAX_LENGTH) return test; // bounded in bytes too
    if (cache.size >= COMPILED_LIMIT) cache.clear();
    cache.set(pattern, test);
  }
  return test;
}

/** Forgets every compiled glob and glob set: a benchmark of a first compile must not be helped by an earlier one. */
export function forgetCompiledGlobs(): void {
  compiledNames.clear();
  compiledPaths.clear();
  compiledSets.one.clear();
  compiledSets.many.clear();
}

export function compileNameGlob(pattern: string): GlobTest {
  return compileOnce(pattern, true);
}

export function compilePathGlob(pattern: string): GlobTest {
  return compileOnce(pattern, false);
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

/** A name glob `prefix*` with no other magic: it matches every name that starts with the prefix. */
export function isOpenPrefix(glob: string): boolean {
  return glob.endsWith('*') && isLiteral(glob.slice(0, -1).replace(/\*+$/, ''));
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

/** The set of no globs, shared: a path rule has four sets (relative and absolute, in and out), most of them empty. */
const EMPTY_SET: GlobSet = Object.freeze({ positives: Object.freeze([]), negatives: Object.freeze([]), test: () => false });

/**
 * Each distinct list of name globs is built once, as each glob is: most rules repeat a few
 * `tools` lists, and a set is a pure test, safe to share. (Path lists are mostly a rule's own:
 * the key would cost more than it saves; their globs are still compiled once.) A list of one
 * glob is keyed by the glob (no key string per rule), a longer one by its JSON text, in a map of
 * its own (a glob may read like a list's JSON). Bounded like the globs; a list that does not
 * compile is not remembered.
 */
const compiledSets = { one: new Map<string, GlobSet>(), many: new Map<string, GlobSet>() };

export function compileGlobSet(patterns: readonly string[], flavour: 'name' | 'path'): GlobSet {
  if (patterns.length === 0) return EMPTY_SET;
  if (flavour === 'path') return buildGlobSet(patterns, flavour);
  const cache = patterns.length === 1 ? compiledSets.one : compiledSets.many;
  const key = patterns.length === 1 ? patterns[0]! : JSON.stringify(patterns);
  let set = cache.get(key);
  if (set === undefined) {
    set = buildGlobSet(patterns, flavour);
    if (key.length > COMPILED_MAX_LENGTH) return set;
    if (cache.size >= COMPILED_LIMIT) cache.clear();
    cache.set(key, set);
  }
  return set;
}

function buildGlobSet(patterns: readonly string[], flavour: 'name' | 'path'): GlobSet {
  const positives: string[] = [];
  const negatives: string[] = [];
  for (const p of patterns) {
    if (p.startsWith('!')) negatives.push(p.slice(1));
    else positives.push(p);
  }
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
