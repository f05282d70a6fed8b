// The scripted model: the embedded default model. Deterministic and offline, it plays a
// scenario file, a list of moves per agent name, so sessions, subagents and approvals can be
// run and tested without a provider.
//
// A session's position in its list is the number of assistant messages already in the
// conversation: every response this model gave in the session is one assistant message, so a
// second turn continues after the first turn's `say`. Subagents play the script of their
// subagent name, each session from the start with its own task.
//
// Moves are numbered from 1 in messages ("move 3"); call ids use the 0-based position
// (`call_main_2_0` is the first call of move 3 of agent main).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { findNodeAtOffset, getNodePath, type Node } from 'jsonc-parser';
import { z } from 'zod';
import { LineMap, type Diagnostic } from '../../policy/file/diagnostics.js';
import { nearest, parseJsoncWithSchema } from '../../policy/file/parse.js';
import { ModelError, type Message, type Model, type ModelRequest, type ModelResponse, type ModelToolCall } from './model.js';

// ---------------------------------------------------------------------------------------------
// The scenario format

/** A call to `spawn_agent` {agent, task}. */
export interface SpawnMove { spawn: string; task: string; as?: string }
/** A call to any tool by its model-facing name. */
export interface CallMove { call: string; input?: Record<string, unknown>; as?: string }
/** A call to `wait_agents`: `{}` for "all", else `{ids}`. */
export interface WaitMove { wait: 'all' | string[]; as?: string }
/** A call to `message_agent` {id, message}. */
export interface MessageMove { message: string; text: string; as?: string }
/** A call to `interrupt_agent` {id}. */
export interface InterruptMove { interrupt: string; as?: string }
export type ToolMove = SpawnMove | CallMove | WaitMove | MessageMove | InterruptMove;
/** Several calls in one response; `as` goes on each inner call. */
export interface ParallelMove { parallel: ToolMove[] }
/** Final text: ends the turn. */
export interface SayMove { say: string }
export type Move = ToolMove | ParallelMove | SayMove;

export interface Scenario {
  $schema?: string;
  /** Moves per agent or subagent name. */
  agents: Record<string, Move[]>;
}

/** Template roots that are always there (an `as` name cannot take them). */
const BUILTIN_ROOTS = ['task', 'prompt', 'results', 'last'] as const;

type KindName = 'spawn' | 'call' | 'wait' | 'message' | 'interrupt' | 'parallel' | 'say';

/** Each kind of move, with the fields that go with it. */
const KINDS: Record<KindName, { required: readonly string[]; optional: readonly string[] }> = {
  spawn: { required: ['task'], optional: ['as'] },
  call: { required: [], optional: ['input', 'as'] },
  wait: { required: [], optional: ['as'] },
  message: { required: ['text'], optional: ['as'] },
  interrupt: { required: [], optional: ['as'] },
  parallel: { required: [], optional: [] },
  say: { required: [], optional: [] },
};
const KIND_NAMES = Object.keys(KINDS) as KindName[];
const ROOT_KEYS = ['$schema', 'agents'];
const MOVE_KEYS = ['spawn', 'task', 'call', 'input', 'wait', 'message', 'text', 'interrupt', 'as', 'parallel', 'say'];
/** What a person may write inside `parallel` (for "did you mean" hints). */
const PARALLEL_KEYS = MOVE_KEYS.filter((k) => k !== 'parallel' && k !== 'say');

const AGENT_NAME = /^[A-Za-z0-9_.-]+$/;

const nonEmpty = z.string().regex(/\S/, 'must not be empty');
const asName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an "as" name is letters, digits and "_", and does not start with a digit')
  .refine((n) => !(BUILTIN_ROOTS as readonly string[]).includes(n), {
    message: `an "as" name cannot be ${BUILTIN_ROOTS.map((r) => `"${r}"`).join(', ')} (they are built in)`,
  });

const fields = {
  spawn: nonEmpty.optional(),
  task: z.string().optional(),
  call: nonEmpty.optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  wait: z.unknown().optional(),
  message: z.string().optional(),
  text: z.string().optional(),
  interrupt: z.string().optional(),
  as: asName.optional(),
  say: z.string().optional(),
};

type RefineContext = z.core.$RefinementCtx<Record<string, unknown>>;

function checkMove(move: Record<string, unknown>, ctx: RefineContext, inParallel: boolean): void {
  const keys = Object.keys(move).filter((k) => move[k] !== undefined);
  const unknown = keys.filter((k) => !MOVE_KEYS.includes(k));
  if (unknown.length > 0) {
    // Reported like a strict object's, so it is positioned at the key and gets a hint.
    ctx.addIssue({ code: 'unrecognized_keys', keys: unknown, input: move, message: `unknown field ${unknown.map((k) => `"${k}"`).join(', ')}` });
    return;
  }
  const kinds = keys.filter((k): k is KindName => (KIND_NAMES as string[]).includes(k));
  const allowedKinds = inParallel ? KIND_NAMES.filter((k) => k !== 'parallel' && k !== 'say') : KIND_NAMES;
  if (kinds.length === 0) {
    ctx.addIssue({ code: 'custom', input: move, message: `a move needs one of ${orList(allowedKinds)}` });
    return;
  }
  if (kinds.length > 1) {
    ctx.addIssue({ code: 'custom', input: move, path: [kinds[1]!], message: `a move is one thing; this one has both "${kinds[0]}" and "${kinds[1]}"` });
    return;
  }
  const kind = kinds[0]!;
  if (inParallel && (kind === 'say' || kind === 'parallel')) {
    ctx.addIssue({ code: 'custom', input: move, path: [kind], message: `"${kind}" cannot be inside "parallel", which holds tool calls only` });
    return;
  }
  for (const required of KINDS[kind].required) {
    if (!keys.includes(required)) ctx.addIssue({ code: 'custom', input: move, message: `a "${kind}" move needs "${required}"` });
  }
  for (const key of keys) {
    if (key === kind || KINDS[kind].optional.includes(key) || KINDS[kind].required.includes(key)) continue;
    const owners = KIND_NAMES.filter((k) => KINDS[k].required.includes(key) || KINDS[k].optional.includes(key));
    const owner = owners.length === 1 ? owners[0] : undefined;
    const hint = key === 'as' && kind === 'parallel' ? '; put "as" on each call inside "parallel"' : owner ? `; it goes with "${owner}"` : '';
    ctx.addIssue({ code: 'custom', input: move, path: [key], message: `"${key}" does not go with "${kind}"${hint}` });
  }
  if (kind === 'wait') {
    const wait = move.wait;
    if (wait !== 'all' && !(Array.isArray(wait) && wait.every((id) => typeof id === 'string'))) {
      ctx.addIssue({ code: 'custom', input: move, path: ['wait'], message: 'expected "all" or a list of agent ids' });
    }
  }
}

const ParallelItemSchema = z
  .looseObject({ ...fields, parallel: z.unknown().optional() })
  .superRefine((move, ctx) => checkMove(move, ctx, true))
  .transform((move) => move as unknown as ToolMove);

const MoveSchema = z
  .looseObject({ ...fields, parallel: z.array(ParallelItemSchema).min(1).optional() })
  .superRefine((move, ctx) => checkMove(move, ctx, false))
  .transform((move) => move as unknown as Move);

export const ScenarioSchema: z.ZodType<Scenario> = z
  .strictObject({
    $schema: z.string().optional(),
    agents: z.record(z.string(), z.array(MoveSchema).min(1)),
  })
  .superRefine((scenario, ctx) => {
    const names = Object.keys(scenario.agents);
    if (names.length === 0) ctx.addIssue({ code: 'custom', input: scenario, path: ['agents'], message: 'the scenario has no agents' });
    for (const name of names) {
      if (!AGENT_NAME.test(name)) {
        ctx.addIssue({ code: 'custom', input: scenario, path: ['agents', name], message: `agent name "${name}" must be letters, digits, "_", "." or "-"` });
      }
      checkTemplates(name, scenario.agents[name]!, ctx);
    }
  });

/**
 * Every template must start at a name that can exist when its move is played: a built-in root
 * or the `as` of an earlier move. (Whether the rest of the path exists is known only at run time.)
 */
function checkTemplates(agent: string, moves: readonly Move[], ctx: z.core.$RefinementCtx<unknown>): void {
  const bound = new Map<string, number>();
  moves.forEach((move, index) => {
    for (const { path, text } of templateStrings(move, [])) {
      for (const template of findTemplates(text)) {
        const at = ['agents', agent, index, ...path];
        const segments = splitPath(template.path);
        if (segments === undefined) {
          ctx.addIssue({ code: 'custom', input: text, path: at, message: `malformed template "${template.source}"` });
          continue;
        }
        const root = segments[0]!;
        if ((BUILTIN_ROOTS as readonly string[]).includes(root) || bound.has(root)) continue;
        const known = [...BUILTIN_ROOTS, ...bound.keys()];
        const namedLater = moveNames(moves.slice(index)).has(root);
        const why = namedLater ? ` ("${root}" is named by this or a later move)` : '';
        const suggestion = nearest(root, known);
        const hint = suggestion ? `; did you mean "${suggestion}"?` : `; known: ${known.join(', ')}`;
        ctx.addIssue({ code: 'custom', input: text, path: at, message: `unknown name "${root}" in template "${template.source}"${why}${hint}` });
      }
    }
    for (const name of moveNames([move])) {
      const first = bound.get(name);
      if (first !== undefined) {
        ctx.addIssue({ code: 'custom', input: move, path: ['agents', agent, index], message: `"as" name "${name}" is already used by move ${first + 1}` });
      } else {
        bound.set(name, index);
      }
    }
  });
}

/** The `as` names a list of moves binds. */
function moveNames(moves: readonly Move[]): Set<string> {
  const names = new Set<string>();
  for (const move of moves) {
    const calls = 'parallel' in move ? move.parallel : 'say' in move ? [] : [move];
    for (const call of calls) if (call.as !== undefined) names.add(call.as);
  }
  return names;
}

/** The strings of a move that templates are substituted in, with their paths inside the move. */
function templateStrings(move: Move | ToolMove, prefix: (string | number)[]): { path: (string | number)[]; text: string }[] {
  const out: { path: (string | number)[]; text: string }[] = [];
  const walk = (value: unknown, path: (string | number)[]): void => {
    if (typeof value === 'string') out.push({ path, text: value });
    else if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, i]));
    else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
  };
  for (const [key, value] of Object.entries(move)) {
    if (key === 'as' || key === 'call') continue; // names, not text
    if (key === 'parallel' && Array.isArray(value)) {
      value.forEach((inner: ToolMove, i) => out.push(...templateStrings(inner, [...prefix, 'parallel', i])));
      continue;
    }
    walk(value, [...prefix, key]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Templates

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE_TEMPLATE = /^\{\{\s*([^{}]*?)\s*\}\}$/;

function findTemplates(text: string): { source: string; path: string }[] {
  return [...text.matchAll(TEMPLATE)].map((m) => ({ source: m[0], path: m[1]! }));
}

function splitPath(path: string): string[] | undefined {
  const segments = path.split('.');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(segments[0]!)) return undefined;
  return segments.every((s) => s.length > 0 && !/\s/.test(s)) ? segments : undefined;
}

/** Thrown while resolving; turned into a ModelError naming the agent and the move. */
class TemplateError extends Error {}

/** The values templates can use, worked out at the first template: most moves have none. */
type Scope = () => ReadonlyMap<string, unknown>;

function resolve(path: string, lazyScope: Scope): unknown {
  const scope = lazyScope();
  const segments = splitPath(path);
  if (segments === undefined) throw new TemplateError(`malformed template path "${path}"`);
  const [root, ...rest] = segments as [string, ...string[]];
  if (!scope.has(root)) {
    const known = [...scope.keys()];
    const why = root === 'last' ? 'there is no tool result yet'
      : root === 'task' || root === 'prompt' ? 'the session has no user message'
      : `no value is named "${root}" yet${known.length > 0 ? ` (there are ${known.join(', ')})` : ''}`;
    throw new TemplateError(`unknown template path "${path}": ${why}`);
  }
  let value = scope.get(root);
  let at = root;
  for (const segment of rest) {
    if (Array.isArray(value)) {
      if (!/^\d+$/.test(segment)) throw new TemplateError(`unknown template path "${path}": "${at}" is a list, so "${segment}" must be an index`);
      const index = Number(segment);
      if (index >= value.length) throw new TemplateError(`unknown template path "${path}": "${at}" has ${value.length} item${value.length === 1 ? '' : 's'}`);
      value = value[index];
    } else if (value !== null && typeof value === 'object') {
      if (!Object.hasOwn(value, segment)) {
        const keys = Object.keys(value);
        const suggestion = nearest(segment, keys);
        const hint = suggestion ? `; did you mean "${suggestion}"?` : keys.length > 0 ? ` (it has ${keys.join(', ')})` : ' (it is empty)';
        throw new TemplateError(`unknown template path "${path}": "${at}" has no field "${segment}"${hint}`);
      }
      value = (value as Record<string, unknown>)[segment];
    } else {
      throw new TemplateError(`unknown template path "${path}": "${at}" is ${describe(value)}, not an object or a list`);
    }
    at = `${at}.${segment}`;
  }
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `a ${typeof value}`;
}

function stringify(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? 'null';
}

/** A string with templates in it: always a string. */
function substituteText(text: string, scope: Scope): string {
  return text.replace(TEMPLATE, (_, path: string) => stringify(resolve(path, scope)));
}

/** A value with templates in its strings; a string that is exactly one template keeps the value's JSON type. */
function substituteValue(value: unknown, scope: Scope): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE_TEMPLATE.exec(value);
    return whole ? resolve(whole[1]!, scope) : substituteText(value, scope);
  }
  if (Array.isArray(value)) return value.map((v) => substituteValue(v, scope));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteValue(v, scope)]));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// The model

/** A move ready to play: final text, or tool calls (inputs still hold templates). */
type Step =
  | { kind: 'say'; label: string; text: string }
  | { kind: 'calls'; label: string; calls: { name: string; input: unknown; as?: string }[] };

function toCall(move: ToolMove): { name: string; input: unknown; as?: string; label: string } {
  const as = move.as !== undefined ? { as: move.as } : {};
  if ('spawn' in move) return { name: 'spawn_agent', input: { agent: move.spawn, task: move.task }, ...as, label: `spawn ${move.spawn}` };
  if ('call' in move) return { name: move.call, input: move.input ?? {}, ...as, label: `call ${move.call}` };
  if ('wait' in move) return { name: 'wait_agents', input: move.wait === 'all' ? {} : { ids: move.wait }, ...as, label: 'wait' };
  if ('message' in move) return { name: 'message_agent', input: { id: move.message, message: move.text }, ...as, label: 'message' };
  return { name: 'interrupt_agent', input: { id: move.interrupt }, ...as, label: 'interrupt' };
}

function toStep(move: Move): Step {
  if ('say' in move) return { kind: 'say', label: 'say', text: move.say };
  if ('parallel' in move) {
    return { kind: 'calls', label: 'parallel', calls: move.parallel.map((m) => { const { label: _, ...call } = toCall(m); return call; }) };
  }
  const { label, ...call } = toCall(move);
  return { kind: 'calls', label, calls: [call] };
}

export interface ScriptedModelOptions {
  /** Defaults to `scripted:inline` (`scripted:<file basename>` from `parse` and `fromFile`). */
  id?: string;
}

export class ScriptedModel implements Model {
  readonly id: string;
  readonly scenario: Scenario;
  private readonly steps: ReadonlyMap<string, readonly Step[]>;

  /** Throws when the scenario does not fit `ScenarioSchema`. */
  constructor(script: Scenario, options: ScriptedModelOptions = {}) {
    const parsed = ScenarioSchema.safeParse(script);
    if (!parsed.success) {
      const lines = parsed.error.issues.map((i) => `  ${formatPath(i.path)}: ${i.message}`);
      throw new Error(`invalid scenario:\n${lines.join('\n')}`);
    }
    this.scenario = parsed.data;
    this.id = options.id ?? 'scripted:inline';
    this.steps = new Map(Object.entries(parsed.data.agents).map(([agent, moves]) => [agent, moves.map(toStep)]));
  }

  /** JSONC text → a model, or diagnostics with positions. Never throws. */
  static parse(text: string, file: string): { model?: ScriptedModel; diagnostics: Diagnostic[] } {
    const parsed = parseJsoncWithSchema(text, file, ScenarioSchema, { what: 'the scenario file' });
    if (parsed.root) addKeyHints(parsed.diagnostics, parsed.root);
    if (parsed.value === undefined || parsed.diagnostics.length > 0) return { diagnostics: parsed.diagnostics };
    try {
      return { model: new ScriptedModel(parsed.value, { id: `scripted:${basename(file)}` }), diagnostics: [] };
    } catch (error) {
      return { diagnostics: [{ file, severity: 'error', code: 'schema', offset: 0, length: 1, message: (error as Error).message }] };
    }
  }

  /** Reads and parses a scenario file; throws an Error listing `file:line:col message` for each diagnostic. */
  static fromFile(file: string): ScriptedModel {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`cannot read the scenario file ${file}: ${(error as Error).message}`);
    }
    const { model, diagnostics } = ScriptedModel.parse(text, file);
    if (model) return model;
    const lines = new LineMap(text);
    const listed = diagnostics.map((d) => {
      const { line, column } = lines.position(d.offset);
      return `${d.file}:${line}:${column} ${d.message}`;
    });
    throw new Error(`the scenario file ${file} is not valid:\n${listed.join('\n')}`);
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    request.signal.throwIfAborted();
    const { agent, messages } = request;
    const steps = this.steps.get(agent);
    if (steps === undefined) {
      const known = [...this.steps.keys()];
      const suggestion = nearest(agent, known);
      const hint = suggestion ? `; did you mean "${suggestion}"?` : ` (it has ${known.join(', ')})`;
      throw new ModelError(`the scenario ${this.id} has no script for agent ${agent}${hint}`);
    }
    const position = messages.filter((m) => m.role === 'assistant').length;
    const step = steps[position];
    if (step === undefined) {
      throw new ModelError(`the script for agent ${agent} has no move ${position + 1} (it has ${steps.length})`);
    }
    // Building the scope reads the whole conversation: only a move with a template pays for it.
    let built: Map<string, unknown> | undefined;
    const scope: Scope = () => (built ??= buildScope(messages, steps));
    try {
      if (step.kind === 'say') return { text: substituteText(step.text, scope), toolCalls: [] };
      const toolCalls: ModelToolCall[] = step.calls.map((call, i) => ({
        id: `call_${agent}_${position}_${i}`.replace(/[^A-Za-z0-9_]/g, '_'),
        name: call.name,
        input: substituteValue(call.input, scope),
      }));
      return { text: '', toolCalls };
    } catch (error) {
      if (error instanceof TemplateError) {
        throw new ModelError(`the script for agent ${agent}, move ${position + 1} (${step.label}): ${error.message}`);
      }
      throw error;
    }
  }
}

/** The values templates can use, from the conversation so far. */
function buildScope(messages: readonly Message[], steps: readonly Step[]): Map<string, unknown> {
  const scope = new Map<string, unknown>();
  const users = messages.filter((m) => m.role === 'user');
  if (users.length > 0) {
    scope.set('task', users[0]!.content);
    scope.set('prompt', users[users.length - 1]!.content);
  }
  const byCallId = new Map<string, unknown>();
  const results: unknown[] = [];
  for (const m of messages) {
    if (m.role !== 'tool') continue;
    const value = parseResult(m);
    results.push(value);
    byCallId.set(m.callId, value);
  }
  scope.set('results', results);
  if (results.length > 0) scope.set('last', results[results.length - 1]);
  // The k-th assistant message is the response to move k: its i-th call is the move's i-th call.
  let k = 0;
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const step = steps[k++];
    if (step?.kind !== 'calls') continue;
    step.calls.forEach((call, i) => {
      const id = m.toolCalls[i]?.id;
      if (call.as !== undefined && id !== undefined && byCallId.has(id)) scope.set(call.as, byCallId.get(id));
    });
  }
  return scope;
}

// Every move reads all earlier results: each is parsed once (a failed JSON.parse costs an exception).
const parsedResults = new WeakMap<Message, unknown>();

function parseResult(message: Message & { role: 'tool' }): unknown {
  if (parsedResults.has(message)) return parsedResults.get(message);
  let value: unknown;
  try {
    value = JSON.parse(message.content) as unknown;
  } catch {
    value = message.content;
  }
  parsedResults.set(message, value);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Diagnostics helpers

/**
 * `nearest` (parse.ts) counts a swap of two letters as two edits, so "spwan" would get no hint.
 * For unknown fields without a hint, suggest the known field with the fewest edits counting a
 * swap as one.
 */
function addKeyHints(diagnostics: Diagnostic[], root: Node): void {
  for (const d of diagnostics) {
    const match = /^unknown field "([^"]*)"/.exec(d.message);
    if (!match || d.message.includes('did you mean')) continue;
    const keyNode = findNodeAtOffset(root, d.offset);
    const object = keyNode?.parent?.type === 'property' && keyNode.parent.children?.[0] === keyNode ? keyNode.parent.parent : undefined;
    if (object === undefined || keyNode?.value !== match[1]) continue;
    const suggestion = nearest(match[1]!, knownKeysAt(getNodePath(object)));
    if (suggestion) d.message += `; did you mean "${suggestion}"?`;
  }
}

function knownKeysAt(path: readonly (string | number)[]): readonly string[] {
  if (path.length === 0) return ROOT_KEYS;
  if (path.length === 3 && path[0] === 'agents' && typeof path[2] === 'number') return MOVE_KEYS;
  if (path.length === 5 && path[0] === 'agents' && path[3] === 'parallel' && typeof path[4] === 'number') return PARALLEL_KEYS;
  return [];
}

function orList(items: readonly string[]): string {
  const quoted = items.map((i) => `"${i}"`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  const shown = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '');
  return shown === '' ? '(root)' : shown;
}
