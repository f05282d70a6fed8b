// A sandboxed command's connections judged by the policy, through sessions, the real bubblewrap,
// curl and a real host in a network namespace the test makes (test/netHost.ts): a `domains`
// allow lets the command reach that host and no other; a `domains` deny refuses it whatever
// else allows the command; a host no rule decides is asked of a person, whose answer holds for
// the command or the session; a rule's "network": false keeps the network off and "network":
// true opens every host unjudged; every connection has its audit line.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { Agent, Builtins } from '../../src/runtime/agents/agent.js';
import { AllowApproval, Completed, DenyApproval, Failed, OpenApproval, type TurnState } from '../../src/runtime/tree/answers.js';
import { MemoryAuditLog } from '../../src/runtime/audit/audit.js';
import type { RuntimeEvent } from '../../src/runtime/tree/events.js';
import { probeSandbox } from '../../src/runtime/sandbox/sandboxProbe.js';
import { ScriptedModel } from '../../src/runtime/model/scripted.js';
import type { Session } from '../../src/runtime/session.js';
import type { StartSessionOptions } from '../../src/runtime/tree/sessionOptions.js';
import { requireTestHost, startTestHost, type TestHost } from '../netHost.js';

const probe = probeSandbox();

let ws: string;
let host: TestHost;
const sessions: Session[] = [];

type CommandResult = { exitCode: number; stdout: string; stderr: string; sandbox: { sandboxed: boolean; network: boolean; hostsJudged?: boolean } };

async function run(policyText: string, commands: string[], options: StartSessionOptions = {}): Promise<{ results: CommandResult[]; session: Session }> {
  const policy = new Policy({ workspace: loadPolicyText(policyText, path.join(ws, '.agentpolicy.jsonc')) });
  const agent = new Agent({
    instructions: '',
    builtins: new Builtins({ files: false, commands: true, subagents: false }),
    permissionPolicy: policy as never,
    model: new ScriptedModel({ agents: { main: [...commands.map((command) => ({ call: 'run_command', input: { command } })), { say: 'done' }] } }),
  });
  const session = await agent.startSession({ workspaceFolder: ws, ...options });
  sessions.push(session);
  const state: TurnState = await session.run('go');
  assert.ok(state instanceof Completed, `expected Completed, got ${state.type}${state instanceof Failed ? `: ${state.error}` : ''}`);
  const events = (session as unknown as { tree: { events: RuntimeEvent[] } }).tree.events;
  const results = events.flatMap((e) => (e.type === 'tool-result' && e.toolId === 'builtin.run_command' ? [JSON.parse(e.content) as CommandResult] : []));
  return { results, session };
}

const rules = (...r: object[]): string => JSON.stringify({ version: 1, rules: r });
const curlRule = { id: 'curl', tools: ['builtin.run_command'], commands: ['curl *'], decision: 'allow' };

describe('network rules and the sandbox: each connection judged (real bubblewrap, a real test host)', function () {
  this.timeout(60_000);
  before(async function () {
    await initShellParser();
    if (!probe.available) {
      console.log(`    (network sandbox tests skipped: ${probe.reason})`);
      this.skip();
    }
    requireTestHost(this);
    host = await startTestHost();
  });
  after(async () => {
    await host?.stop();
  });
  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'network-sandbox-')));
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.cancel();
    fs.rmSync(ws, { recursive: true, force: true });
  });

  const curl = (name: string, p = '/'): string => `curl -sSf --max-time 10 http://${name}${p}`;

  it('a domains allow lets the command reach that host, and only that host, and the audit says so', async () => {
    const audit = new MemoryAuditLog();
    const { results } = await run(rules({ id: 'local', tools: ['builtin.run_command'], domains: [host.names.allowed], decision: 'allow' }, curlRule),
      [curl(host.names.allowed, '/ok'), `${curl(host.names.allowed, `/redirect?to=http://${host.names.other}/leak`).replace('-sSf', '-sSfL')}`],
      { audit, onApproval: () => new DenyApproval() });
    assert.equal(results[0]!.exitCode, 0, results[0]!.stderr);
    assert.match(results[0]!.stdout, /"path":"\/ok"/);
    assert.deepEqual(results[0]!.sandbox, { sandboxed: true, network: false, hostsJudged: true });
    // The redirect's host is no rule's: asked, and the person's Deny refuses it.
    assert.notEqual(results[1]!.exitCode, 0);
    assert.ok(!results[1]!.stdout.includes('/leak'));
    const connections = audit.entries.filter((e) => e.event === 'connection');
    assert.deepEqual(connections.map((e) => [e.host, e.decision, e.rule?.id ?? null]), [[host.names.allowed, 'allow', 'local'], [host.names.allowed, 'allow', 'local']]);
    const asked = audit.entries.filter((e) => e.event === 'callback-opened' && e.host !== undefined);
    assert.deepEqual(asked.map((e) => [e.host, e.port]), [[host.names.other, 80]]);
  });

  it('a domains deny refuses the host whatever allows the command, when a redirect leads there', async () => {
    const audit = new MemoryAuditLog();
    const { results } = await run(rules({ id: 'no', domains: [host.names.other], decision: 'deny' }, { id: 'all', tools: ['builtin.run_command'], domains: ['*'], decision: 'allow' }, curlRule),
      [`curl -sSL --max-time 10 'http://${host.names.allowed}/redirect?to=http://${host.names.other}/' -o /dev/null -w '%{http_code}'`], { audit });
    assert.equal(results[0]!.stdout, '403');
    const connections = audit.entries.filter((e) => e.event === 'connection');
    assert.deepEqual(connections.map((e) => [e.host, e.decision, e.rule?.id ?? null]), [[host.names.allowed, 'allow', 'all'], [host.names.other, 'deny', 'no']]);
  });

  it('a host no rule decides is asked, naming the command and the host; Allow holds for the command, for the Session for its later commands', async () => {
    const seen: OpenApproval[] = [];
    const { results } = await run(rules(curlRule), [`${curl(host.names.allowed, '/a')} && ${curl(host.names.allowed, '/b')}`, curl(host.names.allowed, '/c')], {
      onApproval: (ctx) => {
        const callback = ctx.callback as OpenApproval;
        seen.push(callback);
        return new AllowApproval({ scope: 'session' });
      },
    });
    // One question for the first command's two connections; the session's Allow covers the second command.
    assert.equal(seen.length, 1, seen.map((s) => s.request.title).join('\n'));
    assert.deepEqual(seen[0]!.request.connection, { host: host.names.allowed, port: 80, url: `http://${host.names.allowed}/`, command: `${curl(host.names.allowed, '/a')} && ${curl(host.names.allowed, '/b')}` });
    assert.match(seen[0]!.request.title, new RegExp(`wants to reach ${host.names.allowed.replaceAll('.', '\\.')}:80`));
    assert.deepEqual(results.map((r) => r.exitCode), [0, 0]);
    assert.match(results[1]!.stdout, /"path":"\/c"/);
  });

  it('Allow once holds for that command only: the next command asks again', async () => {
    let asked = 0;
    const { results } = await run(rules(curlRule), [curl(host.names.allowed), curl(host.names.allowed)], {
      onApproval: () => {
        asked++;
        return new AllowApproval();
      },
    });
    assert.equal(asked, 2);
    assert.deepEqual(results.map((r) => r.exitCode), [0, 0]);
  });

  it('a command a person allowed still has each connection judged', async () => {
    const titles: string[] = [];
    const { results } = await run(rules({ id: 'ask', tools: ['builtin.run_command'], decision: 'ask' }), [curl(host.names.other)], {
      onApproval: (ctx) => {
        const request = (ctx.callback as OpenApproval).request;
        titles.push(request.connection ? 'host' : 'call');
        return request.connection ? new DenyApproval() : new AllowApproval();
      },
    });
    assert.deepEqual(titles, ['call', 'host']);
    assert.notEqual(results[0]!.exitCode, 0);
  });

  it('"network": false keeps the network off (nothing is asked); "network": true opens every host, unjudged', async () => {
    let asked = 0;
    const onApproval = () => {
      asked++;
      return new AllowApproval();
    };
    const off = await run(rules({ ...curlRule, sandbox: { network: false } }), [curl(host.names.allowed)], { onApproval });
    assert.notEqual(off.results[0]!.exitCode, 0);
    assert.deepEqual(off.results[0]!.sandbox, { sandboxed: true, network: false });
    const open = await run(rules({ ...curlRule, sandbox: { network: true } }), [`curl -sSf --noproxy '*' --max-time 10 http://${host.addresses.other}/`], { onApproval });
    assert.equal(open.results[0]!.exitCode, 0, open.results[0]!.stderr);
    assert.deepEqual(open.results[0]!.sandbox, { sandboxed: true, network: true });
    assert.equal(asked, 0);
  });
});
