// Bundles a benchmark with esbuild the way the product is shipped (one CommonJS file, no
// TypeScript loader in the loop) into .cache/, for `npm run bench` and `npm run bench:peers`.
import * as esbuild from 'esbuild';
import { mkdirSync } from 'node:fs';

export async function bundleBench(entry, outfile) {
  mkdirSync('.cache', { recursive: true });
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    mainFields: ['module', 'main'],
    define: { 'import.meta.url': '__importMetaUrl' },
    banner: { js: "var __importMetaUrl = require('url').pathToFileURL(__filename).href;" },
    logLevel: 'warning',
  });
}
