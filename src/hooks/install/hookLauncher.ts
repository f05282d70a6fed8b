// What a hook runs, checked before it is written (docs/hooks.md, "How the hook starts"): the node
// and the CLI by absolute paths, or a `--command` line made independent of the PATH the host runs
// hooks with (its program named by absolute path now), and either answering `--version`. The hosts
// run hooks with a PATH of their own (a GUI app's is short), so a hook that leans on PATH may not start.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { quoteForPosixShell } from './hookEntries.js';

/** The longest a launcher's `--version` may take at install. */
const CHECK_TIMEOUT_MS = 15_000;

/** Why a file the hook needs cannot serve: missing, not a file, or not runnable/readable (`mode`); undefined when it can. */
export function fileProblem(file: string, mode: number, what: string): string | undefined {
  try {
    if (!fs.statSync(file).isFile()) return `${what} (${file}) is not a file`;
    fs.accessSync(file, mode);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${what} (${file}) does not exist` : `${what} (${file}) cannot be ${mode === fs.constants.X_OK ? 'run' : 'read'} (${code ?? 'error'})`;
  }
}

/**
 * Why the CLI run as `node cli` cannot be the hook's fallback, or undefined when it runs (`--version`
 * exits 0). `electron`: the node is an Electron run as node (ELECTRON_RUN_AS_NODE=1); otherwise the
 * variable is taken out, so that a check run from the `agentpolicy` shim proves nothing it would not.
 */
export function cliLauncherProblem(node: string, cli: string, env: NodeJS.ProcessEnv = process.env, electron = false): string | undefined {
  if (!path.isAbsolute(node)) return `node (${node}) is not an absolute path`;
  if (!path.isAbsolute(cli)) return `the agentpolicy CLI (${cli}) is not an absolute path`;
  const problem = fileProblem(node, fs.constants.X_OK, 'node') ?? fileProblem(cli, fs.constants.R_OK, 'the agentpolicy CLI');
  if (problem !== undefined) return problem;
  const { ELECTRON_RUN_AS_NODE: _, ...rest } = env;
  const runEnv = electron ? { ...rest, ELECTRON_RUN_AS_NODE: '1' } : rest;
  return ranProblem(spawnSync(node, [cli, '--version'], { encoding: 'utf8', env: runEnv, timeout: CHECK_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] }), `${node} ${cli} --version`);
}

/** A leading word: quoted or plain, up to a blank. */
const WORD = /^('([^']*)'|"([^"$`\\]*)"|[^\s'"]+)(?=\s|$)/;
/** A word that is a variable's assignment (`ELECTRON_RUN_AS_NODE=1`), kept before the program. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
/** A script run by whatever `node` PATH holds: npm's `agentpolicy` executable is one. */
const ENV_NODE = /^#!\s*\S*\/env\s+(?:-S\s+)?node(?:\s|$)/;

/**
 * A command line given with `--command`, made to start whatever PATH the host runs it with: the
 * program (after any `NAME=value` words) named by absolute path, found on this PATH when it is a
 * bare name, and a script that starts `#!/usr/bin/env node` run by the absolute node found on this
 * PATH. Then `LINE --version` must exit 0 under /bin/sh. The line, or why it cannot start.
 */
export function absoluteCommand(command: string, cwd: string, env: NodeJS.ProcessEnv = process.env): { command: string } | { problem: string } {
  let rest = command.trim();
  const assignments: string[] = [];
  let program: string | undefined;
  while (rest !== '') {
    const m = WORD.exec(rest);
    if (m === null) break;
    rest = rest.slice(m[0].length).trimStart();
    if (m[2] === undefined && m[3] === undefined && ASSIGNMENT.test(m[0])) {
      assignments.push(m[0]);
      continue;
    }
    program = m[2] ?? m[3] ?? m[0];
    break;
  }
  if (program === undefined) return { problem: command.trim() === '' ? 'the hook command is empty' : 'which program it runs cannot be told: name the program by its absolute path' };
  if (/[$`()<>|;&*?\\]/.test(program)) return { problem: `which program "${program}" is cannot be told without running it: name the program by its absolute path` };
  let full: string;
  if (!program.includes('/')) {
    const found = onPath(program, cwd, env);
    if (found === undefined) {
      const dirs = (env.PATH ?? '').split(path.delimiter).filter((d) => d !== '');
      return { problem: `"${program}" is not on this PATH (${dirs.length > 0 ? dirs.join(path.delimiter) : 'empty'}), so the hook could not start: name it by its absolute path` };
    }
    full = found;
  } else {
    full = path.resolve(cwd, program);
    const problem = fileProblem(full, fs.constants.X_OK, 'the hook command');
    if (problem !== undefined) return { problem };
  }
  const words = [...assignments];
  if (ENV_NODE.test(firstLine(full))) {
    const node = onPath('node', cwd, env);
    if (node === undefined) return { problem: `${full} runs the node on PATH (#!/usr/bin/env node), and there is none on this PATH: name node by its absolute path before it` };
    words.push(quoteForPosixShell(node));
  }
  words.push(quoteForPosixShell(full));
  const line = rest === '' ? words.join(' ') : `${words.join(' ')} ${rest}`;
  const problem = ranProblem(spawnSync('/bin/sh', ['-c', `${line} --version`], { cwd, encoding: 'utf8', env, timeout: CHECK_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] }), `${line} --version`);
  return problem !== undefined ? { problem } : { command: line };
}

/** The runnable file `word` names on this PATH, by absolute path. */
export function onPath(word: string, cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const full = path.resolve(cwd, dir, word);
    try {
      if (fs.statSync(full).isFile()) {
        fs.accessSync(full, fs.constants.X_OK);
        return full;
      }
    } catch {
      // Not here: the next.
    }
  }
  return undefined;
}

/** Words of a simple POSIX command line: quotes taken off, backslash escapes kept literal. Enough for what `hook install` writes. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      word += line.slice(i + 1, end === -1 ? line.length : end);
      i = end === -1 ? line.length : end;
      inWord = true;
    } else if (ch === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && /["\\$`]/.test(line[j + 1] ?? '')) j++;
        word += line[j];
      }
      i = j;
      inWord = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

function firstLine(file: string): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(200);
      const n = fs.readSync(fd, buffer, 0, buffer.length, 0);
      return buffer.toString('utf8', 0, n).split('\n')[0]!;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

function ranProblem(r: SpawnSyncReturns<string>, what: string): string | undefined {
  if (r.error !== undefined) {
    const code = (r.error as NodeJS.ErrnoException).code;
    return code === 'ETIMEDOUT' ? `${what} did not end within ${CHECK_TIMEOUT_MS / 1000} s` : `${what} could not start (${r.error.message})`;
  }
  if (r.status === 0) return undefined;
  const said = (r.stderr || r.stdout || '').trim().split('\n').slice(-2).join(' ').slice(0, 300);
  return `${what} ${r.status === null ? `was ended by ${r.signal}` : `exited with ${r.status}`}${said !== '' ? `: ${said}` : ''}`;
}
