// Grants in a real VS Code (code-server, see harness.ts). An ask answered with "Allow for 15
// Minutes" from its notification, then the same call is not asked again; the grant shows under its
// session in Open Callbacks with its time left, and Revoke there takes it back (the asks come from
// Claude Code's hook, the built CLI as hookAsks.test.ts runs it, whose calls the test makes when it
// likes). And Allow for Session on a compound command in one of our sessions: the same asking
// commands in another chain are not asked, another command is. Run with
// `npm run test:e2e -- --grep "Time-limited"`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findEditor } from '../../src/hooks/editor/editorBridge';
import { readAuditLog } from '../../src/runtime/audit/auditRead';
import { CLAUDE_SESSION, claudeHook, decisionOf, useStateFolder } from './claudeHook';
import { activated, countLabel, startSession, textOf, transcriptText, useVsCode } from './harness';

const VIEW = 'Open Callbacks';
/** A 15-minute grant's row: its time left, then what it covers. */
const GRANT_ROW = /^1[45]m left · rm -rf build$/;

describe('Time-limited grants in VS Code (e2e)', function () {
  const { open } = useVsCode();
  const state = useStateFolder('agent-policy-e2e-grant-');

  it('Allow for 15 Minutes from a notification (its More…): the same call is then not asked; the grant is in the tree with its time left, and Revoke there asks again', async () => {
    const v = await open('grant-15-minutes');
    await activated(v);
    const editor = await v.waitFor('the window\'s discovery file for the hooks', () => findEditor(v.workspace), 60_000);

    // The sample policy asks before any command it does not know (its default: remember "session").
    const first = claudeHook(v, state(), 'rm -rf build');
    const ask = /Claude Code wants to run builtin\.run_command: rm -rf build/;
    const toast = await v.notification(ask, 60_000);
    // Four buttons (a fifth would cut every label); the shorter grants are under More….
    for (const b of ['Allow', 'Allow for Session', 'Deny', 'More…']) {
      assert.ok(await toast.getByRole('link', { name: b, exact: true }).count(), `the notification has an answer "${b}"`);
    }
    await v.screenshot('grant-notification');
    await v.clickNotificationButton(ask, 'More…');
    await v.pickQuickItem(/Allow for 15 Minutes/);
    assert.deepEqual(decisionOf(await first), { decision: 'allow', reason: 'a person allowed this call in the editor', sandboxed: true });
    await v.statusBarItem(countLabel(0), 30_000);

    // The same call again: answered by the grant, with no notification and nothing open.
    assert.deepEqual(decisionOf(await claudeHook(v, state(), 'rm -rf build')), { decision: 'allow', reason: 'allowed for a limited time in the editor', sandboxed: true });
    await v.statusBarItem(countLabel(0), 5_000);

    // In the tree: under the Claude Code session, the grant with its tool and time left.
    const rows = await v.waitFor('the grant under its session in Open Callbacks', async () => {
      const items = await v.treeItems(VIEW);
      return items.some((i) => /^Claude Code · b9adf915$/.test(i.label)) && items.some((i) => GRANT_ROW.test(i.label)) ? items : undefined;
    });
    // The time left comes first in the row, so that a long command never cuts it off.
    const grant = rows.find((i) => GRANT_ROW.test(i.label))!;
    assert.equal(grant.description, 'builtin.run_command');
    await v.screenshot('grant-tree');

    // Revoke from the grant's row: the next same call asks again.
    const row = await v.treeItem(VIEW, GRANT_ROW);
    await row.hover();
    await row.locator('.action-label[aria-label="Revoke Grant"]').click();
    await v.waitFor('the grant to leave the tree', async () => !(await v.treeItems(VIEW)).some((i) => GRANT_ROW.test(i.label)) || undefined);
    const third = claudeHook(v, state(), 'rm -rf build');
    await v.clickNotificationButton(ask, 'Deny', 60_000);
    assert.equal(decisionOf(await third).decision, 'deny');

    const lines = readAuditLog(editor.auditFile).entries.filter((e) => e.session === `claude:${CLAUDE_SESSION}`);
    const seen = lines.map((e) => `${e.event} ${e.decision ?? ''} ${e.answer ?? ''} ${e.answeredBy ?? ''} ${e.grantSeconds ?? ''}`.replace(/\s+/g, ' ').trim());
    for (const want of [
      'callback-settled allow-duration person 900',
      'decision allow allow-duration session',
      'grant-revoked allow-duration 900',
      'callback-settled deny person',
    ]) assert.ok(seen.includes(want), `the window's audit log has "${want}":\n${seen.join('\n')}`);
    assert.equal(lines.filter((e) => e.event === 'callback-opened').length, 2, 'two asks were put to a person: the first and the one after Revoke');
  });

  it('Allow for Session on a compound command grants the commands that asked: the same commands in another chain run unasked, another command asks', async () => {
    // An agent that runs three chains: `node src/index.js *` is allowed by the sample policy, `echo` asks (its default).
    const v = await open('grant-parts', {
      prepare: (ws) => {
        fs.writeFileSync(path.join(ws, '.agents.jsonc'), JSON.stringify({
          agents: [{ name: 'chains', model: 'scripted:chains.jsonc', instructions: 'Run the chains.', permissionMode: 'ask', tools: ['builtin.run_command'] }],
        }));
        fs.writeFileSync(path.join(ws, 'chains.jsonc'), JSON.stringify({
          agents: {
            chains: [
              { call: 'run_command', input: { command: 'echo one && node src/index.js atlas && echo two' } },
              { call: 'run_command', input: { command: 'echo two; echo one' } },
              { call: 'run_command', input: { command: 'echo one && echo three' } },
              { say: 'Chains done.' },
            ],
          },
        }));
      },
    });
    await activated(v);
    await startSession(v, 'chains', 'Run the chains');
    const first = /chains wants to run builtin\.run_command: echo one && node src\/index\.js atlas && echo two/;
    await v.clickNotificationButton(first, 'Allow for Session', 120_000);
    // The second chain has only granted commands: no notification. The third has `echo three`.
    const third = /chains wants to run builtin\.run_command: echo one && echo three/;
    const toast = await v.notification(third, 60_000);
    const said = await textOf(toast);
    assert.match(said, /for "echo three" \(1 of 2 parts; "echo one" already granted\)/, `the ask names only the command no grant covers (it says: ${said})`);
    await v.waitFor('the grants of both commands under the session in Open Callbacks', async () => {
      const rows = await v.treeItems(VIEW);
      return ['echo one', 'echo two'].every((granted) => rows.some((i) => i.label === granted && /for the session/.test(i.description))) || undefined;
    });
    await v.screenshot('grant-parts');
    await v.clickNotificationButton(third, 'Deny');
    const t = await transcriptText(v, /completed: Chains done\./);
    assert.match(t, /echo two; echo one"\} -> allow \(session\)/, `the second chain ran by the grants:\n${t}`);
    assert.match(t, /echo one && echo three"\} -> ask/, t);
    // The turn has ended: its grants stay listed, since a next prompt to the session would be answered by them.
    const rows = await v.treeItems(VIEW);
    assert.ok(['echo one', 'echo two'].every((granted) => rows.some((i) => i.label === granted)), `the grants after the turn ended: ${rows.map((i) => `${i.label} (${i.description})`).join(' | ')}`);
    assert.ok(rows.some((i) => i.label === 'chains' && /^completed/.test(i.description)), 'under their session, which says it completed');
  });

  it('a time-limited grant of our own session stays listed, its time left first, after the turn that asked has ended', async () => {
    const command = `echo ${'a-long-argument '.repeat(12).trim()}`;
    const v = await open('grant-outlives-turn', {
      prepare: (ws) => {
        fs.writeFileSync(path.join(ws, '.agents.jsonc'), JSON.stringify({
          agents: [{ name: 'once', model: 'scripted:once.jsonc', instructions: 'Run it.', permissionMode: 'ask', tools: ['builtin.run_command'] }],
        }));
        fs.writeFileSync(path.join(ws, 'once.jsonc'), JSON.stringify({ agents: { once: [{ call: 'run_command', input: { command } }, { say: 'Ran it.' }] } }));
      },
    });
    await activated(v);
    await startSession(v, 'once', 'Run it');
    const ask = /once wants to run builtin\.run_command: echo a-long-argument/;
    await v.clickNotificationButton(ask, 'More…', 120_000);
    await v.pickQuickItem(/Allow for 15 Minutes/);
    await transcriptText(v, /completed: Ran it\./);
    const rows = await v.waitFor('the grant, time first, under the ended session', async () => {
      const items = await v.treeItems(VIEW);
      return items.some((i) => i.label === 'once' && /^completed/.test(i.description)) && items.some((i) => /^1[45]m left · echo a-long-argument/.test(i.label)) ? items : undefined;
    });
    const grant = rows.find((i) => /^1[45]m left · /.test(i.label))!;
    assert.equal(grant.description, 'builtin.run_command');
    await v.screenshot('grant-after-turn');
  });
});
