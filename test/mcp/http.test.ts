// Remote servers: streamable HTTP, the fallback to SSE, SSE by config, elicitation over HTTP, and
// the sign-in of a server whose headers use `${input:…}` (no value, a value it refuses, the right one).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { parseMcpConfig } from '../../src/mcp/mcpConfig.js';
import { McpSignInRequired } from '../../src/mcp/mcpSignIn.js';
import { McpToolSource, mcpToolSources } from '../../src/mcp/mcpToolSource.js';
import type { ElicitationRequest } from '../../src/runtime/tools/tools.js';
import { startHttpFixture, type HttpFixture } from './fixtures/httpServer.js';
import { byId, call, closeAll, context, tempDir, waitFor } from './helpers.js';

class MemoryInputs {
  readonly values = new Map<string, string>();
  reads = 0;
  async get(id: string): Promise<string | undefined> {
    this.reads++;
    return this.values.get(id);
  }
}

describe('MCP servers over HTTP (127.0.0.1)', function () {
  this.timeout(30_000);
  let dir: string;
  let fixture: HttpFixture;
  let sources: McpToolSource[];

  function source(server: { type: 'http' | 'sse'; url: string }): McpToolSource {
    const s = new McpToolSource({ name: 'web', headers: {}, ...server }, { workspaceFolder: dir });
    sources.push(s);
    return s;
  }

  beforeEach(() => {
    dir = tempDir('mcp-http-');
    sources = [];
  });

  afterEach(async () => {
    await closeAll(sources);
    await fixture?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists and calls tools over streamable HTTP, and ends the session on close', async () => {
    fixture = await startHttpFixture();
    const connection = source({ type: 'http', url: fixture.url }).connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    assert.deepEqual(tools.map((t) => [t.id, t.name]), [['mcp.web.echo', 'web_echo'], ['mcp.web.ask', 'web_ask']]);
    assert.deepEqual(byId(tools, 'mcp.web.echo').annotations, { readOnlyHint: true, openWorldHint: false });
    assert.equal(await call(byId(tools, 'mcp.web.echo'), { message: 'hi' }, context(dir)), 'echo over streamable HTTP: hi');
    assert.equal(fixture.open, 1);
    await connection.close();
    await waitFor('the server-side session to end', () => fixture.open === 0);
    await assert.rejects(call(byId(tools, 'mcp.web.echo'), { message: 'hi' }, context(dir)), /the session ended/);
  });

  it('falls back to SSE when the streamable POST is refused with a 4xx', async () => {
    fixture = await startHttpFixture();
    const connection = source({ type: 'http', url: fixture.sseUrl }).connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    assert.equal(await call(byId(tools, 'mcp.web.echo'), { message: 'old' }, context(dir)), 'echo over SSE: old');
  });

  it('uses SSE directly for type "sse"', async () => {
    fixture = await startHttpFixture();
    const connection = source({ type: 'sse', url: fixture.sseUrl }).connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    assert.equal(await call(byId(tools, 'mcp.web.echo'), { message: 'x' }, context(dir)), 'echo over SSE: x');
    assert.equal(fixture.sessions, 1);
  });

  it('routes an elicitation over HTTP to the running call', async () => {
    fixture = await startHttpFixture();
    const connection = source({ type: 'http', url: fixture.url }).connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    const asked: ElicitationRequest[] = [];
    const text = await call(byId(tools, 'mcp.web.ask'), {}, context(dir, {
      elicit: async (request) => {
        asked.push(request);
        return { action: 'accept', content: { name: 'Grace' } };
      },
    }));
    assert.deepEqual(JSON.parse(text as string), { action: 'accept', content: { name: 'Grace' } });
    assert.equal(asked[0]?.message, 'Name, please');
    assert.deepEqual(asked[0]?.source, { id: 'mcp.web', name: 'web' });
  });

  it('a server that is gone fails the call naming the server', async () => {
    fixture = await startHttpFixture();
    const connection = source({ type: 'http', url: fixture.url }).connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    await fixture.close();
    await assert.rejects(call(byId(tools, 'mcp.web.echo'), { message: 'x' }, context(dir)), /MCP server web/);
  });

  describe('sign-in by inputs', () => {
    const TOKEN = 'right-token';

    function configured(inputs: MemoryInputs): McpToolSource {
      const config = parseMcpConfig(JSON.stringify({
        servers: { secure: { type: 'http', url: fixture.url, headers: { Authorization: 'Bearer ${input:token}' } } },
        inputs: [{ type: 'promptString', id: 'token', description: 'Fixture token', password: true }],
      }), '/ws/.vscode/mcp.json');
      assert.deepEqual(config.diagnostics, []);
      const [s] = mcpToolSources(config, { workspaceFolder: dir, inputs });
      sources.push(s!);
      return s!;
    }

    it('a source tells which inputs it needs', async () => {
      fixture = await startHttpFixture({ token: TOKEN });
      const s = configured(new MemoryInputs());
      assert.deepEqual(s.inputs, [{ id: 'token', description: 'Fixture token', password: true }]);
      const plain = source({ type: 'http', url: fixture.url });
      assert.deepEqual(plain.inputs, []);
      assert.equal(plain.connect({ sessionId: 's', workspaceFolder: dir }).signIn, undefined);
    });

    it('no value: not connected, and nothing is sent to the server', async () => {
      fixture = await startHttpFixture({ token: TOKEN });
      const connection = configured(new MemoryInputs()).connect({ sessionId: 's1', workspaceFolder: dir });
      const signIn = connection.signIn!;
      assert.deepEqual({ source: signIn.source, id: signIn.id, name: signIn.name }, { source: 'mcp', id: 'mcp.secure', name: 'secure' });
      assert.equal(await signIn.isConnected(), false);
      assert.equal(signIn.wasConnected?.(), false);
      await assert.rejects(connection.tools(new AbortController().signal), (error: Error) => {
        assert.ok(error instanceof McpSignInRequired);
        assert.match(error.message, /MCP server secure needs a sign-in: enter "Fixture token" first/);
        return true;
      });
      assert.equal(fixture.unauthorized, 0);
      assert.equal(fixture.sessions, 0);
    });

    it('a value the server refuses (401) asks to sign in again; the right value then lists the tools', async () => {
      fixture = await startHttpFixture({ token: TOKEN });
      const inputs = new MemoryInputs();
      inputs.values.set('token', 'wrong-token');
      const connection = configured(inputs).connect({ sessionId: 's1', workspaceFolder: dir });
      const signIn = connection.signIn!;
      assert.equal(await signIn.isConnected(), true, 'a value is there and has not been refused yet');
      await assert.rejects(connection.tools(new AbortController().signal), (error: Error) => {
        assert.ok(error instanceof McpSignInRequired);
        assert.match(error.message, /needs a sign-in: it answered 401 Unauthorized/);
        return true;
      });
      assert.equal(fixture.unauthorized, 1);
      assert.equal(await signIn.isConnected(), false);
      assert.equal(signIn.wasConnected?.(), true);
      // The same refused value is not sent again.
      await assert.rejects(connection.tools(new AbortController().signal), /refused the current credentials/);
      assert.equal(fixture.unauthorized, 1);

      inputs.values.set('token', TOKEN);
      assert.equal(await signIn.isConnected(), true);
      const tools = await connection.tools(new AbortController().signal);
      assert.deepEqual(tools.map((t) => t.id), ['mcp.secure.echo', 'mcp.secure.ask']);
      assert.equal(tools[0]!.signIn, signIn);
      assert.equal(await call(tools[0]!, { message: 'in' }, context(dir)), 'echo over streamable HTTP: in');
      assert.equal(signIn.wasConnected?.(), false);
    });

    it('a 401 to a server with no inputs says what to do instead (no OAuth here)', async () => {
      fixture = await startHttpFixture({ token: TOKEN });
      const connection = source({ type: 'http', url: fixture.url }).connect({ sessionId: 's1', workspaceFolder: dir });
      for (let i = 0; i < 5; i++) {
        await assert.rejects(connection.tools(new AbortController().signal), (error: Error) => {
          assert.ok(!(error instanceof McpSignInRequired));
          assert.match(error.message, /^MCP server web answered 401 Unauthorized to the current credentials: .*OAuth.*\$\{input:…\}/);
          return true;
        });
      }
    });

    it('a 401 does not count as a crash', async () => {
      fixture = await startHttpFixture({ token: TOKEN });
      const inputs = new MemoryInputs();
      const connection = configured(inputs).connect({ sessionId: 's1', workspaceFolder: dir });
      for (let i = 0; i < 5; i++) {
        inputs.values.set('token', `wrong-${i}`);
        await assert.rejects(connection.tools(new AbortController().signal), /401/);
      }
      inputs.values.set('token', TOKEN);
      assert.equal((await connection.tools(new AbortController().signal)).length, 2);
    });
  });
});
