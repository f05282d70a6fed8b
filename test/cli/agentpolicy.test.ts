// The `agentpolicy` command line (policy-format.md, "The command line"): check, test and explain,
// their output formats, JSON shapes and exit codes, and how they find the layers.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';

interface Run {
  code: number;
  out: string[];
  err: string[];
  stdout: string;
}

let tmp = '';
let cwd = '';

async function run(argv: string[], at: string = cwd): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l), cwd: at });
  return { code, out, err, stdout: out.join('\n') };
}

/** A fresh folder per test, so no test sees another's files. */
function freshDir(): string {
  const dir = fs.mkdtempSync(path.join(tmp, 'case-'));
  return fs.realpathSync(dir);
}

function write(file: string, content: unknown): string {
  const full = path.join(cwd, file);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return full;
}

const policy = (rules: unknown[], top: Record<string, unknown> = {}): Record<string, unknown> => ({ version: 1, ...top, rules });

/** A policy with a typo on line 5, column 7: `"tool"`. */
const TYPO_POLICY = '{\n  "version": 1,\n  "default": "allow",\n  "rules": [\n    { "tool": ["mcp.*"], "decision": "allow" }\n  ]\n}\n';

const DIAGNOSTIC_LINE = /^(.+):(\d+):(\d+) (error|warning|info) ([a-z-]+) (.+)$/;
const JSON_DIAGNOSTIC_KEYS = ['code', 'column', 'endColumn', 'endLine', 'file', 'line', 'message', 'severity'];

function parseJsonOut(r: Run): unknown {
  return JSON.parse(r.stdout);
}

describe('agentpolicy CLI', () => {
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-cli-'));
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  beforeEach(() => {
    cwd = freshDir();
  });

  describe('agentpolicy check', () => {
    it('exits 0 and prints no diagnostics for a clean policy', async () => {
      write('.agentpolicy.jsonc', policy([{ tools: ['mcp.*'], decision: 'allow' }]));
      const r = await run(['check']);
      assert.equal(r.code, 0);
      assert.deepEqual(r.out, []);
    });

    it('prints `file:line:col severity code message` per diagnostic and exits 1 on an error', async () => {
      write('.agentpolicy.jsonc', TYPO_POLICY);
      const r = await run(['check']);
      assert.equal(r.code, 1);
      assert.equal(r.out.length, 1, r.stdout);
      assert.match(r.out[0]!, /^\.agentpolicy\.jsonc:5:7 error schema unknown field "tool"/);
      assert.match(r.out[0]!, /did you mean "tools"/);
    });

    it('reports each error code with 1-based positions', async () => {
      const cases: Array<[string, string, string]> = [
        ['syntax.jsonc', '{\n  "version": 1\n  "rules": []\n}', 'syntax.jsonc:3:3 error syntax '],
        ['empty.jsonc', '', 'empty.jsonc:1:1 error syntax '],
        ['glob.jsonc', '{\n  "version": 1,\n  "rules": [\n    { "input": { "/a": { "regex": "(" } }, "decision": "deny" }\n  ]\n}', 'glob.jsonc:4:24 error bad-glob '],
        ['ids.jsonc', '{\n  "version": 1,\n  "rules": [\n    { "id": "x", "decision": "deny" },\n    { "id": "x", "decision": "ask" }\n  ]\n}', 'ids.jsonc:5:13 error duplicate-id '],
        ['version.jsonc', '{\n  "version": 2\n}', 'version.jsonc:2:3 error schema '],
      ];
      for (const [file, text, prefix] of cases) {
        write(file, text);
        const r = await run(['check', '--policy', file]);
        assert.equal(r.code, 1, `${file}: ${r.stdout}`);
        assert.ok(r.out.some((l) => l.startsWith(prefix)), `${file}: expected a line starting "${prefix}", got ${r.stdout}`);
        for (const line of r.out) assert.match(line, DIAGNOSTIC_LINE);
      }
    });

    it('exits 0 when there are only warnings, and prints them', async () => {
      write('.agentpolicy.jsonc', '{\n  "version": 1,\n  "rules": [\n    { "tools": ["mcp.*"], "decision": "ask" },\n    { "tools": ["mcp.github.*"], "decision": "deny" }\n  ]\n}');
      const r = await run(['check']);
      assert.equal(r.code, 0);
      assert.equal(r.out.length, 1);
      assert.match(r.out[0]!, /^\.agentpolicy\.jsonc:5:5 warning shadowed /);
    });

    it('reports a failing inline test as `test-failed` and exits 1', async () => {
      write('p.jsonc', policy([{ tools: ['mcp.*'], decision: 'allow' }], { tests: [{ name: 'github is denied', call: { tool: 'mcp.github.push' }, expect: 'deny' }] }));
      const r = await run(['check', '--policy', 'p.jsonc']);
      assert.equal(r.code, 1);
      const line = r.out.find((l) => / error test-failed /.test(l));
      assert.ok(line, r.stdout);
      assert.match(line, /github is denied/);
    });

    it('--json prints a JSON array of diagnostics with the fixed fields', async () => {
      write('.agentpolicy.jsonc', TYPO_POLICY);
      const r = await run(['check', '--json']);
      assert.equal(r.code, 1);
      const rows = parseJsonOut(r) as Array<Record<string, unknown>>;
      assert.ok(Array.isArray(rows));
      assert.equal(rows.length, 1);
      assert.deepEqual(Object.keys(rows[0]!).sort(), JSON_DIAGNOSTIC_KEYS);
      assert.deepEqual(
        { ...rows[0], message: undefined },
        { file: '.agentpolicy.jsonc', line: 5, column: 7, endLine: 5, endColumn: 13, severity: 'error', code: 'schema', message: undefined },
      );
      assert.match(String(rows[0]!.message), /unknown field "tool"/);
    });

    it('--json prints [] and exits 0 for a clean policy', async () => {
      write('.agentpolicy.jsonc', policy([]));
      const r = await run(['check', '--json']);
      assert.equal(r.code, 0);
      assert.deepEqual(parseJsonOut(r), []);
    });

    it('--agents: warns `spawn-denied` when agents declare subagents and the default denies; a warning exits 0', async () => {
      write('.agentpolicy.jsonc', '{\n  "version": 1,\n  "default": "deny",\n  "rules": []\n}');
      write('agents.jsonc', { agents: [{ name: 'main', subagents: [{ name: 'reviewer' }] }] });
      const r = await run(['check', '--agents', 'agents.jsonc', '--json']);
      assert.equal(r.code, 0);
      const rows = parseJsonOut(r) as Array<Record<string, unknown>>;
      const d = rows.find((x) => x.code === 'spawn-denied');
      assert.ok(d, r.stdout);
      assert.equal(d.severity, 'warning');
      assert.equal(d.line, 3);
      assert.match(String(d.message), /agents\.spawn/);
      write('ok.jsonc', policy([{ tools: ['agents.spawn'], decision: 'allow' }], { default: 'deny' }));
      const fixed = await run(['check', '--policy', 'ok.jsonc', '--agents', 'agents.jsonc', '--json']);
      // What remains is the listing of the tools each agent is offered (info; test/cli/toolsOffered.test.ts).
      assert.deepEqual((parseJsonOut(fixed) as Array<{ code: string }>).filter((d) => d.code !== 'tools-offered'), []);
    });

    it('--agents: reports errors in the agents file with its own name, and exits 1', async () => {
      write('.agentpolicy.jsonc', policy([]));
      write('agents.jsonc', '{ "agents": [ { "name": "main", "subagent": [] } ] }');
      const r = await run(['check', '--agents', 'agents.jsonc']);
      assert.equal(r.code, 1);
      assert.ok(r.out.some((l) => /^agents\.jsonc:1:\d+ error schema unknown field "subagent"/.test(l)), r.stdout);
    });

    it('names the file as given with --policy', async () => {
      write('conf/team.jsonc', TYPO_POLICY);
      const r = await run(['check', '--policy', 'conf/team.jsonc']);
      assert.equal(r.code, 1);
      assert.match(r.out[0]!, /^conf\/team\.jsonc:5:7 error schema /);
    });

    it('with no ./.agentpolicy.jsonc and no --policy there is no workspace layer: nothing to report, exit 0', async () => {
      const r = await run(['check']);
      assert.equal(r.code, 0);
      assert.deepEqual(r.out, []);
      const j = await run(['check', '--json']);
      assert.equal(j.code, 0);
      assert.deepEqual(parseJsonOut(j), []);
    });

    it('exits 2 when a named file does not exist', async () => {
      write('.agentpolicy.jsonc', policy([]));
      assert.equal((await run(['check', '--policy', 'missing.jsonc'])).code, 2);
      assert.equal((await run(['check', '--agents', 'missing.jsonc'])).code, 2);
    });

    it('exits 2 on an unknown flag or a stray argument, and prints usage to stderr', async () => {
      write('.agentpolicy.jsonc', policy([]));
      for (const argv of [['check', '--polcy', 'x'], ['check', '--frobnicate'], ['check', 'extra'], ['check', '--policy']]) {
        const r = await run(argv);
        assert.equal(r.code, 2, argv.join(' '));
        assert.ok(r.err.some((l) => /usage/.test(l)), argv.join(' '));
      }
    });
  });

  describe('agentpolicy (usage)', () => {
    it('exits 2 with no command or an unknown command', async () => {
      assert.equal((await run([])).code, 2);
      assert.equal((await run(['lint'])).code, 2);
    });

    it('--help exits 0', async () => {
      const r = await run(['--help']);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /agentpolicy check/);
    });
  });

  describe('agentpolicy test', () => {
    const tested = (tests: unknown[]): Record<string, unknown> =>
      policy(
        [
          { id: 'src', tools: ['builtin.read_file'], paths: ['src/**', '!**/.env'], decision: 'allow' },
          { id: 'ro', tools: ['mcp.*'], hints: { readOnlyHint: true }, decision: 'allow' },
          { id: 'deployer', tools: ['mcp.github.*'], agents: ['deployer'], decision: 'deny' },
          { id: 'tagged', tags: ['updateHint'], decision: 'deny' },
          { id: 'kind', kinds: ['client'], decision: 'allow' },
        ],
        { default: 'ask', tests },
      );

    it('exits 0 when every inline test passes, using every call field', async () => {
      write('.agentpolicy.jsonc', tested([
        { name: 'src is readable', call: { tool: 'builtin.read_file', input: { path: 'src/a.ts' } }, expect: 'allow', rule: 'src' },
        { call: { tool: 'builtin.read_file', input: { path: 'src/.env' } }, expect: 'ask' },
        { call: { tool: 'mcp.github.read', hints: { readOnlyHint: true } }, expect: 'allow', rule: 'ro' },
        { call: { tool: 'mcp.github.push', agent: 'deployer' }, expect: 'deny', rule: 'deployer' },
        { call: { tool: 'mcp.github.push' }, expect: 'ask' },
        { call: { tool: 'x.y', tags: ['updateHint'] }, expect: 'deny', rule: 'tagged' },
        { call: { tool: 'x.y', kind: 'client' }, expect: 'allow', rule: 'kind' },
        { call: { tool: 'client.y' }, expect: 'allow', rule: 'kind' },
      ]));
      const r = await run(['test']);
      assert.equal(r.code, 0, r.stdout);
      assert.match(r.stdout, /8 passed, 0 failed/);
    });

    it('exits 1 when a decision is not as expected', async () => {
      write('.agentpolicy.jsonc', tested([
        { name: 'passes', call: { tool: 'client.y' }, expect: 'allow' },
        { name: 'wrong', call: { tool: 'mcp.github.push' }, expect: 'allow' },
      ]));
      const r = await run(['test']);
      assert.equal(r.code, 1);
      assert.ok(r.out.some((l) => /FAIL/.test(l) && /wrong/.test(l)), r.stdout);
      assert.match(r.stdout, /1 passed, 1 failed/);
    });

    it('exits 1 when the deciding rule is not the expected id, even if the decision is', async () => {
      write('.agentpolicy.jsonc', tested([{ call: { tool: 'client.y' }, expect: 'allow', rule: 'src' }]));
      assert.equal((await run(['test'])).code, 1);
    });

    it('judges paths against the folder holding the policy', async () => {
      write('sub/p.jsonc', tested([{ call: { tool: 'builtin.read_file', input: { path: path.join(cwd, 'sub', 'src', 'a.ts') } }, expect: 'allow', rule: 'src' }]));
      assert.equal((await run(['test', '--policy', 'sub/p.jsonc'])).code, 0);
      write('sub/q.jsonc', tested([{ call: { tool: 'builtin.read_file', input: { path: path.join(cwd, 'src', 'a.ts') } }, expect: 'allow' }]));
      assert.equal((await run(['test', '--policy', 'sub/q.jsonc'])).code, 1, 'cwd/src is outside sub/');
    });

    it('--json gives counts and each test with its result', async () => {
      write('.agentpolicy.jsonc', tested([
        { name: 'a', call: { tool: 'client.y' }, expect: 'allow' },
        { name: 'b', call: { tool: 'mcp.github.push' }, expect: 'deny' },
      ]));
      const r = await run(['test', '--json']);
      assert.equal(r.code, 1);
      const j = parseJsonOut(r) as { valid: boolean; passed: number; failed: number; tests: Array<{ name: string; passed: boolean; actual: { decision: string } }> };
      assert.equal(j.valid, true);
      assert.equal(j.passed, 1);
      assert.equal(j.failed, 1);
      assert.deepEqual(j.tests.map((t) => [t.name, t.passed, t.actual.decision]), [['a', true, 'allow'], ['b', false, 'ask']]);
    });

    it('exits 1 for an invalid policy, printing its diagnostics', async () => {
      write('.agentpolicy.jsonc', TYPO_POLICY);
      const r = await run(['test']);
      assert.equal(r.code, 1);
      assert.match(r.out[0]!, /^\.agentpolicy\.jsonc:5:7 error schema /);
      const j = await run(['test', '--json']);
      assert.equal(j.code, 1);
      const body = parseJsonOut(j) as { valid: boolean; diagnostics: Array<Record<string, unknown>> };
      assert.equal(body.valid, false);
      assert.deepEqual(Object.keys(body.diagnostics[0]!).sort(), JSON_DIAGNOSTIC_KEYS);
    });

    it('exits 0 for a valid policy without tests', async () => {
      write('.agentpolicy.jsonc', policy([]));
      const r = await run(['test']);
      assert.equal(r.code, 0);
    });

    it('exits 2 on usage errors: a missing named file, an unknown flag, no policy at all', async () => {
      assert.equal((await run(['test', '--policy', 'missing.jsonc'])).code, 2);
      write('.agentpolicy.jsonc', policy([]));
      assert.equal((await run(['test', '--agents', 'x'])).code, 2, 'test takes no --agents');
      assert.equal((await run(['test', '--bogus'])).code, 2);
      cwd = freshDir();
      assert.equal((await run(['test'])).code, 2, 'nothing to test');
    });
  });

  describe('agentpolicy explain', () => {
    async function explainJson(argv: string[]): Promise<{ code: number; body: Record<string, any> }> {
      const r = await run(['explain', ...argv, '--json']);
      return { code: r.code, body: parseJsonOut(r) as Record<string, any> };
    }

    it('prints the decision with the deciding rule, exit 0', async () => {
      write('.agentpolicy.jsonc', '{\n  "version": 1,\n  "rules": [\n    { "id": "gh", "tools": ["mcp.github.*"], "decision": "deny", "reason": "no github" }\n  ]\n}');
      const r = await run(['explain', '--tool', 'mcp.github.push']);
      assert.equal(r.code, 0);
      assert.match(r.out[0]!, /^deny\b/);
      assert.match(r.out[0]!, /"gh"/);
      assert.match(r.out[0]!, /\.agentpolicy\.jsonc:4/);
      assert.ok(r.out.some((l) => /no github/.test(l)), 'the reason');
    });

    it('--json prints the decision object of the spec', async () => {
      write('.agentpolicy.jsonc', '{\n  "version": 1,\n  "rules": [\n    { "id": "gh", "tools": ["mcp.github.*"], "decision": "deny", "reason": "no github" }\n  ]\n}');
      const { code, body } = await explainJson(['--tool', 'mcp.github.push']);
      assert.equal(code, 0);
      assert.equal(body.decision, 'deny');
      assert.deepEqual(body.rule, { id: 'gh', index: 0, layer: 'workspace', file: '.agentpolicy.jsonc', line: 4 });
      assert.equal(body.reason, 'no github');
      assert.equal(body.lowered, false);
      assert.deepEqual(body.warnings, []);
      const other = await explainJson(['--tool', 'mcp.gmail.send']);
      assert.equal(other.body.decision, 'ask');
      assert.equal(other.body.rule, null);
    });

    it('shows each part of a compound command with its own decision and rule, and whether it runs sandboxed', async () => {
      write('.agentpolicy.jsonc', policy([
        { id: 'status', tools: ['builtin.run_command'], commands: ['git status'], decision: 'allow' },
        { id: 'tests', tools: ['builtin.run_command'], commands: ['npm test'], decision: 'allow', sandbox: { network: true } },
        { id: 'no-rm', commands: ['rm *'], decision: 'deny' },
      ]));
      const input = JSON.stringify({ command: 'git status && npm test; rm -rf x' });
      const { code, body } = await explainJson(['--tool', 'builtin.run_command', '--input', input, '--sandbox', 'yes']);
      assert.equal(code, 0);
      assert.equal(body.decision, 'deny');
      assert.equal(body.rule.id, 'no-rm');
      assert.deepEqual(body.parts.map((p: any) => [p.part, p.decision, p.rule?.id]), [['git status', 'allow', 'status'], ['npm test', 'allow', 'tests'], ['rm -rf x', 'deny', 'no-rm']]);
      const text = await run(['explain', '--tool', 'builtin.run_command', '--input', JSON.stringify({ command: 'git status && npm test' }), '--sandbox', 'no']);
      assert.match(text.out[0]!, /^ask by workspace rule 2 "tests" .* for part 2 of 2 \(npm test\)/);
      assert.ok(text.out.some((l) => /^  1\. allow git status by workspace rule 1 "status" \(\.agentpolicy\.jsonc:\d+\)$/.test(l)), text.out.join("\n"));
      assert.ok(text.out.some((l) => /^  2\. ask npm test by .*only inside the sandbox, and explain was run with --sandbox no/.test(l)), text.out.join('\n'));
      assert.ok(text.out.includes('sandbox: runs without a sandbox'));
      const sandboxed = await run(['explain', '--tool', 'builtin.run_command', '--input', JSON.stringify({ command: 'npm test' }), '--sandbox', 'yes']);
      assert.ok(sandboxed.out.includes('sandbox: runs sandboxed, network on'), sandboxed.out.join('\n'));
      assert.equal((await run(['explain', '--tool', 'builtin.run_command', '--sandbox', 'maybe'])).code, 2);
    });

    it('--agent defaults to main', async () => {
      write('.agentpolicy.jsonc', policy([{ id: 'm', agents: ['main'], decision: 'allow' }, { id: 'o', decision: 'deny' }]));
      assert.equal((await explainJson(['--tool', 'mcp.a.b'])).body.rule.id, 'm');
      assert.equal((await explainJson(['--tool', 'mcp.a.b', '--agent', 'helper'])).body.rule.id, 'o');
    });

    it('--kind defaults to the kind implied by the id\'s prefix', async () => {
      write('.agentpolicy.jsonc', policy([{ id: 'mcp', kinds: ['mcp'], decision: 'deny' }, { id: 'client', kinds: ['client'], decision: 'allow' }]));
      assert.equal((await explainJson(['--tool', 'mcp.a.b'])).body.rule.id, 'mcp');
      assert.equal((await explainJson(['--tool', 'client.lookup'])).body.rule.id, 'client');
      assert.equal((await explainJson(['--tool', 'mcp.a.b', '--kind', 'client'])).body.rule.id, 'client', '--kind overrides');
      assert.equal((await explainJson(['--tool', 'odd.tool'])).body.rule, null);
    });

    it('--input, --hints and --tags reach the matchers', async () => {
      write('.agentpolicy.jsonc', policy([
        { id: 'mail', input: { '/to': '*@evil.com' }, decision: 'deny' },
        { id: 'ro', hints: { readOnlyHint: true }, decision: 'allow' },
        { id: 'tag', tags: ['updateHint'], decision: 'ask' },
      ]));
      assert.equal((await explainJson(['--tool', 'mcp.mail.send', '--input', '{"to":"x@evil.com"}'])).body.rule?.id, 'mail');
      assert.equal((await explainJson(['--tool', 'mcp.fs.read', '--hints', '{"readOnlyHint":true}'])).body.rule?.id, 'ro');
      assert.equal((await explainJson(['--tool', 'mcp.fs.write', '--tags', 'createHint,updateHint'])).body.rule?.id, 'tag');
      assert.equal((await explainJson(['--tool', 'mcp.fs.write'])).body.rule, null);
    });

    it('--workspace defaults to the folder holding the workspace policy', async () => {
      write('sub/p.jsonc', policy([{ id: 'src', paths: ['src/**'], decision: 'allow' }]));
      const inSub = JSON.stringify({ path: path.join(cwd, 'sub', 'src', 'a.ts') });
      const inCwd = JSON.stringify({ path: path.join(cwd, 'src', 'a.ts') });
      assert.equal((await explainJson(['--tool', 'mcp.fs.read', '--policy', 'sub/p.jsonc', '--input', inSub])).body.decision, 'allow');
      assert.equal((await explainJson(['--tool', 'mcp.fs.read', '--policy', 'sub/p.jsonc', '--input', inCwd])).body.decision, 'ask');
      const relative = JSON.stringify({ path: 'src/a.ts' });
      assert.equal((await explainJson(['--tool', 'mcp.fs.read', '--policy', 'sub/p.jsonc', '--input', relative])).body.decision, 'allow');
      // --workspace moves the folder paths resolve against.
      assert.equal((await explainJson(['--tool', 'mcp.fs.read', '--policy', 'sub/p.jsonc', '--workspace', '.', '--input', inCwd])).body.decision, 'allow');
      assert.equal((await explainJson(['--tool', 'mcp.fs.read', '--policy', 'sub/p.jsonc', '--workspace', '.', '--input', inSub])).body.decision, 'ask');
    });

    it('--workspace defaults to the current folder when there is no workspace policy', async () => {
      write('user.jsonc', policy([{ id: 'src', paths: ['src/**'], decision: 'allow' }]));
      const inCwd = JSON.stringify({ path: path.join(cwd, 'src', 'a.ts') });
      assert.equal((await explainJson(['--tool', 'mcp.fs.read', '--user', 'user.jsonc', '--input', inCwd])).body.decision, 'allow');
    });

    it('with no ./.agentpolicy.jsonc and no --policy there is no workspace layer: the built-in default asks, exit 0', async () => {
      const r = await explainJson(['--tool', 'mcp.a.b']);
      assert.equal(r.code, 0);
      assert.equal(r.body.decision, 'ask');
      assert.equal(r.body.rule, null);
    });

    it('--untrusted lowers the workspace\'s allow rules and default to ask', async () => {
      write('.agentpolicy.jsonc', policy([{ id: 'a', tools: ['mcp.*'], decision: 'allow' }, { id: 'd', tools: ['client.*'], decision: 'deny' }], { default: 'allow' }));
      const trusted = await explainJson(['--tool', 'mcp.a.b']);
      assert.deepEqual([trusted.body.decision, trusted.body.lowered], ['allow', false]);
      const rule = await explainJson(['--tool', 'mcp.a.b', '--untrusted']);
      assert.deepEqual([rule.code, rule.body.decision, rule.body.lowered, rule.body.rule.id], [0, 'ask', true, 'a']);
      assert.match(rule.body.reason, /trust/);
      const byDefault = await explainJson(['--tool', 'other.x', '--untrusted']);
      assert.deepEqual([byDefault.body.decision, byDefault.body.lowered, byDefault.body.rule], ['ask', true, null]);
      const deny = await explainJson(['--tool', 'client.x', '--untrusted']);
      assert.deepEqual([deny.body.decision, deny.body.lowered], ['deny', false]);
      const text = await run(['explain', '--tool', 'mcp.a.b', '--untrusted']);
      assert.match(text.out[0]!, /^ask\b/);
      assert.ok(text.out.some((l) => /lowered/.test(l)), text.stdout);
    });

    it('--untrusted does not lower --managed or --user allows', async () => {
      write('.agentpolicy.jsonc', policy([]));
      write('m.jsonc', policy([{ id: 'm', tools: ['mcp.m'], decision: 'allow' }]));
      write('u.jsonc', policy([{ id: 'u', tools: ['mcp.u'], decision: 'allow' }]));
      for (const tool of ['mcp.m', 'mcp.u']) {
        const r = await explainJson(['--tool', tool, '--managed', 'm.jsonc', '--user', 'u.jsonc', '--untrusted']);
        assert.deepEqual([r.body.decision, r.body.lowered], ['allow', false], tool);
      }
    });

    it('--managed, workspace and --user layers are judged in that order, default from the first that sets it', async () => {
      write('m.jsonc', policy([{ id: 'm', tools: ['mcp.github.*'], decision: 'deny' }]));
      write('.agentpolicy.jsonc', policy([{ id: 'w', tools: ['mcp.*'], decision: 'allow' }], { default: 'deny' }));
      write('u.jsonc', policy([{ id: 'u', tools: ['client.*'], decision: 'allow' }, { id: 'u2', tools: ['mcp.*'], decision: 'ask' }], { default: 'allow' }));
      const layers = ['--managed', 'm.jsonc', '--user', 'u.jsonc'];
      const gh = await explainJson(['--tool', 'mcp.github.push', ...layers]);
      assert.deepEqual([gh.body.decision, gh.body.rule.layer, gh.body.rule.file], ['deny', 'managed', 'm.jsonc']);
      const mcp = await explainJson(['--tool', 'mcp.gmail.read', ...layers]);
      assert.deepEqual([mcp.body.decision, mcp.body.rule.layer], ['allow', 'workspace']);
      const client = await explainJson(['--tool', 'client.x', ...layers]);
      assert.deepEqual([client.body.decision, client.body.rule.layer, client.body.rule.id], ['allow', 'user', 'u']);
      const other = await explainJson(['--tool', 'other.x', ...layers]);
      assert.deepEqual([other.body.decision, other.body.rule], ['deny', null], "the workspace's default comes before the user's");
    });

    it('exits 1 for an invalid workspace policy, printing its errors; the decision is never allow', async () => {
      write('.agentpolicy.jsonc', TYPO_POLICY); // its default (allow) and rule (allow) must not apply
      const r = await run(['explain', '--tool', 'mcp.a.b']);
      assert.equal(r.code, 1);
      assert.ok(r.out.some((l) => /^\.agentpolicy\.jsonc:5:7 error schema /.test(l)), r.stdout);
      assert.ok(!r.out.some((l) => /^allow\b/.test(l)), r.stdout);
      const j = await explainJson(['--tool', 'mcp.a.b']);
      assert.equal(j.code, 1);
      assert.notEqual(j.body.decision, 'allow');
      assert.deepEqual(Object.keys(j.body.diagnostics[0]).sort(), JSON_DIAGNOSTIC_KEYS);
    });

    it('exits 1 and never prints allow when any named policy is invalid, even if a valid layer allows', async () => {
      write('m.jsonc', policy([{ id: 'm', tools: ['mcp.*'], decision: 'allow' }]));
      write('u.jsonc', '{ "version": 1, "rules": [ ');
      const j = await explainJson(['--tool', 'mcp.a.b', '--managed', 'm.jsonc', '--user', 'u.jsonc']);
      assert.equal(j.code, 1);
      assert.notEqual(j.body.decision, 'allow');
      write('bad-managed.jsonc', TYPO_POLICY);
      write('.agentpolicy.jsonc', policy([], { default: 'allow' }));
      const m = await explainJson(['--tool', 'mcp.a.b', '--managed', 'bad-managed.jsonc']);
      assert.equal(m.code, 1);
      assert.notEqual(m.body.decision, 'allow');
    });

    it('exits 2 on usage errors', async () => {
      write('.agentpolicy.jsonc', policy([]));
      const cases: string[][] = [
        ['explain'],
        ['explain', '--tool'],
        ['explain', '--tool', 'a.b', '--input', '{not json'],
        ['explain', '--tool', 'a.b', '--hints', '[1]'],
        ['explain', '--tool', 'a.b', '--kind', 'local'],
        ['explain', '--tool', 'a.b', '--policy', 'missing.jsonc'],
        ['explain', '--tool', 'a.b', '--managed', 'missing.jsonc'],
        ['explain', '--tool', 'a.b', '--user', 'missing.jsonc'],
        ['explain', '--tool', 'a.b', '--agents', 'x'],
        ['explain', '--tool', 'a.b', '--trusted'],
      ];
      for (const argv of cases) assert.equal((await run(argv)).code, 2, argv.join(' '));
    });
  });

  describe('the built CLI (dist/cli.js)', () => {
    const cli = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');

    it('is the package\'s `agentpolicy` bin, an executable script', () => {
      const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as { bin: Record<string, string> };
      assert.equal(path.resolve(__dirname, '..', '..', pkg.bin.agentpolicy!), cli);
      assert.match(fs.readFileSync(cli, 'utf8').split('\n')[0]!, /^#!\/usr\/bin\/env node/);
    });

    it('runs as a program: check prints diagnostics and exits 1, explain exits 0', () => {
      assert.ok(fs.existsSync(cli), 'npm run build makes dist/cli.js');
      write('.agentpolicy.jsonc', TYPO_POLICY);
      const check = spawnSync(process.execPath, [cli, 'check'], { cwd, encoding: 'utf8' });
      assert.equal(check.status, 1, check.stderr);
      assert.match(check.stdout, /^\.agentpolicy\.jsonc:5:7 error schema unknown field "tool"/m);

      write('ok.jsonc', policy([{ id: 'tests', tools: ['builtin.run_command'], commands: ['npm test'], decision: 'allow' }]));
      const explain = spawnSync(process.execPath, [cli, 'explain', '--policy', 'ok.jsonc', '--tool', 'builtin.run_command', '--input', '{"command":"npm test && rm -rf /"}', '--json'], { cwd, encoding: 'utf8' });
      assert.equal(explain.status, 0, explain.stderr);
      assert.equal(JSON.parse(explain.stdout).decision, 'ask', 'the shell parser works in the bundle: the second command is not allowed');

      const usage = spawnSync(process.execPath, [cli, 'explain', '--nope'], { cwd, encoding: 'utf8' });
      assert.equal(usage.status, 2);
    });
  });
});
