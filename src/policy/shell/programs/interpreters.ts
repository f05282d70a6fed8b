// Interpreters run code from a command-line option (`python -c`, `node -e`, `perl -e`, `ruby -e`,
// `php -r`) and perl and ruby edit files in place (`-i`) (docs/programs.md, "interpreters").
import { longOption, row, type ProgramKnowledge, type ProgramReach, type ProgramRow } from './programRow.js';

const CODE = row('interpreter.inline-code', 'runs-code', '-c CODE (python) / -e, -p, --eval, --print CODE (node) / -e, -E CODE (perl, ruby) / -r CODE (php)', 'runs code written on the command line', ['-c', '-e', '-E', '-p', '--eval', '--print', '-r']);
const IN_PLACE = row('interpreter.in-place', 'writes', '-i[EXT] (perl, ruby)', 'rewrites the files it reads', ['-i']);

/** Per interpreter: the short option letters that take code, and its long options that do. */
const INLINE: Record<string, { letters: string; longs: string[] }> = {
  python: { letters: 'c', longs: [] },
  node: { letters: 'ep', longs: ['eval', 'print'] },
  perl: { letters: 'eE', longs: [] },
  ruby: { letters: 'e', longs: [] },
  php: { letters: 'r', longs: [] },
};

function family(program: string): string | undefined {
  if (/^python[0-9.]*$/.test(program) || program === 'pypy3') return 'python';
  if (program === 'node' || program === 'nodejs' || program === 'bun') return 'node';
  if (/^perl[0-9.]*$/.test(program)) return 'perl';
  if (/^ruby[0-9.]*$/.test(program)) return 'ruby';
  if (/^php[0-9.]*$/.test(program)) return 'php';
  return undefined;
}

export const interpreters: ProgramKnowledge & { matches(program: string): boolean } = {
  programs: ['python', 'python3', 'node', 'perl', 'ruby', 'php'],
  rows: [CODE, IN_PLACE] as readonly ProgramRow[],
  matches: (program) => family(program) !== undefined,
  read(words) {
    const which = family(words[0]!);
    if (which === undefined) return [];
    const { letters, longs } = INLINE[which]!;
    const hits: ProgramReach[] = [];
    for (const w of words.slice(1)) {
      // The script (its first word that is no option) and its arguments come after the options.
      if (w === '--' || !w.startsWith('-') || w === '-') break;
      if (w.startsWith('--')) {
        if (longOption(w, longs) !== undefined) hits.push({ row: CODE, word: w });
        continue;
      }
      if ([...w.slice(1)].some((ch) => letters.includes(ch))) hits.push({ row: CODE, word: w });
      if ((which === 'perl' || which === 'ruby') && /^-[A-Za-z]*i/.test(w)) hits.push({ row: IN_PLACE, word: w });
    }
    return hits;
  },
};
