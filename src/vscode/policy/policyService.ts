// The policy in force for the workspace: managed, workspace and user layers, each reloaded when
// its file changes; a broken file never replaces the last valid version (nextLayerState). The
// managed layer is the system managed policy when it counts, else the file the machine-scoped
// setting names, for trying one out (managedInForce.ts): checked again whenever either changes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LayerName } from '../../policy/rules/compile.js';
import { HeldPolicy } from '../../policy/editing/heldPolicy.js';
import { contentDigest, looseningDiff, type LooseningChange } from '../../policy/editing/loosening.js';
import { loadPolicyText, nextLayerState, Policy, type LayerState, type PolicyLayer } from '../../policy/policy.js';
import { managedPolicyInForce, type ManagedInForce } from '../../policy/system/managedInForce.js';
import type { Log } from '../basics/log.js';

const ACCEPTED_KEY = 'agentPolicy.acceptedWorkspacePolicy';

/** A change to the workspace policy made outside this editor that allows more, held until a person accepts it. */
export interface HeldChange {
  file: string;
  digest: string;
  changes: LooseningChange[];
}

export const WORKSPACE_POLICY_FILE = '.agentpolicy.jsonc';

export class PolicyService implements vscode.Disposable {
  private readonly states = new Map<LayerName, LayerState>();
  private readonly files = new Map<LayerName, string>();
  private policy: Policy = new Policy({});
  private readonly disposables: vscode.Disposable[] = [];
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changeEmitter.event;
  private readonly holdEmitter = new vscode.EventEmitter<HeldChange>();
  /** Fires when an outside change that allows more is held for a person. */
  readonly onDidHold = this.holdEmitter.event;
  private held: (HeldChange & { text: string; accepted: PolicyLayer }) | undefined;
  /** Digests of texts a person saved in this editor: those changes count as accepted. */
  private readonly savedHere = new Set<string>();

  constructor(
    readonly workspaceFolder: string,
    private readonly log: Log,
    private readonly memento: vscode.Memento,
  ) {
    this.disposables.push(this.changeEmitter, this.holdEmitter);
    const isWorkspacePolicy = (doc: vscode.TextDocument): boolean => doc.uri.scheme === 'file' && doc.uri.fsPath === this.files.get('workspace');
    this.disposables.push(
      vscode.workspace.onWillSaveTextDocument((e) => {
        if (isWorkspacePolicy(e.document)) this.savedHere.add(contentDigest(e.document.getText()));
      }),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (!isWorkspacePolicy(doc)) return;
        const digest = contentDigest(doc.getText());
        this.savedHere.add(digest);
        if (this.held?.digest === digest) this.accept();
      }),
    );
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

  /** The outside change waiting for a person, if any. */
  /** The accepted workspace policy's text while a change is held (`agentpolicy hook` judges with it too). */
  heldAcceptedText(): string | undefined {
    return this.held?.accepted.parsed.text;
  }

  heldChange(): HeldChange | undefined {
    return this.held ? { file: this.held.file, digest: this.held.digest, changes: this.held.changes } : undefined;
  }

  /** A person accepts the held change: its allows apply from the next decision. */
  accept(): void {
    if (!this.held) return;
    void this.memento.update(ACCEPTED_KEY, { digest: this.held.digest, text: this.held.text });
    this.log.info(`accepted the change to ${this.held.file} (${this.held.changes.length} decision(s) loosened)`);
    this.held = undefined;
    this.rebuild();
  }

  /** Reads the workspace policy again now (after an edit made here), without waiting for the file watcher. */
  reloadWorkspace(): void {
    const file = this.files.get('workspace');
    if (file) this.load('workspace', file);
    this.rebuild();
  }

  /** Layers whose file is invalid now: `stale` (the last valid version is in force) or `broken` (none was: everything it could decide asks). */
  problems(): Array<{ layer: LayerName; file: string; kind: 'stale' | 'broken'; current: PolicyLayer }> {
    const out: Array<{ layer: LayerName; file: string; kind: 'stale' | 'broken'; current: PolicyLayer }> = [];
    for (const [layer, state] of this.states) {
      if (state.kind === 'broken') out.push({ layer, file: state.current.file, kind: 'broken', current: state.current });
      else if (state.stale) out.push({ layer, file: state.stale.current.file, kind: 'stale', current: state.stale.current });
    }
    return out;
  }

  /** The files of the managed and user layers, protected from agents like the workspace file. */
  configuredFiles(): string[] {
    return [...this.files.entries()].filter(([layer]) => layer !== 'workspace').map(([, f]) => f);
  }

  /** The managed and user layers' files as the settings name them (absolute), for the hooks of other agents (hookAsks.ts). */
  layerFiles(): { managed?: string; user?: string } {
    const managed = this.files.get('managed');
    const user = this.files.get('user');
    return { ...(managed !== undefined ? { managed } : {}), ...(user !== undefined ? { user } : {}) };
  }

  /** Which managed policy is in force, and from where (the status bar's tooltip says it). */
  managedInForce(): ManagedInForce {
    return this.managed;
  }

  private managed: ManagedInForce = managedPolicyInForce(undefined);
  private watchers: vscode.Disposable[] = [];

  private configure(): void {
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    this.files.clear();
    this.states.clear();
    const config = vscode.workspace.getConfiguration('agentPolicy');
    const expand = (f: string): string => path.resolve(this.workspaceFolder, f.replace(/^~(?=\/|$)/, process.env.HOME ?? '~'));
    const trial = config.get<string>('managedPolicyFile', '').trim();
    const user = config.get<string>('userPolicyFile', '').trim();
    this.managed = managedPolicyInForce(trial ? { file: expand(trial), from: 'the setting agentPolicy.managedPolicyFile' } : undefined);
    for (const warning of this.managed.warnings) this.log.warn(warning);
    this.log.info(this.managed.line);
    if (this.managed.file !== undefined) this.files.set('managed', this.managed.file);
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
    // The system file appearing, changing or going away: which managed policy counts is decided again.
    const system = this.managed.system.file;
    const systemWatcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(path.dirname(system)), path.basename(system)));
    const recheck = (): void => this.configure();
    systemWatcher.onDidChange(recheck);
    systemWatcher.onDidCreate(recheck);
    systemWatcher.onDidDelete(recheck);
    this.watchers.push(systemWatcher);
    this.rebuild();
  }

  private load(layer: LayerName, file: string): void {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      if (layer !== 'workspace') this.log.warn(`the ${layer} policy file ${file} cannot be read`);
      // The system managed policy in force but unreadable (mode 600): broken, never absent (as the hooks, which block).
      if (layer === 'managed' && this.managed.from === 'system' && fs.existsSync(file)) {
        this.states.set(layer, nextLayerState(this.states.get(layer), loadPolicyText('', file, layer)));
        return;
      }
      // No file: no layer (a deleted file stops being in force).
      this.states.delete(layer);
      return;
    }
    const loaded = loadPolicyText(text, file, layer);
    const next = nextLayerState(this.states.get(layer), loaded);
    this.states.set(layer, next);
    if (layer === 'workspace' && loaded.valid) this.judgeChange(file, text, loaded);
    if (!loaded.valid) this.log.warn(`${file} is invalid (${loaded.diagnostics.length} problem(s)); ${next.kind === 'ok' ? 'its last valid version stays in force' : 'every call it could decide is asked'}`);
    else this.log.info(`loaded the ${layer} policy ${file}: ${loaded.rules.length} rule(s)`);
  }

  /**
   * Loosening held for a person: a valid new workspace version that did not come from this
   * editor, and that allows what the accepted version did not, has its new allows ask.
   */
  private judgeChange(file: string, text: string, loaded: PolicyLayer): void {
    const digest = contentDigest(text);
    const stored = this.memento.get<{ digest: string; text: string }>(ACCEPTED_KEY);
    const accept = (): void => {
      this.held = undefined;
      void this.memento.update(ACCEPTED_KEY, { digest, text });
    };
    // The first version seen in a workspace is its baseline (workspace trust covers new repositories).
    if (!stored || stored.digest === digest || this.savedHere.has(digest)) return accept();
    const accepted = loadPolicyText(stored.text, file, 'workspace');
    const changes = looseningDiff(accepted.valid ? accepted : undefined, loaded, { workspaceFolder: this.workspaceFolder, trusted: vscode.workspace.isTrusted });
    if (changes.length === 0) return accept();
    this.held = { file, digest, text, accepted, changes };
    this.log.warn(`${file} changed outside this editor and allows more (${changes.length} decision(s)); its new allows ask until a person accepts`);
    this.holdEmitter.fire({ file, digest, changes });
  }

  private rebuild(): void {
    const next = new Policy(Object.fromEntries(this.states));
    this.policy = this.held ? new HeldPolicy(next, new Policy({ ...Object.fromEntries(this.states), workspace: this.held.accepted })) : next;
    this.changeEmitter.fire();
  }

  dispose(): void {
    for (const w of this.watchers) w.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
