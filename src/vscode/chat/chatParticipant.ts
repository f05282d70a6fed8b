// `@agents` in VS Code's Chat view: a message starts or continues a hosted session (the same
// SessionHost as Start Agent Session, so the session is in the Open Callbacks tree, the audit log
// and the transcript), and the response follows it live: the agent's text, each tool call with its
// decision and a link to the deciding rule, subagents, and a card with buttons for each ask, which
// an answer from any surface settles. What is shown is chatStream.ts's; which session, chatSessions.ts's.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { HostedSession } from '../../runtime/host/sessionHost.js';
import { loadWorkspaceAgents } from '../../runtime/agents/workspaceAgents.js';
import { choiceLabel, notificationChoices } from '../asks/answering.js';
import { chatModelReference } from '../models/chatModels.js';
import { loadAgentsForSession, sessionStartOptions, type CommandContext } from '../sessions/commands.js';
import { followupsFor, keptCall, metadataOf, planRequest, type ChatMetadata, type LastCall } from './chatSessions.js';
import { cardParts, CHAT_TEXTS, chatParts, type ChatPart, type ChatStreamContext } from './chatStream.js';

export const PARTICIPANT_ID = 'agentPolicy.agents';

export function registerChatParticipant(ctx: CommandContext, extensionUri: vscode.Uri): vscode.Disposable {
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, async (request, context, stream, token) => {
    try {
      return await handle(ctx, request, context, stream, token);
    } catch (error) {
      // A refused continuation (still running, cancelled meanwhile), an agent that cannot start: said in the chat.
      const message = error instanceof Error ? error.message : String(error);
      ctx.log.error('chat: the request failed', error);
      return { errorDetails: { message: vscode.l10n.t('Agent Policy: {0}', message) } };
    }
  });
  participant.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'icon.png');
  participant.followupProvider = { provideFollowups: (result) => followupsFor(metadataOf(result)) };
  return participant;
}

async function handle(ctx: CommandContext, request: vscode.ChatRequest, context: vscode.ChatContext, stream: vscode.ChatResponseStream, token: vscode.CancellationToken): Promise<vscode.ChatResult> {
  // The walkthrough's "talk to an agent" step completes on this.
  void vscode.commands.executeCommand('setContext', 'agentPolicy.chatUsed', true);
  // Names only (no models, no MCP servers): which agent a message goes to.
  const agents = loadWorkspaceAgents({ workspaceFolder: ctx.workspaceFolder }).agents;
  const plan = planRequest({
    command: request.command,
    prompt: request.prompt,
    history: context.history,
    agents: agents.map((a) => a.name),
    stateOf: (id) => ctx.host.get(id)?.state,
  });
  switch (plan.kind) {
    case 'empty':
      stream.markdown(CHAT_TEXTS.empty);
      return {};
    case 'list-agents':
      stream.markdown(CHAT_TEXTS.agentsList(agents.map((a) => ({ name: a.name, about: a.instructions })), plan.unknown));
      return {};
    case 'busy':
      stream.markdown(CHAT_TEXTS.busy(plan.sessionId));
      return { metadata: { sessionId: plan.sessionId, agent: plan.agent } satisfies ChatMetadata };
    case 'explain':
      return explainLast(plan.metadata, stream);
    case 'callbacks':
      return showOpenCallbacks(ctx, plan.metadata, stream);
    case 'rule':
      return addRule(ctx, plan.metadata, stream);
    case 'continue': {
      const hosted = ctx.host.continue(plan.sessionId, plan.prompt);
      ctx.log.info(`chat: message ${hosted.turns} to session ${hosted.id} of ${hosted.agent}: ${plan.prompt}`);
      return follow(ctx, hosted, stream, token);
    }
    case 'start': {
      if (plan.note) stream.markdown(`${plan.note === 'gone' ? CHAT_TEXTS.gone : CHAT_TEXTS.wasCancelled}\n\n`);
      // The model picked in the Chat view: our scripted model keeps the agent's own (undefined);
      // a model whose fields make no reference is refused, saying so, below in the chat.
      const modelOverride = chatModelReference(request.model);
      const hosted = await startChatSession(ctx, plan.agent, plan.prompt, modelOverride);
      if (!hosted) return {};
      return follow(ctx, hosted, stream, token);
    }
  }
}

/**
 * Starts a hosted session of the workspace agent `agentName` with this prompt. `modelOverride`: a
 * model reference its agents play instead of their own (the Chat view's model picker); undefined
 * keeps the agent's configured model.
 */
export async function startChatSession(ctx: CommandContext, agentName: string, prompt: string, modelOverride: string | undefined): Promise<HostedSession | undefined> {
  const loaded = await loadAgentsForSession(ctx, modelOverride);
  const agent = loaded?.agents.find((a) => a.name === agentName);
  if (!agent) return undefined;
  await ctx.ready();
  const hosted = await ctx.host.start(agent, prompt, sessionStartOptions(ctx));
  ctx.log.info(`chat: started session ${hosted.id} of ${hosted.agent}${modelOverride ? ` on ${modelOverride}` : ''}: ${prompt}`);
  return hosted;
}

/**
 * Streams the session's latest turn until it ends. Stop in the Chat view cancels the session (as
 * Cancel Agent Session does). The result's metadata names the session: the next message continues it.
 */
async function follow(ctx: CommandContext, hosted: HostedSession, stream: vscode.ChatResponseStream, token: vscode.CancellationToken): Promise<vscode.ChatResult> {
  const turnId = hosted.currentTurnId;
  const first = hosted.turns === 1;
  stream.markdown(`${CHAT_TEXTS.sessionHeader(hosted.agent, hosted.id, hosted.turns)}\n\n`);
  const streamContext = chatStreamContext(ctx, hosted.id);
  let last: LastCall | undefined;
  const stop = token.onCancellationRequested(() => void ctx.host.cancel(hosted.id));
  try {
    // Events from the session's start: a later message's response begins at its own turn.
    let started = first;
    for await (const e of hosted.session.events()) {
      if (!started) {
        started = e.type === 'turn-started' && e.sessionId === hosted.id && e.turnId === turnId;
        continue;
      }
      if (e.type === 'tool-call') last = keptCall({ toolId: e.toolId, agent: e.agent, decision: e.effective, input: e.input });
      if (e.type === 'callback-opened' && e.callback.type === 'approval' && last?.toolId === e.callback.request.tool.id) last = { ...last, callbackId: e.callback.id };
      for (const part of chatParts(e, streamContext)) write(stream, part, ctx.workspaceFolder);
      if (e.type === 'turn-ended' && e.sessionId === hosted.id && e.turnId === turnId) break;
      if (token.isCancellationRequested) break;
    }
  } finally {
    stop.dispose();
  }
  const metadata: ChatMetadata = { sessionId: hosted.id, agent: hosted.agent, ...(last ? { lastCall: last } : {}) };
  return { metadata };
}

function chatStreamContext(ctx: CommandContext, rootId: string): ChatStreamContext {
  return {
    rootId,
    viaOf: (id) => ctx.host.viaOf(id),
    choicesFor: (c) => notificationChoices(c.request).buttons,
    labelOf: choiceLabel,
  };
}

function write(stream: vscode.ChatResponseStream, part: ChatPart, workspaceFolder: string): void {
  switch (part.kind) {
    case 'markdown':
      stream.markdown(part.inline ? part.value : `${part.value}\n\n`);
      return;
    case 'agent-text':
      // The model's text: its own untrusted markdown part, never trusted for command links.
      stream.markdown(new vscode.MarkdownString(`${part.value}\n\n`));
      return;
    case 'rule': {
      const file = path.isAbsolute(part.file) ? part.file : path.join(workspaceFolder, part.file);
      stream.anchor(new vscode.Location(vscode.Uri.file(file), new vscode.Position(Math.max(0, part.line - 1), 0)), part.title);
      stream.markdown('\n\n');
      return;
    }
    case 'buttons':
      for (const b of part.buttons) stream.button({ command: b.command, title: b.title, arguments: [b.argument] });
      return;
  }
}

function explainLast(metadata: ChatMetadata | undefined, stream: vscode.ChatResponseStream): vscode.ChatResult {
  const call = metadata?.lastCall;
  if (!metadata || !call) {
    stream.markdown(CHAT_TEXTS.noDecision);
    return metadata ? { metadata } : {};
  }
  void vscode.commands.executeCommand('agentPolicy.explain', { toolId: call.toolId, input: call.input, agent: call.agent, sessionId: metadata.sessionId });
  stream.markdown(CHAT_TEXTS.explaining(call.toolId));
  return { metadata };
}

/** The open callbacks of the conversation's session, each as its card again, and the tree. */
function showOpenCallbacks(ctx: CommandContext, metadata: ChatMetadata | undefined, stream: vscode.ChatResponseStream): vscode.ChatResult {
  void vscode.commands.executeCommand('agentPolicy.focusCallbacks');
  const session = metadata ? ctx.host.get(metadata.sessionId) : undefined;
  const open = session?.openCallbacks() ?? [];
  stream.markdown(`${CHAT_TEXTS.openCallbacks(open.length)}\n\n`);
  const streamContext = chatStreamContext(ctx, metadata?.sessionId ?? '');
  for (const c of open) {
    for (const part of cardParts(c, c.agent, streamContext)) write(stream, part, ctx.workspaceFolder);
  }
  return metadata ? { metadata } : {};
}

/** Add a rule for the ask that is open (Allow and Add Rule…), else open the policy file. */
function addRule(ctx: CommandContext, metadata: ChatMetadata | undefined, stream: vscode.ChatResponseStream): vscode.ChatResult {
  const open = metadata ? ctx.host.get(metadata.sessionId)?.openCallbacks().filter((c) => c.type === 'approval') ?? [] : [];
  const ask = open.find((c) => c.id === metadata?.lastCall?.callbackId) ?? open[0];
  if (ask) {
    void vscode.commands.executeCommand('agentPolicy.allowAndAddRule', ask.id);
    return metadata ? { metadata } : {};
  }
  stream.markdown(CHAT_TEXTS.noOpenAsk);
  stream.button({ command: 'agentPolicy.openPolicy', title: CHAT_TEXTS.openPolicyButton });
  return metadata ? { metadata } : {};
}
