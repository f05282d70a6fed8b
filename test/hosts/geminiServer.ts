// Gemini (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`): what Gemini CLI calls.
// Each event is a whole GenerateContentResponse; a non-streamed `:generateContent` (Gemini CLI's
// side questions) gets the same answer as one JSON body.
import type * as http from 'node:http';
import { type ModelDialect, type ModelRequest, type OfferedTool, startEventStream, textOf, writeEvent } from './modelServer';

function answer(res: http.ServerResponse, part: Record<string, unknown>, { url }: ModelRequest): void {
  const response = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
    modelVersion: (/models\/([^:]+):/.exec(url) ?? [])[1] ?? 'mock',
  };
  if (url.includes(':streamGenerateContent')) {
    startEventStream(res);
    writeEvent(res, response);
    res.end();
  } else {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
  }
}

type FunctionDeclaration = { name?: string; parameters?: OfferedTool['parameters']; parametersJsonSchema?: OfferedTool['parameters'] };

export const geminiDialect: ModelDialect = {
  isModelRequest: (method, url) => method === 'POST' && /\/models\/[^/:]+:(streamGenerateContent|generateContent)/.test(url),
  tools: (body) =>
    ((body.tools as { functionDeclarations?: FunctionDeclaration[] }[] | undefined) ?? [])
      .flatMap((t) => t.functionDeclarations ?? [])
      .filter((f) => typeof f.name === 'string')
      .map((f) => ({ name: f.name!, parameters: f.parametersJsonSchema ?? f.parameters ?? {} })),
  toolResult: (body) => {
    const responses = ((body.contents as { parts?: { functionResponse?: { response?: unknown } }[] }[] | undefined) ?? [])
      .flatMap((c) => c.parts ?? [])
      .filter((p) => p.functionResponse !== undefined);
    return responses.length === 0 ? undefined : textOf(responses.at(-1)!.functionResponse!.response);
  },
  streamToolCall: (res, call, request) => answer(res, { functionCall: { name: call.name, args: call.args } }, request),
  streamText: (res, text, request) => answer(res, { text }, request),
};
