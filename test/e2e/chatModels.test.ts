// Our models in VS Code's model picker (src/vscode/models/chatModels.ts), in a real VS Code: the Chat view
// opens on the workspace's conversation starter with our scripted model picked, its model picker
// lists the scripted model and the workspace's OpenAI-compatible model, @agents runs on the model
// picked (the scripted one: the agent's own scenario; ours: the runtime's provider), and an agent on
// `vscode-lm:agent-policy/scripted` runs through VS Code's language model API to our own provider.
import assert from 'node:assert/strict';
import { activated, addAgent, CHAT_ON, chatView, countLabel, startSession, textOf, transcriptText, useVsCode, type VsCode, waitForFile, writeChatStarter } from './harness';

const STARTER = '@agents What do the Atlas and the Beacon cost?';
/** The model picker's rows: VS Code shows it as an action widget, a context view or a quick input. */
const MODEL_ROWS = '.action-widget .monaco-list-row, .context-view .monaco-list-row, .quick-input-widget .monaco-list-row';

describe('our models in the Chat view\'s model picker (e2e)', function () {
  const { open } = useVsCode();

  it('the Chat view opens on the workspace\'s starter with the scripted model picked, and its picker lists our models', async function () {
    this.timeout(240_000);
    const v = await open('chat-models-picker', {
      settings: CHAT_ON,
      prepare: (workspace) => {
        writeChatStarter(workspace, STARTER);
        addAgent(workspace, { name: 'mistral', model: 'openai-compatible:mistral-large-latest', instructions: 'Answer briefly.' });
      },
    });
    await activated(v);

    const { input } = chatView(v);
    await v.waitFor('the Chat view with the starter typed in', async () => ((await textOf(input)).includes('What do the Atlas and the Beacon cost?') ? true : undefined), 120_000)
      .catch(async (e: Error) => { throw new Error(`${e.message}\n${await chatDom(v)}`); });
    const picker = await modelPicker(v);
    await v.waitFor('the scripted model picked', async () => (/Scripted \(offline\)/.test(await textOf(picker)) ? true : undefined), 30_000)
      .catch(async (e: Error) => { throw new Error(`${e.message} (the picker shows "${await textOf(picker)}")\n${await chatDom(v)}`); });
    await v.screenshot('chat-models-starter');

    await picker.click();
    const rows = v.page.locator(MODEL_ROWS);
    // The picked model is listed first; the others are under "Other Models", folded.
    const labels = await v.waitFor('the model picker\'s list with our models', async () => {
      const all = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
      if (all.some((t) => /Scripted \(offline\)/.test(t)) && all.some((t) => /mistral-large-latest/.test(t))) return all;
      const others = rows.filter({ hasText: /^\s*Other Models\s*$/ }).first();
      if (await others.isVisible().catch(() => false)) await others.click();
      return undefined;
    }, 30_000).catch(async (e: Error) => {
      throw new Error(`${e.message} (it lists: ${(await rows.allInnerTexts()).join(' | ')})\n${await chatDom(v)}`);
    });
    await v.screenshot('chat-models-picker');
    const mistral = labels.find((t) => /mistral-large-latest/.test(t)) ?? '';
    assert.doesNotMatch(mistral, /secret|key/i, `the endpoint's model shows no key: ${mistral}`);
    await v.page.keyboard.press('Escape');

    // Sent on the scripted model, the starter runs the sample's main agent on its own scenario:
    // two researchers look the prices up, then writing src/answer.txt asks.
    await sendChat(v);
    const ask = /main wants to run builtin\.write_file/;
    const toast = await v.notification(ask, 120_000);
    assert.match(await textOf(toast), /src\/answer\.txt/, 'the main agent\'s own script asks to write the answer');
    await v.screenshot('chat-models-starter-sent');
  });

  it('a session started with our OpenAI-compatible model picked runs on it, through the runtime\'s provider', async function () {
    this.timeout(240_000);
    const v = await open('chat-models-openai-picked', {
      // Nothing answers there: the session fails at its first model call, naming model and endpoint.
      settings: { ...CHAT_ON, 'agentPolicy.openaiCompatible.baseUrl': 'http://127.0.0.1:9/v1' },
      prepare: (workspace) => {
        writeChatStarter(workspace, STARTER);
        addAgent(workspace, { name: 'mistral', model: 'openai-compatible:mistral-large-latest', instructions: 'Answer briefly.' });
      },
    });
    await activated(v);
    const picker = await modelPicker(v);
    await v.waitFor('the scripted model picked', async () => (/Scripted \(offline\)/.test(await textOf(picker)) ? true : undefined), 120_000);
    await picker.click();
    const rows = v.page.locator(MODEL_ROWS);
    await v.waitFor('the OpenAI-compatible model picked', async () => {
      const model = rows.filter({ hasText: /mistral-large-latest/ }).first();
      if (await model.isVisible().catch(() => false)) {
        await model.click();
        return true;
      }
      const others = rows.filter({ hasText: /^\s*Other Models\s*$/ }).first();
      if (await others.isVisible().catch(() => false)) await others.click();
      return undefined;
    }, 30_000);
    await v.waitFor('the picker to show it', async () => (/mistral-large-latest/.test(await textOf(picker)) ? true : undefined), 10_000);
    await sendChat(v);
    const { widget } = chatView(v);
    const said = await v.waitFor('the turn to fail on the picked model', async () => {
      const text = await textOf(widget);
      return /The turn failed:/.test(text) ? text : undefined;
    }, 120_000).catch(async (e: Error) => { throw new Error(`${e.message}\n${await chatDom(v)}`); });
    assert.match(said, /The turn failed: openai-compatible:mistral-large-latest: could not reach http:\/\/127\.0\.0\.1:9\/v1/, `the main agent ran on the picked model, not its scripted scenario:\n${said}`);
    await v.screenshot('chat-models-openai-picked');
  });

  it('an agent on vscode-lm:agent-policy/scripted plays the default script through VS Code\'s language model API, asked by the policy', async function () {
    this.timeout(200_000);
    const v = await open('chat-models-lm-request', {
      prepare: (workspace) => addAgent(workspace, {
        name: 'picked',
        model: 'vscode-lm:agent-policy/scripted',
        instructions: 'Look around, then write your notes.',
        permissionMode: 'ask',
        tools: ['builtin.list_files', 'builtin.read_file', 'builtin.write_file'],
      }),
    });
    await activated(v);
    await startSession(v, 'picked', 'look around');
    // Listing and reading are allowed by the sample policy; writing AGENT_NOTES.md asks (the default).
    const ask = /picked wants to run builtin\.write_file/;
    const toast = await v.notification(ask, 90_000);
    assert.match(await textOf(toast), /AGENT_NOTES\.md/, 'the ask names the file');
    await v.screenshot('chat-models-lm-request-ask');
    await v.clickNotificationButton(ask, 'Allow');
    await waitForFile(v, 'AGENT_NOTES.md', /Notes from the default agent/);
    const t = await transcriptText(v, /^completed: /m);
    assert.match(t, /^\[picked\] builtin\.list_files \{"path":"\."\} -> allow \(workspace \.agentpolicy\.jsonc:\d+ "read"\)$/m, `the list went through our provider and was judged:\n${t}`);
    assert.match(t, /^\[picked\] builtin\.read_file \{"path":"README\.md"\} -> allow \(workspace \.agentpolicy\.jsonc:\d+ "read"\)$/m, `then the read:\n${t}`);
    assert.match(t, /^\[picked\] builtin\.write_file [^\n]*"path":"AGENT_NOTES\.md"[^\n]* -> ask \(default\)$/m, `then the write, asked:\n${t}`);
    assert.match(t, /^completed: I listed the workspace, read README\.md and wrote AGENT_NOTES\.md\.$/m, `and the script's last words end the session:\n${t}`);
    await v.statusBarItem(countLabel(0));
    await v.screenshot('chat-models-lm-request-done');
  });
});

/** Sends what the Chat view's input holds. */
async function sendChat(v: VsCode): Promise<void> {
  await chatView(v).input.click();
  await v.page.keyboard.press('Control+End');
  await v.page.keyboard.press('Enter');
}

/** The model picker's button in the Chat view's input toolbar. */
async function modelPicker(v: VsCode) {
  const { widget } = chatView(v);
  const candidates = widget.locator('.chat-input-toolbars .action-item, .interactive-input-part .action-item').filter({ hasText: /\S/ });
  return v.waitFor('the Chat view\'s model picker', async () => {
    for (const item of await candidates.all()) {
      const label = `${await item.getAttribute('aria-label').catch(() => '')} ${await item.locator('[aria-label]').first().getAttribute('aria-label', { timeout: 200 }).catch(() => '')} ${await textOf(item)}`;
      if (/model|Scripted|Auto|GPT|Claude/i.test(label)) return item;
    }
    return undefined;
  }, 30_000).catch(async (e: Error) => { throw new Error(`${e.message}\n${await chatDom(v)}`); });
}

/** What the Chat view shows, for a failure message: its toolbar items and its text. */
async function chatDom(v: VsCode): Promise<string> {
  const items = await v.page.locator('.interactive-session .action-item').evaluateAll((els) => els.map((e) => `${e.getAttribute('class')} [${e.getAttribute('aria-label') ?? e.querySelector('[aria-label]')?.getAttribute('aria-label') ?? ''}] ${(e.textContent ?? '').trim()}`)).catch(() => []);
  const text = await textOf(chatView(v).widget);
  return `  the Chat view's toolbar items: ${items.join(' | ') || 'none'}\n  its text: ${text || '(no Chat view)'}`;
}
