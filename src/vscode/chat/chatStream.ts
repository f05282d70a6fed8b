// What the Chat view shows of a session as it runs: each runtime event becomes a few parts (our
// markdown, the agent's own text, a link to the deciding rule's line, buttons). Plain functions
// with no `vscode` import, tested in plain Node; chatParticipant.ts writes the parts to the stream.
//
// Trust: the agent's text and everything a tool, a server or the model chose (inputs, reasons,
// names) is untrusted. The agent's text is its own part (shown as markdown, never trusted for
// commands); inside our markdown every untrusted value is escaped or in a code span. Buttons carry
// a callback id only: the command they run answers the open callback, checked like any other answer.
import * as l10n from '@vscode/l10n';
import type { OpenCallback } from '../../runtime/tree/answers.js';
import { summarizeInput } from '../../runtime/audit/auditSummary.js';
import type { RuntimeEvent } from '../../runtime/tree/events.js';
import type { AnswerSurface } from '../../runtime/host/sessionHost.js';
import type { Choice } from '../asks/answering.js';
import { chatAnswerArg, choiceCommand, type ChatAnswerArg } from '../asks/chatApprovals.js';
import { describeRule } from '../basics/describe.js';

/**
 * Every text the chat shows, in one place. Through @vscode/l10n (English in plain Node; core.ts
 * hands it VS Code's bundle), each read when shown, not when the module loads (before the bundle is
 * set): getters and functions. Untrusted values, escaped or in code spans, and the policy's words
 * (allow, ask, deny) go in as placeholders, so a translation cannot undo the escaping.
 */
export const CHAT_TEXTS = {
  sessionHeader: (agent: string, sessionId: string, turn: number) => (turn > 1
    ? l10n.t('**{0}** · session {1} · message {2}', escapeMarkdown(agent), codeSpan(sessionId), turn)
    : l10n.t('**{0}** · session {1}', escapeMarkdown(agent), codeSpan(sessionId))),
  subagentStarted: (agent: string, task: string) => `▶ ${l10n.t('Subagent **{0}** started: {1}', escapeMarkdown(agent), escapeMarkdown(summarizeInput(task, 100)))}`,
  subagentEnded: (agent: string, text: string) => `■ ${l10n.t('Subagent **{0}** finished: {1}', escapeMarkdown(agent), escapeMarkdown(summarizeInput(text, 120)))}`,
  subagentFailed: (agent: string, error: string) => `■ ${l10n.t('Subagent **{0}** failed: {1}', escapeMarkdown(agent), escapeMarkdown(summarizeInput(error, 120)))}`,
  /** The call and its decision: symbols, names and values, no words (the policy's decisions are names). */
  toolCall: (who: string, toolId: string, input: string, decision: string) => `${DECISION_ICONS[decision] ?? '•'} ${who}${codeSpan(toolId)} ${codeSpan(input)} → **${decision}**`,
  decidedBy: (call: string, by: string) => l10n.t({ message: '{0} by {1}', args: [call, escapeMarkdown(by)], comment: ['{0}: a tool call and its decision; {1}: who decided it (a hook, a grant)'] }),
  decidedByDefault: (call: string) => l10n.t({ message: '{0} by the default', args: [call], comment: ['{0}: a tool call and its decision, made by the policy\'s default'] }),
  /** Followed by the link to the rule's line. */
  decidedByRule: (call: string, rule: { id: string | null; index: number }) =>
    `${rule.id !== null ? l10n.t('{0} by rule "{1}"', call, escapeMarkdown(rule.id)) : l10n.t('{0} by rule {1}', call, rule.index + 1)} `,
  toolFailed: (content: string) => `  ↳ ${l10n.t('error: {0}', escapeMarkdown(summarizeInput(content, 120)))}`,
  askTitle: (agent: string, toolId: string, input: string) => l10n.t('**Approval needed** — **{0}** wants to run {1} {2}', escapeMarkdown(agent), codeSpan(toolId), codeSpan(input)),
  askedBy: (rule: string) => l10n.t('Asked by {0}.', escapeMarkdown(rule)),
  signInTitle: (agent: string, sources: string) => l10n.t('**Sign-in needed** — **{0}** needs a sign-in to {1}.', escapeMarkdown(agent), escapeMarkdown(sources)),
  elicitationTitle: (server: string, message: string) => l10n.t('**Request for input** — the MCP server {0} asks: {1}', escapeMarkdown(server), escapeMarkdown(message)),
  reviewTitle: (toolId: string, input: string, chars: number) => l10n.t('**Result held for review** — {0} {1}, {2} characters, before the agent sees it.', codeSpan(toolId), codeSpan(input), chars),
  settled: (outcome: string, by: string, via: AnswerSurface | undefined) => `${SETTLED_ICONS[outcome] ?? '•'} ${settledText(outcomeText(outcome, by), via)}`,
  warning: (message: string) => `⚠ ${escapeMarkdown(message)}`,
  marks: (added: readonly string[]) => `• ${l10n.t('The session is now marked {0}.', added.map(codeSpan).join(', '))}`,
  failed: (error: string) => l10n.t('**The turn failed:** {0}', escapeMarkdown(error)),
  get cancelled() { return l10n.t('The session was cancelled.'); },
  get signInButton() { return l10n.t('Sign In…'); },
  get respondButton() { return l10n.t('Respond…'); },
  get declineButton() { return l10n.t('Decline'); },
  get passButton() { return l10n.t('Pass'); },
  get withholdButton() { return l10n.t('Withhold'); },
  get showButton() { return l10n.t('Show'); },
  get allowForAWhileButton() { return l10n.t('Allow for a While…'); },
  get gone() { return l10n.t('The session of this conversation is not in this window any more (it was reloaded or closed): a new session starts.'); },
  get wasCancelled() { return l10n.t('The session of this conversation was cancelled: a new session starts.'); },
  busy: (sessionId: string) => l10n.t('Session {0} is still running: answer what it asks (the buttons above, a notification or the Open Callbacks view), then send your message again.', codeSpan(sessionId)),
  agentsList: (agents: ReadonlyArray<{ name: string; about: string }>, unknown: string | undefined) => {
    const usage = agents[0]
      ? l10n.t('Start a session with {0}; a message without a command continues this conversation\'s session (the first starts {1}).', AGENT_COMMAND, codeSpan(agents[0].name))
      : l10n.t('Start a session with {0}; a message without a command continues this conversation\'s session (the first starts the default agent).', AGENT_COMMAND);
    return [
      unknown !== undefined ? `${l10n.t('There is no agent named {0}.', codeSpan(unknown))} ${usage}` : usage,
      '',
      ...agents.map((a) => `- ${codeSpan(a.name)}${a.about ? ` — ${escapeMarkdown(summarizeInput(a.about, 140))}` : ''}`),
    ].join('\n');
  },
  get empty() { return l10n.t('Tell the agent what to do, e.g. {0} or {1}.', '`@agents what do atlas and beacon cost?`', '`@agents /agent main what do atlas and beacon cost?`'); },
  get noDecision() { return l10n.t('No tool call has been decided in this conversation yet.'); },
  explaining: (toolId: string) => l10n.t('Explain a Tool Call opens, prefilled with the last decision\'s call ({0}): press Enter twice to see why it was decided so.', codeSpan(toolId)),
  openCallbacks: (count: number) => (count === 0
    ? l10n.t('Nothing of this session waits for an answer.')
    : count === 1 ? l10n.t('1 open callback of this session:') : l10n.t('{0} open callbacks of this session:', count)),
  get noOpenAsk() { return l10n.t('No ask of this session is open now: Allow and Add Rule… adds a rule while it allows an open ask. The policy file opens so that you can add one by hand.'); },
  get openPolicyButton() { return l10n.t('Open Workspace Policy'); },
  get showCallbacksButton() { return l10n.t('Show Open Callbacks'); },
  get followupExplain() { return l10n.t('Explain the last decision'); },
  get followupCallbacks() { return l10n.t('Show open callbacks'); },
  get followupRule() { return l10n.t('Add a rule for this'); },
};

/** The `/agent` command's syntax, a code span (placeholder of the usage sentence). */
const AGENT_COMMAND = '`/agent <name> <what to do>`';
const DECISION_ICONS: Record<string, string> = { allow: '✓', ask: '?', deny: '✗' };
// Text symbols, not emoji: they render in every font (headless browsers have no emoji font).
const SETTLED_ICONS: Record<string, string> = { 'allow-once': '✓', 'allow-session': '✓', 'allow-duration': '✓', deny: '✗', closed: '–', connected: '✓', refused: '✗', accepted: '✓', declined: '✗', cancelled: '–', passed: '✓', withheld: '✗' };

/** How a callback settled, a phrase (`Allowed once`), or undefined for an outcome we do not know. */
function outcomePhrase(outcome: string): string | undefined {
  switch (outcome) {
    case 'allow-once': return l10n.t('Allowed once');
    case 'allow-session': return l10n.t('Allowed for the session');
    case 'allow-duration': return l10n.t('Allowed for a while');
    case 'deny': return l10n.t('Denied');
    case 'closed': return l10n.t('Closed unanswered');
    case 'connected': return l10n.t('Signed in');
    case 'refused': return l10n.t('Sign-in refused');
    case 'accepted': return l10n.t('Answered');
    case 'declined': return l10n.t('Declined');
    case 'cancelled': return l10n.t('Cancelled');
    case 'passed': return l10n.t('Result passed');
    case 'withheld': return l10n.t('Result withheld');
    default: return undefined;
  }
}

function outcomeText(outcome: string, by: string): string {
  const what = outcomePhrase(outcome) ?? escapeMarkdown(outcome);
  if (by === 'timeout') return l10n.t('{0}: the ask timed out', what);
  if (by === 'person') return l10n.t('{0} by a person', what);
  if (by === 'handler') return l10n.t('{0} by the session\'s handler', what);
  return what;
}

/** The settled sentence: how, and from which surface when known. */
function settledText(how: string, via: AnswerSurface | undefined): string {
  switch (via) {
    case 'notification': return l10n.t('{0} from the notification.', how);
    case 'tree': return l10n.t('{0} from the Open Callbacks view.', how);
    case 'palette': return l10n.t('{0} from the command palette.', how);
    case 'chat': return l10n.t('{0} here in the chat.', how);
    default: return l10n.t({ message: '{0}.', args: [how], comment: ['{0}: how an ask was settled (Allowed once by a person), the surface unknown'] });
  }
}

export type ChatPart =
  /** Markdown we wrote: every untrusted value in it is escaped or in a code span. `inline`: the next part goes on its line. */
  | { kind: 'markdown'; value: string; inline?: true }
  /** The agent's own text, as its model wrote it: untrusted markdown. */
  | { kind: 'agent-text'; value: string }
  /** A link to the line of the rule that decided (file and 1-based line). */
  | { kind: 'rule'; file: string; line: number; title: string }
  /** Buttons that answer (or open the answer flow of) an open callback: the argument names it by id only. */
  | { kind: 'buttons'; callbackId: string; buttons: Array<{ command: string; title: string; argument: ChatAnswerArg | string }> };

export interface ChatStreamContext {
  /** The root session of the conversation. */
  rootId: string;
  /** Where a settled callback was answered from, when known. */
  viaOf(callbackId: string): AnswerSurface | undefined;
  /** The answers the card offers for an approval, in order (the notification's: Allow, the widest grant, Deny). */
  choicesFor(callback: Extract<OpenCallback, { type: 'approval' }>): readonly Choice[];
  /** A choice's label ("Allow for Session"). */
  labelOf(choice: Choice): string;
}

/** The parts an event adds to the conversation. */
export function chatParts(e: RuntimeEvent, ctx: ChatStreamContext): ChatPart[] {
  const root = 'sessionId' in e && e.sessionId === ctx.rootId;
  // A subagent's parts say whose they are; the root's need not.
  const who = (agent: string, sessionId: string): string => (sessionId === ctx.rootId ? '' : `**${escapeMarkdown(agent)}** `);
  switch (e.type) {
    case 'message':
      return root ? [{ kind: 'agent-text', value: e.text }] : [];
    case 'subagent-started':
      return [md(CHAT_TEXTS.subagentStarted(e.agent, e.task))];
    case 'turn-ended':
      if (root) return e.state === 'failed' ? [md(e.error === 'cancelled' ? CHAT_TEXTS.cancelled : CHAT_TEXTS.failed(e.error ?? ''))] : [];
      return [md(e.state === 'completed' ? CHAT_TEXTS.subagentEnded(e.agent, e.text ?? '') : CHAT_TEXTS.subagentFailed(e.agent, e.error ?? ''))];
    case 'tool-call': {
      // An ask is shown by its card, which says all this and more.
      if (e.effective === 'ask') return [];
      const line = CHAT_TEXTS.toolCall(who(e.agent, e.sessionId), e.toolId, summarizeInput(e.input, 80), e.effective);
      const rule = e.decision.rule;
      // Who decided: a hook or a grant (by), else the rule (linked to its line) or the default.
      if (e.by !== 'policy') return [md(CHAT_TEXTS.decidedBy(line, e.by))];
      if (!rule) return [md(CHAT_TEXTS.decidedByDefault(line))];
      return [{ kind: 'markdown', value: CHAT_TEXTS.decidedByRule(line, rule), inline: true }, { kind: 'rule', file: rule.file, line: rule.line, title: ruleTitle(rule) }];
    }
    case 'tool-result':
      return e.ok ? [] : [md(CHAT_TEXTS.toolFailed(e.content))];
    case 'callback-opened':
      return cardParts(e.callback, e.agent, ctx);
    case 'callback-settled':
      return [md(CHAT_TEXTS.settled(e.outcome, e.by, ctx.viaOf(e.callbackId)))];
    case 'warning':
      return [md(CHAT_TEXTS.warning(e.message))];
    case 'marks':
      return [md(CHAT_TEXTS.marks(e.added))];
    default:
      return [];
  }
}

/** The card of an open callback: what it asks, which agent asked and why (with the rule's line), and its buttons. */
export function cardParts(c: OpenCallback, agent: string, ctx: ChatStreamContext): ChatPart[] {
  const arg = chatAnswerArg(c.id);
  const buttons = (list: Array<[string, string]>): ChatPart => ({ kind: 'buttons', callbackId: c.id, buttons: list.map(([command, title]) => ({ command, title, argument: arg })) });
  if (c.type === 'sign-in') {
    return [md(CHAT_TEXTS.signInTitle(agent, c.sources.map((s) => s.name).join(', '))), buttons([['agentPolicy.signIn', CHAT_TEXTS.signInButton]])];
  }
  if (c.type === 'elicitation') {
    return [md(CHAT_TEXTS.elicitationTitle(c.request.source.name, summarizeInput(c.request.message, 200))), buttons([['agentPolicy.respond', CHAT_TEXTS.respondButton]])];
  }
  if (c.type === 'result-review') {
    return [
      md(CHAT_TEXTS.reviewTitle(c.request.tool.id, summarizeInput(c.request.input, 80), c.request.chars)),
      ...ruleLink(c),
      buttons([['agentPolicy.passResult', CHAT_TEXTS.passButton], ['agentPolicy.withholdResult', CHAT_TEXTS.withholdButton], ['agentPolicy.showResult', CHAT_TEXTS.showButton]]),
    ];
  }
  const choices = ctx.choicesFor(c);
  const list: Array<[string, string]> = choices.map((choice) =>
    [choiceCommand(choice), choice === 'allow' || choice === 'allow-session' || choice === 'deny' ? ctx.labelOf(choice) : CHAT_TEXTS.allowForAWhileButton]);
  return [md(`${CHAT_TEXTS.askTitle(agent, c.request.tool.id, summarizeInput(c.request.input, 80))}\n\n${CHAT_TEXTS.askedBy(describeRule(c))}`), ...ruleLink(c), buttons(list)];
}

function ruleLink(c: Extract<OpenCallback, { type: 'approval' | 'result-review' }>): ChatPart[] {
  const rule = c.request.decision?.rule;
  return rule ? [{ kind: 'rule', file: rule.file, line: rule.line, title: ruleTitle(rule) }] : [];
}

/** `.agentpolicy.jsonc:15 "edit-src"`: the file's name, the line, the rule's id. */
export function ruleTitle(rule: { file: string; line: number; id: string | null }): string {
  return `${rule.file.split(/[\\/]/).pop()}:${rule.line}${rule.id !== null ? ` "${rule.id}"` : ''}`;
}

function md(value: string): ChatPart {
  return { kind: 'markdown', value };
}

/** Untrusted text inside our markdown: every character markdown gives a meaning is escaped; no new lines. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/[\\`*_{}[\]()#+\-.!<>|~&:]/g, (ch) => `\\${ch}`);
}

/** Untrusted text as a code span: a fence longer than any run of backticks in it, on one line. */
export function codeSpan(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') || flat === '' ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}
