// A JSON array (the rules) or object (the policy's fields) as pieces of text that serialise back
// to the same text, byte for byte: each element with the comments attached to it (the comment
// lines directly above it, with no blank line between, and a comment after it on its line), and
// the separators between them. Moving, deleting and inserting rearrange the pieces; only a new
// rule is rendered, in the style of its neighbours.
import { createScanner, type FormattingOptions, type Node } from 'jsonc-parser';
import { PolicyEditError } from './policyEdit.js';
import type { Rule } from '../file/schema.js';

/** One level of indentation. */
const unitOf = (f: FormattingOptions): string => (f.insertSpaces ? ' '.repeat(f.tabSize ?? 2) : '\t');

// jsonc-parser's SyntaxKind is a const enum; its values are fixed by the library.
const COMMA = 5;
const LINE_COMMENT = 12;
const BLOCK_COMMENT = 13;
const LINE_BREAK = 14;
const EOF = 17;

interface Token {
  kind: number;
  offset: number;
  end: number;
}

function tokensBetween(text: string, from: number, to: number): Token[] {
  const scanner = createScanner(text, false);
  scanner.setPosition(from);
  const out: Token[] = [];
  for (;;) {
    const kind = scanner.scan();
    const offset = scanner.getTokenOffset();
    if (kind === EOF || offset >= to) break;
    out.push({ kind, offset, end: offset + scanner.getTokenLength() });
  }
  return out;
}

const isComment = (t: Token): boolean => t.kind === LINE_COMMENT || t.kind === BLOCK_COMMENT;

/** One element of the array as text: `body` (attached comments and the value), `mid` (before its comma), `post` (after it, on its line). */
interface Entry {
  body: string;
  mid: string;
  post: string;
  /** A value spanning several lines: new rules next to it are written the same way. */
  multiline: boolean;
}

/**
 * An array (or object: its elements are then properties) as pieces that serialise back to the
 * same text: `[` head (entry sep)* entry tail `]`, the comma after each entry but the last (and
 * after the last too when the file had a trailing comma).
 */
export class ListModel {
  private constructor(
    private readonly open: number,
    private readonly close: number,
    private head: string,
    private readonly entries: Entry[],
    private readonly seps: string[],
    private tail: string,
    private readonly trailingComma: boolean,
    private readonly formatting: FormattingOptions,
    private readonly outerIndent: string,
  ) {}

  static read(text: string, list: Node, formatting: FormattingOptions): ListModel {
    const open = list.offset;
    const close = list.offset + list.length - 1;
    const values = list.children ?? [];
    const lineStart = Math.max(text.lastIndexOf('\n', open), text.lastIndexOf('\r', open)) + 1;
    const outerIndent = /^[ \t]*/.exec(text.slice(lineStart, open))![0];
    if (values.length === 0) return new ListModel(open, close, text.slice(open + 1, close), [], [], '', false, formatting, outerIndent);

    const leadStarts: number[] = [];
    const postEnds: number[] = [];
    const commas: (number | undefined)[] = [];
    values.forEach((v, k) => {
      const gapStart = k === 0 ? open + 1 : postEnds[k - 1]!;
      leadStarts.push(leadStart(tokensBetween(text, gapStart, v.offset), v.offset));
      const valueEnd = v.offset + v.length;
      const after = tokensBetween(text, valueEnd, k + 1 < values.length ? values[k + 1]!.offset : close);
      const comma = after.find((t) => t.kind === COMMA);
      commas.push(comma?.offset);
      const firstBreak = after.findIndex((t) => t.kind === LINE_BREAK);
      let postEnd = comma ? comma.end : valueEnd;
      if (firstBreak !== -1) {
        // Comments after the value on its own line are its own.
        for (const t of after.slice(0, firstBreak)) if (isComment(t) || t.kind === COMMA) postEnd = Math.max(postEnd, t.end);
      }
      postEnds.push(postEnd);
    });
    const entries: Entry[] = values.map((v, k) => {
      const valueEnd = v.offset + v.length;
      const comma = commas[k];
      const valueText = text.slice(v.offset, valueEnd);
      return {
        body: text.slice(leadStarts[k]!, valueEnd),
        mid: comma === undefined ? '' : text.slice(valueEnd, comma),
        post: comma === undefined ? text.slice(valueEnd, postEnds[k]!) : text.slice(comma + 1, postEnds[k]!),
        multiline: /[\r\n]/.test(valueText),
      };
    });
    const seps = values.slice(1).map((_, k) => text.slice(postEnds[k]!, leadStarts[k + 1]!));
    const n = values.length;
    const model = new ListModel(
      open, close, text.slice(open + 1, leadStarts[0]!), entries, seps, text.slice(postEnds[n - 1]!, close),
      commas[n - 1] !== undefined, formatting, outerIndent,
    );
    if (model.serialise() !== text.slice(open + 1, close)) throw new PolicyEditError('internal error: the rules array could not be taken apart');
    return model;
  }

  get length(): number {
    return this.entries.length;
  }

  /** The text before entry k (head or separator). */
  private before(k: number): string {
    return k === 0 ? this.head : this.seps[k - 1]!;
  }

  /** Entry k starts a line: the separator in front of a new element is a line break and its indentation. */
  private separatorFor(k: number): string {
    const prefix = this.before(k);
    const lastBreak = Math.max(prefix.lastIndexOf('\n'), prefix.lastIndexOf('\r'));
    if (lastBreak === -1) return ' ';
    const indent = prefix.slice(lastBreak + 1);
    return this.formatting.eol + (/^[ \t]*$/.test(indent) ? indent : this.outerIndent + unitOf(this.formatting));
  }

  private indentFor(k: number): string {
    const sep = this.separatorFor(k);
    return sep === ' ' ? '' : sep.slice(this.formatting.eol!.length);
  }

  /** A new rule, written like its neighbour (one line, or one field a line; the latter in an empty array). */
  insertNew(at: number, rule: Rule): void {
    const unit = unitOf(this.formatting);
    const eol = this.formatting.eol!;
    const ref = Math.min(at, this.entries.length - 1);
    const multiline = ref < 0 || (this.entries[ref]!.multiline && this.separatorFor(ref) !== ' ');
    const indent = ref < 0 ? this.outerIndent + unit : this.indentFor(ref);
    this.insertBody(at, renderRule(rule, multiline, indent, unit, eol), multiline);
  }

  /** Text of a new element at index `at`, on its own line when its neighbours are (in an empty list: always). */
  insertBody(at: number, body: string, multiline: boolean): void {
    const eol = this.formatting.eol!;
    if (this.entries.length === 0) {
      const kept = this.head.trim() === '' ? '' : this.head.trimEnd();
      this.head = `${kept}${eol}${this.outerIndent}${unitOf(this.formatting)}`;
      this.tail = `${eol}${this.outerIndent}`;
      this.entries.push({ body, mid: '', post: '', multiline });
      return;
    }
    this.place(at, { body, mid: '', post: '', multiline }, this.separatorFor(Math.min(at, this.entries.length - 1)));
  }

  private place(at: number, entry: Entry, sep: string): void {
    if (at >= this.entries.length) {
      this.seps.push(sep);
      this.entries.push(entry);
    } else {
      this.entries.splice(at, 0, entry);
      this.seps.splice(at, 0, sep);
    }
  }

  delete(k: number): Entry {
    const n = this.entries.length;
    const left = this.before(k);
    const right = k === n - 1 ? this.tail : this.seps[k]!;
    const merged = mergeAround(left, right, k === 0);
    const [removed] = this.entries.splice(k, 1);
    if (n === 1) {
      this.head = merged.trim() === '' ? '' : merged;
      this.tail = '';
    } else if (k === 0) {
      this.head = merged;
      this.seps.splice(0, 1);
    } else if (k === n - 1) {
      this.tail = merged;
      this.seps.splice(k - 1, 1);
    } else {
      this.seps[k - 1] = merged;
      this.seps.splice(k, 1);
    }
    return removed!;
  }

  move(from: number, to: number): void {
    const entry = this.delete(from);
    const ref = Math.min(to, this.entries.length - 1);
    this.place(to, entry, this.separatorFor(ref));
  }

  serialise(): string {
    const n = this.entries.length;
    let out = this.head;
    this.entries.forEach((e, k) => {
      const comma = k < n - 1 || this.trailingComma ? ',' : '';
      out += e.body + e.mid + comma + e.post;
      if (k < n - 1) out += this.seps[k]!;
    });
    return out + this.tail;
  }

  applyTo(text: string): string {
    return text.slice(0, this.open + 1) + this.serialise() + text.slice(this.close);
  }
}

/**
 * The text left around a removed element: what was on its left up to the line break before it
 * (so its own line goes, and blank lines or comments above it stay), then what was on its right.
 * In an inline array, the separator on its left goes (or the spaces on its right, for the first).
 */
function mergeAround(left: string, right: string, first: boolean): string {
  const lastBreak = /(?:\r\n|\r|\n)[ \t]*$/.exec(left);
  if (lastBreak) return left.slice(0, lastBreak.index) + right;
  return first ? left + right.trimStart() : right;
}

/**
 * Where an element's text begins: the run of comments right above it (no blank line between),
 * on lines after the previous element's (or the `[`'s) line. Inline arrays: comments before it.
 */
function leadStart(gap: Token[], valueStart: number): number {
  const firstBreak = gap.findIndex((t) => t.kind === LINE_BREAK);
  const considered = firstBreak === -1 ? gap : gap.slice(firstBreak + 1);
  let candidate: number | undefined;
  let breaks = 0;
  for (const t of considered) {
    if (t.kind === LINE_BREAK) {
      if (++breaks >= 2) candidate = undefined;
    } else if (isComment(t)) {
      candidate ??= t.offset;
      breaks = 0;
    }
  }
  return candidate ?? valueStart;
}

const KEY_ORDER = ['id', 'tools', 'kinds', 'agents', 'hints', 'tags', 'paths', 'commands', 'domains', 'urls', 'input', 'decision', 'reason', 'timeout', 'onTimeout', 'remember'];

/** A rule as the policies of this project write them: one field a line, or all on one line. */
function renderRule(rule: Rule, multiline: boolean, indent: string, unit: string, eol: string): string {
  const record = rule as Record<string, unknown>;
  const keys = [...KEY_ORDER.filter((k) => record[k] !== undefined), ...Object.keys(record).filter((k) => !KEY_ORDER.includes(k) && record[k] !== undefined)];
  const fields = keys.map((k) => `${JSON.stringify(k)}: ${inlineJson(record[k])}`);
  if (!multiline) return `{ ${fields.join(', ')} }`;
  return `{${eol}${fields.map((f) => indent + unit + f).join(`,${eol}`)}${eol}${indent}}`;
}

/** JSON on one line with a space after `,` and `:` and inside braces: `{ "a": ["x", "y"] }`. */
function inlineJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inlineJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    return `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${inlineJson(v)}`).join(', ')} }`;
  }
  return JSON.stringify(value) ?? 'null';
}
