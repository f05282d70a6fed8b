// @agents in VS Code's Chat view, in a real VS Code (code-server, see harness.ts): a conversation
// with the sample's main agent (scripted, offline) whose write asks; the card in the chat allows
// it for the session; a second message continues the same session, whose same write the grant lets
// through unasked and whose new write asks and is allowed from the notification, which the card then says; a click on that settled card runs nothing. Screenshots of
// each step go to test-results/e2e/. Run with `npm run test:e2e -- --grep "Chat view"`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import { activated, CHAT_ON, chatView, countLabel, textOf, transcriptText, useVsCode, waitForFile, writeChatStarter, type VsCode } from './harness';

const FIRST = 'What do the Atlas and the Beacon cost?';
const SECOND = 'Note that the Beacon is on sale.';

describe('Talking to agents in the Chat view (e2e)', function () {
  const { open } = useVsCode();

  it('a conversation with main: its ask is allowed for the session from the card, a second message continues the same session (the grant lets the same write through), and an ask answered from the notification updates its card', async function () {
    this.timeout(400_000);
    const v = await open('chat-participant', {
      settings: CHAT_ON,
      // The starter puts our model and the request in the Chat view's input.
      prepare: (workspace) => writeChatStarter(workspace, `@agents ${FIRST}`),
    });
    await activated(v);
    const { widget: chat, input } = chatView(v);
    await v.waitFor('the Chat view with the starter typed in', async () => ((await textOf(input)).includes(FIRST) ? true : undefined), 120_000);
    await input.click();
    await v.page.keyboard.press('End');
    await v.page.keyboard.press('Enter');

    // 1. The first response: subagents, allowed calls with their rules, then the card of the write.
    // The chat's list is virtualized (a response scrolled out of view leaves the DOM): each step reads the latest response.
    const latest = chat.locator('.interactive-item-container.interactive-response.chat-most-recent-response');
    const first = latest;
    // The chat renders a response's words progressively: the card is whole once its last button shows.
    await v.waitFor('the card of the write in the chat', async () => (/Approval needed/.test(await textOf(first)) && (await cardButton(first, 'Deny').isVisible()) ? true : undefined), 120_000);
    const firstText = await textOf(first);
    assert.match(firstText, /Subagent researcher started: atlas/, firstText);
    assert.match(firstText, /researcher builtin\.run_command node src\/index\.js atlas → allow by rule "test" \.agentpolicy\.jsonc:\d+/, `the rule that allowed, with its line: ${firstText}`);
    assert.ok(await first.locator('a', { hasText: /\.agentpolicy\.jsonc/ }).count() + await first.locator('.chat-inline-anchor-widget', { hasText: /\.agentpolicy\.jsonc/ }).count() > 0, 'the rule is a link');
    assert.match(firstText, /Approval needed — main wants to run builtin\.write_file path: src\/answer\.txt/, firstText);
    assert.match(firstText, /Asked by workspace rule "edit-src" \(\.agentpolicy\.jsonc:\d+\): the agent wants to change the code\./, firstText);
    for (const b of ['Allow', 'Allow for Session', 'Deny']) assert.ok(await cardButton(first, b).count(), `the card has "${b}"`);
    const sessionId = sessionOf(firstText);
    await v.screenshot('chat-1-ask-card');

    await cardButton(first, 'Allow for Session').click();
    await v.waitFor('the answer after the card', async () => (/Prices: atlas: €129\.00 and beacon: €49\.50\./.test(await textOf(first)) ? true : undefined), 120_000);
    assert.match(await textOf(first), /Allowed for the session by a person here in the chat\./);
    await waitForFile(v, 'src/answer.txt', /atlas: €129\.00/);
    await v.statusBarItem(countLabel(0));
    await v.screenshot('chat-2-allowed-from-card');

    // 2. A second message: the same session, a new turn. Its same write is let through by the grant; its new write asks.
    await input.click();
    await v.page.keyboard.type(SECOND);
    await v.page.keyboard.press('Enter');
    const second = latest;
    await v.waitFor('the second card', async () => (/message 2[\s\S]*Approval needed/.test(await textOf(second)) && (await cardButton(second, 'Deny').isVisible()) ? true : undefined), 120_000);
    assert.equal(sessionOf(await textOf(second)), sessionId, 'the second message continues the same session');
    assert.match(await textOf(second), /message 2/);
    assert.match(await textOf(second), /src\/followup\.txt/);
    assert.match(await textOf(second), /builtin\.write_file path: src\/answer\.txt[^\n]*→ allow by session/, 'the grant let the same write through');
    await v.screenshot('chat-3-second-message-ask');

    // 3. Answered from the notification: the card says so, and a click on it after runs nothing.
    const ask = /main wants to run builtin\.write_file: path: src\/followup\.txt/;
    await v.clickNotificationButton(ask, 'Allow', 60_000);
    await v.waitFor('the card to say the notification answered', async () => (/Allowed once by a person from the notification\./.test(await textOf(second)) ? true : undefined), 60_000);
    await v.waitFor('the second answer', async () => (/Noted in src\/followup\.txt: Note that the Beacon is on sale\./.test(await textOf(second)) ? true : undefined), 60_000);
    await waitForFile(v, 'src/followup.txt', /Note that the Beacon is on sale\./);
    await v.screenshot('chat-4-answered-from-notification');

    const audit = () => fs.readFileSync(auditFile(v), 'utf8').split('\n').filter((l) => l.includes('"callback-settled"')).length;
    const settledBefore = audit();
    // A finished answer folds its earlier parts ("Completed N steps"): unfold it to reach the card.
    if (!(await cardButton(second, 'Allow').isVisible())) await second.getByText(/Completed \d+ steps?/).first().click();
    await cardButton(second, 'Allow').click();
    await v.notification(/already answered elsewhere; nothing was run/, 30_000);
    assert.equal(audit(), settledBefore, 'the click on the settled card settled nothing');
    await v.screenshot('chat-5-settled-card-clicked');

    // The transcript: the chat's session, both messages, and who answered each ask.
    const t = await transcriptText(v, /completed: Noted in src\/followup\.txt/);
    assert.match(t, new RegExp(`\\[main\\] > ${FIRST.replace(/[?]/g, '\\?')}`), t);
    assert.match(t, /\[main\] > Note that the Beacon is on sale\./, t);
    assert.match(t, /answered allow-session by person from the chat$/m, t);
    assert.match(t, /answered allow-once by person from the notification$/m, t);
    assert.ok(t.split('\n')[0]!.includes(`${sessionId} (main)`), `one transcript, of the chat's session ${sessionId}:\n${t}`);
    await v.screenshot('chat-6-transcript');

    // The followup "Explain the last decision": the Explain flow, prefilled with that call.
    await chat.getByText('Explain the last decision', { exact: true }).last().click();
    const quickInput = v.page.locator('.quick-input-widget .quick-input-box input');
    await v.waitFor('Explain prefilled with the last call\'s tool', async () => ((await quickInput.inputValue().catch(() => '')) === 'builtin.write_file' ? true : undefined), 60_000);
    await v.page.keyboard.press('Enter');
    await v.waitFor('and its input', async () => ((await quickInput.inputValue().catch(() => '')).includes('src/followup.txt') ? true : undefined), 30_000);
    await v.screenshot('chat-7-explain-followup');
    await v.page.keyboard.press('Escape');
  });
});

/** A button of the chat's cards by its exact label, within one response. */
function cardButton(response: Locator, label: string): Locator {
  return response.locator('.chat-command-button .monaco-button').filter({ hasText: new RegExp(`^\\s*${label}\\s*$`) }).last();
}

function sessionOf(text: string): string {
  const m = /session (sess_[A-Za-z0-9]+)/.exec(text);
  assert.ok(m, `the response names its session: ${text}`);
  return m[1]!;
}

/** The audit log the extension writes in the workspace's storage under code-server's user data. */
function auditFile(v: VsCode): string {
  const root = path.join(v.userDataDir, 'User', 'workspaceStorage');
  for (const dir of fs.readdirSync(root)) {
    const file = path.join(root, dir, 'agent-policy.agent-policy', 'audit.jsonl');
    if (fs.existsSync(file)) return file;
  }
  throw new Error(`no audit.jsonl under ${root}`);
}
