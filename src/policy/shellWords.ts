// Quote removal for shell words: what bash makes of '..', "..", $'..' and backslashes in a word
// without expansions (the walker keeps a word with expansions as its raw text).

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
