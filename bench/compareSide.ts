// One engine's side of `npm run bench:compare` (scripts/bench-compare.mjs): bundled once from the
// working tree and once from an earlier commit, both loaded into one process, which alternates
// their batches so that the load of a shared machine weighs on both alike.
import { generate as peerGenerate, ourPolicy, toCase } from './peerWorkloads.js';
import { generate, materialise } from './policyBench.js';
import { runtimeBench } from './runtimeBench.js';
import { forgetCompiledGlobs } from '../src/policy/globs/globs.js';
import type { ToolCall } from '../src/policy/rules/call.js';
import { loadPolicyText, Policy, type DecideOptions } from '../src/policy/policy.js';
import { initShellParser } from '../src/policy/shell/shellParser.js';

export async function init(): Promise<void> {
  await initShellParser();
}

/** Decides (or compiles) `k` items of a workload per call: id, path, path-nofollow, command, input, mixed, compile, peer-plain, peer-compound. */
export function workload(name: string, rules: number, workspaceFolder: string): (k: number) => void {
  if (name === 'compile') {
    const text = generate('matchers', rules).text;
    return (k) => {
      for (let i = 0; i < k; i++) {
        forgetCompiledGlobs();
        loadPolicyText(text, 'bench.agentpolicy.jsonc');
      }
    };
  }
  if (name === 'peer-plain' || name === 'peer-compound') {
    // bench:peers' command pools (`npm run task5 -- --shard 3`; two joined, or with `$(date +%s)`), on its command-prefix rules.
    const g = peerGenerate(['command'], rules, workspaceFolder, new Set());
    const policy = new Policy({ workspace: loadPolicyText(ourPolicy(g.rules), 'bench.agentpolicy.jsonc') });
    return deciding(policy, (name === 'peer-plain' ? g.plain : g.compound).map((c) => toCase(c).ours), { workspaceFolder });
  }
  const generated = generate(name === 'id' ? 'id-only' : 'matchers', rules);
  materialise(workspaceFolder, generated.files);
  const policy = new Policy({ workspace: loadPolicyText(generated.text, 'bench.agentpolicy.jsonc') });
  const isPath = (id: string): boolean => id.startsWith('builtin.') && id !== 'builtin.run_command';
  const calls = generated.calls.filter((c) => {
    if (name.startsWith('path')) return isPath(c.tool.id);
    if (name === 'command') return c.tool.id === 'builtin.run_command';
    if (name === 'input') return c.tool.id.startsWith('mcp.');
    return true;
  });
  return deciding(policy, calls, { workspaceFolder, followSymlinks: name !== 'path-nofollow' });
}

/** Decides `k` of the calls per run, in turn. */
function deciding(policy: Policy, calls: readonly ToolCall[], options: DecideOptions): (k: number) => void {
  let next = 0;
  return (k) => {
    for (let i = 0; i < k; i++) {
      policy.decide(calls[next]!, options);
      next = (next + 1) % calls.length;
    }
  };
}

/** µs per auto-allowed call through a scripted session, without and with the audit file. */
export async function runtime(): Promise<{ plain: number; audit: number }> {
  const rows = await runtimeBench();
  const value = (metric: string): number => rows.find((r) => r.metric === metric)!.value;
  return { plain: value('per call (no audit)'), audit: value('per call (audit file)') };
}
