// Command patterns (policy-format.md, "Commands"): a pattern's words as globs, a final `*` for any
// further words; how a rule's patterns match a call's parts, by their words for allowing (naming
// what the program does beyond its name: the program knowledge's rows) and, for ask and deny, by
// the options a program reads in every spelling (src/policy/shell/programs/optionSpellings.ts).

import { compileNameGlob, GlobError, type GlobTest } from '../globs/globs.js';
import type { Decision } from '../file/schema.js';
import { readOptions, readsOptionsOf, type OptionReading } from '../shell/programs/optionSpellings.js';
import { patternNames } from '../shell/programs/programKnowledge.js';
import type { SimpleCommand } from '../shell/shellWalker.js';
import type { CommandView } from './preparedCall.js';

export interface CommandPattern {
  words: GlobTest[];
  /** The pattern ended in `*`: any number of further words. */
  open: boolean;
  source: string;
}

export function compileCommandPattern(pattern: string): CommandPattern {
  const words = pattern.trim().split(/\s+/);
  // After trim, split gives no empty word except for a pattern of blanks only ('' → ['']).
  if (words.length === 1 && words[0] === '') throw new GlobError('a command pattern needs at least one word');
  const open = words[words.length - 1] === '*';
  const globs: GlobTest[] = [];
  for (let i = 0; i < words.length - (open ? 1 : 0); i++) globs.push(compileNameGlob(words[i]!));
  return { words: globs, open, source: pattern };
}

function wordsMatch(pattern: CommandPattern, words: readonly string[]): boolean {
  if (pattern.open ? words.length < pattern.words.length : words.length !== pattern.words.length) return false;
  for (let i = 0; i < pattern.words.length; i++) if (!pattern.words[i]!(words[i]!)) return false;
  return true;
}

export function commandsMatch(patterns: readonly CommandPattern[], command: CommandView, loosening: boolean): boolean {
  if (!command.present) return false;
  // Plain loops: this runs for every candidate rule of every call, so no closures per call.
  if (loosening) {
    if (!command.parsed || command.commands.length === 0) return false;
    for (const c of command.commands) {
      if (c.writesToFile || c.usesProcessSubstitution || c.dynamic === true || !allowsPart(patterns, c)) return false;
    }
    return true;
  }
  // Text that cannot be parsed could hide anything: a tightening rule takes it.
  if (!command.parsed) return true;
  // So could a program name worked out only when the command runs (`$X`, `r{m,}`, `r?`).
  for (const c of command.commands) if (c.dynamic === true || matchesSome(patterns, c) || matchesByOptions(patterns, c)) return true;
  return false;
}

/** A pattern read as options (src/policy/shell/programs/optionSpellings.ts): its words that are no option as globs, and its options. */
interface OptionPattern {
  positional: GlobTest[];
  open: boolean;
  options: ReadonlySet<string>;
}

const optionPatterns = new WeakMap<CommandPattern, OptionPattern | null>();
const partReadings = new WeakMap<SimpleCommand, OptionReading | null>();

function optionPatternOf(p: CommandPattern): OptionPattern | null {
  let known = optionPatterns.get(p);
  if (known !== undefined) return known;
  const reading = readOptions(p.source.trim().split(/\s+/));
  known = null;
  if (reading !== undefined && reading.options.size > 0) {
    const open = reading.positional[reading.positional.length - 1] === '*';
    const words = open ? reading.positional.slice(0, -1) : reading.positional;
    known = { positional: words.map((w) => compileNameGlob(w)), open, options: reading.options };
  }
  optionPatterns.set(p, known);
  return known;
}

/**
 * For `ask` and `deny`: a pattern with options of a sub-command the table knows (`"git push --force *"`)
 * takes the part whatever the options' spelling and place (`git -C d push origin -f`, `+main`).
 */
function matchesByOptions(patterns: readonly CommandPattern[], c: SimpleCommand): boolean {
  if (!readsOptionsOf(c.words[0])) return false;
  // Every candidate rule asks: the part is read once.
  let reading = partReadings.get(c);
  if (reading === undefined) partReadings.set(c, (reading = readOptions(c.words) ?? null));
  if (reading === null) return false;
  for (const p of patterns) {
    const op = optionPatternOf(p);
    if (op === null) continue;
    if (op.open ? reading.positional.length < op.positional.length : reading.positional.length !== op.positional.length) continue;
    if (!op.positional.every((test, i) => test(reading.positional[i]!))) continue;
    if ([...op.options].every((o) => reading.options.has(o))) return true;
  }
  return false;
}

function matchesSome(patterns: readonly CommandPattern[], c: SimpleCommand): boolean {
  for (const p of patterns) if (wordsMatch(p, c.words)) return true;
  return false;
}

/**
 * Why an allow rule's command patterns did not match a part although one matches its words: what
 * its program does that no pattern names (for explanations); undefined otherwise.
 */
export function unnamedReaches(patterns: readonly CommandPattern[] | undefined, decision: Decision, command: CommandView): string | undefined {
  if (patterns === undefined || decision !== 'allow') return undefined;
  for (const c of command.commands) {
    if (c.reaches === undefined || !matchesSome(patterns, c) || allowsPart(patterns, c)) continue;
    return `no pattern names what it does: ${c.reaches.map((r) => `${r.word} ${r.row.why} [${r.row.id}]`).join('; ')}`;
  }
  return undefined;
}

/**
 * For allowing: a pattern matches the part and names everything its program does beyond its name
 * (the part's `reaches`, src/policy/shell/programs/): `"sed *"` does not allow `sed -i x`, `"sed -i *"` does.
 */
function allowsPart(patterns: readonly CommandPattern[], c: SimpleCommand): boolean {
  if (c.reaches === undefined) return matchesSome(patterns, c);
  for (const p of patterns) {
    if (!wordsMatch(p, c.words)) continue;
    const words = p.source.trim().split(/\s+/);
    if (c.reaches.every((r) => patternNames(words, r))) return true;
  }
  return false;
}
