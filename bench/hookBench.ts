// The cost of one `agentpolicy hook` call as a host pays it: a new process reading the host's
// JSON, judging it with a 1,000-rule workspace policy and answering, against a bare `node -e 0`
// started the same way, one after the other so the machine's load falls on both alike. The
// executable is the shipped bundle (scripts/bench.mjs builds it into .cache/bench-cli).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateMatchers } from './policyBench.js';
import { median, type BenchRow } from './table.js';

const RUNS = 25;

export function hookBench(cliDir: string): BenchRow[] {
  const cli = path.resolve(cliDir, 'cli.js');
  if (!fs.existsSync(cli)) return [{ subject: 'hook', size: 0, metric: 'not measured', value: 0, unit: '', note: `no ${cli}` }];
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-hook-bench-')));
  try {
    const workspace = path.join(root, 'proj');
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), generateMatchers(1_000).text);
    const env = { ...process.env, XDG_STATE_HOME: path.join(root, 'state') };
    const stdin = (tool: string, input: unknown): string => JSON.stringify({ session_id: 'bench', cwd: workspace, hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input });
    const calls = {
      command: stdin('Bash', { command: 'npm run task4 --silent' }),
      compound: stdin('Bash', { command: 'git status && npm test | tee out.log' }),
      // Quotes and a plain $(...) in arguments: the second fast path's, no shell parser to load.
      quoted: stdin('Bash', { command: 'git commit -m "fix: read the words" && git log --since "$(date +%s)"' }),
      // A redirection: the shell parser (WebAssembly) is loaded.
      parsed: stdin('Bash', { command: 'git log --oneline > /dev/null 2>&1' }),
      path: stdin('Write', { file_path: path.join(workspace, 'area3/src/a.ts'), content: '' }),
    };
    const time = (args: string[], input?: string): number => {
      const start = process.hrtime.bigint();
      const r = spawnSync(process.execPath, args, { input: input ?? '', env, cwd: workspace, encoding: 'utf8' });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
      return ms;
    };
    const hook = (input: string): number => time([cli, 'hook', '--agent', 'claude'], input);
    // The first call after the policy changed validates it (the schema is built); later calls reuse that.
    const first = hook(calls.command);
    for (let i = 0; i < 3; i++) {
      time(['-e', '0']);
      hook(calls.command);
    }
    const bare: number[] = [];
    const byCall: Record<keyof typeof calls, number[]> = { command: [], compound: [], quoted: [], parsed: [], path: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const [name, input] of Object.entries(calls) as Array<[keyof typeof calls, string]>) {
        bare.push(time(['-e', '0']));
        byCall[name].push(hook(input));
      }
    }
    const node = median(bare);
    const rows: BenchRow[] = [
      { subject: 'hook: new process', size: RUNS * 5, metric: 'node -e 0', value: node, unit: 'ms', digits: 1, note: 'the floor: a bare node start, median' },
      { subject: 'hook: new process', size: 1, metric: 'first call after the policy changed', value: first, unit: 'ms', digits: 1, note: '1,000 rules validated and kept for later calls' },
    ];
    for (const [name, values] of Object.entries(byCall)) {
      const m = median(values);
      rows.push({ subject: 'hook: new process', size: RUNS, metric: `agentpolicy hook, ${name} call`, value: m, unit: 'ms', digits: 1, note: `${(m / node).toFixed(2)} x node -e 0; 1,000 rules` });
      rows.push({ subject: 'hook: new process', size: RUNS, metric: `${name} call / node -e 0`, value: m / node, unit: 'x', digits: 2, target: { op: '<=', value: 2 } });
    }
    return rows;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
