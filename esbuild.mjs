// Bundles each entry to one CommonJS file in dist/ (vscode external), copies the shell
// parser's wasm beside the bundles, and writes the JSON Schemas generated from zod.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const outdir = 'dist';

const entries = [
  // The extension notes when its bundle starts to run, so activation time includes loading it.
  // Its last line notes when evaluation ended: activation = evaluation + activate(), as VS Code counts it.
  { in: 'src/vscode/extension.ts', out: 'extension', banner: 'var __agentPolicyLoadStart = performance.now();', footer: 'var __agentPolicyLoadEnd = performance.now();' },
  { in: 'src/cli/main.ts', out: 'cli', banner: '#!/usr/bin/env node' },
  { in: 'src/entries/policy.ts', out: 'policy' },
  { in: 'src/entries/runtime.ts', out: 'runtime' },
];

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  // jsonc-parser's UMD build hides its requires from bundlers; its ESM build bundles cleanly.
  mainFields: ['module', 'main'],
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  outdir,
  // web-tree-sitter is ESM and reads import.meta.url; in a CommonJS bundle it is this file.
  define: { 'import.meta.url': '__importMetaUrl' },
};
const importMetaUrl = "var __importMetaUrl = require('url').pathToFileURL(__filename).href;";

mkdirSync(outdir, { recursive: true });
const contexts = await Promise.all(
  entries.map((e) =>
    esbuild.context({ ...common, entryPoints: [{ in: e.in, out: e.out }], banner: { js: [e.banner, importMetaUrl].filter(Boolean).join('\n') }, ...(e.footer ? { footer: { js: e.footer } } : {}) }),
  ),
);

for (const file of ['web-tree-sitter/web-tree-sitter.wasm', 'tree-sitter-bash/tree-sitter-bash.wasm']) {
  copyFileSync(require.resolve(file), path.join(outdir, path.basename(file)));
}

if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
  const { policyJsonSchema, agentsJsonSchema } = require(path.resolve(outdir, 'policy.js'));
  writeFileSync(path.join(outdir, 'agentpolicy.schema.json'), `${JSON.stringify(policyJsonSchema(), null, 2)}\n`);
  writeFileSync(path.join(outdir, 'agents.schema.json'), `${JSON.stringify(agentsJsonSchema(), null, 2)}\n`);
}
