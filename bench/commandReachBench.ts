// What judging what a command reaches beyond its words costs (docs/programs.md, "Paths named in
// commands"): under the shipped balanced policy, in a workspace of 1,200 files, a command naming no
// path, one naming a file, a recursive reader walking its 1,000-entry budget, and `npm run` of a
// package script (package.json read, the script judged as a command).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ToolCall } from '../src/policy/rules/call.js';
import { loadPolicyText, Policy } from '../src/policy/policy.js';
import { measureDecide } from './policyBench.js';
import type { BenchRow } from './table.js';

export function commandReachBench(workspaceFolder: string): BenchRow[] {
  const ws = path.join(workspaceFolder, 'reach');
  for (let d = 0; d < 40; d++) {
    fs.mkdirSync(path.join(ws, 'src', `m${d}`), { recursive: true });
    for (let f = 0; f < 30; f++) fs.writeFileSync(path.join(ws, 'src', `m${d}`, `f${f}.ts`), 'x\n');
  }
  fs.writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ scripts: { build: 'tsc -p . && node scripts/copy.mjs' } }));
  const text = fs.readFileSync(path.join(__dirname, '..', 'policies', 'balanced.agentpolicy.jsonc'), 'utf8');
  const policy = new Policy({ workspace: loadPolicyText(text, path.join(ws, '.agentpolicy.jsonc')) });
  const options = { workspaceFolder: ws, trusted: true, sandbox: true };
  const run = (command: string): ToolCall => ({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command }, agent: 'main' }) as ToolCall;
  const rows: BenchRow[] = [];
  const cases: Array<[string, string, number | undefined]> = [
    ['a command naming no path', 'git status', 200_000],
    ['a command naming a file', 'cat src/m1/f1.ts', 500_000],
    ['a recursive reader (1,000 entries walked)', 'grep -rn TODO src', 10_000_000],
    ['npm run of a package script', 'npm run build', 2_000_000],
  ];
  for (const [metric, command, target] of cases) {
    const s = measureDecide(policy, [run(command)], options, { batches: 30, batchSize: 20, budgetMs: 1500 });
    rows.push({ subject: 'command reach', size: 1, metric, value: s.medianNs, unit: 'ns/call', note: `\`${command}\`, balanced policy`, ...(target !== undefined ? { target: { op: '<=', value: target } } : {}) });
  }
  return rows;
}
