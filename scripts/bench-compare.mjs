// `npm run bench:compare -- [--base <commit>] [--seconds N] workload[:rules] ...`: the engine of
// the working tree against the one of an earlier commit (default main), both in one process.
// Batches of about 5 ms alternate between the two; a figure is the median CPU time per item
// over the batches after a warm-up third, and the ratio the median of adjacent batches'
// new ÷ base, which load on a shared machine moves little. Workloads: id, path, path-nofollow,
// command, input, mixed, compile (ms per compile of matcher rules), runtime (rounds of the
// runtime benchmark in turn), peer-plain and peer-compound (bench:peers' command pools, alone). A workspace deeper than /tmp: TMPDIR=/some/deep/folder.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleBench } from './bundle-bench.mjs';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  if (i === -1) return fallback;
  const [value] = args.splice(i, 2).slice(1);
  return value;
};
const baseRef = option('--base', 'main');
const seconds = Number(option('--seconds', '8'));
const workloads = args.length > 0 ? args : ['id:1000', 'path:1000', 'path-nofollow:10000', 'mixed:1000', 'mixed:10000'];

const sha = execFileSync('git', ['rev-parse', '--short', baseRef]).toString().trim();
// Each run in its own folder (removed at the end), so two runs at once never use each other's
// bundles; the commit's sources are extracted into it too, with the working tree's side file.
mkdirSync(path.resolve('.cache', 'compare'), { recursive: true });
const dir = mkdtempSync(path.resolve('.cache', 'compare', 'run-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const baseTree = path.join(dir, sha);
mkdirSync(baseTree, { recursive: true });
execFileSync('sh', ['-c', `git archive ${sha} src bench | tar -x -C ${baseTree}`]);
// The side file of the working tree, in both: an earlier commit may not have it.
copyFileSync('bench/compareSide.ts', path.join(baseTree, 'bench', 'compareSide.ts'));
await bundleBench(path.join(baseTree, 'bench', 'compareSide.ts'), path.join(dir, `base-${sha}.js`));
await bundleBench('bench/compareSide.ts', path.join(dir, 'work.js'));
for (const file of ['web-tree-sitter/web-tree-sitter.wasm', 'tree-sitter-bash/tree-sitter-bash.wasm']) {
  copyFileSync(require.resolve(file), path.join(dir, path.basename(file)));
}
const base = require(path.join(dir, `base-${sha}.js`));
const work = require(path.join(dir, 'work.js'));
await base.init();
await work.init();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const cpuOf = (run, k, collect) => {
  // A compile's batch starts from a collected heap (as bench/policyBench.ts's measureCompile): else it pays for the other side's garbage.
  if (collect) globalThis.gc?.();
  const before = process.cpuUsage();
  run(k);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / k;
};
process.stdout.write(`working tree against ${baseRef} (${sha}); node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'CPU'}\n`);
for (const spec of workloads) {
  const [name, rulesText] = spec.split(':');
  const load = os.loadavg()[0].toFixed(1);
  if (name === 'runtime') {
    const rounds = { base: [], work: [] };
    for (let i = 0; i < 6; i++) {
      const order = i % 2 ? [['work', work], ['base', base]] : [['base', base], ['work', work]];
      for (const [side, engine] of order) rounds[side].push(await engine.runtime());
    }
    for (const key of ['plain', 'audit']) {
      const ratio = median(rounds.work.map((r, i) => r[key] / rounds.base[i][key]));
      process.stdout.write(`runtime (${key === 'plain' ? 'no audit' : 'audit file'}): base ${median(rounds.base.map((r) => r[key])).toFixed(2)} µs, work ${median(rounds.work.map((r) => r[key])).toFixed(2)} µs per call (wall clock, 6 rounds); work/base ${ratio.toFixed(2)}; load ${load}\n`);
    }
    continue;
  }
  const rules = Number(rulesText ?? 1000);
  const folders = [0, 1].map(() => realpathSync(mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-compare-'))));
  try {
    const runBase = base.workload(name, rules, folders[0]);
    const runWork = work.workload(name, rules, folders[1]);
    const probe = name === 'compile' ? 2 : 2000;
    runBase(probe);
    runWork(probe);
    const t0 = process.hrtime.bigint();
    runBase(probe);
    const k = Math.max(1, Math.round(5e6 / (Number(process.hrtime.bigint() - t0) / probe)));
    const warm = Date.now() + (seconds * 1000) / 3;
    const end = Date.now() + seconds * 1000;
    const times = { base: [], work: [] };
    const ratios = [];
    for (let i = 0; Date.now() < end; i++) {
      const first = i % 2 ? 'work' : 'base';
      const a = cpuOf(first === 'base' ? runBase : runWork, k, name === 'compile');
      const b = cpuOf(first === 'base' ? runWork : runBase, k, name === 'compile');
      if (Date.now() < warm) continue;
      const [baseTime, workTime] = first === 'base' ? [a, b] : [b, a];
      times.base.push(baseTime);
      times.work.push(workTime);
      ratios.push(workTime / baseTime);
    }
    const unit = name === 'compile' ? 'ms' : 'µs';
    const scale = name === 'compile' ? 1000 : 1;
    process.stdout.write(`${name} at ${rules} rules: base ${(median(times.base) / scale).toFixed(2)} ${unit}, work ${(median(times.work) / scale).toFixed(2)} ${unit} CPU per item (${times.base.length} batches of ${k} each); work/base ${median(ratios).toFixed(2)}; load ${load}\n`);
  } finally {
    for (const f of folders) rmSync(f, { recursive: true, force: true });
  }
}
