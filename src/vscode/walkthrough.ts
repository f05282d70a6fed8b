// The Get Started walkthrough (contributes.walkthroughs in package.json): opened once, at the
// extension's first activation in this profile, and by Agent Policy: Get Started ever after.
// VS Code opens a walkthrough by itself only when an extension is installed from the Extensions
// view in a running window, not after `--install-extension` or a sync: hence the explicit first run.
import * as vscode from 'vscode';

/** `<publisher>.<name>#<walkthrough id>`, as workbench.action.openWalkthrough takes it. */
export const WALKTHROUGH_ID = 'agent-policy.agent-policy#getStarted';

/** Set in globalState at the first activation: the walkthrough never opens by itself again. */
export const WALKTHROUGH_SHOWN_KEY = 'agentPolicy.walkthroughShown';

export function openWalkthrough(): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH_ID, false);
}

/**
 * Opens the walkthrough if this profile never activated the extension before, unless the person
 * said no walkthrough should open on install (`workbench.welcomePage.walkthroughs.openOnInstall`).
 * Either way it is marked as shown first, and synced, so that it is not shown on the next machine.
 */
export function openWalkthroughOnFirstActivation(state: vscode.Memento & { setKeysForSync(keys: readonly string[]): void }): void {
  state.setKeysForSync([WALKTHROUGH_SHOWN_KEY]);
  if (state.get<boolean>(WALKTHROUGH_SHOWN_KEY)) return;
  void state.update(WALKTHROUGH_SHOWN_KEY, true);
  if (!vscode.workspace.getConfiguration('workbench.welcomePage.walkthroughs').get<boolean>('openOnInstall', true)) return;
  void openWalkthrough();
}
