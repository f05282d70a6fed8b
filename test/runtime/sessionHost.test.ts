// The editor's session host: sessions driven in the background, callbacks answered by a person
// from anywhere, transcripts, and sessions a reload interrupted found again in the audit log.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Agent, PermissionPolicy, PermissionRule, Subagent } from '../../src/runtime/agents/agent.js';
import { AllowApproval, DenyApproval } from '../../src/runtime/tree/answers.js';
import { FileAuditLog } from '../../src/runtime/audit/audit.js';
import type { Model } from '../../src/runtime/model/model.js';
import { ScriptedModel } from '../../src/runtime/model/scripted.js';
import { SessionHost } from '../../src/runtime/host/sessionHost.js';
import type { ToolConnection, ToolSource } from '../../src/runtime/tools/tools.js';
import { noteTool, until } from './hostHelpers.js';

function makeAgent(ran: string[]): Agent {
  const note = noteTool(ran);
  return new Agent({
    model: new ScriptedModel({
      agents: {
        main: [{ parallel: [{ spawn: 'checker', task: 'code' }, { spawn: 'checker', task: 'docs' }] }, { wait: 'all' }, { say: 'both done' }],
        checker: [{ call: 'note', input: { text: '{{task}}' } }, { say: 'noted {{task}}' }],
      },
    }),
    instructions: '',
    subagents: [new Subagent({ name: 'checker', tools: [note] })],
    permissionPolicy: new PermissionPolicy({ rules: [PermissionRule({ tools: ['agents.*'], decision: 'allow' })], default: 'ask' }),
  });
}

describe('SessionHost', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'host-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('lists the open callbacks of two subagents, answers one, and keeps the other open', async () => {
    const ran: string[] = [];
    const host = new SessionHost();
    const opened: string[] = [];
    host.onDidOpenCallback((c) => opened.push(c.id));
    const hosted = await host.start(makeAgent(ran), 'review', { workspaceFolder: dir });
    await until(() => host.openCallbacks().length === 2, 'two callbacks');
    assert.deepEqual(opened.length, 2);
    const [first, second] = host.openCallbacks();
    assert.notEqual(first!.callback.sessionId, hosted.id, 'a subagent asked');
    assert.deepEqual(hosted.pathOf(first!.callback.sessionId).map((n) => n.agent), ['main', 'checker']);

    const answered = await host.answer(first!.callback.id, new AllowApproval());
    assert.equal(answered?.type, 'answered');
    await until(() => ran.length === 1, 'the allowed call to run');
    assert.equal(host.openCallbacks().length, 1);
    assert.equal(host.openCallbacks()[0]!.callback.id, second!.callback.id);

    // A second answer to the same callback (another notification, the tree) runs nothing.
    const again = await host.answer(first!.callback.id, new AllowApproval());
    assert.equal(again?.type, 'not-found', 'the root says NotFound once a subagent callback is settled');
    assert.equal(ran.length, 1);

    await host.answer(second!.callback.id, new DenyApproval());
    await until(() => hosted.state === 'completed', 'the session to complete');
    assert.deepEqual(ran, [first!.callback.type === 'approval' ? (first!.callback.request.input as { text: string }).text : '']);
    assert.equal(hosted.finalText, 'both done');
    assert.ok(hosted.transcript.some((l) => l.includes('client.note') && l.includes('-> ask')));
    assert.ok(hosted.transcript.some((l) => l.includes('denied')));
    assert.equal(hosted.transcript.at(-1), 'completed: both done');
  });

  it('a second prompt continues the same session: a new turn that sees the first, in the same transcript', async () => {
    const ran: string[] = [];
    const note = noteTool(ran);
    const agent = new Agent({
      model: new ScriptedModel({ agents: { main: [{ say: 'first: {{prompt}}' }, { call: 'note', input: { text: '{{prompt}}' } }, { say: 'second: {{prompt}} (after {{task}})' }] } }),
      instructions: '',
      tools: [note],
      permissionPolicy: new PermissionPolicy({ rules: [], default: 'ask' }),
    });
    const host = new SessionHost();
    const hosted = await host.start(agent, 'one', { workspaceFolder: dir });
    await until(() => hosted.state === 'completed', 'the first turn');
    assert.equal(hosted.finalText, 'first: one');
    const again = host.continue(hosted.id, 'two');
    assert.equal(again, hosted);
    assert.equal(hosted.turns, 2);
    assert.equal(hosted.state, 'running');
    assert.throws(() => host.continue(hosted.id, 'three'), /still running/);
    await until(() => host.openCallbacks().length === 1, 'the second turn to ask');
    await host.answer(host.openCallbacks()[0]!.callback.id, new AllowApproval());
    await until(() => hosted.state === 'completed', 'the second turn');
    assert.deepEqual(ran, ['two']);
    assert.equal(hosted.finalText, 'second: two (after one)');
    assert.ok(hosted.transcript.includes('[main] > one') && hosted.transcript.includes('[main] > two'), hosted.transcript.join('\n'));
    assert.equal(hosted.transcript.at(-1), 'completed: second: two (after one)');
    await host.cancel(hosted.id);
    assert.throws(() => host.continue(hosted.id, 'four'), /cancelled/);
    assert.throws(() => host.continue('sess_nope', 'four'), /no session/);
  });

  it('a grant stays listed after the turn that asked ends (a next prompt may use it), until it lapses or the session is closed', async () => {
    const ran: string[] = [];
    let now = 1_000_000;
    const agent = new Agent({
      model: new ScriptedModel({ agents: { main: [{ call: 'note', input: { text: 'x' } }, { say: 'done' }, { call: 'note', input: { text: 'x' } }, { say: 'again' }] } }),
      instructions: '',
      tools: [noteTool(ran)],
      permissionPolicy: new PermissionPolicy({ rules: [], default: 'ask' }),
    });
    const host = new SessionHost();
    const hosted = await host.start(agent, 'one', { workspaceFolder: dir, clock: () => now });
    await until(() => host.openCallbacks().length === 1, 'the ask');
    await host.answer(host.openCallbacks()[0]!.callback.id, new AllowApproval({ scope: 'duration', seconds: 900 }));
    await until(() => hosted.state === 'completed', 'the turn to end');
    assert.equal(hosted.grants().length, 1, 'the ended turn\'s grant is still in force');
    // A next prompt is let through by it, unasked.
    host.continue(hosted.id, 'two');
    await until(() => hosted.state === 'completed' && hosted.finalText === 'again', 'the second turn');
    assert.deepEqual(ran, ['x', 'x']);
    now += 901_000;
    assert.equal(hosted.grants().length, 0, 'a lapsed grant leaves');
    now -= 901_000;
    await host.cancel(hosted.id);
    assert.equal(hosted.grants().length, 0, 'a closed session takes no prompts: its grants are not listed');
  });

  it('names the surface whose answer settled a callback; a later answer from another runs nothing and names none', async () => {
    const ran: string[] = [];
    const host = new SessionHost();
    const hosted = await host.start(makeAgent(ran), 'review', { workspaceFolder: dir });
    await until(() => host.openCallbacks().length === 2, 'two callbacks');
    const [first, second] = host.openCallbacks().map((o) => o.callback.id);
    assert.equal((await host.answer(first!, new AllowApproval(), { via: 'notification' }))?.type, 'answered');
    assert.notEqual((await host.answer(first!, new AllowApproval(), { via: 'chat' }))?.type, 'answered');
    assert.equal(host.viaOf(first!), 'notification');
    // A refused answer (Allow for Session where the hook forbids it is not the case here: an unknown scope) names nothing.
    await assert.rejects(host.answer(second!, { type: 'allow', scope: 'forever' } as never, { via: 'tree' }), /scope/);
    assert.equal(host.viaOf(second!), undefined);
    await host.answer(second!, new DenyApproval(), { via: 'chat' });
    await until(() => hosted.state === 'completed', 'the session to complete');
    assert.equal(ran.length, 1);
    assert.ok(hosted.transcript.some((l) => /answered allow-once by person from the notification$/.test(l)), hosted.transcript.join('\n'));
    assert.ok(hosted.transcript.some((l) => /answered deny by person from the chat$/.test(l)), hosted.transcript.join('\n'));
  });

  it('two answers at once settle a callback once: the tool runs once', async () => {
    const ran: string[] = [];
    const host = new SessionHost();
    await host.start(makeAgent(ran), 'review', { workspaceFolder: dir });
    await until(() => host.openCallbacks().length === 2, 'two callbacks');
    const id = host.openCallbacks()[0]!.callback.id;
    const results = await Promise.all([host.answer(id, new AllowApproval()), host.answer(id, new AllowApproval()), host.answer(id, new DenyApproval())]);
    assert.equal(results.filter((r) => r?.type === 'answered').length, 1);
    await until(() => ran.length === 1, 'one run');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ran.length, 1);
  });

  it('finds sessions a reload interrupted, with what they left open, until a person dismisses them', async () => {
    const auditFile = path.join(dir, 'audit.jsonl');
    const first = new SessionHost({ audit: { sink: new FileAuditLog(auditFile), file: auditFile } });
    const hosted = await first.start(makeAgent([]), 'review', { workspaceFolder: dir });
    await until(() => first.openCallbacks().length === 2, 'two callbacks');
    // The window reloads: nothing ends the session; a new host reads the journal.
    const second = new SessionHost({ audit: { sink: new FileAuditLog(auditFile), file: auditFile } });
    assert.equal(second.interrupted.length, 1);
    assert.equal(second.interrupted[0]!.session, hosted.id);
    assert.equal(second.interrupted[0]!.openCallbacks.length, 2);
    assert.ok(second.interrupted[0]!.openCallbacks.every((e) => e.tool === 'client.note'));
    second.dismissInterrupted(hosted.id);
    assert.equal(second.interrupted.length, 0);
    const third = new SessionHost({ audit: { sink: new FileAuditLog(auditFile), file: auditFile } });
    assert.equal(third.interrupted.length, 0);
    await hosted.session.cancel();
  });

  it('a session that ends normally is not interrupted on the next start', async () => {
    const auditFile = path.join(dir, 'audit.jsonl');
    const host = new SessionHost({ audit: { sink: new FileAuditLog(auditFile), file: auditFile } });
    const hosted = await host.start(makeAgent([]), 'review', { workspaceFolder: dir });
    await until(() => host.openCallbacks().length === 2, 'two callbacks');
    for (const { callback } of host.openCallbacks()) await host.answer(callback.id, new AllowApproval());
    await until(() => hosted.state === 'completed', 'completion');
    await host.cancel(hosted.id);
    assert.equal(new SessionHost({ audit: { sink: new FileAuditLog(auditFile), file: auditFile } }).interrupted.length, 0);
  });

  it('cancelling closes what was open: a late answer runs nothing', async () => {
    const ran: string[] = [];
    const host = new SessionHost();
    const hosted = await host.start(makeAgent(ran), 'review', { workspaceFolder: dir });
    await until(() => host.openCallbacks().length === 2, 'two callbacks');
    const id = host.openCallbacks()[0]!.callback.id;
    await host.cancel(hosted.id);
    assert.equal(hosted.state, 'cancelled');
    assert.equal(host.openCallbacks().length, 0);
    const late = await host.answer(id, new AllowApproval());
    assert.notEqual(late?.type, 'answered');
    assert.deepEqual(ran, []);
  });

  it('the transcript ends with the outcome after the last message, also when the model answers later (a real one)', async () => {
    const later: Model = {
      id: 'later',
      respond: () => new Promise((resolve) => setTimeout(() => resolve({ text: 'the answer', toolCalls: [] }), 10)),
    };
    const host = new SessionHost();
    const hosted = await host.start(new Agent({ model: later, instructions: '' }), 'go', {});
    await until(() => hosted.state === 'completed', 'the session to complete');
    assert.deepEqual(hosted.transcript.slice(-2), ['[main] says: the answer', 'completed: the answer']);
  });

  it('a failed session is reported to onDidFail listeners with its error; a cancelled one is not', async () => {
    const refusing: Model = { id: 'refusing', respond: () => Promise.reject(new Error('the API key was refused')) };
    const host = new SessionHost();
    const failed: string[] = [];
    host.onDidFail((h) => failed.push(`${h.agent}: ${h.error}`));
    const hosted = await host.start(new Agent({ model: refusing, instructions: '' }), 'go', {});
    await until(() => hosted.state === 'failed', 'the session to fail');
    assert.deepEqual(failed, ['main: the API key was refused']);
    const waiting: Model = { id: 'waiting', respond: () => new Promise(() => undefined) };
    const other = await host.start(new Agent({ model: waiting, instructions: '' }), 'go', {});
    await host.cancel(other.id);
    assert.equal(failed.length, 1);
  });

  describe('MCP servers (tool sources) of hosted sessions', () => {
    /** A source that counts its connections opened and closed. */
    function countingSource(): ToolSource & { opened: number; closed: number } {
      const source = {
        id: 'mcp.fake', name: 'fake', opened: 0, closed: 0,
        connect(): ToolConnection {
          source.opened++;
          return {
            tools: async () => [{
              id: 'mcp.fake.echo', kind: 'mcp' as const, name: 'fake_echo', description: '', inputJsonSchema: { type: 'object' },
              annotations: {}, check: (input: unknown) => ({ ok: true as const, value: input }), run: async () => 'echoed',
            }],
            close: async () => {
              source.closed++;
            },
          };
        },
      };
      return source;
    }

    function mcpAgent(source: ToolSource, script: unknown[]): Agent {
      return new Agent({
        model: new ScriptedModel({ agents: { main: script } } as never), instructions: '', toolSources: [source],
        permissionPolicy: new PermissionPolicy({ rules: [PermissionRule({ tools: ['mcp.fake.*'], decision: 'ask' })] }),
      });
    }

    it('stop when the hosted session ends, not before', async () => {
      const source = countingSource();
      const host = new SessionHost();
      const hosted = await host.start(mcpAgent(source, [{ call: 'fake_echo', input: {} }, { say: 'done' }]), 'go', {});
      await until(() => hosted.openCallbacks().length === 1, 'the ask');
      assert.deepEqual([source.opened, source.closed], [1, 0], 'the server runs while the session waits for a person');
      await host.answer(hosted.openCallbacks()[0]!.id, new AllowApproval());
      await until(() => hosted.state === 'completed', 'the session to complete');
      await until(() => source.closed === 1, 'the server to stop');
    });

    it('stop with the window (dispose), also for sessions still waiting', async () => {
      const source = countingSource();
      const host = new SessionHost();
      const hosted = await host.start(mcpAgent(source, [{ call: 'fake_echo', input: {} }, { say: 'done' }]), 'go', {});
      await until(() => hosted.openCallbacks().length === 1, 'the ask');
      await host.dispose();
      assert.equal(source.closed, 1);
    });
  });
});
