// Hidden tools in sessions (issue 14): a tool the policy denies outright for the agent is not in
// the tool list of its model requests (builtin, client, subagent and MCP tools alike), the list
// follows a policy reloaded while the session runs, and a hidden tool called anyway is denied and
// audited as before. The session's events (and so its transcript) say what is hidden.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import { z } from 'zod';
import {
  Agent, Builtins, MemoryAuditLog, Subagent, tool,
  type Model, type ModelRequest, type ModelResponse, type RuntimeTool, type Session, type ToolConnection, type ToolSource,
} from '../../src/entries/runtime.js';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import type { RuntimeEvent } from '../../src/runtime/tree/events.js';
import { auditTable } from '../../src/runtime/audit/auditRead.js';
import { describeEvent } from '../../src/runtime/host/transcript.js';

function policyOf(rules: readonly unknown[], extra: Record<string, unknown> = {}): Policy {
  const layer = loadPolicyText(JSON.stringify({ version: 1, rules, ...extra }), '.agentpolicy.jsonc', 'workspace');
  assert.equal(layer.valid, true, JSON.stringify(layer.diagnostics));
  return new Policy({ workspace: layer });
}

/** A model that records the tool names of every request and plays the given moves in turn. */
class RecordingModel implements Model {
  readonly id = 'recording';
  readonly offered: string[][] = [];
  constructor(private readonly moves: Array<{ call?: string; input?: unknown }>) {}
  respond(request: ModelRequest): Promise<ModelResponse> {
    this.offered.push(request.tools.map((t) => t.name).sort());
    const move = this.moves.shift();
    if (move?.call === undefined) return Promise.resolve({ text: 'done', toolCalls: [] });
    return Promise.resolve({ text: '', toolCalls: [{ id: `c${this.offered.length}`, name: move.call, input: move.input ?? {} }] });
  }
}

const lookup = tool({ name: 'lookup', description: 'looks up', inputSchema: z.object({}) }, () => 'found');

class FakeServer implements ToolSource {
  readonly id = 'mcp.github';
  readonly name = 'github';
  connect(): ToolConnection {
    const make = (name: string, readOnlyHint: boolean): RuntimeTool => ({
      id: `mcp.github.${name}`, kind: 'mcp', name: `github_${name}`, description: name, inputJsonSchema: { type: 'object' },
      annotations: { readOnlyHint }, check: (input: unknown) => ({ ok: true as const, value: input }), run: () => Promise.resolve(name),
    });
    return { tools: () => Promise.resolve([make('push', false), make('list_issues', true)]), close: () => Promise.resolve() };
  }
}

describe('hidden tools in sessions', () => {
  before(() => initShellParser());
  const sessions: Session[] = [];
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.cancel();
  });

  /** A session and its events, all of them once `ended()` resolves (the session cancelled). */
  async function start(agent: Agent, options: Parameters<Agent['startSession']>[0]): Promise<{ session: Session; events: RuntimeEvent[]; ended: () => Promise<void> }> {
    const session = await agent.startSession({ workspaceFolder: os.tmpdir(), ...options });
    sessions.push(session);
    const events: RuntimeEvent[] = [];
    const reading = (async () => {
      for await (const e of session.events()) events.push(e);
    })();
    return { session, events, ended: async () => (await session.cancel(), await reading) };
  }

  it('a builtin denied outright is not offered; called anyway it is denied and audited as any denial; the transcript says why it is hidden', async () => {
    const model = new RecordingModel([{ call: 'run_command', input: { command: 'ls' } }]);
    const agent = new Agent({ instructions: '', model, tools: [lookup], builtins: new Builtins({ subagents: false, files: true, commands: true }) });
    const audit = new MemoryAuditLog();
    const policy = policyOf([{ id: 'no-commands', tools: ['builtin.run_command'], decision: 'deny', reason: 'no shell here' }, { tools: ['*'], decision: 'allow' }]);
    const { session, events, ended } = await start(agent, { policy, audit });
    assert.equal((await session.run('go')).type, 'completed');
    await ended();
    assert.ok(model.offered.every((names) => !names.includes('run_command')), JSON.stringify(model.offered));
    assert.ok(model.offered[0]!.includes('lookup') && model.offered[0]!.includes('read_file'));
    const denial = audit.entries.find((e) => e.event === 'decision' && e.tool === 'builtin.run_command');
    assert.equal(denial?.decision, 'deny');
    assert.equal(denial?.rule?.id, 'no-commands');
    // The audit log says what the model was not offered, by which rule, before the call it made anyway.
    const line = audit.entries.findIndex((e) => e.event === 'tools-hidden');
    assert.ok(line >= 0 && line < audit.entries.indexOf(denial!));
    assert.deepEqual(audit.entries[line]!.hidden?.map((h) => [h.tool, h.rule?.id]), [['builtin.run_command', 'no-commands']]);
    assert.match(auditTable(audit.entries), /tools-hidden .* not offered: builtin\.run_command/);
    const hidden = events.filter((e) => e.type === 'tools-hidden');
    assert.equal(hidden.length, 1, 'said once, not at every request');
    const said = describeEvent(hidden[0]!, session.id).join('\n');
    assert.match(said, /not offered to its model \(every call denied\): builtin\.run_command by workspace rule 1 "no-commands"/);
  });

  it('a call of a tool that does not exist is told the tools offered, not the hidden ones', async () => {
    const model = new RecordingModel([{ call: 'nope' }]);
    const seen: string[] = [];
    const respond = model.respond.bind(model);
    model.respond = (request) => {
      for (const m of request.messages) if (m.role === 'tool') seen.push(m.content);
      return respond(request);
    };
    const agent = new Agent({ instructions: '', model, tools: [lookup], builtins: new Builtins({ subagents: false, commands: true }) });
    const { session } = await start(agent, { policy: policyOf([{ tools: ['builtin.run_command'], decision: 'deny' }]) });
    await session.run('go');
    assert.match(seen[0] ?? '', /there is no tool named \\"nope\\"; the tools are: lookup"/);
  });

  it('a deny that reads the input does not hide the tool', async () => {
    const model = new RecordingModel([]);
    const agent = new Agent({ instructions: '', model, builtins: new Builtins({ subagents: false, commands: true }) });
    const { session } = await start(agent, { policy: policyOf([{ tools: ['builtin.run_command'], commands: ['rm *'], decision: 'deny' }]) });
    await session.run('go');
    assert.deepEqual(model.offered[0], ['run_command']);
  });

  it('the list follows a policy reloaded while the session runs: the next request offers what the new policy does not deny outright', async () => {
    const denying = policyOf([{ tools: ['client.lookup'], decision: 'deny' }], { default: 'allow' });
    const allowing = policyOf([], { default: 'allow' });
    let current = allowing;
    const model = new RecordingModel([{ call: 'lookup' }, { call: 'lookup' }]);
    const agent = new Agent({ instructions: '', model, tools: [lookup], builtins: new Builtins({ subagents: false }) });
    const { session, events, ended } = await start(agent, { policy: () => current });
    const ran: string[] = [];
    // The policy changes between the first and second request.
    const respond = model.respond.bind(model);
    model.respond = (request) => {
      ran.push(request.tools.map((t) => t.name).join(','));
      if (ran.length === 1) current = denying;
      if (ran.length === 2) current = allowing;
      return respond(request);
    };
    await session.run('go');
    await ended();
    assert.deepEqual(ran, ['lookup', '', 'lookup']);
    const said = events.filter((e) => e.type === 'tools-hidden').map((e) => describeEvent(e, session.id).join(''));
    assert.equal(said.length, 2);
    assert.match(said[1]!, /every tool is offered to its model again/);
  });

  it('MCP tools are judged as they are listed: a server tool denied outright is left out, the others offered', async () => {
    const model = new RecordingModel([]);
    const agent = new Agent({ instructions: '', model, toolSources: [new FakeServer()], builtins: new Builtins({ subagents: false }) });
    const { session } = await start(agent, { policy: policyOf([{ tools: ['mcp.github.*'], hints: { readOnlyHint: false }, decision: 'deny' }], { default: 'ask' }) });
    await session.run('go');
    assert.deepEqual(model.offered[0], ['github_list_issues']);
  });

  it('spawning denied outright: the spawn tool is hidden (the session warns, as spawn-denied does); message and wait stay', async () => {
    const model = new RecordingModel([]);
    const agent = new Agent({ instructions: '', model, subagents: [new Subagent({ name: 'helper' })] });
    const warnings: string[] = [];
    const { session, events, ended } = await start(agent, { policy: policyOf([{ tools: ['agents.spawn'], decision: 'deny' }], { default: 'allow' }) });
    await session.run('go');
    await ended();
    for (const e of events) if (e.type === 'warning') warnings.push(e.message);
    assert.ok(!model.offered[0]!.includes('spawn_agent'));
    assert.ok(model.offered[0]!.includes('wait_agents'));
    assert.ok(warnings.some((w) => /every start is denied and the spawn tool is not offered/.test(w)), warnings.join('\n'));
  });

  it('no policy and permissionMode "deny": every call is denied, so no tool is offered', async () => {
    const model = new RecordingModel([{ call: 'lookup' }]);
    const audit = new MemoryAuditLog();
    const agent = new Agent({ instructions: '', model, tools: [lookup], permissionMode: 'deny', builtins: new Builtins({ subagents: false }) });
    const { session } = await start(agent, { audit });
    await session.run('go');
    assert.deepEqual(model.offered, [[], []]);
    assert.equal(audit.entries.find((e) => e.event === 'decision')?.decision, 'deny');
    assert.deepEqual(audit.entries.find((e) => e.event === 'tools-hidden')?.hidden, [{ tool: 'client.lookup', rule: null, default: 'permissionMode' }]);
  });
});
