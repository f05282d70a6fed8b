// `agentpolicy serve --ensure` (Claude Code's SessionStart hook, docs/hooks.md): makes sure the
// user's decision service runs, starting one in the background when none answers, so that the
// http hook, which cannot start anything itself, finds it. Returns once the service answers on
// its socket, or says why it could not.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureStateFolder, serviceRuns } from '../state/serviceFiles.js';

/** How long a started service may take to answer (it compiles the shell parser first). */
const START_TIMEOUT_MS = 20_000;
/** The service's own output, kept for when it fails to start (its one ready line; its errors). */
export const SERVICE_LOG = 'service.log';

export type EnsureResult =
  | { state: 'running'; pid: number }
  | { state: 'started'; pid: number }
  | { state: 'failed'; why: string };

export interface EnsureOptions {
  stateDir: string;
  /** The program and its first arguments that run the CLI (`[node, cli.js]`): `serve --state-dir D` follows. */
  cli: readonly string[];
  /** The folder the service starts in (its default workspace). */
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export async function ensureService(options: EnsureOptions): Promise<EnsureResult> {
  const running = await serviceRuns(options.stateDir);
  if (running !== undefined) return { state: 'running', pid: running };
  ensureStateFolder(options.stateDir);
  const log = path.join(options.stateDir, SERVICE_LOG);
  const out = fs.openSync(log, 'w', 0o600);
  // A process of its own (its own session): it outlives the host that started it.
  const [program, ...first] = options.cli;
  const child = spawn(program!, [...first, 'serve', '--state-dir', options.stateDir], {
    cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  let ended: string | undefined;
  child.once('exit', (code, signal) => (ended = signal !== null ? `was ended by ${signal}` : `exited with ${code}`));
  child.once('error', (error) => (ended = `could not start (${error.message})`));
  child.unref();
  const until = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const pid = await serviceRuns(options.stateDir);
    // Another start may have won the race: any service of this user will do.
    if (pid !== undefined) return { state: pid === child.pid ? 'started' : 'running', pid };
    if (ended !== undefined) return { state: 'failed', why: `the service ${ended}: ${lastLines(log)}` };
  }
  return { state: 'failed', why: `the service did not answer within ${START_TIMEOUT_MS / 1000} s: ${lastLines(log)}` };
}

function lastLines(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' ').slice(0, 500) || '(it said nothing)';
  } catch {
    return '(no log)';
  }
}
