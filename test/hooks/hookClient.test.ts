// The hook client `agentpolicy hook install` writes (src/hooks/install/hookClient.ts), run by /bin/sh as a
// host runs it: with a real decision service in this process it replays the service's answer
// exactly (and needs no node then); without one it decides in-process with the built CLI, the
// same answers; with neither it blocks (exit 2, saying how to start the service or reinstall); it
// never exits 0 without an answer of the policy and leaves no temporary file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDecisionService, type DecisionService } from '../../src/hooks/service/decisionService.js';
import { hookClientPath, hookClientScript, writeHookClient, type HookClientFallback } from '../../src/hooks/install/hookClient.js';
import { COPILOT_OR_VSCODE } from '../../src/hooks/install/hookEntries.js';

const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'dist', 'cli.js');

const POLICY = `{
  "version": 1,
  "rules": [
    { "id": "no-rm", "tools": ["builtin.run_command"], "commands": ["rm *"], "decision": "deny", "reason": "no deleting" },
    { "id": "safe", "tools": ["builtin.run_command"], "commands": ["touch *", "echo *"], "decision": "allow" }
  ],
  "default": "ask"
}`;

interface Ran {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

describe('the hook client (hook install writes it; the hosts run it)', function () {
  this.timeout(60_000);
  let root: string;
  let workspace: string;
  let stateHome: string;
  let state: string;
  let tmp: string;
  let service: DecisionService | undefined;

  before(function () {
    if (!fs.existsSync(CLI)) {
      console.warn(`    skipped: ${CLI} is missing (node esbuild.mjs)`);
      this.skip();
    }
  });

  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hcl-')));
    workspace = path.join(root, 'proj');
    stateHome = path.join(root, 'st');
    state = path.join(stateHome, 'agentpolicy');
    tmp = path.join(root, 'tmp');
    fs.mkdirSync(workspace);
    fs.mkdirSync(tmp);
    fs.mkdirSync(state, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), POLICY);
  });

  afterEach(async () => {
    await service?.close();
    service = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  const startService = async (): Promise<DecisionService> =>
    (service = await startDecisionService({ stateDir: state, workspace, env: { HOME: root, PATH: process.env.PATH }, findEditor: () => undefined }));

  /** Writes the client for this fallback into the state folder, as hook install does. */
  function client(fallback: HookClientFallback = { node: process.execPath, cli: CLI }): string {
    const text = hookClientScript(fallback);
    const file = hookClientPath(state, text);
    writeHookClient(file, text);
    return file;
  }

  /** Runs a hook entry's command line under /bin/sh with the host's input on stdin (never blocking this process: the service answers in it). */
  function run(commandLine: string, stdin: string, env: Record<string, string> = {}): Promise<Ran> {
    return new Promise((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', commandLine], {
        cwd: workspace,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, XDG_STATE_HOME: stateHome, XDG_RUNTIME_DIR: path.join(root, 'run'), TMPDIR: tmp, AGENTPOLICY_HOOK_SANDBOX: '0', ...env },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (exitCode) => resolve({ exitCode, stdout, stderr }));
      child.stdin.end(stdin);
    });
  }

  const claudeInput = (command: string): string =>
    JSON.stringify({ session_id: 's1', cwd: workspace, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
  const copilotInput = (command: string): string => JSON.stringify({ sessionId: 's2', cwd: workspace, toolName: 'bash', toolArgs: { command } });

  /** `refused`: the service answers it with a 4xx (its body is not JSON): the client decides it in-process. */
  const CASES: Array<{ agent: string; input: string; decision: RegExp; env?: Record<string, string>; refused?: true }> = [
    { agent: 'claude', input: claudeInput('rm victim.txt'), decision: /"permissionDecision":"deny".*no deleting/ },
    { agent: 'claude', input: claudeInput('touch made.txt'), decision: /"permissionDecision":"allow"/ },
    { agent: 'claude', input: claudeInput('mkdir asked'), decision: /"permissionDecision":"ask"/ },
    { agent: 'codex', input: claudeInput('touch made.txt'), decision: /^$/ },
    { agent: 'codex', input: claudeInput('mkdir asked'), decision: /"permissionDecision":"deny".*cannot ask/ },
    { agent: COPILOT_OR_VSCODE, input: copilotInput('rm victim.txt'), decision: /"permissionDecision":"deny"/, env: { COPILOT_CLI: '1' } },
    { agent: 'claude', input: 'not json', decision: /"permissionDecision":"deny".*not JSON/, refused: true },
  ];

  it('with the service up: its answers, exactly, and no node needed; without it: the same answers decided in-process', async () => {
    const file = client();
    const withoutService: Ran[] = [];
    for (const c of CASES) withoutService.push(await run(`'${file}' hook --agent ${c.agent} --timeout 30`, c.input, c.env));
    await startService();
    // A client whose node is gone still answers while the service runs: the answers below are the service's.
    const noNode = client({ node: path.join(root, 'gone', 'node'), cli: CLI });
    const loadsBefore = service!.policies.loads + service!.policies.hits;
    for (const [i, c] of CASES.entries()) {
      const fallback = withoutService[i]!;
      assert.equal(fallback.exitCode, 0, fallback.stderr);
      assert.match(fallback.stdout, c.decision, `in-process: ${fallback.stdout}`);
      const served = await run(`'${noNode}' hook --agent ${c.agent} --timeout 30`, c.input, c.env);
      if (c.refused) {
        assert.equal(served.exitCode, 2, 'refused by the service and no node: blocked');
        assert.deepEqual(await run(`'${file}' hook --agent ${c.agent} --timeout 30`, c.input, c.env), fallback, 'refused by the service: decided in-process');
      } else {
        assert.deepEqual(served, fallback, `${c.agent} ${c.input}: the service's answer replayed is the in-process answer`);
      }
    }
    assert.ok(service!.policies.loads + service!.policies.hits > loadsBefore, 'the service decided');
    const audit = fs.readFileSync(path.join(state, 'audit.jsonl'), 'utf8').trim().split('\n');
    assert.equal(audit.length, 2 * CASES.filter((c) => !c.refused).length, 'each call audited once per run (an input that is not JSON is not)');
    assert.deepEqual(fs.readdirSync(tmp), [], 'no temporary file left');
  });

  it('falls back when the service refuses (a wrong secret), is gone (a stale socket) or curl is missing', async () => {
    const file = client();
    await startService();
    const input = claudeInput('rm victim.txt');
    const expected = await run(`'${file}' hook --agent claude`, input);
    assert.match(expected.stdout, /no deleting/);
    // No curl on PATH: only sh's own tools and node's folder.
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin);
    for (const tool of ['mktemp', 'cat', 'rm', 'base64']) {
      const found = ['/usr/bin', '/bin'].map((d) => path.join(d, tool)).find((p) => fs.existsSync(p));
      if (found) fs.symlinkSync(found, path.join(bin, tool));
    }
    const noCurl = await run(`'${file}' hook --agent claude`, input, { PATH: bin });
    assert.deepEqual(noCurl, expected, 'without curl');
    // The secret changed under the client: 401, then the in-process hook.
    const secretFile = path.join(state, 'service-secret');
    const secret = fs.readFileSync(secretFile, 'utf8');
    fs.writeFileSync(secretFile, `${'0'.repeat(64)}\n`);
    assert.deepEqual(await run(`'${file}' hook --agent claude`, input), expected, 'with a wrong secret');
    fs.writeFileSync(secretFile, secret);
    await service!.close();
    service = undefined;
    // A socket nobody answers on.
    const net = await import('node:net');
    const dead = net.createServer();
    await new Promise<void>((resolve) => dead.listen(path.join(state, 'service.sock'), resolve));
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    assert.deepEqual(await run(`'${file}' hook --agent claude`, input), expected, 'with the service gone');
    assert.deepEqual(fs.readdirSync(tmp), []);
  });

  it('blocks (exit 2, saying how to start the service or reinstall) when neither the service nor the in-process hook can answer', async () => {
    const input = claudeInput('touch made.txt');
    const goneNode = client({ node: path.join(root, 'gone', 'node'), cli: CLI });
    const goneCli = client({ node: process.execPath, cli: path.join(root, 'gone', 'cli.js') });
    const crashing = client({ command: `${process.execPath} -e "process.exit(1)"` });
    const killed = client({ command: `${process.execPath} -e "process.kill(process.pid, 'SIGKILL')"` });
    for (const file of [goneNode, goneCli, crashing, killed]) {
      const r = await run(`'${file}' hook --agent claude --timeout 30`, input);
      assert.equal(r.exitCode, 2, `${file}: ${JSON.stringify(r)}`);
      assert.equal(r.stdout, '', 'no answer printed');
      assert.match(r.stderr, /could not judge this call, so it is blocked/);
      assert.match(r.stderr, /agentpolicy serve/);
      assert.match(r.stderr, /agentpolicy hook install/);
    }
    assert.deepEqual(fs.readdirSync(tmp), [], 'no temporary file left');
  });

  it('passes anything but a hook call to the CLI (hook install checks the client with --version)', async () => {
    const r = await run(`'${client()}' --version`, '');
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/);
  });
});
