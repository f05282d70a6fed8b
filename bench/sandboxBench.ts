// The sandbox's cost per command: `true` run through builtin.run_command, with and without the
// sandbox (bubblewrap: namespaces, the mounts of the workspace's protected files, the check
// after), with the network off and with each connection judged (the command's own proxy and the
// socat bridge); and `curl` to a named host, a real one in a network namespace made for the run
// (test/netHost.ts, as root), plain and through the judged proxy under a policy whose domains
// rule allows it. Each way alternately so that the machine's load falls on all alike; and the
// probe, paid once per process.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../src/policy/policy.js';
import { initShellParser } from '../src/policy/shell/shellParser.js';
import { DEFAULT_PROTECTED_FILES } from '../src/runtime/calls/protected.js';
import type { ConnectionJudge } from '../src/runtime/sandbox/sandboxNetwork.js';
import { canMakeTestHost, startTestHost } from '../test/netHost.js';
import { runCommandTool } from '../src/runtime/tools/runCommandTool.js';
import { probeSandbox, sandboxAvailability } from '../src/runtime/sandbox/sandboxProbe.js';
import type { ToolRunContext } from '../src/runtime/tools/tools.js';
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
    const judged = (judge: ConnectionJudge): ToolRunContext => ({
      ...base,
      sandbox: { ...sandboxed.sandbox!, judgesHosts: true, connections: { judge, namedHosts: [] } },
    });
    const time = async (context: ToolRunContext, command = 'true'): Promise<number> => {
      const start = process.hrtime.bigint();
      const r = (await tool.run({ command }, context)) as { exitCode: number | null; stderr: string };
      if (r.exitCode !== 0) throw new Error(`${command} failed: ${r.stderr}`);
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    const refuseAll = judged(async () => ({ allow: false, reason: 'bench' }));
    /** Medians of each way, run alternately. */
    const alternate = async (ways: Array<() => Promise<number>>): Promise<{ medians: number[]; bests: number[] }> => {
      for (let i = 0; i < 5; i++) for (const way of ways) await way();
      const samples = ways.map(() => [] as number[]);
      for (let i = 0; i < RUNS; i++) for (const [k, way] of ways.entries()) samples[k]!.push(await way());
      return { medians: samples.map(median), bests: samples.map((x) => Math.min(...x)) };
    };
    const t = await alternate([() => time(base), () => time(sandboxed), () => time(refuseAll)]);
    const [p, b, j] = t.medians as [number, number, number];
    const rows: BenchRow[] = [
      { subject: 'sandbox: run_command `true`', size: RUNS, metric: 'per command, not sandboxed', value: p, unit: 'ms', digits: 1, note: 'bash --noprofile --norc -c true, median' },
      { subject: 'sandbox: run_command `true`', size: RUNS, metric: 'per command, sandboxed', value: b, unit: 'ms', digits: 1, note: 'bwrap, no network, protected files bound, credential stores hidden, checked after' },
      { subject: 'sandbox: run_command `true`', size: RUNS, metric: 'sandbox cost per command', value: b - p, unit: 'ms', digits: 1,
        target: { op: '<=', value: 25 }, note: `best ${(t.bests[1]! - t.bests[0]!).toFixed(1)} ms (best sandboxed - best plain)` },
      { subject: 'sandbox: run_command `true`', size: RUNS, metric: 'cost with each host judged', value: j - p, unit: 'ms', digits: 1,
        target: { op: '<=', value: 30 }, note: `the command's proxy, the socat bridge, apply-seccomp; best ${(t.bests[2]! - t.bests[0]!).toFixed(1)} ms` },
      { subject: 'sandbox: probe', size: 1, metric: 'once per process', value: probeMs, unit: 'ms', digits: 1, note: 'bwrap runs `true` with the flags of a command' },
    ];
    rows.push(...(await curlRows(base, judged, time)));
    return rows;
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
}

/** `curl` to a real host in a network namespace: plain, and sandboxed through the proxy with the host allowed by a domains rule. */
async function curlRows(
  base: ToolRunContext, judged: (judge: ConnectionJudge) => ToolRunContext,
  time: (context: ToolRunContext, command: string) => Promise<number>,
): Promise<BenchRow[]> {
  const can = canMakeTestHost();
  if (!can.ok) return [{ subject: 'sandbox: curl to a named host', size: 0, metric: 'not measured', value: 0, unit: '', note: can.reason }];
  await initShellParser();
  const host = await startTestHost();
  try {
    const policy = new Policy({ workspace: loadPolicyText(JSON.stringify({ version: 1, rules: [{ tools: ['builtin.run_command'], commands: ['curl *'], domains: [host.names.allowed], decision: 'allow' }] }), '.agentpolicy.jsonc') });
    const command = `curl -sSf -o /dev/null http://${host.names.allowed}/`;
    const judge: ConnectionJudge = async (target) => {
      const d = policy.judgeConnection(command, target, 'bench', { workspaceFolder: base.workspaceFolder, sandbox: true });
      return d.decision === 'allow' ? { allow: true } : { allow: false, reason: d.reason ?? d.decision };
    };
    const ways = [() => time(base, command), () => time(judged(judge), command)];
    for (let i = 0; i < 5; i++) for (const way of ways) await way();
    const plain: number[] = [];
    const boxed: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      plain.push(await ways[0]!());
      boxed.push(await ways[1]!());
    }
    const p = median(plain);
    const b = median(boxed);
    return [
      { subject: 'sandbox: curl to a named host', size: RUNS, metric: 'per command, not sandboxed', value: p, unit: 'ms', digits: 1, note: 'a server in a network namespace, by name' },
      { subject: 'sandbox: curl to a named host', size: RUNS, metric: 'per command, sandboxed', value: b, unit: 'ms', digits: 1, note: 'through the judged proxy; a domains rule allows it' },
      { subject: 'sandbox: curl to a named host', size: RUNS, metric: 'sandbox cost per command', value: b - p, unit: 'ms', digits: 1,
        target: { op: '<=', value: 30 }, note: `best ${(Math.min(...boxed) - Math.min(...plain)).toFixed(1)} ms` },
    ];
  } finally {
    await host.stop();
  }
}
