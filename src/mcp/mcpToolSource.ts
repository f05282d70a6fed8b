// One MCP server of `.vscode/mcp.json` as a tool source of agent sessions. Each session tree gets
// its own connection (McpConnection), which starts the server only when its tools are first
// listed. The server's tools become runtime tools with stable ids `mcp.<server>.<tool>`; what the
// server says about them (descriptions, annotations) is untrusted and only ever loosens what a
// policy author chose through `effectiveHints`. The source remembers, for all its connections,
// the person's consent to start the server and the credentials the server refused.
import type { ToolSource, ToolSourceContext } from '../runtime/tools/tools.js';
import type { McpConfig, McpServerConfig } from './mcpConfig.js';
import { McpConnection, type McpConnectionSource } from './mcpConnection.js';
import { describeServerLaunch, serverFingerprint } from './mcpServerLaunch.js';
import { inputInfosOf, type McpInputInfo } from './mcpSignIn.js';
import type { McpSourceOptions } from './mcpSourceOptions.js';

export class McpToolSource implements ToolSource, McpConnectionSource {
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
    this.inputs = inputInfosOf(server, options.inputDeclarations);
  }

  connect(context: ToolSourceContext): McpConnection {
    const connection = new McpConnection(this, this.options.workspaceFolder ?? context.workspaceFolder, () => this.live.delete(connection), context.sandbox, context.audit);
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
