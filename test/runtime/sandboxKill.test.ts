// Nothing is left behind when the process running a sandboxed command is killed outright
// (SIGKILL: no handler runs): the command, what it started in the background (nohup included),
// bubblewrap and its namespace's init, and the network bridge's socat relays all end with it.
// Against the real bubblewrap; skipped, saying why, where there is none.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { probeSandbox } from '../../src/runtime/sandbox/sandboxProbe.js';
import { liveProcesses, until } from '../liveProcesses.js';

const probe = probeSandbox();
const CHILD = path.join(__dirname, 'children', 'sandboxedSleep.ts');

describe('a sandboxed command when its runner is killed outright (real bubblewrap)', function () {
  this.timeout(60_000);
  before(function () {
    if (!probe.available) {
      console.log(`    (sandbox kill tests skipped: ${probe.reason})`);
      this.skip();
    }
  });

  for (const mode of ['nonet', 'net'] as const) {
    it(`leaves no process behind${mode === 'net' ? ', the network bridge included' : ''}`, async () => {
      const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-kill-')));
      const marker = `${process.pid}${mode === 'net' ? 1 : 0}${Date.now() % 100000}`;
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ws, marker, mode], { stdio: 'ignore' });
      try {
        assert.ok(await until(() => fs.existsSync(path.join(ws, 'up.txt')) && liveProcesses(`sleep 30`).filter((p) => p.cmd.includes(marker)).length >= 3, 20_000), 'the sandboxed processes did not start');
        const bwrapPids = liveProcesses('bwrap').filter((p) => p.cmd.includes(ws)).map((p) => p.pid);
        assert.ok(bwrapPids.length > 0);
        child.kill('SIGKILL');
        const gone = await until(() => liveProcesses(marker).length === 0 && bwrapPids.every((pid) => !liveProcesses('bwrap').some((p) => p.pid === pid)) && (mode === 'nonet' || liveProcesses('.agentpolicy-proxy/').length === 0), 10_000);
        assert.ok(gone, `left behind: ${JSON.stringify([...liveProcesses(marker), ...liveProcesses('.agentpolicy-proxy/'), ...liveProcesses('bwrap').filter((p) => bwrapPids.includes(p.pid))])}`);
      } finally {
        child.kill('SIGKILL');
        for (const p of liveProcesses(marker)) process.kill(p.pid, 'SIGKILL');
        fs.rmSync(ws, { recursive: true, force: true });
      }
    });
  }
});
