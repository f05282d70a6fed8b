// Runs one command line inside bubblewrap (or under macOS's sandbox-exec: a launch with `argv`) with the caller's own stdin, stdout and stderr (for
// `agentpolicy sandbox -- npm test`, interactive use): `bwrap …args --json-status-fd 3
// [--seccomp 4] -- [wrapper…] SHELL -c -- LINE`. Nothing is captured. The process runs in its own
// process group; SIGINT, SIGTERM and SIGHUP of this process end the whole sandbox (as
// commandProcess.ts ends a command: SIGTERM to bwrap's group, SIGKILL after a grace), and a
// SIGKILL of this process ends it too (bubblewrap's --die-with-parent). The exit status follows
// `env` and `timeout`: the command's own, 128+N when it (or this process) was killed by signal N,
// and a `setupFailed` result when bubblewrap could not set the sandbox up (nothing ran).
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import { commandEnvironment, killGroup, type CommandShell, type SandboxLaunch } from './commandProcess.js';
import { processAlive } from './processState.js';
import { withoutCredentials } from './sandboxEnvironment.js';

/** After SIGTERM, how long bwrap's process group gets before SIGKILL. */
const KILL_GRACE_MS = 2000;

export interface SandboxedProcessOptions {
  launch: SandboxLaunch;
  shell: CommandShell;
  /** The command line the shell runs. */
  command: string;
  /** Absolute, existing; inside the workspace (bwrap's --chdir is in `launch.args`). */
  cwd: string;
  /** The environment to start from (default process.env); the credential variables are withheld but for launch.passEnv. */
  env?: NodeJS.ProcessEnv;
  /** The signals that end the sandbox (default SIGINT, SIGTERM, SIGHUP). */
  signals?: readonly NodeJS.Signals[];
}

export type SandboxedProcessResult =
  | { ran: true; exitCode: number; /** The signal of this process that ended the run, when one did. */ stoppedBy?: NodeJS.Signals }
  | { ran: false; reason: string };

/** An exit without a code or a signal (never seen): reported as our own failure. */
const SETUP_FAILED_STATUS = 125;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** 128 + the signal's number, as a shell reports a process killed by it. */
export function signalStatus(signal: NodeJS.Signals): number {
  return 128 + (os.constants.signals[signal] ?? 0);
}

/** Runs the command and resolves once bwrap and the sandbox's processes are gone. Never rejects for the command's own failure. */
export async function runSandboxedProcess(options: SandboxedProcessOptions): Promise<SandboxedProcessResult> {
  const { launch, shell, command, cwd } = options;
  // macOS: a program that sandboxes what it runs (sandbox-exec), given as the words before the shell (`argv`); no status pipe.
  const prefix = launch.argv;
  const bwrap = prefix === undefined ? launch : undefined;
  if (prefix !== undefined && prefix.length === 0) return { ran: false, reason: 'the sandbox launch names no program' };
  const program = bwrap ? bwrap.bwrap : (prefix![0] as string);
  const seccomp = bwrap?.seccomp;
  const args = bwrap
    ? [...bwrap.args, '--json-status-fd', '3', ...(seccomp ? ['--seccomp', '4'] : []), '--', ...(bwrap.wrapper ?? []), shell.path, ...shell.args, command]
    : [...prefix!.slice(1), shell.path, ...shell.args, command];
  const child = spawn(program, args, {
    cwd,
    // bwrap gets the scrubbed environment itself: what it was started with stays readable in /proc.
    env: withoutCredentials(commandEnvironment(options.env ?? process.env), launch.passEnv),
    detached: true, // its own process group: the terminal's Ctrl-C reaches this process, which ends the whole group
    stdio: bwrap ? ['inherit', 'inherit', 'inherit', 'pipe', ...(seccomp ? (['pipe'] as const) : [])] : ['inherit', 'inherit', 'inherit'],
  });
  if (seccomp) {
    const filterPipe = child.stdio[4] as NodeJS.WritableStream & { on(event: 'error', f: () => void): unknown };
    filterPipe.on('error', () => undefined); // bwrap may fail before it reads: reported below
    filterPipe.end(seccomp);
  }
  let status = '';
  const statusStream = bwrap ? (child.stdio[3] as NodeJS.ReadableStream & { destroy(): void }) : undefined;
  statusStream?.on('data', (chunk: Buffer) => {
    if (status.length < 4096) status += chunk.toString('utf8');
  });
  const statusEnded = statusStream ? new Promise<void>((resolve) => statusStream.once('close', () => resolve())) : Promise.resolve();

  let stoppedBy: NodeJS.Signals | undefined;
  let killing: Promise<void> | undefined;
  const stop = (signal: NodeJS.Signals): void => {
    stoppedBy ??= signal;
    const pgid = child.pid;
    if (killing || pgid === undefined) return;
    killGroup(pgid, 'SIGTERM');
    killing = (async () => {
      const deadline = Date.now() + KILL_GRACE_MS;
      while (Date.now() < deadline && processAlive(pgid)) await sleep(50);
      killGroup(pgid, 'SIGKILL');
    })();
  };
  const signals = options.signals ?? ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const handlers = signals.map((signal) => [signal, () => stop(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);

  try {
    const exited = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | { error: Error }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (error) => {
        if (child.pid === undefined) resolve({ error });
      });
    });
    if ('error' in exited) return { ran: false, reason: `could not start ${program}: ${exited.error.message}` };
    if (killing) await killing;
    if (!bwrap) {
      if (stoppedBy !== undefined) return { ran: true, exitCode: signalStatus(stoppedBy), stoppedBy };
      return { ran: true, exitCode: exited.signal !== null ? signalStatus(exited.signal) : (exited.code ?? SETUP_FAILED_STATUS) };
    }
    // The wait's timer must not hold the process open once the status has come (it would, 250 ms after every command).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([statusEnded, new Promise<void>((resolve) => (timer = setTimeout(resolve, 250)))]);
    clearTimeout(timer);
    statusStream?.destroy();
    // bwrap's child dies with it (--die-with-parent) and takes the pid namespace along: wait until it is gone.
    const childPid = /"child-pid"\s*:\s*(\d+)/.exec(status)?.[1];
    if (childPid !== undefined) {
      const deadline = Date.now() + KILL_GRACE_MS * 2;
      while (processAlive(Number(childPid)) && Date.now() < deadline) await sleep(10);
    }
    if (stoppedBy !== undefined) return { ran: true, exitCode: signalStatus(stoppedBy), stoppedBy };
    const reported = /"exit-code"\s*:\s*(\d+)/.exec(status)?.[1];
    if (reported === undefined) {
      // bwrap ended without running the command to its end: the sandbox could not be set up (bwrap said why on stderr).
      return { ran: false, reason: `the sandbox could not be set up (bwrap exited with ${exited.code ?? exited.signal})` };
    }
    // bwrap exits with its command's status (128+N for a signal): the same as `exit-code`.
    if (exited.signal !== null) return { ran: true, exitCode: signalStatus(exited.signal) };
    return { ran: true, exitCode: exited.code ?? Number(reported) };
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}
