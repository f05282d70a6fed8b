// `npm run bench`: how fast the policy engine compiles and decides, for generated policies of
// 10 to 10,000 rules, against the targets at 1,000 rules; the runtime's overhead per call, and
// per MCP tool call beyond the server's own time; the sandbox's cost per command; one
// `agentpolicy hook` process against a bare node start. Prints a table; not a test (it never
// fails the build), but a missed target is marked `miss`.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { initShellParser } from '../src/policy/shell/shellParser.js';
import { benchPolicy, type PolicyKind } from './policyBench.js';
import { commandReachBench } from './commandReachBench.js';
import { hookBench } from './hookBench.js';
import { mcpBench } from './mcpBench.js';
import { runtimeBench } from './runtimeBench.js';
import { sandboxBench } from './sandboxBench.js';
import { telemetryBench } from './telemetryBench.js';
import { formatTable, verdict, type BenchRow } from './table.js';

const SIZES = [10, 100, 1_000, 10_000];
const KINDS: PolicyKind[] = ['id-only', 'matchers'];

/** The targets, all at 1,000 rules. */
const TARGETS = {
  'id-only': { compileMs: { op: '<', value: 20 }, decideNs: { op: '<=', value: 1_000 } },
  matchers: { compileMs: { op: '<', value: 20 }, decideNs: { op: '<=', value: 10_000 } },
} as const;

/** `--only policy,runtime`: just those parts (policy, runtime, telemetry, sandbox, hook, mcp); all by default. */
function parts(): (part: string) => boolean {
  const i = process.argv.indexOf('--only');
  if (i === -1) return (part) => part !== 'mcp' || !process.argv.includes('--no-mcp');
  const wanted = new Set((process.argv[i + 1] ?? '').split(','));
  const unknown = [...wanted].filter((w) => !['policy', 'runtime', 'telemetry', 'sandbox', 'hook', 'mcp'].includes(w));
  if (unknown.length > 0 || wanted.size === 0) throw new Error(`--only takes policy, runtime, telemetry, sandbox, hook and mcp, comma-separated (not ${unknown.join(', ')})`);
  return (part) => wanted.has(part);
}

async function main(): Promise<void> {
  const wanted = parts();
  await initShellParser();
  // A real folder: paths are resolved against it and through symbolic links, as in a session.
  const workspaceFolder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-bench-')));
  const started = Date.now();
  const load = (): string => os.loadavg().map((l) => l.toFixed(1)).join(' ');
  const loadBefore = load();
  const rows: BenchRow[] = [];
  try {
    for (const kind of wanted('policy') ? KINDS : []) {
      for (const rules of SIZES) {
        process.stderr.write(`benchmarking ${kind} with ${rules} rules...\n`);
        rows.push(...benchPolicy(kind, rules, {
          workspaceFolder,
          ...(rules === 1_000 ? { targets: TARGETS[kind] } : {}),
          budgetMs: rules >= 10_000 ? 5_000 : 3_000,
          breakdown: kind === 'matchers',
        }));
      }
    }
    if (wanted('policy')) {
      process.stderr.write('benchmarking what commands reach...\n');
      rows.push(...commandReachBench(workspaceFolder));
    }
    if (wanted('runtime')) {
      process.stderr.write('benchmarking the runtime...\n');
      rows.push(...(await runtimeBench()));
    }
    if (wanted('telemetry')) {
      process.stderr.write('benchmarking decisions with telemetry export on and off...\n');
      rows.push(...(await telemetryBench()));
    }
    if (wanted('sandbox')) {
      process.stderr.write('benchmarking the sandbox...\n');
      rows.push(...(await sandboxBench()));
    }
    if (wanted('hook')) {
      process.stderr.write('benchmarking agentpolicy hook...\n');
      rows.push(...hookBench(process.env.AGENTPOLICY_BENCH_CLI ?? path.join('.cache', 'bench-cli')));
    }
    if (wanted('mcp')) {
      process.stderr.write('benchmarking MCP tool calls...\n');
      rows.push(...(await mcpBench()));
    }
  } finally {
    fs.rmSync(workspaceFolder, { recursive: true, force: true });
  }
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  process.stdout.write(`Policy engine and runtime benchmark (node ${process.version}, ${os.cpus().length} x ${cpu})\n`);
  // Times are wall clock: other processes on the machine inflate them.
  process.stdout.write(`load average before ${loadBefore}, after ${load()}\n\n`);
  process.stdout.write(`${formatTable(rows)}\n\n`);
  const judged = rows.filter((r) => r.target);
  const missed = judged.filter((r) => verdict(r) === 'miss');
  process.stdout.write(`targets: ${judged.length - missed.length} of ${judged.length} met${missed.length ? `; missed: ${missed.map((r) => `${r.subject} ${r.metric}`).join(', ')}` : ''}\n`);
  process.stdout.write(`total ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
