// A person's consent before a server starts (`confirmStart`), asked once per config and source,
// and each source reading only its own inputs store.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { McpHttpServerConfig, McpInputs, McpServerConfig, McpStdioServerConfig } from '../../src/mcp/mcpConfig.js';
import { describeServerLaunch, serverFingerprint } from '../../src/mcp/mcpServerLaunch.js';
import type { McpSourceOptions } from '../../src/mcp/mcpSourceOptions.js';
import { McpToolSource, mcpToolSources } from '../../src/mcp/mcpToolSource.js';
import { startHttpFixture, type HttpFixture } from './fixtures/httpServer.js';
import { byId, call, closeAll, context, FIXTURES, isAlive, nodeServer, pidOf, tempDir, waitFor } from './helpers.js';

const TOOLBOX = path.join(FIXTURES, 'toolbox.ts');
const signal = (): AbortSignal => new AbortController().signal;

describe('MCP servers start only with consent', function () {
  this.timeout(60_000);
  let dir: string;
  let sources: McpToolSource[];
  let fixture: HttpFixture | undefined;

  /** A confirmStart that records what it was asked and answers from `answers` (the last one repeats). */
  function person(...answers: boolean[]) {
    const asked: McpServerConfig[] = [];
    return {
      asked,
      confirmStart: async (server: McpServerConfig) => {
        asked.push(server);
        return answers[Math.min(asked.length, answers.length) - 1] ?? false;
      },
    };
  }

  function source(server: McpServerConfig, options: McpSourceOptions): McpToolSource {
    const s = new McpToolSource(server, { workspaceFolder: dir, ...options });
    sources.push(s);
    return s;
  }

  beforeEach(() => {
    dir = tempDir('mcp-consent-');
    sources = [];
    fixture = undefined;
  });

  afterEach(async () => {
    await closeAll(sources);
    await fixture?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a refused stdio server is never run: the listing fails naming the server and its command, and the next start asks again', async () => {
    const marker = path.join(dir, 'it-ran.txt');
    const server: McpStdioServerConfig = {
      name: 'probe', type: 'stdio', command: process.execPath, args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`], env: {},
    };
    const p = person(false);
    const s = source(server, { confirmStart: p.confirmStart });
    const connection = s.connect({ sessionId: 's1', workspaceFolder: dir });
    await assert.rejects(connection.tools(signal()), (error: Error) => {
      assert.equal(error.message, `MCP server probe was not started: the person did not allow it to start (${describeServerLaunch(server)})`);
      assert.ok(error.message.includes(process.execPath));
      return true;
    });
    assert.equal(p.asked.length, 1);
    assert.equal(p.asked[0], server, 'asked with the config as written');
    assert.equal(connection.pid, undefined);
    assert.equal(connection.isUp, false);
    await assert.rejects(connection.tools(signal()), /did not allow it to start/);
    assert.equal(p.asked.length, 2, 'a refusal is not remembered');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(fs.existsSync(marker), false, 'nothing was run');
  });

  it('a refusal is not a crash: allowed later, the server starts even with no restarts left', async () => {
    const p = person(false, false, true);
    const connection = source(nodeServer('box', TOOLBOX, [dir]), { confirmStart: p.confirmStart, restarts: { max: 0, windowMs: 60_000 } })
      .connect({ sessionId: 's1', workspaceFolder: dir });
    await assert.rejects(connection.tools(signal()), /did not allow/);
    await assert.rejects(connection.tools(signal()), /did not allow/);
    const tools = await connection.tools(signal());
    assert.equal(p.asked.length, 3);
    assert.equal(await call(byId(tools, 'mcp.box.slow'), { ms: 1 }, context(dir)), 'slept 1');
  });

  it('a refused HTTP server is never connected to; the error names its URL', async () => {
    fixture = await startHttpFixture();
    const p = person(false);
    const connection = source({ name: 'remote', type: 'http', url: fixture.url, headers: {} }, { confirmStart: p.confirmStart })
      .connect({ sessionId: 's1', workspaceFolder: dir });
    await assert.rejects(connection.tools(signal()), {
      message: `MCP server remote was not started: the person did not allow it to start (${fixture.url})`,
    });
    assert.equal(fixture.sessions, 0);
  });

  it('asks once per source and config: not again for a restart after a crash, nor for another connection, nor for starts at the same time', async () => {
    const p = person(true);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const s = source(nodeServer('box', TOOLBOX, [dir]), {
      confirmStart: async (server) => {
        await gate;
        return await p.confirmStart(server);
      },
    });
    const a = s.connect({ sessionId: 's1', workspaceFolder: dir });
    const b = s.connect({ sessionId: 's2', workspaceFolder: dir });
    const both = Promise.all([a.tools(signal()), b.tools(signal())]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const [tools] = await both;
    assert.equal(p.asked.length, 1, 'one question for two connections starting together');

    const first = pidOf(a);
    await assert.rejects(call(byId(tools, 'mcp.box.crash'), {}, context(dir)), /stopped while running mcp\.box\.crash/);
    await waitFor('the crashed process to be gone', () => !isAlive(first));
    assert.equal(await call(byId(tools, 'mcp.box.slow'), { ms: 1 }, context(dir)), 'slept 1');
    assert.notEqual(pidOf(a), first);
    assert.equal(p.asked.length, 1, 'a restart does not ask again');

    const c = s.connect({ sessionId: 's3', workspaceFolder: dir });
    await c.tools(signal());
    assert.equal(p.asked.length, 1, 'another connection of the same source does not ask again');
  });

  it('a changed config asks again; another source asks for itself', async () => {
    const p = person(true);
    const server = nodeServer('box', TOOLBOX, [dir]) as McpStdioServerConfig;
    const s = source(server, { confirmStart: p.confirmStart });
    const connection = s.connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(signal());
    assert.equal(p.asked.length, 1);

    // The config changes under the source (a new variable): the next start, after a crash, asks.
    server.env.ADDED = '1';
    const first = pidOf(connection);
    await assert.rejects(call(byId(tools, 'mcp.box.crash'), {}, context(dir)), /stopped/);
    await waitFor('the crashed process to be gone', () => !isAlive(first));
    assert.equal(await call(byId(tools, 'mcp.box.slow'), { ms: 1 }, context(dir)), 'slept 1');
    assert.equal(p.asked.length, 2);

    const other = source(nodeServer('box', TOOLBOX, [dir]), { confirmStart: p.confirmStart });
    await other.connect({ sessionId: 's2', workspaceFolder: dir }).tools(signal());
    assert.equal(p.asked.length, 3);
  });

  it('a confirmStart that fails fails the start; closing while it waits does not wait for the person', async () => {
    const failing = source(nodeServer('box', TOOLBOX, [dir]), { confirmStart: async () => { throw new Error('no window to ask in'); } })
      .connect({ sessionId: 's1', workspaceFolder: dir });
    await assert.rejects(failing.tools(signal()), { message: 'MCP server box was not started: asking whether it may start failed: no window to ask in' });

    const waiting = source(nodeServer('box2', TOOLBOX, [dir]), { confirmStart: () => new Promise<boolean>(() => undefined) })
      .connect({ sessionId: 's2', workspaceFolder: dir });
    const listing = waiting.tools(signal());
    await new Promise((resolve) => setTimeout(resolve, 50));
    await waiting.close();
    await assert.rejects(listing, /the session ended/);
    assert.equal(waiting.pid, undefined);
  });

  it('serverFingerprint: the config as written, without its name or key order', () => {
    const stdio: McpStdioServerConfig = {
      name: 'a', type: 'stdio', command: 'npx', args: ['-y', 'pkg', '${workspaceFolder}'], env: { A: '1', B: null }, envFile: '.env', cwd: 'tools',
    };
    const fp = serverFingerprint(stdio);
    assert.match(fp, /^[0-9a-f]{64}$/);
    assert.equal(serverFingerprint({ ...stdio, name: 'b', env: { B: null, A: '1' } }), fp);
    for (const changed of [
      { command: 'npm' }, { args: ['-y', 'pkg'] }, { args: ['-y', 'pkg', '/elsewhere'] }, { env: { A: '2', B: null } }, { env: { A: '1' } },
      { envFile: undefined }, { envFile: 'other.env' }, { cwd: undefined }, { cwd: 'bin' },
    ]) {
      assert.notEqual(serverFingerprint({ ...stdio, ...changed } as McpStdioServerConfig), fp, JSON.stringify(changed));
    }
    const http: McpHttpServerConfig = { name: 'r', type: 'http', url: 'https://host/mcp', headers: { Authorization: 'Bearer ${input:t}', X: 'y' } };
    const hfp = serverFingerprint(http);
    assert.equal(serverFingerprint({ ...http, headers: { X: 'y', Authorization: 'Bearer ${input:t}' } }), hfp);
    assert.notEqual(serverFingerprint({ ...http, type: 'sse' }), hfp);
    assert.notEqual(serverFingerprint({ ...http, url: 'https://other/mcp' }), hfp);
    assert.notEqual(serverFingerprint({ ...http, headers: { X: 'y' } }), hfp);
  });

  it('describeServerLaunch: the command line or the URL', () => {
    assert.equal(describeServerLaunch({ name: 'fs', type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/path'], env: {} }),
      'npx -y @modelcontextprotocol/server-filesystem /path');
    assert.equal(describeServerLaunch({ name: 'fs', type: 'stdio', command: 'node', args: ['${workspaceFolder}/server.js', 'two words', 'a\nb'], env: {}, cwd: 'tools' }),
      'node ${workspaceFolder}/server.js "two words" "a\\nb" (in tools)');
    assert.equal(describeServerLaunch({ name: 'r', type: 'http', url: 'https://host/mcp', headers: { Authorization: 'secret' } }), 'https://host/mcp');
    assert.equal(describeServerLaunch({ name: 'r', type: 'sse', url: 'http://127.0.0.1:3000/sse?x=1&y=2', headers: {} }), 'http://127.0.0.1:3000/sse?x=1&y=2');
  });
});

describe('MCP inputs per source', () => {
  it('each source reads only its own store, for the inputs its own config uses', async () => {
    const asked: string[] = [];
    const store = (name: string, values: Record<string, string>): McpInputs => ({
      get: async (id) => {
        asked.push(`${name}:${id}`);
        return values[id];
      },
    });
    const stores: Record<string, McpInputs> = {
      one: store('one', { token: 'a' }),
      two: store('two', {}),
    };
    const config = {
      servers: [
        { name: 'one', type: 'http', url: 'https://one.example/mcp', headers: { Authorization: 'Bearer ${input:token}' } },
        { name: 'two', type: 'http', url: 'https://two.example/mcp', headers: { Authorization: 'Bearer ${input:token}', X: '${input:other}' } },
      ] as McpServerConfig[],
      inputs: [{ type: 'promptString' as const, id: 'token', description: 'Token', password: true }],
    };
    const [one, two] = mcpToolSources(config, (server) => ({ inputs: stores[server.name] }));
    assert.equal(one!.options.inputs, stores.one);
    assert.equal(two!.options.inputs, stores.two);
    assert.deepEqual(two!.inputs, [{ id: 'token', description: 'Token', password: true }, { id: 'other', description: 'other', password: false }]);
    const c1 = one!.connect({ sessionId: 's', workspaceFolder: '/w' });
    const c2 = two!.connect({ sessionId: 's', workspaceFolder: '/w' });
    assert.equal(await c1.signIn!.isConnected(), true);
    assert.deepEqual(asked, ['one:token']);
    asked.length = 0;
    assert.equal(await c2.signIn!.isConnected(), false);
    assert.deepEqual(asked, ['two:token', 'two:other']);
    await Promise.all([c1.close(), c2.close()]);

    // One store for all still works (the options object form).
    const shared = mcpToolSources(config, { inputs: stores.one });
    assert.deepEqual(shared.map((s) => s.options.inputs), config.servers.map(() => stores.one));
    assert.ok(shared.length > 1, 'the config has several servers');
  });
});
