// Our language-model provider's pure half: a request VS Code hands the provider (its messages as
// plain parts) turned into the runtime's ModelRequest, and a model's response into the parts the
// provider reports. The reverse of lmMessages.ts, which turns the runtime's requests into the API's.
// No `vscode` import: tested in plain Node; chatModels.ts adapts VS Code's classes.
import { isObject, type Message, type ModelResponse, type ModelToolCall, type ModelToolSpec } from '../../runtime/model/model.js';
import type { LmTextPart, LmToolCallPart, LmToolResultPart } from './lmMessages.js';

/** A message as the provider receives it; parts VS Code has but a model here cannot read (images, data) are left out by the adapter. */
export interface ProviderMessage {
  role: 'user' | 'assistant' | 'system';
  parts: Array<LmTextPart | LmToolCallPart | LmToolResultPart>;
}

export interface ProviderTool {
  name: string;
  description: string;
  inputSchema?: unknown;
}

/** The runtime's view of the request: instructions (system messages), the conversation and the tools. */
export interface RuntimeChatRequest {
  instructions: string;
  messages: Message[];
  tools: ModelToolSpec[];
}

export function runtimeRequestOf(messages: readonly ProviderMessage[], tools: readonly ProviderTool[]): RuntimeChatRequest {
  const instructions: string[] = [];
  const out: Message[] = [];
  // A tool result names its call only by id: the name comes from the assistant's call.
  const callNames = new Map<string, string>();
  for (const message of messages) {
    const text = message.parts.filter((p): p is LmTextPart => p.type === 'text').map((p) => p.value).join('');
    if (message.role === 'system') {
      if (text.trim() !== '') instructions.push(text);
    } else if (message.role === 'assistant') {
      const toolCalls: ModelToolCall[] = message.parts
        .filter((p): p is LmToolCallPart => p.type === 'toolCall')
        .map((p) => ({ id: p.callId, name: p.name, input: p.input }));
      for (const call of toolCalls) callNames.set(call.id, call.name);
      out.push({ role: 'assistant', content: text, toolCalls });
    } else {
      // Results first: they answer the assistant message before this one; text the person adds follows.
      for (const p of message.parts) {
        if (p.type === 'toolResult') out.push({ role: 'tool', callId: p.callId, name: callNames.get(p.callId) ?? '', content: p.content });
      }
      if (text !== '') out.push({ role: 'user', content: text });
    }
  }
  return {
    instructions: instructions.join('\n\n'),
    messages: out,
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: isObject(t.inputSchema) ? t.inputSchema : { type: 'object', properties: {} } })),
  };
}

/** What the provider reports for a response, in order: its text (when there is any), then each tool call. */
export function responsePartsOf(response: ModelResponse): Array<LmTextPart | LmToolCallPart> {
  const parts: Array<LmTextPart | LmToolCallPart> = [];
  if (response.text !== '') parts.push({ type: 'text', value: response.text });
  const invalid: string[] = [];
  for (const call of response.toolCalls) {
    // A part takes an object. Arguments that are not one (invalid JSON) are not sent as {}: a tool
    // whose fields are all optional would run with nothing asked; the caller is told instead.
    if (isObject(call.input)) parts.push({ type: 'toolCall', callId: call.id, name: call.name, input: call.input });
    else invalid.push(call.name);
  }
  if (invalid.length > 0) {
    parts.push({ type: 'text', value: `\n(The model called ${invalid.join(', ')} with arguments that are not a JSON object; ${invalid.length === 1 ? 'that call was' : 'those calls were'} left out.)` });
  }
  return parts;
}
