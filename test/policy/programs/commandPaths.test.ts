// Paths named in commands (docs/programs.md): the rules on `paths` judge the files a command's
// words name as they judge the read tool, so one deny on `**/.env` or on the home's `.ssh` denies
// `cat .env` and `cp ~/.ssh/id_rsa x` like the read tool; everyday commands on workspace files stay allowed.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../../src/policy/policy.js';
import { initShellParser } from '../../../src/policy/shell/shellParser.js';

describe('paths named in commands are judged by the paths rules', () => {
  let ws: string;
  let policy: Policy;
  const home = os.homedir();

  before(async () => {
    await initShellParser();
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cmd-paths-')));
    fs.writeFileSync(path.join(ws, '.env'), 'TOKEN=x\n');
    fs.mkdirSync(path.join(ws, 'src'));
    fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'x\n');
    policy = new Policy({ workspace: loadPolicyText(JSON.stringify({
      version: 1,
      rules: [
        { id: 'secrets', paths: ['**/.env', `${home}/.ssh/**`, `${home}/.aws/**`, `${home}/.zsh_history`], decision: 'deny', reason: 'secrets stay' },
        { id: 'history', tools: ['builtin.read_file'], paths: [`${home}/.bash_history`], decision: 'ask' },
        { id: 'outside', tools: ['builtin.write_file'], paths: ['/**', '!**'], decision: 'deny', reason: 'no writes outside the workspace' },
        { id: 'lock', tools: ['builtin.write_file'], paths: ['package-lock.json'], decision: 'ask' },
        { id: 'readers', tools: ['builtin.run_command'], commands: ['cat *', 'cp *', 'grep *', 'head *', 'tee *', 'ls *', 'wc *', 'touch *', 'sed -i *', 'sort *', 'sort -o *', 'mv *', 'dd *'], decision: 'allow' },
      ],
      default: 'ask',
    }), path.join(ws, '.agentpolicy.jsonc')) });
  });
  after(() => fs.rmSync(ws, { recursive: true, force: true }));

  const decide = (command: string): { decision: string; reason?: string } => {
    const d = policy.decide({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command }, agent: 'main' } as never, { workspaceFolder: ws, trusted: true, sandbox: true });
    return { decision: d.decision, ...(d.reason !== undefined ? { reason: d.reason } : {}) };
  };

  it('denies a command naming a denied path, however it is written', () => {
    for (const command of ['cat .env', 'cat ./.env', `cat ${ws}/.env`, 'cat src/../.env', 'cp ~/.ssh/id_rsa x', 'cat ~/.aws/credentials', 'grep token ~/.zsh_history', 'head -3 "$PWD"/x .env', "cat '.env'", 'tee -a ~/.ssh/config']) {
      assert.equal(decide(command).decision, 'deny', command);
    }
    assert.match(decide('cat .env').reason!, /\.env is a path workspace rule "secrets" denies \(secrets stay\), and the command names it/);
  });

  it('asks where a paths rule asks about the read', () => {
    assert.equal(decide('cat ~/.bash_history').decision, 'ask');
  });

  it('leaves everyday commands on workspace files allowed', () => {
    for (const command of ['cat src/a.ts', 'wc -l src/a.ts', 'ls src', 'grep -n x src/a.ts', "cat '$HOME/.ssh/id_rsa'", 'ls -la', 'cat README.md']) {
      assert.equal(decide(command).decision, 'allow', command);
    }
  });

  it('judges the files a command writes as the write tool writing them', () => {
    for (const command of ['tee -a ~/.bashrc', 'echo x | tee ~/.profile', 'cp src/a.ts /tmp/x', 'mv src/a.ts ../elsewhere', 'touch ~/.ssh/authorized_keys', "sed -i 's/a/b/' ~/.bashrc", 'sort -o /etc/x src/a.ts', 'dd if=src/a.ts of=/tmp/y']) {
      assert.equal(decide(command).decision, 'deny', command);
    }
    assert.match(decide('tee -a ~/.bashrc').reason!, /\.bashrc is a path workspace rule "outside" denies writing \(no writes outside the workspace\), and the command writes it/);
    assert.equal(decide('touch package-lock.json').decision, 'ask');
    for (const command of ['touch src/b.ts', 'cp src/a.ts src/c.ts', "sed -i 's/a/b/' src/a.ts", 'sort -o src/sorted src/a.ts', 'tee src/out.txt']) {
      assert.equal(decide(command).decision, 'allow', command);
    }
  });

  it('property: judging the files a command names only tightens, says which path and rule, and denies what the read tool would be denied', () => {
    const rank = { allow: 0, ask: 1, deny: 2 } as const;
    const pathGlobs = ['**/.env', 'src/**', '/**', `${home}/.ssh/**`, '**/*.ts', '!src/**'];
    const ruleArb = fc.record({
      decision: fc.constantFrom('allow', 'ask', 'deny'),
      tools: fc.constantFrom(undefined, ['builtin.read_file'], ['builtin.write_file'], ['builtin.read_file', 'builtin.write_file']),
      paths: fc.subarray(pathGlobs, { minLength: 1, maxLength: 3 }).filter((p) => !p.every((g) => g.startsWith('!'))),
    });
    const commandArb = fc.tuple(fc.constantFrom('cat', 'cp', 'tee -a', 'touch', 'grep x', 'wc -l', 'head'), fc.array(fc.constantFrom('.env', 'src/a.ts', './src/a.ts', '~/.ssh/id_rsa', '/tmp/x', 'nothing-here', '"$HOME/.ssh/x"', 'src/../.env'), { minLength: 1, maxLength: 3 }))
      .map(([program, words]) => `${program} ${words.join(' ')}`);
    fc.assert(fc.property(fc.array(ruleArb, { minLength: 1, maxLength: 4 }), commandArb, fc.constantFrom('allow', 'ask'), (rules, command, commandDecision) => {
      const text = JSON.stringify({ version: 1, rules: [...rules.map((r) => ({ ...r, ...(r.tools === undefined ? { tools: undefined } : {}) })), { tools: ['builtin.run_command'], commands: ['*'], decision: commandDecision }], default: 'ask' });
      const p = new Policy({ workspace: loadPolicyText(text, path.join(ws, '.agentpolicy.jsonc')) });
      const call = { tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command }, agent: 'main' } as never;
      const base = { workspaceFolder: ws, trusted: true, sandbox: true };
      const without = p.decide(call, { ...base, commandPaths: false });
      const withPaths = p.decide(call, base);
      assert.ok(rank[withPaths.decision] >= rank[without.decision], `loosened: ${without.decision} -> ${withPaths.decision} for ${command}`);
      if (withPaths.decision !== without.decision) assert.match(withPaths.reason ?? '', /is a path workspace rule \d+ (denies|asks about)( writing)?.*, and the command (names|writes) it$/);
      // A file the read tool may not read, named in the command: the command is denied too.
      for (const word of command.split(' ').slice(1)) {
        if (!['.env', 'src/a.ts', './src/a.ts', 'src/../.env'].includes(word)) continue;
        const read = p.decide({ tool: { id: 'builtin.read_file', kind: 'builtin', pathArgs: ['path'] }, input: { path: path.resolve(ws, word) }, agent: 'main' } as never, base);
        const byPaths = read.rule !== null && rules[read.rule.index]?.paths !== undefined;
        if (read.decision === 'deny' && byPaths) assert.equal(withPaths.decision, 'deny', `${command}: ${word} may not be read, yet ${withPaths.decision}`);
      }
    }), { numRuns: 300 });
  });
});
