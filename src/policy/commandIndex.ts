// A second-level index of one tool's candidate rules by the literal first word of their command
// patterns, so a part that is one simple command is tested only against the rules that can match
// it: those whose patterns start with its first word, and those no first word rules out (no
// `commands`, or a pattern starting with a glob). First-match order is kept exactly: every list
// is the candidates in file order with the rules that cannot match taken out.
import type { CompiledRule } from './compile.js';
import { isLiteral } from './globs.js';


export class CommandIndex {
  /** For each literal first word some rule names: the rules that can match a command starting with it. */
  private readonly byWord = new Map<string, readonly CompiledRule[]>();
  /** The rules that can match a command whose first word no rule names literally. */
  private readonly anyWord: readonly CompiledRule[];

  constructor(readonly candidates: readonly CompiledRule[]) {
    const firstWords = candidates.map(literalFirstWords);
    this.anyWord = candidates.filter((_, i) => firstWords[i] === undefined);
    const words = new Set(firstWords.flatMap((w) => (w ? [...w] : [])));
    for (const word of words) {
      this.byWord.set(word, candidates.filter((_, i) => firstWords[i] === undefined || firstWords[i]!.has(word)));
    }
  }

  /** The candidates that can match a simple command whose first word is `word`, in file order. */
  forFirstWord(word: string): readonly CompiledRule[] {
    return this.byWord.get(word) ?? this.anyWord;
  }
}

/**
 * The literal first words of a rule's command patterns, or undefined when any first word could
 * match (no `commands`, or some pattern's first word is a glob). A pattern is at least one word.
 */
function literalFirstWords(rule: CompiledRule): ReadonlySet<string> | undefined {
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
