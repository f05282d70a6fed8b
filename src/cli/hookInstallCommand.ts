// `agentpolicy hook install --agent claude[,codex…] [--workspace DIR] [--command CMD] [--timeout S]
// [--remove] [--dry-run]`: writes (or takes out) each host's hook entry (docs/hooks.md). The entry
// runs the hook client (hookClient.ts), written into the user's state folder, by its absolute path;
// the client falls back to this node and this CLI's cli.js by absolute paths (or to --command, its
// program named by absolute path: hookLauncher.ts), checked to run before anything is written.
// Exit codes: 0 done, 1 a file could not be changed or the hook could not start (nothing was written), 2 usage.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { HookFileError } from '../hooks/install/hookFileEdit.js';
import { changeKind, HOST_SETUP_NOTES, type HookFileChange } from '../hooks/install/hookInstall.js';
import { setUpHooks, type HookSetupOptions } from '../hooks/setup/hookSetup.js';
import { HOST_AGENTS, HOSTS, isHostAgent, type HostAgent } from '../hooks/hosts/hostAgents.js';
import { defaultStateDir } from '../hooks/state/stateDir.js';
import { ownCliScript } from '../hooks/judge/hookSandbox.js';

/** What the command needs of the process (the shape of agentpolicy.ts's CliIo, declared here so neither file imports the other). */
export interface HookInstallIo {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
  /** The environment: PATH for --command, the state folder (default: the process's). */
  env?: NodeJS.ProcessEnv;
  /** The node the client falls back to (default: the one running now). */
  node?: string;
  /** The CLI's own script, dist/cli.js (default: the one beside the running code). */
  cliScript?: string;
}

/** The CLI's own script (hookSandbox.ts): `cli.js` beside the running bundle, else the script node was started with. */
export { ownCliScript };

export const HOOK_INSTALL_USAGE = `usage:
  agentpolicy hook install --agent ${HOST_AGENTS.join('|')}|all[,…] [--workspace DIR] [--command CMD] [--via http|command] [--timeout S] [--remove] [--dry-run]
      --via (Claude Code): http (default) its http hook to the decision service, in .claude/settings.local.json;
            command: the hook client as a command hook, in .claude/settings.json (also with --command)`;

const OPTIONS = {
  agent: { type: 'string' }, workspace: { type: 'string' }, command: { type: 'string' }, timeout: { type: 'string' }, via: { type: 'string' },
  remove: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

/** `argv`: the arguments after `hook install`. */
export async function hookInstallCommand(argv: readonly string[], io: HookInstallIo): Promise<number> {
  let values: { agent?: string; workspace?: string; command?: string; timeout?: string; via?: string; remove?: boolean; 'dry-run'?: boolean; help?: boolean };
  try {
    values = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    return usage(io, (error as Error).message);
  }
  if (values.help) {
    io.out(HOOK_INSTALL_USAGE);
    return 0;
  }
  const env = io.env ?? process.env;
  const removing = values.remove === true;
  const dryRun = values['dry-run'] === true;
  let setup;
  try {
    const agents = agentsOf(values.agent);
    const workspaceFolder = path.resolve(io.cwd, values.workspace ?? '.');
    if (!isFolder(workspaceFolder)) throw new UsageError(`--workspace ${values.workspace ?? '.'}: no such folder`);
    const timeoutSeconds = values.timeout === undefined ? undefined : secondsOf(values.timeout);
    if (values.command !== undefined && values.command.trim() === '') throw new UsageError('--command is empty');
    if (values.via !== undefined && values.via !== 'http' && values.via !== 'command') throw new UsageError(`--via ${values.via}: http or command`);
    if (values.via === 'http' && values.command !== undefined) throw new UsageError('--via http and --command: the http hook runs no command (give one or the other)');
    let fallback: HookSetupOptions['fallback'];
    if (values.command !== undefined) {
      fallback = { command: values.command };
    } else {
      const cli = io.cliScript ?? ownCliScript();
      if (cli === undefined && !removing) {
        io.err('agentpolicy: the hook could not start, so nothing was written: the agentpolicy CLI\'s own script (dist/cli.js) was not found beside the running code: name it with --command "/absolute/path/to/node /absolute/path/to/dist/cli.js"');
        return 1;
      }
      // Run by the `agentpolicy` shim with the editor's runtime (an Electron run as node): the client must say so too.
      const electron = io.node === undefined && process.versions.electron !== undefined;
      fallback = { node: io.node ?? process.execPath, cli: cli ?? '', ...(electron ? { electron: true } : {}) };
    }
    setup = await setUpHooks({
      workspaceFolder, install: removing ? [] : agents, remove: removing ? agents : [], stateDir: defaultStateDir(env), fallback,
      ...(values.via === 'command' || values.via === 'http' ? { claudeVia: values.via } : {}),
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}), dryRun, cwd: io.cwd, env,
    });
  } catch (error) {
    if (error instanceof UsageError || error instanceof RangeError) return usage(io, error.message);
    if (error instanceof HookFileError) {
      io.err(`agentpolicy: ${error.message}`);
      return 1;
    }
    io.err(`agentpolicy: ${(error as Error).message}`);
    return 1;
  }
  if ('problem' in setup) {
    io.err(`agentpolicy: the hook could not start, so nothing was written: ${setup.problem}`);
    return 1;
  }
  const { plan, client, claudeHttp } = setup;
  for (const change of plan.changes) io.out(describeChange(change, dryRun));
  if (client !== undefined) io.out(`${dryRun ? 'would write' : 'wrote'} the hook client ${client.file} (the entries run it: it asks the decision service, else runs ${'node' in client.fallback ? `${client.fallback.node} ${client.fallback.cli}` : client.fallback.command})`);
  if (claudeHttp !== undefined) io.out(`Claude Code's http hook asks the decision service at ${claudeHttp.serviceUrl} and blocks every call while it is down; its SessionStart hook starts the service (or: agentpolicy serve)`);
  if (!removing) {
    const hosts = new Set(plan.changes.flatMap((c) => c.hosts));
    for (const host of HOST_AGENTS.filter((h) => hosts.has(h))) io.out(`  ${HOSTS[host].label}: ${HOST_SETUP_NOTES[host]}`);
  }
  return 0;
}

/** One line per file: what was done (or would be, with --dry-run) and for whom. */
export function describeChange(change: HookFileChange, dryRun: boolean): string {
  const kind = changeKind(change);
  const hosts = change.hosts.map((h) => HOSTS[h].label).join(' and ');
  const done: Record<typeof kind, [string, string]> = {
    create: ['created', 'would create'],
    update: change.action === 'install' ? ['updated', 'would update'] : ['removed our entry from', 'would remove our entry from'],
    delete: ['deleted', 'would delete'],
    unchanged: change.action === 'install' ? ['already in place:', 'already in place:'] : ['no entry of ours in', 'no entry of ours in'],
  };
  return `${done[kind][dryRun ? 1 : 0]} ${change.relativePath} (${hosts})`;
}

function agentsOf(value: string | undefined): HostAgent[] {
  if (value === undefined || value.trim() === '') throw new UsageError(`--agent is required: ${HOST_AGENTS.join(', ')} or all`);
  const names = value.split(',').map((n) => n.trim()).filter((n) => n !== '');
  if (names.includes('all')) return [...HOST_AGENTS];
  const unknown = names.filter((n) => !isHostAgent(n));
  if (unknown.length > 0) throw new UsageError(`--agent ${unknown.join(',')}: not a host (${HOST_AGENTS.join(', ')} or all)`);
  return HOST_AGENTS.filter((h) => names.includes(h));
}

function secondsOf(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new UsageError(`--timeout ${value}: a whole number of seconds, at least 1`);
  return Number(value);
}

function usage(io: HookInstallIo, message: string): number {
  io.err(`agentpolicy: ${message}`);
  io.err(HOOK_INSTALL_USAGE);
  return 2;
}

function isFolder(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
