// `agentpolicy hook install --agent claude[,codex…] [--workspace DIR] [--command CMD] [--timeout S]
// [--remove] [--dry-run]`: writes (or takes out) each host's hook entry (docs/hooks.md).
// Exit codes: 0 done, 1 a file could not be changed (nothing was written), 2 usage.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_HOOK_LAUNCHER, LAUNCHER_HINT } from '../hooks/hookEntries.js';
import { HookFileError } from '../hooks/hookFileEdit.js';
import { applyHookInstall, changeKind, HOST_SETUP_NOTES, launcherOnPath, planHookInstall, type HookFileChange } from '../hooks/hookInstall.js';
import { HOST_AGENTS, HOSTS, isHostAgent, type HostAgent } from '../hooks/hostAgents.js';

/** What the command needs of the process (the shape of agentpolicy.ts's CliIo, declared here so neither file imports the other). */
export interface HookInstallIo {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
}

export const HOOK_INSTALL_USAGE = `usage:
  agentpolicy hook install --agent ${HOST_AGENTS.join('|')}|all[,…] [--workspace DIR] [--command CMD] [--timeout S] [--remove] [--dry-run]`;

const OPTIONS = {
  agent: { type: 'string' }, workspace: { type: 'string' }, command: { type: 'string' }, timeout: { type: 'string' },
  remove: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

/** `argv`: the arguments after `hook install`. */
export async function hookInstallCommand(argv: readonly string[], io: HookInstallIo): Promise<number> {
  let values: { agent?: string; workspace?: string; command?: string; timeout?: string; remove?: boolean; 'dry-run'?: boolean; help?: boolean };
  try {
    values = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    return usage(io, (error as Error).message);
  }
  if (values.help) {
    io.out(HOOK_INSTALL_USAGE);
    return 0;
  }
  let plan;
  try {
    const agents = agentsOf(values.agent);
    const workspaceFolder = path.resolve(io.cwd, values.workspace ?? '.');
    if (!isFolder(workspaceFolder)) throw new UsageError(`--workspace ${values.workspace ?? '.'}: no such folder`);
    plan = planHookInstall({
      workspaceFolder, agents, remove: values.remove === true,
      command: values.command, timeoutSeconds: values.timeout === undefined ? undefined : secondsOf(values.timeout),
    });
  } catch (error) {
    if (error instanceof UsageError || error instanceof RangeError) return usage(io, error.message);
    if (error instanceof HookFileError) {
      io.err(`agentpolicy: ${error.message}`);
      return 1;
    }
    throw error;
  }
  const dryRun = values['dry-run'] === true;
  if (!dryRun) {
    try {
      applyHookInstall(plan);
    } catch (error) {
      io.err(`agentpolicy: ${(error as Error).message}`);
      return 1;
    }
  }
  for (const change of plan.changes) io.out(describeChange(change, dryRun));
  if (values.remove !== true) {
    const hosts = new Set(plan.changes.flatMap((c) => c.hosts));
    for (const host of HOST_AGENTS.filter((h) => hosts.has(h))) io.out(`  ${HOSTS[host].label}: ${HOST_SETUP_NOTES[host]}`);
    const launcher = values.command ?? DEFAULT_HOOK_LAUNCHER;
    if (!launcherOnPath(launcher)) {
      io.err(`agentpolicy: warning: "${launcher.trim()}" is not on this PATH, and the hosts run it from theirs: ${LAUNCHER_HINT}`);
    }
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
