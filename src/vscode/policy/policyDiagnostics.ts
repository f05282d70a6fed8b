// The engine's diagnostics in the Problems panel, as you type (debounced), for the workspace
// policy, the agents file (with what each agent's model is offered, as information), and the
// managed and user policy files when they are open.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { parseAgentsFile, spawnInfo } from '../../agents/agentsFile.js';
import { checkPolicyLayer } from '../../policy/checking/check.js';
import { LineMap, type Diagnostic } from '../../policy/file/diagnostics.js';
import { loadPolicyText } from '../../policy/policy.js';
import { toolsOfferedDiagnostics } from '../../runtime/agents/agentsToolsOffered.js';
import { AGENTS_FILE } from '../../runtime/agents/workspaceAgents.js';
import type { PolicyService } from './policyService.js';
import { WORKSPACE_POLICY_FILE } from './policyService.js';

const DEBOUNCE_MS = 250;

const SEVERITY: Record<Diagnostic['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

export class PolicyDiagnostics implements vscode.Disposable {
  readonly collection = vscode.languages.createDiagnosticCollection('agentPolicy');
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly disposables: vscode.Disposable[] = [this.collection];

  constructor(private readonly policy: PolicyService) {
    this.disposables.push(
      vscode.workspace.onDidOpenTextDocument((d) => this.schedule(d, 0)),
      vscode.workspace.onDidChangeTextDocument((e) => this.schedule(e.document, DEBOUNCE_MS)),
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (this.kindOf(d) && !d.uri.fsPath.startsWith(policy.workspaceFolder)) this.collection.delete(d.uri);
      }),
      policy.onDidChange(() => this.refreshAll()),
    );
    this.refreshAll();
  }

  /** Which of our files a document is. */
  kindOf(doc: vscode.TextDocument): 'policy' | 'agents' | undefined {
    if (doc.uri.scheme !== 'file') return undefined;
    const file = doc.uri.fsPath;
    if (file === path.join(this.policy.workspaceFolder, WORKSPACE_POLICY_FILE) || this.policy.configuredFiles().includes(file)) return 'policy';
    if (file === path.join(this.policy.workspaceFolder, AGENTS_FILE)) return 'agents';
    return undefined;
  }

  private refreshAll(): void {
    for (const doc of vscode.workspace.textDocuments) this.schedule(doc, 0);
    // The workspace files are checked even when not open: their problems belong in Problems.
    for (const name of [WORKSPACE_POLICY_FILE, AGENTS_FILE]) {
      const uri = vscode.Uri.file(path.join(this.policy.workspaceFolder, name));
      if (!vscode.workspace.textDocuments.some((d) => d.uri.fsPath === uri.fsPath)) {
        void vscode.workspace.fs.readFile(uri).then(
          (bytes) => this.check(uri, new TextDecoder().decode(bytes), name === AGENTS_FILE ? 'agents' : 'policy'),
          () => this.collection.delete(uri),
        );
      }
    }
  }

  private schedule(doc: vscode.TextDocument, delay: number): void {
    const kind = this.kindOf(doc);
    if (!kind) return;
    const key = doc.uri.toString();
    const pending = this.timers.get(key);
    if (pending) clearTimeout(pending);
    this.timers.set(key, setTimeout(() => {
      this.timers.delete(key);
      this.check(doc.uri, doc.getText(), kind);
    }, delay));
  }

  /** The engine's diagnostics for one file's text, as VS Code diagnostics. */
  private check(uri: vscode.Uri, text: string, kind: 'policy' | 'agents'): void {
    const file = uri.fsPath;
    const found = kind === 'policy' ? this.policyDiagnostics(file, text) : this.agentsDiagnostics(file, text);
    const lines = new LineMap(text);
    const positionAt = (offset: number): vscode.Position => {
      const p = lines.position(offset);
      return new vscode.Position(p.line - 1, p.column - 1);
    };
    this.collection.set(uri, found.map((d) => {
      const diagnostic = new vscode.Diagnostic(new vscode.Range(positionAt(d.offset), positionAt(d.offset + d.length)), d.message, SEVERITY[d.severity]);
      diagnostic.source = 'agent-policy';
      diagnostic.code = d.code;
      return diagnostic;
    }));
  }

  /** The agents file's problems, then (when it is valid) what each agent's model is offered under the policies in force (info). */
  private agentsDiagnostics(file: string, text: string): Diagnostic[] {
    const parsed = parseAgentsFile(text, file);
    if (parsed.value === undefined) return parsed.diagnostics;
    const offered = toolsOfferedDiagnostics(parsed, file, file, this.policy.current(), 'the policies in force', text);
    return [...parsed.diagnostics, ...offered.map((o) => o.diagnostic)];
  }

  private policyDiagnostics(file: string, text: string): Diagnostic[] {
    // The configured managed and user files are checked as those layers (a managed file's `controls` are honoured there only).
    const files = this.policy.layerFiles();
    const layer = loadPolicyText(text, file, file === files.managed ? 'managed' : file === files.user ? 'user' : 'workspace');
    const agentsFile = path.join(this.policy.workspaceFolder, AGENTS_FILE);
    const agentsDoc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === agentsFile);
    let agentsText: string | undefined = agentsDoc?.getText();
    if (agentsText === undefined) {
      try {
        agentsText = fs.readFileSync(agentsFile, 'utf8');
      } catch {
        agentsText = undefined;
      }
    }
    const agents = agentsText !== undefined ? parseAgentsFile(agentsText, agentsFile).value : undefined;
    return checkPolicyLayer(layer, { workspaceFolder: this.policy.workspaceFolder, ...(agents ? { agents: spawnInfo(agents) } : {}) });
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    for (const d of this.disposables) d.dispose();
  }
}
