// What a tool call looks like to the policy: the tool (by stable id), its input, and who calls.
import { CONVENTIONAL_PATH_FIELDS } from '../paths/paths.js';
import type { Hints, ToolKind } from '../file/schema.js';

export type { ToolKind } from '../file/schema.js';
export type HintName = keyof Hints;

/** MCP tool annotations as a server or tool declares them. Untrusted: only ever read through `effectiveHints`. */
export type ToolAnnotations = Partial<Record<HintName, boolean>> & { title?: string };

export interface ToolDescriptor {
  /** The stable id: `builtin.read_file`, `client.lookup_price`, `mcp.<server>.<tool>`, … */
  id: string;
  kind?: ToolKind;
  annotations?: ToolAnnotations;
  tags?: readonly string[];
  /** Top-level input fields that hold paths. Undefined: the conventional names of the spec. */
  pathArgs?: readonly string[];
  /** The top-level input field that holds a shell command. Undefined: `command` or `cmd`. */
  commandArg?: string;
  /** Top-level input fields that hold URLs (the `domains` and `urls` matchers). Undefined: the conventional names (callUrls.ts). */
  urlArgs?: readonly string[];
}

export interface ToolCall {
  tool: ToolDescriptor;
  input: unknown;
  /** The agent or subagent whose session makes the call. */
  agent: string;
}

const KIND_BY_PREFIX: ReadonlyArray<readonly [string, ToolKind]> = [
  ['builtin.', 'builtin'],
  ['agents.', 'builtin'],
  ['client.', 'client'],
  ['mcp.', 'mcp'],
  ['connector.', 'connector'],
  ['plugin.', 'plugin'],
];

/** The kind implied by a stable id's prefix; undefined for an id of no known family. */
export function kindFromId(id: string): ToolKind | undefined {
  // By the first dot's prefix: one lookup per call instead of a scan of the families.
  const dot = id.indexOf('.');
  return dot === -1 ? undefined : KIND_OF_PREFIX.get(id.slice(0, dot + 1));
}

const KIND_OF_PREFIX: ReadonlyMap<string, ToolKind> = new Map(KIND_BY_PREFIX);

/** MCP's worst-case defaults for hints a tool does not declare. */
const WORST_CASE: Required<Record<HintName, boolean>> = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

/**
 * The hints a policy sees. Anything not a boolean is ignored (hints come from servers and are
 * untrusted), and a read-only tool is by definition not destructive.
 */
export function effectiveHints(annotations: ToolAnnotations | undefined): Required<Record<HintName, boolean>> {
  const pick = (name: HintName): boolean => {
    const v = annotations?.[name];
    return typeof v === 'boolean' ? v : WORST_CASE[name];
  };
  const readOnlyHint = pick('readOnlyHint');
  return {
    readOnlyHint,
    destructiveHint: readOnlyHint ? false : pick('destructiveHint'),
    idempotentHint: pick('idempotentHint'),
    openWorldHint: pick('openWorldHint'),
  };
}

export const CONVENTIONAL_COMMAND_FIELDS = ['command', 'cmd'] as const;

export { CONVENTIONAL_PATH_FIELDS };

/**
 * The call's shell command: the declared command argument, else `command` or `cmd`.
 * `opaque` when the field is present but not a string (so loosening rules cannot match).
 */
export function commandOf(call: ToolCall): { command: string | undefined; opaque: boolean } {
  const input = call.input;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return NO_COMMAND;
  const record = input as Record<string, unknown>;
  const declared = call.tool.commandArg;
  if (declared !== undefined) return commandIn(record, declared) ?? NO_COMMAND;
  for (const field of CONVENTIONAL_COMMAND_FIELDS) {
    const found = commandIn(record, field);
    if (found !== undefined) return found;
  }
  return NO_COMMAND;
}

const NO_COMMAND = Object.freeze({ command: undefined, opaque: false });
const OPAQUE_COMMAND = Object.freeze({ command: undefined, opaque: true });

/** The command in one field: undefined when the field holds none (absent, undefined or null). */
function commandIn(record: Record<string, unknown>, field: string): { command: string | undefined; opaque: boolean } | undefined {
  if (!Object.prototype.hasOwnProperty.call(record, field)) return undefined;
  const value = record[field];
  if (typeof value === 'string') return { command: value, opaque: false };
  return value !== undefined && value !== null ? OPAQUE_COMMAND : undefined;
}
