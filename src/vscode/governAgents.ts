// Agent Policy: Govern Other Agents in This Folder: a pick of the agent programs whose pre-tool
// hooks should ask `.agentpolicy.jsonc` (the ones already set up are picked; unpicking one takes
// its hook out), then the same edits as `agentpolicy hook install` (docs/hooks.md).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_HOOK_LAUNCHER, DEFAULT_HOOK_TIMEOUT_SECONDS, hookTargets, LAUNCHER_HINT, targetOf } from '../hooks/hookEntries.js';
import { HookFileError } from '../hooks/hookFileEdit.js';
import { applyHookInstall, BLOCKS_WHEN_HOOK_CANNOT_START, changeKind, HOST_SETUP_NOTES, installedHookHosts, launcherOnPath, planHookChanges, type HookInstallPlan } from '../hooks/hookInstall.js';
import { HOST_AGENTS, HOSTS, type HostAgent } from '../hooks/hostAgents.js';
import type { Log } from './log.js';
import { walkthroughStepDone } from './walkthroughSteps.js';

interface HostItem extends vscode.QuickPickItem {
  host: HostAgent;
}

/**
 * The hooks run `agentpolicy` from the PATH, not this extension's copy of the CLI: the files are
 * committed and shared, and an absolute path into one person's extension folder (which changes
 * with every update) would fail for everyone else, and block their agents.
 */
export async function governOtherAgents(workspaceFolder: string, log: Log): Promise<void> {
  const installed = installedHookHosts(workspaceFolder);
  const targets = hookTargets({ launcher: DEFAULT_HOOK_LAUNCHER, timeoutSeconds: DEFAULT_HOOK_TIMEOUT_SECONDS });
  const items: HostItem[] = HOST_AGENTS.map((host) => ({
    host,
    label: HOSTS[host].label,
    description: targetOf(targets, host).file,
    detail: HOST_SETUP_NOTES[host],
    picked: installed.includes(host),
    iconPath: new vscode.ThemeIcon(installed.includes(host) ? 'shield' : 'circle-outline'),
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Agent Policy: Govern Other Agents in This Folder'),
    placeHolder: vscode.l10n.t('The agents whose every tool call asks {0} first (unpick one to take its hook out)', '.agentpolicy.jsonc'),
    canPickMany: true,
    ignoreFocusOut: true,
    matchOnDetail: true,
  });
  if (picked === undefined) return;
  const wanted = picked.map((i) => i.host);
  let plan: HookInstallPlan;
  try {
    plan = planHookChanges({ workspaceFolder, install: wanted, remove: installed.filter((h) => !wanted.includes(h)) });
    applyHookInstall(plan);
  } catch (error) {
    await showFailure(workspaceFolder, error, log);
    return;
  }
  const changed = plan.changes.filter((c) => changeKind(c) !== 'unchanged');
  for (const c of changed) log.info(`hooks: ${changeKind(c)} ${c.relativePath} (${c.hosts.join(', ')}: ${c.action})`);
  const governed = installedHookHosts(workspaceFolder);
  if (governed.length > 0) walkthroughStepDone('governed');
  for (const host of governed) log.info(`hooks: ${HOSTS[host].label}: ${HOST_SETUP_NOTES[host]}`);
  const names = governed.map((h) => HOSTS[h].label).join(', ');
  const files = changed.map((c) => c.relativePath).join(', ');
  const summary = changed.length === 0
    ? governed.length === 0 ? vscode.l10n.t('Agent Policy: nothing to change; no other agent is governed in this folder.') : vscode.l10n.t('Agent Policy: nothing to change; it governs {0}.', names)
    : governed.length === 0
      ? vscode.l10n.t('Agent Policy: no other agent is governed in this folder any more ({0}). Commit these files to share them.', files)
      : vscode.l10n.t('Agent Policy: governs {0} in this folder ({1}). Commit these files to share them.', names, files);
  const details = vscode.l10n.t('Show Details');
  if (governed.length > 0 && !launcherOnPath(DEFAULT_HOOK_LAUNCHER)) {
    log.warn(`hooks: "${DEFAULT_HOOK_LAUNCHER}" is not on this PATH: ${LAUNCHER_HINT}`);
    const labels = (blocks: boolean): string => governed.filter((h) => BLOCKS_WHEN_HOOK_CANNOT_START[h] === blocks).map((h) => HOSTS[h].label).join(', ');
    const [refuse, unguarded] = [labels(true), labels(false)];
    const effects = refuse && unguarded
      ? vscode.l10n.t('{0} refuse every tool call and {1} run unguarded', refuse, unguarded)
      : refuse ? vscode.l10n.t('{0} refuse every tool call', refuse) : vscode.l10n.t('{0} run unguarded', unguarded);
    const answer = await vscode.window.showWarningMessage(
      `${summary} ${vscode.l10n.t('The hooks run "{0}", which is not on this PATH: until it is, {1}. Install it with: {2}', DEFAULT_HOOK_LAUNCHER, effects, 'npm install -g agent-policy')}`,
      details,
    );
    if (answer === details) log.channel.show();
    return;
  }
  const answer = await vscode.window.showInformationMessage(summary, details);
  if (answer === details) log.channel.show();
}

async function showFailure(workspaceFolder: string, error: unknown, log: Log): Promise<void> {
  log.error('hooks: nothing was changed', error);
  const open = vscode.l10n.t('Open File');
  const file = error instanceof HookFileError ? error.file : undefined;
  const answer = await vscode.window.showErrorMessage(vscode.l10n.t('Agent Policy: {0}', error instanceof Error ? error.message : String(error)), ...(file ? [open] : []));
  if (answer === open && file) await vscode.window.showTextDocument(vscode.Uri.file(path.join(workspaceFolder, ...file.split('/'))));
}
