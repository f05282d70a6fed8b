// A status bar item with the number of open callbacks; it opens the tree. Its tooltip also says
// whether commands run sandboxed here, and why not (probed once, off the activation path).
import * as vscode from 'vscode';
import { describeSandbox, sandboxAvailabilityLater } from '../runtime/sandboxProbe.js';
import type { SessionHost } from '../runtime/sessionHost.js';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: { dispose(): void };
  private sandbox = 'Sandbox: checking whether commands can run sandboxed here…';

  constructor(private readonly host: SessionHost) {
    this.item = vscode.window.createStatusBarItem('agentPolicy.status', vscode.StatusBarAlignment.Left, 100);
    this.item.name = 'Agent Policy';
    this.item.command = 'agentPolicy.focusCallbacks';
    this.subscription = host.onDidChange(() => this.update());
    this.update();
    this.item.show();
    void sandboxAvailabilityLater().then((a) => {
      this.sandbox = describeSandbox(a);
      this.update();
    });
  }

  update(): void {
    const open = this.host.openCallbacks().length;
    this.item.text = `$(shield) ${open}`;
    const label = `Agent Policy: ${open} open callback${open === 1 ? '' : 's'}`;
    this.item.tooltip = `${label}\n${this.sandbox}`;
    this.item.accessibilityInformation = { label };
    this.item.backgroundColor = open > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
