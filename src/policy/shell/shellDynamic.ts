// Static words: a word is static when bash reads it as exactly its quote-removed text, so the
// splitter knows what it is (`rm`, 'rm', r\m). A word with an expansion ($X, $(..), `..`, ${..}),
// an unquoted glob character (* ? [) or a brace expansion (r{m,}, {a..b}) is only known when it
// runs. A simple command whose program word is not static is `dynamic` (shellWalker.ts).
import type { ShellNode } from './shellTree.js';
import { shareRedirectFiles } from './shellRedirects.js';
import type { SimpleCommand } from './shellCommand.js';

/**
 * Which words of a command are not static, for the commands that have one. Kept beside the
 * command, not in it: the words are strings, and `'$X'` and `$X` both read `$X`.
 */
const dynamicWords = new WeakMap<SimpleCommand, readonly boolean[]>();

/** Records which of `cmd`'s words are not static (index-aligned with `cmd.words`). */
export function setDynamicWords(cmd: SimpleCommand, flags: readonly boolean[]): void {
  if (flags.some((f) => f)) dynamicWords.set(cmd, flags);
  else dynamicWords.delete(cmd);
}

/** Which of `cmd`'s words are not static; undefined when all are (the fast path's commands, for one). */
export function dynamicWordsOf(cmd: SimpleCommand): readonly boolean[] | undefined {
  return dynamicWords.get(cmd);
}

/**
 * A further part made of `cmd`'s words from `from` on (an unwrapped wrapper, assignments
 * dropped): it carries their static-ness, and is `dynamic` when its program word is not static.
 */
export function partOf(cmd: SimpleCommand, words: string[], from: number): SimpleCommand {
  const part: SimpleCommand = { words, writesToFile: cmd.writesToFile, usesProcessSubstitution: cmd.usesProcessSubstitution };
  shareRedirectFiles(cmd, part);
  const flags = dynamicWords.get(cmd);
  if (flags && from >= 0) {
    const own = flags.slice(from, from + words.length);
    setDynamicWords(part, own);
    if (own[0]) part.dynamic = true;
  }
  return part;
}

/** NAME=value, NAME+=value, NAME[sub]=value: an assignment, when it leads a command. */
export function isAssignmentWord(word: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/.test(word);
}

/** The index of the program word: the first after leading assignments (words.length if none). */
export function programIndex(words: readonly string[]): number {
  let i = 0;
  while (i < words.length && isAssignmentWord(words[i]!)) i++;
  return i;
}

/** Is word `index` of `cmd` static? */
export function isStaticWord(cmd: SimpleCommand, index: number): boolean {
  return dynamicWords.get(cmd)?.[index] !== true;
}

// Unquoted glob characters, or a brace expansion ({a,b}, {1..3}): in the word's shape below.
const DYNAMIC_SHAPE = /[*?[]|\{[^{}]*(?:,|\.\.)[^{}]*\}/;
const MAYBE_DYNAMIC = /[*?[{]/;

/** Is the word `node` static (see above)? */
export function isStaticNode(node: ShellNode, source: string): boolean {
  if (node.hasExpansion) return false;
  // Most words are plain: one test, no shape.
  if (node.type === 'word' && !MAYBE_DYNAMIC.test(source.slice(node.startIndex, node.endIndex))) return true;
  const shape = shapeOf(node, source);
  return shape !== undefined && !DYNAMIC_SHAPE.test(shape);
}

/**
 * The word with quoted text and escaped characters replaced by `_`, so only unquoted
 * characters can look like a glob or a brace; undefined when the node is a pattern itself.
 */
function shapeOf(node: ShellNode, source: string): string | undefined {
  switch (node.type) {
    case 'word':
      return source.slice(node.startIndex, node.endIndex).replace(/\\[\s\S]?/g, '_');
    case 'extglob_pattern':
    case 'brace_expression':
      return undefined;
    case 'raw_string':
    case 'ansi_c_string':
    case 'string':
    case 'translated_string':
      return '_';
    default: {
      if (node.children.length === 0) return node.isNamed ? source.slice(node.startIndex, node.endIndex) : '_';
      let shape = '';
      for (const child of node.children) {
        const s = shapeOf(child, source);
        if (s === undefined) return undefined;
        shape += s;
      }
      return shape;
    }
  }
}
