// `npm run bench`: bundles the benchmarks with esbuild the way the product is shipped (one
// CommonJS file, no TypeScript loader in the loop) and runs them with the GC exposed.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

mkdirSync('.cache', { recursive: true });
await esbuild.build({
  entryPoints: ['bench/run.ts'],
  outfile: '.cache/bench.js',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  mainFields: ['module', 'main'],
  define: { 'import.meta.url': '__importMetaUrl' },
  banner: { js: "var __importMetaUrl = require('url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
const r = spawnSync(process.execPath, ['--expose-gc', '.cache/bench.js', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exitCode = r.status ?? 1;
