// Where the truth is the program, the program says it: for every row of docs/programs.md that
// runs a program, runs code or writes a file, the real program (git, GNU find, awk, GNU sed, GNU
// tar, ripgrep, sort, make, python3, node, perl) is run in a scratch folder and the effect is
// seen to happen, while the judge, under a policy that allows the program by its first word, does
// not allow that command. A program this machine lacks is said and its cases skipped (CI installs them).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { programRows } from '../../../src/policy/shell/programs/programKnowledge.js';
import { loadPolicyText, Policy } from '../../../src/policy/policy.js';
import { initShellParser } from '../../../src/policy/shell/shellParser.js';

interface RealCase {
  row: string;
  /** A bash script run in the scratch folder first (a repository, files). */
  setup?: string;
  command: string;
  /** How it is run, when not as it is (git starts its pager only on a terminal: under `script`). */
  run?: string;
  /** What shows it happened (default: a file `pwned` exists); `out` is what the command printed. */
  effect?: (dir: string, out: string) => boolean;
}

const REPO = 'git init -q . && git config user.email t@t && git config user.name t && echo hello > a.txt && git add a.txt && git commit -qm one && echo world >> a.txt && git commit -qam two';
const pwned = (dir: string): boolean => fs.existsSync(path.join(dir, 'pwned'));

const CASES: readonly RealCase[] = [
  { row: 'git.config-program', setup: REPO, command: "git -c core.pager='touch pwned; cat' log", run: `script -qec "git -c core.pager='touch pwned; cat' log" /dev/null` },
  { row: 'git.config-program', setup: REPO, command: "git -c alias.x='!touch pwned' x" },
  { row: 'git.exec-path', setup: `${REPO} && mkdir bin && printf '#!/bin/sh\\ntouch pwned\\n' > bin/git-foo && chmod +x bin/git-foo`, command: 'git --exec-path=./bin foo' },
  { row: 'git.pack-program', setup: REPO, command: "git ls-remote --upload-pack='touch pwned; git-upload-pack' ." },
  { row: 'git.submodule-foreach', setup: `mkdir sub && (cd sub && ${REPO}) && mkdir main && cd main && ${REPO} && git -c protocol.file.allow=always submodule add -q "$PWD/../sub" s && git commit -qm sub && cd ..`, command: "cd main && git submodule foreach 'touch ../../pwned'" },
  { row: 'git.difftool-extcmd', setup: REPO, command: "git difftool -y -x 'touch pwned' HEAD~1" },
  { row: 'git.grep-pager', setup: REPO, command: "git grep -O'touch pwned' hello" },
  { row: 'git.rebase-exec', setup: REPO, command: "git rebase -q --exec 'touch pwned' HEAD~1" },
  { row: 'git.bisect-run', setup: `${REPO} && for n in 3 4 5; do echo $n >> a.txt && git commit -qam $n; done && git bisect start HEAD HEAD~4 >/dev/null`, command: "git bisect run sh -c 'touch pwned'" },
  { row: 'git.output', setup: REPO, command: 'git log --output=pwned' },
  { row: 'git.config-write', setup: REPO, command: "git config core.pager 'touch pwned'", effect: (d) => /pager = touch pwned/.test(fs.readFileSync(path.join(d, '.git', 'config'), 'utf8')) },
  { row: 'find.delete', setup: 'touch victim', command: 'find . -name victim -delete', effect: (d) => !fs.existsSync(path.join(d, 'victim')) },
  { row: 'find.fprint', command: 'find . -maxdepth 0 -fprint pwned' },
  { row: 'awk.system', command: "awk 'BEGIN{system(\"touch pwned\")}'" },
  { row: 'awk.system', command: "awk 'BEGIN{print \"x\" | \"cat > pwned\"}'" },
  { row: 'awk.redirect', command: "awk 'BEGIN{print \"x\" > \"pwned\"}'" },
  { row: 'awk.program-file', setup: 'echo \'BEGIN{system("touch pwned")}\' > p.awk', command: 'awk -f p.awk' },
  { row: 'sed.in-place', setup: 'echo a > f', command: "sed -i 's/a/b/' f", effect: (d) => fs.readFileSync(path.join(d, 'f'), 'utf8') === 'b\n' },
  { row: 'sed.execute', setup: 'echo a > f', command: "sed -n '1e touch pwned' f" },
  { row: 'sed.execute', setup: 'echo touch pwned > f', command: "sed 's/.*/&/e' f" },
  { row: 'sed.write', setup: 'echo a > f', command: "sed -n 'w pwned' f" },
  { row: 'sed.script-file', setup: 'echo a > f && echo "1e touch pwned" > s.sed', command: 'sed -n -f s.sed f' },
  { row: 'tar.runs-program', setup: 'echo x > x && tar -cf a.tar x && rm x', command: "tar --to-command='touch pwned' -xf a.tar" },
  { row: 'tar.runs-program', setup: 'echo x > x', command: "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='touch pwned' x" },
  { row: 'tar.writes', setup: 'mkdir d && echo x > d/pwned && tar -cf a.tar -C d pwned && rm -r d', command: 'tar -xf a.tar' },
  { row: 'rg.pre', setup: 'echo foo > f && printf \'#!/bin/sh\\ntouch pwned\\ncat "$1"\\n\' > pre.sh && chmod +x pre.sh', command: 'rg --pre ./pre.sh foo f' },
  { row: 'sort.compress-program', setup: 'seq 1 200000 > n && printf \'#!/bin/sh\\ntouch pwned\\nexec cat\\n\' > c.sh && chmod +x c.sh', command: 'sort -S 64K -T . --compress-program=./c.sh n > /dev/null' },
  { row: 'sort.output', setup: 'echo b > f', command: 'sort -o pwned f' },
  { row: 'make.eval', command: "make -f /dev/null --eval='x: ; touch pwned' x" },
  { row: 'make.shell', setup: 'printf "all:\\n\\ttrue\\n" > Makefile && printf \'#!/bin/sh\\ntouch pwned\\n\' > s.sh && chmod +x s.sh', command: 'make SHELL=./s.sh' },
  { row: 'make.file', setup: 'printf "all:\\n\\ttouch pwned\\n" > evil.mk', command: 'make -f evil.mk' },
  { row: 'interpreter.inline-code', command: "python3 -c 'open(\"pwned\", \"w\")'" },
  { row: 'interpreter.inline-code', command: "node -e 'require(\"fs\").writeFileSync(\"pwned\", \"\")'" },
  { row: 'interpreter.inline-code', command: "perl -e 'open(F, \">pwned\")'" },
  { row: 'interpreter.in-place', setup: 'echo a > f', command: "perl -pi -e 's/a/b/' f", effect: (d) => fs.readFileSync(path.join(d, 'f'), 'utf8') === 'b\n' },
  { row: 'env.assignment-runs', setup: REPO, command: "env GIT_PAGER='touch pwned; cat' git log", run: `script -qec "env GIT_PAGER='touch pwned; cat' git log" /dev/null` },
  { row: 'env.assignment-runs', setup: 'printf "#!/bin/sh\\ntouch pwned\\n" > git && chmod +x git', command: 'env PATH=.:/usr/bin:/bin git status' },
  { row: 'printenv.secrets', command: 'printenv', effect: (_d, out) => out.includes(SECRET) },
  { row: 'printenv.secrets', command: 'env', effect: (_d, out) => out.includes(SECRET) },
  { row: 'shell.credential-variable', command: 'echo ${GITHUB_TOKEN:-none}', effect: (_d, out) => out.includes(SECRET) },
];

/** The value of GITHUB_TOKEN in the cases' environment: a command that prints it hands on a secret. */
const SECRET = 'ghp_test_secret_0123456789';

const READERS = ['git', 'find', 'awk', 'sed', 'tar', 'rg', 'sort', 'make', 'python3', 'node', 'perl', 'cd', 'env', 'printenv', 'echo'];

function has(program: string): boolean {
  return spawnSync('bash', ['-c', `command -v ${program}`]).status === 0;
}

describe('program knowledge against the real programs: each row that runs or writes does so, and is not allowed', function () {
  this.timeout(60_000);
  let policy: Policy;
  let root: string;

  before(async () => {
    await initShellParser();
    const text = JSON.stringify({ version: 1, rules: [{ tools: ['builtin.run_command'], commands: READERS.map((p) => `${p} *`), decision: 'allow' }], default: 'ask' });
    policy = new Policy({ workspace: loadPolicyText(text, '/ws/.agentpolicy.jsonc') });
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'programs-')));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('every row that runs a program, runs code or writes a file has a case here', () => {
    const tested = new Set(CASES.map((c) => c.row));
    assert.deepEqual(programRows().filter((r) => !tested.has(r.id)).map((r) => r.id), []);
  });

  for (const [k, c] of CASES.entries()) {
    it(`${c.row}: ${c.command}`, function () {
      const program = c.command.replace(/^cd \S+ && /, '').split(' ')[0]!;
      if (!has(program)) {
        console.warn(`    skipped: ${program} is not installed here`);
        this.skip();
      }
      const decided = policy.decide({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command: c.command }, agent: 'main' } as never, { workspaceFolder: '/ws', trusted: true, sandbox: true });
      assert.notEqual(decided.decision, 'allow', 'the judge allows it under "<program> *"');
      const dir = path.join(root, `case-${k}`);
      fs.mkdirSync(dir);
      const env = { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LANG: 'C', GITHUB_TOKEN: SECRET };
      if (c.setup !== undefined) {
        const s = spawnSync('bash', ['-c', c.setup], { cwd: dir, env, encoding: 'utf8' });
        assert.equal(s.status, 0, `setup failed: ${s.stderr}`);
      }
      const r = spawnSync('bash', ['-c', c.run ?? c.command], { cwd: dir, env, encoding: 'utf8', timeout: 30_000, input: '' });
      assert.ok((c.effect ?? pwned)(dir, r.stdout), `${program} did not do what the row says (exit ${r.status}): ${r.stderr}`);
    });
  }
});
