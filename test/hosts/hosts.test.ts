// `agentpolicy hook` under the real agent CLIs (Claude Code, Codex, Gemini CLI, Copilot CLI),
// offline: each CLI runs headless against a scripted model on 127.0.0.1 that calls the shell
// once, with the hook installed in a temp project, and the file system says what ran.
// `npm run test:hosts` (scripts/test-hosts.mjs) installs the CLIs and builds dist/ first.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startDecisionService, type DecisionService } from '../../src/hooks/service/decisionService';
import { readServiceDiscovery } from '../../src/hooks/state/serviceFiles';
import { binPath, HOST_DRIVERS, type HostDriver } from './hostDrivers';
import { createHostProject, type HostProject, type HostRunResult, type HostScenario, runHost, runHostIn } from './hostRun';
import { AGENTPOLICY_CLI } from './installHook';
import { describeSandbox, sandboxAvailability } from '../../src/runtime/sandbox/sandboxProbe';
import { requireTestHost, startTestHost, type TestHost } from '../netHost';

/** What each host can be made to do when its hook fails (docs/hooks.md, "Tested hosts"): the hook being the client `hook install` writes. */
const BLOCKS_WHEN_HOOK: Record<HostDriver['host'], { crashes: boolean; timesOut: boolean }> = {
  claude: { crashes: true, timesOut: true }, // the entry's "onFailure": "block"
  // The hook client turns a crash of the hook it runs into exit 2 with a reason, which these hosts obey.
  codex: { crashes: true, timesOut: false },
  gemini: { crashes: true, timesOut: false },
  copilot: { crashes: true, timesOut: false }, // an exit code other than 0 denies; a timeout lets the call through
};

/** Stand-ins for the hook: one that crashes, one that answers nothing until long after the host's timeout. */
const CRASHING_HOOK = `node -e "process.exit(1)"`;
const STALLING_HOOK = `node -e "setTimeout(() => {}, 15000)"`;

const INVALID_POLICY = '{ "version": 1, "rules": [ { "tools": ["builtin.run_command"], "decision": "perhaps" } ] }\n';

for (const driver of HOST_DRIVERS) {
  describe(`${driver.label} with agentpolicy hook (real CLI, offline)`, function () {
    this.timeout(120_000);
    let result: HostRunResult | undefined;

    before(function () {
      if (!fs.existsSync(binPath(driver))) {
        console.warn(`    skipped: ${driver.label} is not installed at ${binPath(driver)} (run scripts/ensure-agent-clis.sh)`);
        this.skip();
      }
      assert.ok(fs.existsSync(AGENTPOLICY_CLI), `${AGENTPOLICY_CLI} is missing: run npm run build`);
    });

    afterEach(() => {
      result?.dispose();
      result = undefined;
    });

    async function run(scenario: HostScenario): Promise<HostRunResult> {
      result = await runHost(driver, scenario);
      assert.equal(result.run.timedOut, false, `the run hung\n${result.explain()}`);
      // Else "it did not run" would hold for a host that never offered the model its shell.
      assert.ok(result.model.turns.some((t) => t.answered !== 'not-a-model-turn' && 'toolCall' in t.answered), `the model was never offered a shell tool\n${result.explain()}`);
      return result;
    }

    function decisions(r: HostRunResult): string[] {
      return r.auditLines().filter((l) => l.event === 'decision' && l.tool === 'builtin.run_command').map((l) => `${l.decision} ${l.summary ?? ''}`);
    }

    // The calls the hook must stop run with the host's own permission to run anything (where it
    // has one), so that only the hook stands in the way; the allowed call runs without it, so that
    // only the hook's allow lets it through.
    it('never runs a denied rm, tells the model why, and audits the deny', async () => {
      const r = await run({ command: 'rm victim.txt', hostApproves: true });
      assert.ok(r.exists('victim.txt'), `victim.txt was deleted\n${r.explain()}`);
      assert.ok(r.model.toolResults.some((t) => t.includes('no deleting')), `the deny reason did not reach the model\n${r.explain()}`);
      assert.deepEqual(decisions(r).map((d) => d.split(' ')[0]), ['deny'], r.explain());
    });

    it('runs an allowed touch without a prompt, and audits the allow', async () => {
      const r = await run({ command: 'touch made.txt' });
      assert.ok(r.exists('made.txt'), `made.txt was not created\n${r.explain()}`);
      assert.deepEqual(decisions(r).map((d) => d.split(' ')[0]), ['allow'], r.explain());
    });

    it('does not run a call the policy asks about when no editor runs, and does not hang', async () => {
      const r = await run({ command: 'mkdir asked-dir', hostApproves: true });
      assert.ok(!r.exists('asked-dir'), `asked-dir was created\n${r.explain()}`);
      assert.equal(r.model.toolResults.length, 1, `the model was not told the call did not run\n${r.explain()}`);
      assert.deepEqual(decisions(r).map((d) => d.split(' ')[0]), ['ask'], r.explain());
    });

    it('does not run a call when the policy is invalid and no valid version was seen', async () => {
      const r = await run({ command: 'touch made.txt', policy: INVALID_POLICY, hostApproves: true });
      assert.ok(!r.exists('made.txt'), `made.txt was created under an invalid policy\n${r.explain()}`);
      assert.ok(r.model.toolResults.some((t) => t.includes('is invalid')), `the model was not told the policy is invalid\n${r.explain()}`);
      assert.deepEqual(decisions(r).map((d) => d.split(' ')[0]), ['deny'], r.explain());
    });

    if (BLOCKS_WHEN_HOOK[driver.host].crashes) {
      it('does not run a call when the hook crashes', async () => {
        const r = await run({ command: 'touch made.txt', hookLauncher: CRASHING_HOOK, hostApproves: true });
        assert.ok(!r.exists('made.txt'), `made.txt was created past a crashed hook\n${r.explain()}`);
      });
    }

    if (BLOCKS_WHEN_HOOK[driver.host].timesOut) {
      it('does not run a call when the hook does not answer within its timeout', async () => {
        const r = await run({ command: 'touch made.txt', hookLauncher: STALLING_HOOK, hookTimeoutSeconds: 2, hostApproves: true });
        assert.ok(!r.exists('made.txt'), `made.txt was created past a timed-out hook\n${r.explain()}`);
      });
    }
  });
}

// The hook client `hook install --via command` writes (docs/hooks.md, "How the hook starts"): with
// the decision service up it answers; stopped, the client decides in-process with the absolute
// node and dist/cli.js; neither on the host's PATH, it still decides.
const claude = HOST_DRIVERS.find((d) => d.host === 'claude')!;

/**
 * A suite's runs of Claude Code: skipped without the CLI; each test's project (`set`) and
 * in-process decision service (`serve`, in the run's own state folder where the hooks look for
 * it) are taken down after it.
 */
function useClaudeRuns(): {
  set: (project: HostProject) => HostProject;
  serve: (project: HostProject) => Promise<DecisionService>;
  stop: () => Promise<void>;
  decisions: (project: HostProject) => string[];
} {
  let where: HostProject | undefined;
  let service: DecisionService | undefined;
  before(function () {
    if (!fs.existsSync(binPath(claude))) {
      console.warn(`    skipped: ${claude.label} is not installed at ${binPath(claude)} (run scripts/ensure-agent-clis.sh)`);
      this.skip();
    }
    assert.ok(fs.existsSync(AGENTPOLICY_CLI), `${AGENTPOLICY_CLI} is missing: run npm run build`);
  });
  const stop = async (): Promise<void> => {
    await service?.close();
    service = undefined;
  };
  afterEach(async () => {
    await stop();
    where?.dispose();
    where = undefined;
  });
  return {
    set: (project) => (where = project),
    serve: async (project) => (service = await startDecisionService({
      stateDir: stateOf(project), workspace: project.project, env: { HOME: project.home, PATH: process.env.PATH }, findEditor: () => undefined,
    })),
    stop,
    decisions: (project) => project.auditLines().filter((l) => l.event === 'decision' && l.tool === 'builtin.run_command').map((l) => l.decision ?? '?'),
  };
}

/** Claude Code asked to run a denied `rm` (with its own permission to run anything: only the hook stands in the way), then an allowed `touch`: the first never runs, the second does. */
async function deniedThenAllowed(where: HostProject, decisions: (project: HostProject) => string[]): Promise<void> {
  const denied = await runHostIn(claude, where, { command: 'rm victim.txt', hostApproves: true });
  assert.ok(where.exists('victim.txt'), `victim.txt was deleted\n${denied.explain()}`);
  assert.ok(denied.model.toolResults.some((t) => t.includes('no deleting')), denied.explain());
  const allowed = await runHostIn(claude, where, { command: 'touch made.txt' });
  assert.ok(where.exists('made.txt'), `made.txt was not created\n${allowed.explain()}`);
  assert.deepEqual(decisions(where), ['deny', 'allow'], allowed.explain());
}

/** The run's state folder (its XDG_STATE_HOME's agentpolicy), where the hooks look for the service. */
const stateOf = (project: HostProject): string => path.join(project.home, '.local', 'state', 'agentpolicy');

describe(`${claude.label} with the hook client and the decision service (real CLI, offline)`, function () {
  this.timeout(120_000);
  const { set, serve, stop, decisions } = useClaudeRuns();

  it('the service up: a denied rm never runs, an allowed touch runs, both decided by the service', async () => {
    const where = set(createHostProject(claude, { hookVia: 'command' }));
    const s = await serve(where);
    await deniedThenAllowed(where, decisions);
    assert.ok(s.policies.loads + s.policies.hits >= 2, 'the service decided both calls');
  });

  it('the service stopped: still decided, by the in-process fallback', async () => {
    const where = set(createHostProject(claude, { hookVia: 'command' }));
    await serve(where);
    await stop();
    const denied = await runHostIn(claude, where, { command: 'rm victim.txt', hostApproves: true });
    assert.ok(where.exists('victim.txt'), `victim.txt was deleted\n${denied.explain()}`);
    assert.ok(denied.model.toolResults.some((t) => t.includes('no deleting')), denied.explain());
    const allowed = await runHostIn(claude, where, { command: 'touch made.txt' });
    assert.ok(where.exists('made.txt'), `made.txt was not created\n${allowed.explain()}`);
    assert.deepEqual(decisions(where), ['deny', 'allow']);
  });

  it('agentpolicy not on the host\'s PATH (/usr/bin:/bin): still decided (before, every call was blocked as "agentpolicy: not found")', async () => {
    const where = set(createHostProject(claude, { hookVia: 'command' }));
    const bare = '/usr/bin:/bin';
    const allowed = await runHostIn(claude, where, { command: 'touch made.txt', env: { PATH: bare } });
    assert.ok(where.exists('made.txt'), `made.txt was not created\n${allowed.explain()}`);
    const denied = await runHostIn(claude, where, { command: 'rm victim.txt', hostApproves: true, env: { PATH: bare } });
    assert.ok(where.exists('victim.txt'), `victim.txt was deleted\n${denied.explain()}`);
    assert.deepEqual(decisions(where), ['allow', 'deny'], denied.explain());
  });
});

// Claude Code's http hook, what `hook install` writes for it by default (docs/hooks.md, "Claude
// Code's http hook"): the service answers it; with the service down and nothing to start it the
// call is blocked (onFailure: block), and the SessionStart hook starts it again.
describe(`${claude.label} through its http hook to the decision service (real CLI, offline)`, function () {
  this.timeout(120_000);
  const { set, serve, decisions } = useClaudeRuns();

  function ourHttpEntry(project: HostProject): { url: string; onFailure: string } {
    const settings = JSON.parse(fs.readFileSync(path.join(project.project, '.claude', 'settings.local.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<Record<string, string>> }>> };
    return settings.hooks.PreToolUse![0]!.hooks[0] as unknown as { url: string; onFailure: string };
  }

  it('the service up: the http hook is what runs; a denied rm never runs, an allowed touch runs, both decided by the service', async () => {
    const where = set(createHostProject(claude));
    const entry = ourHttpEntry(where);
    assert.equal(entry.onFailure, 'block');
    assert.ok(!fs.existsSync(path.join(where.project, '.claude', 'settings.json')), 'no command hook beside the http hook');
    const service = await serve(where);
    assert.equal(new URL(entry.url).port, String(service.port), 'the service listens on the port the hook names');
    await deniedThenAllowed(where, decisions);
    assert.equal(service.policies.loads + service.policies.hits, 2, 'the service decided both calls');
  });

  it('the service stopped and nothing to start it (the hook client gone): an allowed touch is blocked, nothing decided', async () => {
    const where = set(createHostProject(claude));
    for (const f of fs.readdirSync(stateOf(where))) if (f.startsWith('hook-client-')) fs.rmSync(path.join(stateOf(where), f));
    const run = await runHostIn(claude, where, { command: 'touch made.txt' });
    assert.equal(run.run.timedOut, false, run.explain());
    assert.ok(!where.exists('made.txt'), `made.txt was created: the call ran without the policy's answer\n${run.explain()}`);
    assert.deepEqual(decisions(where), [], run.explain());
    assert.ok(run.model.toolResults.some((t) => /blocking because onFailure is "block"/.test(t) && /ECONNREFUSED/.test(t)), `Claude Code did not say it blocked the call\n${run.explain()}`);
  });

  it('the service stopped: the SessionStart hook starts it again, and it decides', async () => {
    const where = set(createHostProject(claude));
    const allowed = await runHostIn(claude, where, { command: 'touch made.txt' });
    assert.ok(where.exists('made.txt'), `made.txt was not created\n${allowed.explain()}`);
    const started = readServiceDiscovery(stateOf(where));
    assert.ok(started !== undefined && started.pid !== process.pid, 'a service of its own was started');
    assert.equal(new URL(ourHttpEntry(where).url).port, new URL(started.url).port);
    const denied = await runHostIn(claude, where, { command: 'rm victim.txt', hostApproves: true });
    assert.ok(where.exists('victim.txt'), `victim.txt was deleted\n${denied.explain()}`);
    assert.deepEqual(decisions(where), ['allow', 'deny'], denied.explain());
    assert.equal(readServiceDiscovery(stateOf(where))?.pid, started.pid, 'the second session found the service running');
  });
});

// docs/hooks.md, "Commands in our sandbox": an allowed shell command of a host that takes a
// changed tool input (Claude Code and Codex `updatedInput`, Gemini CLI `tool_input`, Copilot CLI
// `modifiedArgs`) comes back as a line that runs it under `agentpolicy sandbox`; the home folder's
// credential stores are hidden there, and a host no rule names cannot be reached (a test host in a
// network namespace, test/netHost.ts). The run's home is outside /tmp (the sandbox's /tmp is its own).
for (const driver of HOST_DRIVERS) {
  describe(`${driver.label}: an allowed shell command runs in our sandbox (real CLI, offline)`, function () {
    this.timeout(120_000);
    const CAT_POLICY = '{ "version": 1, "rules": [ { "tools": ["builtin.run_command"], "commands": ["cat *", "echo *", "bash fetch.sh"], "decision": "allow" } ], "default": "ask" }\n';
    const KEY = 'AGENTPOLICY-TEST-PRIVATE-KEY-0123456789';
    let where: HostProject | undefined;
    let testHost: TestHost | undefined;

    before(async function () {
      if (!fs.existsSync(binPath(driver))) {
        console.warn(`    skipped: ${driver.label} is not installed at ${binPath(driver)} (run scripts/ensure-agent-clis.sh)`);
        this.skip();
      }
      assert.ok(fs.existsSync(AGENTPOLICY_CLI), `${AGENTPOLICY_CLI} is missing: run npm run build`);
      if (!sandboxAvailability().available) {
        console.warn(`    skipped: no sandbox on this machine (${describeSandbox()})`);
        this.skip();
      }
      requireTestHost(this);
      testHost = await startTestHost();
    });

    after(async () => testHost?.stop());

    afterEach(() => {
      where?.dispose();
      where = undefined;
    });

    async function catKey(env: Record<string, string> = {}): Promise<{ run: Awaited<ReturnType<typeof runHostIn>>; result: string }> {
      where = createHostProject(driver, { policy: CAT_POLICY, parentDir: '/var/tmp' });
      const key = path.join(where.home, '.ssh', 'id_rsa');
      fs.mkdirSync(path.dirname(key), { recursive: true, mode: 0o700 });
      fs.writeFileSync(key, `${KEY}\n`, { mode: 0o600 });
      // The host's name is in the script, not the command line: only the sandbox can stop the connection.
      fs.writeFileSync(path.join(where.project, 'fetch.sh'), `curl -sS -m 10 http://${testHost!.names.other}/probe || echo curl-failed\n`);
      const run = await runHostIn(driver, where, { command: `cat ${key}; bash fetch.sh; echo cat-ran`, env });
      assert.equal(run.run.timedOut, false, `the run hung\n${run.explain()}`);
      assert.deepEqual(where.auditLines().filter((l) => l.event === 'decision' && l.tool === 'builtin.run_command').map((l) => l.decision), ['allow'], run.explain());
      return { run, result: run.model.toolResults.join('\n') };
    }

    it('the command runs (allowed) but the home key is hidden from it and a host no rule names is refused', async () => {
      const { run, result } = await catKey();
      assert.match(result, /cat-ran/, `the allowed command did not run\n${run.explain()}`);
      assert.doesNotMatch(result, new RegExp(KEY), `the key was read: the command did not run in the sandbox\n${run.explain()}`);
      assert.match(result, /No such file or directory|Permission denied/, `cat was not refused the key\n${run.explain()}`);
      assert.doesNotMatch(result, /localPort/, `the test host answered: the connection was let through\n${run.explain()}`);
      assert.match(result, new RegExp(`refused the connection to ${testHost!.names.other.replace(/\./g, '\\.')}:80: no rule decides it`), `the sandbox did not refuse the connection\n${run.explain()}`);
    });

    it('control: with AGENTPOLICY_HOOK_SANDBOX=0 the same command reads the key and reaches the host', async () => {
      const { run, result } = await catKey({ AGENTPOLICY_HOOK_SANDBOX: '0' });
      assert.match(result, /cat-ran/, run.explain());
      assert.match(result, new RegExp(KEY), `the key was not read without our sandbox\n${run.explain()}`);
      assert.match(result, /localPort/, `the test host was not reached without our sandbox\n${run.explain()}`);
    });
  });
}
