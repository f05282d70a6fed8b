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
  return `syntax error near ${quotedSnippet(text)} at ${where}`;
}

/** Source text for a message: quoted, and cut after 30 characters. */
export function quotedSnippet(text: string): string {
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
