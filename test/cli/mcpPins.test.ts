// `agentpolicy mcp pins` lists the MCP tool definitions pinned for a workspace, `mcp pins reset`
// forgets all of them, a server's or a tool's (docs/mcp.md, "MCP tools pinned").
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';
import { McpToolPins } from '../../src/mcp/mcpToolPins.js';

describe('agentpolicy mcp pins', () => {
  let root: string;
  let workspace: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cli-pins-')));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(workspace);
    env = { XDG_STATE_HOME: path.join(root, 'state') };
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l), cwd: workspace, env });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('lists, then resets a tool, a server, everything', async () => {
    assert.match((await cli('mcp', 'pins')).out, /no MCP tool definitions are pinned for /);
    const pins = new McpToolPins(workspace, { stateDir: path.join(root, 'state', 'agentpolicy') });
    pins.review('fs', [{ name: 'read', inputSchema: {} }, { name: 'write', inputSchema: {} }]);
    pins.review('gh', [{ name: 'issues/list', inputSchema: {} }]);
    const listed = await cli('mcp', 'pins');
    assert.equal(listed.code, 0);
    assert.match(listed.out, /mcp\.fs\.read {2}sha256:[0-9a-f]{12} {2}pinned /);
    assert.match(listed.out, /mcp\.gh\.issues\/list/);
    const json = JSON.parse((await cli('mcp', 'pins', '--json', '--workspace', workspace)).out) as { pins: Array<{ server: string; tool: string }> };
    assert.deepEqual(json.pins.map((p) => `${p.server}/${p.tool}`), ['fs/read', 'fs/write', 'gh/issues/list']);

    assert.equal((await cli('mcp', 'pins', 'reset', 'gh/issues/list')).code, 0);
    assert.equal((await cli('mcp', 'pins', 'reset', 'gh/issues/list')).code, 1);
    const server = await cli('mcp', 'pins', 'reset', 'fs');
    assert.match(server.out, /forgot 2 pinned tool definition\(s\) of the server fs; the server pins its tools again at its next start/);
    assert.deepEqual(pins.list(), []);
    assert.equal((await cli('mcp', 'pins', 'reset')).code, 1);
  });

  it('usage errors', async () => {
    assert.equal((await cli('mcp')).code, 2);
    assert.equal((await cli('mcp', 'pins', 'forget')).code, 2);
    assert.equal((await cli('mcp', 'pins', '--workspace', path.join(root, 'none'))).code, 2);
  });
});
