// `npm run test:e2e`: the end-to-end tests in a real VS Code (code-server + Debian chromium, see
// test/e2e/harness.ts). Makes sure code-server and chromium are here, packages the VSIX, installs
// it once into a fresh extensions dir exactly as a user would, then runs mocha on test/e2e.
// A missing browser or code-server fails the run: it never turns into a skip.
//
//   npm run test:e2e                       all of it
//   npm run test:e2e -- --grep Deny        extra arguments go to mocha
//   AGENT_POLICY_E2E_VSIX=x.vsix npm run test:e2e   test a VSIX built elsewhere (no `npm run package`)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { register as registerTsx } from 'tsx/cjs/api';

const measure = process.argv.includes('--measure');
const args = process.argv.slice(2).filter((a) => a !== '--measure');
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(repo);
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const say = (line) => process.stdout.write(`e2e: ${line}\n`);

// 1. code-server, its Node 24, chromium.
say('checking code-server and chromium (scripts/ensure-vscode.sh)');
// Its progress goes to stderr as it happens (the first install takes minutes); its last line says
// what is missing when it cannot install it.
const ensure = await new Promise((resolve) => {
  const child = spawn('bash', ['scripts/ensure-vscode.sh'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; process.stderr.write(d); });
  child.on('error', (e) => resolve({ status: 1, stdout, stderr: `${stderr}${e.message}\n` }));
  child.on('close', (status) => resolve({ status, stdout, stderr }));
});
if (ensure.status !== 0) {
  const last = ensure.stderr.trim().split('\n').filter(Boolean).at(-1);
  process.stderr.write(`e2e: ${last ?? `scripts/ensure-vscode.sh exited with ${ensure.status}`}\n`);
  process.exit(1);
}
const codeServerDir = ensure.stdout.trim().split('\n').at(-1);

// The real Claude Code CLI, for the test whose hook asks this VS Code (test/e2e/hookAsks.test.ts).
say('checking the agent CLIs (scripts/ensure-agent-clis.sh)');
const clis = spawnSync('bash', ['scripts/ensure-agent-clis.sh'], { stdio: ['ignore', 'ignore', 'inherit'] });
if (clis.status !== 0) {
  process.stderr.write(`e2e: scripts/ensure-agent-clis.sh exited with ${clis.status}: the agent CLIs could not be installed\n`);
  process.exit(1);
}

// 2. The VSIX.
let vsix = process.env.AGENT_POLICY_E2E_VSIX ? path.resolve(process.env.AGENT_POLICY_E2E_VSIX) : '';
if (!vsix) {
  say('packaging (npm run package)');
  const pack = spawnSync('npm', ['run', '--silent', 'package'], { stdio: 'inherit' });
  if (pack.status !== 0) {
    process.stderr.write(`e2e: npm run package failed (exit ${pack.status})\n`);
    process.exit(1);
  }
  vsix = path.join(repo, 'dist', 'agent-policy.vsix');
}

// 3. Install it once into a fresh extensions dir, through the harness (the same code the tests use).
const resultsDir = path.join(repo, 'test-results', 'e2e');
rmSync(resultsDir, { recursive: true, force: true });
mkdirSync(resultsDir, { recursive: true });
process.env.AGENT_POLICY_E2E_CODE_SERVER_DIR = codeServerDir;
process.env.AGENT_POLICY_E2E_RESULTS_DIR = resultsDir;
// The harness is TypeScript (CommonJS, like the tests): load it through tsx.
registerTsx();
const { installVsix } = createRequire(import.meta.url)('../test/e2e/harness.ts');
const extensionsDir = mkdtempSync(path.join(tmpdir(), 'agent-policy-e2e-extensions-'));
say(`installing ${path.relative(repo, vsix)} into ${extensionsDir}`);
let installed;
try {
  installed = installVsix(vsix, extensionsDir);
} catch (e) {
  process.stderr.write(`e2e: ${e.message}\n`);
  rmSync(extensionsDir, { recursive: true, force: true });
  process.exit(1);
}
say(`installed ${installed} (${elapsed()})`);

// 4. The tests.
const mocha = spawn(process.execPath, [
  '--import', 'tsx', 'node_modules/mocha/bin/mocha.js', '--no-config', '--timeout', '240000', '--reporter', 'spec',
  // --measure runs the performance figures (test/e2e/measure.perf.ts) instead of the tests.
  '--spec', measure ? 'test/e2e/measure.perf.ts' : 'test/e2e/**/*.test.ts', ...args,
], {
  stdio: 'inherit',
  env: {
    ...process.env,
    AGENT_POLICY_E2E_CODE_SERVER_DIR: codeServerDir,
    AGENT_POLICY_E2E_EXTENSIONS_DIR: extensionsDir,
    AGENT_POLICY_E2E_RESULTS_DIR: resultsDir,
    AGENT_POLICY_E2E_VSIX: vsix,
  },
});
const forward = (signal) => mocha.kill(signal);
process.on('SIGINT', forward);
process.on('SIGTERM', forward);
const code = await new Promise((resolve) => mocha.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
rmSync(extensionsDir, { recursive: true, force: true });
say(`${code === 0 ? 'passed' : 'FAILED'} in ${elapsed()}; screenshots and logs in ${path.relative(repo, resultsDir)}/`);
process.exit(code);
