// What the shell analysis hands out: a simple command (one part of a call's command), with its
// words after quote removal and what the engine needs to know about it.

import type { ProgramReach } from './programs/programRow.js';

export interface SimpleCommand {
  /** The command's words after quote removal, in order. Leading NAME=value assignments are words too: `FOO=1 npm test` -> ["FOO=1","npm","test"]. A word containing an expansion ($VAR, $(...), `...`) keeps its raw source text. */
  words: string[];
  /** True when the command redirects output to a file: >, >>, &>, &>>, >|, N>file (but NOT fd duplications like 2>&1 / >&2, and NOT a redirect whose target is exactly /dev/null). */
  writesToFile: boolean;
  /** True when the command uses process substitution <(...) or >(...). */
  usesProcessSubstitution: boolean;
  /**
   * Set (only ever to true) when the program word, the first word after leading NAME=value
   * assignments, is not static: it has an expansion ($X, $(...), `...`, ${...}), an unquoted glob
   * character (* ? [) or a brace expansion (r{m,}, {a..b}), so what runs is only known when it
   * runs. Quoted or escaped spellings ('rm', r\m) are static. Also set on an unwrapped part whose
   * program word is not static (`env $X y`, `sudo "$CMD"`). Such a part is never allowed, and
   * every ask or deny command rule matches it.
   */
  dynamic?: true;
  /**
   * Set on a further part that exists only so that ask and deny rules see it: a program named by
   * its path (`/bin/rm x`) is also the part `rm x`. Allow rules and the default never judge such
   * a part, so allowing `./gradlew build` needs no rule for a `gradlew` on the PATH.
   */
  tightenOnly?: true;
  /**
   * What the program does through the options, sub-commands or script in its words, by the
   * program knowledge (src/policy/shell/programs/): runs another program, runs code, writes a file. An
   * allow pattern matches such a part only when it names each of them (`"sed -i *"`).
   */
  reaches?: ProgramReach[];
}

/** Splits a command string bash runs from within the line (a backtick body the parser left as text). */
export type NestedSplit = (source: string) => { ok: boolean; error?: string; commands: SimpleCommand[] };

/** A command line split into its simple commands. */
export type SplitResult =
  | { ok: true; commands: SimpleCommand[] }
  | { ok: false; error: string; commands: SimpleCommand[] }; // commands: whatever could be recovered, best effort
