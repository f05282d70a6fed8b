// The main job on the embedded default: the sample workspace's agent runs on the scripted
// model, offline, against the sample policy. It runs in a copy of the sample, so the
// repository is never changed, and asks are answered "allow" as a person approving would.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const workspace = mkdtempSync(path.join(tmpdir(), 'agent-policy-sample-'));
cpSync('policies/sample-workspace', workspace, { recursive: true });
const cli = path.resolve('dist/cli.js');
const run = (args) => {
  process.stdout.write(`\n$ agentpolicy ${args.join(' ')}\n`);
  return spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit', cwd: workspace }).status;
};
run(['check']);
run(['explain', '--tool', 'builtin.run_command', '--input', '{"command":"npm test && curl https://example.com"}']);
const status = run(['run', '--prompt', 'What do the Atlas and the Nova cost?', '--answer', 'allow', '--audit', 'audit.jsonl']);
run(['audit', 'audit.jsonl']);
process.stdout.write(`\nThe sample workspace ran in ${workspace}\n`);
process.exitCode = status ?? 1;
