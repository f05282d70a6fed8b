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
