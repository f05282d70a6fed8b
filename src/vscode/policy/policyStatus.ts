// While a policy file is invalid, the last valid version stays in force: the status bar says
// the policy is stale and links to the first error.
import * as vscode from 'vscode';
import { LineMap } from '../../policy/file/diagnostics.js';
import type { PolicyService } from './policyService.js';

export class PolicyStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentPolicy.policyStatus', vscode.StatusBarAlignment.Left, 99);
  private readonly subscription: vscode.Disposable;

  constructor(private readonly policy: PolicyService) {
    this.item.name = vscode.l10n.t('Agent Policy: policy status');
    this.subscription = policy.onDidChange(() => this.update());
    this.update();
  }

  private update(): void {
    const problem = this.policy.problems()[0];
    if (!problem) {
      this.item.hide();
      return;
    }
    const first = problem.current.diagnostics.find((d) => d.severity === 'error');
    const at = first ? new LineMap(problem.current.parsed.text).position(first.offset) : { line: 1, column: 1 };
    const name = problem.file.split(/[\\/]/).pop() ?? problem.file;
    this.item.text = problem.kind === 'stale' ? `$(warning) ${vscode.l10n.t('{0} stale', name)}` : `$(error) ${vscode.l10n.t('{0} invalid', name)}`;
    const what = problem.kind === 'stale'
      ? vscode.l10n.t('the last valid version of the {0} policy stays in force', problem.layer)
      : vscode.l10n.t('no valid version: every call it could decide is asked');
    // The first error is the engine's (English, as the CLI prints it): passed through.
    this.item.tooltip = vscode.l10n.t('{0}:{1}:{2}: {3} — {4}. Click to go to the error.', problem.file, at.line, at.column, first?.message ?? vscode.l10n.t('invalid'), what);
    this.item.accessibilityInformation = { label: vscode.l10n.t('Agent Policy: {0} is invalid; {1}', name, what) };
    this.item.backgroundColor = new vscode.ThemeColor(problem.kind === 'stale' ? 'statusBarItem.warningBackground' : 'statusBarItem.errorBackground');
    this.item.command = {
      command: 'vscode.open',
      title: vscode.l10n.t('Go to the first error'),
      arguments: [vscode.Uri.file(problem.file), { selection: new vscode.Range(at.line - 1, at.column - 1, at.line - 1, at.column - 1) }],
    };
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
