// The models agents use inside VS Code: `vscode-lm:` through VS Code's language model API, the
// rest through the runtime's providers with the key from SecretStorage; and the commands to set
// the key and to pick a VS Code language model.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { providerModelFactory } from '../../runtime/providers/index.js';
import { AGENTS_FILE, type ModelFactory } from '../../runtime/agents/workspaceAgents.js';
import { BASE_URL_SETTING, originOf, secretKeyFor } from './apiKeys.js';
import { configuredBaseUrl } from './baseUrlSetting.js';
import { LM_PROVIDER, lmReferenceOf } from './lmMessages.js';
import { VsCodeLanguageModel } from './lmModel.js';

export interface WorkspaceModelOptions {
  secrets: vscode.SecretStorage;
  log: (line: string) => void;
}

/** The factory to pass to `loadWorkspaceAgents({ models })`. Settings are read when a model is made. */
export function workspaceModelFactory(options: WorkspaceModelOptions): ModelFactory {
  const { secrets, log } = options;
  return (reference, context) => {
    const trimmed = reference.trim();
    const provider = trimmed.split(':')[0];
    if (provider === LM_PROVIDER) return new VsCodeLanguageModel(trimmed, { log });
    if (provider !== 'openai-compatible') return providerModelFactory()(reference, context);
    const endpoint = configuredBaseUrl();
    if (endpoint.ignoredWorkspaceValue !== undefined) {
      log(`${BASE_URL_SETTING} is set by this workspace to ${endpoint.ignoredWorkspaceValue}, ignored because the workspace is not trusted; using ${endpoint.value}`);
    }
    const baseURL = endpoint.value;
    let origin: string | undefined;
    let secretKey: string | undefined;
    try {
      origin = originOf(baseURL);
      secretKey = secretKeyFor(baseURL);
    } catch {
      // The model's constructor says what is wrong with the URL.
    }
    log(`${trimmed}: ${baseURL} (${endpoint.source === 'default' ? 'the default' : `from the ${endpoint.source} settings`})`);
    return providerModelFactory({
      openaiCompatible: {
        baseURL,
        // Looked up before each request under the origin's own key: set later, it is used without a reload.
        apiKey: async () => (secretKey === undefined ? undefined : await secrets.get(secretKey)),
        ...(origin !== undefined ? { apiKeyHint: `store a key for ${origin} with the command 'Agent Policy: Set API Key'` } : {}),
      },
    })(reference, context);
  };
}

/** The command Agent Policy: Set API Key (registered in extension.ts, which loads this module on first use). */
export async function setApiKey(secrets: vscode.SecretStorage): Promise<void> {
  const endpoint = configuredBaseUrl();
  let origin: string;
  try {
    origin = originOf(endpoint.value);
  } catch (error) {
    const open = vscode.l10n.t('Open Settings');
    const picked = await vscode.window.showErrorMessage(vscode.l10n.t('Agent Policy: the setting {0} is not usable: {1}', BASE_URL_SETTING, error instanceof Error ? error.message : String(error)), open);
    if (picked === open) await vscode.commands.executeCommand('workbench.action.openSettings', BASE_URL_SETTING);
    return;
  }
  const key = secretKeyFor(endpoint.value);
  const stored = (await secrets.get(key)) !== undefined;
  const input = await vscode.window.showInputBox({
    title: vscode.l10n.t('Agent Policy: Set API Key for {0}', origin),
    prompt: endpoint.source === 'workspace'
      ? vscode.l10n.t("For {0} — this base URL is set by the workspace's settings. Kept in VS Code's secret storage and sent only to {1}.", endpoint.value, origin)
      : vscode.l10n.t("For {0}. Kept in VS Code's secret storage and sent only to {1}.", endpoint.value, origin),
    placeHolder: stored ? vscode.l10n.t('A key is stored: type a new one to replace it, or leave this empty to delete it') : vscode.l10n.t('The API key'),
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) => (/\s/.test(value.trim()) ? vscode.l10n.t('An API key has no spaces') : undefined),
  });
  if (input === undefined) return;
  const value = input.trim();
  if (value === '') {
    if (!stored) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: no API key is stored for {0}.', origin));
      return;
    }
    const remove = vscode.l10n.t('Delete Key');
    const picked = await vscode.window.showWarningMessage(vscode.l10n.t('Delete the API key stored for {0}?', origin), { modal: true, detail: vscode.l10n.t('Agents using openai-compatible models there then send no key.') }, remove);
    if (picked !== remove) return;
    await secrets.delete(key);
    void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: the API key for {0} is deleted.', origin));
    return;
  }
  await secrets.store(key, value);
  void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: the API key for {0} is stored; it is sent only to {0}.', origin));
}

interface ModelPick extends vscode.QuickPickItem {
  reference?: string;
}

/** The command Agent Policy: Select Language Model. */
export async function selectLanguageModel(): Promise<void> {
  const models = await vscode.lm.selectChatModels();
  if (models.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: no language model is available in VS Code. Install and sign in to an extension that provides language models (GitHub Copilot Chat, for one), or use {0} with an API key.', 'openai-compatible:<model>'));
    return;
  }
  const byReference = new Map<string, vscode.LanguageModelChat>();
  for (const m of models) if (!byReference.has(lmReferenceOf(m))) byReference.set(lmReferenceOf(m), m);
  const sorted = [...byReference.entries()].sort(([a], [b]) => a.localeCompare(b));
  const items: ModelPick[] = [];
  let vendor: string | undefined;
  for (const [reference, m] of sorted) {
    if (m.vendor !== vendor) {
      vendor = m.vendor;
      items.push({ label: vendor, kind: vscode.QuickPickItemKind.Separator });
    }
    items.push({
      label: `$(sparkle) ${m.name}`,
      description: reference,
      detail: vscode.l10n.t('family {0} · version {1} · up to {2} input tokens', m.family, m.version, m.maxInputTokens),
      reference,
    });
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Agent Policy: Select Language Model'),
    placeHolder: vscode.l10n.t('Pick a model to copy its reference for {0}', AGENTS_FILE),
    matchOnDescription: true,
  });
  if (!picked?.reference) return;
  await vscode.env.clipboard.writeText(picked.reference);
  const folder = vscode.workspace.workspaceFolders?.[0];
  const agentsFile = folder?.uri.scheme === 'file' ? path.join(folder.uri.fsPath, AGENTS_FILE) : undefined;
  const open = vscode.l10n.t('Open {0}', AGENTS_FILE);
  const buttons = agentsFile && fs.existsSync(agentsFile) ? [open] : [];
  const copied = vscode.l10n.t('Agent Policy: copied {0}. Use it in {1} as an agent\'s "model": "{0}". VS Code asks you once to allow Agent Policy to use it.', picked.reference, AGENTS_FILE);
  const answer = await vscode.window.showInformationMessage(copied, ...buttons);
  if (answer === open && agentsFile) await vscode.window.showTextDocument(vscode.Uri.file(agentsFile));
}
