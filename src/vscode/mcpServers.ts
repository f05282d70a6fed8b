// The workspace's MCP servers (.vscode/mcp.json) as tool sources for the sessions this window
// starts, and the values of their `${input:…}` variables, kept in SecretStorage per workspace.
import * as vscode from 'vscode';
import { loadMcpConfig, type McpConfig, type McpInputs } from '../mcp/mcpConfig.js';
import { mcpToolSources, type McpToolSource } from '../mcp/mcpSource.js';
import type { Log } from './log.js';

export class WorkspaceMcpServers {
  /** The sources made for the latest session start, to find a server's inputs at sign-in. */
  private latest: McpToolSource[] = [];
  readonly inputs: McpInputs;

  constructor(
    private readonly workspaceFolder: string,
    private readonly secrets: vscode.SecretStorage,
    private readonly log: Log,
  ) {
    this.inputs = { get: (id) => Promise.resolve(secrets.get(this.secretKey(id))) };
  }

  /** One key per workspace and input: a token typed for one workspace's server is not handed to another's. */
  private secretKey(inputId: string): string {
    return `agentPolicy.mcpInput:${this.workspaceFolder}:${inputId}`;
  }

  /** Reads mcp.json afresh (servers start only when an agent that names them runs). */
  async sources(): Promise<{ sources: McpToolSource[]; config: McpConfig }> {
    const config = await loadMcpConfig(this.workspaceFolder);
    for (const d of config.diagnostics) this.log.warn(`${config.file}: ${d.message}`);
    this.latest = mcpToolSources(config, {
      workspaceFolder: this.workspaceFolder,
      inputs: this.inputs,
      clientInfo: { name: 'agent-policy-vscode', version: '0.1.0' },
      log: (line) => this.log.info(line),
    });
    return { sources: this.latest, config };
  }

  /**
   * Signs in to a server by asking for the inputs its configuration uses (tokens and the like)
   * and storing them. False when the person escaped: nothing is stored then.
   */
  async signIn(sourceId: string): Promise<boolean> {
    const source = this.latest.find((s) => s.id === sourceId);
    if (!source) return true;
    const values: Array<[string, string]> = [];
    for (const input of source.inputs) {
      const value = await vscode.window.showInputBox({
        title: `Agent Policy: sign in to the MCP server ${source.name}`,
        prompt: input.description,
        password: input.password,
        ignoreFocusOut: true,
      });
      if (value === undefined) return false;
      values.push([input.id, value]);
    }
    for (const [id, value] of values) await this.secrets.store(this.secretKey(id), value);
    this.log.info(`stored ${values.length} input(s) for the MCP server ${source.name}`);
    return true;
  }
}
