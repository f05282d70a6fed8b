// Another maker's agent asking through its hook, answered in a real VS Code (code-server, see
// harness.ts): `agentpolicy hook --agent claude` (the built dist/cli.js, given Claude Code's hook
// input on stdin, as Claude Code runs it) finds the window of the folder, its ask shows as
// "Claude Code wants to run …" with a "Claude Code · <session>" node in Open Callbacks, and what a
// person clicks is what the hook answers Claude Code. Run with `npm run test:e2e -- --grep hook`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findEditor } from '../../src/hooks/editorBridge';
import { readAuditLog } from '../../src/runtime/auditRead';
import { activated, countLabel, REPO, useVsCode, type VsCode } from './harness';

const VIEW = 'Open Callbacks';
const SESSION = 'b9adf915-4c1a-4e2e-9d7e-0123456789ab';

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the hook as Claude Code would for a Bash call in the workspace; resolves when it has answered. */
function claudeHook(v: VsCode, state: string, command: string): Promise<HookRun> {
  const stdin = JSON.stringify({
    session_id: SESSION, transcript_path: path.join(state, 'transcript.jsonl'), cwd: v.workspace, permission_mode: 'default',
    hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: `toolu_${command.length}`,
  });
  const child = spawn(process.execPath, [path.join(REPO, 'dist', 'cli.js'), 'hook', '--agent', 'claude', '--timeout', '120'], {
    cwd: v.workspace, env: { ...process.env, XDG_STATE_HOME: state, CLAUDE_PROJECT_DIR: v.workspace }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function decisionOf(run: HookRun): { decision?: string; reason?: string } {
  const out = JSON.parse(run.stdout || '{}') as { hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string } };
  return { decision: out.hookSpecificOutput?.permissionDecision, reason: out.hookSpecificOutput?.permissionDecisionReason };
}

describe('Asks of other agents answered in VS Code (e2e)', function () {
  const { open } = useVsCode();
  let state: string;
  beforeEach(() => (state = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-hook-'))));
  afterEach(() => fs.rmSync(state, { recursive: true, force: true }));

  it('a Claude Code hook asks: the notification names Claude Code, Allow lets the call run, Allow for Session from the palette answers the same call again at once', async () => {
    const v = await open('hook-asks');
    await activated(v);
    const editor = await v.waitFor('the window\'s discovery file for the hooks', () => findEditor(v.workspace), 60_000);
    assert.equal(editor.trusted, true);

    // The sample policy asks before any command it does not know (its default).
    const first = claudeHook(v, state, 'rm -rf build');
    const ask = /Claude Code wants to run builtin\.run_command: rm -rf build/;
    const toast = await v.notification(ask, 60_000);
    for (const b of ['Allow', 'Allow for Session', 'Deny']) {
      assert.ok(await toast.getByRole('button', { name: b, exact: true }).count(), `the notification has a button "${b}"`);
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
    assert.deepEqual(decisionOf(allowed), { decision: 'allow', reason: 'a person allowed this call in the editor' });
    await v.statusBarItem(countLabel(0), 30_000);

    // The palette, and Allow for Session: the same call in the same Claude Code session is then allowed without a prompt.
    const second = claudeHook(v, state, 'rm -rf dist');
    await v.statusBarItem(countLabel(1), 60_000);
    await v.runCommand('Agent Policy: Answer Pending Approval');
    const items = await v.quickPickItems();
    assert.ok(items.some((i) => i.kind === 'separator' && /Claude Code/.test(i.label)), `the pick groups it under Claude Code: ${JSON.stringify(items)}`);
    await v.pickQuickItem(/builtin\.run_command/);
    await v.pickQuickItem(/Allow for Session/);
    assert.deepEqual(decisionOf(await second), { decision: 'allow', reason: 'a person allowed this call in the editor' });
    assert.deepEqual(decisionOf(await claudeHook(v, state, 'rm -rf dist')), { decision: 'allow', reason: 'allowed for this session in the editor' });

    const lines = readAuditLog(editor.auditFile).entries.filter((e) => e.session === `claude:${SESSION}`);
    const seen = lines.map((e) => `${e.event} ${e.summary ?? ''} ${e.decision ?? ''} ${e.answer ?? ''} ${e.answeredBy ?? ''}`.replace(/\s+/g, ' ').trim());
    for (const want of [
      'callback-settled allow-once person',
      'callback-settled allow-session person',
      'decision rm -rf dist allow allow-session session',
    ]) assert.ok(seen.includes(want), `the window's audit log has "${want}":\n${seen.join('\n')}`);
    assert.equal(lines.filter((e) => e.event === 'callback-opened').length, 2, 'two asks were put to a person');
  });
});
