// The `agentpolicy` shim the extension puts on PATH (src/hooks/install/cliShim.ts): written with absolute
// paths, runs the CLI, says when its folder is not on PATH, replaces and removes only a file of its
// own, refuses a CLI that does not answer, and is written again when an update moved the CLI.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { installShim, refreshShim, SHIM_MARKER, shimDir, shimRuntime, uninstallShim } from '../../src/hooks/install/cliShim.js';

describe('the agentpolicy shim', () => {
  let root: string;
  let dir: string;
  let cli: string;
  const runtime = { node: process.execPath, electron: false };
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cli-shim-')));
    dir = path.join(root, 'home', '.local', 'bin');
    cli = path.join(root, "ext's dist", 'cli.js');
    fs.mkdirSync(path.dirname(cli));
    fs.writeFileSync(cli, "console.log(process.argv.slice(2).includes('--version') ? '0.1.0' : JSON.stringify(process.argv.slice(2)));\n");
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('lives in $XDG_BIN_HOME when absolute, else ~/.local/bin', () => {
    assert.equal(shimDir({}, '/home/me'), '/home/me/.local/bin');
    assert.equal(shimDir({ XDG_BIN_HOME: '/opt/bin' }, '/home/me'), '/opt/bin');
    assert.equal(shimDir({ XDG_BIN_HOME: 'rel' }, '/home/me'), '/home/me/.local/bin');
  });

  it('is written (0755, the folder made) with the node and cli.js by absolute paths, and runs the CLI with the arguments as given, whatever PATH holds', () => {
    const result = installShim({ dir, runtime, cli, env: { ...process.env, PATH: `${dir}${path.delimiter}/usr/bin:/bin` } });
    assert.deepEqual(result, { file: path.join(dir, 'agentpolicy'), onPath: true });
    const file = path.join(dir, 'agentpolicy');
    assert.equal(fs.statSync(file).mode & 0o777, 0o755);
    const text = fs.readFileSync(file, 'utf8');
    assert.ok(text.startsWith(`#!/bin/sh\n${SHIM_MARKER}\n`), text);
    assert.ok(text.includes(`AP_NODE=${process.execPath}\n`) && text.includes(`AP_CLI='${cli.replaceAll("'", `'\\''`)}'\n`), text);
    const ran = spawnSync(file, ['check', 'a b'], { encoding: 'utf8', env: { PATH: '/nonexistent' } });
    assert.equal(ran.status, 0, ran.stderr);
    assert.deepEqual(JSON.parse(ran.stdout), ['check', 'a b']);
  });

  it('says when its folder is not on PATH, and when another agentpolicy comes first there', () => {
    assert.deepEqual(installShim({ dir, runtime, cli, env: { PATH: '/usr/bin:/bin' } }), { file: path.join(dir, 'agentpolicy'), onPath: false });
    const other = path.join(root, 'other');
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, 'agentpolicy'), '#!/bin/sh\n', { mode: 0o755 });
    const result = installShim({ dir, runtime, cli, env: { PATH: `${other}${path.delimiter}${dir}` } });
    assert.deepEqual(result, { file: path.join(dir, 'agentpolicy'), onPath: true, shadowedBy: path.join(other, 'agentpolicy') });
  });

  it('an Electron run as node: the shim sets ELECTRON_RUN_AS_NODE=1', () => {
    const electron = path.join(root, 'electron');
    fs.writeFileSync(electron, `#!/bin/sh\n[ "\${ELECTRON_RUN_AS_NODE:-}" = 1 ] || exit 9\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
    assert.ok('file' in installShim({ dir, runtime: { node: electron, electron: true }, cli, env: { PATH: '/usr/bin:/bin' } }));
    const ran = spawnSync(path.join(dir, 'agentpolicy'), ['--version'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
    assert.equal(ran.stdout.trim(), '0.1.0', ran.stderr);
  });

  it('refuses a CLI that does not answer --version, and on Windows; writes nothing', () => {
    fs.writeFileSync(cli, 'process.exit(4)\n');
    assert.match((installShim({ dir, runtime, cli }) as { problem: string }).problem, /--version exited with 4/);
    assert.match((installShim({ dir, runtime, cli, platform: 'win32' }) as { problem: string }).problem, /Windows/);
    assert.equal(fs.existsSync(dir), false);
  });

  it('replaces and removes only a file of its own; says what is gone when the CLI moved', () => {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'agentpolicy');
    fs.writeFileSync(file, '#!/bin/sh\necho someone else\n', { mode: 0o755 });
    assert.match((installShim({ dir, runtime, cli }) as { problem: string }).problem, /not one Agent Policy wrote/);
    assert.match((uninstallShim(dir) as { problem: string }).problem, /it stays/);
    assert.equal(fs.readFileSync(file, 'utf8'), '#!/bin/sh\necho someone else\n');
    fs.rmSync(file);
    assert.deepEqual(uninstallShim(dir), { absent: file });
    assert.ok('file' in installShim({ dir, runtime, cli }));
    assert.ok('file' in installShim({ dir, runtime, cli }), 'installing again replaces its own');
    fs.renameSync(path.dirname(cli), `${path.dirname(cli)}-old`);
    const ran = spawnSync(file, ['--version'], { encoding: 'utf8' });
    assert.equal(ran.status, 127);
    assert.match(ran.stderr, /is gone .*Install 'agentpolicy' Command in PATH/);
    assert.deepEqual(uninstallShim(dir), { removed: file });
    assert.equal(fs.existsSync(file), false);
  });

  it('is written again after an update moved the CLI, and left alone while the CLI it names is there', () => {
    assert.ok('file' in installShim({ dir, runtime, cli }));
    const newer = path.join(root, 'ext-0.2.0', 'cli.js');
    fs.mkdirSync(path.dirname(newer));
    fs.copyFileSync(cli, newer);
    assert.equal(refreshShim({ dir, runtime: () => runtime, cli: newer }), 'left', 'another editor\'s CLI still there');
    fs.rmSync(cli);
    assert.equal(refreshShim({ dir, runtime: () => runtime, cli: newer }), 'refreshed');
    assert.match(fs.readFileSync(path.join(dir, 'agentpolicy'), 'utf8'), /ext-0\.2\.0/);
    assert.equal(refreshShim({ dir, runtime: () => runtime, cli: newer }), 'left');
  });

  it('runs the CLI with the editor\'s runtime when its Node is new enough, else a new enough node on PATH', () => {
    assert.deepEqual(shimRuntime({ execPath: '/app/code', electron: true, nodeVersion: '22.15.1' }), { node: '/app/code', electron: true });
    const onPath = shimRuntime({ execPath: '/app/code', electron: true, nodeVersion: '20.18.0' }, { PATH: path.dirname(process.execPath) });
    assert.deepEqual(onPath, { node: path.join(path.dirname(process.execPath), 'node'), electron: false });
    const none = shimRuntime({ execPath: '/app/code', electron: true, nodeVersion: '20.18.0' }, { PATH: '/nonexistent' });
    assert.equal(none.node, '/app/code');
    assert.match(none.note ?? '', /no Node >= 22\.12 is on PATH/);
  });
});
