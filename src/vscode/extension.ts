// The VS Code layer: a thin adapter over the policy engine and the agent runtime. Everything it
// creates is registered with the extension context, which disposes of it.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { initShellParser } from '../policy/shellParser.js';
import { FileAuditLog } from '../runtime/audit.js';
import { describeSandbox, sandboxAvailabilityLater } from '../runtime/sandboxProbe.js';
import { SessionHost } from '../runtime/sessionHost.js';
import { CallbacksTree } from './callbacksTree.js';
import { registerCommands } from './commands.js';
import { Log } from './log.js';
import { MCP_CONSENT_KEY } from './apiKeys.js';
import type { SessionDeps } from './sessionDeps.js';
import { Notifications } from './notifications.js';
import { PolicyService } from './policyService.js';
import { StatusBar } from './statusBar.js';
import { Transcripts } from './transcripts.js';
import { EXPLAIN_SCHEME, Explanations, registerPolicyCommands, RuleCounts } from './policyCommands.js';
import { PolicyDiagnostics } from './policyDiagnostics.js';
import { PolicyQuickFixes } from './policyEditing.js';
import { PolicyStatus } from './policyStatus.js';

/** The policy files the editor features apply to (the managed and user files get diagnostics by name). */
const POLICY_SELECTOR: vscode.DocumentSelector = [{ scheme: 'file', pattern: '**/*.agentpolicy.jsonc' }, { scheme: 'file', pattern: '**/.agentpolicy.jsonc' }];

export interface AgentPolicyApi {
  /** The runtime, for other extensions: the same classes the `agent-policy/runtime` module exports. */
  runtime: typeof import('../entries/runtime.js');
  /** The sessions this window runs. */
  host: SessionHost;
}

let host: SessionHost | undefined;

// Set by the bundle's first line (esbuild.mjs); absent when run from source.
declare const __agentPolicyLoadStart: number | undefined;
declare const __agentPolicyLoadEnd: number | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<AgentPolicyApi | undefined> {
  const started = performance.now();
  const log = new Log();
  context.subscriptions.push(log);
  try {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const workspaceFolder = folder?.uri.scheme === 'file' ? folder.uri.fsPath : process.cwd();
    const policy = new PolicyService(workspaceFolder, log, context.workspaceState);
    // The audit log lives in the workspace's storage; it is also the journal a reload reads.
    const storage = context.storageUri?.fsPath ?? context.globalStorageUri.fsPath;
    const auditFile = path.join(storage, 'audit.jsonl');
    const audit = new FileAuditLog(auditFile);
    host = new SessionHost({ audit: { sink: audit, file: auditFile } });
    const tree = new CallbacksTree(host);
    const updateContext = (): void => {
      const open = host!.openCallbacks();
      void vscode.commands.executeCommand('setContext', 'agentPolicy.openCallbacks', open.length);
      void vscode.commands.executeCommand('setContext', 'agentPolicy.openSignIns', open.filter((o) => o.callback.type === 'sign-in').length);
      void vscode.commands.executeCommand('setContext', 'agentPolicy.runningSessions', host!.sessions().filter((s) => s.state === 'running').length);
      void vscode.commands.executeCommand('setContext', 'agentPolicy.sessions', host!.sessions().length);
      void vscode.commands.executeCommand('setContext', 'agentPolicy.policyChangeHeld', policy.heldChange() !== undefined);
    };
    const explanations = new Explanations();
    let shellReady: Promise<void> | undefined;
    const ready = (): Promise<void> => (shellReady ??= initShellParser({ wasmDir: path.join(context.extensionPath, 'dist') }));
    // Dynamic imports: esbuild evaluates these modules (the openai client, the MCP SDK) on first use, not at activation.
    let deps: Promise<SessionDeps> | undefined;
    const sessionDeps = (): Promise<SessionDeps> => (deps ??= import('./sessionDeps.js').then((m) => m.createSessionDeps(context, log, workspaceFolder)));
    context.subscriptions.push(
      policy,
      tree,
      new StatusBar(host),
      new Notifications(host, log),
      new Transcripts(host),
      new vscode.Disposable(host.onDidChange(updateContext).dispose),
      policy.onDidChange(updateContext),
      { dispose: () => audit.close() },
      ...registerCommands({ host, policy, log, workspaceFolder, ready, sessionDeps }),
      vscode.commands.registerCommand('agentPolicy.setApiKey', async () => (await import('./models.js')).setApiKey(context.secrets)),
      vscode.commands.registerCommand('agentPolicy.selectLanguageModel', async () => (await import('./models.js')).selectLanguageModel()),
      vscode.commands.registerCommand('agentPolicy.forgetMcpServerApprovals', async () => {
        const allowed = context.workspaceState.get<string[]>(MCP_CONSENT_KEY, []);
        await context.workspaceState.update(MCP_CONSENT_KEY, undefined);
        log.info(`forgot ${allowed.length} MCP server approval(s)`);
        void vscode.window.showInformationMessage(`Agent Policy: forgot ${allowed.length} MCP server approval(s); each server asks again before it next starts.`);
      }),
      new PolicyDiagnostics(policy),
      new PolicyStatus(policy),
      vscode.workspace.registerTextDocumentContentProvider(EXPLAIN_SCHEME, explanations),
      vscode.languages.registerCodeLensProvider(POLICY_SELECTOR, new RuleCounts(host)),
      vscode.languages.registerCodeActionsProvider(POLICY_SELECTOR, new PolicyQuickFixes(workspaceFolder), { providedCodeActionKinds: PolicyQuickFixes.kinds }),
      ...registerPolicyCommands({ host, policy, log, extensionPath: context.extensionPath, explanations, ready }),
    );
    updateContext();
    if (host.interrupted.length > 0) {
      log.warn(`${host.interrupted.length} session(s) were interrupted by a reload or crash; see the Open Callbacks view`);
    }
    // Load the shell parser in the background: it is needed at the first decision, not to activate.
    void ready().catch((error: unknown) => log.error('the shell parser could not be loaded', error));
    // Whether commands run sandboxed here, said once (the status bar's tooltip says it too).
    void sandboxAvailabilityLater().then((a) => (a.available ? log.info(describeSandbox(a)) : log.warn(describeSandbox(a))));
    const now = performance.now();
    // The footer runs at the end of the bundle's evaluation; the gap before activate() is the host's.
    const evaluation = typeof __agentPolicyLoadStart === 'number' && typeof __agentPolicyLoadEnd === 'number' ? __agentPolicyLoadEnd - __agentPolicyLoadStart : 0;
    log.info(`activated in ${(evaluation + now - started).toFixed(1)} ms (bundle evaluation ${evaluation.toFixed(1)} ms, activate ${(now - started).toFixed(1)} ms) for ${workspaceFolder}${vscode.workspace.isTrusted ? '' : ' (untrusted: the workspace policy can only tighten)'}`);
    const runtime = await import('../entries/runtime.js');
    return { runtime, host };
  } catch (error) {
    log.error('activation failed', error);
    void vscode.window.showErrorMessage(`Agent Policy could not start: ${error instanceof Error ? error.message : String(error)}`, 'Open Output').then((picked) => {
      if (picked) log.channel.show();
    });
    return undefined;
  }
}

export async function deactivate(): Promise<void> {
  // Running sessions are not ended here: the audit log shows them as interrupted next time.
  await host?.dispose();
  host = undefined;
}
