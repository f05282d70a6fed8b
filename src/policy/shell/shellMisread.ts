// Where tree-sitter-bash's tree does not hold the words bash reads, though it reports no error.
// Each case was found by running lines through both (shellVsBash.test.ts runs them): such a line
// is unparseable, so never allowed.
import { positionOf, quotedSnippet, type ShellNode } from './shellTree.js';

/** Nodes whose text between children is content (a heredoc's or a string's text), not skipped input. */
const TEXT_CONTAINERS = new Set(['heredoc_body', 'string', 'translated_string']);
/** Nodes inside which bash does not split words on blanks as it reads the line. */
const OTHER_WORD_RULES = new Set(['expansion', 'arithmetic_expansion', 'test_command', 'subscript', 'regex', 'extglob_pattern']);
/** Nodes that hold commands again, wherever they are. */
const COMMANDS_AGAIN = new Set(['command_substitution', 'process_substitution']);
/** What may stand between tokens without a node: blanks and line continuations. */
const BETWEEN_TOKENS = /^(?:[ \t\r\n]|\\\r?\n)*$/;

/**
 * Where the parser's tree does not hold the words bash reads, as a message, or undefined.
 * tree-sitter-bash passes over a lone `-` before an assignment (`- a=b`, `FOO=1 - a=b`) and `\ `
 * between words, with no node and no error, where bash runs or passes them; and it reads some
 * blank-separated brackets as one word (`p1 { }`, `x [ ]`), where bash passes two. So every
 * character must be in a node or be blank, and no word may hold a blank bash would split on.
 */
export function misreadInput(root: ShellNode, source: string): string | undefined {
  const gap = (from: number, to: number): string | undefined => {
    if (to <= from) return undefined;
    const text = source.slice(from, to);
    if (BETWEEN_TOKENS.test(text)) return undefined;
    const shown = text.trim();
    return `the parser passed over ${quotedSnippet(shown)} at ${positionOf(source, from + text.indexOf(shown[0] ?? ''))}`;
  };
  const first = gap(0, root.startIndex) ?? gap(root.endIndex, source.length);
  if (first !== undefined) return first;
  // Without recursion (a list of thousands of commands nests as deep). `commandWords`: outside
  // ${...}, $((...)) and [[ ... ]], whose words bash reads by other rules.
  const stack: Array<[ShellNode, boolean]> = [[root, true]];
  while (stack.length > 0) {
    const [node, commandWords] = stack.pop()!;
    if (commandWords && node.type === 'word' && hasUnescapedBlank(source, node.startIndex, node.endIndex)) {
      return `the parser read ${quotedSnippet(source.slice(node.startIndex, node.endIndex))} at ${positionOf(source, node.startIndex)} as one word, which bash splits`;
    }
    if (node.children.length === 0) continue;
    if (TEXT_CONTAINERS.has(node.type)) {
      // its text is content, but a $(...) in it holds commands
      for (const child of node.children) stack.push([child, false]);
      continue;
    }
    const inner = COMMANDS_AGAIN.has(node.type) ? true : OTHER_WORD_RULES.has(node.type) ? false : commandWords;
    let end = node.startIndex;
    for (const child of node.children) {
      const found = gap(end, child.startIndex);
      if (found !== undefined) return found;
      end = Math.max(end, child.endIndex);
      stack.push([child, inner]);
    }
    const after = gap(end, node.endIndex);
    if (after !== undefined) return after;
  }
  return undefined;
}

/** A blank (space, tab, line break) in source[from, to) not escaped by a backslash. */
function hasUnescapedBlank(source: string, from: number, to: number): boolean {
  let backslashes = 0;
  for (let i = from; i < to; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x5c) {
      backslashes++;
      continue;
    }
    if ((c === 0x20 || c === 0x09 || c === 0x0a) && backslashes % 2 === 0) return true;
    backslashes = 0;
  }
  return false;
}
