// Hidden tools in the command line: `agentpolicy check` with an agents file lists, per agent and
// subagent, the tools its model is offered and those hidden (by which rule), as an `info`
// diagnostic `tools-offered` at its name (text and --json, with the lists as fields in JSON); MCP
// servers' tools are said to be listed when the server starts, with what the policy hides of them.
// `agentpolicy explain` says when a tool is hidden from the agent's model.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { runCli } from './cliRun.js';

let cwd = '';
const run = (argv: string[]): ReturnType<typeof runCli> => runCli(argv, cwd);

const POLICY = {
  version: 1,
  rules: [
    { id: 'no-commands', tools: ['builtin.run_command'], agents: ['reviewer'], decision: 'deny' },
    { id: 'no-github', tools: ['mcp.github.*'], decision: 'deny', reason: 'no GitHub' },
    { id: 'no-push', tools: ['mcp.git.push*'], decision: 'deny' },
    { id: 'rm', tools: ['builtin.run_command'], commands: ['rm *'], decision: 'deny' },
    { id: 'no-fetch', tools: ['builtin.fetch'], decision: 'deny' },
    { id: 'no-secret', tools: ['client.secret'], decision: 'deny' },
  ],
};

const AGENTS = {
  agents: [
    {
      name: 'main',
      tools: ['builtin.*', 'mcp.github', 'mcp.git', 'client.secret', 'client.lookup'],
      subagents: [{ name: 'reviewer', tools: ['builtin.read_file', 'builtin.run_command'] }],
    },
  ],
};

interface OfferedRow {
  code: string;
  severity: string;
  line: number;
  agent: string;
  offered: string[];
  hidden: Array<{ tool: string; rule: { id: string | null } | null; defaultFrom?: string | null }>;
  servers: Array<{ tools: string; allHidden?: { rule: { id: string | null } | null }; hiddenBy: Array<{ id: string | null }> }>;
}

describe('agentpolicy: hidden tools', () => {
  before(async () => {
    await initShellParser();
  });
  beforeEach(() => {
    cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tools-offered-')));
    fs.writeFileSync(path.join(cwd, '.agentpolicy.jsonc'), JSON.stringify(POLICY, null, 2));
    fs.writeFileSync(path.join(cwd, '.agents.jsonc'), JSON.stringify(AGENTS, null, 2));
  });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('check lists per agent and subagent the tools offered and those hidden, by rule, as info lines at their names; exit 0', async () => {
    const r = await run(['check']);
    assert.equal(r.code, 0, r.out.join('\n'));
    const main = r.out.find((l) => /info tools-offered agent "main" /.test(l));
    assert.ok(main, r.out.join('\n'));
    assert.match(main, /^\.agents\.jsonc:\d+:\d+ info tools-offered /);
    assert.match(main, /is offered builtin\.read_file, .*builtin\.run_command, .*agents\.spawn, .*client\.lookup;/);
    assert.match(main, /hidden from its model \(every call denied\): builtin\.fetch by workspace rule 5 "no-fetch" \(\.agentpolicy\.jsonc:\d+\); client\.secret by workspace rule 6 "no-secret"/);
    assert.match(main, /mcp tools mcp\.github\.\*: listed when the server starts; all hidden by workspace rule 2 "no-github"/);
    assert.match(main, /mcp tools mcp\.git\.\*: listed when the server starts; those matched by workspace rule 3 "no-push" \(\.agentpolicy\.jsonc:\d+\) hidden/);
    assert.match(main, /\(under \.agentpolicy\.jsonc only\)$/);
    const reviewer = r.out.find((l) => /agent "main\/reviewer"/.test(l));
    assert.match(reviewer ?? '', /is offered builtin\.read_file; hidden from its model \(every call denied\): builtin\.run_command by workspace rule 1 "no-commands"/);
  });

  it('check --json: the same rows with agent, offered, hidden and servers', async () => {
    const r = await run(['check', '--json']);
    assert.equal(r.code, 0);
    const rows = (JSON.parse(r.out.join('\n')) as OfferedRow[]).filter((d) => d.code === 'tools-offered');
    assert.deepEqual(rows.map((d) => [d.agent, d.severity]), [['main', 'info'], ['main/reviewer', 'info']]);
    const main = rows[0]!;
    assert.equal(main.line, 4, 'at the agent\'s name');
    assert.ok(main.offered.includes('builtin.run_command'), 'a deny on some commands does not hide the tool');
    assert.deepEqual(main.hidden.map((h) => [h.tool, h.rule?.id]), [['builtin.fetch', 'no-fetch'], ['client.secret', 'no-secret']]);
    assert.deepEqual(main.servers.map((s) => [s.tools, s.allHidden?.rule?.id ?? null, s.hiddenBy.map((b) => b.id)]), [['mcp.github.*', 'no-github', []], ['mcp.git.*', null, ['no-push']]]);
    assert.deepEqual(rows[1]!.hidden.map((h) => h.tool), ['builtin.run_command']);
  });

  it('a deny default hides every tool no rule could allow; the permission mode counts where no policy sets a default', async () => {
    fs.writeFileSync(path.join(cwd, '.agentpolicy.jsonc'), JSON.stringify({ version: 1, default: 'deny', rules: [{ tools: ['builtin.read_file'], paths: ['src/**'], decision: 'allow' }] }));
    fs.writeFileSync(path.join(cwd, '.agents.jsonc'), JSON.stringify({ agents: [{ name: 'a', tools: ['builtin.read_file', 'builtin.fetch'] }] }));
    const rows = (JSON.parse((await run(['check', '--json'])).out.join('\n')) as OfferedRow[]).filter((d) => d.code === 'tools-offered');
    assert.deepEqual(rows[0]!.offered, ['builtin.read_file']);
    assert.deepEqual(rows[0]!.hidden, [{ tool: 'builtin.fetch', rule: null, defaultFrom: 'workspace' }]);
    fs.writeFileSync(path.join(cwd, '.agentpolicy.jsonc'), JSON.stringify({ version: 1, rules: [{ tools: ['builtin.read_file'], decision: 'allow' }] }));
    fs.writeFileSync(path.join(cwd, '.agents.jsonc'), JSON.stringify({ agents: [{ name: 'a', permissionMode: 'deny', tools: ['builtin.read_file', 'builtin.fetch'] }] }));
    const text = (await run(['check'])).out.join('\n');
    assert.match(text, /builtin\.fetch by the default \(no policy sets one: the permission mode denies\)/);
  });

  it('no tools-offered lines without an agents file, nor while the policy is invalid', async () => {
    fs.rmSync(path.join(cwd, '.agents.jsonc'));
    assert.ok(!(await run(['check'])).out.some((l) => /tools-offered/.test(l)));
    fs.writeFileSync(path.join(cwd, '.agents.jsonc'), JSON.stringify(AGENTS));
    fs.writeFileSync(path.join(cwd, '.agentpolicy.jsonc'), '{ "version": 1, "rules": [ { "tool": ["x"], "decision": "deny" } ] }');
    const r = await run(['check']);
    assert.equal(r.code, 1);
    assert.ok(!r.out.some((l) => /tools-offered/.test(l)), r.out.join('\n'));
  });

  it('explain says when the tool is hidden from the agent\'s model (text and --json), and not when some input is not denied', async () => {
    const r = await run(['explain', '--tool', 'mcp.github.push']);
    assert.equal(r.code, 0);
    assert.match(r.out[1]!, /^hidden: this tool is hidden from agent "main"'s model: workspace rule 2 "no-github" \(\.agentpolicy\.jsonc:\d+\) denies every call of it, whatever its input$/);
    const j = JSON.parse((await run(['explain', '--tool', 'mcp.github.push', '--json'])).out.join('\n')) as { hidden?: { rule: { id: string } } };
    assert.equal(j.hidden?.rule.id, 'no-github');
    const rm = await run(['explain', '--tool', 'builtin.run_command', '--input', '{"command":"rm -rf x"}']);
    assert.match(rm.out[0]!, /^deny by workspace rule 4 "rm"/);
    assert.ok(!rm.out.some((l) => l.startsWith('hidden:')), rm.out.join('\n'));
    const reviewer = await run(['explain', '--tool', 'builtin.run_command', '--agent', 'reviewer']);
    assert.match(reviewer.out[1]!, /^hidden: this tool is hidden from agent "reviewer"'s model/);
  });
});
