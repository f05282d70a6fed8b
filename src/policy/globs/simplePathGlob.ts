// Path globs of the common shapes (`src/**`, `area/src/**/*.ts`, `docs/*.md`, `/etc/**`)
// matched without building a minimatch: building one is most of what compiling a policy costs.
// Only literal segments, `**`, and segments whose only magic is `*` take this way; and only
// paths in normal form are answered here (what the path resolver produces). Anything else
// goes to minimatch, so the answer is always minimatch's (a fast-check property compares them).

/** A pattern segment: literal text, `**`, or the literal pieces around a segment's `*`s. */
type Segment = { kind: 'literal'; text: string } | { kind: 'globstar' } | { kind: 'star'; pieces: string[] };

/** Characters with a meaning to minimatch other than `*` and `/` (`@`, `+`, `!` only before a `(`). */
const OTHER_MAGIC = /[?[\]{}()\\]/;

/** A segment matcher for `pattern`, or undefined when it is not one of the simple shapes. */
export function simplePathGlob(pattern: string): ((segments: readonly string[]) => boolean) | undefined {
  if (OTHER_MAGIC.test(pattern)) return undefined;
  const raw = pattern.split('/');
  const segments: Segment[] = [];
  for (let i = 0; i < raw.length; i++) {
    const s = raw[i]!;
    // An empty segment is a leading `/` only; `.` and `..` are rewritten by minimatch.
    if (s === '' ? i !== 0 : s === '.' || s === '..') return undefined;
    if (s === '**') {
      // minimatch folds `**/**`: leave that to it rather than match its reading.
      if (segments[segments.length - 1]?.kind === 'globstar') return undefined;
      segments.push({ kind: 'globstar' });
    } else if (s.includes('*')) segments.push({ kind: 'star', pieces: s.split('*') });
    else segments.push({ kind: 'literal', text: s });
  }
  // minimatch's trailing `**` takes at least one segment (`a/**` does not match `a`): it reads as `*/**`.
  if (segments.length > 1 && segments[segments.length - 1]!.kind === 'globstar') {
    segments.splice(segments.length - 1, 0, { kind: 'star', pieces: ['', ''] });
  }
  return (path) => matchSegments(segments, path);
}

/**
 * The segments of a path in normal form (no empty segment but the first of an absolute path,
 * no `.` or `..`, not empty), or undefined for any other path.
 */
export function normalSegments(path: string): readonly string[] | undefined {
  // The rules judging one call test its path one after another: it is split once for all of them.
  if (path === lastSplit) return lastSegments;
  const segments = splitNormal(path);
  lastSplit = path;
  lastSegments = segments;
  return segments;
}

let lastSplit: string | undefined;
let lastSegments: readonly string[] | undefined;

function splitNormal(path: string): string[] | undefined {
  if (path === '') return undefined;
  const segments: string[] = [];
  let start = 0;
  for (;;) {
    const end = path.indexOf('/', start);
    const s = end < 0 ? path.slice(start) : path.slice(start, end);
    // Empty only as the first segment of an absolute path; never `.` or `..`.
    if (s === '' ? start !== 0 || end < 0 : s === '.' || s === '..') return undefined;
    segments.push(s);
    if (end < 0) return segments;
    start = end + 1;
  }
}

/** Whether a path is in normal form, as normalSegments says, without splitting it. */
export function isNormalPath(path: string): boolean {
  if (path === '' || path === '/') return false;
  let start = path.charCodeAt(0) === SLASH ? 1 : 0;
  for (let i = start; i <= path.length; i++) {
    if (i < path.length && path.charCodeAt(i) !== SLASH) continue;
    const length = i - start;
    if (length === 0) return false;
    if (path.charCodeAt(start) === DOT && (length === 1 || (length === 2 && path.charCodeAt(start + 1) === DOT))) return false;
    start = i + 1;
  }
  return true;
}

const SLASH = 0x2f;
const DOT = 0x2e;

/** Wildcard matching over segments, `**` taking any run of them: linear backtracking to the last `**`. */
function matchSegments(pattern: readonly Segment[], path: readonly string[]): boolean {
  let p = 0;
  let f = 0;
  let starP = -1;
  let starF = 0;
  while (f < path.length) {
    const seg = pattern[p];
    if (seg !== undefined && seg.kind === 'globstar') {
      starP = p++;
      starF = f;
    } else if (seg !== undefined && segmentMatches(seg, path[f]!)) {
      p++;
      f++;
    } else if (starP !== -1) {
      p = starP + 1;
      f = ++starF;
    } else return false;
  }
  while (p < pattern.length && pattern[p]!.kind === 'globstar') p++;
  return p === pattern.length;
}

function segmentMatches(seg: Segment, name: string): boolean {
  if (seg.kind === 'literal') return seg.text === name;
  if (seg.kind === 'globstar') return true;
  // A star never takes the empty first segment of an absolute path.
  if (name === '') return false;
  const pieces = seg.pieces;
  const head = pieces[0]!;
  const tail = pieces[pieces.length - 1]!;
  if (name.length < head.length + tail.length || !name.startsWith(head) || !name.endsWith(tail)) return false;
  let at = head.length;
  const end = name.length - tail.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i]!;
    if (piece === '') continue;
    const found = name.indexOf(piece, at);
    if (found === -1 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}
