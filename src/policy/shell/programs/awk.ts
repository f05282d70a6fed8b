// awk (gawk, mawk, busybox): a program text that runs shell commands (`system()`, pipes to and
// from commands) or writes files (`print > "f"`), or that comes from a file (docs/programs.md, "awk").
import { longOption, row, walkOptions, type ProgramKnowledge, type ProgramReach } from './programRow.js';

const SYSTEM = row('awk.system', 'runs-code', 'system(…) / print | "cmd" / "cmd" | getline', 'runs shell commands from its program', ['system', '|']);
const REDIRECT = row('awk.redirect', 'writes', 'print > "FILE" / print >> "FILE"', 'writes to a file its program names', ['>']);
const PROGRAM_FILE = row('awk.program-file', 'runs-code', '-f FILE / --exec FILE / -E FILE / @load', 'runs a program from a file (or loads an extension), which can do anything', ['-f', '--exec', '-E', '@load']);

/** gawk's long options that take an argument (`--x=v` or `--x v`), and those that take none or only an attached one. */
const LONGS_WITH_ARG = ['file', 'exec', 'source', 'field-separator', 'assign', 'load', 'include'];
const LONG_FLAGS = ['dump-variables', 'debug', 'profile', 'pretty-print', 'version', 'help', 'lint', 'posix', 'traditional', 're-interval', 'sandbox', 'characters-as-bytes', 'optimize', 'no-optimize', 'bignum', 'csv', 'non-decimal-data', 'use-lc-numeric', 'gen-pot'];

export const awk: ProgramKnowledge = {
  programs: ['awk', 'gawk', 'mawk', 'nawk'],
  rows: [SYSTEM, REDIRECT, PROGRAM_FILE],
  read(words, isStatic) {
    const hits: ProgramReach[] = [];
    const programs: Array<{ text: string; index: number }> = [];
    let fromFile = false;
    const i = walkOptions(words, (w, at) => {
      const long = longOption(w, [...LONGS_WITH_ARG, ...LONG_FLAGS]);
      if (long !== undefined) {
        const takes = LONGS_WITH_ARG.includes(long);
        const attached = w.includes('=');
        if (long === 'file' || long === 'exec' || long === 'load' || long === 'include') {
          fromFile = true;
          hits.push({ row: PROGRAM_FILE, word: w });
        }
        if (long === 'source') programs.push({ text: attached ? w.slice(w.indexOf('=') + 1) : (words[at + 1] ?? ''), index: attached ? at : at + 1 });
        return takes && !attached ? 1 : 0;
      }
      const ch = w[1]!;
      if (!'fEFvlieW'.includes(ch)) return 0;
      const attached = w.length > 2;
      if (ch === 'f' || ch === 'E' || ch === 'l' || ch === 'i') {
        fromFile = true;
        hits.push({ row: PROGRAM_FILE, word: w });
      }
      if (ch === 'e') programs.push({ text: attached ? w.slice(2) : (words[at + 1] ?? ''), index: attached ? at : at + 1 });
      return attached ? 0 : 1;
    });
    if (!fromFile && programs.length === 0 && i < words.length) programs.push({ text: words[i]!, index: i });
    for (const program of programs) {
      if (!isStatic(program.index)) {
        hits.push({ row: SYSTEM, word: program.text });
        continue;
      }
      const code = withoutStrings(program.text);
      if (/\bsystem\s*\(/.test(code) || /(^|[^|])\|(?!\|)/.test(code) || /@load\b/.test(code)) hits.push({ row: SYSTEM, word: program.text });
      if (/\bprintf?\b[^;{}\n]*>/.test(code)) {
        // The files named by a string after `>` or `>>` (a file named by a variable is not known here).
        const files = [...program.text.matchAll(/>>?\s*"([^"]+)"/g)].map((m) => m[1]!);
        hits.push({ row: REDIRECT, word: program.text, ...(files.length > 0 ? { files } : {}) });
      }
    }
    return hits;
  },
};

/** The program with its string and regex literals blanked out (a `|` or `>` inside them runs nothing). */
function withoutStrings(text: string): string {
  let out = '';
  let quote: string | undefined;
  for (let k = 0; k < text.length; k++) {
    const ch = text[k]!;
    if (quote !== undefined) {
      if (ch === '\\') k++;
      else if (ch === quote) {
        quote = undefined;
        out += ch;
      }
      continue;
    }
    // A `/` starts a regex where an operand may stand (after an operator, `(`, `,`, `!`, `~`, or at the start).
    if (ch === '"' || (ch === '/' && /(^|[(,!~&|{};\s])\s*$/.test(out) && !/\b(print|printf)\s*$/.test(out))) {
      quote = ch;
      out += ch;
      continue;
    }
    out += ch;
  }
  return out;
}
