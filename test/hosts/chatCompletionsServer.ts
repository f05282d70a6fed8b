// OpenAI chat completions (`POST /v1/chat/completions`, streamed): what Copilot CLI calls with its
// default provider. A tool call arrives in `delta.tool_calls`, ended by `finish_reason:"tool_calls"`.
import type * as http from 'node:http';
import { type ModelDialect, type ModelRequest, type OfferedTool, startEventStream, textOf, writeEvent } from './modelServer';

function chunks(res: http.ServerResponse, { body }: ModelRequest, deltas: Record<string, unknown>[], finishReason: string): void {
  const base = { id: `chatcmpl-${Date.now().toString(36)}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model ?? 'mock' };
  startEventStream(res);
  for (const delta of deltas) writeEvent(res, { ...base, choices: [{ index: 0, delta, finish_reason: null }] });
  writeEvent(res, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finishReason }], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } });
  writeEvent(res, '[DONE]');
  res.end();
}

export const chatCompletionsDialect: ModelDialect = {
  isModelRequest: (method, url) => method === 'POST' && url.split('?')[0]!.endsWith('/chat/completions'),
  tools: (body) =>
    ((body.tools as { type?: string; function?: { name?: string; parameters?: OfferedTool['parameters'] } }[] | undefined) ?? [])
      .filter((t) => t.type === 'function' && typeof t.function?.name === 'string')
      .map((t) => ({ name: t.function!.name!, parameters: t.function!.parameters ?? {} })),
  toolResult: (body) => {
    const results = ((body.messages as { role?: string; content?: unknown }[] | undefined) ?? []).filter((m) => m.role === 'tool');
    return results.length === 0 ? undefined : textOf(results.at(-1)!.content);
  },
  streamToolCall: (res, call, request) =>
    chunks(res, request, [
      { role: 'assistant', content: null, tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: JSON.stringify(call.args) } }] },
    ], 'tool_calls'),
  streamText: (res, text, request) => chunks(res, request, [{ role: 'assistant', content: '' }, { content: text }], 'stop'),
};
