// What a sandboxed command cannot read, against the real bubblewrap: the home folder's credential
// stores (a fake home outside /tmp, which the sandbox makes private anyway), through a link in the
// workspace too, and the paths a policy `deny` rule on paths covers (sandboxReads.ts,
// sandboxDeniedPaths.ts). Each check has its control: without the hiding the same read works.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { READ_TOOL_IDS } from '../../src/runtime/tools/fileReadTools.js';
import { runCommandTool, type RunCommandResult } from '../../src/runtime/tools/runCommandTool.js';
import { expandDeniedPaths, policyDeniedPaths } from '../../src/runtime/calls/sandboxDeniedPaths.js';
import { sandboxPlan } from '../../src/runtime/sandbox/sandboxMounts.js';
import { probeSandbox } from '../../src/runtime/sandbox/sandboxProbe.js';
import { HOME_CREDENTIAL_STORES, hiddenPaths } from '../../src/runtime/sandbox/sandboxReads.js';
import type { ToolRunContext } from '../../src/runtime/tools/tools.js';
import type { ToolSandbox } from '../../src/runtime/sandbox/toolSandbox.js';

const probe = probeSandbox();
const tool = runCommandTool();

/** A folder outside /tmp (the sandbox's /tmp is its own, so a fake home there would prove nothing). */
function outsideTmp(prefix: string): string {
  const base = fs.existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir();
  return fs.realpathSync(fs.mkdtempSync(path.join(base, prefix)));
}

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

function policyOf(text: string, ws: string): Policy {
  return new Policy({ workspace: loadPolicyText(text, path.join(ws, '.agentpolicy.jsonc')) });
}

describe('sandbox reads (real bubblewrap)', function () {
  let ws: string;
  let home: string;
  let emptyHome: string;

  before(function () {
    if (!probe.available) {
      console.log(`    (sandbox tests skipped: ${probe.reason})`);
      this.skip();
    }
  });
  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-reads-')));
    home = outsideTmp('fake-home-');
    emptyHome = outsideTmp('empty-home-');
    write(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY\n');
    write(path.join(home, '.aws', 'credentials'), '[default]\naws_secret_access_key=x\n');
    write(path.join(home, '.netrc'), 'machine example.com password hunter2\n');
    write(path.join(home, 'notes.txt'), 'ordinary\n');
    write(path.join(ws, 'other.txt'), 'other\n');
    write(path.join(ws, '.env'), 'SECRET=1\n');
    write(path.join(ws, 'sub', '.env'), 'SECRET=2\n');
    fs.symlinkSync(path.join(home, '.ssh'), path.join(ws, 'keys'));
  });
  afterEach(() => {
    for (const dir of [ws, home, emptyHome]) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function run(command: string, options: { home?: string; unreadable?: readonly string[] } = {}): Promise<RunCommandResult> {
    const sandbox: ToolSandbox = {
      network: false, protectedWritable: false, protectedFiles: [],
      home: options.home ?? home,
      ...(options.unreadable ? { unreadable: () => options.unreadable! } : {}),
    };
    const context: ToolRunContext = { sessionId: 's', turnId: 't', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal, sandbox };
    const checked = tool.check({ command });
    if (!checked.ok) throw new Error(checked.error);
    return (await tool.run(checked.value, context)) as RunCommandResult;
  }

  it('hides the home folder\'s credential stores: cat reads nothing and fails, ls shows nothing (control: an unlisted home shows them)', async () => {
    const control = await run(`cat ${home}/.ssh/id_rsa ${home}/.netrc && ls ${home}/.ssh`, { home: emptyHome });
    assert.equal(control.exitCode, 0, control.stderr);
    assert.match(control.stdout, /PRIVATE KEY/);

    for (const file of ['.ssh/id_rsa', '.aws/credentials', '.netrc']) {
      const r = await run(`cat ${path.join(home, file)}`);
      assert.notEqual(r.exitCode, 0, file);
      assert.equal(r.stdout, '', file);
    }
    const ls = await run(`ls ${home}/.ssh ${home}/.aws`);
    assert.notEqual(ls.exitCode, 0);
    assert.equal(ls.stdout, '');
    const ordinary = await run(`cat ${home}/notes.txt`);
    assert.equal(ordinary.stdout, 'ordinary\n', 'the rest of the home folder stays readable');
  });

  it('hides them through a link in the workspace too, and they cannot be replaced, renamed or removed', async () => {
    const r = await run('cat keys/id_rsa; ls keys; cat keys/id_rsa');
    assert.equal(r.stdout, '');
    const tamper = await run(`echo x > ${home}/.netrc; mv ${home}/.netrc ${home}/n; rm -rf ${home}/.ssh; rm -f keys/id_rsa; echo done`);
    assert.equal(tamper.stdout, 'done\n');
    assert.equal(fs.readFileSync(path.join(home, '.ssh', 'id_rsa'), 'utf8'), 'PRIVATE KEY\n');
    assert.equal(fs.readFileSync(path.join(home, '.netrc'), 'utf8'), 'machine example.com password hunter2\n');
  });

  it('plans the hides after the workspace binds, outermost first, for existing paths only, never over the workspace', () => {
    const plan = sandboxPlan({ workspaceFolder: ws, cwd: ws, network: false, protectedFiles: [], protectedWritable: false, userNamespace: true, home, unreadable: [path.join(ws, '.env'), path.join(ws, 'missing')] });
    assert.deepEqual(plan.hidden.map((h) => `${h.kind} ${h.path}`).sort(), [
      `file ${path.join(home, '.netrc')}`, `folder ${path.join(home, '.aws')}`, `folder ${path.join(home, '.ssh')}`, `file ${path.join(ws, '.env')}`,
    ].sort());
    const workspaceBind = plan.args.indexOf('--bind');
    const firstHide = plan.args.indexOf(path.join(home, '.netrc'));
    assert.ok(workspaceBind >= 0 && firstHide > workspaceBind);
    // A home inside the workspace, or a deny that would cover the workspace folder itself: never hidden whole.
    assert.deepEqual(hiddenPaths(home, path.join(home, '.ssh'), []).map((h) => h.path).sort(), [path.join(home, '.netrc'), path.join(home, '.aws')].sort());
    assert.ok(HOME_CREDENTIAL_STORES.includes('.ssh') && HOME_CREDENTIAL_STORES.includes('.bash_history') && HOME_CREDENTIAL_STORES.includes('.config/gcloud'));
  });

  it('a policy deny on paths makes them unreadable to commands: cat .env and cat sub/.env fail, cat other.txt works', async () => {
    const policy = policyOf('{ "version": 1, "rules": [ { "paths": ["**/.env"], "decision": "deny" } ] }', ws);
    const denied = policyDeniedPaths(policy, ws, home);
    assert.deepEqual(denied, { paths: [path.join(ws, '.env'), path.join(ws, 'sub', '.env')], truncated: false });
    const control = await run('cat .env sub/.env');
    assert.equal(control.stdout, 'SECRET=1\nSECRET=2\n');
    const r = await run('cat .env; cat sub/.env; cat other.txt; mv .env moved; rm -f sub/.env', { unreadable: denied.paths });
    assert.equal(r.stdout, 'other\n');
    assert.match(r.stderr, /\.env: Permission denied/);
    assert.ok(fs.existsSync(path.join(ws, '.env')) && fs.existsSync(path.join(ws, 'sub', '.env')) && !fs.existsSync(path.join(ws, 'moved')));
  });

  it('counts only unconditional deny rules on paths (or on the read tools), and honours ! excludes by hiding less only where excluded', () => {
    const policy = policyOf(`{ "version": 1, "rules": [
      { "tools": ["builtin.read_file", "builtin.list_files"], "paths": ["secrets/**", "!secrets/public/**"], "decision": "deny" },
      { "tools": ["builtin.write_file"], "paths": ["src/**"], "decision": "deny" },
      { "agents": ["x"], "paths": ["other.txt"], "decision": "deny" },
      { "paths": ["other.txt"], "decision": "allow" },
      { "paths": ["~/.config/tool/*.key", "/nonexistent/**"], "decision": "deny" }
    ] }`, ws);
    const rules = policy.unreadablePathRules(new Set(READ_TOOL_IDS)).map((r) => r.paths);
    assert.deepEqual(rules, [['secrets/**', '!secrets/public/**'], ['~/.config/tool/*.key', '/nonexistent/**']]);
    write(path.join(ws, 'secrets', 'a.key'), 'a');
    write(path.join(ws, 'secrets', 'deep', 'b.key'), 'b');
    write(path.join(ws, 'secrets', 'public', 'c.pem'), 'c');
    write(path.join(home, '.config', 'tool', 'id.key'), 'k');
    write(path.join(home, '.config', 'tool', 'readme'), 'r');
    const found = expandDeniedPaths(rules, ws, home).paths;
    // Under a rule with excludes the walk goes into each folder and hides the files one by one: public/ stays.
    assert.deepEqual(found, [path.join(home, '.config', 'tool', 'id.key'), path.join(ws, 'secrets', 'a.key'), path.join(ws, 'secrets', 'deep', 'b.key')].sort());
    // A literal folder with an exclude: its entries one by one.
    assert.deepEqual(expandDeniedPaths([['secrets', '!secrets/public']], ws, home).paths, [path.join(ws, 'secrets', 'a.key'), path.join(ws, 'secrets', 'deep', 'b.key')]);
    assert.deepEqual(expandDeniedPaths([['secrets/']], ws, home).paths, [path.join(ws, 'secrets')]);
  });

  it('stops its walk at the bound and says so', () => {
    for (let i = 0; i < 30; i++) write(path.join(ws, `d${i}`, 'x', '.env'), '');
    const all = expandDeniedPaths([['**/.env']], ws, home);
    assert.equal(all.truncated, false);
    assert.equal(all.paths.length, 32);
    const capped = expandDeniedPaths([['**/.env']], ws, home, { maxEntries: 40, maxDepth: 32 });
    assert.equal(capped.truncated, true);
    assert.ok(capped.paths.length < 32 && capped.paths.includes(path.join(ws, '.env')), 'breadth first: the shallow one is found');
    assert.equal(expandDeniedPaths([['**/.env']], ws, home, { maxEntries: 1000, maxDepth: 1 }).truncated, true);
  });
});
