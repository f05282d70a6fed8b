// One row of the program knowledge (docs/programs.md): what a program does through one of its
// options, sub-commands or scripts beyond what its name says. A part whose words hit a row is
// never matched by an `allow` command pattern that does not name the row's option: allowing
// `sed *` lets the agent read with sed, not rewrite files with `sed -i`; `"sed -i *"` does.

/** What the option makes the program do. */
export type ProgramDoes =
  /** It runs another program (a pager, an editor, a hook, a command string). */
  | 'runs-program'
  /** It runs code in the program's own language (awk's system(), sed's `e`, `python -c`). */
  | 'runs-code'
  /** It writes or deletes a file (sed -i, find -delete, tar -x, git log --output). */
  | 'writes'
  /** It reaches the network (a URL it fetches or pushes to). */
  | 'network'
  /** It prints or hands on a secret: a credential variable, the whole environment. */
  | 'reads-secret';

export interface ProgramRow {
  /** Stable id, `<program>.<what>`: in the docs, the tests and explain. */
  id: string;
  does: ProgramDoes;
  /** How the docs spell it (`-c core.pager=CMD`, `-delete`). */
  spelling: string;
  /** What it does, said to a person ("deletes every file it finds"). */
  why: string;
  /**
   * Words that name it in a command pattern: an allow pattern with a word containing one of them
   * (`"sed -i *"`, `"git -c core.pager=less *"`) allows it on purpose.
   */
  names: readonly string[];
}

/** A row a part's words hit: the row, and the word that hit it. */
export interface ProgramReach {
  row: ProgramRow;
  /** The word (or words) of the command that hit the row. */
  word: string;
  /**
   * For a row that writes: the files it writes, as the command names them (relative to its
   * working folder), judged by the rules on paths like the write tool (commandPaths.ts).
   * `under`: it writes (deletes) everything under these (`find DIR -delete`).
   */
  files?: readonly string[];
  under?: true;
}

/** What one program family knows: the names it answers to and how to read its words. */
export interface ProgramKnowledge {
  programs: readonly string[];
  rows: readonly ProgramRow[];
  /**
   * The rows the words hit (words[0] is the program). `isStatic(i)`: word i is known before the
   * command runs (no expansion); a script word that is not is read as hitting its code rows.
   */
  read(words: readonly string[], isStatic: (index: number) => boolean): ProgramReach[];
}

/** A row, its `names` defaulting to its spelling's first word. */
export function row(id: string, does: ProgramDoes, spelling: string, why: string, names?: readonly string[]): ProgramRow {
  return { id, does, spelling, why, names: names ?? [spelling.split(/[\s=]/)[0]!] };
}

/**
 * Long option `word` as the program reads it: the whole name or an abbreviation (GNU getopt_long:
 * `--forc` is `--force`). Returns the first of `longs` it names, or undefined. An abbreviation
 * that could be two of them is taken as the first (the program refuses an ambiguous one, or
 * knows more options than `longs`: either way it is not one to let through).
 */
export function longOption(word: string, longs: readonly string[]): string | undefined {
  if (!word.startsWith('--') || word === '--') return undefined;
  const name = word.slice(2).split('=')[0]!;
  if (name === '') return undefined;
  if (longs.includes(name)) return name;
  return longs.find((l) => l.startsWith(name));
}

/**
 * Walks a program's options: `words[1..]` up to `--` or the first word that is no option. Calls
 * `visit(word, index)` for each, which returns how many following words the option takes (0 or
 * 1). Returns the index of the first operand.
 */
export function walkOptions(words: readonly string[], visit: (word: string, index: number) => number): number {
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--') return i + 1;
    if (!w.startsWith('-') || w === '-') return i;
    i += visit(w, i);
  }
  return i;
}
