// Programs that run a command given in their words (flock, script, npx, env -S, make --eval,
// parallel: src/policy/shell/shellUnwrap.ts, shellRunners.ts;
// watch is read the same way, but repeats its command until stopped and wants a terminal: not run here),
// against the real programs: each runs the command (seen in a scratch folder), and a deny on that
// command holds through them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../../src/policy/policy.js';
import { initShellParser } from '../../../src/policy/shell/shellParser.js';

const CASES: readonly string[] = [
  'flock lock touch pwned',
  "flock lock -c 'touch pwned'",
  "script -qc 'touch pwned' /dev/null",
  "script -q --command 'touch pwned' /dev/null",
  "npx -c 'touch pwned'",
  "env -S 'touch pwned'",
  "env --split-string='sh -c \"touch pwned\"'",
  "make --eval 'x:;touch pwned' x",
  "make -E 'x:\n\ttouch pwned' x",
  'parallel touch ::: pwned',
];

describe('programs that run a command in their words, against the real programs', function () {
  this.timeout(60_000);
  let root: string;
  let policy: Policy;
  before(async () => {
    await initShellParser();
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'unwrap-real-')));
    policy = new Policy({ workspace: loadPolicyText(JSON.stringify({
      version: 1,
      rules: [
        { tools: ['builtin.run_command'], commands: ['touch *'], decision: 'deny' },
        { tools: ['builtin.run_command'], commands: ['flock *', 'script *', 'npx *', 'env *', 'make *', 'parallel *'], decision: 'allow' },
      ],
      default: 'ask',
    }), '/ws/.agentpolicy.jsonc') });
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  for (const [k, command] of CASES.entries()) {
    it(command, function () {
      const program = command.split(' ')[0]!;
      if (spawnSync('bash', ['-c', `command -v ${program}`]).status !== 0) {
        console.warn(`    skipped: ${program} is not installed here`);
        this.skip();
      }
      const d = policy.decide({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command }, agent: 'main' } as never, { workspaceFolder: '/ws', trusted: true, sandbox: true });
      assert.equal(d.decision, 'deny', 'the deny on touch does not hold through it');
      const dir = path.join(root, `case-${k}`);
      fs.mkdirSync(dir);
      const r = spawnSync('bash', ['-c', command], { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, TERM: 'xterm', npm_config_cache: path.join(dir, '.npm'), npm_config_offline: 'true' }, encoding: 'utf8', timeout: 30_000, input: '' });
      assert.ok(fs.existsSync(path.join(dir, 'pwned')), `${program} did not run the command (exit ${r.status}): ${r.stderr}`);
    });
  }
});
