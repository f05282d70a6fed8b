// Another maker's agent asking through its hook, answered in a real VS Code (code-server, see
// harness.ts): `agentpolicy hook --agent claude` (the built dist/cli.js, given Claude Code's hook
// input on stdin, as Claude Code runs it) finds the window of the folder, its ask shows as
// "Claude Code wants to run …" with a "Claude Code · <session>" node in Open Callbacks, and what a
// person clicks is what the hook answers Claude Code. Then the real Claude Code CLI (from
// .cache/agent-clis, scripts/ensure-agent-clis.sh; offline against a scripted model, as
// test/hosts runs it) asks the same way, and its command runs only once a person clicks Allow.
// Run with `npm run test:e2e -- --grep "other agents"`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findEditor } from '../../src/hooks/editor/editorBridge';
import { readAuditLog } from '../../src/runtime/audit/auditRead';
import { ownProcessAlive as processAlive } from '../../src/runtime/sandbox/processState';
import { readServiceDiscovery } from '../../src/hooks/state/serviceFiles';
import { binPath, claude } from '../hosts/hostDrivers';
import { runHostIn } from '../hosts/hostRun';
import { AGENTPOLICY_CLI, installHook } from '../hosts/installHook';
import { CLAUDE_SESSION as SESSION, claudeHook, decisionOf, useStateFolder } from './claudeHook';
import { activated, countLabel, stateDirOf, useVsCode } from './harness';

const VIEW = 'Open Callbacks';

describe('Asks of other agents answered in VS Code (e2e)', function () {
  const { open } = useVsCode();
  const state = useStateFolder('agent-policy-e2e-hook-');

  it('a Claude Code hook asks: the notification names Claude Code, Allow lets the call run, Allow for Session from the palette answers the same call again at once, Allow and Add Rule makes the next one the rule\'s', async () => {
    const v = await open('hook-asks');
    await activated(v);
    const editor = await v.waitFor('the window\'s discovery file for the hooks', () => findEditor(v.workspace), 60_000);
    assert.equal(editor.trusted, true);

    // The sample policy asks before any command it does not know (its default).
    const first = claudeHook(v, state(), 'rm -rf build');
    const ask = /Claude Code wants to run builtin\.run_command: rm -rf build/;
    const toast = await v.notification(ask, 60_000);
    for (const b of ['Allow', 'Allow for Session', 'Deny']) {
      assert.ok(await toast.getByRole('link', { name: b, exact: true }).count(), `the notification has an answer "${b}"`);
    }
    const rows = await v.waitFor('the host session and its ask in Open Callbacks', async () => {
      const items = await v.treeItems(VIEW);
      return items.some((i) => /^Claude Code · b9adf915$/.test(i.label)) && items.some((i) => i.label === 'builtin.run_command') ? items : undefined;
    });
    const node = rows.find((i) => i.label.startsWith('Claude Code'))!;
    assert.match(node.description, /1 open/);
    await v.screenshot('hook-ask-notification');
    await v.clickNotificationButton(ask, 'Allow');
    const allowed = await first;
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.deepEqual(decisionOf(allowed), { decision: 'allow', reason: 'a person allowed this call in the editor', sandboxed: true });
    await v.statusBarItem(countLabel(0), 30_000);

    // The palette, and Allow for Session: the same call in the same Claude Code session is then allowed without a prompt.
    const second = claudeHook(v, state(), 'rm -rf dist');
    await v.statusBarItem(countLabel(1), 60_000);
    await v.runCommand('Agent Policy: Answer Pending Approval');
    const items = await v.quickPickItems();
    assert.ok(items.some((i) => i.kind === 'separator' && /Claude Code/.test(i.label)), `the pick groups it under Claude Code: ${JSON.stringify(items)}`);
    await v.pickQuickItem(/builtin\.run_command/);
    await v.pickQuickItem(/Allow for Session/);
    assert.deepEqual(decisionOf(await second), { decision: 'allow', reason: 'a person allowed this call in the editor', sandboxed: true });
    assert.deepEqual(decisionOf(await claudeHook(v, state(), 'rm -rf dist')), { decision: 'allow', reason: 'allowed for this session in the editor', sandboxed: true });

    // Allow and Add Rule: the rule goes into .agentpolicy.jsonc, this call is allowed, and the hook's next same call is the rule's.
    const third = claudeHook(v, state(), 'rm -rf out');
    const ruleAsk = /Claude Code wants to run builtin\.run_command: rm -rf out/;
    await v.clickNotificationButton(ruleAsk, 'More…', 60_000);
    await v.pickQuickItem(/Allow and Add Rule/);
    await v.pickQuickItem(/This exact input/);
    assert.deepEqual(decisionOf(await third), { decision: 'allow', reason: 'a person allowed this call in the editor', sandboxed: true });
    assert.match(fs.readFileSync(path.join(v.workspace, '.agentpolicy.jsonc'), 'utf8'), /rm -rf out/, 'the rule is in the workspace policy');
    const byRule = decisionOf(await claudeHook(v, state(), 'rm -rf out'));
    assert.equal(byRule.decision, 'allow');
    assert.match(byRule.reason ?? '', /allowed by workspace rule/);

    const lines = readAuditLog(editor.auditFile).entries.filter((e) => e.session === `claude:${SESSION}`);
    const seen = lines.map((e) => `${e.event} ${e.summary ?? ''} ${e.decision ?? ''} ${e.answer ?? ''} ${e.answeredBy ?? ''}`.replace(/\s+/g, ' ').trim());
    for (const want of [
      'callback-settled allow-once person',
      'callback-settled allow-session person',
      'decision rm -rf dist allow allow-session session',
    ]) assert.ok(seen.includes(want), `the window's audit log has "${want}":\n${seen.join('\n')}`);
    assert.equal(lines.filter((e) => e.event === 'callback-opened').length, 3, 'three asks were put to a person');
  });

  it('the real Claude Code CLI asks through its hook; its command runs once a person clicks Allow in the notification', async function () {
    if (!fs.existsSync(binPath(claude))) {
      console.warn(`    skipped: Claude Code is not installed at ${binPath(claude)} (run scripts/ensure-agent-clis.sh)`);
      this.skip();
    }
    // The hook entry as a person writes it: agentpolicy hook install --agent claude.
    const v = await open('hook-asks-claude', { prepare: (ws) => installHook('claude', ws, { launcher: `node ${AGENTPOLICY_CLI}` }) });
    await activated(v);
    const editor = await v.waitFor('the window\'s discovery file for the hooks', () => findEditor(v.workspace), 60_000);
    const home = path.join(state(), 'home');
    fs.mkdirSync(path.join(home, 'run'), { recursive: true, mode: 0o700 });
    const where = { root: state(), project: v.workspace, home, exists: (rel: string) => fs.existsSync(path.join(v.workspace, rel)), auditLines: () => [], dispose: () => undefined };
    // No --allowedTools: in -p Claude Code refuses a Bash call unless the hook allows it, so only the click can let it run.
    // The host's own XDG_RUNTIME_DIR is the run's (test/hosts gives it one in its home) unless the window has one: then
    // they share the desktop session's; without, the hook finds the window in <tmpdir>/agentpolicy-<uid>.
    const runtime: Record<string, string> = process.env.XDG_RUNTIME_DIR ? { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR } : {};
    const running = runHostIn(claude, where, { command: 'mkdir asked-dir', env: runtime, timeoutMs: 150_000 });
    const ask = /Claude Code wants to run builtin\.run_command: mkdir asked-dir/;
    await v.notification(ask, 90_000);
    assert.equal(where.exists('asked-dir'), false, 'nothing ran before the answer');
    await v.waitFor('a Claude Code session node in Open Callbacks', async () => (await v.treeItems(VIEW)).some((i) => /^Claude Code · [0-9a-f]{8}$/.test(i.label)) || undefined);
    await v.screenshot('hook-ask-real-claude');
    await v.clickNotificationButton(ask, 'Allow');
    const result = await running;
    assert.equal(result.run.timedOut, false, result.explain());
    assert.ok(where.exists('asked-dir'), `Claude Code did not run the allowed command\n${result.explain()}`);
    const settled = readAuditLog(editor.auditFile).entries.filter((e) => e.event === 'callback-settled' && e.session?.startsWith('claude:'));
    assert.deepEqual(settled.map((e) => [e.answer, e.answeredBy]), [['allow-once', 'person']]);
  });

  it('Govern Other Agents sets up Claude Code\'s http hook to the decision service this window runs; the real Claude Code asks here through it, and its command runs once allowed, in our sandbox', async function () {
    if (!fs.existsSync(binPath(claude))) {
      console.warn(`    skipped: Claude Code is not installed at ${binPath(claude)} (run scripts/ensure-agent-clis.sh)`);
      this.skip();
    }
    const v = await open('govern-claude-http');
    await activated(v);
    const stateDir = stateDirOf(v);
    const service = await v.waitFor('the window\'s decision service', () => {
      const found = readServiceDiscovery(stateDir);
      return found !== undefined && processAlive(found.pid) ? found : undefined;
    }, 60_000);

    await v.runCommand('Agent Policy: Govern Other Agents in This Folder');
    await v.quickPickItems();
    const row = v.page.locator('.quick-input-widget .quick-input-list .monaco-list-row').filter({ hasText: 'Claude Code' }).first();
    // A pick of many: clicking a row ticks it, Enter accepts the ticked ones.
    await row.click();
    await v.waitFor('Claude Code ticked', async () => (await row.getAttribute('aria-checked')) === 'true' || undefined, 10_000);
    await v.page.keyboard.press('Enter');
    const settingsFile = path.join(v.workspace, '.claude', 'settings.local.json');
    const settings = await v.waitFor('.claude/settings.local.json', () => (fs.existsSync(settingsFile) ? JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<Record<string, string>> }>> } : undefined), 30_000);
    const entry = settings.hooks.PreToolUse![0]!.hooks[0]!;
    assert.equal(entry.type, 'http');
    assert.equal(new URL(entry.url!).port, new URL(service.url).port, 'the hook names the port the window\'s service listens on');
    const ensure = settings.hooks.SessionStart![0]!.hooks[0]!.command!;
    const client = fs.readFileSync(ensure.replace(/ serve --ensure$/, '').replace(/^'|'$/g, ''), 'utf8');
    assert.match(client, /^AP_CLI=.*extensions.*\/dist\/cli\.js'?$/m, 'the client falls back to the CLI the extension ships');

    const home = path.join(state(), 'home');
    fs.mkdirSync(path.join(home, 'run'), { recursive: true, mode: 0o700 });
    const key = path.join(home, '.ssh', 'id_rsa');
    fs.mkdirSync(path.dirname(key), { recursive: true, mode: 0o700 });
    fs.writeFileSync(key, 'AGENTPOLICY-E2E-KEY\n', { mode: 0o600 });
    const where = { root: state(), project: v.workspace, home, exists: (rel: string) => fs.existsSync(path.join(v.workspace, rel)), auditLines: () => [], dispose: () => undefined };
    const runtime: Record<string, string> = process.env.XDG_RUNTIME_DIR ? { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR } : {};
    // Claude Code's state folder is the window's: its SessionStart hook finds the service running.
    const running = runHostIn(claude, where, { command: `mkdir asked-dir; cat ${key}`, env: { ...runtime, XDG_STATE_HOME: path.dirname(stateDir) }, timeoutMs: 150_000 });
    const ask = /Claude Code wants to run builtin\.run_command: mkdir asked-dir/;
    await v.notification(ask, 90_000);
    assert.equal(where.exists('asked-dir'), false, 'nothing ran before the answer');
    await v.clickNotificationButton(ask, 'Allow');
    const result = await running;
    assert.equal(result.run.timedOut, false, result.explain());
    assert.ok(where.exists('asked-dir'), `Claude Code did not run the allowed command\n${result.explain()}`);
    const output = result.model.toolResults.join('\n');
    assert.doesNotMatch(output, /AGENTPOLICY-E2E-KEY/, `the home key was read: the command did not run in our sandbox\n${result.explain()}`);
    assert.match(output, /No such file or directory|Permission denied/, result.explain());
    assert.equal(readServiceDiscovery(stateDir)?.pid, service.pid, 'the window\'s service answered; no other was started');
    const editor = findEditor(v.workspace)!;
    const decided = readAuditLog(editor.auditFile).entries.filter((e) => e.event === 'decision' && e.session?.startsWith('claude:'));
    assert.equal(decided.length, 1, 'one decision, by the service');
    assert.equal(typeof decided[0]!.hookMs, 'number');

    // The pick shows who is governed and how: Claude Code's row says what hook status says.
    await v.runCommand('Agent Policy: Govern Other Agents in This Folder');
    await v.quickPickItems();
    const label = (await row.getAttribute('aria-label')) ?? '';
    assert.match(label, /http hook, answered by the decision service · service reachable · last call .*: ask in [\d.]+ ms · blocks a call if the hook fails · allowed commands in our sandbox/);
    await v.page.keyboard.press('Escape');
  });
});
