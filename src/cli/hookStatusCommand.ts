// `agentpolicy hook status [--workspace DIR] [--json]`: per host, for the workspace, whether our
// hook entry is installed, what it runs and whether that can start, whether the decision service
// answers, the managed policy the hooks judge with, the host's last call, what happens on failure, and whether its commands are sandboxed
// (src/hooks/setup/hookStatus.ts; docs/hooks.md, "Seeing who is governed").
// Exit codes: 0 no warning, 1 a warning (a hook that cannot start), 2 usage.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { hookStatus, hookStatusLine, type HookStatusOptions } from '../hooks/setup/hookStatus.js';
import { managedPolicyInForce } from '../policy/system/managedInForce.js';

export interface HookStatusIo {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
  /** The environment: PATH, the state folder, AGENTPOLICY_AUDIT (default: the process's). */
  env?: NodeJS.ProcessEnv;
}

export const HOOK_STATUS_USAGE = `usage:
  agentpolicy hook status [--workspace DIR] [--json]`;

/** `argv`: the arguments after `hook status`. `extra`: for tests (state folder, audit files, editor lookup). */
export async function hookStatusCommand(argv: readonly string[], io: HookStatusIo, extra: Omit<HookStatusOptions, 'workspace' | 'env'> = {}): Promise<number> {
  let values: { workspace?: string; json?: boolean; help?: boolean };
  try {
    values = parseArgs({
      args: [...argv], strict: true, allowPositionals: false,
      options: { workspace: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    }).values;
  } catch (error) {
    return usage(io, (error as Error).message);
  }
  if (values.help === true) {
    io.out(HOOK_STATUS_USAGE);
    return 0;
  }
  const workspace = path.resolve(io.cwd, values.workspace ?? '.');
  let isFolder = false;
  try {
    isFolder = fs.statSync(workspace).isDirectory();
  } catch {
    // Not there.
  }
  if (!isFolder) return usage(io, `--workspace ${values.workspace ?? '.'}: no such folder`);
  const env = io.env ?? process.env;
  const statuses = await hookStatus({ ...extra, workspace, env });
  // The managed layer every host's hook judges with (docs/teams.md): the system file when it counts.
  const trial = env.AGENTPOLICY_MANAGED_POLICY !== undefined && env.AGENTPOLICY_MANAGED_POLICY !== '' ? { file: path.resolve(workspace, env.AGENTPOLICY_MANAGED_POLICY), from: 'AGENTPOLICY_MANAGED_POLICY' } : undefined;
  const managed = managedPolicyInForce(trial, { env });
  if (values.json === true) {
    io.out(JSON.stringify(statuses, null, 2));
  } else {
    io.out(managed.line);
    for (const w of managed.warnings) io.out(`warning: ${w}`);
    for (const s of statuses) io.out(hookStatusLine(s));
    for (const s of statuses) if (s.warning !== undefined) io.out(`warning: ${s.warning}. Fix: ${s.fix}`);
  }
  return statuses.some((s) => s.warning !== undefined) ? 1 : 0;
}

function usage(io: HookStatusIo, message: string): number {
  io.err(`agentpolicy: ${message}`);
  io.err(HOOK_STATUS_USAGE);
  return 2;
}
