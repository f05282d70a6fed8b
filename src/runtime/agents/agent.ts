// Agents, subagents and their permission policies, as a program declares them in code.
// Imports session.ts (for `agent.startSession()`) and modules below it; no session module imports this file.
import { loadPolicyText, Policy } from '../../policy/policy.js';
import { formatDiagnostic, toJson } from '../../policy/file/diagnostics.js';
import { RuleSchema, type Decision, type Rule } from '../../policy/file/schema.js';
import { SdkError } from '../tree/answers.js';
import type { Model } from '../model/model.js';
import { startSession, type Session } from '../session.js';
import type { PermissionMode, RootAgentDefinition, StartSessionOptions, SubagentDefinition } from '../tree/sessionOptions.js';
import type { RuntimeTool, ToolSource } from '../tools/tools.js';

/** Which builtin tool families an agent or subagent gets. */
export class Builtins {
  /** `agents.spawn`, `agents.message`, `agents.wait`, `agents.interrupt`. */
  readonly subagents: boolean;
  /** read, write, list, search, delete and rename files in the workspace folder. */
  readonly files: boolean;
  /** `builtin.run_command`. */
  readonly commands: boolean;
  /** `builtin.fetch` (GET a URL; the policy's `domains` and `urls` judge it). */
  readonly network: boolean;
  constructor(options: { subagents?: boolean; files?: boolean; commands?: boolean; network?: boolean } = {}) {
    this.subagents = options.subagents ?? true;
    this.files = options.files ?? false;
    this.commands = options.commands ?? false;
    this.network = options.network ?? false;
  }
}

/** A rule built in code: the same fields and matchers as a rule in `.agentpolicy.jsonc`. */
export function PermissionRule(rule: Rule): Rule {
  const checked = RuleSchema.safeParse(rule);
  if (!checked.success) throw new SdkError(`invalid PermissionRule: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return checked.data;
}

/** A policy built in code. It is compiled by the same engine as the policy file. */
export class PermissionPolicy {
  readonly policy: Policy;
  constructor(options: { default?: Decision; rules?: readonly Rule[] }) {
    const text = JSON.stringify({ version: 1, ...(options.default ? { default: options.default } : {}), rules: options.rules ?? [] }, null, 2);
    const layer = loadPolicyText(text, '<PermissionPolicy>', 'workspace');
    if (!layer.valid) {
      const lines = layer.diagnostics.map((d) => formatDiagnostic(toJson(d, layer.parsed.lines)));
      throw new SdkError(`invalid PermissionPolicy:\n${lines.join('\n')}`);
    }
    this.policy = new Policy({ workspace: layer });
  }
}

export interface SubagentOptions {
  name: string;
  description?: string;
  instructions?: string;
  tools?: readonly RuntimeTool[];
  /** Sources of tools listed at run time (MCP servers); shared with the rest of the session tree. */
  toolSources?: readonly ToolSource[];
  /** Default: no subagents of its own, no files, no commands. */
  builtins?: Builtins;
  /** Default: the root agent's model. */
  model?: Model;
}

export class Subagent implements SubagentDefinition {
  readonly name: string;
  readonly description: string;
  readonly instructions: string;
  readonly tools: readonly RuntimeTool[];
  readonly toolSources: readonly ToolSource[];
  readonly builtins: Builtins;
  readonly model: Model | undefined;
  constructor(options: SubagentOptions) {
    this.name = options.name;
    this.description = options.description ?? '';
    this.instructions = options.instructions ?? '';
    this.tools = options.tools ?? [];
    this.toolSources = options.toolSources ?? [];
    this.builtins = options.builtins ?? new Builtins({ subagents: false });
    this.model = options.model;
  }
}

export interface AgentOptions {
  name?: string;
  model: Model;
  instructions: string;
  tools?: readonly RuntimeTool[];
  /** Sources of tools listed at run time (MCP servers): connected at the first model call, stopped with the session. */
  toolSources?: readonly ToolSource[];
  subagents?: readonly Subagent[];
  permissionMode?: PermissionMode;
  permissionPolicy?: PermissionPolicy | Policy;
  builtins?: Builtins;
  /** At most this many model calls in one turn (default 200). */
  maxSteps?: number;
}

export class Agent implements RootAgentDefinition {
  readonly name: string;
  readonly model: Model;
  readonly instructions: string;
  readonly tools: readonly RuntimeTool[];
  readonly toolSources: readonly ToolSource[];
  readonly subagents: readonly Subagent[];
  readonly permissionMode: PermissionMode;
  readonly permissionPolicy: Policy | undefined;
  readonly builtins: Builtins;
  readonly maxSteps: number;

  constructor(options: AgentOptions) {
    this.name = options.name ?? 'main';
    this.model = options.model;
    this.instructions = options.instructions;
    this.tools = options.tools ?? [];
    this.toolSources = options.toolSources ?? [];
    this.subagents = options.subagents ?? [];
    this.permissionMode = options.permissionMode ?? 'ask';
    this.permissionPolicy = options.permissionPolicy instanceof PermissionPolicy ? options.permissionPolicy.policy : options.permissionPolicy;
    this.builtins = options.builtins ?? new Builtins();
    this.maxSteps = options.maxSteps ?? 200;
    const names = new Set<string>();
    for (const s of this.subagents) {
      if (names.has(s.name)) throw new SdkError(`two subagents are named "${s.name}"`);
      names.add(s.name);
    }
  }

  /** Starts a session; its handlers answer the callbacks of the whole tree of subagents. */
  startSession(options: StartSessionOptions = {}): Promise<Session> {
    return startSession(this, options);
  }
}
