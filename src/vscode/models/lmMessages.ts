// The `vscode-lm:` provider's pure half: a model reference, a request and the provider's errors as
// plain data and text. No `vscode` import, so it is tested in plain Node; lmModel.ts adapts it.
import { isObject, ModelError, withoutSchemaUri, type ModelRequest } from '../../runtime/model/model.js';

export const LM_PROVIDER = 'vscode-lm';

/** What `vscode-lm:<vendor>/<family>` selects; no family: any model of the vendor. */
export interface LmSelector {
  vendor: string;
  family?: string;
}

export type LmTextPart = { type: 'text'; value: string };
export type LmToolCallPart = { type: 'toolCall'; callId: string; name: string; input: object };
export type LmToolResultPart = { type: 'toolResult'; callId: string; content: string };

/** The API has two roles: instructions and tool results travel in User messages. */
export type LmMessage =
  | { role: 'user'; parts: Array<LmTextPart | LmToolResultPart> }
  | { role: 'assistant'; parts: Array<LmTextPart | LmToolCallPart> };

export interface LmTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface LmRequest {
  messages: LmMessage[];
  tools: LmTool[];
}

/** A model as `selectChatModels` describes it, enough to name it. */
export interface LmModelInfo {
  vendor: string;
  family: string;
  name?: string;
}

/** `vscode-lm:copilot/gpt-4o` → `{ vendor: 'copilot', family: 'gpt-4o' }`; `vscode-lm:copilot` → any family. */
export function parseLmReference(reference: string): LmSelector {
  const trimmed = reference.trim();
  const rest = trimmed.startsWith(`${LM_PROVIDER}:`) ? trimmed.slice(LM_PROVIDER.length + 1).trim() : trimmed === LM_PROVIDER ? '' : undefined;
  if (rest === undefined) throw new ModelError(`model "${reference}": not a ${LM_PROVIDER} reference; write it as ${LM_PROVIDER}:<vendor>/<family>, e.g. ${LM_PROVIDER}:copilot/gpt-4o`);
  const slash = rest.indexOf('/');
  const vendor = (slash < 0 ? rest : rest.slice(0, slash)).trim();
  const family = slash < 0 ? '' : rest.slice(slash + 1).trim();
  if (vendor === '') {
    throw new ModelError(`model "${reference}": name the vendor, as ${LM_PROVIDER}:<vendor>/<family> (e.g. ${LM_PROVIDER}:copilot/gpt-4o) or ${LM_PROVIDER}:<vendor> for any of its models; 'Agent Policy: Select Language Model' lists them`);
  }
  return family === '' ? { vendor } : { vendor, family };
}

/** The reference that selects this model: `vscode-lm:<vendor>/<family>`. */
export function lmReferenceOf(model: LmModelInfo): string {
  return `${LM_PROVIDER}:${model.vendor}/${model.family}`;
}

export function describeSelector(selector: LmSelector): string {
  return selector.family === undefined ? `any ${selector.vendor} model` : `${selector.vendor}/${selector.family}`;
}

/** Turns the runtime's conversation into the API's two roles. */
export function lmRequestOf(request: Pick<ModelRequest, 'instructions' | 'messages' | 'tools'>): LmRequest {
  const messages: LmMessage[] = [];
  // No system role in this API: the instructions are the first User message.
  if (request.instructions.trim() !== '') messages.push({ role: 'user', parts: [{ type: 'text', value: request.instructions }] });
  for (const m of request.messages) {
    if (m.role === 'user') {
      messages.push({ role: 'user', parts: [{ type: 'text', value: m.content }] });
    } else if (m.role === 'assistant') {
      const parts: Array<LmTextPart | LmToolCallPart> = [];
      if (m.content !== '') parts.push({ type: 'text', value: m.content });
      for (const c of m.toolCalls) {
        // Input that was not an object (invalid arguments, kept raw) goes back as {}: the part takes an object.
        parts.push({ type: 'toolCall', callId: c.id, name: c.name, input: isObject(c.input) ? c.input : {} });
      }
      // An empty assistant message is rejected by some models and says nothing.
      if (parts.length > 0) messages.push({ role: 'assistant', parts });
    } else {
      // The results of one assistant message's calls answer it together, in one User message.
      const part: LmToolResultPart = { type: 'toolResult', callId: m.callId, content: m.content };
      const last = messages.at(-1);
      if (last?.role === 'user' && last.parts.length > 0 && last.parts.every((p) => p.type === 'toolResult')) last.parts.push(part);
      else messages.push({ role: 'user', parts: [part] });
    }
  }
  const tools = request.tools.map((t): LmTool => ({ name: t.name, description: t.description, inputSchema: withoutSchemaUri(t.inputSchema) }));
  return { messages, tools };
}

/** Why no model matched, and which ones would. */
export function noModelMessage(reference: string, selector: LmSelector, available: readonly LmModelInfo[]): string {
  if (available.length === 0) {
    return `model "${reference}": no language model is available in VS Code. Install and sign in to an extension that provides language models (GitHub Copilot Chat, for one), or use openai-compatible:<model>`;
  }
  const names = [...new Set(available.map(lmReferenceOf))].sort();
  return `model "${reference}": VS Code has no ${describeSelector(selector)} model. Available: ${names.join(', ')}`;
}

/** A `LanguageModelError` (by its `code`) as a message a person can act on. */
export function lmErrorMessage(reference: string, model: string, code: string, message: string): string {
  const said = message.trim() !== '' ? ` (${message.trim()})` : '';
  switch (code) {
    case 'NoPermissions':
      return `${reference}: Agent Policy may not use ${model}${said}. Start the session again and choose Allow when VS Code asks, or allow it in the Accounts menu (your account → Manage Language Model Access)`;
    case 'NotFound':
      return `${reference}: ${model} is no longer available${said}; its extension may have been disabled or signed out. 'Agent Policy: Select Language Model' lists the models there are`;
    case 'Blocked':
      return `${reference}: ${model} refused the request: a rate limit or quota is exhausted${said}. Wait and try again, or check your plan with the model's provider`;
    default:
      return `${reference}: ${model} failed${message.trim() !== '' ? `: ${message.trim()}` : ''}`;
  }
}

