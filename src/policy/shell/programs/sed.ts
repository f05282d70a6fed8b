// sed: editing files in place, and the commands of its script that run a shell command (`e`,
// `s///e`) or write a file (`w`, `W`, `s///w`) (docs/programs.md, "sed"; GNU sed).
import { longOption, row, walkOptions, type ProgramKnowledge, type ProgramReach } from './programRow.js';

const IN_PLACE = row('sed.in-place', 'writes', '-i[SUFFIX] / --in-place[=SUFFIX]', 'rewrites the files it reads', ['-i', '--in-place']);
const EXECUTE = row('sed.execute', 'runs-code', 'the e command, s///e', 'runs a line of its script or its pattern space as a shell command', ['e']);
const WRITE = row('sed.write', 'writes', 'the w / W commands, s///w FILE', 'writes lines to a file its script names', ['w']);
const SCRIPT_FILE = row('sed.script-file', 'runs-code', '-f FILE / --file=FILE', 'runs a script from a file, which can hold any command', ['-f', '--file']);

const LONGS = ['in-place', 'expression', 'file', 'quiet', 'silent', 'regexp-extended', 'separate', 'null-data', 'zero-terminated', 'line-length', 'posix', 'sandbox', 'unbuffered', 'debug', 'follow-symlinks', 'binary'];

export const sed: ProgramKnowledge = {
  programs: ['sed', 'gsed'],
  rows: [IN_PLACE, EXECUTE, WRITE, SCRIPT_FILE],
  read(words, isStatic) {
    const hits: ProgramReach[] = [];
    const scripts: Array<{ text: string; index: number }> = [];
    let sawScriptOption = false;
    const i = walkOptions(words, (w, at) => {
      const long = longOption(w, LONGS);
      if (long !== undefined) {
        if (long === 'in-place') hits.push({ row: IN_PLACE, word: w });
        if (long !== 'expression' && long !== 'file' && long !== 'line-length') return 0;
        const attached = w.includes('=');
        if (long === 'expression') scripts.push({ text: attached ? w.slice(w.indexOf('=') + 1) : (words[at + 1] ?? ''), index: attached ? at : at + 1 });
        if (long === 'file') hits.push({ row: SCRIPT_FILE, word: w });
        if (long !== 'line-length') sawScriptOption = true;
        return attached ? 0 : 1;
      }
      // A cluster of short options: -n, -E, -r, -s, -u, -z flags; -i[SUFFIX] ends it; -e, -f, -l take an argument.
      for (let j = 1; j < w.length; j++) {
        const ch = w[j]!;
        if (ch === 'i') {
          hits.push({ row: IN_PLACE, word: w });
          return 0;
        }
        if (ch === 'e' || ch === 'f' || ch === 'l') {
          const attached = j < w.length - 1;
          if (ch === 'e') scripts.push({ text: attached ? w.slice(j + 1) : (words[at + 1] ?? ''), index: attached ? at : at + 1 });
          if (ch === 'f') hits.push({ row: SCRIPT_FILE, word: w });
          if (ch !== 'l') sawScriptOption = true;
          return attached ? 0 : 1;
        }
      }
      return 0;
    });
    if (!sawScriptOption && i < words.length) scripts.push({ text: words[i]!, index: i });
    for (const script of scripts) {
      if (!isStatic(script.index)) {
        hits.push({ row: EXECUTE, word: script.text });
        continue;
      }
      const found = scriptCommands(script.text);
      if (found.execute) hits.push({ row: EXECUTE, word: script.text });
      if (found.write) {
        // `w FILE`, `W FILE`, `s/a/b/w FILE`: the file name runs to the end of its line.
        const files = [...script.text.matchAll(/(?:^|[^A-Za-z\\])[wW] *([^\n]+)/g)].map((m) => m[1]!.trim()).filter((f) => f !== '');
        hits.push({ row: WRITE, word: script.text, ...(files.length > 0 ? { files } : {}) });
      }
    }
    return hits;
  },
};

/**
 * Whether a sed script runs a shell command or writes a file: each command after its address
 * (`1`, `$`, `/re/`, `\\%re%`, ranges, `!`), with `s` read to its flags. Text it cannot follow
 * counts as both (the strict side).
 */
export function scriptCommands(script: string): { execute: boolean; write: boolean } {
  let execute = false;
  let write = false;
  let k = 0;
  const n = script.length;
  const skipBlanks = (): void => {
    while (k < n && /[\s;{}!]/.test(script[k]!)) k++;
  };
  /** From just after an opening delimiter to just after its closing one (escapes skipped). */
  const scanPast = (delim: string): boolean => {
    for (; k < n; k++) {
      if (script[k] === '\\') k++;
      else if (script[k] === delim) {
        k++;
        return true;
      }
    }
    return false;
  };
  const toLineEnd = (): void => {
    while (k < n && script[k] !== '\n') k++;
  };
  while (k < n) {
    skipBlanks();
    if (k >= n) break;
    // Addresses: numbers, $, /re/, \cREc, first~step, addr1,addr2, +N, ~N.
    for (let guard = 0; guard < 4; guard++) {
      while (k < n && /[0-9$~+]/.test(script[k]!)) k++;
      if (script[k] === '/') {
        k++;
        if (!scanPast('/')) return { execute: true, write: true };
      } else if (script[k] === '\\' && k + 1 < n) {
        const delim = script[k + 1]!;
        k += 2;
        if (!scanPast(delim)) return { execute: true, write: true };
      }
      while (k < n && /[IM]/.test(script[k]!)) k++;
      if (script[k] === ',') {
        k++;
        continue;
      }
      break;
    }
    while (k < n && /[\s!]/.test(script[k]!)) k++;
    const command = script[k];
    if (command === undefined) break;
    k++;
    switch (command) {
      case 'e':
        execute = true;
        toLineEnd();
        break;
      case 'w':
      case 'W':
        write = true;
        toLineEnd();
        break;
      case 'r': case 'R': case 'a': case 'i': case 'c': case 'b': case 't': case 'T': case ':': case 'q': case 'Q': case 'l': case 'L': case 'v':
        // These take the rest of the line (a file name, a label, text): nothing runs.
        toLineEnd();
        break;
      case 's': case 'y': {
        const delim = script[k];
        if (delim === undefined || delim === '\n' || delim === '\\') return { execute: true, write: true };
        k++;
        if (!scanPast(delim) || !scanPast(delim)) return { execute: true, write: true };
        if (command === 's') {
          // Flags: g p N i I m M e w FILE.
          while (k < n && /[gpiImM0-9e]/.test(script[k]!)) {
            if (script[k] === 'e') execute = true;
            k++;
          }
          if (script[k] === 'w') {
            write = true;
            toLineEnd();
          }
        }
        break;
      }
      case '}': case '{': case ';': case '=': case 'd': case 'D': case 'g': case 'G': case 'h': case 'H': case 'n': case 'N': case 'p': case 'P': case 'x': case 'z': case 'F':
        break;
      case '#':
        toLineEnd();
        break;
      default:
        // A command GNU sed does not have: it refuses the script; count it as the strict side.
        return { execute: true, write: true };
    }
  }
  return { execute, write };
}
