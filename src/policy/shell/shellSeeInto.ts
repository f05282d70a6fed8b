// Seeing into everything (policy-format.md, "Commands"): commands bash runs that the parser
// leaves in plain text, and text bash evaluates later as code.
//
// tree-sitter-bash returns some substitutions as literal text: backticks inside ${...} words
// and in here-document bodies, nested backticks (`a \`b\``). Bash runs them. The walker hands
// such text here: a backtick body is split as a command of its own; any other `$(`, `${` or `$[`
// the parser did not read makes the split unparseable. So does a place where the tree and bash
// disagree: a line starting with a backslash glued to the line before, a backtick substitution
// the parser ends elsewhere, and bash 5.2's own reading of `;` after a here-document in $(...).
//
// Bash also reads some values as code when they are used: an array subscript in a name
// (`declare 'a[$(rm x)]=1'`, `x='a[$(rm x)]'; echo $((x))`), `${!name}`, `${x@P}`, PS4 under
// `set -x`, exported functions (BASH_FUNC_f%%), namerefs (shellUnwrap.ts). Where the text shows
// that, the split is unparseable. (A value read at run time, e.g. from a file and then used in
// arithmetic, is beyond what the text shows.)
import type { ShellNode } from './shellTree.js';

/** Quick test: can `source` hold a substitution at all? Most commands skip the checks below. */
export function mayHideSubstitution(source: string): boolean {
  return source.includes('`') || source.includes('$(') || source.includes('${') || source.includes('$[');
}

/** A substitution in literal text: a backtick body to split, or an error. */
export type Hidden = { body: string } | { error: string };

/**
 * Nodes whose text is content bash expands as a whole: the parser splits it into pieces (a
 * backtick body with a space or a quote in it lands in several), so it is searched as one text.
 */
export const CONTENT_NODES = new Set(['expansion', 'string', 'translated_string', 'heredoc_body']);
/** What the parser did read: left out of the content around it (each is searched on its own). */
export const READ_NODES = new Set(['command_substitution', 'process_substitution', 'arithmetic_expansion', 'simple_expansion', 'ansi_c_string', ...CONTENT_NODES]);

/**
 * The content of a CONTENT_NODES node (without its delimiters `${ }`, `" "`), with what the
 * parser read inside it blanked out (same length, so positions hold). Single quotes quote only
 * outside "...".
 */
export function contentText(node: ShellNode, source: string, inDoubleQuotes: boolean): { from: number; text: string } {
  const first = node.children[0];
  const last = node.children[node.children.length - 1];
  const from = first && !first.isNamed && first.startIndex === node.startIndex ? first.endIndex : node.startIndex;
  const to = last && last !== first && !last.isNamed && last.endIndex === node.endIndex ? last.startIndex : node.endIndex;
  // The parts to blank, in order (children do not overlap), then the text in one pass.
  const ranges: Array<[number, number]> = [];
  const blank = (n: ShellNode): void => {
    for (const child of n.children) {
      if (READ_NODES.has(child.type) || (child.type === 'raw_string' && !inDoubleQuotes)) {
        const a = Math.max(child.startIndex, from);
        const b = Math.min(child.endIndex, to);
        if (b > a) ranges.push([a, b]);
      } else {
        blank(child);
      }
    }
  };
  blank(node);
  let text = '';
  let at = from;
  for (const [a, b] of ranges) {
    if (a < at) continue;
    text += source.slice(at, a) + ' '.repeat(b - a);
    at = b;
  }
  text += source.slice(at, Math.max(at, to));
  return { from, text };
}

/** In "..." inside ${...} inside "...", bash removes backslashes once more in a backtick body. */
export const BACKSLASHES_IN_NESTED_QUOTES = 'bash reads the backslashes of a backtick substitution in "${X:-"..."}" its own way';

/**
 * The substitutions bash would expand in literal text the parser returned as such (a word,
 * string or here-document content). `masked`: the text to search (what the parser read blanked
 * out); `text`: the same text as written, where bodies are read. `dq`: 1 in "...", where a
 * backtick body also unescapes `\"`; 2 in "..." inside ${...} inside "...".
 */
export function hiddenSubstitutions(masked: string, text: string, dq: number): Hidden[] {
  const found: Hidden[] = [];
  for (let i = 0; i < masked.length; i++) {
    const c = masked[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '`') {
      const end = closingBacktick(masked, i + 1);
      if (end < 0) {
        found.push({ error: 'a backtick substitution is not closed' });
        return found;
      }
      const body = text.slice(i + 1, end);
      if (dq >= 2 && body.includes('\\')) found.push({ error: BACKSLASHES_IN_NESTED_QUOTES });
      else found.push({ body: unescapeBackticks(body, dq > 0) });
      i = end;
    } else if (c === '$') {
      const n = masked[i + 1];
      if (n === '(' || n === '{' || n === '[') {
        found.push({ error: `a substitution the parser did not read ('$${n}...')` });
        return found;
      }
    }
  }
  return found;
}

/**
 * Does unquoted text hold a line break without a backslash before it? Bash ends a command
 * there; tree-sitter-bash glues a line that starts with a backslash (`ls\n\\rm x`) to the
 * word or command before it, so such a word or gap means the tree is wrong.
 */
export function hasUnescapedNewline(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '\n') return true;
  }
  return false;
}

/** The index of the first backtick without a backslash in `text` from `from`, or -1. */
export function closingBacktick(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '`') return i;
  }
  return -1;
}

/** The command in a backtick substitution: `\$`, `` \` `` and `\\` lose their backslash (and `\"` in "..."). */
export function unescapeBackticks(body: string, inDoubleQuotes: boolean): string {
  if (!body.includes('\\')) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    const n = body[i + 1];
    if (c === '\\' && (n === '$' || n === '`' || n === '\\' || (inDoubleQuotes && n === '"'))) {
      out += n;
      i++;
    } else {
      out += c;
    }
  }
  return out;
}

/**
 * Does a `$(...)` or `<(...)` hold a here-document with a `;` after it? Bash 5.2 then reads
 * that `;` as a space: `$(cat <<EOF\n...\nEOF\nrm; ls)` runs `rm ls`.
 */
export function semicolonAfterHeredoc(substitution: ShellNode): boolean {
  let heredoc = -1;
  const visit = (n: ShellNode): boolean => {
    for (const child of n.children) {
      if (child.type === 'command_substitution' || child.type === 'process_substitution') continue;
      if (child.type === 'heredoc_redirect' && heredoc < 0) heredoc = child.startIndex;
      if (child.type === ';' && !child.isNamed && heredoc >= 0 && child.startIndex > heredoc) return true;
      if (visit(child)) return true;
    }
    return false;
  };
  return visit(substitution);
}

/** Why an `expansion` node (${...}) evaluates a value as code, or undefined. */
export function evaluatingExpansion(node: ShellNode, source: string): string | undefined {
  const c = node.children;
  const text = (n: ShellNode | undefined): string | undefined => (n ? source.slice(n.startIndex, n.endIndex) : undefined);
  // ${!name...}: the value of name is read as a name, subscript included. Only ${!a[@]},
  // ${!a[*]} (the keys) and ${!prefix*}, ${!prefix@} (the names) do not.
  if (c[1]?.type === '!' && !c[1].isNamed) {
    const [, , target, next, last] = c;
    const all = (n: ShellNode | undefined): boolean => text(n) === '@' || text(n) === '*';
    const keys = target?.type === 'subscript' && target.children.length === 4 && all(target.children[2]) && next?.type === '}';
    const names = target?.type === 'variable_name' && all(next) && last?.type === '}';
    if (!keys && !names) return '${!name} reads a value as a name, which can run commands';
  }
  for (let i = 1; i < c.length; i++) {
    if (c[i]!.type === 'P' && c[i - 1]!.type === '@') return '${name@P} expands a value as a prompt, which can run commands';
  }
  return undefined;
}

/**
 * Why a simple command's words (after quote removal; `isStatic(i)` false for a word bash expands)
 * make bash evaluate text as code later, or undefined.
 */
export function evaluatedLater(words: readonly string[], isStatic: (index: number) => boolean): string | undefined {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w.startsWith('BASH_FUNC_') && w.includes('%%')) return 'an exported function definition (BASH_FUNC_...) is code the splitter does not read';
    if (w.startsWith('PS4') && /^PS4\+?=[^]*[$`]/.test(w)) return 'PS4 with an expansion runs commands under set -x';
    // NAME[...$(...)...] as text: bash evaluates the subscript (and runs it) when the text is
    // used as a name. (Not ${NAME[...]}: that is read where it stands, by the split of a command string.)
    if (w.includes('[') && isStatic(i) && /(?<!\$\{[#!]?)\b[A-Za-z_][A-Za-z0-9_]*\[[^\]]*(?:\$[({[]|`)/.test(w)) {
      return `the subscript in ${JSON.stringify(w)} runs a command when bash uses it as a name`;
    }
  }
  return undefined;
}
