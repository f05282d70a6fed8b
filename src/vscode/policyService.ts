// The policy in force for the workspace: managed, workspace and user layers, each reloaded when
// its file changes; a broken file never replaces the last valid version (nextLayerState).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LayerName } from '../policy/compile.js';
import { loadPolicyText, nextLayerState, Policy, type LayerState } from '../policy/policy.js';
import type { Log } from './log.js';

export const WORKSPACE_POLICY_FILE = '.agentpolicy.jsonc';

export class PolicyService implements vscode.Disposable {
  private readonly states = new Map<LayerName, LayerState>();
  private readonly files = new Map<LayerName, string>();
  private policy: Policy = new Policy({});
  private readonly disposables: vscode.Disposable[] = [];
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changeEmitter.event;

  constructor(
    readonly workspaceFolder: string,
    private readonly log: Log,
  ) {
    this.disposables.push(this.changeEmitter);
    this.configure();
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('agentPolicy.managedPolicyFile') || e.affectsConfiguration('agentPolicy.userPolicyFile')) this.configure();
      }),
    );
  }

  /** The policy as it is now; sessions ask for it at every decision. */
  current(): Policy {
    return this.policy;
  }

  /** The files of the managed and user layers, protected from agents like the workspace file. */
  configuredFiles(): string[] {
    return [...this.files.entries()].filter(([layer]) => layer !== 'workspace').map(([, f]) => f);
  }

  private watchers: vscode.Disposable[] = [];

  private configure(): void {
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    this.files.clear();
    this.states.clear();
    const config = vscode.workspace.getConfiguration('agentPolicy');
    const expand = (f: string): string => path.resolve(this.workspaceFolder, f.replace(/^~(?=\/|$)/, process.env.HOME ?? '~'));
    const managed = config.get<string>('managedPolicyFile', '').trim();
    const user = config.get<string>('userPolicyFile', '').trim();
    if (managed) this.files.set('managed', expand(managed));
    this.files.set('workspace', path.join(this.workspaceFolder, WORKSPACE_POLICY_FILE));
    if (user) this.files.set('user', expand(user));
    for (const [layer, file] of this.files) {
      this.load(layer, file);
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(path.dirname(file)), path.basename(file)));
      const reload = (): void => {
        this.load(layer, file);
        this.rebuild();
      };
      watcher.onDidChange(reload);
      watcher.onDidCreate(reload);
      watcher.onDidDelete(reload);
      this.watchers.push(watcher);
    }
    this.rebuild();
  }

  private load(layer: LayerName, file: string): void {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      // No file: no layer (a deleted file stops being in force).
      this.states.delete(layer);
      if (layer !== 'workspace') this.log.warn(`the ${layer} policy file ${file} cannot be read`);
      return;
    }
    const loaded = loadPolicyText(text, file, layer);
    const next = nextLayerState(this.states.get(layer), loaded);
    this.states.set(layer, next);
    if (!loaded.valid) this.log.warn(`${file} is invalid (${loaded.diagnostics.length} problem(s)); ${next.kind === 'ok' ? 'its last valid version stays in force' : 'every call it could decide is asked'}`);
    else this.log.info(`loaded the ${layer} policy ${file}: ${loaded.rules.length} rule(s)`);
  }

  private rebuild(): void {
    this.policy = new Policy(Object.fromEntries(this.states));
    this.changeEmitter.fire();
  }

  dispose(): void {
    for (const w of this.watchers) w.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
