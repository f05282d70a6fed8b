// Our models in VS Code's model picker: a language-model chat provider, vendor `agent-policy`,
// offering the scripted model and the OpenAI-compatible models the workspace's agents and the
// default-model setting name (at the configured base URL, with the key from SecretStorage). The
// catalogue and the reference a picked model maps to are in chatModelCatalog.ts, the conversion
// of requests and responses in chatModelMessages.ts, the scripted model's answers in
// scriptedChatModel.ts.
//
// `vscode.lm.registerLanguageModelChatProvider` is stable since VS Code 1.104, newer than the
// @types/vscode (1.100) this extension builds against and than its engines.vscode: it is looked up
// at run time, with the few types it needs written here, and where it is missing the picker simply
// lacks our models.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { parseAgentsFile } from '../../agents/agentsFile.js';
import { cancelled, type ModelResponse } from '../../runtime/model/model.js';
import { AGENTS_FILE } from '../../runtime/agents/workspaceAgents.js';
import { BASE_URL_SETTING } from './apiKeys.js';
import { configuredBaseUrl } from './baseUrlSetting.js';
import { CHAT_VENDOR, chatModelReferenceOf, chatModelsOffered, openaiCompatibleModelsIn, type ChatModelInfo } from './chatModelCatalog.js';
import { responsePartsOf, runtimeRequestOf, type ProviderMessage, type RuntimeChatRequest } from './chatModelMessages.js';
import type { Log } from '../basics/log.js';
import { scriptedChatAnswer } from './scriptedChatModel.js';

const DEFAULT_MODEL_SETTING = 'agentPolicy.model.default';

/**
 * The model reference our runtime uses for a model picked in the Chat view: our scripted model →
 * `undefined` (the agent keeps its own scripted scenario), our OpenAI-compatible model →
 * `openai-compatible:<model>`, another vendor's → `vscode-lm:<vendor>/<family>`. Throws, saying
 * why, for a model whose fields cannot make a reference.
 */
export function chatModelReference(model: vscode.LanguageModelChat): string | undefined {
  return chatModelReferenceOf({ vendor: model.vendor, id: model.id, family: model.family });
}

// The provider API's shapes (VS Code 1.104+), as far as this provider uses them.
interface ChatRequestMessage {
  readonly role: number;
  readonly content: readonly unknown[];
}
interface ChatResponseOptions {
  readonly tools?: readonly vscode.LanguageModelChatTool[];
  /** The extension that sent the request (VS Code passes it; not in every version's types). */
  readonly requestInitiator?: string;
}
type ResponsePart = vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart;
interface ChatModelProvider {
  readonly onDidChangeLanguageModelChatInformation?: vscode.Event<void>;
  provideLanguageModelChatInformation(options: { readonly silent: boolean }, token: vscode.CancellationToken): ChatModelInfo[];
  provideLanguageModelChatResponse(model: ChatModelInfo, messages: readonly ChatRequestMessage[], options: ChatResponseOptions, progress: vscode.Progress<ResponsePart>, token: vscode.CancellationToken): Promise<void>;
  provideTokenCount(model: ChatModelInfo, text: string | ChatRequestMessage, token: vscode.CancellationToken): Promise<number>;
}
interface LmProviderApi {
  registerLanguageModelChatProvider(vendor: string, provider: ChatModelProvider): vscode.Disposable;
}

export interface ChatModelsOptions {
  secrets: vscode.SecretStorage;
  log: Log;
  workspaceFolder: string;
}

/**
 * Registers the provider (where VS Code has the API) and resolves it once, in the background: until
 * VS Code has asked a provider for its models, a request to one fails with "Language model unavailable".
 */
export function registerChatModels(options: ChatModelsOptions): { disposables: vscode.Disposable[]; resolved: Promise<void> } {
  const api = vscode.lm as Partial<LmProviderApi>;
  if (typeof api.registerLanguageModelChatProvider !== 'function') {
    options.log.info(`this VS Code (${vscode.version}) cannot take language model providers (1.104 or later can): the model picker does not offer Agent Policy's models`);
    return { disposables: [], resolved: Promise.resolve() };
  }
  const provider = new AgentPolicyChatModels(options);
  const registration = api.registerLanguageModelChatProvider(CHAT_VENDOR, provider);
  const resolved = Promise.resolve(vscode.lm.selectChatModels({ vendor: CHAT_VENDOR })).then(
    (models) => options.log.info(`the model picker offers ${models.map((m) => `${m.name} (vscode-lm:${m.vendor}/${m.family})`).join(', ')}`),
    (error: unknown) => options.log.error('the model picker could not list Agent Policy\'s models', error),
  );
  return { disposables: [registration, provider], resolved };
}

class AgentPolicyChatModels implements ChatModelProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly options: ChatModelsOptions) {
    const agentsFile = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(options.workspaceFolder, AGENTS_FILE));
    const fire = (): void => this.changed.fire();
    this.subscriptions = [
      this.changed,
      agentsFile,
      agentsFile.onDidCreate(fire),
      agentsFile.onDidChange(fire),
      agentsFile.onDidDelete(fire),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(DEFAULT_MODEL_SETTING) || e.affectsConfiguration(BASE_URL_SETTING)) fire();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(fire),
    ];
  }

  provideLanguageModelChatInformation(): ChatModelInfo[] {
    return chatModelsOffered(openaiCompatibleModelsIn(this.namedModels()), configuredBaseUrl().value);
  }

  async provideLanguageModelChatResponse(model: ChatModelInfo, messages: readonly ChatRequestMessage[], options: ChatResponseOptions, progress: vscode.Progress<ResponsePart>, token: vscode.CancellationToken): Promise<void> {
    const request = runtimeRequestOf(messages.map(providerMessageOf), (options.tools ?? []).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })));
    const abort = new AbortController();
    const cancel = token.onCancellationRequested(() => abort.abort());
    try {
      const response = await this.answer(model, request, abort.signal, typeof options.requestInitiator === 'string' ? options.requestInitiator : 'an unnamed extension');
      if (abort.signal.aborted) throw cancelled();
      for (const part of responsePartsOf(response)) {
        progress.report(part.type === 'text' ? new vscode.LanguageModelTextPart(part.value) : new vscode.LanguageModelToolCallPart(part.callId, part.name, part.input));
      }
    } finally {
      cancel.dispose();
    }
  }

  async provideTokenCount(_model: ChatModelInfo, text: string | ChatRequestMessage): Promise<number> {
    const value = typeof text === 'string' ? text : providerMessageOf(text).parts.map((p) => JSON.stringify(p)).join('');
    // An estimate (no tokenizer for every server): about four characters a token.
    return Math.ceil(value.length / 4);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }

  private async answer(model: ChatModelInfo, request: RuntimeChatRequest, signal: AbortSignal, initiator: string): Promise<ModelResponse> {
    const reference = chatModelReferenceOf({ vendor: CHAT_VENDOR, id: model.id, family: model.family });
    if (reference === undefined) return scriptedChatAnswer(request, signal);
    // Any extension may use a provider's models: who spends the person's key is in the log.
    this.options.log.info(`${reference}: a request from ${JSON.stringify(initiator.slice(0, 100))} through VS Code's language model API`);
    // The openai client is loaded at the first request, not when the core starts.
    const { workspaceModelFactory } = await import('./models.js');
    const folder = this.options.workspaceFolder;
    const made = workspaceModelFactory({ secrets: this.options.secrets, log: (line) => this.options.log.info(line) })(reference, { workspaceFolder: folder, baseFolder: folder });
    return made.respond({ agent: 'chat', sessionId: 'chat', ...request, signal });
  }

  /** The model references the default-model setting and the workspace's agents and subagents name. */
  private namedModels(): string[] {
    const named = [vscode.workspace.getConfiguration().get<string>(DEFAULT_MODEL_SETTING)];
    const file = path.join(this.options.workspaceFolder, AGENTS_FILE);
    try {
      if (fs.existsSync(file)) {
        const parsed = parseAgentsFile(fs.readFileSync(file, 'utf8'), file);
        for (const agent of parsed.value?.agents ?? []) named.push(agent.model, ...(agent.subagents ?? []).map((s) => s.model));
      }
    } catch (error) {
      this.options.log.warn(`the model picker could not read ${AGENTS_FILE}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return named.filter((m): m is string => typeof m === 'string');
  }
}

/** A request message as plain parts; parts a model here cannot read (images, data) are left out. */
function providerMessageOf(message: ChatRequestMessage): ProviderMessage {
  const role = message.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant' : message.role === vscode.LanguageModelChatMessageRole.User ? 'user' : 'system';
  const parts: ProviderMessage['parts'] = [];
  for (const part of message.content) {
    if (part instanceof vscode.LanguageModelTextPart) parts.push({ type: 'text', value: part.value });
    else if (part instanceof vscode.LanguageModelToolCallPart) parts.push({ type: 'toolCall', callId: part.callId, name: part.name, input: part.input });
    else if (part instanceof vscode.LanguageModelToolResultPart) parts.push({ type: 'toolResult', callId: part.callId, content: textOf(part.content) });
  }
  return { role, parts };
}

function textOf(content: readonly unknown[]): string {
  return content.map((c) => (c instanceof vscode.LanguageModelTextPart ? c.value : '')).join('');
}
