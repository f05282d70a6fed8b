// `agentpolicy run` on the sample workspace: headless, scripted, against its policy.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';

const SAMPLE = path.join(__dirname, '..', '..', 'policies', 'sample-workspace');
const PROMPT = 'What do the Atlas and the Beacon cost?';

async function cli(args: string[], cwd: string): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l), cwd });
  return { code, out, err };
}

describe('agentpolicy run', () => {
  let workspace: string;
  beforeEach(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-run-'));
    fs.cpSync(SAMPLE, workspace, { recursive: true });
  });
  afterEach(() => fs.rmSync(workspace, { recursive: true, force: true }));

  it('without --answer, an ask keeps the run Blocked (exit 1) and lists it; nothing was written', async () => {
    const r = await cli(['run', '--prompt', PROMPT], workspace);
    assert.equal(r.code, 1);
    const blocked = r.out.findIndex((l) => l.startsWith('blocked: 1 open callback'));
    assert.ok(blocked >= 0, r.out.join('\n'));
    assert.match(r.out[blocked + 1]!, /\[main\] builtin\.write_file .*asked by \.agentpolicy\.jsonc:\d+ "edit-src"/);
    assert.equal(fs.existsSync(path.join(workspace, 'src', 'answer.txt')), false);
  });

  it('--answer allow completes, runs the approved write, and prints the answer', async () => {
    const r = await cli(['run', '--prompt', PROMPT, '--answer', 'allow'], workspace);
    assert.equal(r.code, 0, r.out.join('\n'));
    assert.equal(r.out.at(-1), 'completed: Prices: atlas: €129.00 and beacon: €49.50.');
    assert.equal(fs.readFileSync(path.join(workspace, 'src', 'answer.txt'), 'utf8'), 'atlas: €129.00\nbeacon: €49.50\n');
  });

  it('--answer deny completes with the write denied: the model is told and nothing ran', async () => {
    const r = await cli(['run', '--prompt', PROMPT, '--answer', 'deny', '--json'], workspace);
    assert.equal(r.code, 0);
    const result = JSON.parse(r.out.join('\n')) as { state: string; transcript: Array<{ type: string; toolId?: string; ok?: boolean; content?: string }> };
    assert.equal(result.state, 'completed');
    const write = result.transcript.find((e) => e.type === 'tool-result' && e.toolId === 'builtin.write_file');
    assert.equal(write?.ok, false);
    assert.match(write!.content!, /denied/);
    assert.equal(fs.existsSync(path.join(workspace, 'src', 'answer.txt')), false);
  });

  it('--json when blocked lists each open callback with its session, turn, tool and rule', async () => {
    const r = await cli(['run', '--prompt', PROMPT, '--json'], workspace);
    assert.equal(r.code, 1);
    const result = JSON.parse(r.out.join('\n')) as { state: string; callbacks: Array<{ tool: string; agent: string; rule: { id: string } | null; sessionId: string; turnId: string }> };
    assert.equal(result.state, 'blocked');
    assert.equal(result.callbacks.length, 1);
    assert.equal(result.callbacks[0]!.tool, 'builtin.write_file');
    assert.equal(result.callbacks[0]!.rule?.id, 'edit-src');
    assert.ok(result.callbacks[0]!.turnId.startsWith(result.callbacks[0]!.sessionId));
  });

  it('writes the audit log, which `agentpolicy audit` reads back as a table', async () => {
    const r = await cli(['run', '--prompt', PROMPT, '--answer', 'allow', '--audit', 'audit.jsonl'], workspace);
    assert.equal(r.code, 0);
    const table = await cli(['audit', 'audit.jsonl'], workspace);
    assert.equal(table.code, 0);
    const text = table.out.join('\n');
    assert.match(text, /builtin\.run_command +allow +workspace:test@\.agentpolicy\.jsonc:\d+/);
    assert.match(text, /builtin\.write_file +callback-opened +workspace:edit-src/);
    assert.match(text, /handler\/allow-once/);
  });

  it('usage errors exit 2: no prompt, a bad --answer, an unknown agent', async () => {
    assert.equal((await cli(['run'], workspace)).code, 2);
    assert.equal((await cli(['run', '--prompt', 'x', '--answer', 'maybe'], workspace)).code, 2);
    assert.equal((await cli(['run', '--prompt', 'x', '--agent', 'nobody'], workspace)).code, 2);
  });

  describe('the librarian, through the real filesystem MCP server of .vscode/mcp.json', () => {
    // The sample fetches the server with npx; here the copy in node_modules runs, offline.
    beforeEach(() => {
      const server = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
      fs.writeFileSync(path.join(workspace, '.vscode', 'mcp.json'), JSON.stringify({
        servers: { files: { type: 'stdio', command: process.execPath, args: [server, '${workspaceFolder}'] } },
      }));
    });

    it('lists and reads without asking (readOnlyHint, rule mcp-read); writing NOTES.md asks (rule mcp-write) and nothing is written', async () => {
      const r = await cli(['run', '--agent', 'librarian', '--prompt', 'update the notes'], workspace);
      assert.equal(r.code, 1, r.out.join('\n'));
      const text = r.out.join('\n');
      assert.match(text, /mcp\.files\.list_directory \{"path":"src"\} -> allow \(workspace \.agentpolicy\.jsonc:\d+ "mcp-read"\)/);
      assert.match(text, /result: \[FILE\] index\.js/);
      assert.match(text, /mcp\.files\.read_text_file \{"path":"README\.md"\} -> allow/);
      assert.match(text, /\[librarian\] mcp\.files\.write_file .*\(asked by \.agentpolicy\.jsonc:\d+ "mcp-write"\)/);
      assert.equal(fs.existsSync(path.join(workspace, 'NOTES.md')), false);
    });

    it('--untrusted never starts a server of .vscode/mcp.json: the agent runs without its tools', async () => {
      const r = await cli(['run', '--agent', 'librarian', '--prompt', 'update the notes', '--untrusted', '--answer', 'allow'], workspace);
      const text = [...r.out, ...r.err].join('\n');
      assert.match(text, /the MCP server files was not started: --untrusted/);
      assert.doesNotMatch(text, /mcp files: starting/);
      assert.match(text, /there is no tool named/);
      assert.equal(fs.existsSync(path.join(workspace, 'NOTES.md')), false);
    });

    it('--answer allow: the server writes NOTES.md; --answer deny: the call never reaches it', async () => {
      const denied = await cli(['run', '--agent', 'librarian', '--prompt', 'update the notes', '--answer', 'deny'], workspace);
      assert.equal(denied.code, 0, denied.out.join('\n'));
      assert.equal(fs.existsSync(path.join(workspace, 'NOTES.md')), false);
      const allowed = await cli(['run', '--agent', 'librarian', '--prompt', 'update the notes', '--answer', 'allow'], workspace);
      assert.equal(allowed.code, 0, allowed.out.join('\n'));
      assert.equal(fs.readFileSync(path.join(workspace, 'NOTES.md'), 'utf8'), '# Notes\n\nsrc/ holds:\n[FILE] index.js\n');
    });
  });
});
