// Asks of other makers' agents (Claude Code, Codex, …) answered in this window: their pre-tool
// hook (`agentpolicy hook`) finds the window through a discovery file and asks over a Unix socket
// (src/hooks/editor/editorServer.ts); each ask shows like our own, as a callback of the host's session.
// Started with the core, in the background (activation does not wait for it), for a folder on
// disk; the discovery file is rewritten when what the hook reads from it changes (workspace
// trust, the managed and user policy files, a held change to the workspace policy), and removed
// when the window closes.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { EditorServer, type WindowFacts } from '../../hooks/editor/editorServer.js';
import type { SessionHost } from '../../runtime/host/sessionHost.js';
import type { Log } from '../basics/log.js';
import type { PolicyService } from '../policy/policyService.js';

export function startHookAsks(options: { workspaceFolder: string; host: SessionHost; policy: PolicyService; auditFile: string; log: Log }): vscode.Disposable {
  const { workspaceFolder, host, policy, auditFile, log } = options;
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (folder?.uri.scheme !== 'file' || folder.uri.fsPath !== workspaceFolder || !isFolder(workspaceFolder)) return new vscode.Disposable(() => undefined);
  const facts = (): WindowFacts => {
    const files = policy.layerFiles();
    return {
      auditFile, trusted: vscode.workspace.isTrusted,
      ...(files.managed !== undefined ? { managedPolicyFile: files.managed } : {}),
      ...(files.user !== undefined ? { userPolicyFile: files.user } : {}),
      ...(policy.heldAcceptedText() !== undefined ? { heldAcceptedText: policy.heldAcceptedText()! } : {}),
    };
  };
  let written = JSON.stringify(facts());
  let disposed = false;
  const subscriptions: vscode.Disposable[] = [];
  const started = EditorServer.start({ workspaceFolder, host, facts }).then(
    (server) => {
      if (disposed) {
        void server.dispose();
        return undefined;
      }
      log.info(`other agents' hooks can ask here (socket ${server.socket})`);
      const refresh = (): void => {
        const now = JSON.stringify(facts());
        if (now === written) return;
        written = now;
        try {
          server.refresh();
        } catch (error) {
          log.error('the hooks\' discovery file could not be rewritten', error);
        }
      };
      subscriptions.push(vscode.workspace.onDidGrantWorkspaceTrust(refresh), policy.onDidChange(refresh));
      return server;
    },
    (error: unknown) => {
      // Not an error for the window: hooks then use their host's own ask.
      log.warn(`other agents' hooks cannot ask in this window: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    },
  );
  return new vscode.Disposable(() => {
    disposed = true;
    for (const s of subscriptions) s.dispose();
    void started.then((server) => server?.dispose());
  });
}

function isFolder(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}
