// Whether one rule matches every call another could match (lint's `shadowed`, and the rules on
// paths that may take a path the judge cannot place: policy.ts). It must be sound: it may miss a
// covered rule, but never names one that some call can reach. So every test proves inclusion by
// construction (identical globs, literals tested against the earlier rule, prefixes of `*`
// globs), never by sampling.
import { canonicalJson, type CompiledRule, type PathMatcher } from './compile.js';
import { isLiteral, isOpenPrefix, literalPrefix, type GlobSet } from '../globs/globs.js';
import type { Decision } from '../file/schema.js';

/** True only when every call that `later` matches is provably matched by `earlier`. */
export function covers(earlier: CompiledRule, later: CompiledRule): boolean {
  return (
    nameSetCovers(earlier.tools, later.tools) &&
    nameSetCovers(earlier.agents, later.agents) &&
    subsetCovers(earlier.kinds, later.kinds) &&
    subsetCovers(earlier.tags, later.tags) &&
    hintsCover(earlier.hints, later.hints) &&
    inputCovers(earlier, later) &&
    partsCover(earlier, later, 'paths') &&
    partsCover(earlier, later, 'commands') &&
    urlsCover(earlier, later, 'domains') &&
    urlsCover(earlier, later, 'urls') &&
    whenCovers(earlier, later)
  );
}

/**
 * Flow rules: an earlier rule with `when` decides only in sessions whose marks fit it, so it
 * covers a later rule only when every session the later one can decide in fits it too: the later
 * rule asks for at least the same `marked` and `unmarked` labels.
 */
function whenCovers(a: CompiledRule, b: CompiledRule): boolean {
  const aWhen = a.rule.when;
  if (aWhen === undefined) return true;
  // Where the marks are not known (a hook), a `when` allow never decides but a later ask or deny does.
  if (a.decision === 'allow' && b.decision !== 'allow') return false;
  const bWhen = b.rule.when;
  const within = (need: readonly string[] | undefined, given: readonly string[] | undefined): boolean =>
    need === undefined || need.every((m) => given?.includes(m) === true);
  return within(aWhen.marked, bWhen?.marked) && within(aWhen.unmarked, bWhen?.unmarked);
}

const MATCH_ALL_NAME = new Set(['*', '**']);

/** Name globs: `*` matches any run of characters, so `p*` covers everything starting with `p`. */
function nameSetCovers(a: GlobSet | undefined, b: GlobSet | undefined): boolean {
  if (a === undefined) return true;
  const aHasNoExcludes = a.negatives.length === 0;
  if (aHasNoExcludes && a.positives.some((p) => MATCH_ALL_NAME.has(p))) return true;
  if (b === undefined) return false;
  const excludesKept = a.negatives.every((n) => b.negatives.includes(n));
  return b.positives.every((p) => {
    if (isLiteral(p)) return a.test(p);
    if (!excludesKept) return false;
    return a.positives.some((q) => q === p || (isOpenPrefix(q) && literalPrefix(p).startsWith(q.slice(0, -1))));
  });
}

function subsetCovers<T>(a: ReadonlySet<T> | undefined, b: ReadonlySet<T> | undefined): boolean {
  if (a === undefined) return true;
  if (b === undefined) return false;
  for (const x of b) if (!a.has(x)) return false;
  return true;
}

function hintsCover(a: CompiledRule['hints'], b: CompiledRule['hints']): boolean {
  if (a === undefined) return true;
  if (b === undefined) return false;
  return a.every(([name, value]) => b.some(([n, v]) => n === name && v === value));
}

function inputCovers(a: CompiledRule, b: CompiledRule): boolean {
  const aInput = a.rule.input;
  if (aInput === undefined) return true;
  const bInput = b.rule.input;
  if (bInput === undefined) return false;
  return Object.entries(aInput).every(([pointer, m]) => pointer in bInput && canonicalJson(bInput[pointer]) === canonicalJson(m));
}

const isLoosening = (d: Decision): boolean => d === 'allow';

/**
 * Paths and commands are multi-part: allow needs every part, ask/deny any part. An earlier
 * every-part rule never covers a later any-part one (the later can match on one part alone).
 */
function partsCover(a: CompiledRule, b: CompiledRule, field: 'paths' | 'commands'): boolean {
  if (a[field] === undefined) return true;
  if (b[field] === undefined) return false;
  if (isLoosening(a.decision) && !isLoosening(b.decision)) return false;
  return field === 'paths' ? pathSetCovers(a.paths!, b.paths!) : commandSetCovers(a, b);
}

function pathSetCovers(a: PathMatcher, b: PathMatcher): boolean {
  const aNeg = a.source.filter((p) => p.startsWith('!'));
  const bNeg = b.source.filter((p) => p.startsWith('!'));
  const excludesKept = aNeg.every((n) => bNeg.includes(n));
  const aPos = a.source.filter((p) => !p.startsWith('!'));
  return b.source.filter((p) => !p.startsWith('!')).every((p) => {
    const absolute = p.startsWith('/');
    // A literal relative path is tested against the earlier rule directly (its absolute
    // excludes could still catch it, so there must be none).
    if (!absolute && isLiteral(p) && a.absolute.exclude.positives.length === 0) {
      return a.relative.include.test(p) && !a.relative.exclude.test(p);
    }
    if (!excludesKept) return false;
    return aPos.includes(p) || (!absolute && aPos.includes('**'));
  });
}

function commandSetCovers(a: CompiledRule, b: CompiledRule): boolean {
  const words = (source: string): string[] => source.trim().split(/\s+/);
  const aPatterns = a.commands!.map((p) => words(p.source));
  return b.commands!.every((bp) => {
    const bw = words(bp.source);
    return aPatterns.some((aw) => {
      const open = aw[aw.length - 1] === '*';
      const fixed = open ? aw.slice(0, -1) : aw;
      if (!open) return aw.length === bw.length && aw.every((w, i) => w === bw[i]);
      const bFixed = bw[bw.length - 1] === '*' ? bw.slice(0, -1) : bw;
      return bFixed.length >= fixed.length && fixed.every((w, i) => w === bFixed[i]);
    });
  });
}

/**
 * `domains` and `urls` read a view's URLs like paths: an allow never covers a later ask or deny
 * (those also take unknown URLs). Literal patterns are tested against the earlier rule; a host
 * glob `*.x` covers every pattern under `.x`; otherwise only identical patterns cover.
 */
function urlsCover(a: CompiledRule, b: CompiledRule, field: 'domains' | 'urls'): boolean {
  const am = a[field];
  if (am === undefined) return true;
  const bm = b[field];
  if (bm === undefined) return false;
  if (isLoosening(a.decision) && !isLoosening(b.decision)) return false;
  const excludesKept = am.negatives.every((n) => bm.negatives.includes(n));
  return bm.positives.every((p) => {
    if (!p.includes('*')) return am.test(field === 'domains' ? { known: true, text: p, url: `http://${p}/`, host: p } : { known: true, text: p, url: p, host: '' });
    if (!excludesKept) return false;
    return am.positives.some((q) => q === p || q === '*' || (field === 'domains' && hostGlobCovers(q, p)));
  });
}

/** `*.x` covers `*.x`, `*.a.x` and `api-*.x` (every host they match ends in `.x`). */
function hostGlobCovers(q: string, p: string): boolean {
  if (!q.startsWith('*.') || q.slice(2).includes('*')) return false;
  const suffix = q.slice(1);
  const body = p.startsWith('*.') ? p.slice(2) : p;
  return body.endsWith(suffix) || (p.startsWith('*.') && body === q.slice(2));
}
