// What sessions need beyond the engine: model providers (the openai client) and MCP servers
// (the MCP SDK). extension.ts imports this module dynamically, so the bundle evaluates them at
// the first session rather than at activation.
import type * as vscode from 'vscode';
import type { ModelFactory } from '../../runtime/agents/workspaceAgents.js';
import type { Log } from '../basics/log.js';
import { WorkspaceMcpServers } from './mcpServers.js';
import { workspaceModelFactory } from '../models/models.js';

export interface SessionDeps {
  /** Makes the model an agent names (scripted, OpenAI-compatible, VS Code language models). */
  models: ModelFactory;
  mcp: WorkspaceMcpServers;
}

/** `showDocument`: a read-only Markdown document (the window's explanations). */
export function createSessionDeps(context: vscode.ExtensionContext, log: Log, workspaceFolder: string, showDocument: (markdown: string) => Promise<void>): SessionDeps {
  return {
    models: workspaceModelFactory({ secrets: context.secrets, log: (line) => log.info(line) }),
    mcp: new WorkspaceMcpServers(workspaceFolder, context.secrets, context.workspaceState, log, showDocument),
  };
}
