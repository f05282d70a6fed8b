// The program knowledge (src/policy/shell/programs/, docs/programs.md) under the policy a team writes
// to let an agent read and search the code: git, find, awk, sed, tar, rg, sort, make and the
// interpreters allowed by their first word. Everyday invocations stay allowed; the tricks that make
// one of them run a program, run code or write a file are not (they fall to the default, ask),
// unless a rule's pattern names the option; a deny on an option holds. False positives fail like bypasses.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../cli/cliRun.js';
import { loadPolicyText, Policy } from '../../../src/policy/policy.js';
import { initShellParser } from '../../../src/policy/shell/shellParser.js';
import { EVERYDAY, TRICKS } from './programCases.js';

const READERS = ['git', 'find', 'awk', 'gawk', 'mawk', 'sed', 'tar', 'rg', 'sort', 'make', 'python3', 'node', 'perl', 'ruby', 'echo', 'cat', 'printenv', 'env', 'sh', 'bash'];
const POLICY = JSON.stringify({
  version: 1,
  rules: [{ id: 'readers', tools: ['builtin.run_command'], commands: READERS.map((p) => `${p} *`), decision: 'allow' }],
  default: 'ask',
});

function decide(policy: Policy, command: string): string {
  const d = policy.decide({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command }, agent: 'main' } as never, { workspaceFolder: '/ws', trusted: true, sandbox: true });
  return d.decision;
}

describe('program knowledge: everyday uses stay allowed, option tricks do not', () => {
  let policy: Policy;
  before(async () => {
    await initShellParser();
    policy = new Policy({ workspace: loadPolicyText(POLICY, '/ws/.agentpolicy.jsonc') });
  });

  it(`keeps ${EVERYDAY.length} everyday invocations allowed`, () => {
    const refused = EVERYDAY.filter((c) => decide(policy, c) !== 'allow');
    assert.deepEqual(refused, [], 'false positives: everyday commands the table no longer allows');
  });

  it(`allows none of ${TRICKS.length} tricks that run a program, run code or write a file`, () => {
    const allowed = TRICKS.filter(([c]) => decide(policy, c) === 'allow').map(([c, row]) => `${row}: ${c}`);
    assert.deepEqual(allowed, [], 'bypasses: tricks still allowed by first word');
  });

  it('a pattern that names the option allows it on purpose; a deny on it holds', () => {
    const named = new Policy({ workspace: loadPolicyText(JSON.stringify({
      version: 1,
      rules: [
        { tools: ['builtin.run_command'], commands: ['sed -i *', 'find * -delete', 'git -c core.pager=less *', 'git *'], decision: 'allow' },
      ],
      default: 'ask',
    }), '/ws/.agentpolicy.jsonc') });
    assert.equal(decide(named, "sed -i 's/a/b/' f"), 'allow');
    assert.equal(decide(named, 'find build -delete'), 'allow');
    assert.equal(decide(named, 'git -c core.pager=less log'), 'allow');
    assert.equal(decide(named, "git -c core.pager='sh -c x' log"), 'ask', 'the pattern names core.pager=less, not any pager');
    assert.equal(decide(named, "sed -n '1e id' f"), 'ask', 'naming -i does not name the e command');
  });

  it('explain names the row that kept an allow from matching', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'programs-explain-'));
    try {
      const file = path.join(dir, 'p.jsonc');
      fs.writeFileSync(file, POLICY);
      const r = await runCli(['explain', '--policy', file, '--tool', 'builtin.run_command', '--input', JSON.stringify({ command: 'find . -name x -delete' })], dir);
      assert.match(r.out.join('\n'), /commands did not match \(no pattern names what it does: -delete deletes every file and folder it finds \[find\.delete\]\)/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
