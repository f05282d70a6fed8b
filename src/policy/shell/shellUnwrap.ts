// Programs that run programs (policy-format.md, "Commands"): for each simple command whose
// program is a wrapper (env, sudo, xargs, find -exec, bash -c, eval, trap, ...), the
// command it runs is added as a further simple command, recursively. The wrapper's own command
// stays. So does a program named by its path (`/bin/rm x`), with its basename as a further part
// (`rm x`): a rule on `rm *` then sees it. Anything that cannot be read with certainty (an
// unknown option, env -S, a command string with an expansion, nesting deeper than MAX_DEPTH)
// makes the whole split unparseable, which is the strict side.
import { isAssignmentWord as isAssignment, isStaticWord, partOf, programIndex } from './shellDynamic.js';
import type { SimpleCommand } from './shellCommand.js';

type Split =
  | { ok: true; commands: SimpleCommand[] }
  | { ok: false; error: string; commands: SimpleCommand[] };

const MAX_DEPTH = 8;

import { containerRun, envSplitString, makeEval, packageRunner, parallelCommand, Unknowable, type Inner } from './shellRunners.js';

/**
 * The commands with, after each one, the commands its wrappers run. `split` splits a nested
 * command string (bash -c, eval) without unwrapping it (this function unwraps the parts).
 */
export function unwrapCommands(commands: SimpleCommand[], split: (source: string) => Split): Split {
  // Most lines run no wrapper: the same list, not a copy.
  let first = 0;
  while (first < commands.length && !mayRunAnother(commands[first]!)) first++;
  if (first === commands.length) return { ok: true, commands };
  const out = commands.slice(0, first);
  try {
    for (let k = first; k < commands.length; k++) {
      const c = commands[k]!;
      out.push(c);
      expand(c, 0, split, out);
    }
  } catch (err) {
    if (err instanceof Unknowable) return { ok: false, error: err.message, commands: out };
    throw err;
  }
  return { ok: true, commands: out };
}

/**
 * False when expand() surely adds nothing for the command: its first word is no assignment
 * (no `=`), no path (no `/`) and no program unwrapOne reads.
 */
function mayRunAnother(c: SimpleCommand): boolean {
  const first = c.words[0];
  if (first === undefined) return false;
  return first.includes('=') || first.includes('/') || RUNS_PROGRAMS.has(first);
}

function add(part: SimpleCommand, depth: number, split: (source: string) => Split, out: SimpleCommand[]): void {
  if (depth + 1 > MAX_DEPTH) throw new Unknowable(`programs that run programs are nested more than ${MAX_DEPTH} deep`);
  out.push(part);
  expand(part, depth + 1, split, out);
}

function expand(c: SimpleCommand, depth: number, split: (source: string) => Split, out: SimpleCommand[]): void {
  const i = programIndex(c.words);
  if (i === c.words.length) return;
  if (i > 0) {
    add(partOf(c, c.words.slice(i), i), depth, split, out);
    return;
  }
  // A program whose name is only known when it runs cannot be unwrapped (it is `dynamic`).
  if (!isStaticWord(c, 0)) return;
  const program = c.words[0]!;
  if (program.includes('/')) {
    // `/bin/rm x` is `rm x` too; that part is then unwrapped (`/usr/bin/env rm x`).
    const base = basename(program);
    if (base !== '') {
      // Only for ask and deny rules: what it unwraps to (`env rm x` -> `rm x`) is a part like any other.
      const part = partOf(c, [base, ...c.words.slice(1)], 0);
      part.tightenOnly = true;
      add(part, depth, split, out);
    }
    return;
  }
  const inner = unwrapOne(c.words, (k) => isStaticWord(c, k));
  if (!inner) return;
  for (const argv of inner.argv) {
    if (argv.words.length > 0) add(partOf(c, argv.words, argv.from), depth, split, out);
  }
  for (const script of inner.scripts) {
    // An expansion is expanded before the string is read as commands (eval, bash -c "...$X...",
    // trap "$X"): any command at all. A static string is split like any command line.
    if (script.dynamic) throw new Unknowable(`the command run by ${program} has an expansion`);
    const r = split(script.text);
    if (!r.ok) throw new Unknowable(`a command run by ${program} cannot be read: ${r.error}`);
    for (const part of r.commands) add(part, depth, split, out);
  }
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

/**
 * Every program unwrapOne reads: its `case` labels and the shells (a test holds this list to
 * the switch). Any other program is read as itself.
 */
export const RUNS_PROGRAMS: ReadonlySet<string> = new Set([
  'env', 'sudo', 'doas', 'command', 'exec', 'time', 'nice', 'nohup', 'builtin', 'coproc', 'setsid', 'timeout', 'stdbuf',
  'xargs', 'find', 'eval', 'trap', 'alias', 'compgen', 'complete', 'mapfile', 'readarray', 'declare', 'typeset', 'local', 'hash',
  'watch', 'flock', 'script', 'npx', 'npm', 'pnpm', 'yarn', 'docker', 'podman', 'kubectl', 'ssh', 'make', 'gmake', 'parallel',
  ...SHELLS,
]);
const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir']);

/** What the command `words` runs when its program is a wrapper, or undefined. `isStatic(i)`: is words[i] static. */
function unwrapOne(words: string[], isStatic: (index: number) => boolean): Inner | undefined {
  const program = words[0]!;
  if (!RUNS_PROGRAMS.has(program)) return undefined;
  // The words from index `from` on.
  const run = (from: number): Inner => ({ argv: [{ words: words.slice(from), from }], scripts: [] });
  const script = (from: number, to = from + 1): Inner['scripts'][number] => {
    let dynamic = false;
    for (let k = from; k < to; k++) dynamic ||= !isStatic(k);
    return { text: words.slice(from, to).join(' '), dynamic };
  };
  switch (program) {
    case 'env': {
      const split = envSplitString(words, isStatic);
      if (split !== undefined) return split;
      let i = skipOptions(program, words, 1, {
        arg: 'uC',
        flags: 'i0v',
        reject: 'S',
        longReject: ['split-string'],
        longArg: ['unset', 'chdir'],
        longFlags: ['ignore-environment', 'null', 'debug'],
      });
      if (words[i] === '-') i++; // `env -` is `env -i`
      while (i < words.length && isAssignment(words[i]!)) i++;
      return run(i);
    }
    case 'sudo':
    case 'doas':
      return run(skipOptions(program, words, 1, { arg: 'ugCDhprtTU', flags: true }));
    case 'command': {
      // `command -v` / `-V` only print what a name is.
      for (let k = 1; k < words.length && words[k]!.startsWith('-') && words[k] !== '--'; k++) {
        if (/^-[A-Za-z]*[vV]/.test(words[k]!)) return undefined;
      }
      return run(skipOptions(program, words, 1, { flags: 'p' }));
    }
    case 'exec':
      return run(skipOptions(program, words, 1, { arg: 'a', flags: 'cl' }));
    case 'time': {
      // The program (/usr/bin/time, through env or command) takes any -p; bash's keyword takes
      // `[-p] [--]`, then a pipeline that a `!` may negate (`time ! rm x` runs rm). Each reading
      // is a part: the call is judged by the strictest.
      const asProgram = skipOptions(program, words, 1, { flags: 'p' });
      let asKeyword = words[1] === '-p' ? 2 : 1;
      if (words[asKeyword] === '--') asKeyword++;
      let negated = asKeyword;
      while (words[negated] === '!') negated++;
      const starts = [...new Set([asProgram, asKeyword, negated])];
      return { argv: starts.map((from) => ({ words: words.slice(from), from })), scripts: [] };
    }
    case 'nice':
      return run(skipOptions(program, words, 1, { arg: 'n', digits: true, longArg: ['adjustment'] }));
    case 'nohup':
    case 'builtin':
      return run(skipOptions(program, words, 1, {}));
    case 'coproc':
      // `coproc NAME` names only a compound command; before a simple command NAME is the program.
      return run(1);
    case 'setsid':
      return run(skipOptions(program, words, 1, { flags: 'cfw', longFlags: ['ctty', 'fork', 'wait'] }));
    case 'timeout': {
      const i = skipOptions(program, words, 1, {
        arg: 'ks',
        flags: 'v',
        longArg: ['kill-after', 'signal'],
        longFlags: ['preserve-status', 'foreground', 'verbose'],
      });
      return run(i + 1); // words[i] is the duration
    }
    case 'watch': {
      // watch runs its words through `sh -c` joined by spaces, or as they are with -x.
      const i = skipOptions(program, words, 1, {
        arg: 'nq', flags: true, longArg: ['interval', 'equexit'], longOptional: ['differences'],
        longFlags: ['no-title', 'beep', 'errexit', 'chgexit', 'color', 'no-color', 'exec', 'precise', 'no-wrap', 'no-linewrap'],
      });
      if (i >= words.length) return undefined;
      const exec = words.slice(1, i).some((w) => w === '--exec' || /^-[A-Za-z]*x/.test(w));
      return exec ? run(i) : { argv: [], scripts: [script(i, words.length)] };
    }
    case 'flock': {
      // flock [options] FILE COMMAND… | flock [options] FILE -c COMMAND | flock [options] FD.
      const i = skipOptions(program, words, 1, { arg: 'Ew', flags: 'sxunoF', longArg: ['conflict-exit-code', 'timeout', 'wait'], longFlags: ['shared', 'exclusive', 'unlock', 'nonblock', 'nb', 'close', 'no-fork', 'verbose'] });
      if (i + 1 >= words.length) return undefined;
      if (words[i + 1] === '-c' || words[i + 1] === '--command') return words[i + 2] === undefined ? undefined : { argv: [], scripts: [script(i + 2)] };
      return run(i + 1);
    }
    case 'script': {
      // script -c / --command COMMAND runs COMMAND with the shell; without it, an interactive shell (nothing to read here).
      for (let k = 1; k < words.length && words[k]!.startsWith('-') && words[k] !== '--'; k++) {
        const w = words[k]!;
        if (w === '--command') return words[k + 1] === undefined ? undefined : { argv: [], scripts: [script(k + 1)] };
        if (w.startsWith('--command=')) return { argv: [], scripts: [{ text: w.slice(10), dynamic: !isStatic(k) }] };
        if (w.startsWith('--')) {
          if (['--log-io', '--log-in', '--log-out', '--log-timing', '--logging-format', '--echo', '--output-limit'].includes(w)) k++;
          continue;
        }
        for (let j = 1; j < w.length; j++) {
          if (w[j] === 'c') return { argv: [], scripts: [j < w.length - 1 ? { text: w.slice(j + 1), dynamic: !isStatic(k) } : script(k + 1)] };
          if ('TIOBEmo'.includes(w[j]!)) {
            if (j === w.length - 1) k++;
            break;
          }
        }
      }
      return undefined;
    }
    case 'npx': {
      // npx [options] PACKAGE ARGS… runs the package's command; -c / --call CMD runs CMD with the shell.
      for (let k = 1; k < words.length && words[k]!.startsWith('-') && words[k] !== '--'; k++) {
        const w = words[k]!;
        if (w === '-c' || w === '--call') return words[k + 1] === undefined ? undefined : { argv: [], scripts: [script(k + 1)] };
        if (w.startsWith('--call=')) return { argv: [], scripts: [{ text: w.slice(7), dynamic: !isStatic(k) }] };
      }
      const i = skipOptions(program, words, 1, { arg: 'p', flags: 'yq', longArg: ['package'], longFlags: ['yes', 'no', 'quiet', 'ignore-existing'] });
      return i < words.length ? run(i) : undefined;
    }
    case 'npm':
    case 'pnpm':
    case 'yarn':
      return packageRunner(program, words, isStatic, run, script);
    case 'docker':
    case 'podman': {
      // docker exec [options] CONTAINER COMMAND…: COMMAND runs in the container.
      if (words[1] === 'run' || words[1] === 'create') return containerRun(words, run);
      if (words[1] !== 'exec') return undefined;
      const i = skipOptions(program, words, 2, { arg: 'euw', flags: 'itd', longArg: ['env', 'env-file', 'user', 'workdir', 'detach-keys'], longFlags: ['interactive', 'tty', 'detach', 'privileged'] });
      return i + 1 < words.length ? run(i + 1) : undefined;
    }
    case 'kubectl': {
      // kubectl exec POD [-c CONTAINER] [-it] -- COMMAND…, kubectl run NAME --image=I -- COMMAND…
      if (words[1] !== 'exec' && words[1] !== 'run') return undefined;
      const dashes = words.indexOf('--');
      return dashes > 0 && dashes + 1 < words.length ? run(dashes + 1) : undefined;
    }
    case 'make':
    case 'gmake':
      return makeEval(words, isStatic);
    case 'parallel':
      return parallelCommand(words, script);
    case 'ssh': {
      // ssh [options] HOST COMMAND…: the words after HOST, joined, run in the remote shell.
      const i = skipOptions(program, words, 1, { arg: 'BbcDEeFIiJLlmOopQRSWw', flags: true });
      return i + 1 < words.length ? { argv: [], scripts: [script(i + 1, words.length)] } : undefined;
    }
    case 'stdbuf':
      return run(skipOptions(program, words, 1, { arg: 'ioe', longArg: ['input', 'output', 'error'] }));
    case 'xargs': {
      const i = skipOptions(program, words, 1, {
        arg: 'adEILnPs',
        optional: 'ile',
        flags: '0prtxo',
        longArg: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
        longOptional: ['eof', 'replace', 'max-lines'],
        longFlags: ['null', 'interactive', 'no-run-if-empty', 'verbose', 'exit', 'open-tty', 'show-limits'],
      });
      return i < words.length ? run(i) : { argv: [{ words: ['echo'], from: -1 }], scripts: [] };
    }
    case 'find': {
      const argv: Inner['argv'] = [];
      for (let i = 1; i < words.length; i++) {
        if (!FIND_ACTIONS.has(words[i]!)) continue;
        let j = i + 1;
        while (j < words.length && words[j] !== ';' && words[j] !== '+') j++;
        argv.push({ words: words.slice(i + 1, j), from: i + 1 });
        i = j;
      }
      return { argv, scripts: [] };
    }
    case 'eval':
      return words.length > 1 ? { argv: [], scripts: [script(1, words.length)] } : undefined;
    case 'trap':
      return trapAction(words, script);
    case 'alias':
      // alias NAME=VALUE: where NAME is used (with expand_aliases) VALUE runs with that use's
      // arguments, which no part can stand for.
      for (let k = skipOptions(program, words, 1, { flags: 'p' }); k < words.length; k++) {
        if (words[k]!.indexOf('=') > 0) throw new Unknowable('alias NAME=VALUE makes NAME run VALUE wherever it is used');
      }
      return undefined;
    case 'compgen':
    case 'complete':
      // -C COMMAND runs COMMAND to generate completions (compgen: at once).
      return { argv: [], scripts: optionValues(program, words, isStatic, { arg: 'oAGWFCXPS', flags: true }, 'C') };
    case 'mapfile':
    case 'readarray':
      // -C CALLBACK is evaluated as a command every -c lines.
      return { argv: [], scripts: optionValues(program, words, isStatic, { arg: 'dnOsuCc', flags: 't' }, 'C') };
    case 'declare':
    case 'typeset':
    case 'local':
      // declare -n NAME=VALUE: every use of NAME reads VALUE as a name, subscript and all.
      for (let k = 1; k < words.length && words[k]!.startsWith('-') && words[k] !== '--'; k++) {
        if (words[k]!.includes('n')) throw new Unknowable(`${program} -n (a nameref) reads a value as a name, which can run commands`);
      }
      return undefined;
    case 'hash':
      // hash -p PATH NAME: from then on NAME runs PATH, whatever rules say about NAME.
      for (let k = 1; k < words.length && words[k]!.startsWith('-') && words[k] !== '--'; k++) {
        if (words[k]!.includes('p')) throw new Unknowable('hash -p makes a name run another program');
      }
      return undefined;
    default:
      if (SHELLS.has(program)) return shellScript(program, words, isStatic);
      return undefined;
  }
}

/** `trap [--] ACTION SIGNAL...`: ACTION is a command run later; `trap SIGNAL`, `trap - SIGNAL`, `trap -p|-l` run nothing. */
function trapAction(words: string[], script: (from: number) => Inner['scripts'][number]): Inner | undefined {
  let i = 1;
  const w = words[i];
  if (w === '--') i++;
  else if (w !== undefined && w.startsWith('-') && w !== '-') {
    if (/^-[lpP]+$/.test(w)) return undefined;
    throw new Unknowable(`unknown option ${w} of trap`);
  }
  if (words.length - i < 2 || words[i] === '-' || words[i] === '') return undefined;
  return { argv: [], scripts: [script(i)] };
}

/** The values of option -`letter` (attached or the next word) among the options of `words`. */
function optionValues(
  program: string,
  words: string[],
  isStatic: (index: number) => boolean,
  spec: { arg: string; flags: string | true },
  letter: string,
): Inner['scripts'] {
  const values: Inner['scripts'] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--' || !w.startsWith('-') || w === '-') break;
    for (let j = 1; j < w.length; j++) {
      const ch = w[j]!;
      if (spec.arg.includes(ch)) {
        const attached = j < w.length - 1;
        const at = attached ? i : i + 1;
        if (at >= words.length) throw new Unknowable(`option -${ch} of ${program} has no value`);
        if (ch === letter) values.push({ text: attached ? w.slice(j + 1) : words[at]!, dynamic: !isStatic(at) });
        if (!attached) i++;
        break;
      }
      if (!(spec.flags === true ? /[A-Za-z0-9]/.test(ch) : spec.flags.includes(ch))) throw new Unknowable(`unknown option ${w} of ${program}`);
    }
  }
  return values;
}

/** `bash [options] -c STRING [name args...]`: STRING; other invocations run a file or stdin. */
function shellScript(program: string, words: string[], isStatic: (index: number) => boolean): Inner | undefined {
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
  return { argv: [], scripts: [{ text: words[i]!, dynamic: !isStatic(i) }] };
}
