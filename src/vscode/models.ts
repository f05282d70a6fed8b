// The models agents use inside VS Code: `vscode-lm:` through VS Code's language model API, the
// rest through the runtime's providers with the key from SecretStorage; and the commands to set
// the key and to pick a VS Code language model.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { providerModelFactory } from '../runtime/providers/index.js';
import { AGENTS_FILE, type ModelFactory } from '../runtime/workspaceAgents.js';
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
    const open = 'Open Settings';
    const picked = await vscode.window.showErrorMessage(`Agent Policy: the setting ${BASE_URL_SETTING} is not usable: ${error instanceof Error ? error.message : String(error)}`, open);
    if (picked === open) await vscode.commands.executeCommand('workbench.action.openSettings', BASE_URL_SETTING);
    return;
  }
  const key = secretKeyFor(endpoint.value);
  const stored = (await secrets.get(key)) !== undefined;
  const from = endpoint.source === 'workspace' ? ' — this base URL is set by the workspace\'s settings' : '';
  const input = await vscode.window.showInputBox({
    title: `Agent Policy: Set API Key for ${origin}`,
    prompt: `For ${endpoint.value}${from}. Kept in VS Code's secret storage and sent only to ${origin}.`,
    placeHolder: stored ? 'A key is stored: type a new one to replace it, or leave this empty to delete it' : 'The API key',
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) => (/\s/.test(value.trim()) ? 'An API key has no spaces' : undefined),
  });
  if (input === undefined) return;
  const value = input.trim();
  if (value === '') {
    if (!stored) {
      void vscode.window.showInformationMessage(`Agent Policy: no API key is stored for ${origin}.`);
      return;
    }
    const remove = 'Delete Key';
    const picked = await vscode.window.showWarningMessage(`Delete the API key stored for ${origin}?`, { modal: true, detail: 'Agents using openai-compatible models there then send no key.' }, remove);
    if (picked !== remove) return;
    await secrets.delete(key);
    void vscode.window.showInformationMessage(`Agent Policy: the API key for ${origin} is deleted.`);
    return;
  }
  await secrets.store(key, value);
  void vscode.window.showInformationMessage(`Agent Policy: the API key for ${origin} is stored; it is sent only to ${origin}.`);
}

interface ModelPick extends vscode.QuickPickItem {
  reference?: string;
}

/** The command Agent Policy: Select Language Model. */
export async function selectLanguageModel(): Promise<void> {
  const models = await vscode.lm.selectChatModels();
  if (models.length === 0) {
    void vscode.window.showInformationMessage('Agent Policy: no language model is available in VS Code. Install and sign in to an extension that provides language models (GitHub Copilot Chat, for one), or use openai-compatible:<model> with an API key.');
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
      detail: `family ${m.family} · version ${m.version} · up to ${m.maxInputTokens} input tokens`,
      reference,
    });
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Agent Policy: Select Language Model',
    placeHolder: `Pick a model to copy its reference for ${AGENTS_FILE}`,
    matchOnDescription: true,
  });
  if (!picked?.reference) return;
  await vscode.env.clipboard.writeText(picked.reference);
  const folder = vscode.workspace.workspaceFolders?.[0];
  const agentsFile = folder?.uri.scheme === 'file' ? path.join(folder.uri.fsPath, AGENTS_FILE) : undefined;
  const open = `Open ${AGENTS_FILE}`;
  const buttons = agentsFile && fs.existsSync(agentsFile) ? [open] : [];
  const answer = await vscode.window.showInformationMessage(`Agent Policy: copied ${picked.reference}. Use it in ${AGENTS_FILE} as an agent's "model": "${picked.reference}". VS Code asks you once to allow Agent Policy to use it.`, ...buttons);
  if (answer === open && agentsFile) await vscode.window.showTextDocument(vscode.Uri.file(agentsFile));
}
