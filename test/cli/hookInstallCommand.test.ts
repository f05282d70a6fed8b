// `agentpolicy hook install`: what it prints, what it writes (nothing with --dry-run or when a
// file cannot be changed or the hook could not start), the hook client it writes, and its exit
// codes (0 done, 1 a file could not be changed or the hook could not start, 2 usage).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookInstallCommand } from '../../src/cli/hookInstallCommand.js';
import { onPath } from '../../src/hooks/install/hookLauncher.js';

describe('agentpolicy hook install', () => {
  let ws: string;
  let out: string[];
  let err: string[];
  /** The state folder's parent (XDG_STATE_HOME) and a stand-in for dist/cli.js that answers --version. */
  let stateHome: string;
  let cli: string;
  let node: string = process.execPath;
  const state = (): string => path.join(stateHome, 'agentpolicy');
  const run = (...argv: string[]): Promise<number> => hookInstallCommand(argv, {
    out: (l) => out.push(l), err: (l) => err.push(l), cwd: ws, env: { ...process.env, XDG_STATE_HOME: stateHome }, node, cliScript: cli,
  });
  const files = (): string[] => (fs.readdirSync(ws, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(ws, f)).isFile()).sort();
  const clients = (): string[] => (fs.existsSync(state()) ? fs.readdirSync(state()).filter((f) => f.startsWith('hook-client-')) : []);

  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-install-cli-')));
    stateHome = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-install-state-')));
    cli = path.join(stateHome, 'dist dir', 'cli.js');
    fs.mkdirSync(path.dirname(cli));
    fs.writeFileSync(cli, "console.log('0.1.0');\n");
    node = process.execPath;
    out = [];
    err = [];
  });
  afterEach(() => {
    fs.rmSync(ws, { recursive: true, force: true });
    fs.rmSync(stateHome, { recursive: true, force: true });
  });

  it('writes the hook client (0700 in a 0700 folder) and names it by absolute path; the client falls back to this node and cli.js by absolute paths', async () => {
    assert.equal(await run('--agent', 'claude', '--via', 'command'), 0);
    const [client, ...more] = clients();
    assert.ok(client !== undefined && more.length === 0, clients().join(', '));
    const file = path.join(state(), client);
    assert.equal(fs.statSync(file).mode & 0o777, 0o700);
    assert.equal(fs.statSync(state()).mode & 0o777, 0o700);
    const settings = JSON.parse(fs.readFileSync(path.join(ws, '.claude', 'settings.json'), 'utf8'));
    assert.equal(settings.hooks.PreToolUse[0].hooks[0].command, `${file} hook --agent claude --timeout 120`);
    const text = fs.readFileSync(file, 'utf8');
    assert.ok(text.includes(`AP_NODE=${node}\n`) && text.includes(`AP_CLI='${cli}'\n`), text);
    assert.ok(out[1]!.startsWith(`wrote the hook client ${file} `), out.join('\n'));
  });

  it('refuses (exit 1, nothing written) when the CLI or node cannot run', async () => {
    for (const [setup, message] of [
      [() => fs.rmSync(cli), /the agentpolicy CLI \(.*cli\.js\) does not exist/],
      [() => fs.writeFileSync(cli, 'process.exit(3)\n'), /--version exited with 3/],
      [() => { node = path.join(stateHome, 'no-node'); }, /node \(.*no-node\) does not exist/],
      [() => { node = cli; }, /node \(.*cli\.js\) cannot be run/],
    ] as const) {
      fs.writeFileSync(cli, "console.log('0.1.0');\n");
      node = process.execPath;
      setup();
      err = [];
      assert.equal(await run('--agent', 'claude,codex'), 1, err.join('\n'));
      assert.match(err.join('\n'), /the hook could not start, so nothing was written/);
      assert.match(err.join('\n'), message);
      assert.deepEqual(files(), []);
      assert.deepEqual(clients(), []);
    }
  });

  it('refuses a --command that cannot start: a bare name not on PATH, a missing path, one whose --version fails', async () => {
    for (const [command, message] of [
      ['agentpolicy-nowhere-xyz', /"agentpolicy-nowhere-xyz" is not on this PATH/],
      ['/nonexistent/agentpolicy hook', /\/nonexistent\/agentpolicy\) does not exist/],
      [`${process.execPath} ${path.join(stateHome, 'missing.js')}`, /--version exited with 1/],
    ] as const) {
      err = [];
      assert.equal(await run('--agent', 'claude', '--command', command), 1, err.join('\n'));
      assert.match(err.join('\n'), message);
      assert.match(err.join('\n'), /nothing was written/);
      assert.deepEqual(files(), []);
      assert.deepEqual(clients(), []);
    }
  });

  it('never leans on PATH: a --command program found on PATH is written by its absolute path, and a #!/usr/bin/env node script is run by the absolute node', async () => {
    const bin = path.join(stateHome, 'bin dir');
    fs.mkdirSync(bin);
    // npm's `agentpolicy` is a symbolic link to dist/cli.js, which starts #!/usr/bin/env node.
    fs.writeFileSync(cli, "#!/usr/bin/env node\nconsole.log('0.1.0');\n");
    fs.chmodSync(cli, 0o755);
    fs.symlinkSync(cli, path.join(bin, 'agentpolicy-test'));
    const env = { ...process.env, XDG_STATE_HOME: stateHome, PATH: `${bin}${path.delimiter}${process.env.PATH}` };
    const code = await hookInstallCommand(['--agent', 'codex', '--command', 'agentpolicy-test'], { out: (l) => out.push(l), err: (l) => err.push(l), cwd: ws, env, node, cliScript: cli });
    assert.equal(code, 0, err.join('\n'));
    const [client] = clients();
    const text = fs.readFileSync(path.join(state(), client!), 'utf8');
    assert.ok(text.includes(`ap_fallback() { ${onPath('node', ws, env)} '${path.join(bin, 'agentpolicy-test')}' "$@"; }`), text.split('\n').find((l) => l.startsWith('ap_fallback')));
    const codex = JSON.parse(fs.readFileSync(path.join(ws, '.codex', 'hooks.json'), 'utf8'));
    assert.match(codex.hooks.PreToolUse[0].hooks[0].command, /^\/\S+\/hook-client-[0-9a-f]+\.sh hook --agent codex/);
  });

  it('refuses a --command whose program cannot be told without running it', async () => {
    for (const command of ['$(which agentpolicy)', '`agentpolicy`', '"$AGENTPOLICY" x']) {
      err = [];
      assert.equal(await run('--agent', 'codex', '--command', command), 1, command);
      assert.match(err.join('\n'), /cannot be told.*absolute path/);
      assert.deepEqual(files(), []);
    }
  });

  it('installs for the agents named, one line per file and what each host still needs; exit 0', async () => {
    assert.equal(await run('--agent', 'claude,codex'), 0);
    assert.deepEqual(files(), [path.join('.claude', 'settings.local.json'), path.join('.codex', 'hooks.json')]);
    assert.deepEqual(out.slice(0, 2), ['created .claude/settings.local.json (Claude Code)', 'created .codex/hooks.json (Codex)']);
    assert.ok(out.some((l) => l.includes('Codex:') && l.includes('trusted project') && l.includes('/hooks')), out.join('\n'));
    out = [];
    assert.equal(await run('--agent', 'codex,claude'), 0);
    assert.deepEqual(out.slice(0, 2), ['already in place: .claude/settings.local.json (Claude Code)', 'already in place: .codex/hooks.json (Codex)']);
  });

  it('Claude Code: its http hook (the default) to the service\'s kept port with the http token, a SessionStart hook that starts the service, kept out of git; --via command moves it back to the command hook', async () => {
    fs.mkdirSync(path.join(ws, '.git', 'info'), { recursive: true });
    const git = (...args: string[]) => spawnSync('git', ['-C', ws, ...args], { encoding: 'utf8' });
    assert.equal(git('init', '-q').status, 0);
    assert.equal(await run('--agent', 'claude'), 0);
    const port = fs.readFileSync(path.join(state(), 'service-port'), 'utf8').trim();
    const token = fs.readFileSync(path.join(state(), 'http-hook-token'), 'utf8').trim();
    assert.equal(fs.statSync(path.join(state(), 'service-port')).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.join(state(), 'http-hook-token')).mode & 0o777, 0o600);
    const [client] = clients();
    const local = JSON.parse(fs.readFileSync(path.join(ws, '.claude', 'settings.local.json'), 'utf8'));
    assert.deepEqual(local.hooks.PreToolUse, [{ matcher: '*', hooks: [{
      type: 'http', url: `http://127.0.0.1:${port}/http/claude?timeout=120&if-refused=run+agentpolicy+serve`,
      headers: { Authorization: `Bearer ${token}` }, timeout: 120, onFailure: 'block',
    }] }]);
    assert.deepEqual(local.hooks.SessionStart, [{ matcher: '*', hooks: [{ type: 'command', command: `${path.join(state(), client!)} serve --ensure`, timeout: 30 }] }]);
    assert.ok(!fs.existsSync(path.join(state(), 'service-secret')), 'the secret is not what the token is made from');
    assert.equal(git('check-ignore', '-q', '.claude/settings.local.json').status, 0, 'git ignores the file with the token');
    assert.equal(git('status', '--porcelain').stdout.trim(), '', 'nothing to commit');
    // Installing again: the same port and token, nothing changes, the exclude line is not repeated.
    out = [];
    assert.equal(await run('--agent', 'claude'), 0);
    assert.equal(out[0], 'already in place: .claude/settings.local.json (Claude Code)');
    assert.equal(fs.readFileSync(path.join(ws, '.git', 'info', 'exclude'), 'utf8').split('settings.local.json').length, 2);
    // --via command: the command hook in .claude/settings.json, ours out of the local file (deleted: it held only ours).
    out = [];
    assert.equal(await run('--agent', 'claude', '--via', 'command'), 0);
    assert.deepEqual(out.slice(0, 2), ['created .claude/settings.json (Claude Code)', 'deleted .claude/settings.local.json (Claude Code)']);
    assert.equal(await run('--agent', 'claude', '--via', 'http', '--command', 'x'), 2);
  });

  it('--agent all, --workspace, --command and --timeout', async () => {
    const sub = path.join(ws, 'project');
    fs.mkdirSync(sub);
    ws = path.dirname(sub);
    assert.equal(await run('--agent', 'all', '--workspace', 'project', '--command', `node '${cli}'`, '--timeout', '45'), 0);
    assert.equal(out.filter((l) => l.startsWith('created ')).length, 5);
    const [client] = clients();
    const claude = JSON.parse(fs.readFileSync(path.join(sub, '.claude', 'settings.json'), 'utf8'));
    assert.equal(claude.hooks.PreToolUse[0].hooks[0].command, `${path.join(state(), client!)} hook --agent claude --timeout 45`);
    const nodeOnPath = onPath('node', ws, process.env);
    assert.ok(fs.readFileSync(path.join(state(), client!), 'utf8').includes(`ap_fallback() { ${nodeOnPath} '${cli}' "$@"; }`), 'the client falls back to the command given, node by absolute path');
    assert.ok(out.some((l) => l.includes('Copilot CLI and VS Code agent mode')));
    assert.deepEqual(err, []);
  });

  it('--remove takes our entries out and deletes files that held only ours', async () => {
    await run('--agent', 'gemini,copilot');
    out = [];
    assert.equal(await run('--agent', 'gemini,vscode', '--remove'), 0);
    assert.deepEqual(out, ['deleted .gemini/settings.json (Gemini CLI)', 'deleted .github/hooks/agentpolicy.json (Copilot CLI and VS Code agent mode)']);
    assert.deepEqual(files(), []);
  });

  it('--dry-run says what it would do and writes nothing', async () => {
    fs.mkdirSync(path.join(ws, '.claude'));
    fs.writeFileSync(path.join(ws, '.claude', 'settings.json'), '{ "model": "opus" }');
    assert.equal(await run('--agent', 'claude,cursor', '--dry-run', '--via', 'command'), 0);
    assert.deepEqual(out.slice(0, 2), ['would update .claude/settings.json (Claude Code)', 'would create .cursor/hooks.json (Cursor)']);
    assert.deepEqual(files(), [path.join('.claude', 'settings.json')]);
    assert.equal(fs.readFileSync(path.join(ws, '.claude', 'settings.json'), 'utf8'), '{ "model": "opus" }');
    assert.deepEqual(clients(), [], 'no client written');
    out = [];
    assert.equal(await run('--agent', 'claude', '--dry-run'), 0);
    assert.equal(out[0], 'would create .claude/settings.local.json (Claude Code)');
    assert.ok(!fs.existsSync(state()) || fs.readdirSync(state()).length === 0, 'no port, token or client written');
  });

  it('exit 1 and nothing written when a file is not JSONC', async () => {
    fs.mkdirSync(path.join(ws, '.gemini'));
    fs.writeFileSync(path.join(ws, '.gemini', 'settings.json'), '{ "hooks": ');
    assert.equal(await run('--agent', 'claude,gemini'), 1);
    assert.match(err.join('\n'), /\.gemini\/settings\.json: not valid JSON with comments .*nothing was changed/);
    assert.deepEqual(files(), [path.join('.gemini', 'settings.json')]);
    assert.deepEqual(clients(), [], 'no client written');
  });

  for (const [argv, message] of [
    [[], /--agent is required/],
    [['--agent', 'claude,aider'], /--agent aider: not a host/],
    [['--agent', 'claude', '--timeout', '0'], /--timeout 0: a whole number of seconds/],
    [['--agent', 'claude', '--timeout', '1.5'], /--timeout 1.5/],
    [['--agent', 'claude', '--workspace', 'nowhere'], /--workspace nowhere: no such folder/],
    [['--agent', 'claude', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['--agent', 'claude', 'extra'], /Unexpected argument 'extra'/],
  ] as const) {
    it(`exit 2 for ${argv.join(' ') || 'no arguments'}, writing nothing`, async () => {
      assert.equal(await run(...argv), 2);
      assert.match(err[0]!, message);
      assert.match(err.join('\n'), /usage:/);
      assert.deepEqual(files(), []);
    });
  }
});
