// One session tree's connection to an MCP server and its lifecycle: the server is started when its
// tools are first listed (after sign-in and the person's consent), started again after a crash
// (a few times within a window), and stopped when the connection closes. Tool calls run here,
// with their clock and their errors in words a person (or a model) can act on.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema, ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { RuntimeTool, ServerSandboxHost, SignInSource, SourceAuditLine, ToolConnection, ToolRunContext } from '../runtime/tools/tools.js';
import { CallClock } from './mcpCallClock.js';
import type { McpServerConfig } from './mcpConfig.js';
import { elicit, handleElicitations, type RunningCall } from './mcpElicitation.js';
import { ToolInputValidator } from './mcpInputValidator.js';
import { SandboxedStdioTransport } from './mcpSandboxTransport.js';
import { describeServerLaunch, serverCommandLine } from './mcpServerLaunch.js';
import {
  isUnauthorized, mcpSignInSource, McpSignInRequired, readInputValues, signInNeeded, unauthorizedError, type McpSignInState,
} from './mcpSignIn.js';
import type { McpSourceOptions } from './mcpSourceOptions.js';
import { listAllTools, toRuntimeTools, type McpToolHost } from './mcpToolMapping.js';
import { heldDefinitions, type HeldTools } from './mcpToolHeld.js';
import type { DefinitionChange } from './mcpToolPins.js';
import { resultText, ToolReportedError } from './mcpToolResult.js';
import { isConnectionError, olderSseServerStatus, sandboxedStdioTransport, sseTransport, stdioTransport, streamableHttpTransport } from './mcpTransports.js';
import { resolveServer } from './mcpVariables.js';

/** What a connection needs of its tool source (an McpToolSource, which creates it). */
export interface McpConnectionSource extends McpSignInState {
  readonly server: McpServerConfig;
  readonly options: McpSourceOptions;
  /** Resolves once the person allowed the server to start; throws when they did not. */
  ensureStartAllowed(): Promise<void>;
}

const DEFAULT_CLIENT_INFO = { name: 'agent-policy', version: '0.1.0' };
/** setTimeout's largest delay: the SDK's own request timeout is kept out of the way with it. */
const NO_TIMEOUT = 2 ** 31 - 1;

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
  /** What the listed tools check their inputs with and run through. */
  private readonly toolHost: McpToolHost;
  /** Pin audit lines written by this connection (event, tool, digest). */
  private readonly audited = new Set<string>();
  private stopWatchingPins: (() => void) | undefined;
  /** ToolConnection.toolChanges: list_changed notifications and changed definitions accepted. */
  toolChanges = 0;

  constructor(
    private readonly source: McpConnectionSource,
    private readonly workspaceFolder: string,
    private readonly onClosed: () => void,
    /** The session tree's sandbox (serverSandbox.ts): a stdio server the policy's `sandboxServers` names runs in it. */
    private readonly sandboxHost?: ServerSandboxHost,
    /** The session tree's audit log (pins, changes and acceptances of its tools' definitions). */
    private readonly audit?: (line: SourceAuditLine) => void,
  ) {
    const signIn = mcpSignInSource(source);
    if (signIn !== undefined) this.signIn = signIn;
    this.toolHost = {
      sourceId: source.id,
      serverName: source.name,
      ...(signIn !== undefined ? { signIn } : {}),
      validator: new ToolInputValidator(),
      log: (line) => this.log(line),
      call: (toolName, toolId, input, context) => this.call(toolName, toolId, input, context),
    };
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
    if (transport instanceof SandboxedStdioTransport) return transport.pid;
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
        const listed = await listAllTools(generation.client);
        const held = this.pinned(listed);
        generation.tools = toRuntimeTools(listed, held === undefined ? this.toolHost : { ...this.toolHost, held: (name) => held.get(name) });
        return generation.tools;
      } catch (error) {
        throw await this.failure(error, generation, undefined, 'listing its tools');
      } finally {
        generation.listing = undefined;
      }
    })();
    return await abortable(generation.listing, signal);
  }

  /**
   * The listed tools against the workspace's pins (mcpToolPins.ts), when there are pins: the
   * tools held for a changed definition, each audited once per connection and definition.
   */
  private pinned(listed: Parameters<typeof heldDefinitions>[2]): HeldTools | undefined {
    const pins = this.source.options.pins;
    if (pins === undefined) return undefined;
    this.stopWatchingPins ??= pins.onAccepted((accepted) => this.accepted(accepted));
    return heldDefinitions(pins, this.name, listed, {
      log: (line) => this.log(line),
      audit: (line) => {
        const key = `${line.event}\n${line.tool}\n${line.definitionDigest}`;
        if (this.audited.has(key)) return;
        this.audited.add(key);
        this.audit?.(line);
      },
    });
  }

  /** A person accepted changed definitions: those of this server's tools are audited here, and the tools listed again. */
  private accepted(changes: readonly DefinitionChange[]): void {
    const mine = changes.filter((c) => c.server === this.name && this.audited.has(`mcp-tool-changed\n${c.toolId}\n${c.digest}`));
    if (mine.length === 0) return;
    for (const c of mine) this.audit?.({ event: 'mcp-tool-accepted', tool: c.toolId, definitionDigest: c.digest, ...(c.pinnedDigest !== undefined ? { pinnedDigest: c.pinnedDigest } : {}) });
    if (this.current !== undefined) this.current.toolsStale = true;
    this.toolChanges++;
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    this.stopWatchingPins?.();
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

    const values = await readInputValues(this.source);
    const signInRequired = signInNeeded(this.source, values);
    if (signInRequired !== undefined) throw signInRequired;

    let server: McpServerConfig;
    try {
      server = resolveServer(this.source.server, { workspaceFolder: this.workspaceFolder, inputs: values.values });
    } catch (error) {
      throw new Error(`MCP server ${this.name} cannot start: ${(error as Error).message}`);
    }

    // The policy's `sandboxServers`, read at each start: a server it names never runs outside the
    // sandbox, so where there is none it is not started at all (nor is anyone asked to start it).
    const sandboxed = server.type === 'stdio' ? this.sandboxHost?.required(this.name) : undefined;
    if (sandboxed !== undefined) {
      const missing = this.sandboxHost?.unavailable();
      if (missing !== undefined) {
        this.log(`not started: it must run sandboxed (${sandboxed}), and there is no sandbox here: ${missing}`);
        throw new Error(`MCP server ${this.name} was not started: it must run sandboxed (${sandboxed}), and there is no sandbox here: ${missing}`);
      }
    }

    // A person's consent, before anything runs or connects. A refusal is not a crash.
    await abortable(this.source.ensureStartAllowed(), this.closedController.signal);
    if (this.closed) throw new Error(`the session ended: MCP server ${this.name} is closed`);

    try {
      const generation = await this.startServer(server, values.key, sandboxed);
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

  private async startServer(server: McpServerConfig, inputsKey: string | undefined, sandboxed: string | undefined): Promise<Generation> {
    if (server.type === 'stdio' && sandboxed !== undefined && this.sandboxHost !== undefined) {
      return await this.startSandboxed(server, inputsKey, this.sandboxHost, sandboxed);
    }
    if (server.type === 'stdio') {
      const { transport, stderr } = await stdioTransport(server, this.workspaceFolder, (line) => this.log(line));
      // As written in the config: resolved arguments may hold the values of inputs (tokens).
      this.log(`starting ${describeServerLaunch(this.source.server)}`);
      return await this.connectWith(transport, inputsKey, stderr, 'stdio');
    }
    if (server.type === 'sse') return await this.connectWith(sseTransport(server), inputsKey, [], 'sse');
    try {
      return await this.connectWith(streamableHttpTransport(server), inputsKey, [], 'http');
    } catch (error) {
      const status = olderSseServerStatus(error);
      if (status === undefined) throw error;
      this.log(`streamable HTTP answered ${status}; trying SSE`);
      return await this.connectWith(sseTransport(server), inputsKey, [], 'sse');
    }
  }

  /**
   * Starts a stdio server in the sandbox (docs/mcp.md, "Sandboxed servers"): its connections are
   * judged for its command line as written, a question goes to the session whose call of it runs;
   * once its process ends, the run's proxy stops and its questions close.
   */
  private async startSandboxed(server: McpServerConfig & { type: 'stdio' }, inputsKey: string | undefined, host: ServerSandboxHost, reason: string): Promise<Generation> {
    const prepared = await host.prepare({
      server: this.name, command: serverCommandLine(this.source.server), cwd: server.cwd ?? this.workspaceFolder, reason,
      caller: () => {
        const calls = [...this.running];
        const latest = calls[calls.length - 1]?.context;
        return latest ? { sessionId: latest.sessionId, turnId: latest.turnId } : undefined;
      },
    });
    try {
      const { transport, stderr } = await sandboxedStdioTransport(server, this.workspaceFolder, prepared.launch, (line) => this.log(line), () => {
        void prepared.close().catch((error: unknown) => this.log(`after it ended: ${(error as Error)?.message ?? String(error)}`));
      });
      // Its audit line and transcript line before it runs: a start the audit log cannot record does not happen.
      prepared.started();
      this.log(`starting ${describeServerLaunch(this.source.server)}, ${prepared.description}`);
      return await this.connectWith(transport, inputsKey, stderr, 'stdio (sandboxed)');
    } catch (error) {
      await prepared.close().catch(() => undefined);
      throw error;
    }
  }

  private async connectWith(transport: Transport, inputsKey: string | undefined, stderr: string[], kind: string): Promise<Generation> {
    const options = this.source.options;
    const client = new Client(options.clientInfo ?? DEFAULT_CLIENT_INFO, {
      // Form elicitation only: a URL elicitation would send a person to a page the policy never saw.
      capabilities: { elicitation: { form: {} } },
    });
    const generation: Generation = { client, transport, stderr, inputsKey, established: false, down: false, toolsStale: false };
    handleElicitations(client, (params, signal) => elicit(
      { source: { id: this.source.id, name: this.name }, running: this.running, log: (line) => this.log(line) }, params, signal));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      generation.toolsStale = true;
      this.toolChanges++;
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
      const why = transport instanceof SandboxedStdioTransport && !transport.sandboxSetUp && transport.pid === undefined
        ? `the sandbox could not be set up (${(error as Error).message})`
        : error instanceof McpError && error.code === ErrorCode.ConnectionClosed ? 'it stopped before it answered' : (error as Error).message;
      throw new Error(`MCP server ${this.name} could not start: ${why}${tail(stderr)}`, { cause: error });
    } finally {
      this.connecting = undefined;
    }
    generation.established = true;
    const pid = transport instanceof StdioClientTransport || transport instanceof SandboxedStdioTransport ? ` (pid ${transport.pid})` : '';
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
    if (inputsKey !== undefined) {
      this.source.rejectedInputs = inputsKey;
      this.log('the server answered 401: a sign-in is needed');
    }
    return unauthorizedError(this.name, inputsKey, when);
  }

  // -------------------------------------------------------------------------------------------
  // Calling

  private async call(toolName: string, toolId: string, input: Record<string, unknown>, context: ToolRunContext): Promise<string> {
    if (this.closed) throw new Error(`the session ended: ${toolId} was not called`);
    const generation = await this.ensure(context.signal);
    const timeoutMs = this.source.options.callTimeoutMs ?? 300_000;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(context.signal.reason);
    if (context.signal.aborted) onAbort();
    else context.signal.addEventListener('abort', onAbort, { once: true });
    const clock = new CallClock(timeoutMs, () => controller.abort(new Error(`${toolId} timed out`)));
    const running: RunningCall = { context, pause: () => clock.pause(), resume: () => clock.resume() };
    this.running.add(running);
    clock.arm();
    try {
      const result = await generation.client.callTool({ name: toolName, arguments: input }, CallToolResultSchema, {
        signal: controller.signal, timeout: NO_TIMEOUT, resetTimeoutOnProgress: true, onprogress: clock.arm,
      });
      return resultText(result as CallToolResult, toolId);
    } catch (error) {
      if (error instanceof ToolReportedError) throw new Error(error.message);
      if (clock.timedOut) throw new Error(`${toolId} sent nothing for ${duration(timeoutMs)} and was stopped`);
      throw await this.failure(error, generation, context.signal, `running ${toolId}`);
    } finally {
      clock.stop();
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
}

// ---------------------------------------------------------------------------------------------
// Helpers

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
