// What the runtime asks of a model: given the conversation so far and the tools, the next
// move (text, or tool calls). Providers (scripted, OpenAI-compatible, VS Code LM) implement it.

export interface ModelToolCall {
  /** The provider's id for this call, echoed back with its result. */
  id: string;
  /** The name the model used (the runtime maps it to a stable tool id). */
  name: string;
  input: unknown;
}

export type Message =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls: ModelToolCall[] }
  | { role: 'tool'; callId: string; name: string; content: string };

export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  /** The agent or subagent name. */
  agent: string;
  sessionId: string;
  instructions: string;
  messages: readonly Message[];
  tools: readonly ModelToolSpec[];
  signal: AbortSignal;
}

export interface ModelResponse {
  text: string;
  /** Empty: the turn ends with `text`. */
  toolCalls: ModelToolCall[];
}

export interface Model {
  /** A provider reference, e.g. `scripted:demo.jsonc`. */
  readonly id: string;
  respond(request: ModelRequest): Promise<ModelResponse>;
}

/** An error a person can act on (bad key, unknown model, rate limit): ends the turn as Failed with this text. */
export class ModelError extends Error {
  override name = 'ModelError';
}

/** A JSON object (not an array, not null): what a tool call's input must be. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The error a model call rejects with when its request's signal aborts it. */
export function cancelled(): Error {
  const error = new Error('cancelled');
  error.name = 'AbortError';
  return error;
}

/**
 * A tool's input schema as sent to a model: zod's `$schema` line tells it nothing and costs tokens
 * on every request. Stripped where tools are made; the providers apply it too, for a schema given
 * to them directly (it returns the schema itself when there is no `$schema`).
 */
export function withoutSchemaUri(schema: Record<string, unknown>): Record<string, unknown> {
  if (!('$schema' in schema)) return schema;
  const { $schema: _, ...rest } = schema;
  return rest;
}
