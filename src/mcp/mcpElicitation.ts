// Elicitation: a server asking a person for input while one of its tools runs. Only flat forms
// (primitive fields) are shown, through the running call that can ask a person; only the form's
// own fields go back.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CancelledNotificationSchema, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { isObject } from '../runtime/model/model.js';
import type { ElicitationField, ElicitationSchema, ToolRunContext } from '../runtime/tools/tools.js';

/** A tool call in progress, as an elicitation sees it: whether it can ask a person, and its clock to stop while they answer. */
export interface RunningCall {
  context: ToolRunContext;
  pause(): void;
  resume(): void;
}

/** Who answers a server's elicitations: its source, the calls running on its connection, and the log. */
export interface ElicitationAsker {
  source: { id: string; name: string };
  running: ReadonlySet<RunningCall>;
  log(line: string): void;
}

type Answer = (params: Record<string, unknown>, signal: AbortSignal) => Promise<ElicitResult>;

/** Has `answer` answer the elicitation requests `client` receives, each with a signal of its end. */
export function handleElicitations(client: Client, answer: Answer): void {
  // An elicitation ends when the server gives up on it (notifications/cancelled, e.g. its own
  // request timeout) or the connection closes (extra.signal). The SDK's own cancellation handler
  // ignores request id 0 (typescript-sdk#2283), the id of a server's first request: this one
  // replaces it. (The client's other request handler, ping, answers at once.)
  const elicitations = new Map<string | number, AbortController>();
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const ended = new AbortController();
    const onClose = (): void => ended.abort(extra.signal.reason);
    if (extra.signal.aborted) onClose();
    else extra.signal.addEventListener('abort', onClose, { once: true });
    elicitations.set(extra.requestId, ended);
    try {
      return await answer(request.params, ended.signal);
    } finally {
      elicitations.delete(extra.requestId);
      extra.signal.removeEventListener('abort', onClose);
    }
  });
  client.setNotificationHandler(CancelledNotificationSchema, (notification) => {
    const id = notification.params.requestId;
    if (id === undefined) return;
    const reason = typeof notification.params.reason === 'string' ? `: ${notification.params.reason}` : '';
    elicitations.get(id)?.abort(new Error(`the server cancelled the request${reason}`));
  });
}

/** One elicitation, asked of a person through a running call; declined when none can ask or the form is not flat. */
export async function elicit(asker: ElicitationAsker, params: Record<string, unknown>, signal: AbortSignal): Promise<ElicitResult> {
  if (signal.aborted) return { action: 'cancel' };
  if (params.mode === 'url') {
    asker.log('declined a URL elicitation (not supported)');
    return { action: 'decline' };
  }
  // The server asks on behalf of a call it is running, but the request does not say which: the
  // latest running call that can ask a person answers (a best guess with several calls at once).
  const running = [...asker.running].reverse().find((r) => r.context.elicit !== undefined);
  if (running === undefined) {
    asker.log('declined an elicitation: no running call of this connection can ask a person');
    return { action: 'decline' };
  }
  const schema = flatSchema(params.requestedSchema);
  if (schema === undefined) {
    asker.log('declined an elicitation whose form is not flat (a required field is not a string, number, integer or boolean)');
    return { action: 'decline' };
  }
  running.pause();
  try {
    // The signal closes the person's callback when the server stops waiting for the answer.
    const answer = await running.context.elicit!({
      source: { id: asker.source.id, name: asker.source.name },
      message: typeof params.message === 'string' ? params.message : '',
      requestedSchema: schema,
    }, { signal });
    if (signal.aborted) return { action: 'cancel' };
    if (answer.action === 'accept') return { action: 'accept', content: acceptedContent(answer.content, schema) };
    return { action: answer.action };
  } catch (error) {
    asker.log(`an elicitation could not be asked: ${(error as Error).message}`);
    return { action: 'cancel' };
  } finally {
    running.resume();
  }
}

const FIELD_TYPES = ['string', 'number', 'integer', 'boolean'] as const;

/**
 * The form a person can be shown: primitive fields only. A field that is not one (a multi-select
 * list, a nested object) is left out when optional; when required, the request is declined.
 */
export function flatSchema(schema: unknown): ElicitationSchema | undefined {
  if (!isObject(schema) || schema.type !== 'object' || !isObject(schema.properties)) return undefined;
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  const properties: Record<string, ElicitationField> = {};
  for (const [key, raw] of Object.entries(schema.properties)) {
    const field = flatField(raw);
    if (field !== undefined) properties[key] = field;
    else if (required.includes(key)) return undefined;
  }
  const kept = required.filter((k) => k in properties);
  return { type: 'object', properties, ...(kept.length > 0 ? { required: kept } : {}) };
}

function flatField(raw: unknown): ElicitationField | undefined {
  if (!isObject(raw)) return undefined;
  const type = raw.type;
  if (!(FIELD_TYPES as readonly unknown[]).includes(type) || 'properties' in raw || 'items' in raw) return undefined;
  const field: ElicitationField = { type: type as ElicitationField['type'] };
  for (const key of ['title', 'description', 'format'] as const) if (typeof raw[key] === 'string') field[key] = raw[key];
  for (const key of ['minLength', 'maxLength', 'minimum', 'maximum'] as const) if (typeof raw[key] === 'number') field[key] = raw[key];
  if (['string', 'number', 'boolean'].includes(typeof raw.default)) field.default = raw.default;
  if (raw.enum !== undefined) {
    if (type !== 'string' || !Array.isArray(raw.enum) || !raw.enum.every((v) => typeof v === 'string')) return undefined;
    field.enum = raw.enum as string[];
    if (Array.isArray(raw.enumNames) && raw.enumNames.every((v) => typeof v === 'string')) field.enumNames = raw.enumNames as string[];
  } else if (raw.oneOf !== undefined) {
    // A titled single select: the same choice as enum with enumNames.
    if (type !== 'string' || !Array.isArray(raw.oneOf)) return undefined;
    const options = raw.oneOf.filter((o): o is { const: string; title?: unknown } => isObject(o) && typeof o.const === 'string');
    if (options.length !== raw.oneOf.length || options.length === 0) return undefined;
    field.enum = options.map((o) => o.const);
    field.enumNames = options.map((o) => (typeof o.title === 'string' ? o.title : o.const));
  }
  return field;
}

/** Only the form's own fields, with values of a form's types, go back to the server. */
function acceptedContent(content: Record<string, unknown>, schema: ElicitationSchema): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(content ?? {})) {
    if (!(key in schema.properties)) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = value;
  }
  return out;
}
