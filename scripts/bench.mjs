// `npm run bench`: bundles the benchmarks the way the product is shipped (scripts/bundle-bench.mjs)
// and runs them with the GC exposed.
import { spawnSync } from 'node:child_process';
import { bundleBench, bundleShippedCli } from './bundle-bench.mjs';

await bundleBench('bench/run.ts', '.cache/bench.js');
await bundleShippedCli('.cache/bench-cli');
const r = spawnSync(process.execPath, ['--expose-gc', '.cache/bench.js', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exitCode = r.status ?? 1;
