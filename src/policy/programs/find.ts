// find: actions that write or delete files (docs/programs.md, "find"). `-exec`, `-execdir`,
// `-ok` and `-okdir` run a program: that program is a further part (shellUnwrap.ts).
import { row, type ProgramKnowledge } from './programRow.js';

const DELETE = row('find.delete', 'writes', '-delete', 'deletes every file and folder it finds');
const FPRINT = row('find.fprint', 'writes', '-fprint FILE / -fprint0 / -fprintf / -fls', 'writes its list to a file it names (creating or emptying it)', ['-fprint', '-fls']);

export const find: ProgramKnowledge = {
  programs: ['find'],
  rows: [DELETE, FPRINT],
  read(words) {
    const hits = [];
    for (const w of words.slice(1)) {
      if (w === '-delete') hits.push({ row: DELETE, word: w });
      if (w === '-fprint' || w === '-fprint0' || w === '-fprintf' || w === '-fls') hits.push({ row: FPRINT, word: w });
    }
    return hits;
  },
};
