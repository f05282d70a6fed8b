// The bundles esbuild.mjs builds, and their options: one CommonJS file per entry in dist/, vscode
// external. test/vscode/extensionBundle.test.ts builds the extension's two bundles with the same
// options to read what each holds.
import path from 'node:path';

export const outdir = 'dist';

// web-tree-sitter is ESM and reads import.meta.url; in a CommonJS bundle it is this file.
const importMetaUrl = "var __importMetaUrl = require('url').pathToFileURL(__filename).href;";

/**
 * The extension's small entry loads its core at run time from the second bundle beside it
 * (`require('./core.js')` becomes `require('./extensionCore.js')`), never inlines it.
 */
const coreBesideEntry = {
  name: 'core-beside-entry',
  setup(build) {
    build.onResolve({ filter: /^\.\/core\.js$/ }, (args) =>
      args.importer.endsWith(path.join('src', 'vscode', 'extension.ts')) ? { path: './extensionCore.js', external: true } : undefined,
    );
  },
};

/**
 * The `agentpolicy` executable is a small dispatcher: it loads one of two bundles beside it, the
 * hook's (`require('./hookMain.js')` → `./hook.js`, the policy engine only: a host starts it for
 * every tool call) or every other command's (`require('./agentpolicy.js')` → `./commands.js`).
 */
const CLI_BUNDLES = { './hookMain.js': './hook.js', './agentpolicy.js': './commands.js' };
const bundlesBesideCli = {
  name: 'bundles-beside-cli',
  setup(build) {
    build.onResolve({ filter: /^\.\/(hookMain|agentpolicy)\.js$/ }, (args) =>
      args.importer.endsWith(path.join('src', 'cli', 'main.ts')) ? { path: CLI_BUNDLES[args.path], external: true } : undefined,
    );
  },
};

/**
 * The hook's bundle leaves the policy schema (zod: two thirds of the bundle) to a bundle of its
 * own, `policySchema.js`, loaded only when a policy text has not been validated before.
 */
const schemaBesideHook = {
  name: 'schema-beside-hook',
  setup(build) {
    build.onResolve({ filter: /^\.\/schema\.js$/ }, (args) =>
      args.importer.endsWith(path.join('src', 'policy', 'policy.ts')) && args.kind === 'require-call' ? { path: './policySchema.js', external: true } : undefined,
    );
  },
};

/**
 * The hook's bundle loads the sandbox probe (and the sandbox engine code it pulls in) from a
 * bundle of its own, `sandboxProbe.js`, only when an allowed command is to be sandboxed
 * (src/hooks/judge/hookSandbox.ts).
 */
const probeBesideHook = {
  name: 'probe-beside-hook',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/runtime\/sandboxProbe\.js$/ }, (args) =>
      args.importer.endsWith(path.join('src', 'hooks', 'hookSandbox.ts')) && args.kind === 'require-call' ? { path: './sandboxProbe.js', external: true } : undefined,
    );
  },
};

/**
 * The OpenTelemetry SDK (src/runtime/telemetry/otelExport.ts) is a bundle of its own,
 * `telemetryExport.js`, that every other bundle loads only in a process where telemetry is on
 * (auditTelemetry.ts): no bundle grows by the SDK, and no process without telemetry loads it.
 */
const telemetryBesideBundle = {
  name: 'telemetry-beside-bundle',
  setup(build) {
    build.onResolve({ filter: /^\.\/otelExport\.js$/ }, (args) =>
      args.importer.endsWith(path.join('src', 'runtime', 'telemetry', 'auditTelemetry.ts')) && args.kind === 'require-call' ? { path: './telemetryExport.js', external: true } : undefined,
    );
  },
};

export const entries = [
  // The extension notes when its bundle starts to run, so activation time includes loading it.
  // Its last line notes when evaluation ended: activation = evaluation + activate(), as VS Code counts it.
  // It needs no import.meta.url: nothing in it reads files.
  {
    in: 'src/vscode/extension.ts', out: 'extension', importMeta: false, plugins: [coreBesideEntry],
    banner: 'var __agentPolicyLoadStart = performance.now();', footer: 'var __agentPolicyLoadEnd = performance.now();',
  },
  { in: 'src/vscode/core.ts', out: 'extensionCore' },
  { in: 'src/cli/main.ts', out: 'cli', banner: '#!/usr/bin/env node', importMeta: false, plugins: [bundlesBesideCli] },
  { in: 'src/cli/agentpolicy.ts', out: 'commands' },
  { in: 'src/cli/hookMain.ts', out: 'hook', plugins: [schemaBesideHook, probeBesideHook] },
  { in: 'src/policy/file/schema.ts', out: 'policySchema' },
  { in: 'src/runtime/sandbox/sandboxProbe.ts', out: 'sandboxProbe' },
  { in: 'src/runtime/telemetry/otelExport.ts', out: 'telemetryExport' },
  { in: 'src/entries/policy.ts', out: 'policy' },
  { in: 'src/entries/runtime.ts', out: 'runtime' },
];

/**
 * The bundles the `agentpolicy` executable needs beside it (its dispatcher and what it loads): the
 * VSIX ships them (.vscodeignore), the hook benchmark builds them (scripts/bundle-bench.mjs).
 */
export const CLI_BUNDLES_SHIPPED = ['cli', 'hook', 'commands', 'policySchema', 'sandboxProbe', 'telemetryExport'];

/** esbuild's options for one entry of `entries`. */
export function bundleOptions(entry, { production = false } = {}) {
  const banner = [entry.banner, entry.importMeta === false ? undefined : importMetaUrl].filter(Boolean).join('\n');
  return {
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
    define: { 'import.meta.url': '__importMetaUrl' },
    entryPoints: [{ in: entry.in, out: entry.out }],
    ...(banner ? { banner: { js: banner } } : {}),
    ...(entry.footer ? { footer: { js: entry.footer } } : {}),
    plugins: [...(entry.plugins ?? []), telemetryBesideBundle],
  };
}
