// The sandbox's cost per command: `true` run through builtin.run_command, with and without the
// sandbox (bubblewrap: namespaces, the mounts of the workspace's protected files, the check
// after), each way alternately so that the machine's load falls on both alike; and the probe,
// paid once per process.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_PROTECTED_FILES } from '../src/runtime/protected.js';
import { runCommandTool } from '../src/runtime/runCommandTool.js';
import { probeSandbox, sandboxAvailability } from '../src/runtime/sandboxProbe.js';
import type { ToolRunContext } from '../src/runtime/tools.js';
import { median, type BenchRow } from './table.js';

const RUNS = 50;

export async function sandboxBench(): Promise<BenchRow[]> {
  const t0 = process.hrtime.bigint();
  const probe = probeSandbox();
  const probeMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!probe.available) {
    return [{ subject: 'sandbox', size: 0, metric: 'not measured', value: 0, unit: '', note: `no sandbox here: ${probe.reason}` }];
  }
  sandboxAvailability();
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-sandbox-bench-')));
  try {
    // A workspace like a real one: the policy, .vscode and .git exist, the rest is missing (checked after each command).
    fs.writeFileSync(path.join(ws, '.agentpolicy.jsonc'), '{ "version": 1 }\n');
    fs.mkdirSync(path.join(ws, '.vscode'));
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), '{}\n');
    fs.mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.git', 'config'), '');
    const tool = runCommandTool();
    const base: ToolRunContext = { sessionId: 's', turnId: 't', agent: 'bench', workspaceFolder: ws, signal: new AbortController().signal };
    const sandboxed: ToolRunContext = {
      ...base,
      sandbox: { network: false, protectedWritable: false, protectedFiles: DEFAULT_PROTECTED_FILES.map((f) => path.resolve(ws, f)) },
    };
    const time = async (context: ToolRunContext): Promise<number> => {
      const start = process.hrtime.bigint();
      const r = (await tool.run({ command: 'true' }, context)) as { exitCode: number | null; stderr: string };
      if (r.exitCode !== 0) throw new Error(`true failed: ${r.stderr}`);
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    for (let i = 0; i < 5; i++) {
      await time(base);
      await time(sandboxed);
    }
    const plain: number[] = [];
    const boxed: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      plain.push(await time(base));
      boxed.push(await time(sandboxed));
    }
    const p = median(plain);
    const b = median(boxed);
    return [
      { subject: 'sandbox: run_command `true`', size: RUNS, metric: 'per command, not sandboxed', value: p, unit: 'ms', digits: 1, note: 'bash --noprofile --norc -c true, median' },
      { subject: 'sandbox: run_command `true`', size: RUNS, metric: 'per command, sandboxed', value: b, unit: 'ms', digits: 1, note: 'bwrap, no network, protected files bound, checked after' },
      { subject: 'sandbox: run_command `true`', size: RUNS, metric: 'sandbox cost per command', value: b - p, unit: 'ms', digits: 1,
        target: { op: '<=', value: 25 }, note: `best ${(Math.min(...boxed) - Math.min(...plain)).toFixed(1)} ms (best sandboxed - best plain)` },
      { subject: 'sandbox: probe', size: 1, metric: 'once per process', value: probeMs, unit: 'ms', digits: 1, note: 'bwrap runs `true` with the flags of a command' },
    ];
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
}
