// Managed controls in a real VS Code (code-server, see harness.ts): with a managed policy that says
// `allowForSession: false` and `addRule: false`, an ask's notification offers no Allow for Session
// (Allow for 15 Minutes and 1 Hour stay), its More… offers no Allow and Add Rule…, and neither does
// the command palette. The ask comes from Claude Code's hook (the built CLI, as grants.test.ts runs
// it). Run with `npm run test:e2e -- --grep "managed controls"`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findEditor } from '../../src/hooks/editor/editorBridge';
import { claudeHook, decisionOf, useStateFolder } from './claudeHook';
import { activated, countLabel, useVsCode } from './harness';

describe('managed controls in VS Code (e2e)', function () {
  const { open } = useVsCode();
  const state = useStateFolder('agent-policy-e2e-managed-');
  let managedDir = '';
  before(() => {
    managedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-managed-policy-'));
    fs.writeFileSync(path.join(managedDir, 'managed.jsonc'), JSON.stringify({ version: 1, controls: { allowForSession: false, addRule: false } }, null, 2));
  });
  after(() => fs.rmSync(managedDir, { recursive: true, force: true }));

  it('a notification and the palette offer no Allow for Session and no Allow and Add Rule…; Allow for 1 Hour settles the call', async () => {
    const v = await open('managed-controls', { settings: { 'agentPolicy.managedPolicyFile': path.join(managedDir, 'managed.jsonc') } });
    await activated(v);
    await v.waitFor('the window\'s discovery file for the hooks', () => findEditor(v.workspace), 60_000);

    const first = claudeHook(v, state(), 'rm -rf build');
    const ask = /Claude Code wants to run builtin\.run_command: rm -rf build/;
    const toast = await v.notification(ask, 60_000);
    for (const b of ['Allow', 'Allow for 1 Hour', 'Deny', 'More…']) {
      assert.ok(await toast.getByRole('link', { name: b, exact: true }).count(), `the notification has an answer "${b}"`);
    }
    assert.equal(await toast.getByRole('link', { name: 'Allow for Session', exact: true }).count(), 0, 'no Allow for Session under allowForSession: false');
    await v.screenshot('managed-notification');

    await v.clickNotificationButton(ask, 'More…');
    const more = (await v.quickPickItems()).filter((i) => i.kind === 'item').map((i) => i.label);
    assert.ok(more.some((l) => l.includes('Explain This Call')), more.join('\n'));
    assert.ok(!more.some((l) => l.includes('Allow and Add Rule')), `More… offers no Allow and Add Rule…:\n${more.join('\n')}`);
    assert.ok(!more.some((l) => l.includes('Allow for Session')), more.join('\n'));
    await v.screenshot('managed-more');
    await v.page.keyboard.press('Escape');

    // The palette's answer pick offers the same answers, and answering there settles the hook's call.
    await v.runCommand('Agent Policy: Answer Pending Approval');
    await v.pickQuickItem(/builtin\.run_command/);
    const answers = (await v.quickPickItems()).filter((i) => i.kind === 'item').map((i) => i.label);
    assert.ok(answers.some((l) => /Allow for 1 Hour/.test(l)) && !answers.some((l) => /Allow for Session/.test(l)), answers.join('\n'));
    await v.pickQuickItem(/Allow for 1 Hour/);
    assert.equal(decisionOf(await first).decision, 'allow');
  });

  describe('the system managed policy', () => {
    let systemDir = '';
    let before: string | undefined;
    beforeEach(() => {
      // A root-owned folder no one else may write (mkdtemp makes it 0700 under the sticky /tmp):
      // the test stand-in for /etc/agentpolicy, taken only because it passes the same ownership check.
      systemDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-system-'));
      fs.writeFileSync(path.join(systemDir, 'managed.agentpolicy.jsonc'), JSON.stringify({ version: 1, rules: [{ id: 'no-rm', tools: ['builtin.run_command'], commands: ['rm *'], decision: 'deny', reason: 'the organisation says no' }] }), { mode: 0o644 });
      before = process.env.AGENTPOLICY_SYSTEM_DIR;
      process.env.AGENTPOLICY_SYSTEM_DIR = systemDir;
    });
    afterEach(() => {
      if (before === undefined) delete process.env.AGENTPOLICY_SYSTEM_DIR;
      else process.env.AGENTPOLICY_SYSTEM_DIR = before;
      fs.rmSync(systemDir, { recursive: true, force: true });
    });

    it('is in force, says so in the status bar, and a trial file in the setting cannot loosen it', async function () {
      if (process.getuid?.() !== 0) this.skip(); // the stand-in folder must be root's
      const trial = path.join(managedDir, 'allow-all.jsonc');
      fs.writeFileSync(trial, JSON.stringify({ version: 1, default: 'allow' }));
      const v = await open('managed-system', { settings: { 'agentPolicy.managedPolicyFile': trial } });
      await activated(v);
      const item = await v.statusBarItem(countLabel(0));
      await item.hover();
      const system = path.join(systemDir, 'managed.agentpolicy.jsonc');
      const tooltip = await v.waitFor('the status bar tooltip naming the system managed policy', async () => {
        const text = (await v.page.locator('.monaco-hover, .workbench-hover').allInnerTexts().catch(() => [] as string[])).join('\n');
        return text.includes(`managed policy: ${system} (the system's`) ? text : undefined;
      });
      assert.doesNotMatch(tooltip, /allow-all\.jsonc/);
      await v.screenshot('managed-system-tooltip');
      await v.waitFor("the window's discovery file for the hooks", () => findEditor(v.workspace), 60_000);
      const run = decisionOf(await claudeHook(v, state(), 'rm -rf build'));
      assert.equal(run.decision, 'deny');
      assert.match(run.reason ?? '', /the organisation says no/);
    });
  });
});
