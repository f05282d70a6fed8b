// Every contributed command, registered at activation, before the core (dist/extensionCore.js)
// is loaded: each waits for the core and then runs there. Showing the log, the view and the
// walkthrough need no core.
import * as vscode from 'vscode';
import { VIEW_ID } from './asks/callbacksView.js';
import type { CoreCommandName, CoreCommands } from './basics/coreCommands.js';
import type { Log } from './basics/log.js';
import { openWalkthrough } from './walkthrough.js';

export function registerCommands(log: Log, core: () => Promise<CoreCommands>): vscode.Disposable[] {
  const later = (name: CoreCommandName) => async (...args: unknown[]): Promise<unknown> => (await core())[name](...args);
  return [
    vscode.commands.registerCommand('agentPolicy.startSession', later('startSession')),
    vscode.commands.registerCommand('agentPolicy.answerPending', later('answerPending')),
    vscode.commands.registerCommand('agentPolicy.signIn', later('signIn')),
    vscode.commands.registerCommand('agentPolicy.respond', later('respond')),
    vscode.commands.registerCommand('agentPolicy.showTranscript', later('showTranscript')),
    vscode.commands.registerCommand('agentPolicy.cancelSession', later('cancelSession')),
    vscode.commands.registerCommand('agentPolicy.allow', later('allow')),
    vscode.commands.registerCommand('agentPolicy.allowForSession', later('allowForSession')),
    vscode.commands.registerCommand('agentPolicy.allowForAWhile', later('allowForAWhile')),
    vscode.commands.registerCommand('agentPolicy.moreAnswers', later('moreAnswers')),
    vscode.commands.registerCommand('agentPolicy.revokeGrant', later('revokeGrant')),
    vscode.commands.registerCommand('agentPolicy.deny', later('deny')),
    vscode.commands.registerCommand('agentPolicy.dismissInterrupted', later('dismissInterrupted')),
    vscode.commands.registerCommand('agentPolicy.passResult', later('passResult')),
    vscode.commands.registerCommand('agentPolicy.withholdResult', later('withholdResult')),
    vscode.commands.registerCommand('agentPolicy.showResult', later('showResult')),
    vscode.commands.registerCommand('agentPolicy.openPolicy', later('openPolicy')),
    vscode.commands.registerCommand('agentPolicy.explain', later('explain')),
    vscode.commands.registerCommand('agentPolicy.allowAndAddRule', later('allowAndAddRule')),
    vscode.commands.registerCommand('agentPolicy.acceptPolicyChange', later('acceptPolicyChange')),
    vscode.commands.registerCommand('agentPolicy.showPolicyChange', later('showPolicyChange')),
    vscode.commands.registerCommand('agentPolicy.setApiKey', later('setApiKey')),
    vscode.commands.registerCommand('agentPolicy.selectLanguageModel', later('selectLanguageModel')),
    vscode.commands.registerCommand('agentPolicy.forgetMcpServerApprovals', later('forgetMcpServerApprovals')),
    vscode.commands.registerCommand('agentPolicy.reviewMcpToolChanges', later('reviewMcpToolChanges')),
    vscode.commands.registerCommand('agentPolicy.governOtherAgents', later('governOtherAgents')),
    vscode.commands.registerCommand('agentPolicy.installCommandInPath', later('installCommandInPath')),
    vscode.commands.registerCommand('agentPolicy.uninstallCommandFromPath', later('uninstallCommandFromPath')),
    vscode.commands.registerCommand('agentPolicy.focusCallbacks', () => vscode.commands.executeCommand(`${VIEW_ID}.focus`)),
    vscode.commands.registerCommand('agentPolicy.showLog', () => log.channel.show()),
    vscode.commands.registerCommand('agentPolicy.getStarted', openWalkthrough),
  ];
}
