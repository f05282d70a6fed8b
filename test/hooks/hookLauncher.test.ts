// What a hook runs, checked before it is written (src/hooks/install/hookLauncher.ts): an Electron run as
// node is checked as the client will run it, never passing on a variable the check inherited.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { absoluteCommand, cliLauncherProblem } from '../../src/hooks/install/hookLauncher.js';

describe('hook launcher checks', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-launcher-')));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('checks an Electron as node with ELECTRON_RUN_AS_NODE=1, and any other node without it (the shim sets it)', () => {
    // A stand-in for Electron: it answers --version only when run as node.
    const electron = path.join(dir, 'electron');
    fs.writeFileSync(electron, '#!/bin/sh\n[ "${ELECTRON_RUN_AS_NODE:-}" = 1 ] && echo 0.1.0\n');
    fs.chmodSync(electron, 0o755);
    const cli = path.join(dir, 'cli.js');
    fs.writeFileSync(cli, '');
    const env = { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
    assert.equal(cliLauncherProblem(electron, cli, env, true), undefined);
    assert.match(cliLauncherProblem(electron, cli, env, false) ?? '', /--version exited with 1/);
  });

  it('names a bare program and the node of an env-node script by absolute path, keeping assignments and arguments', () => {
    const script = path.join(dir, 'ap');
    fs.writeFileSync(script, "#!/usr/bin/env node\nconsole.log('0.1.0');\n");
    fs.chmodSync(script, 0o755);
    const env = { ...process.env, PATH: `${dir}${path.delimiter}${path.dirname(process.execPath)}` };
    const node = path.join(path.dirname(process.execPath), 'node');
    assert.deepEqual(absoluteCommand('FOO=1 ap --quiet', dir, env), { command: `FOO=1 ${node} ${script} --quiet` });
    assert.deepEqual(absoluteCommand(`'${script}'`, dir, env), { command: `${node} ${script}` });
    assert.match((absoluteCommand('ap', dir, { PATH: dir }) as { problem: string }).problem, /no.*node.*on this PATH|none on this PATH/);
  });
});
