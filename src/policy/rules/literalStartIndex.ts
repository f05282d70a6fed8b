// A second-level index of one tool's candidate rules by the literal words their matchers start
// with: the leading literal words of their command patterns (`npm run build *` → npm, run, build),
// or the leading literal segments of their path globs (`src/lib/**` → src, lib). A part that is
// one simple command (or one path) is tested only against the rules whose literal start is a
// start of its own words, and those no literal start rules out (no such matcher, or one starting
// with a pattern). First-match order is kept exactly: every list is the candidates in file order
// with the rules that cannot match taken out.
import { readOptions } from '../shell/programs/optionSpellings.js';
import type { CompiledRule } from './compile.js';
import { isLiteral } from '../globs/globs.js';
import { normalSegments } from '../globs/simplePathGlob.js';

/** A rule's literal starts (one per pattern), or undefined when a part with any words could match it. */
export type LiteralStarts = readonly (readonly string[])[] | undefined;

interface TrieNode {
  readonly children: Map<string, TrieNode>;
  /** Positions (in the candidates) of the rules with a literal start ending here. */
  readonly own: number[];
  /** The rules a part whose words lead here can match, worked out at the first such part. */
  reachable?: readonly CompiledRule[];
}

export class LiteralStartIndex {
  private readonly root: TrieNode = { children: new Map(), own: [] };
  /** Positions of the rules that can match a part whatever its words. */
  private readonly anyKey: number[] = [];

  constructor(
    private readonly candidates: readonly CompiledRule[],
    startsOf: (rule: CompiledRule) => LiteralStarts,
  ) {
    candidates.forEach((rule, position) => {
      const starts = startsOf(rule);
      if (starts === undefined) {
        this.anyKey.push(position);
        return;
      }
      for (const start of starts) {
        let node = this.root;
        for (const word of start) {
          let next = node.children.get(word);
          if (!next) node.children.set(word, (next = { children: new Map(), own: [] }));
          node = next;
        }
        // A rule with several patterns under one node is listed once there.
        if (node.own[node.own.length - 1] !== position) node.own.push(position);
      }
    });
    this.root.reachable = this.anyKey.map((i) => candidates[i]!);
  }

  /** The candidates that can match a part with these words, in file order. */
  forWords(words: readonly string[]): readonly CompiledRule[] {
    let node = this.root;
    for (const word of words) {
      const next = node.children.get(word);
      if (next === undefined) break;
      node = next;
    }
    return node.reachable ?? this.workOutReachable(words);
  }

  /** The rules of every node on the words' way, and those of any words, merged back into file order (once per node). */
  private workOutReachable(words: readonly string[]): readonly CompiledRule[] {
    let node = this.root;
    const positions = new Set<number>(this.anyKey);
    for (const word of words) {
      const next = node.children.get(word);
      if (next === undefined) break;
      node = next;
      for (const p of node.own) positions.add(p);
    }
    return (node.reachable = [...positions].sort((a, b) => a - b).map((i) => this.candidates[i]!));
  }

  /** Whether some rule is indexed at all (else working out a part's words would only cost). */
  get useful(): boolean {
    return this.root.children.size > 0;
  }
}

/** The leading literal words of each of a rule's command patterns (a pattern is at least one word). */
export function commandStarts(rule: CompiledRule): LiteralStarts {
  const source = rule.rule.commands;
  if (source === undefined) return undefined;
  const starts: string[][] = [];
  for (const pattern of source) {
    const words = pattern.trim().split(/\s+/);
    // A pattern read as options (`git push --force *`) also takes `git -C d push -f`: only its program leads.
    const start = readOptions(words)?.options.size ? literalLead(words.slice(0, 1)) : literalLead(words);
    if (start.length === 0) return undefined;
    starts.push(start);
  }
  return starts;
}

/** The segments of a workspace-relative path ('' for the folder itself: none), or one that no glob literal starts with. */
export function pathWords(relative: string | null): readonly string[] {
  if (relative === null) return OUTSIDE_WORKSPACE;
  // The same split the path globs then read (a relative path from the resolver is in normal form).
  return relative === '' ? [] : (normalSegments(relative) ?? relative.split('/'));
}

/** A path outside the workspace folder: only absolute globs (never indexed) match it. */
const OUTSIDE_WORKSPACE: readonly string[] = ['\u0000outside'];

/**
 * The leading literal segments of a rule's positive path globs; undefined for an absolute glob,
 * a first segment that is a pattern, or a glob with a `.`, `..` or empty segment anywhere
 * (minimatch folds `src/../secrets/**` into `secrets/**`: its first segment is not `src`).
 */
export function pathStarts(rule: CompiledRule): LiteralStarts {
  // The globs as written: reading them does not compile the rule's matchers (they may be lazy).
  const source = rule.rule.paths;
  if (source === undefined) return undefined;
  const starts: string[][] = [];
  for (const glob of source) {
    if (glob.startsWith('!')) continue;
    if (glob.startsWith('/')) return undefined;
    const all = glob.split('/');
    if (all.some((s) => s === '' || s === '.' || s === '..')) return undefined;
    const start = literalLead(all);
    if (start.length === 0) return undefined;
    starts.push(start);
  }
  return starts.length > 0 ? starts : undefined;
}

/** The words before the first that is a pattern. */
function literalLead(words: readonly string[]): string[] {
  const lead: string[] = [];
  for (const w of words) {
    if (w === '' || !isLiteral(w)) break;
    lead.push(w);
  }
  return lead;
}
