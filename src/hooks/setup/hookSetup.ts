// Setting up other agents' hooks in a folder, as `agentpolicy hook install` and the palette's
// Govern Other Agents do it (docs/hooks.md, "How the hook starts"): the fallback the hook client
// runs is checked to start, the client is written into the user's state folder, Claude Code gets
// its http hook to the decision service (the service's kept port and the http hook's token) unless
// a command hook is asked for, and the hosts' files are planned as a whole, then written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { keepOutOfGit } from '../install/gitExclude.js';
import { hookClientPath, hookClientScript, writeHookClient, type HookClientFallback } from '../install/hookClient.js';
import { absoluteCommand, cliLauncherProblem } from '../install/hookLauncher.js';
import { launcherFor, quoteForPosixShell, type ClaudeHttpHook } from '../install/hookEntries.js';
import { applyHookInstall, planHookChanges, type HookInstallPlan } from '../install/hookInstall.js';
import type { HostAgent } from '../hosts/hostAgents.js';
import { ensureServicePort, ensureStateFolder, httpHookToken, readHttpHookToken, readServicePort } from '../state/serviceFiles.js';

/** Claude Code's own settings file, which it keeps out of git: where the http hook's port and token go. */
export const CLAUDE_LOCAL_SETTINGS = '.claude/settings.local.json';

export interface HookSetupOptions {
  workspaceFolder: string;
  install: readonly HostAgent[];
  remove: readonly HostAgent[];
  /** The user's state folder: the client, the port and the token go there. */
  stateDir: string;
  /** What the client falls back to: the CLI by absolute paths, or a command line given (`--command`). */
  fallback: { node: string; cli: string; electron?: boolean } | { command: string };
  /** Claude Code's hook: its http hook to the service (default), or the client as a command hook. */
  claudeVia?: 'http' | 'command';
  timeoutSeconds?: number;
  /** Check and plan only: nothing is written (the port and token are read, not made). */
  dryRun?: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface HookSetup {
  plan: HookInstallPlan;
  /** The client the entries run; undefined when only removing. */
  client?: { file: string; fallback: HookClientFallback };
  claudeHttp?: ClaudeHttpHook;
}

/** Throws HookFileError (a host's file cannot be changed) or RangeError (a bad timeout) before anything is written. */
export async function setUpHooks(options: HookSetupOptions): Promise<HookSetup | { problem: string }> {
  const dryRun = options.dryRun === true;
  let client: { file: string; text: string; fallback: HookClientFallback } | undefined;
  let claudeHttp: ClaudeHttpHook | undefined;
  if (options.install.length > 0) {
    // A hook that cannot start is never written: what the client falls back to runs now, or nothing is written.
    const fallback = checkedFallback(options);
    if ('problem' in fallback) return fallback;
    const text = hookClientScript(fallback);
    client = { file: hookClientPath(options.stateDir, text), text, fallback };
    const commandGiven = 'command' in options.fallback;
    if (options.install.includes('claude') && !commandGiven && options.claudeVia !== 'command') claudeHttp = await claudeHttpHook(options.stateDir, dryRun);
  }
  const plan = planHookChanges({
    workspaceFolder: options.workspaceFolder, install: options.install, remove: options.remove,
    ...(options.timeoutSeconds !== undefined ? { timeoutSeconds: options.timeoutSeconds } : {}),
    ...(client !== undefined ? { command: quoteForPosixShell(client.file) } : 'command' in options.fallback ? { command: options.fallback.command } : {}),
    ...(claudeHttp !== undefined ? { claudeHttp } : {}),
  });
  if (!dryRun) {
    if (client !== undefined) {
      ensureStateFolder(options.stateDir);
      writeHookClient(client.file, client.text);
    }
    applyHookInstall(plan);
    // The http hook's entry holds this machine's port and token: never into the repository.
    for (const change of plan.changes) if (change.relativePath === CLAUDE_LOCAL_SETTINGS && change.newText !== undefined) keepOutOfGit(plan.workspaceFolder, CLAUDE_LOCAL_SETTINGS);
  }
  return { plan, ...(client !== undefined ? { client: { file: client.file, fallback: client.fallback } } : {}), ...(claudeHttp !== undefined ? { claudeHttp } : {}) };
}

/** The service's kept port and the http hook's token (made now, or only read for a dry run). */
async function claudeHttpHook(stateDir: string, dryRun: boolean): Promise<ClaudeHttpHook> {
  if (dryRun) return { serviceUrl: `http://127.0.0.1:${readServicePort(stateDir) ?? 0}`, token: readHttpHookToken(stateDir) ?? '(made at install)' };
  return { serviceUrl: `http://127.0.0.1:${await ensureServicePort(stateDir)}`, token: httpHookToken(stateDir) };
}

/** What the client falls back to, checked to run: the command given (its program by absolute path), else the node and the CLI by absolute paths. */
function checkedFallback(options: HookSetupOptions): HookClientFallback | { problem: string } {
  const given = options.fallback;
  if ('command' in given) {
    // Its program by absolute path: the host's PATH need not hold what this one does.
    const line = absoluteCommand(launcherFor(given.command, (p) => path.isAbsolute(p) && isFile(p)), options.cwd, options.env);
    return 'problem' in line ? { problem: `--command ${given.command.trim()}: ${line.problem}` } : line;
  }
  const problem = cliLauncherProblem(given.node, given.cli, options.env, given.electron === true);
  if (problem !== undefined) return { problem };
  return { node: given.node, cli: given.cli, ...(given.electron === true ? { electron: true } : {}) };
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
