// What a command reaches beyond its words (src/policy/rules/commandReach.ts): paths as bash gives them
// (cd, globs, braces, ~user, $HOME, redirects), what recursive readers and the rows' writes take
// in, paths the judge cannot place, and the package scripts and makefile recipes it runs. Each
// only tightens, and everyday commands stay allowed.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../../src/policy/policy.js';
import { initShellParser } from '../../../src/policy/shell/shellParser.js';

describe('what a command reaches beyond its words', () => {
  let ws: string;
  let home: string;
  let policy: Policy;

  before(async () => {
    await initShellParser();
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cmd-reach-')));
    ws = path.join(root, 'ws');
    home = path.join(root, 'home');
    fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
    fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'key\n');
    fs.mkdirSync(path.join(ws, 'src', 'deep'), { recursive: true });
    fs.mkdirSync(path.join(ws, 'build'));
    fs.writeFileSync(path.join(ws, '.env'), 'TOKEN=x\n');
    fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'x\n');
    fs.writeFileSync(path.join(ws, 'src', 'deep', 'package-lock.json'), '{}\n');
    fs.writeFileSync(path.join(ws, 'build', 'out.js'), 'x\n');
    fs.writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ scripts: { build: 'tsc -p .', leak: 'cat ~/.ssh/id_rsa', pretest: 'git push --force origin main', test: 'mocha', lint: 'npm run leak' } }));
    fs.writeFileSync(path.join(ws, 'Makefile'), 'CAT = cat\nKEY := ~/.ssh/id_rsa\n\nall: build\n\nbuild:\n\t@cc -o out main.c\n\nleak: ; $(CAT) $(KEY)\n\nclean:\n\trm -rf build\n');
    policy = new Policy({ workspace: loadPolicyText(JSON.stringify({
      version: 1,
      rules: [
        { id: 'secrets', paths: ['**/.env', '/**/.ssh/**'], decision: 'deny', reason: 'secrets stay' },
        { id: 'outside', tools: ['builtin.write_file'], paths: ['/**', '!**'], decision: 'deny', reason: 'no writes outside the workspace' },
        { id: 'lock', tools: ['builtin.write_file'], paths: ['**/package-lock.json'], decision: 'ask' },
        { id: 'force', tools: ['builtin.run_command'], commands: ['git push --force *'], decision: 'deny' },
        { id: 'everyday', tools: ['builtin.run_command'], commands: ['cat *', 'head *', 'ls *', 'cd *', 'echo *', 'grep *', 'rg *', 'rm *', 'find *', 'git *', 'awk *', 'sed *', 'set *', 'export *', 'npm *', 'yarn *', 'make *', 'wc *', 'find * -delete', 'sed -n *'], decision: 'allow' },
      ],
      default: 'ask',
    }), path.join(ws, '.agentpolicy.jsonc')) });
  });
  after(() => fs.rmSync(path.dirname(ws), { recursive: true, force: true }));

  const judge = (command: string): { decision: string; reason: string } => {
    const d = policy.decide({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command }, agent: 'main' } as never, { workspaceFolder: ws, home, trusted: true, sandbox: true });
    return { decision: d.decision, reason: d.reason ?? '' };
  };
  const expect = (decision: string, commands: readonly string[]): void => {
    for (const command of commands) assert.equal(judge(command).decision, decision, command);
  };

  it('reads relative words in every folder a cd of the line may have left it in', () => {
    expect('deny', ['cd src && cat ../.env', 'cd ~/.ssh; cat id_rsa', 'cd / && cd ~ && head .ssh/id_rsa', "sh -c 'cd ~; cat .ssh/id_rsa'"]);
    expect('allow', ['cd src && cat a.ts', '(cd build && ls) ; cat src/a.ts', 'cd src/deep && ls']);
  });

  it('reads globs, braces, ~user and $HOME as bash expands them', () => {
    expect('deny', ['cat .en?', 'cat .{env,nothing}', 'head .en[v]', 'cat ~/.ssh/*', 'cat "$HOME"/.ssh/id_rsa', 'cat ${HOME}/.ssh/id_rsa']);
    expect('allow', ['cat src/*.ts', 'wc -l src/{a,b}.ts', 'ls *']);
    // ~root is the passwd file's home: the deny on /**/.ssh/** takes it wherever it is.
    expect('deny', [`cat ~${os.userInfo().username}/.ssh/id_rsa`.replace(`~${os.userInfo().username}`, home)]);
    const unknownUser = judge('cat ~no-such-user-here/.ssh/id_rsa');
    assert.equal(unknownUser.decision, 'ask');
    assert.match(unknownUser.reason, /names the home of a user this machine does not know, and workspace rule "secrets" guards some paths/);
  });

  it('judges redirect targets as the file tools: > and >> write, < reads', () => {
    expect('deny', ['echo x >> ~/.bashrc', 'cat < .env', 'echo x > /tmp/agentpolicy-test-out']);
    expect('allow', ['echo x | wc -l < src/a.ts']);
  });

  it('reads everything under a folder a recursive reader is given; removes everything under a folder rm -r is', () => {
    expect('deny', ['grep -r TOKEN .', 'grep -rn TOKEN', 'rg -uu TOKEN .', 'grep --recursive TOKEN .', 'grep --recur TOKEN', 'tar --create -f /tmp/x.tar .']);
    assert.equal(judge('grep -rn TOKEN .').decision, 'deny');
    expect('allow', ['grep -rn x src', 'rg TODO src', 'grep TOKEN src/a.ts', 'rm -rf build']);
    assert.equal(judge('rm -r src').decision, 'ask', 'src holds a package-lock.json the lock rule asks about');
  });

  it("judges what the table's rows write: find -delete (everything it may find), git --output, awk's > \"FILE\", sed's w FILE", () => {
    expect('deny', ['find . -name "*.tmp" -delete', 'git log --output=/tmp/agentpolicy-log', "awk '{ print > \"/tmp/agentpolicy-awk\" }' src/a.ts", "sed -n 'w /tmp/agentpolicy-sed' src/a.ts"]);
    expect('allow', ['find build -delete']);
  });

  it('asks about a path the judge cannot place, where a rule on paths guards some; other expansions change nothing', () => {
    const unknown = judge('cat "$F"');
    assert.equal(unknown.decision, 'ask');
    assert.match(unknown.reason, /\$F.*has an expansion the judge cannot know before it runs, and workspace rule "secrets" guards some paths/);
    expect('ask', ['cat $(ls src)', 'rm -rf "$DIR"/x', 'cd "$D" && cat id_rsa']);
    // echo's word names the key, and is judged as a read of it.
    expect('deny', ['cat $(echo ~/.ssh/id_rsa)']);
    expect('allow', ['echo "$(git status)"', 'echo $PATH', 'git log -1 --format=%H']);
  });

  it('judges the package scripts npm, yarn and pnpm run by the ask and deny rules', () => {
    const leak = judge('npm run leak');
    assert.equal(leak.decision, 'deny');
    assert.match(leak.reason, /it runs package\.json script "leak": cat ~\/\.ssh\/id_rsa/);
    expect('deny', ['yarn leak', 'npm test', 'npm run lint', 'npm run-script leak']);
    assert.match(judge('npm test').reason, /package\.json script "pretest": git push --force origin main/);
    // What only the default would ask (tsc, mocha) is left to the allow on npm.
    expect('allow', ['npm run build', 'npm --version', 'npm run nothing-here']);
  });

  it('judges the makefile recipes make runs for its targets, with simple variables expanded', () => {
    const leak = judge('make leak');
    assert.equal(leak.decision, 'deny');
    assert.match(leak.reason, /it runs Makefile target "leak": cat ~\/\.ssh\/id_rsa/);
    expect('allow', ['make', 'make build', 'make clean']);
  });

  it('printing the environment through the shell builtins is asked; setting a variable that runs programs is not allowed', () => {
    expect('ask', ['set', 'export -p', 'export', 'declare -x', 'export PATH=/tmp/x && git status', 'export NODE_OPTIONS=--require=/tmp/x.js; npm run build']);
    expect('allow', ['set -e', 'set -euo pipefail', 'export CI=1']);
  });
});
