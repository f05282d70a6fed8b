// While a policy file is invalid, the last valid version stays in force: the status bar says
// the policy is stale and links to the first error.
import * as vscode from 'vscode';
import { LineMap } from '../policy/diagnostics.js';
import type { PolicyService } from './policyService.js';

export class PolicyStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentPolicy.policyStatus', vscode.StatusBarAlignment.Left, 99);
  private readonly subscription: vscode.Disposable;

  constructor(private readonly policy: PolicyService) {
    this.item.name = 'Agent Policy: policy status';
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
    const name = problem.file.split(/[\\/]/).pop();
    this.item.text = problem.kind === 'stale' ? `$(warning) ${name} stale` : `$(error) ${name} invalid`;
    const what = problem.kind === 'stale'
      ? `the last valid version of the ${problem.layer} policy stays in force`
      : `no valid version: every call it could decide is asked`;
    this.item.tooltip = `${problem.file}:${at.line}:${at.column}: ${first?.message ?? 'invalid'} — ${what}. Click to go to the error.`;
    this.item.accessibilityInformation = { label: `Agent Policy: ${name} is invalid; ${what}` };
    this.item.backgroundColor = new vscode.ThemeColor(problem.kind === 'stale' ? 'statusBarItem.warningBackground' : 'statusBarItem.errorBackground');
    this.item.command = {
      command: 'vscode.open',
      title: 'Go to the first error',
      arguments: [vscode.Uri.file(problem.file), { selection: new vscode.Range(at.line - 1, at.column - 1, at.line - 1, at.column - 1) }],
    };
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
