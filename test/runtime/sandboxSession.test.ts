// The sandbox through sessions: the decision (or the permission mode) and who allowed a command
// decide how it runs (sandboxed, with or without network, protected files writable only when a
// person allowed the protected-files hook's ask); the event, the transcript line, the approval
// request, the notification and the audit line say so; a session that can run commands starts by
// saying whether they are sandboxed here; what a command created in a protected name is removed
// and audited. Against the real bubblewrap; skipped, saying why, where there is none.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { Agent, Builtins } from '../../src/runtime/agents/agent.js';
import { AllowApproval, Completed, Failed, OpenApproval, type TurnState } from '../../src/runtime/tree/answers.js';
import { encodeAuditLine, MemoryAuditLog } from '../../src/runtime/audit/audit.js';
import { auditTable, parseAuditText } from '../../src/runtime/audit/auditRead.js';
import type { RuntimeEvent } from '../../src/runtime/tree/events.js';
import type { PermissionMode } from '../../src/runtime/tree/sessionOptions.js';
import { probeSandbox, sandboxTesting } from '../../src/runtime/sandbox/sandboxProbe.js';
import { ScriptedModel } from '../../src/runtime/model/scripted.js';
import type { Session } from '../../src/runtime/session.js';
import { describeEvent } from '../../src/runtime/host/transcript.js';
import type { HostedSession } from '../../src/runtime/host/sessionHost.js';
import { askMessage, explainSandbox } from '../../src/vscode/basics/describe.js';
import { startReplyServer, type ReplyServer } from './replyServer.js';

const probe = probeSandbox();

let ws: string;
let server: ReplyServer | undefined;
let port: number;
const sessions: Session[] = [];

function completed(state: TurnState): Completed {
  assert.ok(state instanceof Completed, `expected Completed, got ${state.type}${state instanceof Failed ? `: ${state.error}` : ''}`);
  return state;
}

function agent(commands: string[], options: { permissionMode?: PermissionMode; policy?: Policy } = {}): Agent {
  return new Agent({
    instructions: '',
    builtins: new Builtins({ files: false, commands: true, subagents: false }),
    permissionMode: options.permissionMode ?? 'auto',
    ...(options.policy ? { permissionPolicy: options.policy as never } : {}),
    model: new ScriptedModel({ agents: { main: [...commands.map((command) => ({ call: 'run_command', input: { command } })), { say: 'done: {{last}}' }] } }),
  });
}

async function start(a: Agent, options: Parameters<Agent['startSession']>[0] = {}): Promise<Session> {
  const s = await a.startSession({ workspaceFolder: ws, ...options });
  sessions.push(s);
  return s;
}

function events(session: Session): RuntimeEvent[] {
  return (session as unknown as { tree: { events: RuntimeEvent[] } }).tree.events;
}

function transcript(session: Session): string[] {
  return events(session).flatMap((e) => describeEvent(e, session.id));
}

/** The run_command results the model saw, parsed. */
function results(session: Session): Array<{ exitCode: number; stdout: string; stderr: string; sandbox: { sandboxed: boolean; network: boolean } }> {
  return events(session).flatMap((e) => (e.type === 'tool-result' && e.toolId === 'builtin.run_command' ? [JSON.parse(e.content)] : []));
}

function policy(text: string): Policy {
  return new Policy({ workspace: loadPolicyText(text, path.join(ws, '.agentpolicy.jsonc')) });
}

/** Reaches the policy file without naming it (the protected-files hook does not ask): only the sandbox stops it. */
const SNEAKY_WRITE = 'f=$(ls -a | grep policy); echo evil > "$f"';

describe('the sandbox through sessions (real bubblewrap)', function () {
  before(async function () {
    await initShellParser();
    if (!probe.available) {
      console.log(`    (sandbox session tests skipped: ${probe.reason})`);
      this.skip();
    }
    // Answers anything with the same few bytes: enough for bash's /dev/tcp and for curl.
    server = await startReplyServer('HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n');
    port = server.port;
  });
  after(async () => {
    await server?.close();
  });
  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-session-')));
    fs.writeFileSync(path.join(ws, '.agentpolicy.jsonc'), '{ "version": 1, "rules": [] }\n');
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.cancel();
    delete sandboxTesting.availability;
    fs.rmSync(ws, { recursive: true, force: true });
  });

  const tcp = (): string => `exec 3<>/dev/tcp/127.0.0.1/${port} && tail -1 <&3`;

  it('no policy, permission mode auto: sandboxed, each host judged (none reached); the start, the event, the transcript and the audit say so', async () => {
    const audit = new MemoryAuditLog();
    const session = await start(agent([`${SNEAKY_WRITE}; ${tcp()}`]), { audit });
    completed(await session.run('go'));
    assert.equal(fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8'), '{ "version": 1, "rules": [] }\n');
    const [result] = results(session);
    assert.deepEqual(result!.sandbox, { sandboxed: true, network: false, hostsJudged: true });
    assert.match(result!.stderr, /Read-only file system/);
    assert.match(result!.stderr, /\[sandbox: this command ran in the sandbox: .* the network reaches only the hosts the policy allows/);
    const first = events(session).find((e) => e.type === 'sandbox');
    assert.ok(first && first.type === 'sandbox' && first.available);
    const lines = transcript(session);
    assert.match(lines[0]!, /^sandbox: Commands run sandboxed here \(bubblewrap/);
    assert.ok(lines.some((l) => /builtin\.run_command .* -> allow \(default\) \[sandboxed, hosts judged\]$/.test(l)), lines.join('\n'));
    const decision = audit.entries.find((e) => e.event === 'decision' && e.tool === 'builtin.run_command');
    assert.deepEqual(decision?.sandbox, { sandboxed: true, network: false, hostsJudged: true });
  });

  it('a command a person allowed runs sandboxed, its connections still judged (loopback never reached); the protected files stay read-only', async () => {
    const seen: OpenApproval[] = [];
    const session = await start(agent([`${SNEAKY_WRITE}; ${tcp()}`], { permissionMode: 'ask' }), {
      onApproval: (ctx) => {
        seen.push(ctx.callback as OpenApproval);
        return new AllowApproval();
      },
    });
    completed(await session.run('go'));
    assert.deepEqual(seen[0]!.request.sandbox, { sandboxed: true, network: false, hostsJudged: true });
    const hosted = { pathOf: () => [{ agent: 'main' }] } as unknown as HostedSession;
    assert.match(askMessage(hosted, seen[0]!), /If allowed, it runs sandboxed, each host it reaches judged by the policy\.$/);
    const [result] = results(session);
    assert.equal(result!.stdout, '', result!.stderr);
    assert.deepEqual(result!.sandbox, { sandboxed: true, network: false, hostsJudged: true });
    assert.equal(fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8'), '{ "version": 1, "rules": [] }\n');
    assert.ok(transcript(session).some((l) => l.endsWith('-> ask (default) [if allowed: sandboxed, hosts judged]')), transcript(session).join('\n'));
  });

  it("the protected-files hook's ask, allowed by a person: that run may change the protected files", async () => {
    const audit = new MemoryAuditLog();
    let request: OpenApproval['request'] | undefined;
    const session = await start(agent(['echo "{ \\"version\\": 1 }" > .agentpolicy.jsonc']), {
      audit,
      onApproval: (ctx) => {
        request = (ctx.callback as OpenApproval).request;
        return new AllowApproval();
      },
    });
    completed(await session.run('go'));
    assert.equal(request?.hook, 'protected-files');
    assert.deepEqual(request?.sandbox, { sandboxed: true, network: false, hostsJudged: true, protectedWritable: true });
    assert.equal(fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8'), '{ "version": 1 }\n');
    const opened = audit.entries.find((e) => e.event === 'callback-opened');
    assert.deepEqual(opened?.sandbox, { sandboxed: true, network: false, hostsJudged: true, protectedWritable: true });
  });

  it('a protected file a command created is removed; the result, the transcript and the audit say so', async () => {
    const audit = new MemoryAuditLog();
    const session = await start(agent(['n=agents; echo "{}" > ".$n.jsonc" && echo made']), { audit });
    completed(await session.run('go'));
    assert.ok(!fs.existsSync(path.join(ws, '.agents.jsonc')));
    const [result] = results(session);
    assert.equal(result!.stdout, 'made\n');
    assert.match(result!.stderr, /\[sandbox: the command created the protected file \.agents\.jsonc: removed it\]/);
    assert.ok(transcript(session).includes('warning: sandbox: the command created the protected file .agents.jsonc: removed it'), transcript(session).join('\n'));
    const cleanup = audit.entries.find((e) => e.event === 'sandbox-cleanup');
    assert.deepEqual(cleanup?.undone, ['the command created the protected file .agents.jsonc: removed it']);
    assert.equal(cleanup?.tool, 'builtin.run_command');
    assert.ok(cleanup?.inputDigest?.startsWith('sha256:'));
  });

  it('where there is no sandbox: not sandboxed, and the session says so and why at its start', async () => {
    sandboxTesting.availability = { available: false, reason: 'bubblewrap (bwrap) is not installed' };
    const session = await start(agent(['echo $$']));
    completed(await session.run('go'));
    const [result] = results(session);
    assert.deepEqual(result!.sandbox, { sandboxed: false, network: true });
    const lines = transcript(session);
    assert.equal(lines[0], 'sandbox: Commands are NOT sandboxed here: bubblewrap (bwrap) is not installed.');
    assert.ok(lines.some((l) => l.endsWith('-> allow (default) [not sandboxed]')), lines.join('\n'));
  });

  describe('under a policy (the engine decides sandboxed and network)', () => {
    before(function () {
      // The engine's part (decision.sandbox) lands with the per-part decisions; until then there is nothing to hold it to.
      const d = new Policy({ workspace: loadPolicyText('{ "version": 1, "default": "allow" }', '/p.jsonc') }).decide(
        { tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command: 'true' }, agent: 'main' },
        { workspaceFolder: os.tmpdir(), sandbox: true },
      );
      if (d.sandbox === undefined) {
        console.log('    (skipped: the policy engine does not set decision.sandbox yet)');
        this.skip();
      }
    });

    it('an allow rule: sandboxed, each host judged; with "sandbox": { "network": true }: every host', async () => {
      const p = policy(`{ "version": 1, "rules": [
        { "id": "net", "decision": "allow", "tools": ["builtin.run_command"], "commands": ["curl *"], "sandbox": { "network": true } },
        { "id": "cmds", "decision": "allow", "tools": ["builtin.run_command"] }
      ] }`);
      const session = await start(agent([SNEAKY_WRITE, `curl -sS --max-time 5 http://127.0.0.1:${port}/`], { policy: p }));
      completed(await session.run('go'));
      const [write, connect] = results(session);
      assert.deepEqual(write!.sandbox, { sandboxed: true, network: false, hostsJudged: true });
      assert.match(write!.stderr, /Read-only file system/);
      assert.deepEqual(connect!.sandbox, { sandboxed: true, network: true });
      assert.equal(connect!.stdout, 'hello\n', connect!.stderr);
      assert.equal(fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8'), '{ "version": 1, "rules": [] }\n');
    });

    it('"sandbox": "off" in the user layer: not sandboxed, and the session says the policy turned it off', async () => {
      const p = new Policy({
        user: loadPolicyText('{ "version": 1, "sandbox": "off" }', '/user.jsonc', 'user'),
        workspace: loadPolicyText('{ "version": 1, "default": "allow" }', path.join(ws, '.agentpolicy.jsonc')),
      });
      const session = await start(agent(['echo $$'], { policy: p }));
      completed(await session.run('go'));
      assert.deepEqual(results(session)[0]!.sandbox, { sandboxed: false, network: true });
      assert.match(transcript(session)[0]!, /^sandbox: Commands are NOT sandboxed: the user policy sets "sandbox": "off"\.$/);
    });

    it('the Explain view says how the command runs and whether this machine sandboxes', () => {
      const p = policy('{ "version": 1, "rules": [{ "decision": "allow", "tools": ["builtin.run_command"], "sandbox": true }] }');
      const d = p.decide({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command: 'npm test' }, agent: 'main' }, { workspaceFolder: ws, sandbox: true });
      assert.match(explainSandbox('builtin.run_command', d) ?? '', /^Sandbox: it runs sandboxed, each host it reaches judged by the policy\. Commands run sandboxed here/);
      assert.equal(explainSandbox('builtin.read_file', d), undefined);
    });
  });
});

describe('the audit lines of the sandbox', () => {
  it('read back with their sandbox fields; older lines without them read as before', () => {
    const base = { time: '2026-01-01T00:00:00.000Z', session: 's1', turn: 't1', agent: 'main', tool: 'builtin.run_command' };
    const lines = [
      encodeAuditLine({ ...base, event: 'decision', decision: 'allow', rule: null, default: 'permissionMode', sandbox: { sandboxed: true, network: false } }),
      encodeAuditLine({ ...base, event: 'callback-opened', decision: 'ask', callback: 'cb1', hook: 'protected-files', sandbox: { sandboxed: true, network: true, protectedWritable: true } }),
      encodeAuditLine({ ...base, event: 'sandbox-cleanup', undone: ['the command created the protected file .agents.jsonc: removed it'] }),
      Buffer.from(`${JSON.stringify({ ...base, event: 'decision', decision: 'allow', rule: null, default: 'permissionMode' })}\n`),
    ];
    const read = parseAuditText(Buffer.concat(lines).toString('utf8'));
    assert.deepEqual(read.problems, []);
    assert.deepEqual(read.entries.map((e) => e.sandbox), [{ sandboxed: true, network: false }, { sandboxed: true, network: true, protectedWritable: true }, undefined, undefined]);
    assert.deepEqual(read.entries[2]!.undone, ['the command created the protected file .agents.jsonc: removed it']);
    assert.match(auditTable(read.entries), /sandbox-cleanup .*the command created the protected file \.agents\.jsonc: removed it/);
  });
});
