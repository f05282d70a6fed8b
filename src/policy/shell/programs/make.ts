// make: what makes it run something other than the workspace's Makefile's recipes: an evaluated
// line (`--eval`), another shell (`SHELL=…`), another makefile (`-f`) (docs/programs.md, "make").
import { longOption, row, type ProgramKnowledge, type ProgramReach } from './programRow.js';

const EVAL = row('make.eval', 'runs-program', '--eval=TEXT / -E TEXT', 'reads TEXT as makefile lines, whose recipes it runs', ['--eval', '-E']);
const SHELL = row('make.shell', 'runs-program', 'SHELL=PROG / .SHELLFLAGS=…', 'runs every recipe with another program', ['SHELL=', '.SHELLFLAGS=']);
const FILE = row('make.file', 'runs-program', '-f FILE / --file=FILE / --makefile=FILE', 'runs the recipes of a makefile it names', ['-f', '--file', '--makefile']);

export const make: ProgramKnowledge = {
  programs: ['make', 'gmake'],
  rows: [EVAL, SHELL, FILE],
  read(words) {
    const hits: ProgramReach[] = [];
    for (const w of words.slice(1)) {
      if (/^\.?SHELL(FLAGS)?[:+?]?=/.test(w) || /^MAKESHELL=/.test(w)) hits.push({ row: SHELL, word: w });
      if (w.startsWith('--')) {
        const long = longOption(w, ['eval', 'file', 'makefile']);
        if (long === 'eval') hits.push({ row: EVAL, word: w });
        if (long === 'file' || long === 'makefile') hits.push({ row: FILE, word: w });
      } else if (/^-[A-Za-z]*E/.test(w)) {
        hits.push({ row: EVAL, word: w });
      } else if (/^-[A-Za-z]*f/.test(w)) {
        hits.push({ row: FILE, word: w });
      }
    }
    return hits;
  },
};
