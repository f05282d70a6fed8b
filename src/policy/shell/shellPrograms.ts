// Marking the parts of a command line with what their programs do through their options (the
// program knowledge, src/policy/shell/programs/, docs/programs.md): a part whose words hit a row gets it
// in `reaches`, and an allow pattern must name it (compile.ts).
import { CREDENTIAL_EXPANSION, credentialExpansions } from './programs/environment.js';
import { programReaches } from './programs/programKnowledge.js';
import type { SimpleCommand } from './shellCommand.js';
import { isStaticWord, programIndex } from './shellDynamic.js';

/** Marks each part whose program the table knows; a part whose program is worked out at run time is `dynamic` already (never allowed). */
export function markProgramReaches(commands: readonly SimpleCommand[]): void {
  for (const c of commands) {
    const at = programIndex(c.words);
    if (at >= c.words.length || c.dynamic === true || !isStaticWord(c, at)) continue;
    // The assignments before the program are read too (`X=$GITHUB_TOKEN curl …`): from the first word.
    const hits = programReaches(c.words.slice(at), (k) => isStaticWord(c, at + k));
    for (let k = 0; k < at; k++) {
      if (!isStaticWord(c, k) && credentialExpansions(c.words[k]!).length > 0) hits.push({ row: CREDENTIAL_EXPANSION, word: c.words[k]! });
    }
    if (hits.length > 0) c.reaches = hits;
  }
}
