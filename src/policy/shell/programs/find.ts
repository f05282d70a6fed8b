// find: actions that write or delete files (docs/programs.md, "find"). `-exec`, `-execdir`,
// `-ok` and `-okdir` run a program: that program is a further part (shellUnwrap.ts).
import { row, type ProgramKnowledge, type ProgramReach } from './programRow.js';

const DELETE = row('find.delete', 'writes', '-delete', 'deletes every file and folder it finds');
const FPRINT = row('find.fprint', 'writes', '-fprint FILE / -fprint0 / -fprintf / -fls', 'writes its list to a file it names (creating or emptying it)', ['-fprint', '-fls']);

export const find: ProgramKnowledge = {
  programs: ['find'],
  rows: [DELETE, FPRINT],
  read(words) {
    const hits: ProgramReach[] = [];
    // The starting points: the words before the first expression (`-name`, `(`, `!`); none is `.`.
    let first = 1;
    while (first < words.length && /^-[HLP]$|^-O\d$|^-D$/.test(words[first]!)) first += words[first] === '-D' ? 2 : 1;
    let end = first;
    while (end < words.length && !/^[-(!]/.test(words[end]!)) end++;
    const starts = end > first ? words.slice(first, end) : ['.'];
    words.forEach((w, k) => {
      if (k === 0) return;
      if (w === '-delete') hits.push({ row: DELETE, word: w, files: starts, under: true });
      if (w === '-fprint' || w === '-fprint0' || w === '-fprintf' || w === '-fls') hits.push({ row: FPRINT, word: w, ...(words[k + 1] !== undefined ? { files: [words[k + 1]!] } : {}) });
    });
    return hits;
  },
};
