// `agentpolicy sandbox -- COMMAND [ARGS…]` (src/cli/sandboxCommand.ts), against the real
// bubblewrap: the CLI runs as its own process (test/cli/children/sandboxCli.ts), because the
// command gets the CLI's own stdin, stdout and stderr. Exit statuses pass through (125: nothing
// ran); the protected files stay read-only, the home folder's credential stores unreadable and the
// credential variables withheld; each connection is judged by the policy's `domains` rules, a host
// none decides asked in the editor window (a real EditorServer, answered through its SessionHost)
// or refused without one; and killing the CLI outright leaves no process behind.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { commandLineOf } from '../../src/cli/sandboxCommand.js';
import { EditorServer } from '../../src/hooks/editor/editorServer.js';
import { AllowApproval, DenyApproval, type OpenApproval } from '../../src/runtime/tree/answers.js';
import { FileAuditLog } from '../../src/runtime/audit/audit.js';
import { networkBridgeSentence, probeSandbox, sandboxTesting } from '../../src/runtime/sandbox/sandboxProbe.js';
import { SessionHost } from '../../src/runtime/host/sessionHost.js';
import { requireTestHost, startTestHost, type TestHost } from '../netHost.js';
import { runCli } from './cliRun.js';
import { liveProcesses, until } from '../liveProcesses.js';

const probe = probeSandbox();
const CHILD = path.join(__dirname, 'children', 'sandboxCli.ts');
// The child runs in the test's workspace, where `--import tsx` would not resolve: the loader by its path.
const TSX = pathToFileURL(require.resolve('tsx')).href;

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function startCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(process.execPath, ['--import', TSX, CHILD, 'sandbox', ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const done = new Promise<Ran>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

const POLICY = (rules: unknown[] = []): string => `${JSON.stringify({ version: 1, rules }, null, 2)}\n`;

describe('agentpolicy sandbox: the command line words, quoted', () => {
  it('quotes every word, a single one too, so that the shell runs exactly those words', () => {
    assert.equal(commandLineOf(['ls', '-la', 'a b']), `'ls' '-la' 'a b'`);
    assert.equal(commandLineOf(['echo', "it's", '$HOME', '`x`']), `'echo' 'it'\\''s' '$HOME' '\`x\`'`);
    assert.equal(commandLineOf(['npm test']), `'npm test'`);
  });

  it('is a usage error without a command, or with both --shell and words', async () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-cli-usage-'));
    try {
      assert.equal((await runCli(['sandbox'], ws)).code, 2);
      assert.equal((await runCli(['sandbox', '--shell', 'true', '--', 'true'], ws)).code, 2);
      assert.equal((await runCli(['sandbox', '--pass-env', 'A=B', '--', 'true'], ws)).code, 2);
      const r = await runCli(['sandbox', 'ls'], ws);
      assert.equal(r.code, 2);
      assert.match(r.err[0]!, /the command goes after --/);
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });
});

describe('agentpolicy sandbox where there is no sandbox', () => {
  afterEach(() => {
    delete sandboxTesting.availability;
  });

  it('says which piece is missing and how to install it, exits 125 and runs nothing', async () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-cli-none-'));
    try {
      const reason = 'bubblewrap (bwrap) is not installed; install it (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';
      sandboxTesting.availability = { available: false, reason };
      const r = await runCli(['sandbox', '--', 'touch', 'ran'], ws);
      assert.equal(r.code, 125);
      assert.equal(r.err.length, 1);
      assert.match(r.err[0]!, /^agentpolicy sandbox: nothing was run: .*apt-get install bubblewrap/);
      assert.equal(fs.existsSync(path.join(ws, 'ran')), false);
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });
});

describe('the sandbox sentence where bubblewrap runs but the network bridge cannot', () => {
  it('says that sandboxed commands have no network, and what to install; nothing when all is there', () => {
    assert.equal(networkBridgeSentence(undefined), '');
    assert.match(networkBridgeSentence('socat is not installed, so sandboxed commands have no network (Debian, Ubuntu: apt-get install socat; Fedora: dnf install socat)'), /^ But socat is not installed, so sandboxed commands have no network \(.*apt-get install socat.*\)\.$/);
    assert.match(networkBridgeSentence(`the sandbox engine's seccomp helper is missing for x64, so sandboxed commands have no network`), /no network \(it ships with Agent Policy.*reinstall/);
  });
});

describe('agentpolicy sandbox (real bubblewrap)', function () {
  this.timeout(60_000);
  let ws: string;
  let home: string;
  let runtimeDir: string;
  /** No editor is found unless a test starts one in runtimeDir/agentpolicy. */
  const env = (): NodeJS.ProcessEnv => ({ HOME: home, XDG_RUNTIME_DIR: runtimeDir });

  before(function () {
    if (!probe.available) {
      console.log(`    (agentpolicy sandbox tests skipped: ${probe.reason})`);
      this.skip();
    }
  });

  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-cli-')));
    home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-cli-home-')));
    runtimeDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-cli-run-')));
    fs.writeFileSync(path.join(ws, '.agentpolicy.jsonc'), POLICY());
  });

  afterEach(() => {
    for (const dir of [ws, home, runtimeDir]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('passes the command\'s exit status through, and runs exactly the words given', async () => {
    const r = await startCli(['--', 'sh', '-c', 'exit 7'], ws, env()).done;
    assert.equal(r.code, 7, r.stderr);
    const words = await startCli(['--', 'printf', '%s|', 'a b', "it's", '$HOME'], ws, env()).done;
    assert.equal(words.code, 0, words.stderr);
    assert.equal(words.stdout, `a b|it's|$HOME|`);
  });

  it('keeps the policy file read-only: the write fails and the file is unchanged', async () => {
    const before = fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8');
    const r = await startCli(['--', 'sh', '-c', 'echo "{}" > .agentpolicy.jsonc'], ws, env()).done;
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Read-only file system/);
    assert.equal(fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8'), before);
  });

  it('undoes a protected file the command created, and says so on stderr', async () => {
    const r = await startCli(['--', 'sh', '-c', 'echo x > .agents.jsonc'], ws, env()).done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.existsSync(path.join(ws, '.agents.jsonc')), false);
    assert.match(r.stderr, /agentpolicy sandbox: the command created the protected file \.agents\.jsonc: removed it/);
  });

  it('hides the home folder\'s keys (HOME names the home folder)', async () => {
    fs.mkdirSync(path.join(home, '.ssh'));
    fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY');
    const r = await startCli(['--', 'sh', '-c', 'cat "$HOME/.ssh/id_rsa"'], ws, env()).done;
    assert.notEqual(r.code, 0);
    assert.equal(r.stdout, '');
    assert.ok(!r.stderr.includes('PRIVATE KEY'));
  });

  it('withholds credential variables unless --pass-env names them', async () => {
    const show = ['--', 'sh', '-c', 'echo "[${GITHUB_TOKEN-unset}] [${PLAIN-unset}]"'];
    const r = await startCli(show, ws, { ...env(), GITHUB_TOKEN: 'ghp_secret', PLAIN: 'kept' }).done;
    assert.equal(r.stdout, '[unset] [kept]\n', r.stderr);
    const passed = await startCli(['--pass-env', 'GITHUB_TOKEN', ...show], ws, { ...env(), GITHUB_TOKEN: 'ghp_secret', PLAIN: 'kept' }).done;
    assert.equal(passed.stdout, '[ghp_secret] [kept]\n', passed.stderr);
  });

  it('runs a --shell line as a shell line', async () => {
    const r = await startCli(['--shell', 'echo a && exit 3'], ws, env()).done;
    assert.equal(r.code, 3);
    assert.equal(r.stdout, 'a\n');
  });

  it('ends the command on SIGTERM and exits 128+15', async () => {
    const marker = `${process.pid}2${Date.now() % 100000}`;
    const { child, done } = startCli(['--shell', `sleep 300.${marker}`], ws, env());
    // The CLI's own command line names the marker too: only the sleep itself says the command runs.
    assert.ok(await until(() => liveProcesses(`sleep 300.${marker}`).some((p) => p.cmd.startsWith('sleep ')), 20_000), 'the command did not start');
    child.kill('SIGTERM');
    const r = await done;
    assert.equal(r.code, 143, r.stderr);
    assert.ok(await until(() => liveProcesses(marker).length === 0, 5000), 'the command was left running');
  });

  it('leaves no process behind when the CLI is killed outright (SIGKILL), the network bridge included', async () => {
    const marker = `${process.pid}3${Date.now() % 100000}`;
    const { child } = startCli(['--shell', `sleep 300.${marker} & nohup sleep 301.${marker} >/dev/null 2>&1 & echo up > up.txt; sleep 302.${marker}`], ws, env());
    try {
      assert.ok(await until(() => fs.existsSync(path.join(ws, 'up.txt')) && liveProcesses(marker).filter((p) => p.cmd.startsWith('sleep ')).length >= 3, 20_000), 'the sandboxed processes did not start');
      const bwrapPids = liveProcesses('bwrap').filter((p) => p.cmd.includes(ws)).map((p) => p.pid);
      assert.ok(bwrapPids.length > 0);
      child.kill('SIGKILL');
      const gone = await until(() => liveProcesses(marker).length === 0 && bwrapPids.every((pid) => !liveProcesses('bwrap').some((p) => p.pid === pid)) && liveProcesses('.agentpolicy-proxy/').length === 0, 10_000);
      assert.ok(gone, `left behind: ${JSON.stringify([...liveProcesses(marker), ...liveProcesses('.agentpolicy-proxy/'), ...liveProcesses('bwrap').filter((p) => bwrapPids.includes(p.pid))])}`);
    } finally {
      child.kill('SIGKILL');
      for (const p of liveProcesses(marker)) process.kill(p.pid, 'SIGKILL');
    }
  });

  describe('its connections, each judged by the policy (a real host in a network namespace)', () => {
    let host: TestHost;

    before(async function () {
      requireTestHost(this);
      host = await startTestHost();
    });

    after(async () => {
      await host?.stop();
    });

    beforeEach(() => {
      fs.writeFileSync(path.join(ws, '.agentpolicy.jsonc'), POLICY([{ id: 'test-host', decision: 'allow', tools: ['builtin.run_command'], domains: [host.names.allowed] }]));
    });

    it('reaches a host a domains allow rule names, and refuses one no rule decides (no editor), naming the host and the rule to add', async () => {
      const ok = await startCli(['--', 'curl', '-sSf', `http://${host.names.allowed}/hello`], ws, env()).done;
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(JSON.parse(ok.stdout).path, '/hello');
      const refused = await startCli(['--', 'curl', '-sSf', `http://${host.names.other}/`], ws, env()).done;
      assert.notEqual(refused.code, 0);
      assert.equal(refused.stdout, '');
      const lines = refused.stderr.split('\n').filter((l) => l.startsWith('agentpolicy sandbox:'));
      assert.equal(lines.length, 1, refused.stderr);
      assert.ok(lines[0]!.includes(`refused the connection to ${host.names.other}:80`), lines[0]);
      assert.ok(lines[0]!.includes('no editor window runs'), lines[0]);
      assert.ok(lines[0]!.includes(`"domains": ["${host.names.other}"]`), lines[0]);
    });

    it('refuses a host a deny rule names, saying which rule', async () => {
      fs.writeFileSync(path.join(ws, '.agentpolicy.jsonc'), POLICY([{ id: 'no-other', decision: 'deny', domains: [host.names.other] }]));
      const r = await startCli(['--', 'curl', '-sSf', `http://${host.names.other}/`], ws, env()).done;
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /refused the connection to .*: denied by the rule "no-other"/);
    });

    describe('a host no rule decides, asked in the editor window running for the workspace', () => {
      let sessions: SessionHost;
      let audit: FileAuditLog;
      let server: EditorServer;

      beforeEach(async () => {
        const auditFile = path.join(runtimeDir, 'audit.jsonl');
        audit = new FileAuditLog(auditFile);
        sessions = new SessionHost({ audit: { sink: audit, file: auditFile } });
        server = await EditorServer.start({ workspaceFolder: ws, host: sessions, directory: path.join(runtimeDir, 'agentpolicy'), facts: () => ({ auditFile, trusted: true }) });
      });

      afterEach(async () => {
        await server.dispose();
        await sessions.dispose();
        audit.close();
      });

      const approvals = (): OpenApproval[] => sessions.openCallbacks().map((o) => o.callback).filter((c): c is OpenApproval => c.type === 'approval');

      it('lets the host through on Allow, and refuses it on Deny', async () => {
        const allowed = startCli(['--', 'curl', '-sSf', `http://${host.names.other}/asked`], ws, env());
        const [c] = (await until(() => approvals().length === 1 && approvals(), 20_000)) ?? [];
        assert.ok(c, 'the editor was asked');
        assert.deepEqual(c.request.input, { command: commandLineOf(['curl', '-sSf', `http://${host.names.other}/asked`]), url: `http://${host.names.other}/` });
        assert.match(c.request.decision?.reason ?? '', new RegExp(`wants to reach ${host.names.other.replaceAll('.', '\\.')}:80`));
        await sessions.answer(c.id, new AllowApproval());
        const ok = await allowed.done;
        assert.equal(ok.code, 0, ok.stderr);
        assert.equal(JSON.parse(ok.stdout).path, '/asked');

        const denied = startCli(['--', 'curl', '-sSf', `http://${host.names.other}/`], ws, env());
        const [d] = (await until(() => approvals().length === 1 && approvals(), 20_000)) ?? [];
        assert.ok(d, 'the editor was asked again (a new run)');
        await sessions.answer(d.id, new DenyApproval());
        const no = await denied.done;
        assert.notEqual(no.code, 0);
        assert.equal(no.stdout, '');
        assert.match(no.stderr, /refused the connection to .*: a person denied it in the editor/);
      });

      it('withdraws its question when the command ends first', async () => {
        const run = startCli(['--shell', `curl -sS --max-time 3 http://${host.names.other}/; exit 0`], ws, env());
        assert.ok(await until(() => approvals().length === 1, 20_000), 'the editor was asked');
        // curl gives up; the CLI ends without waiting for an answer, and the window's question closes.
        const r = await run.done;
        assert.equal(r.code, 0, r.stderr);
        assert.ok(await until(() => approvals().length === 0, 5000), 'the question stayed open');
      });
    });
  });
});
