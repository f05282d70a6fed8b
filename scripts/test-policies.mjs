// Runs `agentpolicy check` and `agentpolicy test` on every example policy in policies/, as a
// repository's CI would: through the built CLI, judged by its exit codes.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const cli = path.resolve('dist/cli.js');
const files = readdirSync('policies').filter((f) => f.endsWith('.agentpolicy.jsonc')).map((f) => path.join('policies', f));
let failed = 0;
for (const file of files) {
  for (const command of ['check', 'test']) {
    // A managed policy (managed-*.agentpolicy.jsonc) is read as one: its `controls` are a schema error in a workspace policy.
    const flag = path.basename(file).startsWith('managed') ? '--managed' : '--policy';
    const r = spawnSync(process.execPath, [cli, command, flag, file], { encoding: 'utf8' });
    const ok = r.status === 0;
    if (!ok) failed++;
    process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} agentpolicy ${command} ${flag} ${file}\n`);
    if (!ok || command === 'test') process.stdout.write(`${r.stdout}${r.stderr}`.replace(/^/gm, '      '));
  }
}
process.stdout.write(`${files.length * 2 - failed} passed, ${failed} failed\n`);
if (files.length === 0) {
  process.stdout.write('no policies found in policies/\n');
  process.exitCode = 1;
}
if (failed > 0) process.exitCode = 1;
