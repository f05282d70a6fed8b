// Edits of a JSONC text that leave every byte outside the changed value as it was: jsonc-parser's
// own formatting of an insertion or removal reformats the whole neighbouring line (a person's
// one-line hook entry would be spread over ten).
import { applyEdits, createScanner, findNodeAtLocation, format, modify, parseTree, SyntaxKind, type FormattingOptions, type Node } from 'jsonc-parser';

export type JsonPath = readonly (string | number)[];

/** Sets the value at `path` (creating what is missing on the way), or inserts it into an array at `path`'s index. */
export function setValue(text: string, path: JsonPath, value: unknown, formatting: FormattingOptions, isArrayInsertion = false): string {
  const root = parseTree(text, [], { allowTrailingComma: true, allowEmptyContent: true });
  const existing = root && findNodeAtLocation(root, [...path]);
  if (existing && !isArrayInsertion) {
    // A replacement: only the new value is formatted.
    return applyEdits(text, modify(text, [...path], value, { formattingOptions: formatting }));
  }
  // An insertion next to siblings: format only what was inserted. Into an empty container,
  // jsonc-parser's own formatting touches nothing but the container's line.
  const container = root && nearestContainer(root, path);
  if (!container || (container.children ?? []).length === 0) {
    return applyEdits(text, modify(text, [...path], value, { formattingOptions: formatting, isArrayInsertion }));
  }
  let out = text;
  for (const e of modify(text, [...path], value, { isArrayInsertion })) {
    const inserted = applyEdits(out, [e]);
    out = applyEdits(inserted, format(inserted, { offset: e.offset, length: e.content.length }, { ...formatting, keepLines: false }));
  }
  return out;
}

/**
 * Removes the array element or property at `path`, with its comma and, when it stood on lines of
 * its own, those lines. Comments next to it on other lines stay.
 */
export function removeValue(text: string, path: JsonPath): string {
  const root = parseTree(text, [], { allowTrailingComma: true, allowEmptyContent: true });
  const value = root && findNodeAtLocation(root, [...path]);
  if (!value) return text;
  // A property is removed as a whole (`"key": value`); an array element is its value.
  const child = value.parent?.type === 'property' ? value.parent : value;
  const container = child.parent!;
  const siblings = container.children!;
  const index = siblings.indexOf(child);
  const end = child.offset + child.length;
  const comma = commaAfter(text, end);
  if (index < siblings.length - 1) {
    // Followed by a sibling: from the element (or the start of its line) through its comma.
    let start = child.offset;
    let stop = comma! + 1;
    const blankAfter = /^[ \t]*(\r?\n)/.exec(text.slice(stop));
    const lineStart = text.lastIndexOf('\n', start - 1) + 1;
    if (blankAfter && /^[ \t]*$/.test(text.slice(lineStart, start))) {
      start = lineStart;
      stop += blankAfter[0].length;
    } else {
      stop += /^[ \t]*/.exec(text.slice(stop))![0].length;
    }
    return text.slice(0, start) + text.slice(stop);
  }
  if (index > 0) {
    // The last one: from the end of the one before (its comma goes) through this one (and a trailing comma).
    const before = siblings[index - 1]!;
    return text.slice(0, before.offset + before.length) + text.slice(comma === undefined ? end : comma + 1);
  }
  // The only one: the container is left empty.
  return text.slice(0, container.offset + 1) + text.slice(container.offset + container.length - 1);
}

/** The offset of the comma after `offset`, past whitespace and comments; undefined when none comes next. */
function commaAfter(text: string, offset: number): number | undefined {
  const scanner = createScanner(text, false);
  scanner.setPosition(offset);
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === SyntaxKind.CommaToken) return scanner.getTokenOffset();
    if (kind !== SyntaxKind.Trivia && kind !== SyntaxKind.LineBreakTrivia && kind !== SyntaxKind.LineCommentTrivia && kind !== SyntaxKind.BlockCommentTrivia) return undefined;
  }
  return undefined;
}

/** The deepest object or array on `path` that exists (the one an insertion goes into). */
function nearestContainer(root: Node, path: JsonPath): Node | undefined {
  for (let depth = path.length - 1; depth >= 0; depth--) {
    const node = findNodeAtLocation(root, [...path.slice(0, depth)]);
    if (node && (node.type === 'object' || node.type === 'array')) return node;
  }
  return undefined;
}
