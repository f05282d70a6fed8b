// Editing the policy in a real VS Code: live diagnostics, a rule switched to allow, Allow and
// Add Rule (and undo), and a loosening change from outside held until accepted.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { activated, exactly, sleep, startSession, useVsCode, type VsCode } from './harness';

const PROMPT = 'What do the Atlas and the Beacon cost?';
const WRITE_ANSWER = /main wants to run builtin\.write_file/;
const POLICY = '.agentpolicy.jsonc';

describe('Editing the policy in VS Code (e2e)', function () {
  const vscode = useVsCode();

  async function open(name: string): Promise<VsCode> {
    // Text put into the editor lands exactly as given: nothing indents or formats it.
    const v = await vscode.open(name, { settings: { 'editor.autoIndent': 'none', 'editor.formatOnType': false, 'files.insertFinalNewline': false, 'files.trimTrailingWhitespace': false } });
    await activated(v);
    return v;
  }

  async function problems(v: VsCode): Promise<string> {
    await v.runCommand('View: Focus Problems (Errors, Warnings, Infos)');
    await sleep(500);
    const panel = v.page.locator('.markers-panel');
    return ((await panel.innerText({ timeout: 5000 }).catch(() => '')) ?? '').replace(/\s+/g, ' ');
  }

  /** Records, in the page, whether an ask's notification ever appeared. */
  async function watchForAsks(v: VsCode): Promise<void> {
    await v.page.evaluate(`(() => {
      window.__asked = false;
      new MutationObserver(() => {
        for (const t of document.querySelectorAll('.notification-toast')) {
          if ((t.textContent || '').includes('wants to run')) window.__asked = true;
        }
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    })()`);
  }

  function fileText(v: VsCode, rel: string): string | undefined {
    const f = path.join(v.workspace, rel);
    return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : undefined;
  }

  it('shows a bad rule in Problems as you type, and clears it when fixed', async () => {
    const v = await open('policy-diagnostics');
    await v.runCommand('Agent Policy: Open Workspace Policy');
    await v.waitFor('the policy in the editor', async () => /"version": 1/.test(await v.readEditorText()));
    const good = fs.readFileSync(path.join(v.workspace, POLICY), 'utf8');
    // A typo that must never widen a rule: "tool" for "tools".
    const bad = good.replace('"rules": [', '"rules": [\n    { "tool": ["builtin.run_command"], "decision": "allow" },');
    await v.setEditorText(bad);
    const shown = await v.waitFor('the schema error in Problems', async () => {
      const text = await problems(v);
      return /unknown field "tool"/.test(text) ? text : undefined;
    }, 30_000);
    assert.match(shown, /did you mean "tools"/);
    await v.screenshot('policy-diagnostic');
    await v.setEditorText(good);
    await v.waitFor('Problems to clear', async () => !/unknown field "tool"/.test(await problems(v)), 30_000);
    await v.screenshot('policy-diagnostic-cleared');
  });

  it('a rule switched to allow and saved applies to the next session: no notification', async () => {
    const v = await open('policy-switch-to-allow');
    await v.runCommand('Agent Policy: Open Workspace Policy');
    await v.waitFor('the policy in the editor', async () => /"edit-src"/.test(await v.readEditorText()));
    const text = fs.readFileSync(path.join(v.workspace, POLICY), 'utf8');
    const allowed = text.replace(/("id": "edit-src"[^}]*"decision": )"ask"/, '$1"allow"');
    assert.notEqual(allowed, text, 'the sample has an edit-src ask rule to switch');
    await v.setEditorText(allowed);
    await v.page.keyboard.press('Control+S');
    await v.waitFor('the saved policy on disk', () => fileText(v, POLICY) === allowed, 30_000);
    await watchForAsks(v);
    await startSession(v, 'main', PROMPT);
    await v.waitFor('src/answer.txt written without asking', () => /beacon/.test(fileText(v, 'src/answer.txt') ?? ''), 90_000);
    assert.equal(await v.page.evaluate('window.__asked'), false, 'no ask was raised');
    await v.screenshot('policy-switched-to-allow');
  });

  it('Allow and Add Rule inserts the rule before the rule that asked, allows the call, and undo removes it', async () => {
    const v = await open('allow-and-add-rule');
    await startSession(v, 'main', PROMPT);
    await v.clickNotificationButton(WRITE_ANSWER, 'More…');
    await v.pickQuickItem(/Allow and Add Rule/);
    const suggestions = (await v.quickPickItems()).filter((i) => i.kind === 'item').map((i) => i.label);
    assert.ok(suggestions.length >= 2, `several ways to allow it are offered: ${suggestions.join(' | ')}`);
    await v.pickQuickItem(/folder/i);
    await v.waitFor('src/answer.txt written after the rule was added', () => /beacon/.test(fileText(v, 'src/answer.txt') ?? ''), 90_000);
    const saved = fileText(v, POLICY)!;
    const inserted = saved.indexOf('"decision": "allow"', saved.indexOf('builtin.write_file'));
    const asking = saved.indexOf('"id": "edit-src"');
    assert.ok(inserted > 0 && asking > 0 && saved.lastIndexOf('builtin.write_file', asking) < asking, 'the new rule names builtin.write_file');
    const newRuleAt = saved.search(/"id": "allow-write-file[^"]*"/);
    assert.ok(newRuleAt > 0 && newRuleAt < asking, `the new rule comes before "edit-src":\n${saved}`);
    assert.match(saved, /\/\/ The main agent hands research/, 'comments are kept');
    await v.screenshot('allow-and-add-rule');
    await v.page.keyboard.press('Control+Z');
    await v.waitFor('undo to remove the rule in the editor', async () => !/allow-write-file/.test(await v.readEditorText()), 30_000);
    await v.screenshot('allow-and-add-rule-undone');
  });

  it('an outside change that adds an allow is held: asked until accepted, then in force', async () => {
    const v = await open('loosening-held');
    await sleep(2000); // the first version is the workspace's baseline
    const file = path.join(v.workspace, POLICY);
    const loosened = fs.readFileSync(file, 'utf8').replace(/("id": "edit-src"[^}]*"decision": )"ask"/, '$1"allow"');
    fs.writeFileSync(file, loosened); // as a git pull would
    const held = await v.notification(/changed outside this editor and allows more/, 60_000);
    assert.match((await held.innerText()).replace(/\s+/g, ' '), /builtin\.write_file/);
    await v.screenshot('loosening-held');
    // Not in force yet: the write is still asked.
    await startSession(v, 'main', PROMPT);
    await v.notification(WRITE_ANSWER, 90_000);
    await v.clickNotificationButton(WRITE_ANSWER, 'Deny');
    assert.equal(fileText(v, 'src/answer.txt'), undefined);
    await v.clickNotificationButton(/changed outside this editor and allows more/, 'Accept');
    await watchForAsks(v);
    await startSession(v, 'main', PROMPT);
    await v.waitFor('src/answer.txt written once the change was accepted', () => /beacon/.test(fileText(v, 'src/answer.txt') ?? ''), 90_000);
    assert.equal(await v.page.evaluate('window.__asked'), false, 'no ask after acceptance');
    await v.screenshot('loosening-accepted');
  });
});
