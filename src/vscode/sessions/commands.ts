// The extension's commands: start a session, answer what is pending, sign in, transcripts.
import * as vscode from 'vscode';
import { SignInAnswer, type OpenApproval, type OpenCallback } from '../../runtime/tree/answers.js';
import type { ListedSession } from '../../runtime/host/listedSession.js';
import type { AnswerSurface, SessionHost } from '../../runtime/host/sessionHost.js';
import type { StartSessionOptions } from '../../runtime/tree/sessionOptions.js';
import { AGENTS_FILE, DEFAULT_MODEL, loadWorkspaceAgents, type ModelFactory, type WorkspaceAgents } from '../../runtime/agents/workspaceAgents.js';
import { alreadyAnswered, alreadyReviewed, answerCallback, answerFor, approvalChoices, choiceDescription, choiceIcon, choiceLabel, notificationChoices, type Choice } from '../asks/answering.js';
import type { TreeNode } from '../asks/callbacksTree.js';
import { isChatAnswerArg, isNotificationAnswerArg, type ChatAnswerArg, type NotificationAnswerArg } from '../asks/chatApprovals.js';
import { CALLBACK_ICONS, callbackLabel, callbackSummary, describeAsker, describeRule, formatAge, formatTimeLeft, sessionState } from '../basics/describe.js';
import { answerElicitation } from '../asks/elicitation.js';
import { answerResultReview, type ReviewAction } from '../asks/resultReview.js';
import type { CoreCommands } from '../basics/coreCommands.js';
import type { Log } from '../basics/log.js';
import type { SessionDeps } from './sessionDeps.js';
import type { PolicyService } from '../policy/policyService.js';
import { Transcripts } from './transcripts.js';

export interface CommandContext {
  host: SessionHost;
  policy: PolicyService;
  log: Log;
  workspaceFolder: string;
  /** The model providers and MCP servers, loaded at the first session (they are most of the bundle). */
  sessionDeps: () => Promise<SessionDeps>;
  /** Readies what deciding needs (the shell parser) before the first session. */
  ready: () => Promise<void>;
}

/** A callback given as a tree node (menus), an id (tests), the chat's buttons' or a notification's links' argument, or nothing (ask). */
type CallbackArg = TreeNode | string | ChatAnswerArg | NotificationAnswerArg | undefined;

function callbackIdOf(arg: unknown): string | undefined {
  const node = arg as CallbackArg;
  if (typeof node === 'string') return node;
  if (isChatAnswerArg(node) || isNotificationAnswerArg(node)) return node.callbackId;
  if (node && 'kind' in node && node.kind === 'callback') return node.callback.id;
  return undefined;
}

/** Which surface a command's argument came from: a tree row, the chat's buttons, a notification's links, else nothing said. */
function surfaceOf(arg: unknown): AnswerSurface | undefined {
  if (isChatAnswerArg(arg)) return 'chat';
  if (isNotificationAnswerArg(arg)) return 'notification';
  return (arg as TreeNode | undefined)?.kind === 'callback' ? 'tree' : undefined;
}

/** A session given as a tree node (menus), an id (tree rows, notifications), or nothing (ask). */
function sessionIdOf(arg: unknown): string | undefined {
  const node = arg as TreeNode | string | undefined;
  return typeof node === 'string' ? node : node && node.kind === 'session' ? node.hosted.id : undefined;
}

type SessionCommandName = 'startSession' | 'answerPending' | 'signIn' | 'respond' | 'showTranscript' | 'cancelSession' | 'allow' | 'allowForSession' | 'allowForAWhile' | 'moreAnswers' | 'deny' | 'dismissInterrupted' | 'revokeGrant'
  | 'passResult' | 'withholdResult' | 'showResult';

/** The session commands' handlers; lazyCommands.ts registers them by their ids. */
export function sessionCommands(ctx: CommandContext): Pick<CoreCommands, SessionCommandName> {
  const { host, log } = ctx;
  const answerFromTree = (choice: Choice) => async (arg?: unknown) => {
    const id = callbackIdOf(arg);
    if (id === undefined) return vscode.commands.executeCommand('agentPolicy.answerPending');
    await answerCallback(host, log, id, answerFor(choice), alreadyAnswered(), surfaceOf(arg));
  };
  return {
    startSession: () => startSession(ctx),
    answerPending: () => answerPending(ctx),
    signIn: (arg) => signIn(ctx, callbackIdOf(arg)),
    respond: (arg) => respond(ctx, callbackIdOf(arg)),
    showTranscript: (arg) => showTranscript(ctx, sessionIdOf(arg)),
    cancelSession: (arg) => cancelSession(ctx, sessionIdOf(arg)),
    allow: answerFromTree('allow'),
    allowForSession: answerFromTree('allow-session'),
    allowForAWhile: (arg) => allowForAWhile(ctx, callbackIdOf(arg), surfaceOf(arg) ?? 'palette'),
    moreAnswers: (arg) => moreAnswers(ctx, callbackIdOf(arg), surfaceOf(arg) ?? 'palette'),
    revokeGrant: (arg) => revokeGrant(ctx, arg),
    deny: answerFromTree('deny'),
    passResult: (arg) => reviewResult(ctx, callbackIdOf(arg), 'pass'),
    withholdResult: (arg) => reviewResult(ctx, callbackIdOf(arg), 'withhold'),
    showResult: (arg) => reviewResult(ctx, callbackIdOf(arg), 'show'),
    dismissInterrupted: (arg) => {
      const node = arg as TreeNode | undefined;
      if (node?.kind === 'interrupted') host.dismissInterrupted(node.recovered.session);
    },
  };
}

/**
 * The workspace's agents as a session starts them, with their models and MCP servers.
 * `modelOverride`: a model reference every agent of the session plays instead of its own (the
 * model picked in the Chat view). An agents file with errors is said, with a button to open it,
 * and gives undefined.
 */
export async function loadAgentsForSession(ctx: CommandContext, modelOverride?: string): Promise<WorkspaceAgents | undefined> {
  const { models, mcp } = await ctx.sessionDeps();
  const sources = await mcp.sources();
  const defaultModel = vscode.workspace.getConfiguration('agentPolicy').get<string>('model.default', DEFAULT_MODEL);
  const factory: ModelFactory = modelOverride === undefined ? models : (_reference, context) => models(modelOverride, context);
  const loaded = loadWorkspaceAgents({ workspaceFolder: ctx.workspaceFolder, models: factory, toolSources: sources, defaultModel });
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) {
    const open = vscode.l10n.t('Open Agents File');
    void vscode.window.showErrorMessage(vscode.l10n.t('Agent Policy: {0} has {1} problem(s): {2}', AGENTS_FILE, errors.length, errors[0]!.message), open).then(async (picked) => {
      if (picked === open && loaded.file) await vscode.window.showTextDocument(vscode.Uri.file(loaded.file));
    });
    return undefined;
  }
  return loaded;
}

/** What every session of this window starts with: the workspace, the policy in force, trust, the protected files. */
export function sessionStartOptions(ctx: CommandContext): Omit<StartSessionOptions, 'onApproval' | 'onSignIn' | 'audit'> {
  return {
    workspaceFolder: ctx.workspaceFolder,
    policy: () => ctx.policy.current(),
    trusted: () => vscode.workspace.isTrusted,
    protectedFiles: ctx.policy.configuredFiles(),
  };
}

async function startSession(ctx: CommandContext): Promise<void> {
  const loaded = await loadAgentsForSession(ctx);
  if (!loaded) return;
  const items = loaded.agents.map((agent) => ({
    label: agent.name,
    description: agent.subagents.length > 0 ? vscode.l10n.t('subagents: {0}', agent.subagents.map((s) => s.name).join(', ')) : '',
    detail: agent.instructions || undefined,
    agent,
  }));
  const picked = items.length === 1 && !loaded.file ? items[0] : await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Agent Policy: Start Agent Session'),
    placeHolder: loaded.file ? vscode.l10n.t('Pick an agent from {0}', AGENTS_FILE) : vscode.l10n.t('No {0} here: the default agent', AGENTS_FILE),
    // The first of two steps, like the prompt after it: started from the walkthrough, the step's
    // picture loading in its webview can take the focus and would close the pick under the click.
    ignoreFocusOut: true,
  });
  if (!picked) return;
  const prompt = await vscode.window.showInputBox({
    title: vscode.l10n.t('Agent Policy: Start Agent Session — {0}', picked.label),
    prompt: vscode.l10n.t('What should {0} do?', picked.label),
    placeHolder: vscode.l10n.t('A prompt for the agent'),
    ignoreFocusOut: true,
  });
  if (!prompt) return;
  await ctx.ready();
  const hosted = await ctx.host.start(picked.agent, prompt, sessionStartOptions(ctx));
  ctx.log.info(`started session ${hosted.id} of ${hosted.agent}: ${prompt}`);
  void vscode.window.setStatusBarMessage(vscode.l10n.t('Agent Policy: {0} is running', hosted.agent), 3000);
}

interface CallbackPick extends vscode.QuickPickItem {
  callback?: OpenCallback;
  hosted?: ListedSession;
}

/** Every open callback of every session and subagent in one quick pick, grouped by session and subagent. */
function callbackPicks(host: SessionHost, filter: (c: OpenCallback) => boolean): CallbackPick[] {
  const items: CallbackPick[] = [];
  for (const hosted of host.sessions()) {
    const groups = new Map<string, OpenCallback[]>();
    for (const c of hosted.openCallbacks().filter(filter)) {
      const list = groups.get(c.sessionId) ?? [];
      list.push(c);
      groups.set(c.sessionId, list);
    }
    for (const [sessionId, callbacks] of groups) {
      const chain = hosted.pathOf(sessionId);
      const name = chain.map((n) => n.agent).join(' › ') || hosted.agent;
      const label = sessionId === hosted.id ? vscode.l10n.t('{0} (session {1})', name, sessionId) : vscode.l10n.t('{0} (subagent {1})', name, sessionId);
      items.push({ label, kind: vscode.QuickPickItemKind.Separator });
      for (const c of callbacks) {
        const earlier = hosted.fromEarlierTurn(c) ? ` · ${vscode.l10n.t('left running by an earlier turn')}` : '';
        items.push({
          label: `$(${CALLBACK_ICONS[c.type]}) ${callbackLabel(c)}`,
          description: callbackSummary(c),
          detail: `${vscode.l10n.t('{0} · asked by {1} · {2} ago', describeAsker(hosted, c), describeRule(c), formatAge(Date.now() - c.openedAt))}${earlier}`,
          callback: c,
          hosted,
        });
      }
    }
  }
  return items;
}

async function answerPending(ctx: CommandContext): Promise<void> {
  const items = callbackPicks(ctx.host, () => true);
  if (items.length === 0) {
    void vscode.window.showInformationMessage(nothingWaiting());
    return;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Agent Policy: Answer Pending Approval'),
    placeHolder: vscode.l10n.t('Pick what to answer'),
    matchOnDescription: true,
    matchOnDetail: true,
    // The first of two steps (what, then the answer), also opened from the walkthrough's button.
    ignoreFocusOut: true,
  });
  if (!picked?.callback) return;
  if (picked.callback.type === 'sign-in') return signIn(ctx, picked.callback.id);
  if (picked.callback.type === 'elicitation') return answerElicitation(ctx.host, ctx.log, picked.callback);
  if (picked.callback.type === 'result-review') return answerResultReview(ctx.host, ctx.log, picked.callback);
  await answerApproval(ctx, picked.callback);
}

/**
 * The open callback of a type that a command answers: the one with `callbackId`, or with none
 * given, the one a person picks. Nothing found (or picked) tells so: `gone` when the id named
 * one no longer open, `none` otherwise.
 */
async function findOpenCallback<T extends OpenCallback['type']>(
  ctx: CommandContext,
  type: T,
  callbackId: string | undefined,
  texts: { title: string; none: string; gone: string },
): Promise<Extract<OpenCallback, { type: T }> | undefined> {
  let callback: OpenCallback | undefined;
  if (callbackId !== undefined) {
    callback = ctx.host.openCallbacks().map((e) => e.callback).find((c) => c.type === type && c.id === callbackId);
  } else {
    const items = callbackPicks(ctx.host, (c) => c.type === type);
    const picked = items.length ? await vscode.window.showQuickPick(items, { title: texts.title }) : undefined;
    callback = picked?.callback;
  }
  if (!callback) {
    void vscode.window.showInformationMessage(callbackId ? texts.gone : texts.none);
    return undefined;
  }
  return callback as Extract<OpenCallback, { type: T }>;
}

/** An MCP server's request for input, from the tree, a notification or the palette. */
async function respond(ctx: CommandContext, callbackId: string | undefined): Promise<void> {
  const callback = await findOpenCallback(ctx, 'elicitation', callbackId, {
    title: vscode.l10n.t('Agent Policy: Respond to a Request for Input'),
    none: vscode.l10n.t('Agent Policy: no request for input is waiting.'),
    gone: alreadyAnswered(),
  });
  if (callback) await answerElicitation(ctx.host, ctx.log, callback);
}

/** A result held for review, from the tree (Pass, Withhold, Show) or the palette (picked). */
async function reviewResult(ctx: CommandContext, callbackId: string | undefined, action: ReviewAction): Promise<void> {
  const callback = await findOpenCallback(ctx, 'result-review', callbackId, {
    title: vscode.l10n.t('Agent Policy: Review a Held Result'),
    none: vscode.l10n.t('Agent Policy: no result is held for review.'),
    gone: alreadyReviewed(),
  });
  if (callback) await answerResultReview(ctx.host, ctx.log, callback, action);
}

function nothingWaiting(): string {
  return vscode.l10n.t('Agent Policy: nothing is waiting for an answer.');
}

/** The title and placeholder of the quick pick that answers an approval. */
function answerPickTexts(callback: OpenApproval): { title: string; placeHolder: string } {
  return { title: vscode.l10n.t('Agent Policy: {0}', callback.request.tool.id), placeHolder: vscode.l10n.t('{0}: {1}', callback.agent, callbackSummary(callback)) };
}

async function answerApproval(ctx: CommandContext, callback: OpenApproval): Promise<void> {
  const answer = await vscode.window.showQuickPick(
    approvalChoices(callback.request).map((choice) => ({ label: `${choiceIcon(choice)} ${choiceLabel(choice)}`, description: choiceDescription(choice), choice })),
    answerPickTexts(callback),
  );
  if (!answer) return;
  await answerCallback(ctx.host, ctx.log, callback.id, answerFor(answer.choice), alreadyAnswered(), 'palette');
}

/** The tree's Allow for a While…: the time-limited grants the approval's rule lets a person give. */
async function allowForAWhile(ctx: CommandContext, callbackId: string | undefined, via: AnswerSurface): Promise<void> {
  const callback = await findOpenCallback(ctx, 'approval', callbackId, { title: vscode.l10n.t('Agent Policy: Allow for a While'), none: nothingWaiting(), gone: alreadyAnswered() });
  if (!callback) return;
  const timed = approvalChoices(callback.request).filter((c) => c.startsWith('allow-for-'));
  if (timed.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: this call can only be allowed once (its rule says remember: never, a hook asks, the workspace is untrusted, or the managed controls allow no longer grant).'));
    return;
  }
  const picked = await vscode.window.showQuickPick(
    timed.map((choice) => ({ label: `${choiceIcon(choice)} ${choiceLabel(choice)}`, description: choiceDescription(choice), choice })),
    answerPickTexts(callback),
  );
  if (picked) await answerCallback(ctx.host, ctx.log, callback.id, answerFor(picked.choice), alreadyAnswered(), via);
}

/**
 * More… of an ask's notification: the shorter grants it has no room for (Allow for 15 Minutes, …),
 * then Allow and Add Rule… (where the managed controls let answers add rules), Explain, the tree.
 */
async function moreAnswers(ctx: CommandContext, callbackId: string | undefined, via: AnswerSurface): Promise<void> {
  const callback = await findOpenCallback(ctx, 'approval', callbackId, { title: vscode.l10n.t('Agent Policy: More'), none: nothingWaiting(), gone: alreadyAnswered() });
  if (!callback) return;
  const picked = await vscode.window.showQuickPick(
    [
      ...notificationChoices(callback.request).more.map((choice) => ({ label: `${choiceIcon(choice)} ${choiceLabel(choice)}`, description: choiceDescription(choice), choice, command: undefined })),
      ...(ctx.policy.current().controls.addRule ? [{ label: `$(add) ${vscode.l10n.t('Allow and Add Rule…')}`, command: 'agentPolicy.allowAndAddRule' }] : []),
      { label: `$(info) ${vscode.l10n.t('Explain This Call')}`, command: 'agentPolicy.explain' },
      { label: `$(bell) ${vscode.l10n.t('Show in Open Callbacks')}`, command: 'agentPolicy.focusCallbacks' },
    ],
    { title: vscode.l10n.t('Agent Policy: More') },
  );
  if (!picked) return;
  if ('choice' in picked) return void (await answerCallback(ctx.host, ctx.log, callback.id, answerFor(picked.choice), alreadyAnswered(), via));
  await vscode.commands.executeCommand(picked.command, callback.id);
}

/** Revoke: a grant node of the tree, or with none given, one a person picks among every session's grants. */
async function revokeGrant(ctx: CommandContext, arg: unknown): Promise<void> {
  const node = arg as TreeNode | undefined;
  let grant = node && typeof node === 'object' && node.kind === 'grant' ? node.grant : undefined;
  if (!grant) {
    const items = ctx.host.sessions().flatMap((hosted) => hosted.grants().map(({ grant: g }) => ({
      label: `$(${g.expiresAt === undefined ? 'unlock' : 'watch'}) ${g.label}`,
      description: `${g.toolId} · ${g.expiresAt === undefined ? vscode.l10n.t('for the session') : vscode.l10n.t('{0} left', formatTimeLeft(g.expiresAt - Date.now()))}`,
      detail: hosted.agent,
      grant: g,
    })));
    if (items.length === 0) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: no grant is in force.'));
      return;
    }
    grant = (await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Agent Policy: Revoke Grant'), placeHolder: vscode.l10n.t('Pick a grant to take back; its calls are asked again') }))?.grant;
    if (!grant) return;
  }
  if (ctx.host.revokeGrant(grant.id)) ctx.log.info(`revoked grant ${grant.id}: ${grant.toolId} ${grant.label}`);
  else void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: that grant had already lapsed or been revoked.'));
}

/** A sign-in names every source it asks for: each is answered connected or denied. */
async function signIn(ctx: CommandContext, callbackId: string | undefined): Promise<void> {
  const none = vscode.l10n.t('Agent Policy: no sign-in is waiting.');
  const callback = await findOpenCallback(ctx, 'sign-in', callbackId, { title: vscode.l10n.t('Agent Policy: Answer Pending Sign-In'), none, gone: none });
  if (!callback) return;
  const picks = await vscode.window.showQuickPick(
    callback.sources.map((s) => ({ label: s.name, description: `${s.source} ${s.id} · ${s.mode}`, picked: false, id: s.id, source: s.source })),
    { title: vscode.l10n.t('Agent Policy: Sign In'), placeHolder: vscode.l10n.t('Check each source you have connected; the others are answered as denied'), canPickMany: true },
  );
  if (!picks) return;
  // An MCP server is signed in to by giving the inputs its configuration needs (a token): escaped, nothing is answered.
  const mcp = picks.some((p) => p.source === 'mcp') ? (await ctx.sessionDeps()).mcp : undefined;
  for (const p of picks) {
    if (p.source === 'mcp' && !(await mcp!.signIn(p.id))) return;
  }
  const connected = picks.map((p) => p.id);
  const denied = callback.sources.map((s) => s.id).filter((id) => !connected.includes(id));
  await answerCallback(ctx.host, ctx.log, callback.id, new SignInAnswer({ connected, denied }));
}

async function pickSession(ctx: CommandContext, title: string, filter: (h: ListedSession) => boolean): Promise<ListedSession | undefined> {
  const sessions = ctx.host.sessions().filter(filter);
  if (sessions.length <= 1) return sessions[0];
  const picked = await vscode.window.showQuickPick(
    sessions.reverse().map((h) => ({ label: h.agent, description: `${sessionState(h.state)} · ${h.prompt}`, detail: vscode.l10n.t('session {0}', h.id), hosted: h })),
    { title },
  );
  return picked?.hosted;
}

async function showTranscript(ctx: CommandContext, sessionId: string | undefined): Promise<void> {
  const hosted = sessionId ? ctx.host.get(sessionId) : await pickSession(ctx, vscode.l10n.t('Agent Policy: Show Session Transcript'), () => true);
  if (!hosted) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: no session has run in this window.'));
    return;
  }
  const doc = await vscode.workspace.openTextDocument(Transcripts.uri(hosted.id, hosted.agent));
  await vscode.window.showTextDocument(doc, { preview: false });
}

async function cancelSession(ctx: CommandContext, sessionId: string | undefined): Promise<void> {
  const hosted = sessionId ? ctx.host.get(sessionId) : await pickSession(ctx, vscode.l10n.t('Agent Policy: Cancel Agent Session'), (h) => h.state === 'running');
  if (!hosted) return;
  await ctx.host.cancel(hosted.id);
  ctx.log.info(`cancelled session ${hosted.id}`);
}
