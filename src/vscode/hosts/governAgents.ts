// Agent Policy: Govern Other Agents in This Folder: a pick of the agent programs whose pre-tool
// hooks should ask `.agentpolicy.jsonc` (the ones already set up are picked; unpicking one takes
// its hook out), then the same setup as `agentpolicy hook install` (src/hooks/setup/hookSetup.ts): the
// hook client by absolute path, falling back to the CLI this extension ships (dist/cli.js, run by
// the editor's own runtime), and Claude Code's http hook to the decision service this window runs.
// Afterwards, and when the window opens, `hook status` says whether each hook can start; a hook
// that cannot (an update moved the extension's CLI, the client was deleted) is a warning whose
// button installs it again.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_HOOK_LAUNCHER, DEFAULT_HOOK_TIMEOUT_SECONDS, hookTargets, targetOf } from '../../hooks/install/hookEntries.js';
import { HookFileError } from '../../hooks/install/hookFileEdit.js';
import { changeKind, HOST_SETUP_NOTES, installedHookHosts } from '../../hooks/install/hookInstall.js';
import { setUpHooks, type HookSetupOptions } from '../../hooks/setup/hookSetup.js';
import { hookStatus, type HostHookStatus } from '../../hooks/setup/hookStatus.js';
import { HOST_AGENTS, HOSTS, type HostAgent } from '../../hooks/hosts/hostAgents.js';
import { defaultStateDir } from '../../hooks/state/stateDir.js';
import type { Log } from '../basics/log.js';
import { walkthroughStepDone } from '../basics/walkthroughSteps.js';

interface HostItem extends vscode.QuickPickItem {
  host: HostAgent;
}

/** The CLI this extension ships, run by the editor's own runtime (Electron run as node on the desktop). */
function ownFallback(extensionPath: string): HookSetupOptions['fallback'] {
  return { node: process.execPath, cli: path.join(extensionPath, 'dist', 'cli.js'), ...(process.versions.electron !== undefined ? { electron: true } : {}) };
}

async function setUp(workspaceFolder: string, extensionPath: string, install: readonly HostAgent[], remove: readonly HostAgent[]): ReturnType<typeof setUpHooks> {
  return setUpHooks({
    workspaceFolder, install, remove, stateDir: defaultStateDir(process.env), fallback: ownFallback(extensionPath), cwd: workspaceFolder, env: process.env,
  });
}

export async function governOtherAgents(workspaceFolder: string, extensionPath: string, log: Log): Promise<void> {
  const installed = installedHookHosts(workspaceFolder);
  const targets = hookTargets({ launcher: DEFAULT_HOOK_LAUNCHER, timeoutSeconds: DEFAULT_HOOK_TIMEOUT_SECONDS, claudeHttp: { serviceUrl: '', token: '' } });
  // What `hook status` says of each host: shown on its row, so the pick is also the place to see who is governed.
  const statuses = await hookStatus({ workspace: workspaceFolder }).catch((error: unknown) => {
    log.error('hooks: their status could not be read', error);
    return [] as HostHookStatus[];
  });
  const items: HostItem[] = HOST_AGENTS.map((host) => {
    const status = statuses.find((s) => s.host === host);
    return {
      host,
      label: HOSTS[host].label,
      description: status?.installed === true ? status.file : targetOf(targets, host).file,
      detail: status?.installed === true ? statusDetail(status) : HOST_SETUP_NOTES[host],
      picked: installed.includes(host),
      iconPath: new vscode.ThemeIcon(status?.warning !== undefined ? 'warning' : installed.includes(host) ? 'shield' : 'circle-outline'),
    };
  });
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Agent Policy: Govern Other Agents in This Folder'),
    placeHolder: vscode.l10n.t('The agents whose every tool call asks {0} first (unpick one to take its hook out)', '.agentpolicy.jsonc'),
    canPickMany: true,
    ignoreFocusOut: true,
    matchOnDetail: true,
  });
  if (picked === undefined) return;
  const wanted = picked.map((i) => i.host);
  let setup;
  try {
    setup = await setUp(workspaceFolder, extensionPath, wanted, installed.filter((h) => !wanted.includes(h)));
    if ('problem' in setup) throw new Error(`the hook could not start, so nothing was written: ${setup.problem}`);
  } catch (error) {
    await showFailure(workspaceFolder, error, log);
    return;
  }
  const changed = setup.plan.changes.filter((c) => changeKind(c) !== 'unchanged');
  for (const c of changed) log.info(`hooks: ${changeKind(c)} ${c.relativePath} (${c.hosts.join(', ')}: ${c.action})`);
  if (setup.client !== undefined) log.info(`hooks: the hook client ${setup.client.file} asks the decision service, else runs this extension's CLI`);
  const governed = installedHookHosts(workspaceFolder);
  if (governed.length > 0) walkthroughStepDone('governed');
  for (const host of governed) log.info(`hooks: ${HOSTS[host].label}: ${HOST_SETUP_NOTES[host]}`);
  const names = governed.map((h) => HOSTS[h].label).join(', ');
  const files = changed.map((c) => c.relativePath).join(', ');
  const summary = changed.length === 0
    ? governed.length === 0 ? vscode.l10n.t('Agent Policy: nothing to change; no other agent is governed in this folder.') : vscode.l10n.t('Agent Policy: nothing to change; it governs {0}.', names)
    : governed.length === 0
      ? vscode.l10n.t('Agent Policy: no other agent is governed in this folder any more ({0}).', files)
      : vscode.l10n.t('Agent Policy: governs {0} in this folder ({1}).', names, files);
  if (await warnOfHooks(workspaceFolder, extensionPath, log, summary)) return;
  const details = vscode.l10n.t('Show Details');
  const answer = await vscode.window.showInformationMessage(summary, details);
  if (answer === details) log.channel.show();
}

/** One line of what `hook status` says of an installed host: its hook, the service, its last call, its failures, its sandbox. */
function statusDetail(s: HostHookStatus): string {
  const parts: string[] = [];
  if (s.warning !== undefined) parts.push(s.warning);
  else parts.push(s.runs?.kind === 'http' ? vscode.l10n.t('http hook, answered by the decision service') : vscode.l10n.t('hook client, can start'));
  parts.push(s.service.state === 'reachable' ? vscode.l10n.t('service reachable') : vscode.l10n.t('service not running'));
  if (s.lastCall !== null) {
    const took = s.lastCall.hookMs !== undefined ? vscode.l10n.t(' in {0} ms', s.lastCall.hookMs) : '';
    parts.push(vscode.l10n.t('last call {0}: {1}{2}', new Date(s.lastCall.time).toLocaleString(), s.lastCall.decision ?? '?', took));
  }
  const open = s.onFailure.cannotStart === 'lets-through' || s.onFailure.timeout === 'lets-through';
  parts.push(open ? vscode.l10n.t('lets a call through if the hook cannot start or times out') : vscode.l10n.t('blocks a call if the hook fails'));
  parts.push(s.sandboxed ? vscode.l10n.t('allowed commands in our sandbox') : vscode.l10n.t('commands not sandboxed'));
  return parts.join(' · ');
}

/**
 * The governed hosts whose hook cannot start or cannot be answered (`hook status`'s warnings): one
 * warning naming them and what that does (blocks every call, or lets every call through), with a
 * button that installs their hooks again. Says nothing, and returns false, when every hook is well.
 */
export async function warnOfHooks(workspaceFolder: string, extensionPath: string, log: Log, lead = ''): Promise<boolean> {
  let statuses: HostHookStatus[];
  try {
    statuses = await hookStatus({ workspace: workspaceFolder });
  } catch (error) {
    log.error('hooks: their status could not be read', error);
    return false;
  }
  const troubled = statuses.filter((s) => s.warning !== undefined);
  if (troubled.length === 0) return false;
  for (const s of troubled) log.warn(`hooks: ${s.warning}`);
  const fix = vscode.l10n.t('Install Again');
  const details = vscode.l10n.t('Show Details');
  const failsOpen = troubled.some((s) => /fails open/.test(s.warning!));
  const said = troubled.map((s) => s.warning!).join(' ');
  const message = `${lead === '' ? '' : `${lead} `}${failsOpen ? vscode.l10n.t('Some agents are not governed:') : vscode.l10n.t('Some agents\' hooks cannot work:')} ${said}`;
  const answer = await vscode.window.showWarningMessage(message, fix, details);
  if (answer === details) log.channel.show();
  if (answer !== fix) return true;
  const hosts = troubled.map((s) => s.host);
  try {
    const setup = await setUp(workspaceFolder, extensionPath, hosts, []);
    if ('problem' in setup) throw new Error(`the hook could not start, so nothing was written: ${setup.problem}`);
  } catch (error) {
    await showFailure(workspaceFolder, error, log);
    return true;
  }
  const still = (await hookStatus({ workspace: workspaceFolder })).filter((s) => s.warning !== undefined && hosts.includes(s.host));
  if (still.length === 0) void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: the hooks of {0} were installed again and can start.', hosts.map((h) => HOSTS[h].label).join(', ')));
  else void vscode.window.showWarningMessage(still.map((s) => s.warning!).join(' '));
  return true;
}

async function showFailure(workspaceFolder: string, error: unknown, log: Log): Promise<void> {
  log.error('hooks: nothing was changed', error);
  const open = vscode.l10n.t('Open File');
  const file = error instanceof HookFileError ? error.file : undefined;
  const answer = await vscode.window.showErrorMessage(vscode.l10n.t('Agent Policy: {0}', error instanceof Error ? error.message : String(error)), ...(file ? [open] : []));
  if (answer === open && file) await vscode.window.showTextDocument(vscode.Uri.file(path.join(workspaceFolder, ...file.split('/'))));
}
