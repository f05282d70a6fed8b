// A model behind any server that speaks OpenAI's chat-completions API (OpenAI, Mistral, Ollama,
// vLLM, LM Studio…), streamed through the `openai` client. Decisions: docs/model-providers.md.
import { createHash, randomBytes } from 'node:crypto';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionChunk, ChatCompletionFunctionTool, ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { cancelled, isObject, ModelError, withoutSchemaUri, type Message, type Model, type ModelRequest, type ModelResponse, type ModelToolCall } from '../model/model.js';
import { originOf } from './endpoints.js';

export type ToolCallIdStyle = 'any' | 'mistral';

export interface OpenAICompatibleOptions {
  /** The API root, e.g. `https://api.mistral.ai/v1` (the client appends `/chat/completions`). */
  baseURL: string;
  /** The model name the server knows, e.g. `mistral-large-latest`. */
  model: string;
  /** The key, or a getter awaited before each request (e.g. from VS Code's SecretStorage). */
  apiKey?: string | (() => Promise<string | undefined>);
  /** How a person sets the key, ending the message of a refused key. Default: the VS Code command. */
  apiKeyHint?: string;
  /** Per attempt: how long to wait for the response to start, and the longest silence within the stream. Default 120000. */
  timeoutMs?: number;
  /** Retries of the `openai` client (429, 408, 409, 5xx, connection errors), before any content arrived. Default 2. */
  maxRetries?: number;
  /** `mistral`: tool call ids sent are 9 letters or digits. Default: `mistral` when the host ends with `mistral.ai`. */
  toolCallIds?: ToolCallIdStyle;
  /** A fetch of your own (a proxy-aware one, say). Default: the global fetch. */
  fetch?: typeof fetch;
}

export const DEFAULT_API_KEY_HINT = "set it with the command 'Agent Policy: Set API Key'";

/** Sent when no key is set: the client needs one, and local servers (Ollama) accept any. */
const NO_KEY = 'no-key-set';
const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export class OpenAICompatibleModel implements Model {
  readonly id: string;
  readonly baseURL: string;
  readonly model: string;
  readonly toolCallIds: ToolCallIdStyle;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly shownURL: string;
  private client: { key: string; client: OpenAI } | undefined;

  constructor(private readonly options: OpenAICompatibleOptions) {
    try {
      originOf(options.baseURL);
    } catch (error) {
      throw new ModelError(`the base URL ${error instanceof Error ? error.message : String(error)}`);
    }
    // originOf parsed it as an http(s) URL.
    const url = new URL(options.baseURL.trim());
    if (!options.model) throw new ModelError(`no model name for ${options.baseURL}: write the reference as openai-compatible:<model>`);
    this.baseURL = options.baseURL.replace(/\/+$/, '');
    this.model = options.model;
    this.id = `openai-compatible:${options.model}`;
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.toolCallIds = options.toolCallIds ?? (isMistralHost(url.hostname) ? 'mistral' : 'any');
    url.username = '';
    url.password = '';
    this.shownURL = url.href.replace(/\/+$/, '');
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    if (request.signal.aborted) throw cancelled();
    let key: string | undefined;
    try {
      key = typeof this.options.apiKey === 'function' ? await this.options.apiKey() : this.options.apiKey;
    } catch (error) {
      throw this.error(`could not read the API key for ${this.shownURL}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (request.signal.aborted) throw cancelled();
    const client = this.clientFor(key || undefined);
    const ids = this.toolCallIds === 'mistral' ? mistralIdMap(request.messages) : undefined;
    const tools = request.tools.map((t): ChatCompletionFunctionTool => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: withoutSchemaUri(t.inputSchema) },
    }));

    let idle: ReturnType<typeof setTimeout> | undefined;
    let stalled = false;
    try {
      // No tool_choice ('auto' is every server's default; Ollama ignores it) and no
      // parallel_tool_calls (OpenAI rejects it without tools, and some of its models reject it at all).
      const stream = await client.chat.completions.create(
        {
          model: this.model,
          messages: chatMessages(request, ids ? (id) => ids.get(id) ?? id : (id) => id),
          ...(tools.length > 0 ? { tools } : {}),
          stream: true,
        },
        { signal: request.signal },
      );
      // The client's timeout ends when the response starts; a stream that falls silent is ended here.
      const watch = (): void => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          stalled = true;
          stream.controller.abort();
        }, this.timeoutMs);
      };
      watch();
      const answer = new StreamedAnswer();
      for await (const chunk of stream) {
        watch();
        answer.add(chunk);
      }
      // The client ends the iteration quietly when its request is aborted, by us or by the caller.
      if (request.signal.aborted) throw cancelled();
      if (stalled) throw this.error(`${this.shownURL} stopped sending the answer for ${duration(this.timeoutMs)}: the stream timed out`);
      return answer.response(this.toolCallIds);
    } catch (error) {
      if (request.signal.aborted || error instanceof APIUserAbortError) throw cancelled();
      if (error instanceof ModelError) throw error;
      throw this.explain(error, key !== undefined && key !== '');
    } finally {
      clearTimeout(idle);
    }
  }

  private clientFor(key: string | undefined): OpenAI {
    const k = key ?? NO_KEY;
    if (this.client?.key !== k) {
      this.client = {
        key: k,
        client: new OpenAI({
          baseURL: this.baseURL,
          apiKey: k,
          // Explicit, so that OPENAI_* variables meant for OpenAI never reach another server.
          adminAPIKey: null,
          organization: null,
          project: null,
          maxRetries: this.maxRetries,
          timeout: this.timeoutMs,
          // Failures reach the person as ModelErrors; the client's own console lines would be noise.
          logLevel: 'off',
          ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
        }),
      };
    }
    return this.client.client;
  }

  private error(message: string): ModelError {
    return new ModelError(`${this.id}: ${message}`);
  }

  /** Turns what the client threw into a message a person can act on. */
  private explain(error: unknown, keySet: boolean): ModelError {
    const url = this.shownURL;
    // The client retried 408, 409, 429, 5xx, timeouts and connection errors before giving up.
    const tries = this.maxRetries > 0 ? ` (${this.maxRetries + 1} attempts)` : '';
    if (error instanceof SyntaxError) {
      return this.error(`the server at ${url} sent a malformed stream chunk (not JSON); the answer was dropped`);
    }
    if (error instanceof APIConnectionTimeoutError) {
      return this.error(`${url} did not start answering within ${duration(this.timeoutMs)}${tries}: the request timed out`);
    }
    if (error instanceof APIConnectionError) {
      return this.error(`could not reach ${url}${tries}: ${rootCause(error)}`);
    }
    if (error instanceof APIError) {
      const said = serverMessage(error);
      const status = error.status;
      if (status === undefined) return this.error(`${url} reported an error while streaming the answer: ${said || 'no details'}`);
      const code = said ? `${status}: ${said}` : String(status);
      const hint = this.options.apiKeyHint ?? DEFAULT_API_KEY_HINT;
      if (status === 401 || status === 403) {
        return this.error(keySet
          ? `the API key for ${url} was refused (${code}): ${hint}`
          : `${url} needs an API key and none is set (${code}): ${hint}`);
      }
      if (status === 404) {
        return this.error(`model "${this.model}" was not found at ${url} (${code}): check the model name, and that the base URL is the API root (usually ending in /v1)`);
      }
      if (status === 429) {
        const wait = retryAfterMs(error.headers);
        return this.error(`${url} rate limited the request (${code})${tries}${wait !== undefined ? `; it asks to wait ${duration(wait)} before trying again` : ''}`);
      }
      if (status >= 500) return this.error(`${url} failed with a server error (${code})${tries}`);
      return this.error(`${url} rejected the request (${code})`);
    }
    const message = error instanceof Error ? rootCause(error) : String(error);
    return this.error(`the answer from ${url} broke off: ${message}`);
  }
}

/** Tool calls and text as they arrive, merged. */
class StreamedAnswer {
  private text = '';
  private readonly calls: { id: string; name: string; args: string }[] = [];
  private readonly byIndex = new Map<number, { id: string; name: string; args: string }>();

  add(chunk: ChatCompletionChunk): void {
    const choice = chunk.choices?.[0];
    if (!choice?.delta) return;
    const delta = choice.delta;
    if (typeof delta.content === 'string') this.text += delta.content;
    if (typeof delta.refusal === 'string') this.text += delta.refusal;
    for (const part of delta.tool_calls ?? []) {
      const index = typeof part.index === 'number' ? part.index : undefined;
      let call = index !== undefined ? this.byIndex.get(index) : part.id ? undefined : this.calls.at(-1);
      // Ollama gives every call index 0, each whole in one delta: a new id is a new call.
      if (call && part.id && call.id && part.id !== call.id) call = undefined;
      if (!call) {
        call = { id: '', name: '', args: '' };
        this.calls.push(call);
      }
      if (index !== undefined) this.byIndex.set(index, call);
      if (part.id && !call.id) call.id = part.id;
      if (part.function?.name && !call.name) call.name = part.function.name;
      const args: unknown = part.function?.arguments;
      if (typeof args === 'string') call.args += args;
      else if (args !== undefined && args !== null) call.args += JSON.stringify(args);
    }
  }

  response(style: ToolCallIdStyle): ModelResponse {
    const toolCalls = this.calls.map((c): ModelToolCall => ({ id: c.id || newCallId(style), name: c.name, input: parseArguments(c.args) }));
    return { text: this.text, toolCalls };
  }
}

/** Arguments that are not JSON stay the raw text: the runtime's input check rejects it and tells the model. */
function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function chatMessages(request: ModelRequest, id: (original: string) => string): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (request.instructions.trim() !== '') out.push({ role: 'system', content: request.instructions });
  for (const m of request.messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'tool') out.push({ role: 'tool', tool_call_id: id(m.callId), content: m.content });
    else if (m.toolCalls.length === 0) out.push({ role: 'assistant', content: m.content });
    else {
      out.push({
        role: 'assistant',
        content: m.content === '' ? null : m.content,
        tool_calls: m.toolCalls.map((c) => ({
          id: id(c.id),
          type: 'function' as const,
          // Input that was not an object (invalid arguments, kept raw) goes back as {}: Ollama rejects history whose arguments are not a JSON object.
          function: { name: c.name, arguments: isObject(c.input) ? JSON.stringify(c.input) : '{}' },
        })),
      });
    }
  }
  return out;
}

/**
 * Mistral accepts only ids of 9 letters or digits. Others (the scripted model's, OpenAI's) get
 * one derived from a hash, so the same id maps the same way in every request; ids already valid
 * are kept and never taken by a mapped one.
 */
function mistralIdMap(messages: readonly Message[]): Map<string, string> {
  const ids: string[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') for (const c of m.toolCalls) ids.push(c.id);
    else if (m.role === 'tool') ids.push(m.callId);
  }
  const taken = new Set(ids.filter((i) => MISTRAL_ID.test(i)));
  const map = new Map<string, string>();
  for (const original of ids) {
    if (map.has(original)) continue;
    if (MISTRAL_ID.test(original)) {
      map.set(original, original);
      continue;
    }
    let mapped = base62Hash(original);
    for (let n = 1; taken.has(mapped); n++) mapped = base62Hash(`${original}\u0000${n}`);
    taken.add(mapped);
    map.set(original, mapped);
  }
  return map;
}

function base62Hash(text: string): string {
  const digest = createHash('sha256').update(text).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += BASE62[digest[i]! % 62];
  return out;
}

function newCallId(style: ToolCallIdStyle): string {
  const bytes = randomBytes(16);
  let out = '';
  for (let i = 0; i < (style === 'mistral' ? 9 : 16); i++) out += BASE62[bytes[i]! % 62];
  return style === 'mistral' ? out : `call_${out}`;
}

function isMistralHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'mistral.ai' || host.endsWith('.mistral.ai');
}


function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 100) / 10} s`;
}

function serverMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  if (body && typeof body === 'object' && body.message !== undefined) {
    return typeof body.message === 'string' ? body.message : JSON.stringify(body.message);
  }
  // The client's own text when the body said nothing: "404 status code (no body)".
  return /status code \(no body\)$/.test(error.message) ? '' : error.message.replace(/^\d{3} /, '');
}

/** The innermost cause, e.g. `connect ECONNREFUSED 127.0.0.1:9` rather than `fetch failed`. */
function rootCause(error: Error): string {
  let message = error.message;
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current && typeof current === 'object'; depth++) {
    const e = current as { message?: unknown; code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof e.message === 'string' && e.message) message = e.message;
    else if (typeof e.code === 'string') message = e.code;
    // Node's happy eyeballs (localhost as ::1 and 127.0.0.1) fails with an AggregateError of both.
    current = e.cause ?? (Array.isArray(e.errors) ? e.errors[0] : undefined);
  }
  return message;
}

/** What retry-after-ms or retry-after (seconds or a date) asks for. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  if (Number.isFinite(Number(value))) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
