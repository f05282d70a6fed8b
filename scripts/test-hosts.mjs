// `npm run test:hosts`: `agentpolicy hook` under the real agent CLIs (Claude Code, Codex, Gemini
// CLI, Copilot CLI), offline, each against a scripted model on 127.0.0.1 (test/hosts). Installs
// the pinned CLIs into the ignored .cache/agent-clis (scripts/ensure-agent-clis.sh; never
// dependencies), builds dist/ (the hooks run dist/cli.js), then runs mocha on test/hosts only.
// A CLI that cannot be installed fails the run; a test skips a host only when its CLI is missing.
//
//   npm run test:hosts                      all of it
//   npm run test:hosts -- --grep Codex      extra arguments go to mocha
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(repo);
const require = createRequire(import.meta.url);
const say = (line) => process.stdout.write(`test:hosts: ${line}\n`);

say('checking the agent CLIs (scripts/ensure-agent-clis.sh)');
const ensure = spawnSync('bash', ['scripts/ensure-agent-clis.sh'], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
if (ensure.status !== 0) {
  process.stderr.write(`test:hosts: scripts/ensure-agent-clis.sh exited with ${ensure.status}: the agent CLIs could not be installed\n`);
  process.exit(1);
}
say(`agent CLIs in ${ensure.stdout.trim().split('\n').at(-1)}`);

say('building dist/ (node esbuild.mjs)');
const build = spawnSync(process.execPath, ['esbuild.mjs'], { stdio: 'inherit' });
if (build.status !== 0) {
  process.stderr.write(`test:hosts: the build failed (exit ${build.status})\n`);
  process.exit(1);
}

// --no-config: the repository's .mocharc.json is the unit tests', which leave test/hosts out.
const mocha = spawnSync(
  process.execPath,
  [require.resolve('mocha/bin/mocha.js'), '--no-config', '--import=tsx', '--timeout', '120000', '--reporter', 'spec', 'test/hosts/**/*.test.ts', ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
process.exit(mocha.status ?? 1);
