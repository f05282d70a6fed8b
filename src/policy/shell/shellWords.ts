// Shell words: what bash makes of '..', "..", $'..' and backslashes in a word without
// expansions (a word with expansions keeps its raw text), and the nodes of a word joined.
import { isStaticNode } from './shellDynamic.js';
import type { ShellNode } from './shellTree.js';

/** A node of a word: its text after quote removal (raw with an expansion) and what joins it to its neighbours. */
export interface Piece {
  start: number;
  end: number;
  text: string;
  /** Has an expansion: the word it is part of keeps its raw source text. */
  raw: boolean;
  /** The `$` of `$"..."`. */
  dollar: boolean;
  isString: boolean;
  /** Read as exactly its text (shellDynamic.ts). */
  static: boolean;
}

/** A node of a word, as the text it stands for. */
export function pieceOf(source: string, node: ShellNode): Piece {
  const dollar = !node.isNamed && node.type === '$';
  const raw = !dollar && node.hasExpansion;
  return {
    start: node.startIndex,
    end: node.endIndex,
    text: dollar ? '$' : raw ? text(source, node) : wordText(source, node),
    raw,
    dollar,
    isString: node.type === 'string',
    static: dollar || isStaticNode(node, source),
  };
}

/** Joins pieces that touch (or are separated only by line continuations) into words, and tells which are not static (undefined: none). */
export function mergePieces(source: string, pieces: Piece[]): { words: string[]; dynamic: boolean[] | undefined } {
  const words: string[] = [];
  let dynamic: boolean[] | undefined;
  let i = 0;
  while (i < pieces.length) {
    const first = pieces[i]!;
    let last = first;
    let raw = first.raw;
    let isStatic = true;
    let text = '';
    let j = i;
    for (;;) {
      const p = pieces[j]!;
      const next = pieces[j + 1];
      const joined = next !== undefined && touching(source, p.end, next.start);
      // `$"..."` (locale translation) is quoted text without the `$`
      if (!(p.dollar && joined && next.isString)) text += p.text;
      raw = raw || p.raw;
      isStatic = isStatic && p.static;
      last = p;
      j++;
      if (!joined) break;
    }
    if (!isStatic) dynamic ??= new Array<boolean>(words.length).fill(false);
    dynamic?.push(!isStatic);
    words.push(raw ? source.slice(first.start, last.end) : text);
    i = j;
  }
  return { words, dynamic };
}

function touching(source: string, end: number, start: number): boolean {
  if (end === start) return true;
  if (start < end) return false;
  const gap = source.slice(end, start);
  return /^(?:\\\n)+$/.test(gap);
}

/** Quote removal for a word without expansions (with expansions: raw text). */
export function wordText(source: string, node: ShellNode): string {
  if (node.hasExpansion) return text(source, node);
  switch (node.type) {
    case 'word':
    case 'extglob_pattern':
      return unescapeUnquoted(text(source, node));
    case 'string':
      return unescapeDouble(stripQuotes(text(source, node), '"', '"'));
    case 'translated_string':
      return unescapeDouble(stripQuotes(text(source, node), '$"', '"'));
    case 'raw_string':
      return stripQuotes(text(source, node), "'", "'");
    case 'ansi_c_string':
      return decodeAnsiC(stripQuotes(text(source, node), "$'", "'"));
    case 'concatenation':
    case 'variable_assignment': {
      const pieces: Piece[] = [];
      for (const child of node.children) if (!child.isMissing) pieces.push(pieceOf(source, child));
      // children of a concatenation touch; join them (handles `a$"b"` too)
      let text = '';
      for (let i = 0; i < pieces.length; i++) {
        const p = pieces[i]!;
        const next = pieces[i + 1];
        if (p.dollar && next !== undefined && next.isString && next.start === p.end) continue;
        if (i > 0 && !touching(source, pieces[i - 1]!.end, p.start)) text += source.slice(pieces[i - 1]!.end, p.start);
        text += p.text;
      }
      return text;
    }
    default:
      return text(source, node);
  }
}

/** The text inside '...' or $'...' (decoded). */
export function quotedText(source: string, node: ShellNode): string {
  return node.type === 'ansi_c_string' ? decodeAnsiC(stripQuotes(text(source, node), "$'", "'")) : stripQuotes(text(source, node), "'", "'");
}

function text(source: string, node: ShellNode): string {
  return source.slice(node.startIndex, node.endIndex);
}

export function stripQuotes(text: string, open: string, close: string): string {
  let s = text.startsWith(open) ? text.slice(open.length) : text;
  if (s.endsWith(close)) s = s.slice(0, s.length - close.length);
  return s;
}

/** Backslash removal outside quotes: `\x` -> `x`, `\<newline>` -> nothing. */
export function unescapeUnquoted(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      const n = s[++i]!;
      if (n !== '\n') out += n;
    } else {
      out += c;
    }
  }
  return out;
}

/** Backslash removal inside double quotes: only before $ ` " \ and newline. */
export function unescapeDouble(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const n = s[i + 1];
    if (c === '\\' && n !== undefined && (n === '$' || n === '`' || n === '"' || n === '\\' || n === '\n')) {
      if (n !== '\n') out += n;
      i++;
    } else {
      out += c;
    }
  }
  return out;
}

const ANSI_SIMPLE: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** Decodes the body of a bash `$'...'` string. */
export function decodeAnsiC(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  let i = 0;
  const take = (re: RegExp, max: number): string => {
    let digits = '';
    while (digits.length < max && i < s.length && re.test(s[i]!)) digits += s[i++];
    return digits;
  };
  while (i < s.length) {
    const c = s[i++]!;
    if (c !== '\\' || i >= s.length) {
      out += c;
      continue;
    }
    const e = s[i++]!;
    const simple = ANSI_SIMPLE[e];
    if (simple !== undefined) {
      out += simple;
    } else if (e >= '0' && e <= '7') {
      i--;
      out += String.fromCharCode(parseInt(take(/[0-7]/, 3), 8) & 0xff);
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const digits = take(/[0-9a-fA-F]/, e === 'x' ? 2 : e === 'u' ? 4 : 8);
      const cp = digits === '' ? NaN : parseInt(digits, 16);
      out += Number.isNaN(cp) || cp > 0x10ffff ? `\\${e}${digits}` : String.fromCodePoint(cp);
    } else if (e === 'c' && i < s.length) {
      out += String.fromCharCode(s.charCodeAt(i++) & 0x1f);
    } else {
      out += `\\${e}`;
    }
  }
  return out;
}
