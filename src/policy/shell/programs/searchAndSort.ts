// ripgrep and sort: options that run a program (`rg --pre`, `sort --compress-program`) or write a
// file (`sort -o`) (docs/programs.md, "rg", "sort").
import { longOption, row, type ProgramKnowledge, type ProgramReach } from './programRow.js';

const RG_PRE = row('rg.pre', 'runs-program', '--pre=COMMAND', 'runs COMMAND on every file it searches', ['--pre']);
const SORT_COMPRESS = row('sort.compress-program', 'runs-program', '--compress-program=PROG', 'runs PROG to compress its temporary files', ['--compress-program']);
const SORT_OUTPUT = row('sort.output', 'writes', '-o FILE / --output=FILE', 'writes its result to a file it names', ['-o', '--output']);

export const rg: ProgramKnowledge = {
  programs: ['rg'],
  rows: [RG_PRE],
  read(words) {
    const hits: ProgramReach[] = [];
    for (const w of words.slice(1)) {
      if (w === '--') break;
      // `--pre-glob` only says which files `--pre` runs on.
      if (longOption(w, ['pre']) === 'pre' && !w.startsWith('--pre-')) hits.push({ row: RG_PRE, word: w });
    }
    return hits;
  },
};

export const sort: ProgramKnowledge = {
  programs: ['sort'],
  rows: [SORT_COMPRESS, SORT_OUTPUT],
  read(words) {
    const hits: ProgramReach[] = [];
    for (const w of words.slice(1)) {
      if (w === '--') break;
      if (w.startsWith('--')) {
        const long = longOption(w, ['compress-program', 'output']);
        if (long === 'compress-program') hits.push({ row: SORT_COMPRESS, word: w });
        if (long === 'output') hits.push({ row: SORT_OUTPUT, word: w });
      } else if (/^-[A-Za-z]*o/.test(w)) {
        hits.push({ row: SORT_OUTPUT, word: w });
      }
    }
    return hits;
  },
};
