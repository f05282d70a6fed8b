// The reference filesystem server over stdio, at the connection level: tool ids and names, the
// server's annotations, calls, lazy start, close, and a restart after a crash.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { McpToolSource } from '../../src/mcp/mcpToolSource.js';
import { byId, call, closeAll, context, FILESYSTEM_SERVER, isAlive, nodeServer, pidOf, processesWith, tempDir, waitFor } from './helpers.js';

describe('MCP filesystem server over stdio', function () {
  this.timeout(60_000);
  let dir: string;
  let sources: McpToolSource[];
  const log: string[] = [];

  function source(options: ConstructorParameters<typeof McpToolSource>[1] = {}): McpToolSource {
    const s = new McpToolSource(nodeServer('fs', FILESYSTEM_SERVER, [dir]), { workspaceFolder: dir, log: (l) => log.push(l), ...options });
    sources.push(s);
    return s;
  }

  beforeEach(() => {
    dir = tempDir('mcp-fs-');
    sources = [];
    log.length = 0;
    fs.writeFileSync(path.join(dir, 'hello.txt'), 'hello from the workspace\n');
  });

  afterEach(async () => {
    await closeAll(sources);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts nothing until the tools are listed', async () => {
    const connection = source().connect({ sessionId: 's1', workspaceFolder: dir });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(connection.pid, undefined);
    assert.equal(connection.isUp, false);
    assert.deepEqual(log, []);
    await connection.tools(new AbortController().signal);
    assert.ok(isAlive(pidOf(connection)));
  });

  it('lists tools with ids mcp.fs.<tool>, safe model-facing names and the server\'s annotations', async () => {
    const connection = source().connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    for (const t of tools) {
      assert.equal(t.kind, 'mcp');
      assert.match(t.id, /^mcp\.fs\.[a-z_]+$/);
      assert.equal(t.name, `fs_${t.id.slice('mcp.fs.'.length)}`);
      assert.match(t.name, /^[A-Za-z0-9_-]{1,64}$/);
      assert.equal(typeof t.description, 'string');
      assert.equal(t.inputJsonSchema.type, 'object');
      assert.equal('$schema' in t.inputJsonSchema, false, 'the schema reaches the model without $schema');
    }
    const ids = tools.map((t) => t.id);
    for (const id of ['mcp.fs.read_text_file', 'mcp.fs.write_file', 'mcp.fs.list_directory', 'mcp.fs.move_file']) assert.ok(ids.includes(id), id);
    const read = byId(tools, 'mcp.fs.read_text_file');
    assert.equal(read.annotations.readOnlyHint, true);
    assert.equal(read.annotations.openWorldHint, false);
    assert.equal(read.annotations.destructiveHint, undefined, 'a hint the server left out stays out');
    const write = byId(tools, 'mcp.fs.write_file');
    assert.equal(write.annotations.readOnlyHint, false);
    assert.equal(write.annotations.destructiveHint, true);
    assert.deepEqual(Object.keys(write.annotations).filter((k) => k !== 'title').sort(), ['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint']);
  });

  it('checks inputs and calls tools', async () => {
    const connection = source().connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    const read = byId(tools, 'mcp.fs.read_text_file');
    const text = await call(read, { path: path.join(dir, 'hello.txt') }, context(dir));
    assert.equal(text, 'hello from the workspace\n');

    assert.deepEqual(read.check('hello.txt'), { ok: false, error: 'the input of read_text_file (mcp.fs.read_text_file) must be a JSON object' });
    assert.deepEqual(read.check([1]), { ok: false, error: 'the input of read_text_file (mcp.fs.read_text_file) must be a JSON object' });
    const missing = read.check({});
    assert.equal(missing.ok, false);
    assert.match((missing as { error: string }).error, /does not fit its schema: .*path/);

    // An error the tool reports comes back as a thrown error with the server's text.
    await assert.rejects(call(read, { path: path.join(dir, 'nope.txt') }, context(dir)), /ENOENT|no such file/i);
    await assert.rejects(call(read, { path: '/etc/passwd' }, context(dir)), /Access denied|outside allowed/i);

    const write = byId(tools, 'mcp.fs.write_file');
    await call(write, { path: path.join(dir, 'new.txt'), content: 'written' }, context(dir));
    assert.equal(fs.readFileSync(path.join(dir, 'new.txt'), 'utf8'), 'written');
  });

  it('close() stops the process, is idempotent, and later calls say the session ended', async () => {
    const connection = source().connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    const pid = pidOf(connection);
    assert.ok(isAlive(pid));
    await connection.close();
    await waitFor('the server process to end', () => !isAlive(pid));
    await connection.close();
    assert.equal(sources[0]!.connections.length, 0);
    await assert.rejects(call(byId(tools, 'mcp.fs.read_text_file'), { path: path.join(dir, 'hello.txt') }, context(dir)), /the session ended/);
    await assert.rejects(connection.tools(new AbortController().signal), /the session ended/);
  });

  it('each connection runs its own server', async () => {
    const s = source();
    const a = s.connect({ sessionId: 's1', workspaceFolder: dir });
    const b = s.connect({ sessionId: 's2', workspaceFolder: dir });
    await Promise.all([a.tools(new AbortController().signal), b.tools(new AbortController().signal)]);
    assert.notEqual(pidOf(a), pidOf(b));
    const pidA = pidOf(a);
    await a.close();
    await waitFor('the first server to end', () => !isAlive(pidA));
    assert.ok(isAlive(pidOf(b)));
  });

  it('a crash fails the call in flight, and the next call restarts the server', async () => {
    const connection = source().connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    const read = byId(tools, 'mcp.fs.read_text_file');
    const first = pidOf(connection);
    process.kill(first, 'SIGKILL');
    await waitFor('the server to be seen down', () => !connection.isUp);
    assert.match(await call(read, { path: path.join(dir, 'hello.txt') }, context(dir)) as string, /hello from the workspace/);
    const second = pidOf(connection);
    assert.notEqual(second, first);
    assert.ok(log.some((l) => /restarting \(1 of 3/.test(l)), log.join('\n'));
    // The listing after a restart is the same tools.
    const again = await connection.tools(new AbortController().signal);
    assert.deepEqual(again.map((t) => t.id), tools.map((t) => t.id));
  });

  it('gives up after three restarts within the window, naming the server', async () => {
    const connection = source().connect({ sessionId: 's1', workspaceFolder: dir });
    const tools = await connection.tools(new AbortController().signal);
    const read = byId(tools, 'mcp.fs.read_text_file');
    const input = { path: path.join(dir, 'hello.txt') };
    for (let i = 0; i < 3; i++) {
      process.kill(pidOf(connection), 'SIGKILL');
      await waitFor('the server to be seen down', () => !connection.isUp);
      await call(read, input, context(dir));
    }
    process.kill(pidOf(connection), 'SIGKILL');
    await waitFor('the server to be seen down', () => !connection.isUp);
    await assert.rejects(call(read, input, context(dir)), /server fs keeps crashing: it stopped/);
    await assert.rejects(connection.tools(new AbortController().signal), /server fs keeps crashing/);
  });

  it('a server that cannot start says why, with its stderr', async () => {
    const s = new McpToolSource(nodeServer('broken', FILESYSTEM_SERVER, [path.join(dir, 'does-not-exist')]), { workspaceFolder: dir });
    sources.push(s);
    const connection = s.connect({ sessionId: 's1', workspaceFolder: dir });
    await assert.rejects(connection.tools(new AbortController().signal), (error: Error) => {
      assert.match(error.message, /^MCP server broken could not start: /);
      assert.match(error.message, /its last output:\n/);
      assert.match(error.message, /does-not-exist/);
      return true;
    });
  });

  describe('a server that never answers', () => {
    const marker = `hung-server-${process.pid}`;
    const hung = { name: 'hung', type: 'stdio' as const, command: process.execPath, args: ['-e', `setInterval(() => {}, 1000) // ${marker}`], env: {} };

    it('fails to start after startTimeoutMs, and its process is stopped', async () => {
      const s = new McpToolSource(hung, { workspaceFolder: dir, startTimeoutMs: 300, log: (l) => log.push(l) });
      sources.push(s);
      const connection = s.connect({ sessionId: 's1', workspaceFolder: dir });
      await assert.rejects(connection.tools(new AbortController().signal), /^Error: MCP server hung could not start: .*timed out/);
      await waitFor('the hung server to be stopped', () => processesWith(marker).length === 0);
    });

    it('close() does not wait for it to answer', async () => {
      const s = new McpToolSource(hung, { workspaceFolder: dir });
      sources.push(s);
      const connection = s.connect({ sessionId: 's1', workspaceFolder: dir });
      const listing = connection.tools(new AbortController().signal);
      await waitFor('the hung server to run', () => processesWith(marker).length === 1);
      const started = Date.now();
      await connection.close();
      assert.ok(Date.now() - started < 5000);
      await assert.rejects(listing, /the session ended/);
      await waitFor('the hung server to be stopped', () => processesWith(marker).length === 0);
    });
  });

  it('a listing can be abandoned with its signal', async () => {
    const connection = source().connect({ sessionId: 's1', workspaceFolder: dir });
    const controller = new AbortController();
    const listing = connection.tools(controller.signal);
    controller.abort(new Error('stop'));
    await assert.rejects(listing, /stop/);
  });
});
