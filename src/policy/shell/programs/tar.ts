// tar: options that run a program (`--to-command`, `--checkpoint-action=exec=`, `-I`, …) and the
// modes that write files (extract, create, append, update, delete) (docs/programs.md, "tar"; GNU tar).
import { longOption, row, type ProgramKnowledge, type ProgramReach } from './programRow.js';

const RUNS = row('tar.runs-program', 'runs-program', '--to-command=CMD / --checkpoint-action=exec=CMD / -I, --use-compress-program=CMD / --rsh-command=CMD / -F, --info-script, --new-volume-script=CMD', 'runs a program it names', ['--to-command', '--checkpoint-action', '-I', '--use-compress-program', '--rsh-command', '-F', '--info-script', '--new-volume-script']);
const WRITES = row('tar.writes', 'writes', '-x / -c / -r / -u / -A / --delete (and their long forms)', 'writes files: extracts them, or writes the archive', ['-x', '-c', '-r', '-u', '-A', '--delete', '--extract', '--get', '--create', '--append', '--update', '--catenate', '--concatenate', 'x', 'c']);

const PROGRAM_LONGS = ['to-command', 'checkpoint-action', 'use-compress-program', 'rsh-command', 'info-script', 'new-volume-script'];
const WRITE_LONGS = ['extract', 'get', 'create', 'append', 'update', 'catenate', 'concatenate', 'delete'];
/** Short options that take an argument: in a cluster they take the rest of it, or the next word. */
const SHORT_ARGS = 'bCfFgHIKLNTVX';

export const tar: ProgramKnowledge = {
  programs: ['tar', 'gtar'],
  rows: [RUNS, WRITES],
  read(words) {
    const hits: ProgramReach[] = [];
    const mode = (w: string): void => {
      if (/[xcruA]/.test(w) && !hits.some((h) => h.row === WRITES)) hits.push({ row: WRITES, word: w });
    };
    for (let i = 1; i < words.length; i++) {
      const w = words[i]!;
      // The old style: a first word of letters without a dash (`tar xzf a.tgz`).
      if (i === 1 && /^[A-Za-z]+$/.test(w)) {
        mode(w);
        if (w.includes('I') || w.includes('F')) hits.push({ row: RUNS, word: w });
        continue;
      }
      if (w === '--') break;
      if (w.startsWith('--')) {
        const program = longOption(w, PROGRAM_LONGS);
        if (program !== undefined && (program !== 'checkpoint-action' || /exec=/.test(w) || !w.includes('='))) hits.push({ row: RUNS, word: w });
        if (longOption(w, WRITE_LONGS) !== undefined && !hits.some((h) => h.row === WRITES)) hits.push({ row: WRITES, word: w });
        continue;
      }
      if (w.startsWith('-') && w.length > 1) {
        for (let j = 1; j < w.length; j++) {
          const ch = w[j]!;
          if (ch === 'I' || ch === 'F') hits.push({ row: RUNS, word: w });
          if ('xcruA'.includes(ch)) mode(ch);
          if (SHORT_ARGS.includes(ch)) {
            if (j === w.length - 1) i++;
            break;
          }
        }
      }
    }
    return hits;
  },
};
