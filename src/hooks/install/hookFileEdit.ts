// Puts our hook entries into a host's settings file, or takes them out, through jsonc-parser's
// edits: everything else in the file (other keys, other people's hooks, comments, formatting)
// stays as it was outside the arrays we change.
import { isDeepStrictEqual } from 'node:util';
import {
  createScanner, findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, SyntaxKind, type FormattingOptions, type Node, type ParseError,
} from 'jsonc-parser';
import type { HookSlot, HookTarget } from './hookEntries.js';
import { removeValue, setValue, type JsonPath } from './jsoncEdits.js';

/** A file we must not change: not JSONC, or not shaped as its host reads it. Nothing is written. */
export class HookFileError extends Error {
  constructor(readonly file: string, reason: string) {
    super(`${file}: ${reason}; fix or move the file and run again (nothing was changed)`);
  }
}

/** The file's text with our entries in place. `text` undefined: the file does not exist yet. */
export function withOurEntries(text: string | undefined, target: HookTarget): string {
  if (text === undefined) return `${JSON.stringify(newFileValue(target), null, 2)}\n`;
  let doc = rootOf(text, target.file) ? text : emptyObjectIn(text);
  const formatting = formattingOf(text);
  for (const slot of target.slots) doc = withEntry(doc, target, slot, formatting);
  return doc;
}

/**
 * The file's text without our entries; undefined when the file should go: it is left with nothing
 * but what a new file of ours starts with (`{}`, `{"version": 1}`) and holds no comment.
 */
export function withoutOurEntries(text: string, target: HookTarget): string | undefined {
  if (!rootOf(text, target.file)) return text;
  const formatting = formattingOf(text);
  let doc = text;
  let removedAny = false;
  for (const slot of target.slots) {
    const before = doc;
    doc = withoutEntries(doc, target, slot, formatting);
    if (doc !== before) removedAny = true;
  }
  if (!removedAny) return text;
  // Containers our removal emptied go too (one the person left empty is not ours to remove).
  const hooks = findNodeAtLocation(rootOf(doc, target.file)!, ['hooks']);
  if (hooks?.type === 'object' && (hooks.children ?? []).length === 0) doc = edit(doc, ['hooks'], undefined, formatting);
  const rest = getNodeValue(rootOf(doc, target.file)!) as Record<string, unknown>;
  if ((sameJson(rest, {}) || sameJson(rest, target.header)) && !hasComments(doc)) return undefined;
  return doc;
}

/** Whether the file holds our entry in every slot of the target (a file that cannot be read holds none). */
export function holdsOurEntries(text: string | undefined, target: HookTarget): boolean {
  if (text === undefined) return false;
  try {
    const root = rootOf(text, target.file);
    return root !== undefined && target.slots.every((slot) => oursIn(root, target, slot).length > 0);
  } catch {
    return false;
  }
}

function newFileValue(target: HookTarget): Record<string, unknown> {
  const value: Record<string, unknown> = structuredClone(target.header);
  for (const slot of target.slots) {
    let at = value;
    for (const key of slot.path.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
    ((at[slot.path.at(-1)!] ??= []) as unknown[]).push(slot.entry);
  }
  return value;
}

/** The root object; undefined for a file with no value at all (empty, or comments only). */
function rootOf(text: string, file: string): Node | undefined {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, allowEmptyContent: true });
  if (errors.length > 0) {
    const e = errors[0]!;
    throw new HookFileError(file, `not valid JSON with comments (${printParseErrorCode(e.error)} at line ${lineOf(text, e.offset)})`);
  }
  if (root !== undefined && root.type !== 'object') throw new HookFileError(file, 'is not a JSON object');
  return root;
}

function emptyObjectIn(text: string): string {
  const kept = text.trimEnd();
  return kept === '' ? '{}\n' : `${kept}\n{}\n`;
}

/** Our entry in the slot, once: added when missing, brought up to date when it differs, duplicates removed. */
function withEntry(doc: string, target: HookTarget, slot: HookSlot, formatting: FormattingOptions): string {
  const root = rootOf(doc, target.file)!;
  const found = oursIn(root, target, slot);
  const array = findNodeAtLocation(root, [...slot.path]);
  if (found.length === 0) {
    if (!array) return edit(doc, slot.path, [slot.entry], formatting);
    return edit(doc, [...slot.path, array.children!.length], slot.entry, formatting, true);
  }
  // Duplicates first, from the last, so that the first one's place does not move.
  for (const extra of found.slice(1).reverse()) doc = removeOne(doc, slot, extra, formatting);
  const first = found[0]!;
  const group = array!.children![first.index]!;
  if (slot.shape === 'flat' || first.soleInGroup) {
    return sameJson(getNodeValue(group), slot.entry) ? doc : edit(doc, [...slot.path, first.index], slot.entry, formatting);
  }
  // Our handler shares a group the person made: only the handler is ours to update.
  const handler = (slot.entry.hooks as unknown[])[0];
  const at = [...slot.path, first.index, 'hooks', first.handler!];
  return sameJson(getNodeValue(findNodeAtLocation(group, ['hooks', first.handler!])!), handler) ? doc : edit(doc, at, handler, formatting);
}

function withoutEntries(doc: string, target: HookTarget, slot: HookSlot, formatting: FormattingOptions): string {
  const root = rootOf(doc, target.file)!;
  const found = oursIn(root, target, slot);
  if (found.length === 0) return doc;
  for (const one of [...found].reverse()) doc = removeOne(doc, slot, one, formatting);
  const array = findNodeAtLocation(rootOf(doc, target.file)!, [...slot.path]);
  return array && (array.children ?? []).length === 0 ? edit(doc, slot.path, undefined, formatting) : doc;
}

interface Found {
  /** The element of the slot's array. */
  index: number;
  /** Grouped slots: the handler's place in the group's `hooks`. */
  handler?: number;
  /** Grouped slots: the group holds our handler and nothing else of note. */
  soleInGroup?: boolean;
}

function removeOne(doc: string, slot: HookSlot, found: Found, formatting: FormattingOptions): string {
  if (slot.shape === 'flat' || found.soleInGroup) return edit(doc, [...slot.path, found.index], undefined, formatting);
  return edit(doc, [...slot.path, found.index, 'hooks', found.handler!], undefined, formatting);
}

/** Our entries in the slot's array, in order; throws when a container on the way has the wrong type. */
function oursIn(root: Node, target: HookTarget, slot: HookSlot): Found[] {
  for (let depth = 1; depth <= slot.path.length; depth++) {
    const node = findNodeAtLocation(root, slot.path.slice(0, depth));
    const want = depth === slot.path.length ? 'array' : 'object';
    if (node && node.type !== want) throw new HookFileError(target.file, `"${slot.path.slice(0, depth).join('.')}" is not an ${want}`);
  }
  const array = findNodeAtLocation(root, [...slot.path]);
  const found: Found[] = [];
  (array?.children ?? []).forEach((element, index) => {
    if (slot.shape === 'flat') {
      if (isOurHandler(element, target, slot)) found.push({ index });
      return;
    }
    const handlers = findNodeAtLocation(element, ['hooks']);
    if (handlers?.type !== 'array') return;
    const keys = (element.children ?? []).map((p) => p.children?.[0]?.value as string);
    const count = handlers.children!.length;
    handlers.children!.forEach((handler, h) => {
      if (!isOurHandler(handler, target, slot)) return;
      found.push({ index, handler: h, soleInGroup: count === 1 && keys.every((k) => k === 'matcher' || k === 'hooks') });
    });
  });
  return found;
}

function isOurHandler(node: Node, target: HookTarget, slot: HookSlot): boolean {
  if (node.type !== 'object') return false;
  const command = findNodeAtLocation(node, [slot.commandField]);
  return command?.type === 'string' && target.isOurs(command.value as string);
}

/** Sets (or, with `undefined`, removes) the value at `path`. */
function edit(doc: string, path: JsonPath, value: unknown, formatting: FormattingOptions, isArrayInsertion = false): string {
  return value === undefined ? removeValue(doc, path) : setValue(doc, path, value, formatting, isArrayInsertion);
}

/** The file's own indentation and line ends, so that what we add looks like the rest. */
function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indent = /\n([ \t]+)\S/.exec(text)?.[1];
  if (indent?.startsWith('\t')) return { insertSpaces: false, tabSize: 4, eol };
  return { insertSpaces: true, tabSize: indent ? indent.length : 2, eol };
}

function hasComments(text: string): boolean {
  const scanner = createScanner(text, false);
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === SyntaxKind.LineCommentTrivia || kind === SyntaxKind.BlockCommentTrivia) return true;
  }
  return false;
}

/** Equal as JSON values (jsonc-parser's objects have no prototype, which strict equality would count). */
function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}
