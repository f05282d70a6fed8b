// MCP servers in a real VS Code: the sample workspace's librarian works through the real
// filesystem server of .vscode/mcp.json (run from node_modules, offline), its reads allowed by
// their readOnlyHint and its write asked in a notification; and server-everything's request for
// input answered with the form the extension builds from the server's schema; and a server over
// HTTP that needs a token, signed in to from the sign-in notification.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { startHttpFixture, type HttpFixture } from '../mcp/fixtures/httpServer';
import { activated, addAgent, allowServerStart, countLabel, startSession, textOf, transcriptText, useVsCode, waitForFile } from './harness';

const LIBRARIAN_WRITE = /librarian wants to run mcp\.files\.write_file/;

describe('MCP servers in VS Code (e2e)', function () {
  const { open } = useVsCode();

  it('the librarian lists and reads through the filesystem server without asking, and its write is asked in a notification', async () => {
    const v = await open('mcp-librarian');
    await activated(v);
    await startSession(v, 'librarian', 'update the notes');
    await allowServerStart(v, 'files', /server-filesystem/);

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

    // The approval to start the server is remembered, until a person forgets it: then it asks again.
    await v.runCommand('Agent Policy: Forget MCP Server Approvals');
    await v.notification(/forgot 1 MCP server approval/);
    await startSession(v, 'librarian', 'update the notes again');
    await allowServerStart(v, 'files', /server-filesystem/);
  });

  it('a request for input from server-everything is answered with a form built from its schema', async () => {
    const v = await open('mcp-elicitation', { prepare: addEverythingAgent });
    await activated(v);
    await startSession(v, 'tester', 'ask me');
    await allowServerStart(v, 'everything', /server-everything/);
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

  describe('a server that needs a token', () => {
    let server: HttpFixture | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('raises a sign-in; the token typed there is stored, the server is connected and its tool runs', async () => {
      const fixture = (server = await startHttpFixture({ token: 's3cret-token' }));
      const v = await open('mcp-sign-in', { prepare: (workspace) => addTokenServerAgent(workspace, fixture.url) });
      await activated(v);
      await startSession(v, 'webber', 'echo something');

      const signIn = /webber needs a sign-in to web \(connect\)/;
      await v.notification(signIn, 120_000);
      assert.equal(fixture.unauthorized + fixture.sessions, 0, 'nothing reached the server before the sign-in');
      await v.screenshot('mcp-sign-in-notification');
      await v.clickNotificationButton(signIn, 'Sign In…');
      const items = (await v.quickPickItems()).filter((i) => i.kind === 'item').map((i) => i.label);
      assert.deepEqual(items, ['web'], 'the sign-in lists the server');
      // A multi-select: check the server's row, then OK.
      const row = v.page.locator('.quick-input-widget .quick-input-list .monaco-list-row').filter({ hasText: 'web' }).first();
      await row.click();
      await v.waitFor('the server checked', async () => (await row.getAttribute('aria-checked')) === 'true' || (await row.locator('input[type=checkbox]').isChecked().catch(() => false)) || undefined, 10_000);
      await v.page.locator('.quick-input-widget input').first().press('Enter');
      await v.waitFor('the token prompt', async () => /sign in to the MCP server web/.test(await v.quickPickTitle()) || undefined);
      assert.equal(await v.page.locator('.quick-input-widget input').getAttribute('type'), 'password', 'the token is typed into a password box');
      await v.typeInQuickInput('s3cret-token');
      await allowServerStart(v, 'web', /It connects to: http:\/\/127\.0\.0\.1/);

      await v.clickNotificationButton(/webber wants to run mcp\.web\.echo/, 'Allow', 60_000);
      const t = await transcriptText(v, /completed:/);
      assert.match(t, /echo over streamable HTTP: hello/, `the tool ran on the server:\n${t}`);
      assert.equal(fixture.unauthorized, 0, 'the stored token was accepted at once');
      await v.screenshot('mcp-sign-in-done');
    });
  });
});

/** Adds an HTTP server whose Authorization header needs `${input:token}`, and an agent that uses it. */
function addTokenServerAgent(workspace: string, url: string): void {
  const mcpFile = path.join(workspace, '.vscode', 'mcp.json');
  const mcp = parseJsonc(fs.readFileSync(mcpFile, 'utf8')) as { servers: Record<string, unknown>; inputs?: unknown[] };
  mcp.servers.web = { type: 'http', url, headers: { Authorization: 'Bearer ${input:token}' } };
  mcp.inputs = [{ type: 'promptString', id: 'token', description: 'The token of the web server', password: true }];
  fs.writeFileSync(mcpFile, JSON.stringify(mcp, null, 2));
  addAgent(workspace, mcpAgent('webber', 'mcp.web'), [{ call: 'web_echo', input: { message: 'hello' }, as: 'r' }, { say: '{{r}}' }]);
}

/** Adds server-everything and an agent that calls its elicitation tool to a workspace copy. */
function addEverythingAgent(workspace: string): void {
  const mcpFile = path.join(workspace, '.vscode', 'mcp.json');
  const mcp = parseJsonc(fs.readFileSync(mcpFile, 'utf8')) as { servers: Record<string, unknown> };
  mcp.servers.everything = { type: 'stdio', command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] };
  fs.writeFileSync(mcpFile, JSON.stringify(mcp, null, 2));
  addAgent(workspace, mcpAgent('tester', 'mcp.everything'), [{ call: 'everything_trigger-elicitation-request', input: {}, as: 'r' }, { say: '{{r}}' }]);
}

/** An agent of the workspace copy that uses one MCP server and plays its own scenario file. */
function mcpAgent(name: string, server: string): { name: string } & Record<string, unknown> {
  return { name, model: `scripted:${name}.jsonc`, tools: [server], builtins: { subagents: false } };
}
