// Flow rules through sessions: a call that runs puts its deciding rules' marks on the session
// tree (an allowed call, or an ask a person allowed; never a denied call, nor one whose input
// failed its check), later calls are judged with them, a subagent's marks reach its parent, and
// the audit lines list the marks so a session's marks can be rebuilt from the log.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { Agent, Builtins, Subagent } from '../../src/runtime/agents/agent.js';
import { AllowApproval, Completed, DenyApproval, Failed, type OpenApproval, type TurnState } from '../../src/runtime/tree/answers.js';
import { MemoryAuditLog } from '../../src/runtime/audit/audit.js';
import { auditTable, sessionMarks } from '../../src/runtime/audit/auditRead.js';
import type { RuntimeEvent } from '../../src/runtime/tree/events.js';
import { ScriptedModel } from '../../src/runtime/model/scripted.js';
import type { Session } from '../../src/runtime/session.js';
import { tool } from '../../src/runtime/tools/tools.js';
import { HostedSession } from '../../src/runtime/host/sessionHost.js';
import { describeEvent } from '../../src/runtime/host/transcript.js';
import { askMessage } from '../../src/vscode/basics/describe.js';

let ws: string;
const sessions: Session[] = [];

const RULES = [
  { id: 'read-env', tools: ['builtin.read_file'], paths: ['**/.env'], decision: 'allow', marks: ['secret'] },
  { id: 'fetch-after-secret', tools: ['client.fetch'], when: { marked: ['secret'] }, decision: 'ask', reason: 'this session read a secret' },
  { id: 'fetch', tools: ['client.fetch'], decision: 'allow', marks: ['web'] },
  { id: 'send', tools: ['client.send'], when: { unmarked: ['secret'] }, decision: 'allow' },
  { id: 'send-after-secret', tools: ['client.send'], decision: 'deny', reason: 'no sending after a secret' },
  { id: 'spawn', tools: ['agents.*'], decision: 'allow' },
  { id: 'read', tools: ['builtin.read_file'], paths: ['**'], decision: 'allow' },
];

function policy(rules: readonly unknown[] = RULES): Policy {
  return new Policy({ workspace: loadPolicyText(JSON.stringify({ version: 1, rules }), path.join(ws, '.agentpolicy.jsonc')) });
}

function clientTool(name: string): ReturnType<typeof tool> {
  return tool({ name, description: name, inputSchema: z.object({ url: z.string().optional() }) }, async () => `${name} ran`);
}

function completed(state: TurnState): Completed {
  assert.ok(state instanceof Completed, `expected Completed, got ${state.type}${state instanceof Failed ? `: ${state.error}` : ''}`);
  return state;
}

function events(session: Session): RuntimeEvent[] {
  return (session as unknown as { tree: { events: RuntimeEvent[] } }).tree.events;
}

function effective(session: Session, toolId: string): string[] {
  return events(session).flatMap((e) => (e.type === 'tool-call' && e.toolId === toolId ? [e.effective] : []));
}

type Moves = ConstructorParameters<typeof ScriptedModel>[0]['agents'];

function agent(moves: Moves, rules?: readonly unknown[], subagents: Subagent[] = []): Agent {
  return new Agent({
    instructions: '',
    tools: [clientTool('fetch'), clientTool('send')],
    builtins: new Builtins({ files: true, commands: false, subagents: subagents.length > 0 }),
    subagents,
    permissionPolicy: policy(rules) as never,
    model: new ScriptedModel({ agents: moves }),
  });
}

async function start(a: Agent, options: Parameters<Agent['startSession']>[0] = {}): Promise<Session> {
  const s = await a.startSession({ workspaceFolder: ws, ...options });
  sessions.push(s);
  return s;
}

describe('flow rules through sessions', () => {
  before(async () => {
    await initShellParser();
  });
  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'flow-marks-')));
    fs.writeFileSync(path.join(ws, '.env'), 'TOKEN=1\n');
    fs.writeFileSync(path.join(ws, 'notes.md'), 'notes\n');
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.cancel();
    fs.rmSync(ws, { recursive: true, force: true });
  });

  it('a fetch runs in a clean session; after the session read .env, the same fetch is asked, and the ask says why', async () => {
    const asked: OpenApproval[] = [];
    const audit = new MemoryAuditLog();
    const session = await start(
      agent({ main: [{ call: 'fetch', input: { url: 'https://a' } }, { call: 'read_file', input: { path: '.env' } }, { call: 'fetch', input: { url: 'https://a' } }, { say: 'done' }] }),
      { audit, onApproval: (ctx) => (asked.push(ctx.callback as OpenApproval), new AllowApproval()) },
    );
    completed(await session.run('go'));
    assert.deepEqual(effective(session, 'client.fetch'), ['allow', 'ask']);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.request.decision?.rule?.id, 'fetch-after-secret');
    assert.match(asked[0]!.request.decision!.reason!, /this session read a secret \(because this session carries the mark "secret"\)/);
    // The notification says why it asks.
    const hosted = { pathOf: () => [{ agent: 'main' }] } as unknown as HostedSession;
    assert.match(askMessage(hosted, asked[0]!), /asked by workspace rule "fetch-after-secret" .*: this session read a secret \(because this session carries the mark "secret"\)/);
    assert.deepEqual([...session.marks].sort(), ['secret', 'web']);
    // The audit: the allowed fetch and read list the marks they added; the ask carries none until allowed.
    const withMarks = audit.entries.filter((e) => e.marks !== undefined).map((e) => `${e.event} ${e.tool} ${e.marks!.join(',')}`);
    assert.deepEqual(withMarks, ['decision client.fetch web', 'decision builtin.read_file secret']);
    assert.deepEqual(sessionMarks(audit.entries, session.id), ['secret', 'web']);
    assert.match(auditTable(audit.entries), /allow \+marks secret/);
    const lines = events(session).flatMap((e) => describeEvent(e, session.id));
    assert.ok(lines.some((l) => /marked the session: secret \(by builtin\.read_file; it carries secret, web\)/.test(l)), lines.join('\n'));
  });

  it('an ask a person allowed marks the session; its callback-settled line lists the marks', async () => {
    const rules = [{ id: 'fetch-asks', tools: ['client.fetch'], decision: 'ask', marks: ['web'] }, ...RULES];
    const audit = new MemoryAuditLog();
    const session = await start(agent({ main: [{ call: 'fetch', input: { url: 'https://a' } }, { say: 'done' }] }, rules), { audit, onApproval: () => new AllowApproval() });
    completed(await session.run('go'));
    assert.deepEqual([...session.marks], ['web']);
    const settled = audit.entries.find((e) => e.event === 'callback-settled');
    assert.deepEqual(settled?.marks, ['web']);
    assert.deepEqual(sessionMarks(audit.entries, session.id), ['web']);
  });

  it('a call a session grant lets run lists its marks on its decision line too', async () => {
    const rules = [{ id: 'fetch-asks', tools: ['client.fetch'], decision: 'ask', marks: ['web'] }, ...RULES];
    const audit = new MemoryAuditLog();
    const session = await start(
      agent({ main: [{ call: 'fetch', input: { url: 'https://a' } }, { call: 'fetch', input: { url: 'https://a' } }, { say: 'done' }] }, rules),
      { audit, onApproval: () => new AllowApproval({ scope: 'session' }) },
    );
    completed(await session.run('go'));
    const granted = audit.entries.find((e) => e.event === 'decision' && e.answeredBy === 'session');
    assert.deepEqual(granted?.marks, ['web']);
  });

  it('an ask a person denied, a denied call and a call whose input failed its check mark nothing', async () => {
    const rules = [
      { id: 'fetch-asks', tools: ['client.fetch'], decision: 'ask', marks: ['web'] },
      { id: 'send-marks', tools: ['client.send'], input: { '/url': 'ok' }, decision: 'allow', marks: ['sent'] },
      { id: 'send-denied', tools: ['client.send'], decision: 'deny' },
    ];
    const session = await start(
      agent({ main: [{ call: 'fetch', input: { url: 'https://a' } }, { call: 'send', input: { url: 'no' } }, { call: 'send', input: { url: 42 } }, { say: 'done' }] }, rules),
      { onApproval: () => new DenyApproval() },
    );
    completed(await session.run('go'));
    assert.deepEqual([...session.marks], []);
  });

  it('unmarked: an allow holds until the mark arrives, then the next rule denies', async () => {
    const session = await start(agent({ main: [{ call: 'send', input: {} }, { call: 'read_file', input: { path: '.env' } }, { call: 'send', input: {} }, { say: 'done' }] }));
    completed(await session.run('go'));
    assert.deepEqual(effective(session, 'client.send'), ['allow', 'deny']);
  });

  it("a subagent's mark reaches its parent: the parent's fetch after the subagent read .env is asked", async () => {
    const asked: string[] = [];
    const reader = new Subagent({ name: 'reader', instructions: '', builtins: new Builtins({ files: true, commands: false, subagents: false }) });
    const session = await start(
      agent({
        main: [{ spawn: 'reader', task: 'read the env' }, { wait: 'all' }, { call: 'fetch', input: { url: 'https://a' } }, { say: 'done' }],
        reader: [{ call: 'read_file', input: { path: '.env' } }, { say: 'read' }],
      }, RULES, [reader]),
      { onApproval: (ctx) => (asked.push(`${ctx.session.id === session.id ? 'main' : 'sub'} ${(ctx.callback as OpenApproval).request.tool.id}`), new DenyApproval()) },
    );
    completed(await session.run('go'));
    assert.deepEqual(asked, ['main client.fetch']);
    assert.deepEqual([...session.marks], ['secret']);
    // What the editor's tree shows on the session's node.
    assert.deepEqual(new HostedSession(session, 'main', 'go').marks, ['secret']);
    const marked = events(session).find((e) => e.type === 'marks');
    assert.ok(marked && marked.type === 'marks' && marked.sessionId !== session.id && marked.agent === 'reader');
  });

  it("the log rebuilds a tree's marks from a subagent's lines too", async () => {
    const audit = new MemoryAuditLog();
    const reader = new Subagent({ name: 'reader', instructions: '', builtins: new Builtins({ files: true, commands: false, subagents: false }) });
    const session = await start(
      agent({ main: [{ spawn: 'reader', task: 'read' }, { wait: 'all' }, { say: 'done' }], reader: [{ call: 'read_file', input: { path: '.env' } }, { say: 'read' }] }, RULES, [reader]),
      { audit },
    );
    completed(await session.run('go'));
    const sub = audit.entries.find((e) => e.event === 'session-started' && e.parentSession === session.id)!.session;
    assert.deepEqual(sessionMarks(audit.entries, session.id), ['secret']);
    assert.deepEqual(sessionMarks(audit.entries, sub), ['secret']);
    assert.deepEqual(sessionMarks(audit.entries, 'another'), []);
  });
});
