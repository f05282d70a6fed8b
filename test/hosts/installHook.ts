// Installs the hook for a host in a project the way a person does: `agentpolicy hook install`.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { type HostDriver, REPO } from './hostDrivers';

/** The agentpolicy CLI under test (`npm run build`); AGENTPOLICY_HOSTS_CLI tests one built elsewhere. */
export const AGENTPOLICY_CLI = process.env.AGENTPOLICY_HOSTS_CLI ?? path.join(REPO, 'dist', 'cli.js');

export interface HookInstallOptions {
  /** `--command`: a stand-in that crashes or stalls; none: the hook client with this node and dist/cli.js by absolute paths, as a person installs it. */
  launcher?: string;
  /** The environment of the install (its XDG_STATE_HOME: where the hook client is written). */
  env?: NodeJS.ProcessEnv;
  /** The timeout written in the host's entry, in seconds (default: the install's). */
  timeoutSeconds?: number;
  /** `--via` (Claude Code): http or command. */
  via?: 'http' | 'command';
}

export function installHook(host: HostDriver['host'], project: string, options: HookInstallOptions): void {
  const args = [AGENTPOLICY_CLI, 'hook', 'install', '--agent', host, '--workspace', project];
  if (options.launcher !== undefined) args.push('--command', options.launcher);
  if (options.timeoutSeconds !== undefined) args.push('--timeout', String(options.timeoutSeconds));
  if (options.via !== undefined) args.push('--via', options.via);
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', ...(options.env !== undefined ? { env: options.env } : {}) });
  if (r.status !== 0) throw new Error(`agentpolicy hook install --agent ${host} exited with ${r.status}: ${r.stderr}${r.stdout}`);
}
