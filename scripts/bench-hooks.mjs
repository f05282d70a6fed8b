// `npm run bench:hooks`: what one tool call of Claude Code, Codex, Gemini CLI and Copilot CLI costs
// under our hook, each way (command hook, the decision service over its Unix socket and over
// 127.0.0.1, Claude Code's http hook), beside `node -e 0`, `sh -c true` and curl to an empty http
// server in the same run (bench/hooksBench.ts). Builds the `agentpolicy` executable as shipped
// into .cache/bench-hooks-cli (not dist/), and the bench into .cache/bench-hooks.js.
// `npm run bench:hooks -- --rounds 30` for a shorter run; `--cli DIR` to time another build (e.g. dist);
// `--claude-rounds 0` without the real Claude Code's sessions.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { bundleBench, bundleShippedCli } from './bundle-bench.mjs';

const args = process.argv.slice(2);
if (!args.includes('--cli')) await bundleShippedCli('.cache/bench-hooks-cli');
await bundleBench('bench/hooksBench.ts', '.cache/bench-hooks.js');
// The real Claude Code's sessions install the hooks of the CLI under test (test/hosts/installHook.ts).
const cliDir = args.includes('--cli') ? args[args.indexOf('--cli') + 1] : '.cache/bench-hooks-cli';
const env = { ...process.env, AGENTPOLICY_HOSTS_CLI: path.resolve(cliDir, 'cli.js') };
const r = spawnSync(process.execPath, ['.cache/bench-hooks.js', ...args], { stdio: 'inherit', env });
process.exitCode = r.status ?? 1;
