// `agentpolicy serve [--workspace DIR] [--port N] [--state-dir D]`: the resident decision service
// (src/hooks/service/decisionService.ts) for terminals, CI and servers. One per user, serving every
// workspace: each call's own folder decides which policy judges it (docs/hooks.md, "The decision
// service"). Prints one line when ready, `agentpolicy: serving http://127.0.0.1:PORT unix:SOCKET`,
// and runs until SIGINT or SIGTERM, then closes and removes its discovery file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { startDecisionService } from '../hooks/service/decisionService.js';
import { ensureService } from '../hooks/service/ensureService.js';
import { ownCliScript } from '../hooks/judge/hookSandbox.js';
import { defaultStateDir } from '../hooks/state/stateDir.js';
import { shutdownTelemetry } from '../runtime/telemetry/auditTelemetry.js';

export const SERVE_USAGE = `  agentpolicy serve [--workspace DIR] [--port N] [--state-dir D]
      answers every host's hook calls from one resident process (POST /hook/<agent>, /http/claude);
      prints "agentpolicy: serving http://127.0.0.1:PORT unix:SOCKET" when ready, runs until SIGINT/SIGTERM
  agentpolicy serve --ensure [--state-dir D]
      starts the service in the background unless one answers (Claude Code's SessionStart hook);
      exits 0 once one answers, 1 saying why it could not`;

export class ServeUsageError extends Error {}

export interface ServeIo {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Resolves when the service is to stop (default: the process's first SIGINT or SIGTERM). */
  stop?: Promise<void>;
}

/** The process's first SIGINT or SIGTERM (the handlers then go: a second one ends the process as usual). */
function signalled(): { stop: Promise<void>; forget: () => void } {
  let forget = (): void => {};
  const stop = new Promise<void>((resolve) => {
    const on = (): void => {
      forget();
      resolve();
    };
    forget = () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
  return { stop, forget };
}

/** Runs the service until it is told to stop; resolves to the exit code (1: it could not start). Throws ServeUsageError on a wrong command line. */
export async function serveCommand(args: readonly string[], io: ServeIo): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...args],
      options: { workspace: { type: 'string' }, port: { type: 'string' }, 'state-dir': { type: 'string' }, ensure: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }).values;
  } catch (error) {
    throw new ServeUsageError((error as Error).message);
  }
  if (values.help === true) {
    io.out(`usage:\n${SERVE_USAGE}`);
    return 0;
  }
  const str = (name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const portText = str('port');
  const port = portText === undefined ? undefined : Number(portText);
  if (!/^\d+$/.test(portText ?? '0') || !(port === undefined || (port >= 0 && port <= 65535))) throw new ServeUsageError('--port takes a port number (0 to 65535; 0: one the system picks)');
  const workspace = str('workspace') !== undefined ? path.resolve(io.cwd, str('workspace')!) : undefined;
  if (workspace !== undefined && !fs.statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) throw new ServeUsageError(`--workspace ${str('workspace')}: no such folder`);
  const stateDir = str('state-dir') !== undefined ? path.resolve(io.cwd, str('state-dir')!) : undefined;
  if (values.ensure === true) {
    if (portText !== undefined || workspace !== undefined) throw new ServeUsageError('--ensure takes --state-dir only');
    return ensureCommand(stateDir ?? defaultStateDir(io.env ?? process.env), io);
  }
  // Listening before the signal handlers are in place would let an early SIGTERM end the process
  // without removing its files: the handlers first.
  const signals = io.stop === undefined ? signalled() : undefined;
  const stop = io.stop ?? signals!.stop;
  let service;
  try {
    service = await startDecisionService({
      ...(port !== undefined ? { port } : {}), workspace: workspace ?? io.cwd,
      ...(stateDir !== undefined ? { stateDir } : {}),
      ...(io.env !== undefined ? { env: io.env } : {}),
    });
  } catch (error) {
    signals?.forget();
    io.err(`agentpolicy serve: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  io.out(`agentpolicy: serving ${service.address}`);
  await stop;
  await service.close();
  // Decisions in OpenTelemetry: what still waits gets a moment to reach the collector.
  await shutdownTelemetry(2000);
  return 0;
}

/** `serve --ensure`: quiet on stdout (a SessionStart hook's stdout goes to the model); why it failed on stderr. */
async function ensureCommand(stateDir: string, io: ServeIo): Promise<number> {
  const cli = ownCliScript();
  if (cli === undefined) {
    io.err('agentpolicy serve --ensure: the CLI\'s own script (dist/cli.js) was not found: start the service with agentpolicy serve');
    return 1;
  }
  const result = await ensureService({ stateDir, cli: [process.execPath, cli], cwd: io.cwd, env: io.env ?? process.env });
  if (result.state !== 'failed') return 0;
  io.err(`agentpolicy serve --ensure: the decision service could not be started, so Agent Policy's http hook will block every tool call: ${result.why}. Start it with agentpolicy serve.`);
  return 1;
}
