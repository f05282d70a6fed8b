// The workspace's MCP servers (.vscode/mcp.json) as tool sources for the sessions this window
// starts. Starting a server runs a command (or calls a URL) the workspace chose, which no policy
// rule judges: it needs a trusted workspace and a person's yes, asked again when its
// configuration changes. The values of a server's `${input:…}` variables are kept in
// SecretStorage per workspace, server and destination, so a token typed for one server is never
// handed to another (or to the same name pointed elsewhere).
import * as vscode from 'vscode';
import { loadMcpConfig, type McpInputs, type McpServerConfig } from '../../mcp/mcpConfig.js';
import { describeServerLaunch, serverFingerprint } from '../../mcp/mcpServerLaunch.js';
import { mcpToolSources, type McpToolSource } from '../../mcp/mcpToolSource.js';
import { McpToolPins, type DefinitionChange } from '../../mcp/mcpToolPins.js';
import { describeDefinitionChange } from '../../mcp/mcpToolDefinition.js';
import { MCP_CONSENT_KEY } from '../models/apiKeys.js';
import type { Log } from '../basics/log.js';


export class WorkspaceMcpServers {
  /** The sources made for the latest session start, to find a server's inputs at sign-in. */
  private latest: McpToolSource[] = [];
  /** The tools' definitions pinned for this workspace, in the user's state folder (shared with `agentpolicy`). */
  readonly pins: McpToolPins;

  constructor(
    private readonly workspaceFolder: string,
    private readonly secrets: vscode.SecretStorage,
    private readonly workspaceState: vscode.Memento,
    private readonly log: Log,
    private readonly showDocument: (markdown: string) => Promise<void>,
  ) {
    this.pins = new McpToolPins(workspaceFolder);
    this.pins.onChanged((changes) => {
      this.waiting.push(...changes);
      this.announce(changes);
    });
  }

  /** Changed definitions announced and not accepted yet: Review Changed MCP Tools shows them again. */
  private waiting: DefinitionChange[] = [];

  /** Agent Policy: Review Changed MCP Tools: each server's waiting changes, announced again; false when none wait. */
  reviewChanges(): boolean {
    const servers = [...new Set(this.waiting.map((c) => c.server))];
    for (const server of servers) this.announce(this.waiting.filter((c) => c.server === server));
    return servers.length > 0;
  }

  /**
   * One notification per listing that found changed definitions (docs/mcp.md, "MCP tools
   * pinned"): Accept pins exactly the definitions it names; Show Changes opens what changed and
   * offers Accept again. Nothing the server sent is a link or a button here.
   */
  private announce(changes: readonly DefinitionChange[]): void {
    const server = changes[0]!.server;
    const list = changes.slice(0, 3).map((c) => `${c.tool} (${c.summary})`).join('; ') + (changes.length > 3 ? '; …' : '');
    this.log.warn(`the MCP server ${server} offers tool definitions that were not approved: ${list}; their calls ask until accepted`);
    const [accept, show] = [vscode.l10n.t('Accept'), vscode.l10n.t('Show Changes')];
    const message = vscode.l10n.t('Agent Policy: the MCP server "{0}" changed {1} tool definition(s) since you approved it: {2}. Their calls ask until you accept.', server, changes.length, list);
    void vscode.window.showWarningMessage(message, accept, show).then(async (picked) => {
      if (picked === accept) {
        this.pins.accept(changes);
        this.waiting = this.waiting.filter((c) => !changes.includes(c));
        this.log.info(`accepted ${changes.length} changed tool definition(s) of the MCP server ${server}: ${changes.map((c) => c.tool).join(', ')}`);
      } else if (picked === show) {
        const text = changes.map((c) => describeDefinitionChange(c.toolId, c.before, c.after)).join('\n\n');
        // Read-only: nothing to save, nothing the server wrote becomes a link.
        await this.showDocument(`# ${vscode.l10n.t('Changed tool definitions of the MCP server "{0}"', server)}\n\n\`\`\`diff\n${text.replaceAll('```', '`\u200b``')}\n\`\`\`\n`);
        this.announce(changes);
      }
    });
  }

  /** One key per workspace, server, destination and input. */
  private secretKey(server: McpServerConfig, inputId: string): string {
    return `agentPolicy.mcpInput:${this.workspaceFolder}:${server.name}:${destinationOf(server)}:${inputId}`;
  }

  private inputsFor(server: McpServerConfig): McpInputs {
    return { get: (id) => Promise.resolve(this.secrets.get(this.secretKey(server, id))) };
  }

  /** Reads mcp.json afresh (servers start only when an agent that names them runs, and only once allowed). */
  async sources(): Promise<McpToolSource[]> {
    const config = await loadMcpConfig(this.workspaceFolder);
    for (const d of config.diagnostics) this.log.warn(`${config.file}: ${d.message}`);
    this.latest = mcpToolSources(config, (server) => ({
      workspaceFolder: this.workspaceFolder,
      inputs: this.inputsFor(server),
      clientInfo: { name: 'agent-policy-vscode', version: '0.1.0' },
      log: (line) => this.log.info(line),
      confirmStart: (s) => this.confirmStart(s),
      pins: this.pins,
    }));
    return this.latest;
  }

  /** Asks once per configuration (as written) whether the server may start; untrusted workspaces never start one. */
  private async confirmStart(server: McpServerConfig): Promise<boolean> {
    const launch = describeServerLaunch(server);
    if (!vscode.workspace.isTrusted) {
      this.log.warn(`the MCP server ${server.name} was not started: the workspace is not trusted (${launch})`);
      return false;
    }
    const fingerprint = serverFingerprint(server);
    const allowed = this.workspaceState.get<string[]>(MCP_CONSENT_KEY, []);
    if (allowed.includes(fingerprint)) return true;
    const start = vscode.l10n.t('Start Server');
    const how = server.type === 'stdio' ? vscode.l10n.t('It runs: {0}', launch) : vscode.l10n.t('It connects to: {0}', launch);
    const picked = await vscode.window.showWarningMessage(
      vscode.l10n.t('Agent Policy: start the MCP server "{0}" from {1}?', server.name, '.vscode/mcp.json'),
      { modal: true, detail: `${how}\n\n${vscode.l10n.t("The agent's calls to its tools are judged by the policy; starting it is not. You are asked again if its configuration changes.")}` },
      start,
    );
    if (picked !== start) {
      this.log.warn(`the MCP server ${server.name} was not started: the person did not allow it`);
      return false;
    }
    await this.workspaceState.update(MCP_CONSENT_KEY, [...allowed, fingerprint]);
    return true;
  }

  /**
   * Signs in to a server by asking for the inputs its configuration uses (tokens and the like),
   * naming where they go, and storing them. False when the person escaped: nothing is stored then.
   */
  async signIn(sourceId: string): Promise<boolean> {
    const source = this.latest.find((s) => s.id === sourceId);
    if (!source) return true;
    const values: Array<[string, string]> = [];
    for (const input of source.inputs) {
      const value = await vscode.window.showInputBox({
        title: vscode.l10n.t('Agent Policy: sign in to the MCP server {0}', source.name),
        prompt: vscode.l10n.t('{0} — sent only to {1}', input.description, destinationOf(source.server)),
        // Always masked: whether an input is secret is the workspace's word.
        password: true,
        ignoreFocusOut: true,
      });
      if (value === undefined) return false;
      values.push([input.id, value]);
    }
    for (const [id, value] of values) await this.secrets.store(this.secretKey(source.server, id), value);
    this.log.info(`stored ${values.length} input(s) for the MCP server ${source.name}`);
    return true;
  }
}

/** Where a server's inputs go: its URL, or the command it runs (as written, variables unresolved). */
function destinationOf(server: McpServerConfig): string {
  return server.type === 'stdio' ? [server.command, ...server.args].join(' ') : server.url;
}
