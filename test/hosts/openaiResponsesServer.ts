// OpenAI Responses (`POST /v1/responses`, streamed): what Codex calls. `response.completed` carries
// the whole response with its output, as Codex reads the items from it.
import type * as http from 'node:http';
import { type ModelDialect, type ModelRequest, type OfferedTool, startEventStream, textOf, writeEvent } from './modelServer';

function stream(res: http.ServerResponse, item: Record<string, unknown>, { body }: ModelRequest, deltas: Record<string, unknown>[]): void {
  const id = `resp_${Date.now().toString(36)}`;
  const response = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model: body.model ?? 'mock', status: 'in_progress', output: [] as unknown[] };
  let sequence = 0;
  const write = (type: string, data: Record<string, unknown>): void => writeEvent(res, { type, sequence_number: sequence++, ...data }, type);
  startEventStream(res);
  write('response.created', { response });
  write('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress' } });
  for (const { type, ...delta } of deltas) write(type as string, { output_index: 0, item_id: item.id, ...delta });
  write('response.output_item.done', { output_index: 0, item: { ...item, status: 'completed' } });
  write('response.completed', {
    response: { ...response, status: 'completed', output: [{ ...item, status: 'completed' }], usage: { input_tokens: 10, output_tokens: 10, total_tokens: 20, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } },
  });
  res.end();
}

export const openaiResponsesDialect: ModelDialect = {
  isModelRequest: (method, url) => method === 'POST' && url.split('?')[0]!.endsWith('/responses'),
  tools: (body) =>
    ((body.tools as { type?: string; name?: string; parameters?: OfferedTool['parameters'] }[] | undefined) ?? [])
      .filter((t) => t.type === 'function' && typeof t.name === 'string')
      .map((t) => ({ name: t.name!, parameters: t.parameters ?? {} })),
  toolResult: (body) => {
    const input = Array.isArray(body.input) ? (body.input as { type?: string; output?: unknown }[]) : [];
    const outputs = input.filter((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output');
    return outputs.length === 0 ? undefined : textOf(outputs.at(-1)!.output);
  },
  streamToolCall: (res, call, request) => {
    const args = JSON.stringify(call.args);
    const item = { type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: args };
    stream(res, item, request, [{ type: 'response.function_call_arguments.delta', delta: args }, { type: 'response.function_call_arguments.done', arguments: args }]);
  },
  streamText: (res, text, request) => {
    const item = { type: 'message', id: `msg_${Date.now().toString(36)}`, role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
    stream(res, item, request, [{ type: 'response.output_text.delta', content_index: 0, delta: text }, { type: 'response.output_text.done', content_index: 0, text }]);
  },
};
