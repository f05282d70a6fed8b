// The agents file, `.agents.jsonc`: the agents a person can start in a workspace
// (runtime.md). Strict like the policy file: an unknown field is an error.
import { findNodeAtLocation } from 'jsonc-parser';
import { z } from 'zod';
import type { AgentSpawnInfo } from '../policy/checking/lint.js';
import { parseJsoncWithSchema, type ParsedJsonc } from '../policy/file/parse.js';

const name = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a name is letters, digits, "_", "." or "-"');

export const PermissionModeSchema = z.enum(['auto', 'ask', 'deny']);

export const SubagentSchema = z.strictObject({
  name,
  description: z.string().optional(),
  instructions: z.string().optional(),
  model: z.string().optional().describe('defaults to the parent agent\'s model'),
  tools: z.array(z.string().min(1)).optional().describe('builtin ids (builtin.read_file, builtin.run_command, builtin.fetch), all builtins (builtin.*), MCP servers (mcp.<server>)'),
  builtins: z.strictObject({ subagents: z.boolean() }).optional(),
});

export const AgentSchema = z.strictObject({
  name,
  description: z.string().optional(),
  model: z
    .string()
    .optional()
    .describe('scripted:<file>, openai-compatible:<model>, vscode-lm:<vendor/family>; default: the scripted model'),
  instructions: z.string().optional(),
  tools: z.array(z.string().min(1)).optional(),
  permissionMode: PermissionModeSchema.optional(),
  subagents: z.array(SubagentSchema).optional(),
  builtins: z.strictObject({ subagents: z.boolean() }).optional(),
});

export const AgentsFileSchema = z.strictObject({
  $schema: z.string().optional(),
  agents: z.array(AgentSchema),
});

export type AgentsFile = z.infer<typeof AgentsFileSchema>;
export type AgentDeclaration = z.infer<typeof AgentSchema>;

const KNOWN_KEYS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['', ['$schema', 'agents']],
  ['agents.#', Object.keys(AgentSchema.shape)],
  ['agents.#.subagents.#', Object.keys(SubagentSchema.shape)],
]);

export function parseAgentsFile(text: string, file: string): ParsedJsonc<AgentsFile> {
  const parsed = parseJsoncWithSchema(text, file, AgentsFileSchema, { what: 'the agents file', knownKeys: KNOWN_KEYS });
  if (parsed.value && parsed.root) {
    const seen = new Set<string>();
    parsed.value.agents.forEach((agent, i) => {
      if (seen.has(agent.name)) {
        const node = findNodeAtLocation(parsed.root!, ['agents', i, 'name']);
        parsed.diagnostics.push({ file, severity: 'error', code: 'duplicate-id', offset: node?.offset ?? 0, length: node?.length ?? 1,
          message: `agent name "${agent.name}" is used twice` });
      }
      seen.add(agent.name);
    });
    if (parsed.diagnostics.length > 0) parsed.value = undefined;
  }
  return parsed;
}

/** The JSON Schema editors validate the agents file with, generated from the zod schema so the two can never disagree. */
export function agentsJsonSchema(): Record<string, unknown> {
  return { ...z.toJSONSchema(AgentsFileSchema, { io: 'input', unrepresentable: 'any' }), title: 'Agent Policy agents (.agents.jsonc)' };
}

/** What the policy lint `spawn-denied` needs of the agents: which can spawn subagents, and their permission mode. */
export function spawnInfo(agents: AgentsFile | undefined): AgentSpawnInfo[] {
  return (agents?.agents ?? []).map((a) => ({
    name: a.name,
    subagents: (a.subagents ?? []).map((s) => s.name),
    ...(a.permissionMode ? { permissionMode: a.permissionMode } : {}),
  }));
}
