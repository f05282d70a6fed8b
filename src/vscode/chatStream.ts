// What the Chat view shows of a session as it runs: each runtime event becomes a few parts (our
// markdown, the agent's own text, a link to the deciding rule's line, buttons). Plain functions
// with no `vscode` import, tested in plain Node; chatParticipant.ts writes the parts to the stream.
//
// Trust: the agent's text and everything a tool, a server or the model chose (inputs, reasons,
// names) is untrusted. The agent's text is its own part (shown as markdown, never trusted for
// commands); inside our markdown every untrusted value is escaped or in a code span. Buttons carry
// a callback id only: the command they run answers the open callback, checked like any other answer.
import type { OpenCallback } from '../runtime/answers.js';
import { summarizeInput } from '../runtime/audit.js';
import type { RuntimeEvent } from '../runtime/events.js';
import type { AnswerSurface } from '../runtime/sessionHost.js';
import type { Choice } from './answering.js';
import { chatAnswerArg, type ChatAnswerArg } from './chatApprovals.js';
import { describeRule } from './describe.js';

/** Every text the chat shows, in one place (for localisation). */
export const CHAT_TEXTS = {
  sessionHeader: (agent: string, sessionId: string, turn: number) => `**${escapeMarkdown(agent)}** · session ${codeSpan(sessionId)}${turn > 1 ? ` · message ${turn}` : ''}`,
  subagentStarted: (agent: string, task: string) => `▶ Subagent **${escapeMarkdown(agent)}** started: ${escapeMarkdown(summarizeInput(task, 100))}`,
  subagentEnded: (agent: string, text: string) => `■ Subagent **${escapeMarkdown(agent)}** finished: ${escapeMarkdown(summarizeInput(text, 120))}`,
  subagentFailed: (agent: string, error: string) => `■ Subagent **${escapeMarkdown(agent)}** failed: ${escapeMarkdown(summarizeInput(error, 120))}`,
  toolCall: (who: string, toolId: string, input: string, decision: string) => `${DECISION_ICONS[decision] ?? '•'} ${who}${codeSpan(toolId)} ${codeSpan(input)} → **${decision}**`,
  decidedBy: (by: string) => ` by ${escapeMarkdown(by)}`,
  decidedByDefault: ' by the default',
  /** Followed by the link to the rule's line. */
  decidedByRule: (rule: { id: string | null; index: number }) => ` by rule ${rule.id !== null ? `"${escapeMarkdown(rule.id)}"` : rule.index + 1} `,
  toolFailed: (content: string) => `  ↳ error: ${escapeMarkdown(summarizeInput(content, 120))}`,
  askTitle: (who: string, toolId: string, input: string) => `**Approval needed** — ${who}wants to run ${codeSpan(toolId)} ${codeSpan(input)}`,
  askedBy: (rule: string) => `Asked by ${escapeMarkdown(rule)}.`,
  signInTitle: (who: string, sources: string) => `**Sign-in needed** — ${who}needs a sign-in to ${escapeMarkdown(sources)}.`,
  elicitationTitle: (server: string, message: string) => `**Request for input** — the MCP server ${escapeMarkdown(server)} asks: ${escapeMarkdown(message)}`,
  reviewTitle: (toolId: string, input: string, chars: number) => `**Result held for review** — ${codeSpan(toolId)} ${codeSpan(input)}, ${chars} characters, before the agent sees it.`,
  settled: (outcome: string, by: string, via: AnswerSurface | undefined) => `${SETTLED_ICONS[outcome] ?? '•'} ${outcomeText(outcome, by)}${via ? ` ${SURFACES[via]}` : ''}.`,
  warning: (message: string) => `⚠ ${escapeMarkdown(message)}`,
  marks: (added: readonly string[]) => `• The session is now marked ${added.map(codeSpan).join(', ')}.`,
  failed: (error: string) => `**The turn failed:** ${escapeMarkdown(error)}`,
  cancelled: 'The session was cancelled.',
  signInButton: 'Sign In…',
  respondButton: 'Respond…',
  declineButton: 'Decline',
  passButton: 'Pass',
  withholdButton: 'Withhold',
  showButton: 'Show',
  allowForAWhileButton: 'Allow for a While…',
  gone: 'The session of this conversation is not in this window any more (it was reloaded or closed): a new session starts.',
  wasCancelled: 'The session of this conversation was cancelled: a new session starts.',
  busy: (sessionId: string) => `Session ${codeSpan(sessionId)} is still running: answer what it asks (the buttons above, a notification or the Open Callbacks view), then send your message again.`,
  agentsList: (agents: ReadonlyArray<{ name: string; about: string }>, unknown: string | undefined) => [
    `${unknown !== undefined ? `There is no agent named ${codeSpan(unknown)}. ` : ''}Start a session with \`/agent <name> <what to do>\`; a message without a command continues this conversation's session (the first starts ${agents[0] ? codeSpan(agents[0].name) : 'the default agent'}).`,
    '',
    ...agents.map((a) => `- ${codeSpan(a.name)}${a.about ? ` — ${escapeMarkdown(summarizeInput(a.about, 140))}` : ''}`),
  ].join('\n'),
  empty: 'Tell the agent what to do, e.g. `@agents what do atlas and beacon cost?` or `@agents /agent main what do atlas and beacon cost?`.',
  noDecision: 'No tool call has been decided in this conversation yet.',
  explaining: (toolId: string) => `Explain a Tool Call opens, prefilled with the last decision's call (${codeSpan(toolId)}): press Enter twice to see why it was decided so.`,
  openCallbacks: (count: number) => (count === 0 ? 'Nothing of this session waits for an answer.' : `${count} open callback${count === 1 ? '' : 's'} of this session:`),
  noOpenAsk: 'No ask of this session is open now: Allow and Add Rule… adds a rule while it allows an open ask. The policy file opens so that you can add one by hand.',
  openPolicyButton: 'Open Workspace Policy',
  showCallbacksButton: 'Show Open Callbacks',
  followupExplain: 'Explain the last decision',
  followupCallbacks: 'Show open callbacks',
  followupRule: 'Add a rule for this',
} as const;

const DECISION_ICONS: Record<string, string> = { allow: '✓', ask: '?', deny: '✗' };
// Text symbols, not emoji: they render in every font (headless browsers have no emoji font).
const SETTLED_ICONS: Record<string, string> = { 'allow-once': '✓', 'allow-session': '✓', 'allow-duration': '✓', deny: '✗', closed: '–', connected: '✓', refused: '✗', accepted: '✓', declined: '✗', cancelled: '–', passed: '✓', withheld: '✗' };
const SURFACES: Record<AnswerSurface, string> = {
  notification: 'from the notification',
  tree: 'from the Open Callbacks view',
  palette: 'from the command palette',
  chat: 'here in the chat',
};
const OUTCOMES: Record<string, string> = {
  'allow-once': 'Allowed once', 'allow-session': 'Allowed for the session', 'allow-duration': 'Allowed for a while', deny: 'Denied',
  closed: 'Closed unanswered', connected: 'Signed in', refused: 'Sign-in refused', accepted: 'Answered', declined: 'Declined',
  cancelled: 'Cancelled', passed: 'Result passed', withheld: 'Result withheld',
};

function outcomeText(outcome: string, by: string): string {
  const what = OUTCOMES[outcome] ?? escapeMarkdown(outcome);
  if (by === 'timeout') return `${what}: the ask timed out`;
  if (by === 'person') return `${what} by a person`;
  if (by === 'handler') return `${what} by the session's handler`;
  return what;
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
  /** The answers the card offers for an approval, in order (the notification's buttons: Allow, the widest grant, Deny). */
  choicesFor(callback: Extract<OpenCallback, { type: 'approval' }>): readonly Choice[];
  /** A choice's label ("Allow for Session"). */
  labelOf(choice: Choice): string;
}

const CHOICE_COMMANDS: Record<'allow' | 'allow-session' | 'deny', string> = {
  allow: 'agentPolicy.allow',
  'allow-session': 'agentPolicy.allowForSession',
  deny: 'agentPolicy.deny',
};

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
      if (e.by !== 'policy') return [md(line + CHAT_TEXTS.decidedBy(e.by))];
      if (!rule) return [md(line + CHAT_TEXTS.decidedByDefault)];
      return [{ kind: 'markdown', value: `${line}${CHAT_TEXTS.decidedByRule(rule)}`, inline: true }, { kind: 'rule', file: rule.file, line: rule.line, title: ruleTitle(rule) }];
    }
    case 'tool-result':
      return e.ok ? [] : [md(CHAT_TEXTS.toolFailed(e.content))];
    case 'callback-opened':
      return cardParts(e.callback, `**${escapeMarkdown(e.agent)}** `, ctx);
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

/** The card of an open callback: what it asks, who asked and why (with the rule's line), and its buttons. */
export function cardParts(c: OpenCallback, who: string, ctx: ChatStreamContext): ChatPart[] {
  const arg = chatAnswerArg(c.id);
  const buttons = (list: Array<[string, string]>): ChatPart => ({ kind: 'buttons', callbackId: c.id, buttons: list.map(([command, title]) => ({ command, title, argument: arg })) });
  if (c.type === 'sign-in') {
    return [md(CHAT_TEXTS.signInTitle(who, c.sources.map((s) => s.name).join(', '))), buttons([['agentPolicy.signIn', CHAT_TEXTS.signInButton]])];
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
    choice === 'allow' || choice === 'allow-session' || choice === 'deny' ? [CHOICE_COMMANDS[choice], ctx.labelOf(choice)] : ['agentPolicy.allowForAWhile', CHAT_TEXTS.allowForAWhileButton]);
  return [md(`${CHAT_TEXTS.askTitle(who, c.request.tool.id, summarizeInput(c.request.input, 80))}\n\n${CHAT_TEXTS.askedBy(describeRule(c))}`), ...ruleLink(c), buttons(list)];
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
