// Programs that run programs (policy-format.md, "Commands"): for each simple command whose
// program is a wrapper (env, sudo, xargs, find -exec, bash -c, eval, ...), the command it runs
// is added as a further simple command, recursively. The wrapper's own command stays. Anything
// that cannot be read with certainty (an unknown option, env -S, nesting deeper than
// MAX_DEPTH) makes the whole split unparseable, which is the strict side.
import type { SimpleCommand } from './shellWalker.js';

type Split =
  | { ok: true; commands: SimpleCommand[] }
  | { ok: false; error: string; commands: SimpleCommand[] };

const MAX_DEPTH = 8;

/** What a wrapper runs: argument vectors, and strings to split as shell commands. */
interface Inner {
  argv: string[][];
  scripts: string[];
}

class Unknowable extends Error {}

/**
 * The commands with, after each one, the commands its wrappers run. `split` splits a nested
 * command string (bash -c, eval) without unwrapping it (this function unwraps the parts).
 */
export function unwrapCommands(commands: SimpleCommand[], split: (source: string) => Split): Split {
  const out: SimpleCommand[] = [];
  try {
    for (const c of commands) {
      out.push(c);
      expand(c, 0, split, out);
    }
  } catch (err) {
    if (err instanceof Unknowable) return { ok: false, error: err.message, commands: out };
    throw err;
  }
  return { ok: true, commands: out };
}

function expand(c: SimpleCommand, depth: number, split: (source: string) => Split, out: SimpleCommand[]): void {
  const add = (part: SimpleCommand): void => {
    if (depth + 1 > MAX_DEPTH) throw new Unknowable(`programs that run programs are nested more than ${MAX_DEPTH} deep`);
    out.push(part);
    expand(part, depth + 1, split, out);
  };
  let i = 0;
  while (i < c.words.length && isAssignment(c.words[i]!)) i++;
  if (i === c.words.length) return;
  if (i > 0) {
    add({ ...c, words: c.words.slice(i) });
    return;
  }
  const inner = unwrapOne(c.words);
  if (!inner) return;
  for (const argv of inner.argv) {
    if (argv.length > 0) add({ words: argv, writesToFile: c.writesToFile, usesProcessSubstitution: c.usesProcessSubstitution });
  }
  for (const script of inner.scripts) {
    // An expansion in the text is either expanded before the string is read as commands
    // (eval, bash -c "...$X...": any command) or kept raw by the walker: never knowable here.
    if (/[$`]/.test(script)) throw new Unknowable(`the command run by ${c.words[0] ?? ''} has an expansion`);
    const r = split(script);
    if (!r.ok) throw new Unknowable(`a command run by ${c.words[0] ?? ''} cannot be read: ${r.error}`);
    for (const part of r.commands) add(part);
  }
}

function isAssignment(word: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(word);
}

interface OptionSpec {
  /** Short options taking an argument (attached or the next word). */
  arg?: string;
  /** Short options without an argument; `true`: every other letter. */
  flags?: string | true;
  /** Short options with an optional attached argument (they end their cluster). */
  optional?: string;
  /** Long options taking an argument (`--x=v` or `--x v`). */
  longArg?: string[];
  /** Long options with an optional attached argument (`--x` or `--x=v`). */
  longOptional?: string[];
  longFlags?: string[];
  /** Options whose command cannot be read (env -S). */
  reject?: string;
  longReject?: string[];
  /** `-N` (digits) is an option (nice). */
  digits?: boolean;
}

/** The index of the first word after `words[start..]`'s options; throws on an unknown option. */
function skipOptions(program: string, words: string[], start: number, spec: OptionSpec): number {
  let i = start;
  while (i < words.length) {
    const w = words[i]!;
    if (w === '--') return i + 1;
    if (!w.startsWith('-') || w === '-') return i;
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
      if (spec.longReject?.includes(name)) throw new Unknowable(`${program} ${w} cannot be read`);
      if (spec.longArg?.includes(name)) i += eq < 0 ? 2 : 1;
      else if (spec.longOptional?.includes(name)) i += 1;
      else if (spec.longFlags?.includes(name) && eq < 0) i += 1;
      else throw new Unknowable(`unknown option ${w} of ${program}`);
      continue;
    }
    if (spec.digits && /^-[0-9]+$/.test(w)) {
      i += 1;
      continue;
    }
    let next = 1;
    for (let j = 1; j < w.length; j++) {
      const ch = w[j]!;
      if (spec.reject?.includes(ch)) throw new Unknowable(`${program} -${ch} cannot be read`);
      if (spec.arg?.includes(ch)) {
        if (j === w.length - 1) next = 2;
        break;
      }
      if (spec.optional?.includes(ch)) break;
      if (spec.flags === true ? /[A-Za-z0-9]/.test(ch) : spec.flags?.includes(ch)) continue;
      throw new Unknowable(`unknown option ${w} of ${program}`);
    }
    i += next;
  }
  return i;
}

function basename(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash < 0 ? word : word.slice(slash + 1);
}

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh']);
const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir']);

/** What the command `words` runs when its program is a wrapper, or undefined. */
function unwrapOne(words: string[]): Inner | undefined {
  const program = basename(words[0]!);
  const run = (argv: string[]): Inner => ({ argv: [argv], scripts: [] });
  switch (program) {
    case 'env': {
      let i = skipOptions(program, words, 1, {
        arg: 'uC',
        flags: 'i0v',
        reject: 'S',
        longReject: ['split-string'],
        longArg: ['unset', 'chdir'],
        longFlags: ['ignore-environment', 'null', 'debug'],
      });
      while (i < words.length && isAssignment(words[i]!)) i++;
      return run(words.slice(i));
    }
    case 'sudo':
    case 'doas':
      return run(words.slice(skipOptions(program, words, 1, { arg: 'ugCDhprtTU', flags: true })));
    case 'command': {
      // `command -v` / `-V` only print what a name is.
      for (let k = 1; k < words.length && words[k]!.startsWith('-') && words[k] !== '--'; k++) {
        if (/^-[A-Za-z]*[vV]/.test(words[k]!)) return undefined;
      }
      return run(words.slice(skipOptions(program, words, 1, { flags: 'p' })));
    }
    case 'exec':
      return run(words.slice(skipOptions(program, words, 1, { arg: 'a', flags: 'cl' })));
    case 'time':
      return run(words.slice(skipOptions(program, words, 1, { flags: 'p' })));
    case 'nice':
      return run(words.slice(skipOptions(program, words, 1, { arg: 'n', digits: true, longArg: ['adjustment'] })));
    case 'nohup':
      return run(words.slice(skipOptions(program, words, 1, {})));
    case 'setsid':
      return run(words.slice(skipOptions(program, words, 1, { flags: 'cfw', longFlags: ['ctty', 'fork', 'wait'] })));
    case 'timeout': {
      const i = skipOptions(program, words, 1, {
        arg: 'ks',
        flags: 'v',
        longArg: ['kill-after', 'signal'],
        longFlags: ['preserve-status', 'foreground', 'verbose'],
      });
      return run(words.slice(i + 1)); // words[i] is the duration
    }
    case 'stdbuf':
      return run(words.slice(skipOptions(program, words, 1, { arg: 'ioe', longArg: ['input', 'output', 'error'] })));
    case 'xargs': {
      const i = skipOptions(program, words, 1, {
        arg: 'adEILnPs',
        optional: 'ile',
        flags: '0prtxo',
        longArg: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
        longOptional: ['eof', 'replace', 'max-lines'],
        longFlags: ['null', 'interactive', 'no-run-if-empty', 'verbose', 'exit', 'open-tty', 'show-limits'],
      });
      return run(i < words.length ? words.slice(i) : ['echo']);
    }
    case 'find': {
      const argv: string[][] = [];
      for (let i = 1; i < words.length; i++) {
        if (!FIND_ACTIONS.has(words[i]!)) continue;
        let j = i + 1;
        while (j < words.length && words[j] !== ';' && words[j] !== '+') j++;
        argv.push(words.slice(i + 1, j));
        i = j;
      }
      return { argv, scripts: [] };
    }
    case 'eval':
      return words.length > 1 ? { argv: [], scripts: [words.slice(1).join(' ')] } : undefined;
    default:
      if (SHELLS.has(program)) return shellScript(program, words);
      return undefined;
  }
}

/** `bash [options] -c STRING [name args...]`: STRING; other invocations run a file or stdin. */
function shellScript(program: string, words: string[]): Inner | undefined {
  let hasC = false;
  let i = 1;
  while (i < words.length) {
    const w = words[i]!;
    if (w === '--' || w === '-') {
      i++;
      break;
    }
    if (!(w.startsWith('-') || w.startsWith('+'))) break;
    if (w.startsWith('--')) {
      if (w === '--rcfile' || w === '--init-file') i += 2;
      else if (/^--[a-z-]+$/.test(w)) i += 1;
      else throw new Unknowable(`unknown option ${w} of ${program}`);
      continue;
    }
    let next = 1;
    for (let j = 1; j < w.length; j++) {
      const ch = w[j]!;
      if (ch === 'c' && w[0] === '-') hasC = true;
      else if (ch === 'o' || ch === 'O') next += 1;
      else if (!/[A-Za-z]/.test(ch)) throw new Unknowable(`unknown option ${w} of ${program}`);
    }
    i += next;
  }
  if (!hasC || i >= words.length) return undefined;
  return { argv: [], scripts: [words[i]!] };
}
