// The fast paths of the shell split: command lines every shell reads the same simple way skip
// the tree-sitter parser, which costs tens of microseconds. Anything else returns undefined and
// goes to the parser (shellSplit.ts). Properties compare both paths with the parser, and the
// bash oracle (shellVsBash.test.ts) runs the lines.
import type { SimpleCommand, SplitResult } from './shellCommand.js';
import { setDynamicWords } from './shellDynamic.js';
import { evaluatedLater } from './shellSeeInto.js';

// A command made only of these characters has no quoting, expansions, globs, comments or
// redirections: every shell reads it as simple commands whose words are the blank-separated
// fields, joined by the list and pipe operators (`&&`, `||`, `;`, `&`, `|`, `|&`). Such commands
// (most allowed ones: `npm test`, `git status && git diff`) take the quickest path.
const PLAIN_WORD_CHARACTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:+,@%-';
const IN_PLAIN_WORD = new Uint8Array(128);
for (const ch of PLAIN_WORD_CHARACTERS) IN_PLAIN_WORD[ch.charCodeAt(0)] = 1;
const SPACE = 32;
const TAB = 9;
const AMPERSAND = 38;
const BAR = 124;
const SEMICOLON = 59;

/** Is `word` non-empty and made only of the plain characters (a shell reads it as it is, unquoted)? */
export function isPlainWord(word: string): boolean {
  if (word.length === 0) return false;
  for (let i = 0; i < word.length; i++) {
    const code = word.charCodeAt(i);
    if (code >= 128 || IN_PLAIN_WORD[code] !== 1) return false;
  }
  return true;
}

const RESERVED_WORDS = ['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'in', 'function', 'select', 'time', 'coproc', '{', '}', '!', '[[', ']]'];
/** The reserved words by length: a word is compared with the few of its length, and never hashed (a Set would hash every new word). */
const RESERVED_BY_LENGTH: readonly (readonly string[])[] = RESERVED_WORDS.reduce<string[][]>((byLength, w) => {
  while (byLength.length <= w.length) byLength.push([]);
  byLength[w.length]!.push(w);
  return byLength;
}, []);

/** Is `word` one of bash's reserved words (or `{`, `}`, `!`, `[[`, `]]`), which the parser must place? */
export function isReservedWord(word: string): boolean {
  const same = RESERVED_BY_LENGTH[word.length];
  if (same === undefined) return false;
  for (let k = 0; k < same.length; k++) if (same[k] === word) return true;
  return false;
}

const MAX_LENGTH = 4096;
const ALL_STATIC = (): boolean => true;

/** The split of a plain command, or undefined when the parser must decide. One pass over the characters. */
export function splitPlainCommand(source: string): SplitResult | undefined {
  if (source.length > MAX_LENGTH) return undefined;
  const oddCharacters = source.includes('%') || source.includes('@');
  const commands: SimpleCommand[] = [];
  let words: string[] = [];
  let start = -1;
  let operators = 0;
  for (let i = 0; i < source.length; i++) {
    const code = source.charCodeAt(i);
    if (code < 128 && IN_PLAIN_WORD[code] === 1) {
      if (start < 0) start = i;
      continue;
    }
    if (start >= 0) {
      words.push(source.slice(start, i));
      start = -1;
    }
    if (code === SPACE || code === TAB) continue;
    if (code !== AMPERSAND && code !== BAR && code !== SEMICOLON) return undefined;
    i += operatorLength(source, i) - 1;
    operators++;
    // An empty command between operators (`a;;b`, `&& a`) is the parser's to judge.
    if (!isPlainSimpleCommand(words, oddCharacters)) return undefined;
    commands.push(simpleCommand(words));
    words = [];
  }
  if (start >= 0) words.push(source.slice(start));
  // A trailing operator (`a &`) is the parser's to judge; a blank line is no command at all.
  if (words.length === 0) return operators === 0 ? { ok: true, commands } : undefined;
  if (!isPlainSimpleCommand(words, oddCharacters)) return undefined;
  commands.push(simpleCommand(words));
  return { ok: true, commands };
}

/** A simple command of these words, with no redirection or process substitution (what both fast paths give). */
function simpleCommand(words: string[]): SimpleCommand {
  return { words, writesToFile: false, usesProcessSubstitution: false };
}

/** The length of the list or pipe operator at `at` (`&&`, `||`, `|&`: 2; `&`, `|`, `;`: 1). */
function operatorLength(source: string, at: number): number {
  const code = source.charCodeAt(at);
  const next = source.charCodeAt(at + 1);
  return (code === AMPERSAND && next === AMPERSAND) || (code === BAR && (next === BAR || next === AMPERSAND)) ? 2 : 1;
}

/** Whether the words of one command of a plain line are a simple command the fast path may give (else the parser judges the line). */
function isPlainSimpleCommand(words: readonly string[], oddCharacters: boolean): boolean {
  if (words.length === 0) return false;
  for (const w of words) if (isReservedWord(w)) return false;
  // `%` and `@` only in arguments: `%1` in command position is bash's job control (`fg %1`),
  // and tree-sitter misreads some lines with them there (`a%b $(c)`). Text bash evaluates
  // later as code (`env BASH_FUNC_f%%=…`) is the walker's to refuse.
  return !oddCharacters || (leadingWordsPlain(words) && evaluatedLater(words, ALL_STATIC) === undefined);
}

// The next step up: the plain characters, plus, in the arguments after the program word,
// '...' and "..." with tame contents and $(...) around a plain command (`git log --since
// "$(date +%s)"`, `grep -n 'a b' src`). The program word and the assignments before it stay
// plain, so a part's program is always static here.
/** What "..." may hold besides $(...): no `$`, backtick, backslash or `!`, which bash treats specially there. */
const IN_DOUBLE = tableOf(/[A-Za-z0-9 \t_.\/=:+,;&|@%*?#~<>(){}[\]^'-]/);
/** What '...' may hold: every character is literal there, but a newline or a control character is the parser's. */
const IN_SINGLE = tableOf(/[A-Za-z0-9 \t_.\/=:+,;&|@%*?#~<>(){}[\]^"$`\\!-]/);
/** The program word and assignments before it, where the fast paths take `%`, `@` or quotes elsewhere (tree-sitter misreads `A=1 a:b`). */
const LEADING_WORD = /^[A-Za-z0-9_.\/][A-Za-z0-9_.\/=+,-]*$/;
const SINGLE_QUOTE = 39;
const DOUBLE_QUOTE = 34;
const DOLLAR = 36;
const EQUALS = 61;
const TILDE = 126;

/** The ASCII characters a one-character class matches, as a table (a character from 128 up is in none). */
function tableOf(oneCharacter: RegExp): Uint8Array {
  const table = new Uint8Array(128);
  for (let code = 0; code < 128; code++) if (oneCharacter.test(String.fromCharCode(code))) table[code] = 1;
  return table;
}

/** The end of the run of characters from `at` on that `table` holds. */
function runEnd(source: string, at: number, table: Uint8Array): number {
  let end = at;
  while (end < source.length) {
    const code = source.charCodeAt(end);
    if (code >= 128 || table[code] !== 1) break;
    end++;
  }
  return end;
}

/** The split of a command with tame quotes and plain command substitutions, or undefined when the parser must decide. */
export function splitQuotedCommand(source: string): SplitResult | undefined {
  if (source.length > MAX_LENGTH) return undefined;
  const commands: SimpleCommand[] = [];
  let words: string[] = [];
  let dynamic: boolean[] | undefined;
  let nested: SimpleCommand[] = [];
  let programSeen = false;
  let i = 0;
  while (i < source.length) {
    const c = source.charCodeAt(i);
    if (c === SPACE || c === TAB) {
      i++;
      continue;
    }
    if (c === AMPERSAND || c === BAR || c === SEMICOLON) {
      // An empty command before an operator (`a;;b`, `&& a`), no program word (tree-sitter
      // misreads `a=1 b=|& c`) or text bash evaluates later as code: the parser's to judge.
      if (!programSeen || !endQuotedCommand(commands, words, dynamic, nested)) return undefined;
      words = [];
      dynamic = undefined;
      nested = [];
      programSeen = false;
      i += operatorLength(source, i);
      continue;
    }
    // A word: unquoted runs, '...' and "..." joined, with any $(...) kept as it is written.
    const start = i;
    let text = '';
    let quoted = false;
    let substituted = false;
    while (i < source.length) {
      const code = source.charCodeAt(i);
      if (code < 128 && IN_PLAIN_WORD[code] === 1) {
        // Unquoted, the plain path's characters.
        const end = runEnd(source, i + 1, IN_PLAIN_WORD);
        text += source.slice(i, end);
        i = end;
      } else if (code === SINGLE_QUOTE) {
        const end = source.indexOf("'", i + 1);
        if (end < 0 || runEnd(source, i + 1, IN_SINGLE) < end) return undefined;
        text += source.slice(i + 1, end);
        quoted = true;
        i = end + 1;
      } else if (code === DOUBLE_QUOTE) {
        i++;
        for (;;) {
          if (i >= source.length) return undefined;
          const d = source.charCodeAt(i);
          if (d === DOUBLE_QUOTE) break;
          if (d === DOLLAR) {
            i = addSubstitution(source, i, nested);
            if (i < 0) return undefined;
            substituted = true;
          } else if (d < 128 && IN_DOUBLE[d] === 1) {
            const end = runEnd(source, i + 1, IN_DOUBLE);
            text += source.slice(i, end);
            i = end;
          } else {
            return undefined;
          }
        }
        quoted = true;
        i++;
      } else if (code === DOLLAR) {
        i = addSubstitution(source, i, nested);
        if (i < 0) return undefined;
        substituted = true;
      } else if (code === SPACE || code === TAB || code === AMPERSAND || code === BAR || code === SEMICOLON) {
        break;
      } else {
        return undefined;
      }
    }
    if (!programSeen) {
      // Assignments and the program word: plain only, as in splitPlainCommand.
      if (quoted || substituted || isReservedWord(text) || !LEADING_WORD.test(text)) return undefined;
      // Anything with `=` may be an assignment, so the program is still to come.
      if (!text.includes('=')) programSeen = true;
    } else if ((!quoted && !substituted && isReservedWord(text)) || isTestOperatorStart(source, start)) {
      return undefined;
    }
    if (substituted) (dynamic ??= new Array<boolean>(words.length).fill(false)).push(true);
    else dynamic?.push(false);
    // A word with a substitution keeps its text as written (shellCommand.ts).
    words.push(substituted ? source.slice(start, i) : text);
  }
  // A trailing operator (`a &`, `a;`) or nothing at all is the parser's to judge.
  if (!programSeen || !endQuotedCommand(commands, words, dynamic, nested)) return undefined;
  return { ok: true, commands };
}

/**
 * Adds a command of the quoted path and the commands of its substitutions; false when it holds
 * text bash evaluates later as code (the walker refuses it).
 */
function endQuotedCommand(commands: SimpleCommand[], words: string[], dynamic: boolean[] | undefined, nested: readonly SimpleCommand[]): boolean {
  if (evaluatedLater(words, (k) => dynamic?.[k] !== true) !== undefined) return false;
  const cmd = simpleCommand(words);
  if (dynamic) setDynamicWords(cmd, dynamic);
  commands.push(cmd);
  for (const n of nested) commands.push(n);
  return true;
}

/** tree-sitter reads a word starting `==` or `=~` as a test operator, then misreads the line (`a == && b`). */
function isTestOperatorStart(source: string, at: number): boolean {
  if (source.charCodeAt(at) !== EQUALS) return false;
  const next = source.charCodeAt(at + 1);
  return next === EQUALS || next === TILDE;
}

/** Are the program word and the assignments before it free of `%`, `@` and `:`? */
function leadingWordsPlain(words: readonly string[]): boolean {
  for (const w of words) {
    if (!LEADING_WORD.test(w)) return false;
    if (!w.includes('=')) return true;
  }
  return true;
}

/** `$(plain command)` at `at`: adds its commands to `nested` and gives where it ends, or -1 when it is anything else. */
function addSubstitution(source: string, at: number, nested: SimpleCommand[]): number {
  if (source[at + 1] !== '(') return -1;
  const close = source.indexOf(')', at + 2);
  if (close < 0) return -1;
  const inner = splitPlainCommand(source.slice(at + 2, close));
  if (!inner?.ok || inner.commands.length === 0 || !inner.commands.every((c) => leadingWordsPlain(c.words))) return -1;
  for (const c of inner.commands) nested.push(c);
  return close + 1;
}
