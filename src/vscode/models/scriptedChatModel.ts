// What our scripted model answers when VS Code sends it a request itself (a `vscode-lm:agent-policy/
// scripted` agent, another extension, or a prompt in the Chat view without @agents). In @agents
// sessions it is never asked: chatModelReference() maps it to each agent's own scenario.
//
// Here it plays the embedded default scenario (`scripted:default`, agent main: list the
// workspace, read README.md, write AGENT_NOTES.md, say so) as far as the request offers the tools
// a move calls. A request that does not (the Chat view's own agent has other tools), or that goes
// past the script, gets a plain answer saying what this model is. No `vscode` import.
import { ModelError, type ModelResponse } from '../../runtime/model/model.js';
import { ScriptedModel } from '../../runtime/model/scripted.js';
import { DEFAULT_AGENT_NAME, DEFAULT_MODEL, DEFAULT_SCENARIO } from '../../runtime/agents/workspaceAgents.js';
import type { RuntimeChatRequest } from './chatModelMessages.js';

let model: ScriptedModel | undefined;

export async function scriptedChatAnswer(request: RuntimeChatRequest, signal: AbortSignal): Promise<ModelResponse> {
  model ??= new ScriptedModel(DEFAULT_SCENARIO as never, { id: DEFAULT_MODEL });
  let response: ModelResponse;
  try {
    response = await model.respond({ agent: DEFAULT_AGENT_NAME, sessionId: 'chat', ...request, signal });
  } catch (error) {
    if (error instanceof ModelError) return { text: aboutThisModel('the script has no further move'), toolCalls: [] };
    throw error;
  }
  const offered = new Set(request.tools.map((t) => t.name));
  const missing = response.toolCalls.map((c) => c.name).filter((name) => !offered.has(name));
  if (missing.length > 0) return { text: aboutThisModel(`its next move calls ${missing.join(', ')}, which this request does not offer`), toolCalls: [] };
  return response;
}

export function aboutThisModel(why: string): string {
  return `I am Agent Policy's scripted model: I play a fixed script, offline, for Agent Policy's agent sessions, and cannot answer this (${why}). `
    + 'To talk to this workspace\'s agents, type @agents in the Chat view; to chat about anything, pick another model.';
}
