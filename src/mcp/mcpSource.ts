// One MCP server of `.vscode/mcp.json` as a tool source of agent sessions. Each session tree gets
// its own connection, which starts the server only when its tools are first listed. The
// server's tools become runtime tools with stable ids `mcp.<server>.<tool>`; what the server says
// about them (descriptions, annotations) is untrusted and only ever loosens what a policy author
// chose through `effectiveHints`.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema, CancelledNotificationSchema, ElicitRequestSchema, ErrorCode, McpError, ToolListChangedNotificationSchema,
  type CallToolResult, type ElicitResult, type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { ToolAnnotations } from '../policy/call.js';
import { hintNames } from '../policy/schema.js';
import { isObject, withoutSchemaUri } from '../runtime/model.js';
import type {
  ElicitationField, ElicitationSchema, InputCheck, RuntimeTool, SignInSource, ToolConnection, ToolRunContext, ToolSource,
} from '../runtime/tools.js';
import {
  inputIdsOf, parseEnvFile, resolveServer,
  type McpConfig, type McpInputDeclaration, type McpInputs, type McpServerConfig,
} from './mcpConfig.js';

export interface McpSourceOptions {
  /** Where `${workspaceFolder}` points and where a stdio server runs by default; else the session's folder. */
  workspaceFolder?: string;
  /** Values of `${input:id}`. */
  inputs?: McpInputs;
  /** The file's `inputs`, for descriptions and the password flag. */
  inputDeclarations?: readonly McpInputDeclaration[];
  clientInfo?: { name: string; version: string };
  log?: (line: string) => void;
  /** A tool call fails when the server sends nothing (result or progress) for this long; paused while a person answers an elicitation. Default 5 min. */
  callTimeoutMs?: number;
  /** Starting and initializing the server. Default 60 s. */
  startTimeoutMs?: number;
  /** Restarts after crashes allowed within `windowMs`. Default 3 in 60 s. */
  restarts?: { max: number; windowMs: number };
  /**
   * Asked before the server's process (stdio) or connection (HTTP, SSE) is first started, with
   * the server's config as written (variables unresolved). `true` is remembered by this source
   * for that config (`serverFingerprint`), so restarts after a crash do not ask again, while a
   * changed config does; `false` fails the listing or call, and the next start asks again.
   */
  confirmStart?: (server: McpServerConfig) => Promise<boolean>;
}

/** An input a server needs before it can start (what a sign-in asks for). */
export interface McpInputInfo {
  id: string;
  description: string;
  password: boolean;
}

/** The listing or a call cannot go on until a person signs in (enters the server's inputs again). */
export class McpSignInRequired extends Error {
  override name = 'McpSignInRequired';
}

const DEFAULT_CLIENT_INFO = { name: 'agent-policy', version: '0.1.0' };
const STDERR_LINES = 20;
/** setTimeout's largest delay: the SDK's own request timeout is kept out of the way with it. */
const NO_TIMEOUT = 2 ** 31 - 1;
/**
 * MCP's tool names (SEP-986, with `/`). Anything else is left out: a tool's id reaches approvals
 * and notifications, where a name like `[Open](command:x)` would be markup.
 */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;

export class McpToolSource implements ToolSource {
  readonly id: string;
  readonly name: string;
  /** The inputs the server's config references, in order of use. */
  readonly inputs: readonly McpInputInfo[];
  private readonly live = new Set<McpConnection>();
  /** The input values the server answered 401 to, shared by all connections (JSON of the values). */
  rejectedInputs: string | undefined;
  /** Fingerprints of the configs a person allowed to start (`confirmStart`). */
  private readonly allowed = new Set<string>();
  /** A question in flight, shared by connections starting at the same time. */
  private readonly asking = new Map<string, Promise<boolean>>();

  constructor(
    readonly server: McpServerConfig,
    readonly options: McpSourceOptions = {},
  ) {
    this.id = `mcp.${server.name}`;
    this.name = server.name;
    this.inputs = inputIdsOf(server).map((id) => {
      const declared = options.inputDeclarations?.find((d) => d.id === id);
      return { id, description: declared?.description ?? id, password: declared?.password ?? false };
    });
  }

  connect(context: { sessionId: string; workspaceFolder: string }): McpConnection {
    const connection = new McpConnection(this, this.options.workspaceFolder ?? context.workspaceFolder, () => this.live.delete(connection));
    this.live.add(connection);
    return connection;
  }

  /** The connections not yet closed. */
  get connections(): readonly McpConnection[] {
    return [...this.live];
  }

  /** Closes every open connection. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.live].map((c) => c.close()));
  }

  /**
   * @internal Resolves once `confirmStart` allowed the current config (at once when there is no
   * `confirmStart`, or it allowed this config before); throws when the person did not.
   */
  async ensureStartAllowed(): Promise<void> {
    const confirm = this.options.confirmStart;
    if (confirm === undefined) return;
    const server = this.server;
    const key = serverFingerprint(server);
    if (this.allowed.has(key)) return;
    let pending = this.asking.get(key);
    if (pending === undefined) {
      pending = (async () => {
        try {
          const yes = (await confirm(server)) === true;
          if (yes) this.allowed.add(key);
          return yes;
        } finally {
          this.asking.delete(key);
        }
      })();
      this.asking.set(key, pending);
    }
    let yes: boolean;
    try {
      yes = await pending;
    } catch (error) {
      throw new Error(`MCP server ${this.name} was not started: asking whether it may start failed: ${(error as Error)?.message ?? String(error)}`);
    }
    if (!yes) {
      this.options.log?.(`mcp ${this.name}: not started: the person did not allow it`);
      throw new Error(`MCP server ${this.name} was not started: the person did not allow it to start (${describeServerLaunch(server)})`);
    }
  }
}

/**
 * What identifies a server's config as written, for remembering a person's consent to start it:
 * a SHA-256 (hex) of its type, command, args, env, envFile and cwd, or url and headers. The name
 * is not part of it; the order of `env` and `headers` keys does not matter.
 */
export function serverFingerprint(server: McpServerConfig): string {
  const written = server.type === 'stdio'
    ? ['stdio', server.command, [...server.args], sortedEntries(server.env), server.envFile ?? null, server.cwd ?? null]
    : [server.type, server.url, sortedEntries(server.headers)];
  return createHash('sha256').update(JSON.stringify(written)).digest('hex');
}

/**
 * What starting the server runs, in a line for a person: the command line of a stdio server
 * (`npx -y pkg ${workspaceFolder}`, with `(in <cwd>)` when it has a cwd) or the URL of a remote
 * one. Variables are shown as written; words with unusual characters are quoted as JSON.
 */
export function describeServerLaunch(server: McpServerConfig): string {
  if (server.type !== 'stdio') return shellWord(server.url);
  const line = [server.command, ...server.args].map(shellWord).join(' ');
  return server.cwd !== undefined ? `${line} (in ${shellWord(server.cwd)})` : line;
}

function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./~${}?&#-]+$/.test(word) ? word : JSON.stringify(word);
}

function sortedEntries(record: Record<string, string | null>): Array<[string, string | null]> {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * One source per usable server of a parsed `mcp.json`. `options` may be a function of the server,
 * to give each source its own `inputs` store (a source only ever reads its own).
 */
export function mcpToolSources(
  config: Pick<McpConfig, 'servers' | 'inputs'>,
  options: McpSourceOptions | ((server: McpServerConfig) => McpSourceOptions) = {},
): McpToolSource[] {
  return config.servers.map((server) => new McpToolSource(server, {
    inputDeclarations: config.inputs, ...(typeof options === 'function' ? options(server) : options),
  }));
}

/** One start of the server: a client, its transport, and what it listed. */
interface Generation {
  client: Client;
  transport: Transport;
  stderr: string[];
  /** JSON of the input values it started with. */
  inputsKey: string | undefined;
  /** Initialized: from now on, losing it is a crash. */
  established: boolean;
  down: boolean;
  downReason?: string;
  tools?: RuntimeTool[];
  /** A listing in flight, shared by concurrent callers. */
  listing?: Promise<RuntimeTool[]>;
  toolsStale: boolean;
}

interface RunningCall {
  context: ToolRunContext;
  pause(): void;
  resume(): void;
}

export class McpConnection implements ToolConnection {
  readonly signIn?: SignInSource;
  private current: Generation | undefined;
  private starting: Promise<Generation> | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Set after a crash or a failed start: the next start is a restart and counts. */
  private crashed = false;
  private restartTimes: number[] = [];
  private lastFailure: string | undefined;
  private readonly running = new Set<RunningCall>();
  /** The client of a start in progress, so that closing need not wait for a slow server to answer. */
  private connecting: Client | undefined;
  /** Aborted when the connection closes: a start waiting for a person's consent stops waiting. */
  private readonly closedController = new AbortController();
  private readonly validator = new ToolInputValidator();

  constructor(
    private readonly source: McpToolSource,
    private readonly workspaceFolder: string,
    private readonly onClosed: () => void,
  ) {
    if (source.inputs.length > 0) {
      this.signIn = {
        source: 'mcp',
        id: source.id,
        name: source.name,
        isConnected: async () => {
          const values = await this.readInputs();
          return values.missing.length === 0 && values.key !== this.source.rejectedInputs;
        },
        wasConnected: () => this.source.rejectedInputs !== undefined,
      };
    }
  }

  private get name(): string {
    return this.source.name;
  }

  private log(line: string): void {
    this.source.options.log?.(`mcp ${this.name}: ${line}`);
  }

  /** The server process's id while a stdio server runs. */
  get pid(): number | undefined {
    const transport = this.current?.down === false ? this.current.transport : undefined;
    return transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
  }

  /** Whether the server is running and initialized now. */
  get isUp(): boolean {
    return this.current !== undefined && !this.current.down && !this.closed;
  }

  async tools(signal: AbortSignal): Promise<RuntimeTool[]> {
    const generation = await this.ensure(signal);
    if (generation.tools !== undefined && !generation.toolsStale) return generation.tools;
    generation.listing ??= (async () => {
      generation.toolsStale = false;
      try {
        generation.tools = this.toRuntimeTools(await this.listAll(generation));
        return generation.tools;
      } catch (error) {
        throw await this.failure(error, generation, undefined, 'listing its tools');
      } finally {
        generation.listing = undefined;
      }
    })();
    return await abortable(generation.listing, signal);
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    this.closedController.abort(new Error(`the session ended: MCP server ${this.name} is closed`));
    this.onClosed();
    const starting = this.starting;
    if (starting) {
      await this.connecting?.close().catch(() => undefined);
      await starting.catch(() => undefined);
    }
    const generation = this.current;
    this.current = undefined;
    if (generation) await this.stop(generation);
    this.log('closed');
  }

  private async stop(generation: Generation): Promise<void> {
    generation.down = true;
    const transport = generation.transport;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
      // Ends the server's session politely; a server that does not answer soon is left to time it out.
      await Promise.race([transport.terminateSession().catch(() => undefined), sleep(2000)]);
    }
    // Closing the client closes the transport; the stdio transport ends, then kills, the process.
    await generation.client.close().catch(() => undefined);
  }

  // -------------------------------------------------------------------------------------------
  // Starting

  private async ensure(signal: AbortSignal | undefined): Promise<Generation> {
    if (this.closed) throw new Error(`the session ended: MCP server ${this.name} is closed`);
    const current = this.current;
    if (current !== undefined && !current.down) return current;
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return await abortable(this.starting, signal);
  }

  private async start(): Promise<Generation> {
    const options = this.source.options;
    if (this.crashed) {
      const { max, windowMs } = options.restarts ?? { max: 3, windowMs: 60_000 };
      const now = Date.now();
      this.restartTimes = this.restartTimes.filter((t) => now - t < windowMs);
      if (this.restartTimes.length >= max) {
        throw new Error(`server ${this.name} keeps crashing: ${this.lastFailure ?? 'it stopped'} (${max} restarts within ${duration(windowMs)}; it is tried again later)`);
      }
      this.restartTimes.push(now);
      this.log(`restarting (${this.restartTimes.length} of ${max} within ${duration(windowMs)})`);
    }

    const values = await this.readInputs();
    if (values.missing.length > 0) {
      throw new McpSignInRequired(
        `MCP server ${this.name} needs a sign-in: enter ${values.missing.map((id) => `"${this.describeInput(id)}"`).join(', ')} first`);
    }
    if (values.key !== undefined && values.key === this.source.rejectedInputs) {
      throw new McpSignInRequired(`MCP server ${this.name} needs a sign-in: it refused the current credentials (401); enter new ones`);
    }

    let server: McpServerConfig;
    try {
      server = resolveServer(this.source.server, { workspaceFolder: this.workspaceFolder, inputs: values.values });
    } catch (error) {
      throw new Error(`MCP server ${this.name} cannot start: ${(error as Error).message}`);
    }

    // A person's consent, before anything runs or connects. A refusal is not a crash.
    await abortable(this.source.ensureStartAllowed(), this.closedController.signal);
    if (this.closed) throw new Error(`the session ended: MCP server ${this.name} is closed`);

    try {
      const generation = await this.startServer(server, values.key);
      if (generation.down) throw new Error(`MCP server ${this.name} stopped as soon as it started${tail(generation.stderr)}`);
      if (this.closed) {
        await this.stop(generation);
        throw new Error(`the session ended: MCP server ${this.name} is closed`);
      }
      this.current = generation;
      this.crashed = false;
      if (this.source.rejectedInputs !== undefined && this.source.rejectedInputs !== values.key) this.source.rejectedInputs = undefined;
      return generation;
    } catch (error) {
      if (this.closed) throw new Error(`the session ended: MCP server ${this.name} is closed`);
      if (isUnauthorized(error)) throw this.unauthorized(values.key, 'to the current credentials');
      if (!this.closed && !(error instanceof McpSignInRequired)) {
        this.crashed = true;
        this.lastFailure = (error as Error).message.replace(`MCP server ${this.name} `, '');
      }
      throw error;
    }
  }

  private async startServer(server: McpServerConfig, inputsKey: string | undefined): Promise<Generation> {
    if (server.type === 'stdio') return await this.startStdio(server, inputsKey);
    if (server.type === 'sse') return await this.connectWith(this.sseTransport(server), inputsKey, [], 'sse');
    try {
      return await this.connectWith(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }), inputsKey, [], 'http');
    } catch (error) {
      // The spec's backwards compatibility: a 4xx to the streamable POST means an older SSE server.
      const original = error instanceof Error && error.cause !== undefined ? error.cause : error;
      const code = (original as { code?: unknown }).code;
      if (original instanceof StreamableHTTPError && typeof code === 'number' && code >= 400 && code < 500 && code !== 401 && code !== 403) {
        this.log(`streamable HTTP answered ${code}; trying SSE`);
        return await this.connectWith(this.sseTransport(server), inputsKey, [], 'sse');
      }
      throw error;
    }
  }

  private sseTransport(server: Extract<McpServerConfig, { type: 'http' | 'sse' }>): SSEClientTransport {
    return new SSEClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
  }

  private async startStdio(server: Extract<McpServerConfig, { type: 'stdio' }>, inputsKey: string | undefined): Promise<Generation> {
    let env: Record<string, string> = {};
    if (server.envFile !== undefined) {
      try {
        env = parseEnvFile(await readFile(server.envFile, 'utf8'));
      } catch (error) {
        throw new Error(`MCP server ${this.name} cannot start: its envFile ${server.envFile} could not be read: ${(error as Error).message}`);
      }
    }
    for (const [key, value] of Object.entries(server.env)) {
      // undefined leaves the variable out of the child's environment, even one the SDK would pass on.
      if (value === null) (env as Record<string, string | undefined>)[key] = undefined;
      else env[key] = value;
    }
    const transport = new StdioClientTransport({
      command: server.command, args: server.args, env, cwd: server.cwd ?? this.workspaceFolder, stderr: 'pipe',
    });
    const stderr: string[] = [];
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer | string) => {
      const lines = (partial + chunk.toString()).split(/\r?\n/);
      partial = lines.pop() ?? '';
      if (partial.length > 2000) partial = partial.slice(-2000);
      for (const line of lines) {
        if (line.trim() === '') continue;
        stderr.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
        if (stderr.length > STDERR_LINES) stderr.shift();
        this.log(`stderr: ${line}`);
      }
    });
    // As written in the config: resolved arguments may hold the values of inputs (tokens).
    this.log(`starting ${describeServerLaunch(this.source.server)}`);
    return await this.connectWith(transport, inputsKey, stderr, 'stdio');
  }

  private async connectWith(transport: Transport, inputsKey: string | undefined, stderr: string[], kind: string): Promise<Generation> {
    const options = this.source.options;
    const client = new Client(options.clientInfo ?? DEFAULT_CLIENT_INFO, {
      // Form elicitation only: a URL elicitation would send a person to a page the policy never saw.
      capabilities: { elicitation: { form: {} } },
    });
    const generation: Generation = { client, transport, stderr, inputsKey, established: false, down: false, toolsStale: false };
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
        return await this.elicit(request.params, ended.signal);
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
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      generation.toolsStale = true;
    });
    client.onclose = () => this.lost(generation, 'stopped');
    client.onerror = (error) => {
      if (!generation.down) this.log(`transport error: ${error.message}`);
    };
    this.connecting = client;
    try {
      if (this.closed) throw new Error('the session ended');
      await client.connect(transport, { timeout: options.startTimeoutMs ?? 60_000 });
    } catch (error) {
      generation.down = true;
      await client.close().catch(() => undefined);
      await settle();
      if (isUnauthorized(error)) throw error;
      const why = error instanceof McpError && error.code === ErrorCode.ConnectionClosed ? 'it stopped before it answered' : (error as Error).message;
      throw new Error(`MCP server ${this.name} could not start: ${why}${tail(stderr)}`, { cause: error });
    } finally {
      this.connecting = undefined;
    }
    generation.established = true;
    const pid = transport instanceof StdioClientTransport ? ` (pid ${transport.pid})` : '';
    const info = client.getServerVersion();
    this.log(`connected over ${kind}${pid}${info ? ` to ${info.name} ${info.version}` : ''}`);
    return generation;
  }

  /** The transport closed, or a remote server is gone: the next listing or call starts it again. `why` completes "MCP server x …". */
  private lost(generation: Generation, why: string): void {
    if (generation.down) return;
    generation.down = true;
    // A start that fails is reported by the start itself.
    if (this.closed || !generation.established) return;
    generation.downReason = why;
    this.crashed = true;
    this.lastFailure = `it ${why}${tail(generation.stderr)}`;
    this.log(`stopped: ${why}`);
  }

  /** A 401: the current input values are refused until new ones are stored. */
  private unauthorized(inputsKey: string | undefined, when: string): Error {
    if (inputsKey === undefined) {
      // Nothing a person can enter here would change the answer.
      return new Error(`MCP server ${this.name} answered 401 Unauthorized ${when}: it needs an authorization this extension does not do (OAuth); `
        + 'give it a token in "headers" with an ${input:…} variable instead');
    }
    this.source.rejectedInputs = inputsKey;
    this.log('the server answered 401: a sign-in is needed');
    return new McpSignInRequired(`MCP server ${this.name} needs a sign-in: it answered 401 Unauthorized ${when}`);
  }

  private async readInputs(): Promise<{ values: Map<string, string>; missing: string[]; key: string | undefined }> {
    const values = new Map<string, string>();
    const missing: string[] = [];
    for (const input of this.source.inputs) {
      const value = await this.source.options.inputs?.get(input.id);
      if (value === undefined || value === '') missing.push(input.id);
      else values.set(input.id, value);
    }
    const key = this.source.inputs.length > 0 ? JSON.stringify([...values.entries()]) : undefined;
    return { values, missing, key };
  }

  private describeInput(id: string): string {
    return this.source.inputs.find((i) => i.id === id)?.description ?? id;
  }

  // -------------------------------------------------------------------------------------------
  // Tools

  private async listAll(generation: Generation): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const result = await generation.client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined || cursor === '') break;
    }
    return tools;
  }

  private toRuntimeTools(listed: readonly McpTool[]): RuntimeTool[] {
    const names = new Set<string>();
    const seen = new Set<string>();
    const out: RuntimeTool[] = [];
    for (const tool of listed) {
      if (typeof tool.name !== 'string' || !MCP_TOOL_NAME.test(tool.name)) {
        const shown = JSON.stringify(tool.name) ?? String(tool.name);
        this.log(`ignoring a tool whose name is not an MCP tool name (${MCP_TOOL_NAME.source}): ${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown}`);
        continue;
      }
      if (seen.has(tool.name)) {
        this.log(`ignoring a second tool named ${tool.name}`);
        continue;
      }
      seen.add(tool.name);
      out.push(this.toRuntimeTool(tool, modelFacingName(this.name, tool.name, names)));
    }
    return out;
  }

  private toRuntimeTool(tool: McpTool, name: string): RuntimeTool {
    const id = `${this.source.id}.${tool.name}`;
    // Without `$schema`: it tells a model nothing, and the providers send schemas as given.
    const inputSchema = withoutSchemaUri((tool.inputSchema ?? { type: 'object' }) as Record<string, unknown>);
    const annotations = untrustedAnnotations(tool);
    const connection = this;
    return {
      id,
      kind: 'mcp',
      name,
      description: typeof tool.description === 'string' ? tool.description : (annotations.title ?? ''),
      inputJsonSchema: inputSchema,
      annotations,
      ...(this.signIn ? { signIn: this.signIn } : {}),
      check(input: unknown): InputCheck {
        if (!isObject(input)) {
          return { ok: false, error: `the input of ${tool.name} (${id}) must be a JSON object` };
        }
        const problem = connection.validator.check(id, inputSchema, input, (line) => connection.log(line));
        if (problem !== undefined) return { ok: false, error: `the input of ${tool.name} does not fit its schema: ${problem}` };
        return { ok: true, value: input };
      },
      async run(input: unknown, context: ToolRunContext): Promise<unknown> {
        return await connection.call(tool.name, id, input as Record<string, unknown>, context);
      },
    };
  }

  private async call(toolName: string, toolId: string, input: Record<string, unknown>, context: ToolRunContext): Promise<string> {
    if (this.closed) throw new Error(`the session ended: ${toolId} was not called`);
    const generation = await this.ensure(context.signal);
    const timeoutMs = this.source.options.callTimeoutMs ?? 300_000;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(context.signal.reason);
    if (context.signal.aborted) onAbort();
    else context.signal.addEventListener('abort', onAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    let paused = 0;
    let timedOut = false;
    /** The call has ended: an elicitation that ends later (resume) or late progress must not arm the clock again. */
    let done = false;
    const arm = (): void => {
      clearTimeout(timer);
      timer = undefined;
      if (paused > 0 || done) return;
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new Error(`${toolId} timed out`));
      }, timeoutMs);
      timer.unref?.();
    };
    const running: RunningCall = {
      context,
      pause: () => {
        paused++;
        clearTimeout(timer);
      },
      resume: () => {
        paused--;
        arm();
      },
    };
    this.running.add(running);
    arm();
    try {
      const result = await generation.client.callTool({ name: toolName, arguments: input }, CallToolResultSchema, {
        signal: controller.signal, timeout: NO_TIMEOUT, resetTimeoutOnProgress: true, onprogress: arm,
      });
      return resultText(result as CallToolResult, toolId);
    } catch (error) {
      if (error instanceof ToolReportedError) throw new Error(error.message);
      if (timedOut) throw new Error(`${toolId} sent nothing for ${duration(timeoutMs)} and was stopped`);
      throw await this.failure(error, generation, context.signal, `running ${toolId}`);
    } finally {
      done = true;
      clearTimeout(timer);
      timer = undefined;
      context.signal.removeEventListener('abort', onAbort);
      this.running.delete(running);
    }
  }

  /** An error of a listing or a call, in words a person (or a model) can act on. */
  private async failure(error: unknown, generation: Generation, signal: AbortSignal | undefined, doing: string): Promise<Error> {
    if (this.closed) return new Error(`the session ended while ${doing} on MCP server ${this.name}`);
    if (signal?.aborted) return error instanceof Error ? error : new Error(String(error));
    if (isUnauthorized(error)) {
      generation.down = true;
      await this.stop(generation).catch(() => undefined);
      return this.unauthorized(generation.inputsKey, `while ${doing}`);
    }
    if (this.source.server.type !== 'stdio' && isConnectionError(error)) this.lost(generation, `could not be reached (${(error as Error).message})`);
    if (generation.down) {
      await settle();
      return new Error(`MCP server ${this.name} ${generation.downReason ?? 'stopped'} while ${doing}${tail(generation.stderr)}`);
    }
    const message = error instanceof McpError ? error.message.replace(/^MCP error -?\d+: /, '') : (error as Error)?.message ?? String(error);
    return new Error(`MCP server ${this.name} failed while ${doing}: ${message}`);
  }

  // -------------------------------------------------------------------------------------------
  // Elicitation

  private async elicit(params: Record<string, unknown>, signal: AbortSignal): Promise<ElicitResult> {
    if (signal.aborted) return { action: 'cancel' };
    if (params.mode === 'url') {
      this.log('declined a URL elicitation (not supported)');
      return { action: 'decline' };
    }
    // The server asks on behalf of a call it is running, but the request does not say which: the
    // latest running call that can ask a person answers (a best guess with several calls at once).
    const running = [...this.running].reverse().find((r) => r.context.elicit !== undefined);
    if (running === undefined) {
      this.log('declined an elicitation: no running call of this connection can ask a person');
      return { action: 'decline' };
    }
    const schema = flatSchema(params.requestedSchema);
    if (schema === undefined) {
      this.log('declined an elicitation whose form is not flat (a required field is not a string, number, integer or boolean)');
      return { action: 'decline' };
    }
    running.pause();
    try {
      // The signal closes the person's callback when the server stops waiting for the answer.
      const answer = await running.context.elicit!({
        source: { id: this.source.id, name: this.name },
        message: typeof params.message === 'string' ? params.message : '',
        requestedSchema: schema,
      }, { signal });
      if (signal.aborted) return { action: 'cancel' };
      if (answer.action === 'accept') return { action: 'accept', content: acceptedContent(answer.content, schema) };
      return { action: answer.action };
    } catch (error) {
      this.log(`an elicitation could not be asked: ${(error as Error).message}`);
      return { action: 'cancel' };
    } finally {
      running.resume();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

class ToolReportedError extends Error {}

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

/** What the model receives: text parts joined, other parts summarised, structured content when there is no text. */
function resultText(result: CallToolResult, toolId: string): string {
  const parts: string[] = [];
  let hasText = false;
  for (const part of result.content ?? []) {
    switch (part.type) {
      case 'text':
        hasText = true;
        parts.push(part.text);
        break;
      case 'image':
      case 'audio':
        parts.push(`[${part.type} ${part.mimeType}, ${base64Bytes(part.data)} bytes]`);
        break;
      case 'resource': {
        const r = part.resource;
        if ('text' in r && typeof r.text === 'string') {
          hasText = true;
          parts.push(`[resource ${r.uri}]\n${r.text}`);
        } else parts.push(`[resource ${r.uri}${r.mimeType ? ` ${r.mimeType}` : ''}, ${base64Bytes((r as { blob?: string }).blob ?? '')} bytes]`);
        break;
      }
      case 'resource_link':
        parts.push(`[resource link ${part.uri}${part.name ? ` (${part.name})` : ''}]`);
        break;
      default:
        parts.push(`[${(part as { type?: string }).type ?? 'unknown'} content]`);
    }
  }
  if (!hasText && result.structuredContent !== undefined) parts.unshift(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  if (result.isError === true) throw new ToolReportedError(text === '' ? `${toolId} reported an error` : text);
  return text;
}

function base64Bytes(data: string): number {
  const clean = data.replace(/[^A-Za-z0-9+/]/g, '');
  return Math.floor((clean.length * 3) / 4);
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

/**
 * Checks inputs against the tool's inputSchema with the ajv the SDK ships. A schema ajv cannot
 * compile is not checked here (the server still checks), so a tool never becomes unusable.
 */
class ToolInputValidator {
  private ajv: AjvJsonSchemaValidator | undefined;
  /** By schema object: a listing after a restart brings new schemas, compiled again. */
  private readonly compiled = new WeakMap<object, ((input: unknown) => { valid: boolean; errorMessage?: string }) | null>();

  check(id: string, schema: Record<string, unknown>, input: unknown, log: (line: string) => void): string | undefined {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      try {
        this.ajv ??= new AjvJsonSchemaValidator();
        // A server's `$id` must not collide with another tool's, and ajv's default draft reads 2020-12 schemas well enough.
        const { $id: _id, $schema: _schema, ...rest } = schema;
        validate = this.ajv.getValidator(rest as never) as (input: unknown) => { valid: boolean; errorMessage?: string };
      } catch (error) {
        log(`the input schema of ${id} is not checked here (ajv: ${(error as Error).message}); the server checks it`);
        validate = null;
      }
      this.compiled.set(schema, validate);
    }
    if (validate === null) return undefined;
    try {
      const result = validate(input);
      return result.valid ? undefined : (result.errorMessage ?? 'invalid input');
    } catch {
      return undefined;
    }
  }
}

function isUnauthorized(error: unknown): boolean {
  if (error instanceof UnauthorizedError) return true;
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 401;
}

/** A remote server that is not there (refused, reset, gone), or a session it no longer knows (404). */
function isConnectionError(error: unknown): boolean {
  if (error instanceof StreamableHTTPError && error.code === 404) return true;
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return true;
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = cause?.code ?? (error as { code?: unknown } | undefined)?.code;
  return error instanceof TypeError || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(String(code));
}

function tail(lines: readonly string[]): string {
  if (lines.length === 0) return '';
  return `; its last output:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

/** Lets the last stderr output of a stopped process arrive before it is quoted. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return await promise;
  signal.throwIfAborted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}
