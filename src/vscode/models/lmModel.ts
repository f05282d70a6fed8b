// A model served by VS Code's language model API (`vscode.lm`), e.g. GitHub Copilot's, for the
// references `vscode-lm:<vendor>/<family>`. The conversion to the API's messages is in lmMessages.ts.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { cancelled, ModelError, type Model, type ModelRequest, type ModelResponse, type ModelToolCall } from '../../runtime/model/model.js';
import { describeSelector, lmErrorMessage, lmRequestOf, noModelMessage, parseLmReference, type LmMessage, type LmSelector } from './lmMessages.js';

export interface VsCodeLanguageModelOptions {
  /** Told which model a reference selected. */
  log?: (line: string) => void;
}

/** Shown in VS Code's consent dialog, the first time this extension asks for a model. */
function justification(): string {
  return vscode.l10n.t('Agent Policy runs the agent session you started with this model; every tool call it makes is judged by your policy.');
}

export class VsCodeLanguageModel implements Model {
  readonly id: string;
  readonly selector: LmSelector;
  private chat: vscode.LanguageModelChat | undefined;

  constructor(reference: string, private readonly options: VsCodeLanguageModelOptions = {}) {
    this.selector = parseLmReference(reference);
    this.id = reference.trim();
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    if (request.signal.aborted) throw cancelled();
    const source = new vscode.CancellationTokenSource();
    const cancel = (): void => source.cancel();
    request.signal.addEventListener('abort', cancel, { once: true });
    try {
      const chat = await this.select();
      if (request.signal.aborted) throw cancelled();
      const converted = lmRequestOf(request);
      const options: vscode.LanguageModelChatRequestOptions = { justification: justification() };
      if (converted.tools.length > 0) {
        options.tools = converted.tools;
        options.toolMode = vscode.LanguageModelChatToolMode.Auto;
      }
      const response = await chat.sendRequest(converted.messages.map(toChatMessage), options, source.token);
      let text = '';
      const toolCalls: ModelToolCall[] = [];
      for await (const part of response.stream) {
        if (request.signal.aborted) break;
        if (part instanceof vscode.LanguageModelTextPart) text += part.value;
        else if (part instanceof vscode.LanguageModelToolCallPart) toolCalls.push({ id: part.callId || newCallId(), name: part.name, input: part.input });
        // Other parts (data, thinking) are not the answer.
      }
      if (request.signal.aborted) throw cancelled();
      return { text, toolCalls };
    } catch (error) {
      if (request.signal.aborted) throw cancelled();
      throw this.explain(error);
    } finally {
      request.signal.removeEventListener('abort', cancel);
      source.dispose();
    }
  }

  /** At first use, and again after the model went away (NotFound). */
  private async select(): Promise<vscode.LanguageModelChat> {
    if (this.chat) return this.chat;
    const { vendor, family } = this.selector;
    const found = await vscode.lm.selectChatModels(family === undefined ? { vendor } : { vendor, family });
    const chat = found[0];
    if (!chat) throw new ModelError(noModelMessage(this.id, this.selector, await vscode.lm.selectChatModels()));
    this.options.log?.(`${this.id}: using ${chat.name} (${chat.vendor}/${chat.family}, version ${chat.version}, up to ${chat.maxInputTokens} input tokens)`);
    this.chat = chat;
    return chat;
  }

  private explain(error: unknown): ModelError {
    if (error instanceof ModelError) return error;
    const model = this.chat ? `${this.chat.name} (${this.chat.vendor}/${this.chat.family})` : describeSelector(this.selector);
    if (error instanceof vscode.CancellationError) return new ModelError(`${this.id}: the request to ${model} was cancelled by VS Code`);
    if (error instanceof vscode.LanguageModelError) {
      if (error.code === 'NotFound') this.chat = undefined;
      const cause = error.cause instanceof Error && error.cause.message !== error.message ? `${error.message}: ${error.cause.message}` : error.message;
      return new ModelError(lmErrorMessage(this.id, model, error.code, cause));
    }
    return new ModelError(lmErrorMessage(this.id, model, 'Unknown', error instanceof Error ? error.message : String(error)));
  }
}

function toChatMessage(message: LmMessage): vscode.LanguageModelChatMessage {
  if (message.role === 'assistant') {
    return vscode.LanguageModelChatMessage.Assistant(message.parts.map((p) =>
      p.type === 'text' ? new vscode.LanguageModelTextPart(p.value) : new vscode.LanguageModelToolCallPart(p.callId, p.name, p.input)));
  }
  return vscode.LanguageModelChatMessage.User(message.parts.map((p) =>
    p.type === 'text' ? new vscode.LanguageModelTextPart(p.value) : new vscode.LanguageModelToolResultPart(p.callId, [new vscode.LanguageModelTextPart(p.content)])));
}

function newCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}
