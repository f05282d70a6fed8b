// Runs a command line as a process, with bash (the grammar the policy's command splitter reads;
// /bin/sh only where there is no bash): in its own process group, with stdin empty, stdout and
// stderr captured up to a byte limit each, and the whole process tree killed on timeout or
// cancellation; optionally inside bubblewrap (the arguments come from sandboxMounts.ts). It knows
// nothing of tools or the workspace; the caller has already checked `cwd`.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { processAlive } from './processState.js';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { errnoCode } from './fileSystem.js';
import { withoutCredentials } from './sandboxEnvironment.js';

/** After SIGTERM, how long the process group gets to exit before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** After the shell exits, how long to wait for its output pipes to close (a background child may hold them). */
const PIPE_DRAIN_MS = 250;

// ---------------------------------------------------------------------------------------------
// The shell

/** Where bash is looked for before PATH. */
const BASH_PATHS = ['/bin/bash', '/usr/bin/bash'];

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A program's path: the usual places first, then PATH (absolute entries only); undefined where there is none. */
export function locateProgram(name: string, usualPaths: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const file of usualPaths) if (isExecutableFile(file)) return file;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    // A relative PATH entry would resolve against whatever the current folder is: not trusted.
    if (!dir || !path.isAbsolute(dir)) continue;
    const file = path.join(dir, name);
    if (isExecutableFile(file)) return file;
  }
  return undefined;
}

/** Looks for bash now: `/bin/bash`, `/usr/bin/bash`, then `bash` on PATH (absolute entries only). */
export function locateBash(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return locateProgram('bash', BASH_PATHS, env);
}

let foundBash: { path: string | undefined } | undefined;

/** The bash commands run with, looked for once (see locateBash); undefined where there is none. */
export function findBash(): string | undefined {
  foundBash ??= { path: locateBash() };
  return foundBash.path;
}

/**
 * How a command line is run: `bash --noprofile --norc -c --`, or `/bin/sh -c --` where there is
 * no bash. The `--` keeps a line that starts with `-` or `+` (`- a=b`, the program `-`) a command
 * line: without it the shell reads the line as its own options and runs nothing the policy judged.
 */
export interface CommandShell {
  readonly path: string;
  readonly args: readonly string[];
  readonly isBash: boolean;
}

/** The shell for a bash path (as findBash gives it); undefined, no bash: /bin/sh. */
export function commandShell(bash: string | undefined): CommandShell {
  return bash !== undefined ? { path: bash, args: ['--noprofile', '--norc', '-c', '--'], isBash: true } : { path: '/bin/sh', args: ['-c', '--'], isBash: false };
}

/**
 * The child's environment: the parent's, less the variables that make a shell read a file
 * before the command (non-interactive bash sources BASH_ENV; sh reads ENV), which would run
 * code the policy never saw.
 */
export function commandEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  delete out.BASH_ENV;
  delete out.ENV;
  // Exported functions (`BASH_FUNC_rm%%`) would change what a name the policy judged runs.
  for (const name of Object.keys(out)) if (name.startsWith('BASH_FUNC_')) delete out[name];
  return out;
}

/** `env` without the variables named (a masked secret's real value never reaches the sandbox). */
function withholding(env: NodeJS.ProcessEnv, names: readonly string[] | undefined): NodeJS.ProcessEnv {
  for (const name of names ?? []) delete env[name];
  return env;
}

/** Runs the shell inside a sandbox: bubblewrap (Linux), or a program that sandboxes what it runs (macOS). */
export type SandboxLaunch = BwrapLaunch | PrefixLaunch;

/** Runs the shell inside bubblewrap. */
export interface BwrapLaunch {
  kind?: 'bwrap';
  bwrap: string;
  /** bwrap's arguments (mounts, namespaces, --chdir), without the program. */
  args: readonly string[];
  /** A seccomp filter (struct sock_filter bytes) for bwrap to load (`--seccomp`), given on a pipe. */
  seccomp?: Buffer;
  /**
   * The credential variables passed in by name (the decision's `sandbox.env`): every other one
   * is withheld from bwrap and the command (sandboxEnvironment.ts), whatever this says.
   */
  passEnv?: readonly string[];
  /**
   * Variables withheld from bwrap and the command whatever else says (masked secrets,
   * sandboxSecrets.ts: the sandbox sets their stand-ins itself, in `args`).
   */
  withheldEnv?: readonly string[];
  /** A program (and its arguments) the shell runs under inside the sandbox: the network bridge (sandboxNetwork.ts). */
  wrapper?: readonly string[];
  argv?: undefined;
}

/**
 * Runs the shell under a program that sandboxes what it runs: `argv`, its words before the shell
 * line (macOS: `/usr/bin/env -u … /usr/bin/sandbox-exec -p PROFILE`, sandboxMacos.ts); no shell
 * reads them. `bwrap` and `args` are sandbox-exec and its profile, so that a runner that knows only
 * bubblewrap fails (sandbox-exec refuses bwrap's options) instead of running the command unsandboxed.
 */
export interface PrefixLaunch {
  kind: 'prefix';
  argv: readonly string[];
  bwrap: string;
  args: readonly string[];
  /** As BwrapLaunch's: every other credential variable is withheld from the program and the command. */
  passEnv?: readonly string[];
  /** As BwrapLaunch's: withheld from the program and the command whatever else says. */
  withheldEnv?: readonly string[];
  seccomp?: undefined;
  wrapper?: undefined;
}

/** What to run, where, and within which limits. */
export interface CommandProcessOptions {
  /** A command line, run by `bash --noprofile --norc -c --` (`/bin/sh -c --` where there is no bash). */
  command: string;
  /** The shell to run it with (default: commandShell(findBash())). */
  shell?: CommandShell;
  /** The absolute working directory; it must exist and be a directory. */
  cwd: string;
  /** After this long the process tree is killed and the result says timedOut. */
  timeoutMs: number;
  /** The most bytes kept of stdout and of stderr each; the middle of longer output is cut. */
  maxOutputBytes: number;
  /** Aborting kills the process tree and the result says cancelled (already aborted: nothing is started). */
  signal: AbortSignal;
  /** Run inside bubblewrap; the sandbox failing to start rejects with CommandStartError. */
  sandbox?: SandboxLaunch;
}

export interface CommandProcessResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
}

/** The shell could not be started at all (as opposed to a command that ran and failed). */
export class CommandStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandStartError';
  }
}

// ---------------------------------------------------------------------------------------------
// Output capture

/** Keeps the first and the last half of a stream's bytes, and counts what it drops. */
class OutputCapture {
  private readonly headCap: number;
  private readonly tailCap: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;

  constructor(private readonly cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = cap - this.headCap;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headCap) {
      const take = Math.min(this.headCap - this.headBytes, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.tailCap === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes > this.tailCap) {
      const first = this.tail[0] as Buffer;
      const excess = this.tailBytes - this.tailCap;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  get truncated(): boolean {
    return this.total > this.cap;
  }

  text(name: string): string {
    if (!this.truncated) return Buffer.concat([...this.head, ...this.tail]).toString('utf8');
    // Cut at character boundaries: hold back a partial character at the end of the head, skip
    // continuation bytes at the start of the tail.
    const head = new StringDecoder('utf8').write(Buffer.concat(this.head));
    let tail = Buffer.concat(this.tail);
    let skip = 0;
    while (skip < 3 && skip < tail.length && ((tail[skip] as number) & 0xc0) === 0x80) skip++;
    tail = tail.subarray(skip);
    const omitted = this.total - this.headBytes - this.tailBytes + skip;
    return `${head}\n[… ${name} truncated: ${omitted} of ${this.total} bytes omitted …]\n${tail.toString('utf8')}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Killing the process tree

/** Whether a live (not zombie) process is left in the process group. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  // kill(…, 0) also succeeds for zombies, which an init that does not reap leaves around forever.
  try {
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      let stat: string;
      try {
        stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      } catch {
        continue;
      }
      // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
    }
    return false;
  } catch {
    return true;
  }
}

/** Sends a signal to a whole process group; one already gone is no error. */
export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));


/** Waits (a bounded time) until a process is gone; for the init of a pid namespace, so are all its processes. */
async function waitGone(pid: number): Promise<void> {
  const deadline = Date.now() + KILL_GRACE_MS * 2;
  while (processAlive(pid) && Date.now() < deadline) await sleep(10);
}

// ---------------------------------------------------------------------------------------------
// Running

/**
 * Runs `options.command` with bash (or the shell given) and resolves when the shell has exited (and, if it was
 * killed, its whole process group is gone). A non-zero exit code is a result, not an error; only
 * a shell that cannot be started rejects, with CommandStartError.
 */
export async function runCommandProcess(options: CommandProcessOptions): Promise<CommandProcessResult> {
  const { command, cwd, timeoutMs, maxOutputBytes, signal: abortSignal } = options;
  const started = Date.now();
  const stdout = new OutputCapture(maxOutputBytes);
  const stderr = new OutputCapture(maxOutputBytes);
  const finish = (exitCode: number | null, signal: string | null, timedOut: boolean, cancelled: boolean): CommandProcessResult => ({
    exitCode,
    signal,
    stdout: stdout.text('stdout'),
    stderr: stderr.text('stderr'),
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    timedOut,
    cancelled,
    durationMs: Date.now() - started,
  });
  if (abortSignal.aborted) return finish(null, null, false, true);

  const shell = options.shell ?? commandShell(findBash());
  const launch = options.sandbox;
  const prefix = launch?.kind === 'prefix' ? launch.argv : undefined;
  const bwrapLaunch = launch?.kind !== 'prefix' ? launch : undefined;
  if (prefix && prefix.length === 0) throw new CommandStartError('the sandbox launch names no program');
  const program = bwrapLaunch ? bwrapLaunch.bwrap : prefix ? (prefix[0] as string) : shell.path;
  // In the sandbox bwrap reports on fd 3 its child's pid and, once the command ran, its exit code;
  // it reads the seccomp filter from fd 4 to its end and closes it before the command starts.
  const seccomp = bwrapLaunch?.seccomp;
  const args = bwrapLaunch
    ? [...bwrapLaunch.args, '--json-status-fd', '3', ...(seccomp ? ['--seccomp', '4'] : []), '--', ...(bwrapLaunch.wrapper ?? []), shell.path, ...shell.args, command]
    : prefix
      ? [...prefix.slice(1), shell.path, ...shell.args, command]
      : [...shell.args, command];
  const child = spawn(program, args, {
    cwd,
    // bwrap gets the scrubbed environment itself: what it was started with stays readable in /proc.
    env: launch ? withholding(withoutCredentials(commandEnvironment(), launch.passEnv), launch.withheldEnv) : commandEnvironment(),
    detached: true, // its own process group, so the whole group can be killed
    stdio: bwrapLaunch ? ['ignore', 'pipe', 'pipe', 'pipe', ...(seccomp ? (['pipe'] as const) : [])] : ['ignore', 'pipe', 'pipe'],
  });
  if (seccomp) {
    const filterPipe = child.stdio[4] as NodeJS.WritableStream & { on(event: 'error', f: () => void): unknown };
    filterPipe.on('error', () => undefined); // bwrap may fail before it reads: that failure is reported below
    filterPipe.end(seccomp);
  }
  const out = child.stdout as NodeJS.ReadableStream & { destroy(): void };
  const err = child.stderr as NodeJS.ReadableStream & { destroy(): void };
  out.on('data', (chunk: Buffer) => stdout.push(chunk));
  err.on('data', (chunk: Buffer) => stderr.push(chunk));
  let status = '';
  const statusStream = bwrapLaunch ? (child.stdio[3] as (NodeJS.ReadableStream & { destroy(): void }) | null) : null;
  statusStream?.on('data', (chunk: Buffer) => {
    if (status.length < 4096) status += chunk.toString('utf8');
  });
  const statusEnded = statusStream ? new Promise<void>((resolve) => statusStream.once('close', () => resolve())) : Promise.resolve();

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', (error) => {
      if (child.pid === undefined) reject(new CommandStartError(`could not start ${program}: ${error.message}`));
    });
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let timedOut = false;
  let cancelled = false;
  let killing: Promise<void> | undefined;
  const terminate = (): void => {
    const pgid = child.pid;
    if (killing || pgid === undefined) return;
    killGroup(pgid, 'SIGTERM');
    killing = (async () => {
      const deadline = Date.now() + KILL_GRACE_MS;
      while (Date.now() < deadline) {
        await sleep(50);
        if (!groupAlive(pgid)) return;
      }
      killGroup(pgid, 'SIGKILL');
    })();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    terminate();
  }, timeoutMs);
  const onAbort = (): void => {
    cancelled = true;
    terminate();
  };
  abortSignal.addEventListener('abort', onAbort, { once: true });

  try {
    const { code, signal } = await exited;
    clearTimeout(timer);
    abortSignal.removeEventListener('abort', onAbort);
    if (killing) await killing;
    // Output may still be in the pipes; a background child may also hold them open: wait a little, not for it.
    await Promise.race([closed, sleep(PIPE_DRAIN_MS)]);
    out.destroy();
    err.destroy();
    if (prefix && !killing && code !== 0 && /^sandbox-exec: /.test(stderr.text('stderr'))) {
      // sandbox-exec could not apply the profile: the command never ran.
      throw new CommandStartError(`the sandbox could not be set up (${stderr.text('stderr').trim().split('\n')[0]})`);
    }
    if (!bwrapLaunch) return finish(code, signal, timedOut, cancelled);
    await Promise.race([statusEnded, sleep(PIPE_DRAIN_MS)]);
    statusStream?.destroy();
    const childPid = /"child-pid"\s*:\s*(\d+)/.exec(status)?.[1];
    // Killed from outside, bwrap's child dies with it (--die-with-parent) and takes the pid
    // namespace, so every process of the command, along: wait until it is gone.
    if (childPid !== undefined) await waitGone(Number(childPid));
    if (!killing && !/"exit-code"\s*:/.test(status)) {
      // bwrap ended without running the command to its end: the sandbox could not be set up.
      const said = stderr.text('stderr').trim().split('\n').filter((l) => l.startsWith('bwrap:')).join('; ');
      throw new CommandStartError(`the sandbox could not be set up (${said || `bwrap exited with ${code ?? signal}`})`);
    }
    return finish(code, signal, timedOut, cancelled);
  } finally {
    clearTimeout(timer);
    abortSignal.removeEventListener('abort', onAbort);
  }
}
