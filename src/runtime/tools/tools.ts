// Tools as the runtime sees them: a stable id the policy judges, a model-facing name, a
// schema, honest annotations, and a function that does the work.
import { z } from 'zod';
import type { ToolAnnotations, ToolDescriptor, ToolKind } from '../../policy/rules/call.js';
import { withoutSchemaUri } from '../model/model.js';
import type { SandboxLaunch } from '../sandbox/commandProcess.js';
import type { ToolSandbox } from '../sandbox/toolSandbox.js';

export interface ToolRunContext {
  sessionId: string;
  turnId: string;
  agent: string;
  /** The session's workspace folder: builtin file tools are confined to it. */
  workspaceFolder: string;
  /** Aborted when the turn is cancelled or interrupted. */
  signal: AbortSignal;
  /** The calling session's subagents (for the agents.* tools). */
  subagents?: SubagentHost;
  /** Set for a `builtin.run_command` call that runs in the sandbox (see ToolSandbox); absent: not sandboxed. */
  sandbox?: ToolSandbox;
  /**
   * Asks a person for structured input while this call runs (an MCP server's elicitation):
   * opens an elicitation callback on the calling session and turn, and resolves with the answer.
   * A closed callback (turn ended, session cancelled, the call ended) resolves as `cancel`;
   * so does one whose `signal` aborts (the server gave up waiting).
   */
  elicit?(request: ElicitationRequest, options?: { signal?: AbortSignal }): Promise<ElicitationResult>;
}

/** What a tool source asks a person for (MCP's form-mode elicitation). */
export interface ElicitationRequest {
  /** The tool source asking, e.g. `{ id: 'mcp.everything', name: 'everything' }`. */
  source: { id: string; name: string };
  /** The server's message, shown as is (untrusted text). */
  message: string;
  /** A flat JSON Schema object: `properties` of string, number, integer, boolean or enum, and `required`. */
  requestedSchema: ElicitationSchema;
}

export interface ElicitationSchema {
  type: 'object';
  properties: Record<string, ElicitationField>;
  required?: string[];
}

export interface ElicitationField {
  type: 'string' | 'number' | 'integer' | 'boolean';
  title?: string;
  description?: string;
  enum?: string[];
  enumNames?: string[];
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  [key: string]: unknown;
}

export type ElicitationResult =
  | { action: 'accept'; content: Record<string, string | number | boolean> }
  | { action: 'decline' }
  | { action: 'cancel' };

/**
 * A source of tools listed at run time (an MCP server). Each session tree opens its own
 * connection at its first model call, so a server starts only when an agent that uses it runs.
 */
export interface ToolSource {
  /** The prefix of its tools' stable ids, e.g. `mcp.filesystem`. */
  readonly id: string;
  readonly name: string;
  connect(context: ToolSourceContext): ToolConnection;
}

/** What a source is connected with: the session tree's root session and folder, and (in a session) how a process it starts runs sandboxed. */
export interface ToolSourceContext {
  sessionId: string;
  workspaceFolder: string;
  /** Set by sessions (serverSandbox.ts): the policy's `sandboxServers`, and the sandbox a server's process runs in. */
  sandbox?: ServerSandboxHost;
  /** Set by sessions: writes a line of the session tree's audit log (MCP tools pinned, docs/mcp.md). */
  audit?(line: SourceAuditLine): void;
}

/** An audit line a tool source writes: a tool's definition pinned, found changed, or a change accepted (docs/mcp.md, "MCP tools pinned"). */
export interface SourceAuditLine {
  event: 'mcp-tool-pinned' | 'mcp-tool-changed' | 'mcp-tool-accepted';
  /** The tool's stable id. */
  tool: string;
  /** 'sha256:' + hex of the definition offered (pinned, changed to, accepted). */
  definitionDigest: string;
  /** The digest pinned before (a change, an acceptance); absent for a new tool. */
  pinnedDigest?: string;
  /** What changed, in a few words. */
  summary?: string;
}

/**
 * What a tool source that starts a process (a stdio MCP server) needs of the session tree to run
 * it in the sandbox when the policy says so (docs/mcp.md, "Sandboxed servers").
 */
export interface ServerSandboxHost {
  /** Why the policy in force says the server `name`'s process runs sandboxed (its `sandboxServers`), or undefined when it does not. */
  required(name: string): string | undefined;
  /** Why there is no sandbox on this machine, or undefined when there is. */
  unavailable(): string | undefined;
  /** Prepares one run of the server's process; throws where there is no sandbox. */
  prepare(run: ServerSandboxRun): Promise<PreparedServerSandbox>;
}

export interface ServerSandboxRun {
  /** The server's name (`.vscode/mcp.json`). */
  server: string;
  /** Its command line as written (variables unresolved), shell-quoted: the command its connections are judged for. */
  command: string;
  /** Where the process starts (absolute). */
  cwd: string;
  /** Why it runs sandboxed (`required`'s answer), for the audit. */
  reason: string;
  /** The session and turn whose call of the server runs now, if one does: a host no rule decides is asked there. */
  caller(): { sessionId: string; turnId: string } | undefined;
}

export interface PreparedServerSandbox {
  launch: SandboxLaunch;
  /** Each connection is judged through the run's own proxy. */
  hostsJudged: boolean;
  /** Why its connections cannot be judged here (so it has no network), when that is so. */
  networkMissing?: string;
  /** How it runs, in a sentence for the log and the transcript. */
  description: string;
  /** The process is starting: the audit and the session's transcript say so (throws when the audit log cannot record it: then it is not started). */
  started(): void;
  /** The process ended (or never started): its questions close, its proxy stops, changes to protected paths are undone. */
  close(): Promise<void>;
}

export interface ToolConnection {
  /** Set when the source must be signed in to before its tools can be listed. */
  readonly signIn?: SignInSource;
  /** Starts the source if needed and lists its tools (ids under the source's prefix). */
  tools(signal: AbortSignal): Promise<RuntimeTool[]>;
  /**
   * For a source whose tools can change while it runs (MCP's notifications/tools/list_changed, a
   * changed definition accepted): a count that grows at each change. A session lists the tools
   * again before its next model call when it differs from the count it listed at.
   */
  readonly toolChanges?: number;
  /** Stops the source; idempotent. */
  close(): Promise<void>;
}

/** What the agents.* tools need of the session that calls them. */
export interface SubagentHost {
  spawn(name: string, task: string): { id: string; agentName: string };
  find(id: string): SubagentHandle | undefined;
  children(): readonly SubagentHandle[];
  /** Marks the session as waiting (not making progress on its own) while `work` runs. */
  waiting<T>(work: Promise<T>): Promise<T>;
}

export interface SubagentHandle {
  readonly id: string;
  readonly agentName: string;
  settledTurn(): Promise<{ state: 'completed' | 'failed'; text?: string; error?: string }>;
  deliver(message: string): Promise<string>;
  interrupt(): void;
}

/** A source that must be signed in to before its tools run (a connector or an MCP server). */
export interface SignInSource {
  source: 'connector' | 'mcp';
  id: string;
  name: string;
  /** Whether the source is connected now. */
  isConnected(): boolean | Promise<boolean>;
  /** True when it was connected before and lost it (asks to reconnect rather than connect). */
  wasConnected?(): boolean;
}

export type InputCheck = { ok: true; value: unknown } | { ok: false; error: string };

export interface RuntimeTool extends ToolDescriptor {
  kind: ToolKind;
  /** The name the model calls it by (unique among an agent's tools). */
  name: string;
  description: string;
  /** JSON Schema of the input, for the model. */
  inputJsonSchema: Record<string, unknown>;
  annotations: ToolAnnotations;
  /** Validates (and may normalise) the model's input before the policy sees it. */
  check(input: unknown): InputCheck;
  run(input: unknown, context: ToolRunContext): Promise<unknown>;
  signIn?: SignInSource;
  /**
   * Why every call of this tool asks a person whatever the policy allows (a deny still denies),
   * or undefined: an MCP tool whose definition changed since a person approved it, until they
   * accept the change (docs/mcp.md, "MCP tools pinned"). Asked at each call.
   */
  held?(): string | undefined;
}

export interface ClientToolOptions<S extends z.ZodType> {
  name: string;
  description: string;
  inputSchema: S;
  annotations?: ToolAnnotations;
  tags?: readonly string[];
}

/** A client tool: a function of this program. Its stable id is `client.<name>`. */
export function tool<S extends z.ZodType>(
  options: ClientToolOptions<S>,
  fn: (input: z.infer<S>, context: ToolRunContext) => unknown,
): RuntimeTool {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(options.name)) {
    throw new Error(`tool name "${options.name}" must be 1-64 letters, digits, "_" or "-"`);
  }
  return zodTool({ ...options, id: `client.${options.name}`, kind: 'client' }, fn);
}

/** A tool whose input is checked by a zod schema (client tools and builtins). */
export function zodTool<S extends z.ZodType>(
  options: ClientToolOptions<S> & { id: string; kind: ToolKind; pathArgs?: readonly string[]; commandArg?: string; urlArgs?: readonly string[] },
  fn: (input: z.infer<S>, context: ToolRunContext) => unknown,
): RuntimeTool {
  const schema = options.inputSchema;
  return {
    id: options.id,
    kind: options.kind,
    name: options.name,
    description: options.description,
    inputJsonSchema: withoutSchemaUri(z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>),
    annotations: options.annotations ?? {},
    ...(options.tags ? { tags: options.tags } : {}),
    ...(options.pathArgs ? { pathArgs: options.pathArgs } : {}),
    ...(options.commandArg ? { commandArg: options.commandArg } : {}),
    ...(options.urlArgs ? { urlArgs: options.urlArgs } : {}),
    check(input) {
      const r = schema.safeParse(input);
      if (r.success) return { ok: true, value: r.data };
      return { ok: false, error: r.error.issues.map((i) => `${i.path.map(String).join('.') || 'input'}: ${i.message}`).join('; ') };
    },
    async run(input, context) {
      return await fn(input as z.infer<S>, context);
    },
  };
}
