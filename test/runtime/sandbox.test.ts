// builtin.run_command in the sandbox, against the real bubblewrap: the protected files stay as
// they were however a command spells them (a property over generated spellings), ordinary
// workspace files are writable, /tmp is private, everything outside the workspace is read-only,
// no network (nor Unix sockets) without the rule, the whole process tree ends with the command,
// protected paths a command created are removed and reported, and a failure on a sandbox limit
// says so. Skipped, saying why, only where the probe finds no sandbox.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { runCommandProcess } from '../../src/runtime/sandbox/commandProcess.js';
import { DEFAULT_PROTECTED_FILES } from '../../src/runtime/calls/protected.js';
import { runCommandTool, type RunCommandResult } from '../../src/runtime/tools/runCommandTool.js';
import { sandboxPlan } from '../../src/runtime/sandbox/sandboxMounts.js';
import { probeSandbox, sandboxAvailability, sandboxTesting } from '../../src/runtime/sandbox/sandboxProbe.js';
import type { ToolRunContext } from '../../src/runtime/tools/tools.js';
import type { ToolSandbox } from '../../src/runtime/sandbox/toolSandbox.js';
import { snapshot } from './fsSnapshot.js';
import { startReplyServer, type ReplyServer } from './replyServer.js';

const probe = probeSandbox();

/** Skips the suite, saying why, where this machine has no sandbox. */
function needSandbox(this: Mocha.Context): void {
  if (!probe.available) {
    console.log(`    (sandbox tests skipped: ${probe.reason})`);
    this.skip();
  }
}

let ws: string;
const tool = runCommandTool();

function protectedFiles(): string[] {
  return DEFAULT_PROTECTED_FILES.map((f) => path.resolve(ws, f));
}

function makeWorkspace(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-')));
  const write = (rel: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  };
  write('.agentpolicy.jsonc', '{ "version": 1, "rules": [] }\n');
  write('.agents.jsonc', '{ "agents": [] }\n');
  write('.vscode/settings.json', '{ "a": 1 }\n');
  write('.vscode/mcp.json', '{ "servers": {} }\n');
  write('.git/config', '[core]\n');
  write('.git/HEAD', 'ref: refs/heads/main\n');
  write('.git/hooks/pre-commit', '#!/bin/sh\nexit 0\n');
  write('src/a.txt', 'a\n');
  return dir;
}

/** The protected part of the workspace: every default protected path and the folders holding one. */
function protectedState(): Record<string, string> {
  const all = snapshot(ws);
  const keep = (rel: string): boolean =>
    ['.agentpolicy.jsonc', '.agents.jsonc', '.vscode', '.git/config', '.git/hooks', '.claude', '.gemini', '.codex', '.github', '.cursor'].some(
      (p) => rel === p || rel.startsWith(`${p}/`),
    ) || rel === '.git';
  return Object.fromEntries(Object.entries(all).filter(([rel]) => keep(rel)));
}

interface Ran {
  result: RunCommandResult;
  undone: string[];
}

async function run(command: string, options: { network?: boolean; protectedWritable?: boolean; cwd?: string; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Ran> {
  const undone: string[] = [];
  const sandbox: ToolSandbox = {
    network: options.network ?? false,
    protectedWritable: options.protectedWritable ?? false,
    protectedFiles: protectedFiles(),
    onUndone: (u, l) => undone.push(...u, ...l),
  };
  const context: ToolRunContext = { sessionId: 's', turnId: 't', agent: 'main', workspaceFolder: ws, signal: options.signal ?? new AbortController().signal, sandbox };
  const input = { command, ...(options.cwd ? { cwd: options.cwd } : {}), ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) };
  const checked = tool.check(input);
  if (!checked.ok) throw new Error(checked.error);
  return { result: (await tool.run(checked.value, context)) as RunCommandResult, undone };
}

/** Processes whose command line contains `marker`, other than this one. */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : undefined;

describe('the sandbox probe', () => {
  it('says plainly why there is no sandbox: another platform, no bwrap, a bwrap that cannot make namespaces', () => {
    const other = probeSandbox({ platform: 'freebsd' });
    assert.equal(other.available, false);
    assert.match(!other.available ? other.reason : '', /freebsd.*Linux only/);
    const none = probeSandbox({ bwrap: null });
    assert.match(!none.available ? none.reason : '', /bubblewrap \(bwrap\) is not installed.*apt-get install bubblewrap/);
    const broken = probeSandbox({ bwrap: '/bin/false' });
    assert.equal(broken.available, false);
    assert.match(!broken.available ? broken.reason : '', /cannot create its namespaces/);
  });

  it('is asked once per process, and a test can stand in for it', function () {
    needSandbox.call(this);
    assert.equal(sandboxAvailability(), sandboxAvailability());
    sandboxTesting.availability = { available: false, reason: 'testing' };
    try {
      assert.deepEqual(sandboxAvailability(), { available: false, reason: 'testing' });
    } finally {
      delete sandboxTesting.availability;
    }
    assert.equal(sandboxAvailability().available, true);
  });
});

describe('builtin.run_command in the sandbox (real bubblewrap)', function () {
  before(function () {
    needSandbox.call(this);
  });
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => {
    fs.rmSync(ws, { recursive: true, force: true });
  });

  it('binds the protected files and their folders read-only, and pins .git writable', () => {
    const plan = sandboxPlan({ workspaceFolder: ws, cwd: ws, network: false, protectedFiles: protectedFiles(), protectedWritable: false, userNamespace: true });
    const rel = plan.binds.map((b) => `${b.kind} ${path.relative(ws, b.path)}`);
    assert.deepEqual(rel, ['ro .agentpolicy.jsonc', 'ro .agents.jsonc', 'pin .git', 'ro .vscode', 'ro .git/config', 'ro .git/hooks']);
    assert.ok(plan.args.includes('--unshare-net') && plan.args.includes('--cap-drop') && plan.args.includes('--new-session'));
    const missing = plan.watch.missing.map((m) => path.relative(ws, m.file));
    assert.deepEqual(missing.sort(), [
      '.claude/settings.json', '.claude/settings.local.json', '.codex', '.cursor/hooks.json', '.gemini/settings.json', '.github/hooks',
      // The persistence files (persistenceFiles.ts) that this workspace lacks.
      '.gitmodules', '.idea', '.devcontainer', '.envrc', '.husky', '.github/workflows', '.claude', '.gemini', '.cursor', '.mcp.json',
    ].sort());
    const writable = sandboxPlan({ workspaceFolder: ws, cwd: ws, network: true, protectedFiles: protectedFiles(), protectedWritable: true, userNamespace: true });
    assert.deepEqual(writable.binds, []);
    assert.ok(!writable.args.includes('--unshare-net'));
  });

  it('lets a command write ordinary workspace files, from a cwd inside it, with the environment it always gets', async () => {
    process.env.AGENT_POLICY_SANDBOX_TEST = 'seen';
    try {
      const { result } = await run('echo "$AGENT_POLICY_SANDBOX_TEST" > b.txt && mkdir -p ../build && echo built > ../build/out && pwd', { cwd: 'src' });
      assert.equal(result.exitCode, 0, result.stderr);
      assert.equal(result.stdout, `${path.join(ws, 'src')}\n`);
      assert.equal(fs.readFileSync(path.join(ws, 'src', 'b.txt'), 'utf8'), 'seen\n');
      assert.equal(fs.readFileSync(path.join(ws, 'build', 'out'), 'utf8'), 'built\n');
      assert.deepEqual(result.sandbox, { sandboxed: true, network: false });
    } finally {
      delete process.env.AGENT_POLICY_SANDBOX_TEST;
    }
  });

  it('lets git work in .git (objects, refs, index), while .git/config and .git/hooks stay read-only', async () => {
    fs.rmSync(path.join(ws, '.git'), { recursive: true, force: true });
    const init = await runCommandProcess({ command: 'git init -q -b main . && git config user.email a@b && git config user.name a', cwd: ws, timeoutMs: 10_000, maxOutputBytes: 65536, signal: new AbortController().signal });
    assert.equal(init.exitCode, 0, init.stderr);
    const config = fs.readFileSync(path.join(ws, '.git', 'config'), 'utf8');
    const { result } = await run('git add src/a.txt && git commit -q -m one && git log --oneline | wc -l; git config core.hooksPath /tmp/x');
    assert.match(result.stdout, /^1\n/);
    assert.notEqual(result.exitCode, 0, 'git config cannot write .git/config');
    assert.equal(fs.readFileSync(path.join(ws, '.git', 'config'), 'utf8'), config);
    assert.match(result.stderr, /\[sandbox: this command ran in the sandbox/);
  });

  // The spellings a command may use to reach a protected path, and what it may try on it.
  const targets = ['.agentpolicy.jsonc', '.agents.jsonc', '.vscode/settings.json', '.vscode/mcp.json', '.git/config', '.git/hooks/pre-commit', '.vscode', '.git/hooks'];
  const spellings: Array<(t: string) => { prefix: string; path: string; cwd?: string }> = [
    (t) => ({ prefix: '', path: t }),
    (t) => ({ prefix: '', path: `./${t}` }),
    (t) => ({ prefix: '', path: `src/../${t}` }),
    (t) => ({ prefix: '', path: `"$PWD"/'${t}'` }),
    (t) => ({ prefix: '', path: `"${t.replace('.', '"."')}"` }),
    (t) => ({ prefix: '', path: `../${t}`, cwd: 'src' }),
    (t) => ({ prefix: `cd "${path.dirname(t)}" && `, path: path.basename(t) }),
    (t) => ({ prefix: `ln -sfn "$PWD/${t}" src/alias && `, path: 'src/alias' }),
    (t) => ({ prefix: `ln -sfn "$PWD/${path.dirname(t)}" src/dir && `, path: `src/dir/${path.basename(t)}` }),
    (t) => ({ prefix: 'P=$(printf "%s" ' + `"${t.split('').join('" "')}" | tr -d " ") && `, path: '"$P"' }),
  ];
  const operations: Array<(p: string) => string> = [
    (p) => `echo evil > ${p}`,
    (p) => `echo evil >> ${p}`,
    (p) => `mv ${p} src/moved`,
    (p) => `rm -rf ${p}`,
    (p) => `cp src/a.txt ${p}`,
    (p) => `sed -i s/a/b/ ${p}`,
    (p) => `echo evil | tee ${p}`,
    (p) => `ln -sf /etc/hostname ${p}`,
    (p) => `ln ${p} src/hard && echo evil > src/hard`,
    (p) => `chmod 777 ${p}`,
    (p) => `touch ${p}`,
    (p) => `truncate -s 0 ${p}`,
    (p) => `mv src/a.txt ${p}`,
    (p) => `find ${p} -delete`,
    ...(python ? [(p: string) => `${python} -c "import os,sys; p=sys.argv[1]; open(p,'w').write('x') if os.path.isfile(p) else os.rename(p, 'src/gone')" ${p}`] : []),
  ];

  it('keeps every protected path as it was, however a command spells it, while the workspace stays writable (property)', async function () {
    this.timeout(180_000);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...targets),
        fc.integer({ min: 0, max: spellings.length - 1 }),
        fc.integer({ min: 0, max: operations.length - 1 }),
        async (target, s, o) => {
          const before = protectedState();
          const spelled = spellings[s]!(target);
          const marker = `ok-${++n}`;
          const command = `${spelled.prefix}${operations[o]!(spelled.path)}; cd "${ws}" && echo ${marker} > src/${marker}`;
          const { result } = await run(command, spelled.cwd ? { cwd: spelled.cwd } : {});
          assert.deepEqual(protectedState(), before, `${command}\n${result.stderr}`);
          assert.equal(fs.readFileSync(path.join(ws, 'src', marker), 'utf8'), `${marker}\n`, `the workspace stays writable: ${command}\n${result.stderr}`);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('keeps /tmp private, and everything outside the workspace read-only', async () => {
    const marker = `agent-policy-sandbox-${process.pid}-${Date.now()}`;
    fs.writeFileSync(path.join(os.tmpdir(), `${marker}.host`), 'host');
    const home = path.join(os.homedir(), `.${marker}`);
    try {
      const { result } = await run(`ls /tmp; echo t > /tmp/${marker} && cat /tmp/${marker}; echo h > ${home}`);
      assert.doesNotMatch(result.stdout, new RegExp(`${marker}\\.host`), 'the host /tmp is not seen');
      assert.match(result.stdout, /^t$/m, 'the private /tmp is writable');
      assert.ok(!fs.existsSync(path.join(os.tmpdir(), marker)), 'nothing reached the host /tmp');
      assert.ok(!fs.existsSync(home), 'the home folder is read-only');
      assert.match(result.stderr, /Read-only file system/);
      assert.match(result.stderr, /\[sandbox: this command ran in the sandbox: the workspace's protected files and everything outside the workspace folder \(but a private \/tmp\) are read-only, and the network is off/);
    } finally {
      fs.rmSync(path.join(os.tmpdir(), `${marker}.host`), { force: true });
      fs.rmSync(home, { force: true });
    }
  });

  describe('network', () => {
    let server: ReplyServer;
    let port: number;
    let socketPath: string;
    let unixServer: net.Server;
    before(async () => {
      server = await startReplyServer('hello\n');
      port = server.port;
    });
    after(async () => {
      await server.close();
    });
    beforeEach(async () => {
      socketPath = path.join(ws, 'daemon.sock');
      unixServer = net.createServer((c) => c.end('unix hello\n'));
      await new Promise<void>((resolve) => unixServer.listen(socketPath, resolve));
    });
    afterEach(async () => {
      await new Promise<void>((resolve) => unixServer.close(() => resolve()));
    });

    const tcp = (): string => `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`;
    const unix = (): string =>
      `${process.execPath} -e "require('net').connect('${socketPath}').on('data', (d) => process.stdout.write(d)).on('error', (e) => { console.error(e.code + ': ' + e.message); process.exit(3); })"`;

    it('is off without the rule: a TCP server on the editor\'s 127.0.0.1 cannot be reached, and the result says why', async () => {
      const { result } = await run(tcp());
      assert.notEqual(result.exitCode, 0);
      assert.doesNotMatch(result.stdout, /hello/);
      assert.match(result.stderr, /Connection refused|Network is unreachable/);
      assert.match(result.stderr, /\[sandbox: .*the network is off/);
    });

    it('is on with "network": true: the same server answers', async () => {
      const { result } = await run(tcp(), { network: true });
      assert.equal(result.exitCode, 0, result.stderr);
      assert.equal(result.stdout, 'hello\n');
      assert.deepEqual(result.sandbox, { sandboxed: true, network: true });
    });

    it('refuses Unix-domain sockets with the network off (a daemon would act outside the sandbox), allows them with it on', async function () {
      if (!sandboxAvailability().available || !(sandboxAvailability() as { unixSocketsBlocked: boolean }).unixSocketsBlocked) this.skip();
      const off = await run(unix());
      assert.equal(off.result.exitCode, 3, off.result.stderr);
      assert.match(off.result.stderr, /EPERM|EACCES/);
      const on = await run(unix(), { network: true });
      assert.equal(on.result.stdout, 'unix hello\n', on.result.stderr);
    });
  });

  it('kills the whole process tree on timeout, background and detached processes included', async function () {
    this.timeout(20_000);
    const marker = `${9000 + (process.pid % 900)}.${Date.now() % 1000}`;
    const started = Date.now();
    const { result } = await run(`sleep ${marker}1 & (setsid sleep ${marker}2 &) ; nohup sleep ${marker}3 >/dev/null 2>&1 & sleep ${marker}4`, { timeoutMs: 500 });
    assert.equal(result.timedOut, true);
    assert.ok(Date.now() - started < 8000, 'returned soon after the timeout');
    assert.deepEqual(processesWith(`sleep ${marker}`), [], 'no process of the command is left');
  });

  it('ends what a command left running in the background when the command itself ends', async () => {
    const marker = `${8000 + (process.pid % 900)}.${Date.now() % 1000}`;
    const { result } = await run(`(sleep ${marker} &) ; echo started`);
    assert.equal(result.stdout, 'started\n');
    assert.deepEqual(processesWith(`sleep ${marker}`), []);
  });

  it('kills the tree when the turn is cancelled', async () => {
    const marker = `${7000 + (process.pid % 900)}.${Date.now() % 1000}`;
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 300);
    const { result } = await run(`sleep ${marker} & sleep ${marker}`, { signal: abort.signal });
    assert.equal(result.cancelled, true);
    assert.deepEqual(processesWith(`sleep ${marker}`), []);
  });

  it('removes protected paths the command created (they could not be bound), and says so', async () => {
    fs.rmSync(path.join(ws, '.agents.jsonc'));
    const { result, undone } = await run('echo "{}" > .agents.jsonc && mkdir -p .claude .codex docs && echo x > .claude/settings.json && echo y > .codex/config.toml && echo z > docs/notes.md');
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(!fs.existsSync(path.join(ws, '.agents.jsonc')));
    assert.ok(!fs.existsSync(path.join(ws, '.claude', 'settings.json')));
    assert.ok(!fs.existsSync(path.join(ws, '.claude')), '.claude/ is a persistence folder: all of it');
    assert.ok(!fs.existsSync(path.join(ws, '.codex')));
    assert.equal(fs.readFileSync(path.join(ws, 'docs', 'notes.md'), 'utf8'), 'z\n', 'what is not protected stays');
    assert.deepEqual(undone.sort(), [
      'the command created the protected file .agents.jsonc: removed it',
      'the command created the protected file .claude/settings.json: removed it',
      'the command created the protected folder .claude: removed it',
      'the command created the protected folder .codex: removed it',
    ]);
    assert.deepEqual(result.sandbox.undone?.slice().sort(), undone);
    assert.match(result.stderr, /\[sandbox: the command created the protected file \.agents\.jsonc: removed it\]/);
  });

  it('removes a link the command made in a protected name, never what it leads to outside the workspace', async () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-outside-')));
    fs.writeFileSync(path.join(outside, 'settings.json'), 'precious\n');
    try {
      fs.rmSync(path.join(ws, '.vscode'), { recursive: true });
      const { undone } = await run(`ln -s ${outside} .vscode && ln -s ${outside} .codex && mkdir -p .claude-real && echo evil > .claude-real/settings.json && ln -s .claude-real .claude`);
      assert.ok(!fs.existsSync(path.join(ws, '.vscode')) && !fs.existsSync(path.join(ws, '.codex')) && !fs.existsSync(path.join(ws, '.claude')));
      assert.equal(fs.readFileSync(path.join(outside, 'settings.json'), 'utf8'), 'precious\n');
      assert.equal(fs.readFileSync(path.join(ws, '.claude-real', 'settings.json'), 'utf8'), 'evil\n', 'a file that is not itself protected stays');
      assert.equal(undone.length, 3, undone.join('\n'));
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('restores a link on the way to a protected file that the command replaced', async () => {
    fs.mkdirSync(path.join(ws, 'config'));
    fs.renameSync(path.join(ws, '.vscode'), path.join(ws, 'config', 'vscode'));
    fs.symlinkSync('config/vscode', path.join(ws, '.vscode'));
    const before = fs.readFileSync(path.join(ws, 'config', 'vscode', 'settings.json'), 'utf8');
    const { result, undone } = await run('echo evil > .vscode/settings.json; rm .vscode && mkdir .vscode && echo evil > .vscode/settings.json');
    assert.match(result.stderr, /Read-only file system/);
    assert.equal(fs.readlinkSync(path.join(ws, '.vscode')), 'config/vscode');
    assert.equal(fs.readFileSync(path.join(ws, '.vscode', 'settings.json'), 'utf8'), before);
    assert.match(undone.join('\n'), /the link \.vscode .* was replaced by the command: restored it/);
  });

  it('restores a protected file changed through a hard link made before the command', async () => {
    fs.linkSync(path.join(ws, '.agentpolicy.jsonc'), path.join(ws, 'src', 'policy-link'));
    const before = fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8');
    const { undone } = await run('echo evil > src/policy-link');
    assert.equal(fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8'), before);
    assert.deepEqual(undone, ['the protected file .agentpolicy.jsonc was changed through another hard link of it: restored its content']);
  });

  it('with protectedWritable (a person allowed the protected-files ask): the protected files can change, nothing is undone', async () => {
    fs.rmSync(path.join(ws, '.agents.jsonc'));
    const { result, undone } = await run('echo "{}" > .agentpolicy.jsonc && echo "{}" > .agents.jsonc', { protectedWritable: true, network: true });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8'), '{}\n');
    assert.ok(fs.existsSync(path.join(ws, '.agents.jsonc')));
    assert.deepEqual(undone, []);
    assert.deepEqual(result.sandbox, { sandboxed: true, network: true, protectedWritable: true });
  });

  it('adds the sandbox note only to failures that show a sandbox limit', async () => {
    const own = await run('ls no-such-file; exit 3');
    assert.equal(own.result.exitCode, 3);
    assert.doesNotMatch(own.result.stderr, /\[sandbox/);
    const ok = await run('echo fine');
    assert.equal(ok.result.stderr, '');
    const refused = await run('rm -f .agentpolicy.jsonc');
    assert.match(refused.result.stderr, /Device or resource busy\n\[sandbox: this command ran in the sandbox/);
    const withNetwork = await run('echo "curl: (7) Failed to connect to x: Connection refused" >&2; exit 7', { network: true });
    assert.doesNotMatch(withNetwork.result.stderr, /\[sandbox/, 'with the network on, a refused connection is the program\'s own');
  });

  it('a sandbox that cannot be set up is an error of the call, never a run without it', async () => {
    await assert.rejects(
      runCommandProcess({
        command: 'echo never', cwd: ws, timeoutMs: 5000, maxOutputBytes: 1024, signal: new AbortController().signal,
        sandbox: { bwrap: (sandboxAvailability() as { bwrap: string }).bwrap, args: ['--ro-bind', '/nonexistent-agent-policy', '/x'] },
      }),
      /the sandbox could not be set up \(bwrap: Can't find source path/,
    );
    sandboxTesting.availability = { available: false, reason: 'bwrap vanished' };
    try {
      await assert.rejects(run('echo never'), /was to run in the sandbox, but bwrap vanished/);
    } finally {
      delete sandboxTesting.availability;
    }
  });

  it('runs a command without a sandbox context as before, and says it was not sandboxed', async () => {
    const context: ToolRunContext = { sessionId: 's', turnId: 't', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal };
    const result = (await tool.run({ command: 'echo $$' }, context)) as RunCommandResult;
    assert.deepEqual(result.sandbox, { sandboxed: false, network: true });
    assert.notEqual(result.stdout, '2\n', 'not in a pid namespace');
  });
});
