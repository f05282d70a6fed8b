// Anthropic Messages (`POST /v1/messages`, streamed): what Claude Code calls.
import type * as http from 'node:http';
import { type ModelDialect, type ModelRequest, type OfferedTool, startEventStream, textOf, writeEvent } from './modelServer';

interface AnthropicBlock {
  type: string;
  content?: unknown;
}

function messageStart(res: http.ServerResponse, { body }: ModelRequest): void {
  startEventStream(res);
  writeEvent(res, {
    type: 'message_start',
    message: { id: `msg_${Date.now().toString(36)}`, type: 'message', role: 'assistant', model: body.model ?? 'mock', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
  }, 'message_start');
}

function messageEnd(res: http.ServerResponse, stopReason: 'tool_use' | 'end_turn'): void {
  writeEvent(res, { type: 'content_block_stop', index: 0 }, 'content_block_stop');
  writeEvent(res, { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 10 } }, 'message_delta');
  writeEvent(res, { type: 'message_stop' }, 'message_stop');
  res.end();
}

export const anthropicDialect: ModelDialect = {
  isModelRequest: (method, url) => method === 'POST' && url.split('?')[0] === '/v1/messages',
  tools: (body) =>
    ((body.tools as { name?: string; input_schema?: OfferedTool['parameters'] }[] | undefined) ?? [])
      .filter((t) => typeof t.name === 'string')
      .map((t) => ({ name: t.name!, parameters: t.input_schema ?? {} })),
  toolResult: (body) => {
    const results = ((body.messages as { content?: unknown }[] | undefined) ?? [])
      .flatMap((m) => (Array.isArray(m.content) ? (m.content as AnthropicBlock[]) : []))
      .filter((b) => b.type === 'tool_result');
    return results.length === 0 ? undefined : textOf(results.at(-1)!.content);
  },
  streamToolCall: (res, call, request) => {
    messageStart(res, request);
    writeEvent(res, { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_${call.id}`, name: call.name, input: {} } }, 'content_block_start');
    writeEvent(res, { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.args) } }, 'content_block_delta');
    messageEnd(res, 'tool_use');
  },
  streamText: (res, text, request) => {
    messageStart(res, request);
    writeEvent(res, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start');
    writeEvent(res, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta');
    messageEnd(res, 'end_turn');
  },
};
