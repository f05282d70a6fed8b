// Runs a program in a process group of its own and always ends the whole group: an agent CLI
// starts hooks and shells, and a test must leave none of them behind, whether the CLI exits, hangs
// past the test's limit, or the test fails half way.
import { spawn } from 'node:child_process';

export interface GroupRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the program was still running at `timeoutMs` and was killed. */
  timedOut: boolean;
}

export interface GroupRunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}

/** Milliseconds between the polite signal and the hard one, when a timed-out group does not stop. */
const GRACE_MS = 2000;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** Runs `argv` with stdin closed; resolves when it exits (or was killed at the limit), its group ended. */
export function runInGroup(argv: readonly string[], options: GroupRunOptions): Promise<GroupRun> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(file!, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid!, 'SIGTERM');
      setTimeout(() => killGroup(child.pid!, 'SIGKILL'), GRACE_MS).unref();
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', () => {
      // Whatever the program left running in its group (a hook past its timeout, a shell) goes too.
      killGroup(child.pid!, 'SIGKILL');
      // A process that left the group may still hold the pipes: stop reading them after a while.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, GRACE_MS).unref();
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr, timedOut });
    });
  });
}
