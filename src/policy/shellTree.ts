// The shell parser's syntax tree as plain JS objects, and where a broken command's syntax error is.
// One cursor pass copies the wasm tree into JS objects: each wasm node accessor costs a
// marshalling round trip, and the walker (shellWalker.ts) reads nodes many times.
import type { Tree } from 'web-tree-sitter';

export interface ShellNode {
  type: string;
  isNamed: boolean;
  isMissing: boolean;
  /** This node or a descendant is an ERROR or MISSING node. */
  hasError: boolean;
  /** This node or a descendant is an expansion ($x, ${x}, $(..), `..`, $((..)), <(..)). */
  hasExpansion: boolean;
  /** UTF-16 offsets into the source. */
  startIndex: number;
  endIndex: number;
  children: ShellNode[];
}

const ERROR_SYMBOL = 0xffff;

/** Node types whose presence makes a word keep its raw source text. */
const EXPANSIONS = new Set([
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
]);
const LEAF_LIKE = new Set(['simple_expansion', 'raw_string', 'ansi_c_string', 'comment', 'heredoc_start', 'heredoc_end']);
/** Per grammar symbol id: [type name, is named]; filled lazily. */
let symbolInfo: Array<[string, boolean] | undefined> = [];

/** Symbol ids belong to one loaded grammar: the parser forgets them when it loads one. */
export function forgetSymbolNames(): void {
  symbolInfo = [];
}

/** Copies the wasm tree into plain nodes, in one cursor pass (the wasm tree stays the caller's to delete). */
export function toPlainTree(tree: Tree): ShellNode {
  const lang = tree.language;
  const withErrors = tree.rootNode.hasError; // MISSING nodes can only exist then
  const cursor = tree.walk();
  try {
    const make = (): ShellNode => {
      const id = cursor.nodeTypeId;
      let info = symbolInfo[id];
      if (info === undefined) {
        info = id === ERROR_SYMBOL ? ['ERROR', true] : [lang.types[id] ?? 'ERROR', lang.nodeTypeIsNamed(id)];
        symbolInfo[id] = info;
      }
      const type = info[0];
      const isMissing = withErrors && cursor.nodeIsMissing;
      return {
        type,
        isNamed: info[1],
        isMissing,
        hasError: isMissing || type === 'ERROR',
        hasExpansion: EXPANSIONS.has(type),
        startIndex: cursor.startIndex,
        endIndex: cursor.endIndex,
        children: [],
      };
    };
    const root = make();
    const stack: ShellNode[] = [root];
    let current = root;
    for (;;) {
      // `$x` / `$'..'` / '..' have no children the walker needs; skipping them saves wasm calls
      if (!LEAF_LIKE.has(current.type) && cursor.gotoFirstChild()) {
        const child = make();
        current.children.push(child);
        stack.push(child);
        current = child;
        continue;
      }
      for (;;) {
        stack.pop();
        const parent = stack[stack.length - 1];
        if (parent === undefined) return root;
        if (current.hasError) parent.hasError = true;
        if (current.hasExpansion) parent.hasExpansion = true;
        if (cursor.gotoNextSibling()) {
          const sibling = make();
          parent.children.push(sibling);
          stack.push(sibling);
          current = sibling;
          break;
        }
        cursor.gotoParent();
        current = parent;
      }
    }
  } finally {
    cursor.delete();
  }
}

/** `line L, column C` of a UTF-16 offset, for error messages. */
export function positionOf(source: string, index: number): string {
  const before = source.slice(0, index);
  const line = before.split('\n').length;
  const column = index - (before.lastIndexOf('\n') + 1) + 1;
  return `line ${line}, column ${column}`;
}

/** The syntax error of a tree with errors, as a message naming the first bad node and where it is. */
export function describeError(root: ShellNode, source: string): string {
  const bad = findErrorNode(root);
  if (!bad) return 'syntax error';
  const where = positionOf(source, bad.startIndex);
  if (bad.isMissing) {
    const what = bad.type === 'word' ? 'a command or word' : `'${bad.type}'`;
    return `syntax error: expected ${what} at ${where}`;
  }
  const text = source.slice(bad.startIndex, bad.endIndex);
  if (text.trim() === '') return `syntax error: unexpected end of input at ${where}`;
  const snippet = text.length > 30 ? `${text.slice(0, 30)}...` : text;
  return `syntax error near ${JSON.stringify(snippet)} at ${where}`;
}

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
    return `the parser passed over ${quoted(shown)} at ${positionOf(source, from + text.indexOf(shown[0] ?? ''))}`;
  };
  const first = gap(0, root.startIndex) ?? gap(root.endIndex, source.length);
  if (first !== undefined) return first;
  // Without recursion (a list of thousands of commands nests as deep). `commandWords`: outside
  // ${...}, $((...)) and [[ ... ]], whose words bash reads by other rules.
  const stack: Array<[ShellNode, boolean]> = [[root, true]];
  while (stack.length > 0) {
    const [node, commandWords] = stack.pop()!;
    if (commandWords && node.type === 'word' && hasUnescapedBlank(source, node.startIndex, node.endIndex)) {
      return `the parser read ${quoted(source.slice(node.startIndex, node.endIndex))} at ${positionOf(source, node.startIndex)} as one word, which bash splits`;
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

function quoted(text: string): string {
  return JSON.stringify(text.length > 30 ? `${text.slice(0, 30)}...` : text);
}

function findErrorNode(node: ShellNode): ShellNode | null {
  if (node.type === 'ERROR' || node.isMissing) return node;
  if (!node.hasError) return null;
  for (const child of node.children) {
    const found = findErrorNode(child);
    if (found) return found;
  }
  return node;
}
