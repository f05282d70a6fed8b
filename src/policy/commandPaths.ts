// Paths named in commands (docs/programs.md, "Paths named in commands"): the words of a command
// line's parts that name files, so that the rules on `paths` judge `cat .env` and `cp ~/.ssh/id_rsa
// x` as they judge the read tool on those files. A word is a path when it starts with `/`, `~`,
// `./` or `../`, or names a file or folder that exists in the workspace; `~` and `~/…` are the
// home folder. Words with an expansion, options, the program and URLs are not read as paths.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SimpleCommand } from './shellCommand.js';
import { isStaticWord, programIndex } from './shellDynamic.js';

/** At most this many path words are judged per call (the rest are not: the split already judges the command). */
export const MAX_COMMAND_PATHS = 32;

export function commandPathWords(commands: readonly SimpleCommand[], workspace: string, home: string): string[] {
  const found = new Set<string>();
  for (const c of commands) {
    const at = programIndex(c.words);
    for (let k = at + 1; k < c.words.length && found.size < MAX_COMMAND_PATHS; k++) {
      const w = c.words[k]!;
      if (!isStaticWord(c, k) || w === '' || w.startsWith('-') || w.includes('://') || w.includes('\0')) continue;
      const p = asPath(w, workspace, home);
      if (p !== undefined) found.add(p);
    }
  }
  return [...found];
}

function asPath(word: string, workspace: string, home: string): string | undefined {
  if (word === '~' || word.startsWith('~/')) return path.join(home, word.slice(1));
  if (word.startsWith('/')) return word;
  if (word.startsWith('./') || word.startsWith('../')) return path.resolve(workspace, word);
  // A plain word is a path when it names one in the workspace (`.env`, `src/a.ts`).
  if (/[*?[\]{}~$`]/.test(word)) return undefined;
  const full = path.resolve(workspace, word);
  try {
    fs.lstatSync(full);
    return full;
  } catch {
    return undefined;
  }
}

/** Programs whose operands (words that are no option) are all files they change. */
const CHANGES_OPERANDS = new Set(['tee', 'touch', 'mkdir', 'rm', 'rmdir', 'unlink', 'truncate', 'shred']);
/** Programs whose last operand is where they write (with two operands or more), or `-t DIR`. */
const WRITES_LAST = new Set(['cp', 'mv', 'install', 'ln', 'rsync']);

/**
 * The files a command line's parts write, by what the programs are known to write: `tee`'s,
 * `touch`'s, `rm`'s operands, the destination of `cp`/`mv`/`install`/`ln`, `dd of=`, the files
 * `sed -i`/`perl -i` rewrite, `sort -o FILE`. Relative words are resolved against the workspace,
 * `~` is the home folder; words with an expansion are left out (the split judges them).
 */
export function commandWriteWords(commands: readonly SimpleCommand[], workspace: string, home: string): string[] {
  const found = new Set<string>();
  const add = (w: string | undefined): void => {
    if (w === undefined || w === '' || w.includes('\0') || found.size >= MAX_COMMAND_PATHS) return;
    found.add(w === '~' || w.startsWith('~/') ? path.join(home, w.slice(1)) : path.resolve(workspace, w));
  };
  for (const c of commands) {
    const at = programIndex(c.words);
    const program = c.words[at];
    if (program === undefined || !isStaticWord(c, at)) continue;
    const operands: string[] = [];
    let sawScript = false;
    for (let k = at + 1; k < c.words.length; k++) {
      const w = c.words[k]!;
      if (!isStaticWord(c, k)) continue;
      if (program === 'dd' && w.startsWith('of=')) add(w.slice(3));
      if ((program === 'sort' && (w === '-o' || w === '--output')) || (WRITES_LAST.has(program) && (w === '-t' || w === '--target-directory'))) {
        add(c.words[k + 1]);
        k++;
        continue;
      }
      if (program === 'sort' && /^(-o|--output=)./.test(w)) add(w.replace(/^(-o|--output=)/, ''));
      if (/^-[A-Za-z]*e$/.test(w) || w === '--expression' || w === '-f') sawScript = true;
      if (w.startsWith('-')) continue;
      operands.push(w);
    }
    if (CHANGES_OPERANDS.has(program)) operands.forEach(add);
    if (WRITES_LAST.has(program) && operands.length >= 2) add(operands[operands.length - 1]);
    const inPlace = c.reaches?.some((r) => r.row.id === 'sed.in-place' || r.row.id === 'interpreter.in-place') === true;
    // sed -i 'SCRIPT' FILE…: the first operand is the script unless -e or -f gave it.
    if (inPlace) operands.slice(sawScript ? 0 : 1).forEach(add);
  }
  return [...found];
}
