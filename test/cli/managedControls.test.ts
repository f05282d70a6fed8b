// The command line and managed controls: `check` and `test` read a managed policy with --managed
// (its `controls` are a schema error when the same file is given as the workspace policy), and
// `explain` shows the controls in force and a grant they cap, in text and JSON.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { runCli } from './cliRun.js';

let cwd = '';
const run = (argv: string[]) => runCli(argv, cwd);

const MANAGED = {
  version: 1,
  controls: { allowForSession: false, longestGrant: '15m', addRule: false, mcpServers: { deny: ['web*'] } },
  rules: [{ id: 'no-rm', tools: ['builtin.run_command'], commands: ['rm *'], decision: 'deny' }],
  tests: [{ call: { tool: 'builtin.run_command', input: { command: 'rm -rf x' } }, expect: 'deny', rule: 'no-rm' }],
};

describe('agentpolicy and managed controls', () => {
  before(async () => {
    await initShellParser();
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-managed-'));
    fs.writeFileSync(path.join(cwd, 'managed.jsonc'), JSON.stringify(MANAGED, null, 2));
    fs.writeFileSync(path.join(cwd, 'managed-files.jsonc'), JSON.stringify({ version: 1, controls: { mcpServers: { deny: ['files'] } } }));
    fs.writeFileSync(path.join(cwd, '.agentpolicy.jsonc'), JSON.stringify({ version: 1, rules: [{ id: 'edit', tools: ['builtin.write_file'], decision: 'ask' }] }, null, 2));
  });
  after(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('check --managed reads the file as the managed policy; --policy on the same file is a schema error at its line', async () => {
    assert.equal((await run(['check', '--managed', 'managed.jsonc'])).code, 0);
    const asWorkspace = await run(['check', '--policy', 'managed.jsonc']);
    assert.equal(asWorkspace.code, 1);
    assert.ok(asWorkspace.out.some((l) => /^managed\.jsonc:3:3 error schema "controls" is honoured only in the managed policy/.test(l)), asWorkspace.out.join('\n'));
  });

  it('test --managed runs the managed file\'s inline tests', async () => {
    const r = await run(['test', '--managed', 'managed.jsonc']);
    assert.equal(r.code, 0);
    assert.ok(r.out.includes('1 passed, 0 failed'), r.out.join('\n'));
  });

  it('explain shows the controls in force and the grant they cap; JSON carries them', async () => {
    const r = await run(['explain', '--managed', 'managed.jsonc', '--tool', 'builtin.write_file', '--input', '{"path":"a.txt","content":""}']);
    assert.equal(r.code, 0);
    const text = r.out.join('\n');
    assert.match(text, /ask: a person may allow once or for 15 minutes/);
    assert.match(text, /capped: the managed policy managed\.jsonc allows grants of at most 15 minutes/);
    assert.match(text, /managed controls \(managed\.jsonc\):\n {2}Allow for Session: never\n {2}longest grant: 15 minutes\n {2}Allow and Add Rule…: never\n {2}MCP servers that never start: web\*/);
    const json = JSON.parse((await run(['explain', '--json', '--managed', 'managed.jsonc', '--tool', 'builtin.write_file', '--input', '{"path":"a.txt"}'])).out.join('\n'));
    assert.equal(json.ask.remember, '15m');
    assert.deepEqual([json.controls.allowForSession, json.controls.addRule, json.controls.longestGrant], [false, false, '15m']);
  });

  it("agentpolicy hook denies every call to the tools of an MCP server the managed controls refuse, naming the managed policy", async () => {
    const hook = async (tool: string): Promise<{ permissionDecision: string; permissionDecisionReason: string }> => {
      const stdin = JSON.stringify({ session_id: 's', cwd, tool_name: tool, tool_input: {} });
      const out: string[] = [];
      await main(['hook', '--agent', 'claude', '--managed', 'managed.jsonc', '--audit', path.join(cwd, 'audit.jsonl')], {
        out: (l) => out.push(l), err: () => undefined, cwd, readStdin: () => stdin, env: { XDG_STATE_HOME: path.join(cwd, 'state') },
      });
      return JSON.parse(out.join('\n')).hookSpecificOutput;
    };
    const refused = await hook('mcp__webfetch__get');
    assert.equal(refused.permissionDecision, 'deny');
    assert.match(refused.permissionDecisionReason, /"webfetch" may not start: the managed policy \S*managed\.jsonc denies it/);
    assert.notEqual((await hook('mcp__files__read')).permissionDecision, 'deny');
  });

  it('agentpolicy run never starts an MCP server the managed controls deny, and says so', async () => {
    const sample = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-managed-run-'));
    try {
      fs.cpSync(path.join(__dirname, '..', '..', 'policies', 'sample-workspace'), sample, { recursive: true });
      const r = await run(['run', '--workspace', sample, '--agent', 'librarian', '--managed', 'managed-files.jsonc', '--prompt', 'list the files', '--answer', 'allow']);
      assert.match(r.out.join('\n'), /warning: the tools of files are not available in this session: the MCP server "files" may not start: the managed policy \S*managed-files\.jsonc denies it \(controls\.mcpServers\.deny\)/);
    } finally {
      fs.rmSync(sample, { recursive: true, force: true });
    }
  });

  it('explain without a managed policy shows no controls', async () => {
    const r = await run(['explain', '--tool', 'builtin.write_file', '--input', '{"path":"a.txt"}']);
    assert.ok(!r.out.some((l) => l.startsWith('managed controls')));
    assert.ok(!r.out.some((l) => l.includes('capped')));
  });
});
