// A second-level index of one tool's candidate rules by a literal key each rule's matchers start
// with: the first word of its command patterns, or the first segment of its path globs. A part
// that is one simple command (or one path) is tested only against the rules whose keys include its
// own, and those no key rules out (no such matcher, or one starting with a pattern). First-match
// order is kept exactly: every list is the candidates in file order with the rules that cannot
// match taken out.
import type { CompiledRule } from './compile.js';
import { isLiteral } from './globs.js';

export class FirstKeyIndex {
  private readonly byKey = new Map<string, readonly CompiledRule[]>();
  /** The rules that can match a part whose key no rule names literally. */
  private readonly anyKey: readonly CompiledRule[];

  /** `keysOf`: a rule's literal keys, or undefined when a part of any key could match it. */
  constructor(candidates: readonly CompiledRule[], keysOf: (rule: CompiledRule) => ReadonlySet<string> | undefined) {
    const keys = candidates.map(keysOf);
    this.anyKey = candidates.filter((_, i) => keys[i] === undefined);
    for (const key of new Set(keys.flatMap((k) => (k ? [...k] : [])))) {
      this.byKey.set(key, candidates.filter((_, i) => keys[i] === undefined || keys[i]!.has(key)));
    }
  }

  /** The candidates that can match a part with this key, in file order. */
  forKey(key: string): readonly CompiledRule[] {
    return this.byKey.get(key) ?? this.anyKey;
  }

  /** Whether some rule is indexed at all (else working out a part's key would only cost). */
  get useful(): boolean {
    return this.byKey.size > 0;
  }
}

/** The literal first words of a rule's command patterns (a pattern is at least one word). */
export function commandKeys(rule: CompiledRule): ReadonlySet<string> | undefined {
  const source = rule.rule.commands;
  if (source === undefined) return undefined;
  const words = new Set<string>();
  for (const pattern of source) {
    const first = pattern.trim().split(/\s+/)[0];
    if (first === undefined || first === '' || !isLiteral(first)) return undefined;
    words.add(first);
  }
  return words;
}

/** The key of a path outside the workspace folder: only absolute globs (never indexed) match it. */
export const OUTSIDE_WORKSPACE = '\u0000outside';

/** The first segment of a workspace-relative path ('' for the folder itself), or OUTSIDE_WORKSPACE. */
export function firstSegment(relative: string | null): string {
  if (relative === null) return OUTSIDE_WORKSPACE;
  const slash = relative.indexOf('/');
  return slash === -1 ? relative : relative.slice(0, slash);
}

/**
 * The literal first segments of a rule's positive path globs; undefined for an absolute glob, a
 * first segment that is a pattern, or a glob with a `.`, `..` or empty segment anywhere
 * (minimatch folds `src/../secrets/**` into `secrets/**`: its first segment is not `src`).
 */
export function pathKeys(rule: CompiledRule): ReadonlySet<string> | undefined {
  const source = rule.paths?.source;
  if (source === undefined) return undefined;
  const segments = new Set<string>();
  for (const glob of source) {
    if (glob.startsWith('!')) continue;
    if (glob.startsWith('/')) return undefined;
    const all = glob.split('/');
    if (all.some((s) => s === '' || s === '.' || s === '..') || !isLiteral(all[0]!)) return undefined;
    segments.add(all[0]!);
  }
  return segments.size > 0 ? segments : undefined;
}
