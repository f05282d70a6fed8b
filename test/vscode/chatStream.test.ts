// What the Chat view shows of a session: each runtime event as chat parts. Untrusted text (the
// agent's, a tool's input, a server's message) never becomes our markdown's links or commands.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import fc from 'fast-check';
import { OpenApproval, OpenElicitation, OpenSignIn } from '../../src/runtime/tree/answers.js';
import type { RuntimeEvent } from '../../src/runtime/tree/events.js';
import type { AnswerSurface } from '../../src/runtime/host/sessionHost.js';
import type { Choice } from '../../src/vscode/asks/answering.js';
import { isChatAnswerArg } from '../../src/vscode/asks/chatApprovals.js';
import { CHAT_TEXTS, chatParts, codeSpan, escapeMarkdown, type ChatPart, type ChatStreamContext } from '../../src/vscode/chat/chatStream.js';

const via = new Map<string, AnswerSurface>();
const ctx: ChatStreamContext = {
  rootId: 'sess_root',
  viaOf: (id) => via.get(id),
  choicesFor: (c) => (c.request.sessionAllowed ? ['allow', 'allow-session', 'deny'] : ['allow', 'deny']) as Choice[],
  labelOf: (c) => ({ allow: 'Allow', 'allow-session': 'Allow for Session', deny: 'Deny' })[c as 'allow'] ?? c,
};
const RULE = { layer: 'workspace', file: '/ws/.agentpolicy.jsonc', line: 15, index: 3, id: 'edit-src' };
const decision = (d: 'allow' | 'ask' | 'deny', rule: typeof RULE | null = RULE) =>
  ({ decision: d, rule, lowered: false, warnings: [], defaultFrom: null, reason: d === 'ask' ? 'the agent wants to change the code' : undefined }) as never;

function approval(id: string, sessionId = 'sess_root', agent = 'main'): OpenApproval {
  return new OpenApproval(id, sessionId, `${sessionId}.t1`, agent, 0, {
    tool: { id: 'builtin.write_file', name: 'write_file', kind: 'builtin', annotations: {} },
    title: 'write_file', input: { path: 'src/answer.txt', content: 'x' }, sessionAllowed: true, longestGrant: 'session', decision: decision('ask'),
  });
}

const text = (parts: ChatPart[]) => parts.map((p) => (p.kind === 'markdown' || p.kind === 'agent-text' ? p.value : p.kind === 'rule' ? `<${p.title}>` : `[${p.buttons.map((b) => b.title).join('|')}]`)).join('');

describe('the chat stream', () => {
  it('shows a tool call with its decision and a link to the deciding rule line', () => {
    const e: RuntimeEvent = { type: 'tool-call', sessionId: 'sess_sub', turnId: 't', agent: 'researcher', callId: 'c', toolId: 'builtin.run_command', name: 'run_command', input: { command: 'node src/index.js atlas' }, decision: decision('allow'), effective: 'allow', by: 'policy' };
    const parts = chatParts(e, ctx);
    assert.deepEqual(parts[1], { kind: 'rule', file: RULE.file, line: 15, title: '.agentpolicy.jsonc:15 "edit-src"' });
    assert.match(text(parts), /^✓ \*\*researcher\*\* `builtin\.run_command` `node src\/index\.js atlas` → \*\*allow\*\* by rule "edit\\-src" <\.agentpolicy\.jsonc:15 "edit-src">$/);
    // An ask: its card says it (below), not a line.
    assert.deepEqual(chatParts({ ...e, effective: 'ask', decision: decision('ask') } as RuntimeEvent, ctx), []);
    // A grant or a hook decided: said, no rule link; no rule: the default.
    assert.match(text(chatParts({ ...e, sessionId: 'sess_root', by: 'session grant' } as RuntimeEvent, ctx)), /^✓ `builtin\.run_command` .* by session grant$/);
    assert.match(text(chatParts({ ...e, decision: decision('deny', null), effective: 'deny' } as RuntimeEvent, ctx)), /→ \*\*deny\*\* by the default$/);
  });

  it("shows the root agent's text as its own part, and subagents as they start and end", () => {
    assert.deepEqual(chatParts({ type: 'message', sessionId: 'sess_root', turnId: 't', agent: 'main', text: 'Prices: **12**' }, ctx), [{ kind: 'agent-text', value: 'Prices: **12**' }]);
    assert.deepEqual(chatParts({ type: 'message', sessionId: 'sess_sub', turnId: 't', agent: 'researcher', text: 'x' }, ctx), []);
    assert.match(text(chatParts({ type: 'subagent-started', sessionId: 'sess_sub', parentSessionId: 'sess_root', parentTurnId: 't', agent: 'researcher', task: 'atlas' }, ctx)), /^▶ Subagent \*\*researcher\*\* started: atlas/);
    assert.match(text(chatParts({ type: 'turn-ended', sessionId: 'sess_sub', turnId: 't', agent: 'researcher', state: 'completed', text: '12 EUR' }, ctx)), /^■ Subagent \*\*researcher\*\* finished: 12 EUR/);
    assert.deepEqual(chatParts({ type: 'turn-ended', sessionId: 'sess_root', turnId: 't', agent: 'main', state: 'completed', text: 'done' }, ctx), []);
    assert.match(text(chatParts({ type: 'turn-ended', sessionId: 'sess_root', turnId: 't', agent: 'main', state: 'failed', error: 'model down' }, ctx)), /The turn failed:\*\* model down/);
  });

  it('an ask shows a card: who wants what, the rule and its reason, its line, and Allow / Allow for Session / Deny carrying the callback id only', () => {
    const parts = chatParts({ type: 'callback-opened', sessionId: 'sess_sub', turnId: 't', agent: 'researcher', callback: approval('cb_1', 'sess_sub', 'researcher') }, ctx);
    assert.match(text(parts), /^\*\*Approval needed\*\* — \*\*researcher\*\* wants to run `builtin\.write_file` `path: src\/answer\.txt`/);
    assert.ok(text(parts).includes('Asked by workspace rule "edit\\-src" \\(\\.agentpolicy\\.jsonc\\:15\\)\\: the agent wants to change the code.'), text(parts));
    const buttons = parts.find((p) => p.kind === 'buttons');
    assert.ok(buttons && buttons.kind === 'buttons');
    assert.deepEqual(buttons.buttons.map((b) => [b.command, b.title]), [['agentPolicy.allow', 'Allow'], ['agentPolicy.allowForSession', 'Allow for Session'], ['agentPolicy.deny', 'Deny']]);
    for (const b of buttons.buttons) assert.deepEqual(b.argument, { chatAnswer: true, callbackId: 'cb_1' });
    assert.ok(parts.some((p) => p.kind === 'rule' && p.line === 15));
  });

  it('a sign-in and a request for input get a button that opens our answer flow', () => {
    const signIn = new OpenSignIn('cb_s', 'sess_root', 't', 'main', 0, [{ source: 'mcp', id: 'mcp.docs', name: 'docs', mode: 'connect' }]);
    const ask = new OpenElicitation('cb_e', 'sess_root', 't', 'main', 0, { source: { id: 'mcp.docs', name: 'docs' }, message: 'Which branch?', requestedSchema: { type: 'object', properties: {} } });
    const buttonsOf = (parts: ChatPart[]) => parts.flatMap((p) => (p.kind === 'buttons' ? p.buttons.map((b) => [b.command, isChatAnswerArg(b.argument) ? b.argument.callbackId : '']) : []));
    assert.deepEqual(buttonsOf(chatParts({ type: 'callback-opened', sessionId: 'sess_root', turnId: 't', agent: 'main', callback: signIn }, ctx)), [['agentPolicy.signIn', 'cb_s']]);
    assert.deepEqual(buttonsOf(chatParts({ type: 'callback-opened', sessionId: 'sess_root', turnId: 't', agent: 'main', callback: ask }, ctx)), [['agentPolicy.respond', 'cb_e']]);
  });

  it('a settled callback says how and from which surface', () => {
    const settled = (outcome: string, by: string, id: string) => text(chatParts({ type: 'callback-settled', sessionId: 'sess_root', turnId: 't', agent: 'main', callbackId: id, outcome, by }, ctx));
    via.set('cb_n', 'notification');
    via.set('cb_c', 'chat');
    assert.equal(settled('allow-once', 'person', 'cb_n'), '✓ Allowed once by a person from the notification.');
    assert.equal(settled('allow-session', 'person', 'cb_c'), '✓ Allowed for the session by a person here in the chat.');
    assert.equal(settled('deny', 'timeout', 'cb_x'), '✗ Denied: the ask timed out.');
    assert.equal(settled('closed', 'cancel', 'cb_y'), '– Closed unanswered.');
  });

  it("follows the bundle VS Code hands it (core.ts), read when shown: every phrase translated, the escaped values and code spans kept as they are", () => {
    // A pseudo-translation of the whole English bundle: each message wrapped in ⟦…⟧, its placeholders left as they are.
    const english = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'l10n', 'bundle.l10n.json'), 'utf8')) as Record<string, string | { message: string }>;
    l10n.config({ contents: Object.fromEntries(Object.entries(english).map(([key, m]) => [key, `⟦${typeof m === 'string' ? m : m.message}⟧`])) });
    try {
      const card = text(chatParts({ type: 'callback-opened', sessionId: 'sess_sub', turnId: 't', agent: 'r_x', callback: approval('cb_1', 'sess_sub', 'r_x') }, ctx));
      assert.ok(card.startsWith('⟦**Approval needed** — **r\\_x** wants to run `builtin.write_file` `path: src/answer.txt`⟧'), card);
      assert.equal(CHAT_TEXTS.cancelled, '⟦The session was cancelled.⟧');
      assert.equal(CHAT_TEXTS.openCallbacks(2), '⟦{0} open callbacks of this session:⟧'.replace('{0}', '2'));
      via.set('cb_t', 'tree');
      assert.equal(text(chatParts({ type: 'callback-settled', sessionId: 'sess_root', turnId: 't', agent: 'main', callbackId: 'cb_t', outcome: 'deny', by: 'person' }, ctx)), '✗ ⟦⟦⟦Denied⟧ by a person⟧ from the Open Callbacks view.⟧');
      assert.equal(text(chatParts({ type: 'callback-settled', sessionId: 'sess_root', turnId: 't', agent: 'main', callbackId: 'cb_none', outcome: 'closed', by: 'cancel' }, ctx)), '– ⟦⟦Closed unanswered⟧.⟧');
    } finally {
      l10n.config({ contents: {} });
    }
    assert.equal(CHAT_TEXTS.cancelled, 'The session was cancelled.');
  });

  it('untrusted text in our markdown never makes a link, an image, a command or a new line (property)', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 80 }), fc.string({ maxLength: 40 }), (a, b) => {
      const s = `${a}[x](command:agentPolicy.allow)${b}\n![i](https://e.example)`;
      const escaped = escapeMarkdown(s);
      assert.ok(!/\n/.test(escaped));
      // Every [ ] ( ) ! : left is escaped: no link syntax survives.
      assert.ok(!/(^|[^\\])[[\]()!:]/.test(escaped.replace(/\\\\/g, '')), escaped);
      const span = codeSpan(s);
      const fence = /^`+/.exec(span)![0];
      assert.ok(!span.slice(fence.length, -fence.length).includes(fence), 'the fence is longer than any run inside');
    }));
  });
});
