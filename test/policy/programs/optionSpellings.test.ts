// Every spelling of an option, for ask and deny patterns (docs/programs.md): one deny on
// `git push --force *` takes every way git reads a force push (OpenMoat's attacks among them), one
// on `rm --recursive --force *`, `sed -i *`, `tar --extract *`, `sort -o *` every way those programs
// read theirs; the everyday uses stay allowed.
import assert from 'node:assert/strict';
import { loadPolicyText, Policy } from '../../../src/policy/policy.js';
import { initShellParser } from '../../../src/policy/shell/shellParser.js';

const POLICY = JSON.stringify({
  version: 1,
  rules: [
    { id: 'no-force-push', tools: ['builtin.run_command'], commands: ['git push --force *'], decision: 'deny' },
    { id: 'no-remote-delete', tools: ['builtin.run_command'], commands: ['git push --delete *'], decision: 'deny' },
    { id: 'no-branch-force-delete', tools: ['builtin.run_command'], commands: ['git branch -D *'], decision: 'deny' },
    { id: 'no-hard-reset', tools: ['builtin.run_command'], commands: ['git reset --hard *'], decision: 'deny' },
    { id: 'no-force-clean', tools: ['builtin.run_command'], commands: ['git clean -f *'], decision: 'deny' },
    { id: 'no-rm-rf', tools: ['builtin.run_command'], commands: ['rm --recursive --force *'], decision: 'deny' },
    { id: 'no-sed-i', tools: ['builtin.run_command'], commands: ['sed -i *'], decision: 'deny' },
    { id: 'no-tar-x', tools: ['builtin.run_command'], commands: ['tar --extract *'], decision: 'deny' },
    { id: 'no-sort-o', tools: ['builtin.run_command'], commands: ['sort -o *'], decision: 'deny' },
    { id: 'git', tools: ['builtin.run_command'], commands: ['git *', 'rm *', 'sed *', 'tar *', 'sort *'], decision: 'allow' },
  ],
  default: 'ask',
});

const DENIED: ReadonlyArray<readonly [string, string]> = [
  ['git push --force', 'no-force-push'], ['git push -f origin main', 'no-force-push'], ['git push origin main -f', 'no-force-push'],
  ['git push --forc origin main', 'no-force-push'], ['git push --force-with-lease', 'no-force-push'], ['git push --force-with-lease=main:abc origin', 'no-force-push'],
  ['git push --force-if-includes origin', 'no-force-push'], ['git push origin +main', 'no-force-push'], ['git push origin +HEAD:main', 'no-force-push'],
  ['git push -vf origin', 'no-force-push'], ['git push -uf origin main', 'no-force-push'], ['git -C repo push --force', 'no-force-push'],
  ['git -c push.default=current push -f', 'no-force-push'], ['git --no-pager push --force', 'no-force-push'], ['git --git-dir=.git push -f', 'no-force-push'],
  ['git push -d origin topic', 'no-remote-delete'], ['git push --delete origin topic', 'no-remote-delete'], ['git push --del origin topic', 'no-remote-delete'],
  ['git push -vd origin topic', 'no-remote-delete'], ['git push origin :topic', 'no-remote-delete'], ['git push origin --delete topic', 'no-remote-delete'],
  ['git branch -D topic', 'no-branch-force-delete'], ['git branch --delete --force topic', 'no-branch-force-delete'], ['git branch -df topic', 'no-branch-force-delete'],
  ['git branch -d -f topic', 'no-branch-force-delete'], ['git branch --del --forc topic', 'no-branch-force-delete'], ['git -C x branch -D topic', 'no-branch-force-delete'],
  ['git reset --hard', 'no-hard-reset'], ['git reset --hard HEAD~1', 'no-hard-reset'], ['git reset HEAD~1 --hard', 'no-hard-reset'],
  ['git reset --ha origin/main', 'no-hard-reset'], ['git -C x reset --hard', 'no-hard-reset'], ['git clean -fdx', 'no-force-clean'],
  ['git clean --force -d', 'no-force-clean'], ['git clean -d -f', 'no-force-clean'], ['git clean -xf', 'no-force-clean'],
  ['rm -rf build', 'no-rm-rf'], ['rm -fr build', 'no-rm-rf'], ['rm -Rf build', 'no-rm-rf'], ['rm -r -f build', 'no-rm-rf'], ['rm build -rf', 'no-rm-rf'],
  ['rm --recursive --force build', 'no-rm-rf'], ['rm --rec --forc build', 'no-rm-rf'], ['rm -rfv build', 'no-rm-rf'],
  ["sed -i 's/a/b/' f", 'no-sed-i'], ["sed -i.bak 's/a/b/' f", 'no-sed-i'], ["sed --in-place 's/a/b/' f", 'no-sed-i'], ["sed --in-place=.orig 's/a/b/' f", 'no-sed-i'],
  ["sed -ni 's/a/b/p' f", 'no-sed-i'], ["sed -Ei 's/a+/b/' f", 'no-sed-i'], ["sed --in-pl -e 's/a/b/' f", 'no-sed-i'], ["sed -e 's/a/b/' -i f", 'no-sed-i'],
  ['tar -xzf a.tgz', 'no-tar-x'], ['tar xzf a.tgz', 'no-tar-x'], ['tar -x -f a.tar', 'no-tar-x'], ['tar --get -f a.tar', 'no-tar-x'], ['tar -C out -xf a.tar', 'no-tar-x'],
  ['tar --extr --file=a.tar', 'no-tar-x'], ['tar -zxvf a.tgz', 'no-tar-x'], ['tar -f a.tar -x', 'no-tar-x'],
  ['sort -o out f', 'no-sort-o'], ['sort --output=out f', 'no-sort-o'], ['sort -rno out f', 'no-sort-o'], ['sort f --outp out', 'no-sort-o'],
];

const ALLOWED: readonly string[] = [
  'git push', 'git push origin main', 'git push -u origin topic', 'git push --tags', 'git push --dry-run origin main',
  'git push --no-force origin main', 'git push --no-verify origin main', 'git push origin main:main', 'git branch', 'git branch -d topic',
  'git branch topic', 'git branch -m old new', 'git branch --list', 'git reset', 'git reset HEAD~1',
  'git reset --soft HEAD~1', 'git reset -- file', 'git clean -n', 'git clean --dry-run -d', 'git checkout -b topic',
  'rm -r build', 'rm -f x', 'rm x', "sed -n '1,5p' f", "sed 's/a/b/' f", "sed -e 's/a/b/' -e 's/i/x/' f", "sed -E 's/(a)/\\1/' f",
  'tar -tzf a.tgz', 'tar tzf a.tgz', 'tar --list -f a.tar', 'sort -rn f', 'sort -k2 -t, f', 'sort -u f',
];

function decide(policy: Policy, command: string): { decision: string; rule?: string } {
  const d = policy.decide({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command }, agent: 'main' } as never, { workspaceFolder: '/ws', trusted: true, sandbox: true });
  return { decision: d.decision, ...(d.rule?.id ? { rule: d.rule.id } : {}) };
}

describe('every spelling of an option in ask and deny patterns', () => {
  let policy: Policy;
  before(async () => {
    await initShellParser();
    policy = new Policy({ workspace: loadPolicyText(POLICY, '/ws/.agentpolicy.jsonc') });
  });

  it(`one deny per option takes each of ${DENIED.length} spellings`, () => {
    const missed = DENIED.filter(([c, rule]) => decide(policy, c).decision !== 'deny' || decide(policy, c).rule !== rule).map(([c, rule]) => `${c} (want ${rule}, got ${JSON.stringify(decide(policy, c))})`);
    assert.deepEqual(missed, []);
  });

  it(`leaves ${ALLOWED.length} everyday pushes, branches, resets and cleans allowed`, () => {
    assert.deepEqual(ALLOWED.filter((c) => decide(policy, c).decision !== 'allow'), []);
  });
});
