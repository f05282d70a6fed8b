// A status bar item with the number of open callbacks; it opens the tree. Its tooltip also says
// whether commands run sandboxed here, and why not, and, where bubblewrap runs but socat or the
// sandbox engine's seccomp helper is missing, that sandboxed commands have no network and what to
// install (describeSandbox's sentence says all of it), and which managed policy is in force and from where. Shown at activation with none open (a window
// starts with none: what a reload interrupted can no longer be answered); the core keeps it current.
import * as vscode from 'vscode';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private open = 0;
  private sandbox = vscode.l10n.t('Sandbox: checking whether commands can run sandboxed here…');
  private managed = '';

  constructor() {
    this.item = vscode.window.createStatusBarItem('agentPolicy.status', vscode.StatusBarAlignment.Left, 100);
    this.item.name = vscode.l10n.t('Agent Policy');
    this.item.command = 'agentPolicy.focusCallbacks';
    this.update();
    this.item.show();
  }

  /** How many callbacks are open now. */
  setOpen(open: number): void {
    this.open = open;
    this.update();
  }

  /** Which managed policy is in force and from where (the engine's line, English, as `agentpolicy check` prints it). */
  setManaged(line: string): void {
    this.managed = line;
    this.update();
  }

  /** Whether commands run sandboxed here, and with what network (describeSandbox's sentence). */
  setSandbox(sentence: string): void {
    this.sandbox = sentence;
    this.update();
  }

  private update(): void {
    const open = this.open;
    this.item.text = `$(shield) ${open}`;
    const label = open === 1 ? vscode.l10n.t('Agent Policy: 1 open callback') : vscode.l10n.t('Agent Policy: {0} open callbacks', open);
    this.item.tooltip = [label, this.sandbox, ...(this.managed ? [this.managed] : [])].join('\n');
    this.item.accessibilityInformation = { label };
    this.item.backgroundColor = open > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
