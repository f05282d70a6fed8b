// Bundles a benchmark with esbuild the way the product is shipped (one CommonJS file, no
// TypeScript loader in the loop) into .cache/, for `npm run bench` and `npm run bench:peers`.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bundleOptions, CLI_BUNDLES_SHIPPED, entries } from './bundles.mjs';

const require = createRequire(import.meta.url);

/** The `agentpolicy` executable and the bundles it loads, built as shipped (minified), into `outdir`. */
export async function bundleShippedCli(outdir) {
  mkdirSync(outdir, { recursive: true });
  const wanted = new Set(CLI_BUNDLES_SHIPPED);
  await Promise.all(entries.filter((e) => wanted.has(e.out)).map((e) => esbuild.build({ ...bundleOptions(e, { production: true }), outdir })));
  for (const file of ['web-tree-sitter/web-tree-sitter.wasm', 'tree-sitter-bash/tree-sitter-bash.wasm']) {
    copyFileSync(require.resolve(file), path.join(outdir, path.basename(file)));
  }
}

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
