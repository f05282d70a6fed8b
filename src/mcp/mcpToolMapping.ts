// An MCP server's listed tools as runtime tools: stable ids `mcp.<server>.<tool>`, model-facing
// names, and annotations taken as untrusted (only boolean hints, which only ever loosen what a
// policy author chose through `effectiveHints`).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolAnnotations } from '../policy/rules/call.js';
import { hintNames } from '../policy/file/policyNames.js';
import { isObject, withoutSchemaUri } from '../runtime/model/model.js';
import type { InputCheck, RuntimeTool, SignInSource, ToolRunContext } from '../runtime/tools/tools.js';
import type { ToolInputValidator } from './mcpInputValidator.js';
import type { McpToolDefinition } from './mcpToolDefinition.js';

/**
 * MCP's tool names (SEP-986, with `/`). Anything else is left out: a tool's id reaches approvals
 * and notifications, where a name like `[Open](command:x)` would be markup.
 */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;

/** What the runtime tools of one connection check their inputs with and run through. */
export interface McpToolHost {
  /** The source's id, `mcp.<server>`. */
  readonly sourceId: string;
  readonly serverName: string;
  readonly signIn?: SignInSource;
  readonly validator: ToolInputValidator;
  log(line: string): void;
  call(toolName: string, toolId: string, input: Record<string, unknown>, context: ToolRunContext): Promise<string>;
  /** Set when the tools are pinned (mcpToolPins.ts): a tool whose definition is not the one a person approved. */
  held?(toolName: string): HeldDefinition | undefined;
}

/** A tool offered with a definition that is not the one pinned. */
export interface HeldDefinition {
  /** The definition pinned; undefined for a tool never approved. */
  before?: McpToolDefinition;
  /** Why its calls ask while `stillHeld()`. */
  why: string;
  /** False once a person accepted the definition offered. */
  stillHeld(): boolean;
}

/** Every tool the server lists, page by page (at most 100 pages). */
export async function listAllTools(client: Client): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === '') break;
  }
  return tools;
}

/** The listed tools as runtime tools, leaving out (and logging) invalid names and repeated ones. */
export function toRuntimeTools(listed: readonly McpTool[], host: McpToolHost): RuntimeTool[] {
  const names = new Set<string>();
  const seen = new Set<string>();
  const out: RuntimeTool[] = [];
  for (const tool of listed) {
    if (typeof tool.name !== 'string' || !MCP_TOOL_NAME.test(tool.name)) {
      const shown = JSON.stringify(tool.name) ?? String(tool.name);
      host.log(`ignoring a tool whose name is not an MCP tool name (${MCP_TOOL_NAME.source}): ${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown}`);
      continue;
    }
    if (seen.has(tool.name)) {
      host.log(`ignoring a second tool named ${tool.name}`);
      continue;
    }
    seen.add(tool.name);
    out.push(toRuntimeTool(tool, modelFacingName(host.serverName, tool.name, names), host));
  }
  return out;
}

function toRuntimeTool(tool: McpTool, name: string, host: McpToolHost): RuntimeTool {
  const id = `${host.sourceId}.${tool.name}`;
  // Without `$schema`: it tells a model nothing, and the providers send schemas as given.
  const inputSchema = withoutSchemaUri((tool.inputSchema ?? { type: 'object' }) as Record<string, unknown>);
  const held = host.held?.(tool.name);
  // Until a person accepts a changed definition, its hints loosen nothing (only hints both
  // definitions agree on count) and the model reads the description a person approved.
  const offered = untrustedAnnotations(tool);
  const annotations = held === undefined ? offered : heldAnnotations(held.before, offered);
  const described = held?.before !== undefined ? { description: held.before.description, annotations: held.before.annotations ?? {}, title: held.before.title } as Pick<McpTool, 'description' | 'annotations' | 'title'> : tool;
  // Nor does the model read text the server put anywhere else in a definition not accepted: a new
  // tool's description, or descriptions, titles, examples and defaults inside its schema (where
  // instructions for the model can hide as well as in the description). The inputs are still
  // checked against the whole schema the server offers.
  const description = held !== undefined && held.before === undefined
    ? 'A tool the server added since its tools were approved; not accepted yet.'
    : typeof described.description === 'string' ? described.description : (untrustedAnnotations(described).title ?? '');
  return {
    id,
    kind: 'mcp',
    name,
    description,
    inputJsonSchema: held === undefined ? inputSchema : withoutSchemaText(inputSchema) as Record<string, unknown>,
    annotations,
    ...(host.signIn ? { signIn: host.signIn } : {}),
    ...(held !== undefined ? { held: () => (held.stillHeld() ? held.why : undefined) } : {}),
    check(input: unknown): InputCheck {
      if (!isObject(input)) {
        return { ok: false, error: `the input of ${tool.name} (${id}) must be a JSON object` };
      }
      const problem = host.validator.check(id, inputSchema, input, (line) => host.log(line));
      if (problem !== undefined) return { ok: false, error: `the input of ${tool.name} does not fit its schema: ${problem}` };
      return { ok: true, value: input };
    },
    async run(input: unknown, context: ToolRunContext): Promise<unknown> {
      return await host.call(tool.name, id, input as Record<string, unknown>, context);
    },
  };
}

/** `<server>_<tool>` made to fit /^[A-Za-z0-9_-]{1,64}$/ and unique among `taken`. */
export function modelFacingName(server: string, tool: string, taken: Set<string>): string {
  const base = `${server}_${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  let name = base;
  for (let n = 2; taken.has(name); n++) {
    const suffix = `_${n}`;
    name = `${base.slice(0, 64 - suffix.length)}${suffix}`;
  }
  taken.add(name);
  return name;
}

/** Only boolean hints survive; a hint left out stays out, so the policy assumes the worst. `title` is display text. */
export function untrustedAnnotations(tool: Pick<McpTool, 'annotations' | 'title'>): ToolAnnotations {
  const given = (tool.annotations ?? {}) as Record<string, unknown>;
  const out: ToolAnnotations = {};
  for (const hint of hintNames) if (typeof given[hint] === 'boolean') out[hint] = given[hint] as boolean;
  const title = typeof given.title === 'string' ? given.title : typeof tool.title === 'string' ? tool.title : undefined;
  if (title !== undefined) out.title = title;
  return out;
}

/**
 * The hints of a tool held for its changed definition: a hint only where the approved definition
 * and the offered one give the same boolean, else none (the worst case, effectiveHints). A new
 * tool has none. The title shown is the approved one.
 */
export function heldAnnotations(before: McpToolDefinition | undefined, offered: ToolAnnotations): ToolAnnotations {
  if (before === undefined) return {};
  const approved = untrustedAnnotations({ annotations: (before.annotations ?? {}) as McpTool['annotations'], ...(before.title !== undefined ? { title: before.title } : {}) });
  const out: ToolAnnotations = {};
  for (const hint of hintNames) if (approved[hint] !== undefined && approved[hint] === offered[hint]) out[hint] = approved[hint];
  if (approved.title !== undefined) out.title = approved.title;
  return out;
}

/** Schema keywords whose values are text for a reader, not constraints. */
const SCHEMA_TEXT = new Set(['description', 'title', 'examples', 'default', '$comment', 'markdownDescription']);
/** Keywords whose value maps names to schemas (the names are data; each value a schema). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is data, copied as it is (`enum` values, `const`, `required` names). */
const SCHEMA_DATA = new Set(['enum', 'const', 'required', 'type', 'format', 'pattern']);

/** A JSON Schema with its reader's text taken out (SCHEMA_TEXT), the constraints kept. */
export function withoutSchemaText(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutSchemaText);
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_TEXT.has(key)) continue;
    if (SCHEMA_DATA.has(key)) out[key] = value;
    else if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutSchemaText(sub)]));
    else out[key] = withoutSchemaText(value);
  }
  return out;
}
