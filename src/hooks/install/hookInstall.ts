// `agentpolicy hook install`: which files change, and how, for the hosts asked for; then writing
// them. Planning reads every file first and refuses as a whole, so a file that cannot be read
// leaves every file as it was.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_HOOK_LAUNCHER, DEFAULT_HOOK_TIMEOUT_SECONDS, hookTargets, launcherFor, type ClaudeHttpHook, type HookTarget } from './hookEntries.js';
import { holdsOurEntries, withoutOurEntries, withOurEntries } from './hookFileEdit.js';
import { HOST_AGENTS, type HostAgent } from '../hosts/hostAgents.js';

export interface HookInstallOptions {
  workspaceFolder: string;
  agents: readonly HostAgent[];
  /** How to start the CLI: a command line, or the path of the executable or of `cli.js`. Default `agentpolicy`. */
  command?: string;
  /** The timeout written into each entry, in seconds (the hook answers before it). Default 120. */
  timeoutSeconds?: number;
  /** Take our entries out instead of putting them in. */
  remove: boolean;
  /** Claude Code gets the http hook to the decision service (hookEntries.ts); absent: its command hook. */
  claudeHttp?: ClaudeHttpHook;
}

export interface HookChangesOptions extends Omit<HookInstallOptions, 'agents' | 'remove'> {
  install: readonly HostAgent[];
  remove: readonly HostAgent[];
}

export type HookFileChangeKind = 'create' | 'update' | 'delete' | 'unchanged';

export interface HookFileChange {
  /** Absolute. */
  path: string;
  /** Relative to the workspace folder, with forward slashes. */
  relativePath: string;
  /** The hosts whose entry this file holds. */
  hosts: readonly HostAgent[];
  /** Whether our entries go in or out. */
  action: 'install' | 'remove';
  /** The text now; undefined when the file does not exist. */
  oldText: string | undefined;
  /** The text to write; undefined when the file is to be deleted (or stays absent). */
  newText: string | undefined;
}

export interface HookInstallPlan {
  workspaceFolder: string;
  changes: HookFileChange[];
}

export function planHookInstall(options: HookInstallOptions): HookInstallPlan {
  const { agents, remove, ...rest } = options;
  return planHookChanges({ ...rest, install: remove ? [] : agents, remove: remove ? agents : [] });
}

/**
 * Installs for some hosts and removes for others at once (the palette's pick). Copilot CLI and VS
 * Code share one entry: it stays when either of them is to be installed.
 * Throws HookFileError (before anything is written) when a file is not JSONC or not shaped as expected.
 */
export function planHookChanges(options: HookChangesOptions): HookInstallPlan {
  const workspaceFolder = path.resolve(options.workspaceFolder);
  const targets = targetsFor(options);
  const changes: HookFileChange[] = [];
  for (const target of targets) {
    const named = target.hosts.some((h) => options.install.includes(h));
    // A file that no longer holds a host's entry (Claude Code's other one) has ours taken out.
    const install = named && target.inactive !== true;
    if (!named && !target.hosts.some((h) => options.remove.includes(h))) continue;
    const file = path.join(workspaceFolder, ...target.file.split('/'));
    const oldText = readIfExists(file);
    const newText = install ? withOurEntries(oldText, target) : oldText === undefined ? undefined : withoutOurEntries(oldText, target);
    // Nothing of ours in the other file of a host (Claude Code's two): not worth a line.
    if (target.inactive === true && oldText === newText) continue;
    changes.push({ path: file, relativePath: target.file, hosts: target.hosts, action: install ? 'install' : 'remove', oldText, newText });
  }
  return { workspaceFolder, changes };
}

export function changeKind(change: HookFileChange): HookFileChangeKind {
  if (change.oldText === change.newText) return 'unchanged';
  if (change.oldText === undefined) return 'create';
  return change.newText === undefined ? 'delete' : 'update';
}

/**
 * Writes the plan. A file that changed since it was planned is not overwritten: the write stops
 * there with an error naming it (files before it in the plan are written).
 */
export function applyHookInstall(plan: HookInstallPlan): void {
  for (const change of plan.changes) {
    if (changeKind(change) === 'unchanged') continue;
    if (readIfExists(change.path) !== change.oldText) {
      throw new Error(`${change.relativePath} changed while the hooks were being installed; run again`);
    }
    if (change.newText === undefined) {
      fs.rmSync(change.path);
      // A folder that held only our file (`.github/hooks/`) goes with it.
      try {
        fs.rmdirSync(path.dirname(change.path));
      } catch {
        // Not empty, or not ours to remove: it stays.
      }
    } else {
      fs.mkdirSync(path.dirname(change.path), { recursive: true });
      fs.writeFileSync(change.path, change.newText);
    }
  }
}

/** The hosts whose entry is in place in the workspace (any launcher that is ours). */
export function installedHookHosts(workspaceFolder: string): HostAgent[] {
  const installed = new Set<HostAgent>();
  for (const target of hookTargets({ launcher: DEFAULT_HOOK_LAUNCHER, timeoutSeconds: DEFAULT_HOOK_TIMEOUT_SECONDS })) {
    const text = readIfExists(path.join(path.resolve(workspaceFolder), ...target.file.split('/')));
    if (holdsOurEntries(text, target)) for (const h of target.hosts) installed.add(h);
  }
  return HOST_AGENTS.filter((h) => installed.has(h));
}

/** What a host still needs before it runs the entry, and what it cannot be made to do (docs/hooks.md). */
export const HOST_SETUP_NOTES: Readonly<Record<HostAgent, string>> = {
  claude: 'Claude Code runs it at once; a crash or timeout of the hook blocks the call (onFailure: block). Its http hook (the default) blocks every call while the decision service is down: a window of VS Code with Agent Policy runs it, and the SessionStart hook starts it for each session (or run agentpolicy serve).',
  codex: 'Codex runs project hooks only in a trusted project (trust it when asked, or `codex exec --trust`) and only after you trust the hook in `/hooks` (or run with `--dangerously-bypass-hook-trust`); a crash or timeout of the hook lets the call through.',
  gemini: 'Gemini CLI runs project hooks only in a trusted folder (trust it when asked; headless: GEMINI_CLI_TRUST_WORKSPACE=true, `--skip-trust` is not enough); a crash or timeout of the hook lets the call through.',
  copilot: 'Copilot CLI runs repository hooks only in a trusted folder (trust it when asked; with -p pass `--trust-folder`). VS Code agent mode reads the same file: one entry governs both.',
  vscode: 'VS Code agent mode (hooks are in preview) reads .github/hooks/*.json unless `chat.hookFilesLocations` turns it off; Copilot CLI reads the same file: one entry governs both. A crash of the hook lets the call through.',
  cursor: 'Cursor runs it at once; a crash or timeout of the hook blocks the call (failClosed).',
};

/**
 * Whether the host refuses a tool call when the hook cannot start (the launcher is not on its
 * PATH: the shell exits 127 and says so on stderr). Codex and VS Code let the call through.
 */
export const BLOCKS_WHEN_HOOK_CANNOT_START: Readonly<Record<HostAgent, boolean>> = {
  claude: true, // onFailure: block
  codex: false,
  gemini: true, // an exit code of 2 or more with text on stderr is a denial
  copilot: true, // any exit code but 0 is a denial
  vscode: false,
  cursor: true, // failClosed
};

/**
 * Whether a launcher that is one plain word (the default `agentpolicy`) is found on this PATH;
 * a command line or a path is taken to be right. The hosts run hooks with their own PATH: this
 * only warns early.
 */
export function launcherOnPath(launcher: string, pathVariable = process.env.PATH ?? ''): boolean {
  const word = launcher.trim();
  if (!/^[A-Za-z0-9_.-]+$/.test(word)) return true;
  return pathVariable.split(path.delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      fs.accessSync(path.join(dir, word), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function targetsFor(options: Pick<HookChangesOptions, 'command' | 'timeoutSeconds' | 'claudeHttp'>): HookTarget[] {
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1) throw new RangeError(`the hook timeout must be a whole number of seconds, at least 1 (got ${timeoutSeconds})`);
  const launcher = launcherFor(options.command ?? DEFAULT_HOOK_LAUNCHER, isFile);
  if (launcher === '') throw new RangeError('the hook command is empty');
  return hookTargets({ launcher, timeoutSeconds, ...(options.claudeHttp !== undefined ? { claudeHttp: options.claudeHttp } : {}) });
}

function isFile(p: string): boolean {
  try {
    return path.isAbsolute(p) && fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
