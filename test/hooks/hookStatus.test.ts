// `agentpolicy hook status`: per host, in a temporary workspace and state folder: nothing
// installed; a client-based install made by the real `hook install`; a legacy bare command not on
// PATH (a warning, exit 1); a client script deleted (a warning); the decision service's discovery
// file naming a dead process (not running) and a live in-process service (reachable, asked only
// without the secret: nothing decided or audited); the last call read from the audit log.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookInstallCommand } from '../../src/cli/hookInstallCommand.js';
import { hookStatusCommand } from '../../src/cli/hookStatusCommand.js';
import { startDecisionService } from '../../src/hooks/service/decisionService.js';
import { applyHookInstall, planHookInstall } from '../../src/hooks/install/hookInstall.js';
import { shellWords } from '../../src/hooks/install/hookLauncher.js';
import { HOST_FAILURE, type HostHookStatus } from '../../src/hooks/setup/hookStatus.js';
import { HOST_AGENTS } from '../../src/hooks/hosts/hostAgents.js';

describe('agentpolicy hook status', () => {
  let root: string;
  let ws: string;
  let stateHome: string;
  let cli: string;
  let env: NodeJS.ProcessEnv;
  const state = (): string => path.join(stateHome, 'agentpolicy');

  /** `out`: the hosts' lines; `managed`: the first line, the managed policy the hooks judge with. */
  const status = async (...argv: string[]): Promise<{ code: number; out: string[]; managed: string | undefined; err: string[]; json: HostHookStatus[] | undefined }> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await hookStatusCommand(argv, { out: (l) => out.push(l), err: (l) => err.push(l), cwd: ws, env }, { findEditor: () => undefined, sandboxAvailable: () => ({ available: sandboxHere }) });
    const json = argv.includes('--json') && out.length === 1 ? (JSON.parse(out[0]!) as HostHookStatus[]) : undefined;
    return { code, out: json === undefined ? out.slice(1) : out, managed: json === undefined ? out[0] : undefined, err, json };
  };
  let sandboxHere = true;
  /** `hook install` as a person runs it; `--via command` for Claude Code's client instead of its http hook. */
  const install = async (...agents: string[]): Promise<void> => {
    const out: string[] = [];
    const err: string[] = [];
    const via = agents[0] === '--via-command' ? (agents.shift(), ['--via', 'command']) : [];
    const code = await hookInstallCommand(['--agent', agents.join(','), ...via], { out: (l) => out.push(l), err: (l) => err.push(l), cwd: ws, env, node: process.execPath, cliScript: cli });
    assert.equal(code, 0, err.join('\n'));
  };
  const byHost = (list: HostHookStatus[] | undefined, host: string): HostHookStatus => list!.find((s) => s.host === host)!;

  beforeEach(() => {
    sandboxHere = true;
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-status-')));
    ws = path.join(root, 'ws');
    fs.mkdirSync(ws);
    stateHome = path.join(root, 'state');
    fs.mkdirSync(stateHome);
    cli = path.join(root, 'dist', 'cli.js');
    fs.mkdirSync(path.dirname(cli));
    fs.writeFileSync(cli, "console.log('0.1.0');\n");
    // No agentpolicy on this PATH: only node's folder and the system's.
    env = { HOME: root, XDG_STATE_HOME: stateHome, PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter) };
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('with no hooks: every host not installed, the service not running, no warning, exit 0', async () => {
    const r = await status('--json');
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.deepEqual(r.json!.map((s) => s.host), [...HOST_AGENTS]);
    for (const s of r.json!) {
      assert.equal(s.installed, false);
      assert.equal(s.runs, null);
      assert.equal(s.canStart, null);
      assert.equal(s.service.state, 'not-running');
      assert.equal(s.lastCall, null);
      assert.equal(s.sandboxed, false);
      assert.equal(s.warning, undefined);
      assert.equal(s.workspace, ws);
    }
    const human = await status();
    assert.equal(human.code, 0);
    assert.match(human.managed!, /^managed policy: none \(no .*managed\.agentpolicy\.jsonc\)$/);
    assert.equal(human.out.length, HOST_AGENTS.length);
    assert.match(human.out[0]!, /^Claude Code \(claude\): not installed; service not running; no call in the audit log; on failure: .*commands not sandboxed$/);
  });

  it('after the real `hook install --via command` (client-based): installed, runs the client by absolute path, can start, decides when the service is down', async () => {
    await install('--via-command', 'all');
    const r = await status('--json');
    assert.equal(r.code, 0, r.out.join('\n'));
    for (const s of r.json!) {
      assert.equal(s.installed, true, s.host);
      assert.equal(s.runs!.kind, 'client');
      assert.ok(path.isAbsolute(s.runs!.client!) && s.runs!.client!.startsWith(state()), s.runs!.client);
      assert.equal(s.runs!.fallback, `${process.execPath} ${cli}`);
      assert.equal(s.canStart, true);
      assert.equal(s.usesService, true);
      assert.equal(s.problem, undefined);
      assert.equal(s.onFailure.serviceDown, 'decides');
      assert.equal(s.onFailure.timeout, HOST_FAILURE[s.host].timeout);
      assert.equal(s.warning, undefined);
    }
    assert.equal(byHost(r.json, 'claude').onFailure.timeout, 'blocks');
    assert.equal(byHost(r.json, 'codex').onFailure.timeout, 'lets-through');
    assert.equal(byHost(r.json, 'cursor').onFailure.cannotStart, 'blocks');
    assert.equal(byHost(r.json, 'vscode').onFailure.cannotStart, 'lets-through');
    const human = await status();
    assert.match(human.out[0]!, /^Claude Code \(claude\): installed \(\.claude\/settings\.json\), runs the hook client \/.*hook-client-[0-9a-f]+\.sh \(else .*\); can start; service not running;/);
    // The hosts that take a changed input have their allowed commands put into our sandbox (Codex's when it does not sandbox them itself); none where the machine has none.
    assert.deepEqual(r.json!.filter((s) => s.sandboxed).map((s) => s.host), ['claude', 'codex', 'gemini', 'copilot']);
    assert.match(byHost(r.json, 'codex').sandboxedWhen!, /outside its own sandbox/);
    assert.match(human.out[0]!, /allowed commands run in our sandbox$/);
    sandboxHere = false;
    assert.deepEqual((await status('--json')).json!.filter((s) => s.sandboxed), []);
  });

  it('Claude Code\'s http hook (the default): installed in .claude/settings.local.json, blocks while the service is down, which its SessionStart hook starts; a service on another port cannot answer it', async function () {
    this.timeout(30_000);
    await install('claude');
    const down = byHost((await status('--json')).json, 'claude');
    assert.deepEqual([down.installed, down.file, down.runs!.kind, down.canStart, down.usesService, down.sandboxed], [true, '.claude/settings.local.json', 'http', true, true, true]);
    assert.match(down.runs!.launcher, /^http:\/\/127\.0\.0\.1:\d+\/http\/claude\?/);
    assert.ok(down.runs!.client!.startsWith(state()), 'the SessionStart hook runs the client');
    assert.equal(down.runs!.fallback, `${process.execPath} ${cli}`);
    assert.deepEqual(down.onFailure, { serviceDown: 'blocks', cannotStart: 'blocks', timeout: 'blocks' });
    assert.equal(down.warning, undefined);
    const port = Number(new URL(down.runs!.launcher).port);

    // The service on the port the hook names: answered.
    const service = await startDecisionService({ stateDir: state(), workspace: ws, env: { HOME: root, PATH: env.PATH }, findEditor: () => undefined });
    try {
      assert.equal(service.port, port, 'the service keeps the port the hook names');
      const up = byHost((await status('--json')).json, 'claude');
      assert.deepEqual([up.service.state, up.canStart, up.problem], ['reachable', true, undefined]);
      assert.match((await status()).out[0]!, /runs the http hook http:\/\/127\.0\.0\.1:\d+\/http\/claude \(its SessionStart hook starts the service with .*\); is answered;/);
    } finally {
      await service.close();
    }
    const elsewhere = await startDecisionService({ stateDir: state(), port: 0, workspace: ws, env: { HOME: root, PATH: env.PATH }, findEditor: () => undefined });
    try {
      const r = await status('--json');
      assert.equal(r.code, 1);
      const s = byHost(r.json, 'claude');
      assert.equal(s.canStart, false);
      assert.match(s.problem!, /listens on .*, not on the port the hook names/);
      assert.match(s.warning!, /cannot be answered.*every call is blocked/);
    } finally {
      await elsewhere.close();
    }

    // Nothing to start it again (the client gone) and the service down: a warning.
    fs.rmSync(down.runs!.client!);
    const r = await status('--json');
    assert.equal(r.code, 1);
    const gone = byHost(r.json, 'claude');
    assert.equal(gone.canStart, false);
    assert.match(gone.problem!, /not running, and nothing starts it/);
    assert.equal(gone.fix, `agentpolicy hook install --agent claude --workspace ${ws}`);
  });

  it('a legacy entry whose bare command is not on PATH: a warning with the command that fixes it, exit 1', async () => {
    applyHookInstall(planHookInstall({ workspaceFolder: ws, agents: ['codex'], remove: false }));
    const r = await status('--json');
    assert.equal(r.code, 1);
    const codex = byHost(r.json, 'codex');
    assert.deepEqual([codex.installed, codex.runs!.kind, codex.runs!.launcher, codex.canStart, codex.usesService], [true, 'path', 'agentpolicy', false, false]);
    assert.match(codex.problem!, /"agentpolicy" is not on this PATH/);
    assert.match(codex.warning!, /cannot start.*fails open/);
    assert.equal(codex.fix, `agentpolicy hook install --agent codex --workspace ${ws}`);
    assert.equal(byHost(r.json, 'claude').warning, undefined);
    const human = await status();
    assert.equal(human.code, 1);
    assert.ok(human.out.includes(`warning: ${codex.warning}. Fix: agentpolicy hook install --agent codex --workspace ${ws}`), human.out.join('\n'));
    assert.match(human.out.find((l) => l.startsWith('Codex'))!, /runs agentpolicy from PATH; CANNOT START: "agentpolicy" is not on this PATH/);

    // Found on PATH: it can start, no warning.
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'agentpolicy'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    env.PATH = `${bin}${path.delimiter}${env.PATH}`;
    const found = await status('--json');
    assert.equal(found.code, 0);
    assert.equal(byHost(found.json, 'codex').canStart, true);
  });

  it('a --command entry: its program and script are checked', async () => {
    // Recognised as ours by the name in its path (the package's folder), as installedHookHosts does.
    const script = path.join(root, 'agent-policy', 'dist', 'cli.js');
    fs.mkdirSync(path.dirname(script), { recursive: true });
    fs.writeFileSync(script, "console.log('0.1.0');\n");
    applyHookInstall(planHookInstall({ workspaceFolder: ws, agents: ['cursor'], remove: false, command: script }));
    const ok = await status('--json');
    assert.equal(ok.code, 0);
    assert.deepEqual([byHost(ok.json, 'cursor').runs!.kind, byHost(ok.json, 'cursor').runs!.launcher, byHost(ok.json, 'cursor').canStart], ['command', `node ${script}`, true]);
    fs.rmSync(script);
    const gone = await status('--json');
    assert.equal(gone.code, 1);
    assert.match(byHost(gone.json, 'cursor').problem!, /the script \(.*cli\.js\) does not exist/);
    assert.match(byHost(gone.json, 'cursor').warning!, /every call is blocked/);
  });

  it('a client script deleted: a warning, exit 1', async () => {
    await install('--via-command', 'claude', 'gemini');
    const client = (await status('--json')).json!.find((s) => s.host === 'claude')!.runs!.client!;
    fs.rmSync(client);
    const r = await status('--json');
    assert.equal(r.code, 1);
    for (const host of ['claude', 'gemini']) {
      const s = byHost(r.json, host);
      assert.equal(s.canStart, false);
      assert.match(s.problem!, /the hook client \(.*\) does not exist/);
      assert.equal(s.fix, `agentpolicy hook install --agent ${host} --workspace ${ws}`);
    }
    assert.equal(byHost(r.json, 'codex').warning, undefined);
  });

  it('a client whose fallback (cli.js) is gone: can start, but blocks with the service down: a warning', async () => {
    await install('--via-command', 'claude');
    fs.rmSync(cli);
    const r = await status('--json');
    assert.equal(r.code, 1);
    const s = byHost(r.json, 'claude');
    assert.equal(s.canStart, true);
    assert.equal(s.onFailure.serviceDown, 'blocks');
    assert.match(s.warning!, /cannot decide without the service/);
  });

  it('a discovery file whose process is gone: the service is not running', async () => {
    fs.mkdirSync(state(), { recursive: true, mode: 0o700 });
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    fs.writeFileSync(path.join(state(), 'service.json'), JSON.stringify({ version: 1, pid: dead, url: 'http://127.0.0.1:9', socket: path.join(state(), 'service.sock'), started: new Date().toISOString() }), { mode: 0o600 });
    const r = await status('--json');
    assert.equal(r.code, 0);
    const svc = byHost(r.json, 'claude').service;
    assert.equal(svc.state, 'not-running');
    assert.equal(svc.pid, dead);
    assert.match(svc.detail!, /is gone/);
  });

  it('a live in-process service: reachable, asked without the secret only (nothing decided or audited)', async function () {
    this.timeout(30_000);
    const service = await startDecisionService({ stateDir: state(), workspace: ws, env: { HOME: root, PATH: env.PATH }, findEditor: () => undefined });
    try {
      const r = await status('--json');
      assert.equal(r.code, 0);
      for (const s of r.json!) {
        assert.equal(s.service.state, 'reachable');
        assert.equal(s.service.pid, process.pid);
        assert.equal(s.service.url, service.url);
      }
      assert.match((await status()).out[0]!, new RegExp(`service reachable \\(pid ${process.pid}\\)`));
      assert.equal(fs.existsSync(path.join(state(), 'audit.jsonl')), false);
    } finally {
      await service.close();
    }
    assert.equal(byHost((await status('--json')).json, 'claude').service.state, 'not-running');
  });

  it('the last call of each host from the audit log (sessions <host>:<id>), the latest by time', async () => {
    fs.mkdirSync(state(), { recursive: true, mode: 0o700 });
    const line = (session: string, time: string, tool: string, decision: string, hookMs?: number): string => JSON.stringify({ time, event: 'decision', session, agent: 'x', tool, decision, hookMs });
    fs.writeFileSync(path.join(state(), 'audit.jsonl'), [
      line('claude:s1', '2026-01-02T10:00:00.000Z', 'builtin.run_command', 'allow'),
      line('claude:s2', '2026-01-02T11:00:00.000Z', 'builtin.read_file', 'deny', 3.2),
      line('gemini:g', '2026-01-01T09:00:00.000Z', 'builtin.write_file', 'ask'),
      line('local-session', '2026-01-03T09:00:00.000Z', 'builtin.write_file', 'allow'),
    ].join('\n') + '\n');
    const r = await status('--json');
    assert.deepEqual(byHost(r.json, 'claude').lastCall, { time: '2026-01-02T11:00:00.000Z', session: 'claude:s2', tool: 'builtin.read_file', decision: 'deny', auditFile: path.join(state(), 'audit.jsonl'), hookMs: 3.2 });
    assert.equal(byHost(r.json, 'gemini').lastCall!.session, 'gemini:g');
    assert.equal(byHost(r.json, 'codex').lastCall, null);
    assert.match((await status()).out[0]!, /last call 2026-01-02T11:00:00.000Z deny builtin.read_file \(decided in 3.2 ms\);/);
  });

  it('usage: exit 2 on an unknown flag or a missing folder', async () => {
    assert.equal((await status('--bogus')).code, 2);
    assert.equal((await status('--workspace', path.join(root, 'nope'))).code, 2);
  });

  it('reads the words of a POSIX command line', () => {
    assert.deepEqual(shellWords(`'/a b/hook-client-1.sh'`), ['/a b/hook-client-1.sh']);
    assert.deepEqual(shellWords(`node '/x/it'\\''s/cli.js' "a\\"b"`), ['node', "/x/it's/cli.js", 'a"b']);
  });
});
