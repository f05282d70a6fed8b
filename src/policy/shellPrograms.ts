// Marking the parts of a command line with what their programs do through their options (the
// program knowledge, src/policy/programs/, docs/programs.md): a part whose words hit a row gets it
// in `reaches`, and an allow pattern must name it (compile.ts).
import { programReaches } from './programs/programKnowledge.js';
import type { SimpleCommand } from './shellCommand.js';
import { isStaticWord, programIndex } from './shellDynamic.js';

/** Marks each part whose program the table knows; a part whose program is worked out at run time is `dynamic` already (never allowed). */
export function markProgramReaches(commands: readonly SimpleCommand[]): void {
  for (const c of commands) {
    const at = programIndex(c.words);
    if (at >= c.words.length || c.dynamic === true || !isStaticWord(c, at)) continue;
    const hits = programReaches(c.words.slice(at), (k) => isStaticWord(c, at + k));
    if (hits.length > 0) c.reaches = hits;
  }
}
