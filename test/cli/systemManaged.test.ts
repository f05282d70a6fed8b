// The system managed policy as the CLI, the hooks and the service read it, run as a second real
// account (`aptester`, made with useradd when missing) where the point is that the person cannot
// write it: root can write anything, so a test run as root would prove nothing about "the user".
// The system folder is a test root under /tmp named by AGENTPOLICY_SYSTEM_DIR (honoured only
// where the machine has no /etc/agentpolicy/managed.agentpolicy.jsonc, and only when it passes the
// ownership check). Linux, as root, with runuser; skipped otherwise.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';
import { PolicyCache } from '../../src/hooks/service/decisionService.js';
import { makeSystemRoot } from '../policy/systemRoot.js';
import { SYSTEM_DIR_VARIABLE, SYSTEM_POLICY_NAME, systemPolicyDir } from '../../src/policy/system/systemPolicy.js';

const USER = 'aptester';
const TSX = require.resolve('tsx');
const CHILD = path.join(__dirname, 'children', 'sandboxCli.ts');

/** The system's rule: no curl. The trial file a person names allows everything. */
const SYSTEM_POLICY = '{ "version": 1, "rules": [ { "id": "no-curl", "tools": ["builtin.run_command"], "commands": ["curl *"], "decision": "deny", "reason": "the organisation forbids curl" } ] }\n';
const TRIAL_POLICY = '{ "version": 1, "default": "allow", "rules": [ { "tools": ["*"], "decision": "allow" } ] }\n';
const CURL = ['--tool', 'builtin.run_command', '--input', '{"command":"curl https://example.com"}', '--json'];

function uidOf(user: string): number | undefined {
  const r = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim()) : undefined;
}

describe('the system managed policy, read by the CLI, the hooks and the service', function () {
  this.timeout(60_000);
  let root: string;
  let system: string;
  let file: string;
  let work: string;
  let uid: number;

  before(function () {
    if (process.platform !== 'linux' || process.getuid?.() !== 0 || fs.existsSync(path.join(systemPolicyDir(), SYSTEM_POLICY_NAME))) this.skip();
    if (uidOf(USER) === undefined) spawnSync('useradd', ['--system', '-M', '-s', '/usr/sbin/nologin', USER]);
    const found = uidOf(USER);
    if (found === undefined || spawnSync('runuser', ['-u', USER, '--', 'true']).status !== 0) this.skip();
    uid = found;
  });

  beforeEach(() => {
    ({ root, dir: system, file } = makeSystemRoot(SYSTEM_POLICY));
    // The person's own folder, with the trial file they name.
    work = path.join(root, 'work');
    fs.mkdirSync(work, { mode: 0o755 });
    fs.writeFileSync(path.join(work, 'try.jsonc'), TRIAL_POLICY);
    for (const f of [work, path.join(work, 'try.jsonc')]) fs.chownSync(f, uid, uid);
  });

  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** `agentpolicy ARGS` run as the second account, in its folder, with the test system folder. */
  const asUser = (args: string[], input?: string) => {
    const r = spawnSync('runuser', ['-u', USER, '--', 'env', `PATH=${process.env.PATH}`, `HOME=${work}`, `XDG_STATE_HOME=${path.join(work, 'state')}`, `${SYSTEM_DIR_VARIABLE}=${system}`,
      process.execPath, '--import', TSX, CHILD, ...args], { cwd: work, encoding: 'utf8', ...(input !== undefined ? { input } : {}) });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  const canWrite = (p: string): boolean => spawnSync('runuser', ['-u', USER, '--', 'test', '-w', p]).status === 0;

  it('is in force when root owns it and the person cannot write it: --managed cannot loosen it', () => {
    assert.equal(canWrite(file), false);
    assert.equal(canWrite(system), false);
    const check = asUser(['check']);
    assert.match(check.err, new RegExp(`managed policy: ${file} \\(the system's; owned by root`));
    const explain = asUser(['explain', '--managed', 'try.jsonc', ...CURL]);
    assert.equal(JSON.parse(explain.out).decision, 'deny', explain.err);
    assert.equal(JSON.parse(explain.out).rule.id, 'no-curl');
    assert.match(explain.err, /warning: --managed names .*try\.jsonc, which is not in force: the system managed policy .* is, and a trial file cannot replace it/);
    // A hook of another agent (Claude Code) judges with it too, whatever the variable for trial files names.
    const hook = asUser(['hook', '--agent', 'claude'], JSON.stringify({ session_id: 's', cwd: work, tool_name: 'Bash', tool_input: { command: 'curl https://example.com' } }));
    assert.equal(JSON.parse(hook.out).hookSpecificOutput.permissionDecision, 'deny', hook.err);
  });

  it('is ignored, with the reason, when the person can write the file or owns its folder', () => {
    fs.chownSync(file, uid, uid);
    assert.equal(canWrite(file), true);
    const owned = asUser(['explain', '--managed', 'try.jsonc', ...CURL]);
    assert.equal(JSON.parse(owned.out).decision, 'allow', owned.err);
    assert.match(owned.err, new RegExp(`warning: the system managed policy ${file} is ignored: ${file} is owned by uid ${uid}, not by root`));
    fs.chownSync(file, 0, 0);
    fs.chownSync(system, uid, uid);
    assert.equal(canWrite(system), true);
    const check = asUser(['check']);
    assert.match(check.err, new RegExp(`is ignored: ${system} is owned by uid ${uid}, not by root`));
    assert.match(check.err, new RegExp(`managed policy: none in force \\(${file} is ignored\\)`));
  });

  it('in the hook and the service: a trial file never replaces it, and the service checks it again at every call', async () => {
    const env = { XDG_STATE_HOME: path.join(root, 'state'), [SYSTEM_DIR_VARIABLE]: system };
    const input = JSON.stringify({ session_id: 's', cwd: work, tool_name: 'Bash', tool_input: { command: 'curl https://example.com' } });
    const out: string[] = [];
    await main(['hook', '--agent', 'claude', '--managed', path.join(work, 'try.jsonc')], { out: (l) => out.push(l), err: () => undefined, cwd: work, readStdin: () => input, env });
    assert.equal(JSON.parse(out.join('\n')).hookSpecificOutput.permissionDecision, 'deny');

    const cache = new PolicyCache();
    const sources = { folder: work, managedFile: path.join(work, 'try.jsonc'), stateDir: path.join(root, 'state'), system: { env } };
    const first = cache.load(sources);
    assert.ok(first.ok);
    assert.equal(first.managed.from, 'system');
    const managed = first.policy.layers.find((l) => l.name === 'managed')!.state;
    assert.equal(managed.kind === 'ok' ? managed.layer.file : undefined, file);
    // Its folder made writable by everyone: the same file, the same stamp, no longer in force.
    fs.chmodSync(system, 0o777);
    const second = cache.load(sources);
    assert.ok(second.ok);
    assert.equal(second.managed.from, 'trial');
    assert.match(second.warnings.join('\n'), /is ignored: .* is writable by everyone/);
  });
});
