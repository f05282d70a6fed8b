// The extension's core, bundled on its own as dist/extensionCore.js: the policy engine, the agent
// runtime and every part of the extension that needs them. extension.ts loads it right after
// activate() returns and hands it what activation created (the log, the status bar item, the
// Open Callbacks view); the commands registered there run the handlers startCore returns.
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import * as vscode from 'vscode';
import { initShellParser } from '../policy/shell/shellParser.js';
import { FileAuditLog } from '../runtime/audit/audit.js';
import { shutdownTelemetry, TelemetryAuditSink } from '../runtime/telemetry/auditTelemetry.js';
import { describeSandbox, sandboxAvailabilityLater } from '../runtime/sandbox/sandboxProbe.js';
import { SessionHost } from '../runtime/host/sessionHost.js';
import { MCP_CONSENT_KEY } from './models/apiKeys.js';
import { CallbacksTree } from './asks/callbacksTree.js';
import type { CallbacksView } from './asks/callbacksView.js';
import { registerChatModels } from './models/chatModels.js';
import { registerChatParticipant } from './chat/chatParticipant.js';
import { openChatStarter } from './chat/chatStarter.js';
import { sessionCommands } from './sessions/commands.js';
import { installedHookHosts } from '../hooks/install/hookInstall.js';
import { startDecisionServiceHost } from './hosts/decisionServiceHost.js';
import { startHookAsks } from './hosts/hookAsks.js';
import type { CoreCommands } from './basics/coreCommands.js';
import type { Log } from './basics/log.js';
import { Notifications } from './asks/notifications.js';
import { EXPLAIN_SCHEME, Explanations, policyCommands, RuleCounts } from './policy/policyCommands.js';
import { HELD_RESULT_SCHEME, HeldResults } from './asks/resultReview.js';
import { PolicyDiagnostics } from './policy/policyDiagnostics.js';
import { PolicyQuickFixes } from './policy/policyEditing.js';
import { PolicyService } from './policy/policyService.js';
import { PolicyStatus } from './policy/policyStatus.js';
import type { SessionDeps } from './sessions/sessionDeps.js';
import type { StatusBar } from './asks/statusBar.js';
import { Transcripts } from './sessions/transcripts.js';

/** The policy files the editor features apply to (the managed and user files get diagnostics by name). */
const POLICY_SELECTOR: vscode.DocumentSelector = [{ scheme: 'file', pattern: '**/*.agentpolicy.jsonc' }, { scheme: 'file', pattern: '**/.agentpolicy.jsonc' }];


/** How long a closing window gives the telemetry still waiting to reach the collector. */
const TELEMETRY_SHUTDOWN_MS = 2000;
/** How long after activation the hooks' health is checked (the window's decision service is up by then). */
const HOOK_CHECK_DELAY_MS = 5000;
export interface AgentPolicyApi {
  /** The runtime, for other extensions: the same classes the `agent-policy/runtime` module exports. */
  runtime: typeof import('../entries/runtime.js');
  /** The sessions this window runs. */
  host: SessionHost;
}

/** What activation created, for the core to keep current. */
export interface Shell {
  context: vscode.ExtensionContext;
  log: Log;
  status: StatusBar;
  callbacks: CallbacksView;
  workspaceFolder: string;
}

export interface Core {
  commands: CoreCommands;
  host: SessionHost;
  /** What activate() returns to other extensions (it loads the runtime's public entry). */
  api(): Promise<AgentPolicyApi>;
}

/** Loads the policy layers and the audit journal, and wires the engine and the runtime to the editor. */
export function startCore(shell: Shell): Core {
  const { context, log, status, callbacks, workspaceFolder } = shell;
  // describe.ts's strings (plain functions, tested in plain Node) go through @vscode/l10n: hand it
  // the bundle VS Code loaded for the window's language (none for English) before any is made.
  if (vscode.l10n.bundle) l10n.config({ contents: vscode.l10n.bundle });
  const policy = new PolicyService(workspaceFolder, log, context.workspaceState);
  // The audit log lives in the workspace's storage; it is also the journal a reload reads.
  const storage = context.storageUri?.fsPath ?? context.globalStorageUri.fsPath;
  const auditFile = path.join(storage, 'audit.jsonl');
  // Decisions in OpenTelemetry (docs/teams.md): each line also exported when the variables or the managed policy say so.
  const audit = new TelemetryAuditSink(new FileAuditLog(auditFile), { controls: () => policy.current().controls });
  const host = new SessionHost({ audit: { sink: audit, file: auditFile }, controls: () => policy.current().controls });
  const tree = new CallbacksTree(host, callbacks.view);
  callbacks.fill(tree);
  const updateContext = (): void => {
    const open = host.openCallbacks();
    status.setOpen(open.length);
    void vscode.commands.executeCommand('setContext', 'agentPolicy.openCallbacks', open.length);
    void vscode.commands.executeCommand('setContext', 'agentPolicy.openSignIns', open.filter((o) => o.callback.type === 'sign-in').length);
    void vscode.commands.executeCommand('setContext', 'agentPolicy.runningSessions', host.sessions().filter((s) => s.state === 'running').length);
    void vscode.commands.executeCommand('setContext', 'agentPolicy.sessions', host.sessions().length);
    void vscode.commands.executeCommand('setContext', 'agentPolicy.policyChangeHeld', policy.heldChange() !== undefined);
    // Managed controls: menus offer Allow and Add Rule… only where the managed policy lets answers add rules.
    void vscode.commands.executeCommand('setContext', 'agentPolicy.addRuleAllowed', policy.current().controls.addRule);
  };
  // Our models in the Chat view's model picker, resolved in the background so activation does not
  // wait; then the conversation starter the workspace may ask for.
  const chatModels = registerChatModels({ secrets: context.secrets, log, workspaceFolder });
  void chatModels.resolved.then(() => openChatStarter(context.workspaceState, log));
  const explanations = new Explanations();
  let shellReady: Promise<void> | undefined;
  const ready = (): Promise<void> => (shellReady ??= initShellParser({ wasmDir: path.join(context.extensionPath, 'dist') }));
  // Dynamic imports: esbuild evaluates these modules (the openai client, the MCP SDK) on first use, not when the core loads.
  let deps: Promise<SessionDeps> | undefined;
  const sessionDeps = (): Promise<SessionDeps> => (deps ??= import('./sessions/sessionDeps.js').then((m) => m.createSessionDeps(context, log, workspaceFolder, async (md) => {
    // A read-only document of our own scheme: nothing to save, and the text as the server sent it.
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(explanations.add(md)), { preview: true });
  })));
  context.subscriptions.push(
    policy,
    tree,
    new Notifications(host, log),
    new Transcripts(host),
    new vscode.Disposable(host.onDidChange(updateContext).dispose),
    policy.onDidChange(updateContext),
    // Which managed policy is in force, and from where: the system's, the setting's or none.
    policy.onDidChange(() => status.setManaged(policy.managedInForce().line)),
    { dispose: () => audit.close() },
    { dispose: () => void shutdownTelemetry(TELEMETRY_SHUTDOWN_MS) },
    new PolicyDiagnostics(policy),
    new PolicyStatus(policy),
    startHookAsks({ workspaceFolder, host, policy, auditFile, log }),
    startDecisionServiceHost({ workspaceFolder, log, shellReady: ready }),
    vscode.workspace.registerTextDocumentContentProvider(EXPLAIN_SCHEME, explanations),
    vscode.workspace.registerTextDocumentContentProvider(HELD_RESULT_SCHEME, new HeldResults(host)),
    vscode.languages.registerCodeLensProvider(POLICY_SELECTOR, new RuleCounts(host)),
    vscode.languages.registerCodeActionsProvider(POLICY_SELECTOR, new PolicyQuickFixes(workspaceFolder, () => policy.current().controls), { providedCodeActionKinds: PolicyQuickFixes.kinds }),
    ...chatModels.disposables,
  );
  updateContext();
  status.setManaged(policy.managedInForce().line);
  // Hooks of other agents set up here that can no longer start (an update moved the CLI they fall
  // back to, a client deleted) are said once the window has settled, with a button to fix them.
  if (installedHookHosts(workspaceFolder).length > 0) {
    const timer = setTimeout(() => void import('./hosts/governAgents.js').then((m) => m.warnOfHooks(workspaceFolder, context.extensionPath, log)), HOOK_CHECK_DELAY_MS);
    context.subscriptions.push({ dispose: () => clearTimeout(timer) });
  }
  // An update moved the CLI the `agentpolicy` command (docs/cli.md) runs: it runs this one.
  const shimTimer = setTimeout(() => void import('./hosts/commandInPath.js').then((m) => m.refreshCommandInPath(context.extensionPath, log)), HOOK_CHECK_DELAY_MS);
  context.subscriptions.push({ dispose: () => clearTimeout(shimTimer) });
  if (host.interrupted.length > 0) {
    log.warn(`${host.interrupted.length} session(s) were interrupted by a reload or crash; see the Open Callbacks view`);
  }
  // Load the shell parser in the background: it is needed at the first decision, not to start.
  void ready().catch((error: unknown) => log.error('the shell parser could not be loaded', error));
  // Whether commands run sandboxed here, said once (the status bar's tooltip says it too).
  void sandboxAvailabilityLater().then((a) => {
    status.setSandbox(describeSandbox(a));
    if (a.available) log.info(describeSandbox(a));
    else log.warn(describeSandbox(a));
  });
  const commandContext = { host, policy, log, workspaceFolder, ready, sessionDeps };
  // The Chat view's @agents (hosts without the chat API have none).
  if (typeof vscode.chat?.createChatParticipant === 'function') context.subscriptions.push(registerChatParticipant(commandContext, context.extensionUri));
  const commands: CoreCommands = {
    ...sessionCommands(commandContext),
    ...policyCommands({ host, policy, log, extensionPath: context.extensionPath, explanations, ready }),
    setApiKey: async () => (await import('./models/models.js')).setApiKey(context.secrets),
    selectLanguageModel: async () => (await import('./models/models.js')).selectLanguageModel(),
    governOtherAgents: async () => (await import('./hosts/governAgents.js')).governOtherAgents(workspaceFolder, context.extensionPath, log),
    installCommandInPath: async () => (await import('./hosts/commandInPath.js')).installCommandInPath(context.extensionPath, log),
    uninstallCommandFromPath: async () => (await import('./hosts/commandInPath.js')).uninstallCommandFromPath(log),
    reviewMcpToolChanges: async () => {
      if (deps === undefined || !(await deps).mcp.reviewChanges()) void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: no changed MCP tool definition waits for you in this window.'));
    },
    forgetMcpServerApprovals: async () => {
      const allowed = context.workspaceState.get<string[]>(MCP_CONSENT_KEY, []);
      await context.workspaceState.update(MCP_CONSENT_KEY, undefined);
      log.info(`forgot ${allowed.length} MCP server approval(s)`);
      void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: forgot {0} MCP server approval(s); each server asks again before it next starts.', allowed.length));
    },
  };
  return { commands, host, api: async () => ({ runtime: await import('../entries/runtime.js'), host }) };
}
