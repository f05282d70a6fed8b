// The program knowledge (docs/programs.md): for the programs people allow by their first word,
// the options, sub-commands and scripts that make them run another program, run code, write a
// file or reach the network. Data per program family (one file each); this file looks a part's
// program up and reads its words. A leaf below src/policy: it knows words, not parts.
import { awk } from './awk.js';
import { credentialReaches, printenv } from './environment.js';
import { find } from './find.js';
import { git } from './git.js';
import { interpreters } from './interpreters.js';
import { make } from './make.js';
import type { ProgramKnowledge, ProgramReach, ProgramRow } from './programRow.js';
import { rg, sort } from './searchAndSort.js';
import { sed } from './sed.js';
import { tar } from './tar.js';

export const PROGRAM_FAMILIES: readonly ProgramKnowledge[] = [git, find, sed, awk, tar, rg, sort, make, interpreters, printenv];

const BY_NAME = new Map<string, ProgramKnowledge>(PROGRAM_FAMILIES.flatMap((f) => f.programs.map((p) => [p, f] as const)));

/** Every row, in the order of the docs (a row two families share, once). */
export function programRows(): ProgramRow[] {
  return [...new Set(PROGRAM_FAMILIES.flatMap((f) => [...f.rows]))];
}

function knowledgeOf(program: string): ProgramKnowledge | undefined {
  return BY_NAME.get(program) ?? (interpreters.matches(program) ? interpreters : undefined);
}

/**
 * The rows a command's words hit (`words[0]` is the program), or an empty list for a program the
 * table does not know. `isStatic(i)`: word i is known before the command runs.
 */
export function programReaches(words: readonly string[], isStatic: (index: number) => boolean): ProgramReach[] {
  const program = words[0];
  const knowledge = program === undefined ? undefined : knowledgeOf(program);
  const hits = knowledge === undefined ? [] : knowledge.read(words, isStatic);
  // Any program: a word that hands it a credential variable.
  const secrets = credentialReaches(words, isStatic);
  return secrets.length === 0 ? hits : [...hits, ...secrets];
}

/**
 * Whether a command pattern's words name what the part does (an allow that names it allows it on
 * purpose): a word holding one of the row's names (`-i`, `-delete`), or the very word that hit
 * it (`core.pager=less` for `git -c core.pager=less`).
 */
export function patternNames(patternWords: readonly string[], reach: ProgramReach): boolean {
  return reach.row.names.some((name) => patternWords.some((w) => wordNames(w, name))) || patternWords.some((w) => w === reach.word);
}

/** An option is named by itself or itself with a value (`-i.bak`, `--output=x`); a longer name (`core.pager`, `foreach`) anywhere in a word; a short one (sed's `e`) only by itself. */
function wordNames(word: string, name: string): boolean {
  if (word === name) return true;
  if (name.startsWith('-')) return word.startsWith(name);
  return name.length >= 3 && word.includes(name);
}
