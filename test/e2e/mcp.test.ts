// MCP servers in a real VS Code: the sample workspace's librarian works through the real
// filesystem server of .vscode/mcp.json (run from node_modules, offline), its reads allowed by
// their readOnlyHint and its write asked in a notification; and server-everything's request for
// input answered with the form the extension builds from the server's schema.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { activated, countLabel, startSession, textOf, useVsCode, waitForFile, type VsCode } from './harness';

const LIBRARIAN_WRITE = /librarian wants to run mcp\.files\.write_file/;

describe('MCP servers in VS Code (e2e)', function () {
  const { open } = useVsCode();

  async function transcriptText(v: VsCode, want: RegExp): Promise<string> {
    return v.waitFor(`a transcript matching ${want}`, async () => {
      await v.runCommand('Agent Policy: Show Session Transcript');
      await new Promise((r) => setTimeout(r, 500));
      const text = await v.readEditorText();
      return want.test(text) ? text : undefined;
    }, 60_000);
  }

  it('the librarian lists and reads through the filesystem server without asking, and its write is asked in a notification', async () => {
    const v = await open('mcp-librarian');
    await activated(v);
    await startSession(v, 'librarian', 'update the notes');

    const toast = await v.notification(LIBRARIAN_WRITE, 120_000);
    const text = await textOf(toast);
    assert.match(text, /path: NOTES\.md/, `the notification names the path (it says: ${text})`);
    assert.match(text, /asked by workspace rule "mcp-write"/, `the notification names the rule (it says: ${text})`);
    assert.equal(fs.existsSync(path.join(v.workspace, 'NOTES.md')), false, 'nothing is written before the answer');
    await v.screenshot('mcp-librarian-notification');
    await v.clickNotificationButton(LIBRARIAN_WRITE, 'Allow');

    await waitForFile(v, 'NOTES.md', /src\/ holds:\n\[FILE\] index\.js/);
    const t = await transcriptText(v, /completed: I listed the workspace/);
    assert.match(t, /mcp\.files\.list_directory \{"path":"src"\} -> allow \(workspace \.agentpolicy\.jsonc:\d+ "mcp-read"\)/);
    assert.match(t, /mcp\.files\.read_text_file \{"path":"README\.md"\} -> allow/);
    await v.statusBarItem(countLabel(0));
    await v.screenshot('mcp-librarian-done');
  });

  it('a request for input from server-everything is answered with a form built from its schema', async () => {
    const v = await open('mcp-elicitation', { prepare: addEverythingAgent });
    await activated(v);
    await startSession(v, 'tester', 'ask me');
    // The call itself asks first (the policy's default), then the server asks for input.
    await v.clickNotificationButton(/tester wants to run mcp\.everything\.trigger-elicitation-request/, 'Allow', 120_000);
    const ask = /the MCP server everything asks for input/;
    const toast = await v.notification(ask, 60_000);
    assert.match(await textOf(toast), /Please provide inputs for the following fields/);
    await v.waitFor('the open request in the tree', async () => (await v.treeItems('Open Callbacks')).some((i) => /everything asks for input/.test(i.label)) || undefined);
    await v.screenshot('mcp-elicitation-notification');
    await v.clickNotificationButton(ask, 'Respond…');

    // One step per field: the name is typed, every other field keeps its default or stays empty.
    await v.typeInQuickInput('Ada Lovelace');
    const step = async (): Promise<string> =>
      (await v.page.locator('.quick-input-widget').isVisible().catch(() => false)) ? v.quickPickTitle().catch(() => '') : '';
    for (let title = await step(), n = 0; /everything asks \(\d+\/\d+\)/.test(title); n++) {
      if (n > 20) throw await v.failure('the form did not end');
      const items = await v.quickPickItems(1000).catch(() => []);
      // Filtered to the one item, or the input box as it is: Enter, then wait for the title to move on.
      if (items.some((i) => i.label === '(no answer)')) await v.typeInQuickInput('(no answer)', { submit: false });
      await v.page.keyboard.press('Enter');
      const before = title;
      title = await v.waitFor(`the form to move on from "${before}"`, async () => {
        const now = await step();
        return now !== before ? now || 'closed' : undefined;
      }, 10_000);
    }
    const t = await transcriptText(v, /completed:/);
    assert.match(t, /User provided the requested information/, `the server got the answer:\n${t}`);
    assert.match(t, /Name: Ada Lovelace/);
    await v.screenshot('mcp-elicitation-done');
  });
});

/** Adds server-everything and an agent that calls its elicitation tool to a workspace copy. */
function addEverythingAgent(workspace: string): void {
  const mcpFile = path.join(workspace, '.vscode', 'mcp.json');
  const mcp = parseJsonc(fs.readFileSync(mcpFile, 'utf8')) as { servers: Record<string, unknown> };
  mcp.servers.everything = { type: 'stdio', command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] };
  fs.writeFileSync(mcpFile, JSON.stringify(mcp, null, 2));
  const agentsFile = path.join(workspace, '.agents.jsonc');
  const agents = parseJsonc(fs.readFileSync(agentsFile, 'utf8')) as { agents: unknown[] };
  agents.agents.push({ name: 'tester', model: 'scripted:tester.jsonc', tools: ['mcp.everything'], builtins: { subagents: false } });
  fs.writeFileSync(agentsFile, JSON.stringify(agents, null, 2));
  fs.writeFileSync(path.join(workspace, 'tester.jsonc'), JSON.stringify({
    agents: { tester: [{ call: 'everything_trigger-elicitation-request', input: {}, as: 'r' }, { say: '{{r}}' }] },
  }));
}
