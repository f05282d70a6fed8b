// The Open Callbacks view, created at activation so that it is there from the first frame. Its
// rows come from the core's CallbacksTree once the core is loaded; until then the view is empty,
// which shows its welcome text (a window starts with nothing open).
import * as vscode from 'vscode';

export const VIEW_ID = 'agentPolicy.callbacks';

export class CallbacksView implements vscode.TreeDataProvider<unknown>, vscode.Disposable {
  readonly view: vscode.TreeView<unknown>;
  private readonly changed = new vscode.EventEmitter<unknown>();
  readonly onDidChangeTreeData = this.changed.event;
  private rows: vscode.TreeDataProvider<unknown> | undefined;
  private subscription: vscode.Disposable | undefined;

  constructor() {
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
  }

  /** From now on the view shows these rows. */
  fill(rows: vscode.TreeDataProvider<unknown>): void {
    this.subscription?.dispose();
    this.rows = rows;
    this.subscription = rows.onDidChangeTreeData?.((element) => this.changed.fire(element));
    this.changed.fire(undefined);
  }

  getChildren(element?: unknown): vscode.ProviderResult<unknown[]> {
    return this.rows ? this.rows.getChildren(element) : [];
  }

  getTreeItem(element: unknown): vscode.TreeItem | Thenable<vscode.TreeItem> {
    // Only the rows' own elements reach here: before fill() there are none.
    return this.rows!.getTreeItem(element);
  }

  getParent(element: unknown): vscode.ProviderResult<unknown> {
    return this.rows?.getParent?.(element);
  }

  dispose(): void {
    this.subscription?.dispose();
    this.changed.dispose();
    this.view.dispose();
  }
}
