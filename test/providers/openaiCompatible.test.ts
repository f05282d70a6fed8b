// The OpenAI-compatible provider against a local server replaying recorded chat-completion
// streams: stream merging, Mistral ids, errors a person can act on, retries, timeouts,
// cancellation, the request it sends, and the runtime and CLI using it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { main } from '../../src/cli/agentpolicy.js';
import { Agent, Builtins, PermissionPolicy, PermissionRule } from '../../src/runtime/agents/agent.js';
import { Completed, Failed, type TurnState } from '../../src/runtime/tree/answers.js';
import { ModelError, type Message, type ModelRequest, type ModelToolSpec } from '../../src/runtime/model/model.js';
import { openAICompatibleFromEnv, providerModelFactory } from '../../src/runtime/providers/index.js';
import { OpenAICompatibleModel, type OpenAICompatibleOptions } from '../../src/runtime/providers/openaiCompatible.js';
import type { Session } from '../../src/runtime/session.js';
import { tool } from '../../src/runtime/tools/tools.js';
import { ReplayServer, type Reply } from './replayServer.js';

const LOOKUP_PRICE: ModelToolSpec = {
  name: 'lookup_price',
  description: 'The current price of a product.',
  inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { product: { type: 'string' } }, required: ['product'] },
};

function request(options: { messages?: Message[]; instructions?: string; tools?: ModelToolSpec[]; signal?: AbortSignal } = {}): ModelRequest {
  return {
    agent: 'main',
    sessionId: 's1',
    instructions: options.instructions ?? '',
    messages: options.messages ?? [{ role: 'user', content: 'What does the Atlas cost?' }],
    tools: options.tools ?? [LOOKUP_PRICE],
    signal: options.signal ?? new AbortController().signal,
  };
}

const servers: ReplayServer[] = [];
async function serve(...replies: Reply[]): Promise<ReplayServer> {
  const server = await ReplayServer.start(replies);
  servers.push(server);
  return server;
}

function modelFor(server: ReplayServer | string, options: Partial<OpenAICompatibleOptions> = {}): OpenAICompatibleModel {
  return new OpenAICompatibleModel({
    baseURL: typeof server === 'string' ? server : server.baseURL,
    model: 'test-model',
    apiKey: 'sk-test',
    maxRetries: 0,
    timeoutMs: 2000,
    ...options,
  });
}

async function rejectsWithModelError(promise: Promise<unknown>, ...patterns: RegExp[]): Promise<ModelError> {
  let caught: unknown;
  await assert.rejects(promise, (error: unknown) => {
    caught = error;
    return true;
  });
  assert.ok(caught instanceof ModelError, `expected a ModelError, got ${String(caught)}`);
  for (const p of patterns) assert.match(caught.message, p);
  return caught;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

type SentMessage = { role: string; content?: unknown; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[]; tool_call_id?: string };

const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;

describe('OpenAICompatibleModel', () => {
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  describe('streams', () => {
    it('a text answer split across chunks is concatenated', async () => {
      const server = await serve({ stream: 'text.sse' });
      const response = await modelFor(server).respond(request());
      assert.deepEqual(response, { text: 'It costs 1,200 EUR.', toolCalls: [] });
    });

    it('one tool call whose arguments arrive in several chunks: the arguments are joined, then parsed', async () => {
      const server = await serve({ stream: 'tool-call.sse' });
      const response = await modelFor(server).respond(request());
      assert.deepEqual(response, { text: '', toolCalls: [{ id: 'call_k3Yq8ZqkTbN1Wm4sX0aP2dLf', name: 'lookup_price', input: { product: 'atlas' } }] });
    });

    it('two parallel tool calls interleaved by index: both, in order, each with its own id', async () => {
      const server = await serve({ stream: 'parallel-tool-calls.sse' });
      const response = await modelFor(server).respond(request());
      assert.deepEqual(response.toolCalls, [
        { id: 'call_atlasQ1w2E3r4T5y6U7i8', name: 'lookup_price', input: { product: 'atlas' } },
        { id: 'call_novaZ9x8C7v6B5n4M3l2', name: 'read_file', input: { path: 'nova.md' } },
      ]);
    });

    it("Ollama's streams (every call at index 0, each whole, with its own id): two calls, not one merged", async () => {
      const server = await serve({ stream: 'ollama-reused-index.sse' });
      const response = await modelFor(server).respond(request());
      assert.deepEqual(response.toolCalls, [
        { id: 'call_w1ue3kzp', name: 'lookup_price', input: { product: 'atlas' } },
        { id: 'call_9xgq0s1d', name: 'lookup_price', input: { product: 'nova' } },
      ]);
    });

    it('arguments that are not JSON: no error; the input is the raw text, for the runtime to reject', async () => {
      const server = await serve({ stream: 'invalid-arguments.sse' });
      const response = await modelFor(server).respond(request());
      assert.deepEqual(response.toolCalls, [{ id: 'call_badArgs0000000000000001', name: 'lookup_price', input: '{"product": "atl' }]);
    });

    it('a call the server sent without an id gets one (call_… by default)', async () => {
      const server = await serve({ stream: 'tool-call-without-id.sse' });
      const [call] = (await modelFor(server).respond(request())).toolCalls;
      assert.match(call!.id, /^call_[a-zA-Z0-9]{16}$/);
      assert.deepEqual(call!.input, { product: 'atlas' });
    });
  });

  describe('Mistral tool call ids', () => {
    const history: Message[] = [
      { role: 'user', content: 'What do the Atlas and the Nova cost?' },
      {
        role: 'assistant', content: '', toolCalls: [
          { id: 'call_abc123def456', name: 'lookup_price', input: { product: 'atlas' } },
          { id: 'Xy7Kp2Qr9', name: 'lookup_price', input: { product: 'nova' } },
        ],
      },
      { role: 'tool', callId: 'call_abc123def456', name: 'lookup_price', content: '{"price":"1,200 EUR"}' },
      { role: 'tool', callId: 'Xy7Kp2Qr9', name: 'lookup_price', content: '{"price":"850 EUR"}' },
    ];

    it('runtime ids are sent as 9 letters or digits, the same in the assistant call and its tool result, the same in every request', async () => {
      const server = await serve({ stream: 'mistral-tool-call.sse' });
      const model = modelFor(server, { toolCallIds: 'mistral' });
      await model.respond(request({ messages: history }));
      await model.respond(request({ messages: history }));
      const sent = (i: number) => server.requests[i]!.body['messages'] as SentMessage[];
      const [, assistant, result1, result2] = sent(0);
      const mapped = assistant!.tool_calls![0]!.id;
      assert.match(mapped, MISTRAL_ID);
      assert.notEqual(mapped, 'call_abc123def456');
      assert.equal(result1!.tool_call_id, mapped);
      assert.equal(assistant!.tool_calls![1]!.id, 'Xy7Kp2Qr9', 'an id that is already valid is kept');
      assert.equal(result2!.tool_call_id, 'Xy7Kp2Qr9');
      assert.equal(sent(1)[1]!.tool_calls![0]!.id, mapped, 'stable across requests');
    });

    it("the server's own 9-character id is kept in the response", async () => {
      const server = await serve({ stream: 'mistral-tool-call.sse' });
      const response = await modelFor(server, { toolCallIds: 'mistral' }).respond(request());
      assert.deepEqual(response.toolCalls, [{ id: 'D681PevKs', name: 'lookup_price', input: { product: 'nova' } }]);
    });

    it('a call without an id gets a 9-character one', async () => {
      const server = await serve({ stream: 'tool-call-without-id.sse' });
      const [call] = (await modelFor(server, { toolCallIds: 'mistral' }).respond(request())).toolCalls;
      assert.match(call!.id, MISTRAL_ID);
    });

    it('other servers get the ids as they are', async () => {
      const server = await serve({ stream: 'text.sse' });
      await modelFor(server).respond(request({ messages: history }));
      const [, assistant, result1] = server.requests[0]!.body['messages'] as SentMessage[];
      assert.equal(assistant!.tool_calls![0]!.id, 'call_abc123def456');
      assert.equal(result1!.tool_call_id, 'call_abc123def456');
    });

    it('the mistral style is chosen when the host ends with mistral.ai', () => {
      assert.equal(modelFor('https://api.mistral.ai/v1').toolCallIds, 'mistral');
      assert.equal(modelFor('https://api.openai.com/v1').toolCallIds, 'any');
      assert.equal(modelFor('http://127.0.0.1:11434/v1').toolCallIds, 'any');
    });
  });

  describe('the request', () => {
    it('system message from the instructions, the history, tools as functions, stream: true, no tool_choice', async () => {
      const server = await serve({ stream: 'text.sse' });
      await modelFor(server).respond(request({
        instructions: 'You answer price questions.',
        messages: [
          { role: 'user', content: 'What does the Atlas cost?' },
          { role: 'assistant', content: 'Looking it up.', toolCalls: [{ id: 'call_1', name: 'lookup_price', input: { product: 'atlas' } }] },
          { role: 'tool', callId: 'call_1', name: 'lookup_price', content: '{"price":"1,200 EUR"}' },
          { role: 'assistant', content: 'It costs 1,200 EUR.', toolCalls: [] },
          { role: 'user', content: 'Thanks.' },
        ],
      }));
      const sent = server.requests[0]!;
      assert.equal(sent.method, 'POST');
      assert.equal(sent.url, '/v1/chat/completions');
      assert.equal(sent.headers.authorization, 'Bearer sk-test');
      assert.deepEqual(sent.body, {
        model: 'test-model',
        messages: [
          { role: 'system', content: 'You answer price questions.' },
          { role: 'user', content: 'What does the Atlas cost?' },
          { role: 'assistant', content: 'Looking it up.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_price', arguments: '{"product":"atlas"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"price":"1,200 EUR"}' },
          { role: 'assistant', content: 'It costs 1,200 EUR.' },
          { role: 'user', content: 'Thanks.' },
        ],
        tools: [{
          type: 'function',
          function: { name: 'lookup_price', description: 'The current price of a product.', parameters: { type: 'object', properties: { product: { type: 'string' } }, required: ['product'] } },
        }],
        stream: true,
      });
      assert.equal('tool_choice' in sent.body, false);
      assert.equal('parallel_tool_calls' in sent.body, false);
    });

    it('no system message without instructions, no tools key without tools', async () => {
      const server = await serve({ stream: 'text.sse' });
      await modelFor(server).respond(request({ tools: [] }));
      const body = server.requests[0]!.body;
      assert.deepEqual(body['messages'], [{ role: 'user', content: 'What does the Atlas cost?' }]);
      assert.equal('tools' in body, false);
    });

    it('raw invalid arguments go back in the history as {} (servers reject arguments that are not an object)', async () => {
      const server = await serve({ stream: 'text.sse' });
      await modelFor(server).respond(request({
        messages: [
          { role: 'user', content: 'price?' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'lookup_price', input: '{"product": "atl' }] },
          { role: 'tool', callId: 'call_1', name: 'lookup_price', content: '{"error":"invalid input"}' },
        ],
      }));
      const [, assistant] = server.requests[0]!.body['messages'] as SentMessage[];
      assert.equal(assistant!.content, null);
      assert.equal(assistant!.tool_calls![0]!.function.arguments, '{}');
    });

    it('an api key getter is awaited before each request', async () => {
      const server = await serve({ stream: 'text.sse' });
      let key = 'sk-first';
      const model = modelFor(server, { apiKey: async () => key });
      await model.respond(request());
      key = 'sk-second';
      await model.respond(request());
      assert.deepEqual(server.requests.map((r) => r.headers.authorization), ['Bearer sk-first', 'Bearer sk-second']);
    });
  });

  describe('errors a person can act on', () => {
    it('429 with retry-after: 0, then success: the answer arrives after one retry by the client', async () => {
      const server = await serve({ status: 429, headers: { 'retry-after': '0' }, json: { error: { message: 'Rate limit reached', type: 'requests' } } }, { stream: 'text.sse' });
      const response = await modelFor(server, { maxRetries: 2 }).respond(request());
      assert.equal(response.text, 'It costs 1,200 EUR.');
      assert.equal(server.requests.length, 2);
    });

    it('the client waits as long as retry-after says (0.2 s), not its own backoff (at least 0.375 s)', async () => {
      const server = await serve({ status: 429, headers: { 'retry-after': '0.2' }, json: { error: { message: 'slow down' } } }, { stream: 'text.sse' });
      const started = Date.now();
      await modelFor(server, { maxRetries: 1 }).respond(request());
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 190 && elapsed < 370, `retried after ${elapsed} ms`);
    });

    it('the client honours retry-after-ms (1 ms), before retry-after (30 s)', async () => {
      const server = await serve({ status: 429, headers: { 'retry-after-ms': '1', 'retry-after': '30' }, json: { error: { message: 'slow down' } } }, { stream: 'text.sse' });
      const started = Date.now();
      await modelFor(server, { maxRetries: 1 }).respond(request());
      assert.ok(Date.now() - started < 300, `retried after ${Date.now() - started} ms`);
      assert.equal(server.requests.length, 2);
    });

    it('a 429 that persists: a ModelError about the rate limit, after the retries', async () => {
      const server = await serve({ status: 429, headers: { 'retry-after': '0' }, json: { error: { message: 'Rate limit reached for requests', type: 'requests' } } });
      await rejectsWithModelError(modelFor(server, { maxRetries: 1 }).respond(request()), /rate limited/, /2 attempts/, /Rate limit reached for requests/, /127\.0\.0\.1/);
      assert.equal(server.requests.length, 2);
    });

    it('a 429 says how long the server asks to wait', async () => {
      const server = await serve({ status: 429, headers: { 'retry-after': '20' }, json: { error: { message: 'Rate limit reached' } } });
      await rejectsWithModelError(modelFor(server).respond(request()), /rate limited/, /wait 20 s/);
    });

    it('401: the API key for the endpoint was refused, and how to set it', async () => {
      const server = await serve({ status: 401, json: { error: { message: 'Incorrect API key provided: sk-test.', type: 'invalid_request_error', code: 'invalid_api_key' } } });
      const error = await rejectsWithModelError(modelFor(server).respond(request()), /API key/, /refused/, /Agent Policy: Set API Key/);
      assert.ok(error.message.includes(server.baseURL), error.message);
      assert.ok(error.message.includes('openai-compatible:test-model'), error.message);
    });

    it('401 with no key set says that none is set; the CLI names its environment variable', async () => {
      const server = await serve({ status: 401, json: { message: 'Unauthorized', request_id: 'r1' } });
      const factory = providerModelFactory({ openaiCompatible: { ...openAICompatibleFromEnv({}), baseURL: server.baseURL } });
      const model = factory('openai-compatible:mistral-small-latest', { workspaceFolder: '.', baseFolder: '.' });
      await rejectsWithModelError(model.respond(request()), /needs an API key and none is set/, /AGENTPOLICY_API_KEY/);
    });

    it('404: the model was not found at the endpoint', async () => {
      const server = await serve({ status: 404, json: { error: { message: 'The model `gpt-nope` does not exist or you do not have access to it.', code: 'model_not_found' } } });
      const error = await rejectsWithModelError(modelFor(server, { model: 'gpt-nope' }).respond(request()), /model "gpt-nope" was not found/, /base URL/);
      assert.ok(error.message.includes(server.baseURL), error.message);
    });

    it("400: the server's message", async () => {
      // Mistral's errors are not wrapped in `error`.
      const server = await serve({ status: 400, json: { object: 'error', message: 'Tool call id has to be a string of length 9.', type: 'invalid_request_message_order', code: '3230' } });
      await rejectsWithModelError(modelFor(server).respond(request()), /rejected the request \(400: Tool call id has to be a string of length 9\.\)/);
    });

    it('5xx after the retries: a server error', async () => {
      const server = await serve({ status: 503, headers: { 'retry-after-ms': '1' }, json: { error: { message: 'The engine is currently overloaded' } } });
      await rejectsWithModelError(modelFor(server, { maxRetries: 1 }).respond(request()), /server error/, /503/, /overloaded/, /2 attempts/);
      assert.equal(server.requests.length, 2);
    });

    it('a malformed stream chunk: a ModelError saying so', async () => {
      const server = await serve({ stream: 'malformed.sse' });
      await rejectsWithModelError(modelFor(server).respond(request()), /malformed stream chunk/);
    });

    it('an error event within the stream: the server\'s message', async () => {
      const server = await serve({ stream: 'stream-error.sse' });
      await rejectsWithModelError(modelFor(server).respond(request()), /error while streaming/, /The server had an error/);
    });

    it('a connection dropped in the middle of the stream: the answer broke off', async () => {
      const server = await serve({ stream: 'tool-call.sse', cutAfter: 2 });
      await rejectsWithModelError(modelFor(server).respond(request()), /broke off/);
    });

    it('connection refused: could not reach the endpoint', async () => {
      const baseURL = `http://127.0.0.1:${await closedPort()}/v1`;
      await rejectsWithModelError(modelFor(baseURL).respond(request()), new RegExp(`could not reach ${baseURL.replace(/\./g, '\\.')}: .*ECONNREFUSED`));
    });

    it('a server that never answers: a timeout after timeoutMs', async () => {
      const server = await serve({ hang: true });
      const started = Date.now();
      await rejectsWithModelError(modelFor(server, { timeoutMs: 100 }).respond(request()), /did not start answering within 100 ms/, /timed out/);
      assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
    });

    it('a stream that falls silent: a timeout after timeoutMs without a chunk', async () => {
      const server = await serve({ stream: 'tool-call.sse', stallAfter: 2 });
      const started = Date.now();
      await rejectsWithModelError(modelFor(server, { timeoutMs: 150 }).respond(request()), /stopped sending the answer for 150 ms/, /timed out/);
      assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
      await within(server.requests[0]!.closed, 1000, 'closing the stalled connection');
    });

    it('a base URL that is not a URL', () => {
      assert.throws(() => modelFor('api.mistral.ai'), (e: unknown) => e instanceof ModelError && /not a URL/.test(e.message));
    });
  });

  describe('cancellation', () => {
    it('aborting mid-stream rejects promptly with "cancelled" (not a ModelError), and the connection is closed', async () => {
      const server = await serve({ stream: 'tool-call.sse', stallAfter: 2 });
      const controller = new AbortController();
      const pending = modelFor(server, { maxRetries: 2 }).respond(request({ signal: controller.signal }));
      await within(server.stalled(), 2000, 'the first chunks');
      const aborted = Date.now();
      controller.abort();
      await assert.rejects(pending, (error: unknown) => {
        assert.ok(!(error instanceof ModelError), 'a cancellation is not a ModelError');
        assert.equal((error as Error).message, 'cancelled');
        return true;
      });
      assert.ok(Date.now() - aborted < 200, `rejected ${Date.now() - aborted} ms after the abort`);
      await within(server.requests[0]!.closed, 1000, 'closing the connection');
      assert.equal(server.requests[0]!.closedEarly, true);
      assert.equal(server.requests.length, 1, 'no retry');
    });

    it('aborting before the response starts rejects with "cancelled" too', async () => {
      const server = await serve({ hang: true });
      const controller = new AbortController();
      const pending = modelFor(server).respond(request({ signal: controller.signal }));
      setTimeout(() => controller.abort(), 20);
      await assert.rejects(pending, (error: unknown) => {
        assert.ok(!(error instanceof ModelError), 'a cancellation is not a ModelError');
        assert.equal((error as Error).message, 'cancelled');
        return true;
      });
    });
  });

  describe('in the runtime', () => {
    const sessions: Session[] = [];
    afterEach(async () => {
      for (const s of sessions.splice(0)) await s.cancel();
    });

    function priceAgent(model: OpenAICompatibleModel): { agent: Agent; calls: { product: string }[] } {
      const calls: { product: string }[] = [];
      const lookup = tool({ name: 'lookup_price', description: 'The current price of a product.', inputSchema: z.object({ product: z.string() }) }, (input) => {
        calls.push(input);
        return { price: input.product === 'atlas' ? '1,200 EUR' : 'unknown' };
      });
      const agent = new Agent({
        model,
        instructions: 'You answer price questions.',
        tools: [lookup],
        builtins: new Builtins({ subagents: false }),
        permissionPolicy: new PermissionPolicy({ default: 'deny', rules: [PermissionRule({ tools: ['client.lookup_price'], decision: 'allow' })] }),
      });
      return { agent, calls };
    }

    async function run(agent: Agent, prompt: string): Promise<TurnState> {
      const session = await agent.startSession({ workspaceFolder: os.tmpdir() });
      sessions.push(session);
      return session.run(prompt);
    }

    it('Completed after the tool ran with the streamed arguments; its result went back to the model', async () => {
      const server = await serve({ stream: 'tool-call.sse' }, { stream: 'text.sse' });
      const { agent, calls } = priceAgent(modelFor(server));
      const state = await run(agent, 'What does the Atlas cost?');
      assert.ok(state instanceof Completed, `expected Completed, got ${state.type}${state instanceof Failed ? `: ${state.error}` : ''}`);
      assert.equal(state.text, 'It costs 1,200 EUR.');
      assert.deepEqual(calls, [{ product: 'atlas' }]);
      const second = server.requests[1]!.body['messages'] as SentMessage[];
      assert.deepEqual(second.map((m) => m.role), ['system', 'user', 'assistant', 'tool']);
      assert.equal(second[2]!.tool_calls![0]!.id, 'call_k3Yq8ZqkTbN1Wm4sX0aP2dLf');
      assert.equal(second[3]!.tool_call_id, 'call_k3Yq8ZqkTbN1Wm4sX0aP2dLf');
      assert.match(String(second[3]!.content), /1,200 EUR/);
    });

    it('invalid arguments: the tool does not run and the model is told its input was invalid', async () => {
      const server = await serve({ stream: 'invalid-arguments.sse' }, { stream: 'text.sse' });
      const { agent, calls } = priceAgent(modelFor(server));
      const state = await run(agent, 'What does the Atlas cost?');
      assert.ok(state instanceof Completed, `expected Completed, got ${state.type}${state instanceof Failed ? `: ${state.error}` : ''}`);
      assert.deepEqual(calls, []);
      const second = server.requests[1]!.body['messages'] as SentMessage[];
      assert.match(String(second[3]!.content), /invalid input for lookup_price/);
    });

    it('a 401 ends the turn Failed, saying the API key was refused', async () => {
      const server = await serve({ status: 401, json: { error: { message: 'Incorrect API key provided' } } });
      const { agent } = priceAgent(modelFor(server));
      const state = await run(agent, 'What does the Atlas cost?');
      assert.ok(state instanceof Failed, `expected Failed, got ${state.type}`);
      assert.match(state.error, /API key for .* was refused/);
    });
  });
});

describe('providerModelFactory', () => {
  const context = { workspaceFolder: '.', baseFolder: '.' };
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  it('openai-compatible:llama3.1:8b is the model llama3.1:8b (everything after the first colon)', async () => {
    const server = await serve({ stream: 'text.sse' });
    const model = providerModelFactory({ openaiCompatible: { baseURL: server.baseURL, apiKey: 'ollama' } })('openai-compatible:llama3.1:8b', context);
    assert.ok(model instanceof OpenAICompatibleModel, 'an OpenAICompatibleModel');
    assert.equal(model.id, 'openai-compatible:llama3.1:8b');
    assert.equal(model.model, 'llama3.1:8b');
    await model.respond(request());
    assert.equal(server.requests[0]!.body['model'], 'llama3.1:8b');
  });

  it('the base URL defaults to OpenAI', () => {
    const model = providerModelFactory()('openai-compatible:gpt-4o-mini', context) as OpenAICompatibleModel;
    assert.equal(model.baseURL, 'https://api.openai.com/v1');
  });

  it('scripted references go to the scripted model; vscode-lm and unknown providers are ModelErrors', () => {
    const factory = providerModelFactory();
    assert.equal(factory('scripted:default', context).id, 'scripted:default');
    assert.throws(() => factory('vscode-lm:copilot/gpt-4o', context), (e: unknown) => e instanceof ModelError && /runs only inside VS Code/.test(e.message));
    assert.throws(() => factory('anthropic:claude', context), (e: unknown) => e instanceof ModelError && /unknown provider "anthropic"/.test(e.message));
    assert.throws(() => factory('openai-compatible:', context), (e: unknown) => e instanceof ModelError && /name the model/.test(e.message));
  });

  it('openAICompatibleFromEnv: AGENTPOLICY_BASE_URL, AGENTPOLICY_API_KEY, else OPENAI_API_KEY', () => {
    assert.deepEqual(
      { ...openAICompatibleFromEnv({ AGENTPOLICY_BASE_URL: 'http://127.0.0.1:11434/v1', AGENTPOLICY_API_KEY: 'a', OPENAI_API_KEY: 'b' }), apiKeyHint: undefined },
      { baseURL: 'http://127.0.0.1:11434/v1', apiKey: 'a', apiKeyHint: undefined },
    );
    assert.equal(openAICompatibleFromEnv({ OPENAI_API_KEY: 'b' }).apiKey, 'b');
    assert.equal(openAICompatibleFromEnv({}).apiKey, undefined);
    assert.equal(openAICompatibleFromEnv({}).baseURL, undefined);
    // A key meant for OpenAI is never handed to another server.
    assert.equal(openAICompatibleFromEnv({ AGENTPOLICY_BASE_URL: 'https://api.mistral.ai/v1', OPENAI_API_KEY: 'b' }).apiKey, undefined);
    assert.equal(openAICompatibleFromEnv({ AGENTPOLICY_BASE_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'b' }).apiKey, 'b');
  });
});

describe('agentpolicy run with an openai-compatible model', () => {
  let workspace: string;
  const saved = { base: process.env['AGENTPOLICY_BASE_URL'], key: process.env['AGENTPOLICY_API_KEY'] };
  beforeEach(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-openai-'));
    fs.writeFileSync(path.join(workspace, '.agents.jsonc'), JSON.stringify({ agents: [{ name: 'main', model: 'openai-compatible:test-model', instructions: 'Answer briefly.' }] }));
  });
  afterEach(async () => {
    for (const [name, value] of [['AGENTPOLICY_BASE_URL', saved.base], ['AGENTPOLICY_API_KEY', saved.key]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    fs.rmSync(workspace, { recursive: true, force: true });
    for (const s of servers.splice(0)) await s.close();
  });

  async function cli(): Promise<{ code: number; out: string[] }> {
    const out: string[] = [];
    const code = await main(['run', '--prompt', 'What does the Atlas cost?'], { out: (l) => out.push(l), err: (l) => out.push(l), cwd: workspace });
    return { code, out };
  }

  it('reads the endpoint and key from the environment and completes', async () => {
    const server = await serve({ stream: 'text.sse' });
    process.env['AGENTPOLICY_BASE_URL'] = server.baseURL;
    process.env['AGENTPOLICY_API_KEY'] = 'sk-from-env';
    const r = await cli();
    assert.equal(r.code, 0, r.out.join('\n'));
    assert.equal(r.out.at(-1), 'completed: It costs 1,200 EUR.');
    assert.equal(server.requests[0]!.headers.authorization, 'Bearer sk-from-env');
  });

  it('a refused key fails the run, naming the environment variable', async () => {
    const server = await serve({ status: 401, json: { error: { message: 'Incorrect API key provided' } } });
    process.env['AGENTPOLICY_BASE_URL'] = server.baseURL;
    process.env['AGENTPOLICY_API_KEY'] = 'sk-wrong';
    const r = await cli();
    assert.equal(r.code, 1);
    assert.match(r.out.at(-1)!, /^failed: openai-compatible:test-model: the API key for http:\/\/127\.0\.0\.1:\d+\/v1 was refused .*AGENTPOLICY_API_KEY/);
  });
});
