// Bundles each entry of scripts/bundles.mjs to one CommonJS file in dist/ (vscode external),
// copies the shell parser's wasm beside the bundles, and writes the JSON Schemas generated from zod.
import * as esbuild from 'esbuild';
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bundleOptions, entries, outdir } from './scripts/bundles.mjs';

const require = createRequire(import.meta.url);
const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

mkdirSync(outdir, { recursive: true });
const contexts = await Promise.all(entries.map((e) => esbuild.context(bundleOptions(e, { production }))));

for (const file of ['web-tree-sitter/web-tree-sitter.wasm', 'tree-sitter-bash/tree-sitter-bash.wasm']) {
  copyFileSync(require.resolve(file), path.join(outdir, path.basename(file)));
}
// The sandbox engine's seccomp helper (src/runtime/sandbox/sandboxNetwork.ts looks for it beside the bundle).
const engine = path.dirname(require.resolve('@anthropic-ai/sandbox-runtime/package.json'));
for (const arch of ['x64', 'arm64']) {
  const to = path.join(outdir, 'vendor', 'seccomp', arch);
  mkdirSync(to, { recursive: true });
  copyFileSync(path.join(engine, 'vendor', 'seccomp', arch, 'apply-seccomp'), path.join(to, 'apply-seccomp'));
  chmodSync(path.join(to, 'apply-seccomp'), 0o755);
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
