// The extension in a real VS Code (code-server + chromium, see harness.ts), installed from its
// VSIX, on a fresh copy of policies/sample-workspace per test: activation, starting a session,
// answering its asks from a notification, the command palette and the tree, and the untrusted
// workspace. Each test saves a screenshot to test-results/e2e/. Run with `npm run test:e2e`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { activated, countLabel, escapeRe, exactly, sleep, startSession, textOf, transcriptText, useVsCode, waitForFile, type VsCode } from './harness';

const PROMPT = 'What do the Atlas and the Beacon cost?';
const ANSWER = 'Prices: atlas: €129.00 and beacon: €49.50.';
const CONTAINER = 'Agent Policy';
const VIEW = 'Open Callbacks';
const WRITE_ANSWER = /main wants to run builtin\.write_file/;

describe('Agent Policy in VS Code (e2e)', function () {
  const { open } = useVsCode();

  async function callbackRows(v: VsCode): Promise<string[]> {
    return (await v.treeItems(VIEW)).map((i) => `${i.label} ${i.description}`).filter((l) => l.includes('builtin.write_file'));
  }

  it('activates on a workspace with .agentpolicy.jsonc: shield and count in the status bar, the Open Callbacks view with its welcome', async () => {
    const v = await open('activation');
    await activated(v);
    const item = await v.statusBarItem(countLabel(0));
    assert.ok(await item.locator('[class*="codicon-shield"]').count(), 'the status bar entry shows a shield icon');
    assert.match(await v.statusBarText(countLabel(0)), /\b0\b/, 'the status bar entry shows the count');

    const view = await v.openView(VIEW);
    await view.locator('.welcome-view-content', { hasText: 'Nothing is waiting for you.' }).waitFor({ state: 'visible', timeout: 30_000 })
      .catch(async () => { throw await v.failure('the Open Callbacks view does not show "Nothing is waiting for you."'); });
    assert.equal(await v.activityBadge(CONTAINER), '', 'no badge while nothing is open');
    await v.screenshot('activation');
  });

  it('starts a session from the palette and approves its write from a notification', async () => {
    const v = await open('approve-from-notification');
    await activated(v);
    await startSession(v, 'main', PROMPT);

    const toast = await v.notification(WRITE_ANSWER, 120_000);
    const text = await textOf(toast);
    assert.match(text, /path: src\/answer\.txt/, `the notification names the path (it says: ${text})`);
    for (const b of ['Allow', 'Allow for Session', 'Deny']) {
      assert.ok(await toast.getByRole('link', { name: b, exact: true }).count(), `the notification has an answer "${b}"`);
    }
    await v.screenshot('approve-notification');
    await v.clickNotificationButton(WRITE_ANSWER, 'Allow');

    await waitForFile(v, 'src/answer.txt', /atlas: €129\.00[\s\S]*beacon: €49\.50/);
    const t = await transcriptText(v, new RegExp(`completed: ${escapeRe(ANSWER)}`));
    assert.ok(answeredAfter(t, 'builtin.write_file', /\ballow/), `the transcript has the write and its allow:\n${t}`);
    await v.statusBarItem(countLabel(0));
    await v.screenshot('approve-transcript');
  });

  it('an ask answered from the tree: its notification closes at once, and is not left in the Notification Center', async () => {
    const v = await open('notification-closes');
    await activated(v);
    await startSession(v, 'main', PROMPT);
    await v.notification(WRITE_ANSWER, 120_000);
    const row = await v.treeItem(VIEW, /^builtin\.write_file/, 30_000);
    await row.hover();
    await row.locator('.action-label[aria-label="Allow"]').click();
    await waitForFile(v, 'src/answer.txt', /atlas: €129\.00/);
    const toasts = v.page.locator('.notifications-toasts .notification-toast').filter({ hasText: WRITE_ANSWER });
    await v.waitFor('the notification to close', async () => ((await toasts.count()) === 0 ? true : undefined), 10_000);
    assert.ok(!(await v.notificationCenterTexts()).some((t) => WRITE_ANSWER.test(t)), 'nor is it in the Notification Center');
    await v.screenshot('notification-closed-after-tree');
  });

  it('denies the write from a notification: nothing is written and the transcript says denied', async () => {
    const v = await open('deny-from-notification');
    await activated(v);
    await startSession(v, 'main', PROMPT);
    await v.clickNotificationButton(WRITE_ANSWER, 'Deny', 120_000);

    const t = await transcriptText(v, /denied/);
    assert.ok(answeredAfter(t, 'builtin.write_file', /\bdenied\b/), `the transcript has the write and its denial:\n${t}`);
    assert.equal(fs.existsSync(path.join(v.workspace, 'src', 'answer.txt')), false, 'a denied write leaves no src/answer.txt');
    await v.statusBarItem(countLabel(0));
    await v.screenshot('deny-transcript');
  });

  it("in an untrusted workspace the workspace's allow rules ask: the researchers' commands raise notifications", async () => {
    const v = await open('untrusted', { trusted: false });
    // The setup itself: VS Code is in Restricted Mode for this folder.
    await v.statusBarItem(/Restricted Mode/, 60_000);
    await activated(v);
    await startSession(v, 'main', PROMPT);

    // Every workspace allow asks here: first main's two agents.spawn (allowed below, so that both
    // researchers run), then the researchers' `node src/index.js …`: two toasts, or one coalesced
    // "2 approvals are waiting" with Open. Toasts are found by their text, never by position, and
    // what they said is collected as they come: a toast hides after ~10 s.
    const toasts = v.page.locator('.notifications-toasts .notification-toast');
    const coalescedToast = toasts.filter({ hasText: /\b\d+ approvals are waiting\b/ }).filter({ has: v.page.getByRole('button', { name: 'Open', exact: true }) });
    const spawnAsk = (task: string) => new RegExp(`wants to run agents\\.spawn.*\\b${task}\\b`);
    const commandAsks = new Set<string>();
    let coalescedCommands = '';
    const allowed = new Set<string>();
    let spawnsAllowedFromPalette = 0;
    const spawnsAllowed = () => allowed.size + spawnsAllowedFromPalette >= 2;
    const collect = async () => {
      for (const t of await v.toastTexts()) {
        if (/builtin\.run_command/.test(t)) commandAsks.add(t);
        if (spawnsAllowed() && /\b2 approvals are waiting\b/.test(t)) coalescedCommands = t;
      }
    };
    await v.waitFor('the two agents.spawn asks, allowed from their notifications', async () => {
      await collect();
      for (const task of ['atlas', 'beacon']) {
        if (allowed.has(task) || !(await toasts.filter({ hasText: spawnAsk(task) }).first().isVisible())) continue;
        await v.clickNotificationButton(spawnAsk(task), 'Allow', 5000);
        allowed.add(task);
        await collect();
      }
      const coalesced = coalescedToast.first();
      if (!spawnsAllowed() && (await coalesced.isVisible())) {
        // The spawns came coalesced: allow one from the palette, and clear that toast so that it
        // is not taken for the researchers' later.
        await coalesced.locator('.codicon-notifications-clear').click().catch(() => undefined);
        await v.runCommand('Agent Policy: Answer Pending Approval');
        await v.pickQuickItem(/agents\.spawn/);
        await v.pickQuickItem(/^\s*Allow\s*$/);
        spawnsAllowedFromPalette++;
      }
      return spawnsAllowed() || undefined;
    }, 120_000);
    // Both researchers' commands are open callbacks now.
    const collector = setInterval(() => void collect().catch(() => undefined), 300);
    try {
      await v.statusBarItem(countLabel(2), 90_000);
    } finally {
      clearInterval(collector);
    }
    await v.waitFor('the researchers\' notifications', async () => {
      await collect();
      return commandAsks.size >= 2 || coalescedCommands || undefined;
    }, 5000).catch(() => undefined);
    await v.screenshot('untrusted-asks');
    let asked = coalescedCommands ? [coalescedCommands] : [...commandAsks];
    if (asked.length < 2 && !coalescedCommands) {
      // A toast that came and went between two looks is still in the Notification Center.
      asked = (await v.notificationCenterTexts()).filter((t) => /builtin\.run_command/.test(t));
    }
    assert.ok(
      coalescedCommands || (asked.some((t) => t.includes('node src/index.js atlas')) && asked.some((t) => t.includes('node src/index.js beacon'))),
      `each researcher's command raised a notification (seen: ${JSON.stringify(asked)})`,
    );
    assert.equal(fs.existsSync(path.join(v.workspace, 'src', 'answer.txt')), false);
  });

  it('answers one of two pending approvals from the command palette; the other stays open', async () => {
    const v = await open('answer-pending');
    await activated(v);
    await startSession(v, 'reviewers', 'Review');
    await v.statusBarItem(countLabel(2), 120_000);

    await v.runCommand('Agent Policy: Answer Pending Approval');
    const items = await v.quickPickItems();
    const callbacks = items.filter((i) => i.kind === 'item');
    const separators = items.filter((i) => i.kind === 'separator');
    await v.screenshot('answer-pending-pick');
    assert.equal(callbacks.length, 2, `two callbacks are listed: ${JSON.stringify(items)}`);
    for (const c of callbacks) assert.match(c.label, /builtin\.write_file/);
    assert.ok(separators.length >= 1, `the callbacks are grouped under separators: ${JSON.stringify(items)}`);
    for (const s of separators) assert.match(s.label, /checker|reviewers/, `a separator names the session or subagent: ${s.label}`);
    assert.ok(callbacks.every((c) => c.group), `each callback sits under a separator: ${JSON.stringify(items)}`);

    const first = callbacks[0]!;
    await v.pickQuickItem(exactly(first.label));
    const answers = (await v.quickPickItems()).filter((i) => i.kind === 'item').map((i) => i.label);
    assert.ok(answers.some((a) => /^Allow$/.test(a)), `the answers include Allow: ${answers.join(', ')}`);
    await v.pickQuickItem(/^\s*Allow\s*$/);

    await v.statusBarItem(countLabel(1), 60_000);
    const notes = await v.waitFor('one checker note on disk', () => {
      const found = ['code', 'docs'].filter((t) => fs.existsSync(path.join(v.workspace, 'notes', `${t}.md`)));
      return found.length ? found : undefined;
    }, 60_000);
    assert.equal(notes.length, 1, `only the allowed checker wrote its note: ${notes.join(', ')}`);
    const rows = await v.waitFor('one callback left in the Open Callbacks view', async () => {
      const r = await callbackRows(v);
      return r.length === 1 ? r : undefined;
    });
    assert.match(rows[0]!, /builtin\.write_file/);
    await v.screenshot('answer-pending-after');
  });

  it('shows the count as a badge and answers from the tree: inline Allow/Deny on hover, Deny removes the item', async () => {
    const v = await open('tree-inline-actions');
    await activated(v);
    await startSession(v, 'reviewers', 'Review');
    await v.statusBarItem(countLabel(2), 120_000);

    await v.openView(VIEW);
    await v.waitFor('the badge "2" on the Agent Policy activity bar entry', async () => ((await v.activityBadge(CONTAINER)) === '2') || undefined);
    const rows = await v.waitFor('two callbacks in the Open Callbacks view', async () => {
      const r = await callbackRows(v);
      return r.length === 2 ? r : undefined;
    });
    assert.equal(rows.length, 2);

    const row = await v.treeItem(VIEW, /builtin\.write_file/);
    await row.hover();
    const allow = row.locator('.actions .action-label[aria-label="Allow"], .actions .action-label[title="Allow"]');
    const deny = row.locator('.actions .action-label[aria-label="Deny"], .actions .action-label[title="Deny"]');
    await allow.first().waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => { throw await v.failure('no inline "Allow" action on a callback item'); });
    await deny.first().waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => { throw await v.failure('no inline "Deny" action on a callback item'); });
    assert.match((await allow.first().getAttribute('class')) ?? '', /codicon/, 'Allow is an icon button');
    assert.match((await deny.first().getAttribute('class')) ?? '', /codicon/, 'Deny is an icon button');
    await v.screenshot('tree-inline-actions');
    await deny.first().click();

    await v.statusBarItem(countLabel(1), 60_000);
    await v.waitFor('one callback left in the tree', async () => ((await callbackRows(v)).length === 1) || undefined);
    await v.waitFor('the badge "1"', async () => ((await v.activityBadge(CONTAINER)) === '1') || undefined);
    await v.screenshot('tree-after-deny');
  });
});

/** A line of the transcript names `tool`, and that line or one after it matches `answer`. */
function answeredAfter(transcript: string, tool: string, answer: RegExp): boolean {
  const lines = transcript.split('\n');
  const at = lines.findIndex((l) => l.includes(tool));
  return at >= 0 && lines.slice(at).some((l) => answer.test(l));
}
