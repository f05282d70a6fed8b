// Agent Policy: Install 'agentpolicy' Command in PATH, and its Uninstall (docs/cli.md): the shim
// of src/hooks/install/cliShim.ts, naming the CLI this extension ships (dist/cli.js) and the editor's own
// runtime (an Electron run as node on the desktop) or a new enough node. When the window opens, a
// shim an update left naming a CLI that is gone is written again, quietly.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { installShim, refreshShim, shimDir, shimRuntime, uninstallShim, type ShimRuntime } from '../../hooks/install/cliShim.js';
import type { Log } from '../basics/log.js';

function ownCli(extensionPath: string): string {
  return path.join(extensionPath, 'dist', 'cli.js');
}

function ownRuntime(): ShimRuntime & { note?: string } {
  return shimRuntime({ execPath: process.execPath, electron: process.versions.electron !== undefined, nodeVersion: process.versions.node });
}

export async function installCommandInPath(extensionPath: string, log: Log): Promise<void> {
  const runtime = ownRuntime();
  if (runtime.note !== undefined) log.warn(`agentpolicy command: ${runtime.note}`);
  const dir = shimDir();
  const result = installShim({ dir, runtime, cli: ownCli(extensionPath) });
  if ('problem' in result) {
    log.error(`agentpolicy command: not installed: ${result.problem}`);
    void vscode.window.showErrorMessage(vscode.l10n.t("Agent Policy: the 'agentpolicy' command was not installed: {0}", result.problem));
    return;
  }
  log.info(`agentpolicy command: wrote ${result.file} (runs ${runtime.node}${runtime.electron ? ' as node' : ''} ${ownCli(extensionPath)})`);
  if (!result.onPath) {
    // The folder is where the shell profiles of most Linux distributions look; macOS's do not.
    const line = `export PATH="${dir}:$PATH"`;
    const copy = vscode.l10n.t('Copy the Line');
    const answer = await vscode.window.showWarningMessage(vscode.l10n.t("Agent Policy: wrote {0}, but {1} is not on PATH: add it in your shell's profile ({2}), then open a new terminal.", result.file, dir, line), copy);
    if (answer === copy) await vscode.env.clipboard.writeText(line);
    return;
  }
  if (result.shadowedBy !== undefined) {
    void vscode.window.showWarningMessage(vscode.l10n.t("Agent Policy: wrote {0}, but {1} comes before it on PATH: 'agentpolicy' runs that one.", result.file, result.shadowedBy));
    return;
  }
  void vscode.window.showInformationMessage(vscode.l10n.t("Agent Policy: 'agentpolicy' is installed in {0}; a new terminal finds it.", dir));
}

export function uninstallCommandFromPath(log: Log): void {
  const result = uninstallShim(shimDir());
  if ('problem' in result) {
    log.warn(`agentpolicy command: ${result.problem}`);
    void vscode.window.showWarningMessage(vscode.l10n.t("Agent Policy: the 'agentpolicy' command was left as it is: {0}", result.problem));
  } else if ('removed' in result) {
    log.info(`agentpolicy command: removed ${result.removed}`);
    void vscode.window.showInformationMessage(vscode.l10n.t("Agent Policy: removed the 'agentpolicy' command ({0}).", result.removed));
  } else {
    void vscode.window.showInformationMessage(vscode.l10n.t("Agent Policy: there is no 'agentpolicy' command of Agent Policy's to remove ({0}).", result.absent));
  }
}

/** After an update: a shim naming a CLI that is gone names this one. */
export function refreshCommandInPath(extensionPath: string, log: Log): void {
  try {
    if (refreshShim({ dir: shimDir(), runtime: ownRuntime, cli: ownCli(extensionPath) }) === 'refreshed') log.info(`agentpolicy command: ${shimDir()}/agentpolicy now runs ${ownCli(extensionPath)}`);
  } catch (error) {
    log.warn(`agentpolicy command: could not be written again (${error instanceof Error ? error.message : String(error)})`);
  }
}
