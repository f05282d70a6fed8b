// Agent Policy: Install 'agentpolicy' Command in PATH, from the palette of a real VS Code
// (code-server, see harness.ts), as a VSIX user would: the shim lands in the folder it names
// ($XDG_BIN_HOME here, a scratch folder not on PATH, so the window says so), runs the CLI the VSIX
// ships with the editor's own runtime by absolute paths (a shell whose PATH has no node at all
// runs it), and Uninstall takes it away again.
// Run with `npm run test:e2e -- --grep "agentpolicy' command"`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { activated, REPO, useVsCode } from './harness';

describe("the 'agentpolicy' command in PATH, from the palette (e2e)", function () {
  const { open } = useVsCode();
  let bin: string;
  let before: string | undefined;

  beforeEach(() => {
    bin = fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-bin-'));
    // code-server runs with the test process's environment (harness.ts): the shim goes here.
    before = process.env.XDG_BIN_HOME;
    process.env.XDG_BIN_HOME = bin;
  });
  afterEach(() => {
    if (before === undefined) delete process.env.XDG_BIN_HOME;
    else process.env.XDG_BIN_HOME = before;
    fs.rmSync(bin, { recursive: true, force: true });
  });

  it('installs a shim that runs the shipped CLI by absolute paths, says its folder is not on PATH, and uninstalls it', async () => {
    const v = await open('command-in-path');
    await activated(v);
    await v.runCommand("Agent Policy: Install 'agentpolicy' Command in PATH");
    const shim = path.join(bin, 'agentpolicy');
    await v.notification(new RegExp(`wrote ${shim.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, but .* is not on PATH`));
    const text = fs.readFileSync(shim, 'utf8');
    assert.match(text, /^#!\/bin\/sh/);
    assert.match(text, /dist\/cli\.js/, 'it names the CLI the VSIX ships');
    // No node on PATH, no PATH lookups at all: the shim names its runtime and CLI by absolute paths.
    const version = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version as string;
    const run = spawnSync(shim, ['--version'], { env: { PATH: '/nonexistent', HOME: os.tmpdir() }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(run.status, 0, `the shim failed: ${run.stderr}`);
    assert.match(run.stdout, new RegExp(version.replace(/\./g, '\\.')));
    const check = spawnSync(shim, ['check', '--policy', path.join(v.workspace, '.agentpolicy.jsonc')], { env: { PATH: '/nonexistent', HOME: os.tmpdir() }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(check.status, 0, `agentpolicy check through the shim: ${check.stdout}${check.stderr}`);

    await v.runCommand("Agent Policy: Uninstall 'agentpolicy' Command from PATH");
    await v.notification(/removed the 'agentpolicy' command/);
    assert.equal(fs.existsSync(shim), false);
  });
});
