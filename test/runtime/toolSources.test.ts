// Tool sources (MCP servers as the runtime sees them) and elicitation callbacks, with fake
// sources: listing at the first model call, one connection per tree, stopping with the
// session, sign-ins before listing, and requests for input answered like approvals.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  Agent, AllowApproval, AlreadySettled, Answered, Builtins, ElicitationAnswer, KeepCallbackOpen, MemoryAuditLog, OpenElicitation, PermissionPolicy,
  PermissionRule, ScriptedModel, SdkError, SignInAnswer, Subagent,
  type ElicitationRequest, type RuntimeTool, type Session, type ToolConnection, type ToolRunContext, type ToolSource,
} from '../../src/entries/runtime.js';
import { formFields, readField, type FormField } from '../../src/runtime/tree/elicitationForm.js';
import { loadWorkspaceAgents } from '../../src/runtime/agents/workspaceAgents.js';
import { protectedFilesHook } from '../../src/runtime/calls/protected.js';

const FORM: ElicitationRequest['requestedSchema'] = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 2 }, color: { type: 'string', enum: ['red', 'blue'] }, count: { type: 'integer', minimum: 1 } },
  required: ['name'],
};

/** A source whose tools echo, and whose `ask` tool elicits. Records what happened to it. */
class FakeSource implements ToolSource {
  readonly name: string;
  connects = 0;
  lists = 0;
  closes = 0;
  failListing = false;
  /** The next listing answers as a server that refuses the credentials (a 401). */
  refuseCredentials = false;
  connected = true;
  wasConnected = false;
  /** Resolves when the `slow` tool is running; the call ends when `finishSlow` is resolved. */
  finishSlow?: () => void;
  lastElicit: unknown;
  constructor(readonly id: string, private readonly withSignIn = false) {
    this.name = id.slice('mcp.'.length);
  }
  connect(): ToolConnection {
    this.connects++;
    const source = this;
    return {
      ...(this.withSignIn ? { signIn: { source: 'mcp' as const, id: this.id, name: this.name, isConnected: () => source.connected, wasConnected: () => source.wasConnected } } : {}),
      async tools() {
        source.lists++;
        if (source.failListing) throw new Error('spawn ENOENT');
        if (source.refuseCredentials) {
          source.refuseCredentials = false;
          source.connected = false;
          source.wasConnected = true;
          throw Object.assign(new Error(`${source.name} needs a sign-in`), { name: 'McpSignInRequired' });
        }
        return [source.tool('echo', { readOnlyHint: true }, async (input) => `echo ${JSON.stringify(input)}`),
          source.tool('ask', {}, async (_input, ctx) => {
            source.lastElicit = await ctx.elicit!({ source: { id: source.id, name: source.name }, message: 'What is your name?', requestedSchema: FORM });
            return JSON.stringify(source.lastElicit);
          }),
          // Asks, but gives up when `giveUp` aborts (a server's own timeout), or returns without waiting for the answer.
          source.tool('impatient', {}, async (input, ctx) => {
            const giveUp = new AbortController();
            const asked = ctx.elicit!({ source: { id: source.id, name: source.name }, message: 'Quick?', requestedSchema: FORM }, { signal: giveUp.signal });
            void asked.then((r) => (source.lastElicit = r));
            await new Promise<void>((resolve) => (source.finishSlow = resolve));
            if ((input as { abort?: boolean }).abort) {
              giveUp.abort();
              return `gave up: ${JSON.stringify(await asked)}`;
            }
            return 'returned without the answer';
          }),
          source.tool('write', {}, async () => 'written')];
      },
      async close() {
        source.closes++;
      },
    };
  }
  private tool(name: string, annotations: RuntimeTool['annotations'], run: (input: unknown, ctx: ToolRunContext) => Promise<string>): RuntimeTool {
    return {
      id: `${this.id}.${name}`, kind: 'mcp', name: `${this.name}_${name}`, description: name, inputJsonSchema: { type: 'object' }, annotations,
      check: (input) => ({ ok: true, value: input }), run,
    };
  }
}

const allowReadOnly = new PermissionPolicy({ default: 'ask', rules: [PermissionRule({ tools: ['mcp.*'], hints: { readOnlyHint: true }, decision: 'allow' })] });
const allowAll = new PermissionPolicy({ default: 'allow', rules: [] });

function agentWith(source: FakeSource, script: unknown[], policy = allowReadOnly, subagents: Subagent[] = []): Agent {
  return new Agent({
    name: 'main', model: new ScriptedModel({ agents: { main: script, helper: script } } as never), instructions: '',
    toolSources: [source], builtins: new Builtins({ subagents: subagents.length > 0 }), permissionPolicy: policy, subagents,
  });
}

async function openElicitation(session: Session): Promise<OpenElicitation> {
  const state = await session.run('go');
  assert.equal(state.type, 'blocked', JSON.stringify(state));
  const cb = state.type === 'blocked' ? state.callbacks[0] : undefined;
  assert.ok(cb instanceof OpenElicitation, `expected an elicitation, got ${cb?.type}`);
  return cb;
}

describe('tool sources', () => {
  it('are connected and listed at the first model call, not when the session starts', async () => {
    const source = new FakeSource('mcp.fake');
    const session = await agentWith(source, [{ call: 'fake_echo', input: { a: 1 }, as: 'r' }, { say: '{{r}}' }]).startSession();
    assert.equal(source.connects, 0);
    const state = await session.run('go');
    assert.equal(state.type, 'completed');
    assert.equal(state.type === 'completed' && state.text, 'echo {"a":1}');
    assert.deepEqual([source.connects, source.lists], [1, 1]);
    await session.cancel();
    assert.equal(source.closes, 1);
  });

  it('closeToolSources stops them; the next turn starts and lists them again, with no clash', async () => {
    const source = new FakeSource('mcp.fake');
    const session = await agentWith(source, [{ call: 'fake_echo', input: {} }, { say: 'one' }, { call: 'fake_echo', input: {} }, { say: 'two' }]).startSession();
    assert.equal((await session.run('go')).type, 'completed');
    await session.closeToolSources();
    assert.equal(source.closes, 1);
    const again = await session.run('again');
    assert.equal(again.type === 'completed' && again.text, 'two');
    assert.deepEqual([source.connects, source.lists], [2, 2]);
    assert.deepEqual(session.warnings, []);
    await session.cancel();
    assert.equal(source.closes, 2);
  });

  it('a source tool is judged on its id and hints: a tool without readOnlyHint is asked', async () => {
    const source = new FakeSource('mcp.fake');
    const session = await agentWith(source, [{ call: 'fake_ask', input: {} }, { say: 'done' }]).startSession();
    const state = await session.run('go');
    assert.equal(state.type, 'blocked');
    assert.equal(state.type === 'blocked' && state.callbacks[0]?.type === 'approval' && state.callbacks[0].request.tool.id, 'mcp.fake.ask');
    await session.cancel();
  });

  it('subagents share the tree\'s connection; the tree stops it once', async () => {
    const source = new FakeSource('mcp.fake');
    const helper = new Subagent({ name: 'helper', toolSources: [source] });
    const model = new ScriptedModel({ agents: {
      main: [{ spawn: 'helper', task: 't', as: 'h' }, { wait: 'all' }, { call: 'fake_echo', input: {} }, { say: 'ok' }],
      helper: [{ call: 'fake_echo', input: { from: 'helper' } }, { say: 'helped' }],
    } } as never);
    const agent = new Agent({ name: 'main', model, instructions: '', toolSources: [source], subagents: [helper], builtins: new Builtins({ subagents: true }), permissionPolicy: allowAll });
    const session = await agent.startSession();
    const state = await session.run('go');
    assert.equal(state.type, 'completed', JSON.stringify(state));
    assert.equal(source.connects, 1);
    assert.equal(source.lists, 2, 'each session lists the tools it offers its model');
    await session.cancel();
    assert.equal(source.closes, 1);
  });

  it('a source that cannot be listed is left out with a warning, and tried again at the next turn', async () => {
    const source = new FakeSource('mcp.fake');
    source.failListing = true;
    const session = await agentWith(source, [{ call: 'fake_echo', input: {}, as: 'r' }, { say: '{{r}}' }, { call: 'fake_echo', input: {}, as: 's' }, { say: '{{s}}' }]).startSession();
    const first = await session.run('go');
    assert.equal(first.type, 'completed');
    assert.match(first.type === 'completed' ? first.text : '', /no tool named \\"fake_echo/);
    assert.ok(session.warnings.some((w) => /fake could not be listed: spawn ENOENT/.test(w)), session.warnings.join('\n'));
    source.failListing = false;
    const second = await session.run('again');
    assert.equal(second.type, 'completed');
    assert.equal(second.type === 'completed' && second.text, 'echo {}');
    assert.equal(source.lists, 2);
    await session.cancel();
  });

  it('a source that needs a sign-in opens an OpenSignIn before listing; refused, its tools are left out', async () => {
    const source = new FakeSource('mcp.fake', true);
    source.connected = false;
    const session = await agentWith(source, [{ call: 'fake_echo', input: {}, as: 'r' }, { say: '{{r}}' }]).startSession();
    const state = await session.run('go');
    assert.equal(state.type, 'blocked');
    const cb = state.type === 'blocked' ? state.callbacks[0] : undefined;
    assert.equal(cb?.type, 'sign-in');
    assert.equal(source.lists, 0, 'nothing is listed before the sign-in');
    await session.turn(state.turnId).answer(cb!.id, new SignInAnswer({ denied: ['mcp.fake'] }));
    const after = await session.turn(state.turnId).result();
    assert.equal(after.type, 'completed');
    assert.match(after.type === 'completed' ? after.text : '', /no tool named/);
    assert.equal(source.lists, 0);
    await session.cancel();
  });
});

describe('elicitation callbacks', () => {
  it('a request for input opens an OpenElicitation on the calling session and turn; accept sends the content', async () => {
    const source = new FakeSource('mcp.fake');
    const audit = new MemoryAuditLog();
    const session = await agentWith(source, [{ call: 'fake_ask', input: {}, as: 'r' }, { say: '{{r}}' }], allowAll).startSession({ audit });
    const cb = await openElicitation(session);
    assert.equal(cb.sessionId, session.id);
    assert.equal(cb.request.toolId, 'mcp.fake.ask');
    assert.equal(cb.request.source.id, 'mcp.fake');
    assert.equal(cb.request.message, 'What is your name?');
    const turn = session.turn(cb.turnId);
    const answered = await turn.answer(cb.id, new ElicitationAnswer({ action: 'accept', content: { name: 'Ada', count: 2 } }));
    assert.ok(answered instanceof Answered);
    assert.ok((await turn.answer(cb.id, new ElicitationAnswer({ action: 'decline' }))) instanceof AlreadySettled);
    const done = await turn.result();
    assert.equal(done.type, 'completed');
    assert.deepEqual(JSON.parse(done.type === 'completed' ? done.text : ''), { action: 'accept', content: { name: 'Ada', count: 2 } });
    const settled = audit.entries.find((e) => e.event === 'callback-settled' && e.callback === cb.id);
    assert.equal(settled?.answer, 'accepted');
    assert.ok(!JSON.stringify(audit.entries).includes('Ada'), 'the audit log never holds what a person typed');
    await session.cancel();
  });

  it('decline and cancel reach the server as such', async () => {
    for (const action of ['decline', 'cancel'] as const) {
      const source = new FakeSource('mcp.fake');
      const session = await agentWith(source, [{ call: 'fake_ask', input: {} }, { say: 'done' }], allowAll).startSession();
      const cb = await openElicitation(session);
      await session.turn(cb.turnId).answer(cb.id, new ElicitationAnswer({ action }));
      assert.equal((await session.turn(cb.turnId).result()).type, 'completed');
      assert.deepEqual(source.lastElicit, { action });
      await session.cancel();
    }
  });

  it('an answer that does not fit the form raises SdkError, sends nothing, and the request stays open', async () => {
    const source = new FakeSource('mcp.fake');
    const session = await agentWith(source, [{ call: 'fake_ask', input: {} }, { say: 'done' }], allowAll).startSession();
    const cb = await openElicitation(session);
    const turn = session.turn(cb.turnId);
    const bad = [
      { color: 'red' }, // name missing
      { name: 'A' }, // too short
      { name: 'Ada', color: 'green' }, // not in the enum
      { name: 'Ada', count: 1.5 }, // not an integer
      { name: 'Ada', count: 0 }, // below the minimum
      { name: 'Ada', extra: true }, // not a field
    ];
    for (const content of bad) {
      await assert.rejects(turn.answer(cb.id, new ElicitationAnswer({ action: 'accept', content } as never)), SdkError, JSON.stringify(content));
    }
    await assert.rejects(turn.answer(cb.id, new SignInAnswer({ connected: [] }) as never), SdkError);
    assert.equal(source.lastElicit, undefined);
    assert.deepEqual(session.openCallbacks().map((c) => c.id), [cb.id]);
    await turn.answer(cb.id, new ElicitationAnswer({ action: 'accept', content: { name: 'Ada' } }));
    await turn.result();
    assert.deepEqual(source.lastElicit, { action: 'accept', content: { name: 'Ada' } });
    await session.cancel();
  });

  it('an onElicitation handler answers it; KeepCallbackOpen leaves it open', async () => {
    const source = new FakeSource('mcp.fake');
    let asked = 0;
    const session = await agentWith(source, [{ call: 'fake_ask', input: {} }, { say: 'done' }], allowAll).startSession({
      onElicitation: (_ctx, request) => {
        asked++;
        return asked === 1 ? new KeepCallbackOpen() : new ElicitationAnswer({ action: 'accept', content: { name: `re: ${request.message}` } });
      },
    });
    const blocked = await session.run('go');
    assert.equal(blocked.type, 'blocked');
    const done = await session.turn(blocked.turnId).result({ after: undefined });
    assert.equal(done.type, 'completed');
    assert.deepEqual(source.lastElicit, { action: 'accept', content: { name: 're: What is your name?' } });
    await session.cancel();
  });

  it('cancelling the session closes an open request as cancel', async () => {
    const source = new FakeSource('mcp.fake');
    const session = await agentWith(source, [{ call: 'fake_ask', input: {} }, { say: 'done' }], allowAll).startSession();
    const cb = await openElicitation(session);
    await session.cancel();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(source.lastElicit, { action: 'cancel' });
    assert.ok((await session.turn(cb.turnId).answer(cb.id, new ElicitationAnswer({ action: 'decline' }))) instanceof AlreadySettled);
    assert.equal(source.closes, 1);
  });
});

describe('the elicitation form', () => {
  const fields = formFields(FORM);

  it('lists the fields in the schema\'s order with required ones marked', () => {
    assert.deepEqual(fields.map((f) => [f.name, f.required]), [['name', true], ['color', false], ['count', false]]);
  });

  it('reads typed text as the value the schema asks for, or says what is wrong', () => {
    const [name, color, count] = fields as [FormField, FormField, FormField];
    assert.deepEqual(readField(name, ''), { ok: false, error: 'name is required' });
    assert.deepEqual(readField(name, 'A'), { ok: false, error: 'at least 2 characters' });
    assert.deepEqual(readField(name, 'Ada'), { ok: true, value: 'Ada' });
    assert.deepEqual(readField(color, ''), { ok: true, value: undefined });
    assert.equal(readField(color, 'green').ok, false);
    assert.deepEqual(readField(count, '3'), { ok: true, value: 3 });
    assert.equal(readField(count, '1.5').ok, false);
    assert.equal(readField(count, '0').ok, false);
    assert.equal(readField(count, 'three').ok, false);
    const flag: FormField = { name: 'ok', field: { type: 'boolean' }, required: true, label: 'ok' };
    assert.deepEqual([readField(flag, 'yes'), readField(flag, 'no')], [{ ok: true, value: true }, { ok: true, value: false }]);
  });

  it('every value the form reads is an answer the runtime accepts', async () => {
    const source = new FakeSource('mcp.fake');
    const session = await agentWith(source, [{ call: 'fake_ask', input: {} }, { say: 'done' }], allowAll).startSession();
    const cb = await openElicitation(session);
    const content: Record<string, string | number | boolean> = {};
    for (const [f, text] of [[fields[0]!, 'Ada'], [fields[1]!, 'blue'], [fields[2]!, '7']] as const) {
      const read = readField(f, text);
      assert.ok(read.ok && read.value !== undefined);
      content[f.name] = read.value;
    }
    assert.ok((await session.turn(cb.turnId).answer(cb.id, new ElicitationAnswer({ action: 'accept', content }))) instanceof Answered);
    await session.cancel();
  });
});

describe('MCP servers named in the agents file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agents-mcp-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (tools: string[]): void => fs.writeFileSync(path.join(dir, '.agents.jsonc'), JSON.stringify({ agents: [{ name: 'a', tools, subagents: [{ name: 's', tools: ['mcp.two.*'] }] }] }));

  it('mcp.<server>, mcp.<server>.* and mcp.* name the workspace\'s servers', () => {
    const one = new FakeSource('mcp.one');
    const two = new FakeSource('mcp.two');
    write(['mcp.one']);
    let loaded = loadWorkspaceAgents({ workspaceFolder: dir, toolSources: [one, two] });
    assert.deepEqual(loaded.diagnostics, []);
    assert.deepEqual(loaded.agents[0]!.toolSources, [one]);
    assert.deepEqual(loaded.agents[0]!.subagents[0]!.toolSources, [two]);
    write(['mcp.*', 'mcp.one.*']);
    loaded = loadWorkspaceAgents({ workspaceFolder: dir, toolSources: [one, two] });
    assert.deepEqual(loaded.agents[0]!.toolSources, [one, two]);
  });

  it('a server that mcp.json does not declare is a diagnostic naming the servers that exist', () => {
    write(['mcp.three']);
    const loaded = loadWorkspaceAgents({ workspaceFolder: dir, toolSources: [new FakeSource('mcp.one'), new FakeSource('mcp.two')] });
    assert.equal(loaded.diagnostics.length, 1);
    assert.match(loaded.diagnostics[0]!.message, /no MCP server "three" is declared in \.vscode\/mcp\.json \(servers: one, two\)/);
  });
});

describe('review fixes: requests for input that outlive their call, 401 at listing, servers and subagents', () => {
  async function blockedOn(session: Session): Promise<OpenElicitation> {
    const cb = await openElicitation(session);
    assert.equal(cb.request.message, 'Quick?');
    return cb;
  }

  it('a request still open when its call ends is closed as cancel; the answer goes nowhere and the turn goes on', async () => {
    const source = new FakeSource('mcp.fake');
    const session = await agentWith(source, [{ call: 'fake_impatient', input: {}, as: 'r' }, { say: '{{r}}' }], allowAll).startSession();
    const cb = await blockedOn(session);
    source.finishSlow!();
    const done = await session.turn(cb.turnId).result();
    assert.equal(done.type === 'completed' && done.text, 'returned without the answer');
    assert.deepEqual(session.openCallbacks(), []);
    assert.ok((await session.turn(cb.turnId).answer(cb.id, new ElicitationAnswer({ action: 'decline' }))) instanceof AlreadySettled);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(source.lastElicit, { action: 'cancel' });
    await session.cancel();
  });

  it('a server that stops waiting (its signal aborts) closes the request; result() does not hang', async () => {
    const source = new FakeSource('mcp.fake');
    const policy = new PermissionPolicy({ default: 'ask', rules: [PermissionRule({ tools: ['mcp.fake.impatient'], decision: 'allow' })] });
    const session = await agentWith(source, [{ call: 'fake_impatient', input: { abort: true }, as: 'r' }, { call: 'fake_write', input: {} }, { say: '{{r}}' }], policy).startSession();
    const cb = await blockedOn(session);
    source.finishSlow!();
    // The next call (fake_write, no hints) asks: the driver must return Blocked on it, not wait on the dead request.
    const next = await session.turn(cb.turnId).result({ after: undefined });
    assert.equal(next.type, 'blocked');
    assert.deepEqual(next.type === 'blocked' && next.callbacks.map((c) => c.type), ['approval']);
    assert.ok((await session.turn(cb.turnId).answer(cb.id, new ElicitationAnswer({ action: 'decline' }))) instanceof AlreadySettled);
    await session.cancel();
  });

  it('a 401 at listing raises an OpenSignIn (reconnect); once signed in, the tools are listed', async () => {
    const source = new FakeSource('mcp.fake', true);
    source.refuseCredentials = true;
    const session = await agentWith(source, [{ call: 'fake_echo', input: { a: 1 }, as: 'r' }, { say: '{{r}}' }]).startSession();
    const state = await session.run('go');
    assert.equal(state.type, 'blocked');
    const cb = state.type === 'blocked' ? state.callbacks[0] : undefined;
    assert.equal(cb?.type, 'sign-in');
    assert.deepEqual(cb?.type === 'sign-in' && cb.sources.map((s) => [s.id, s.mode]), [['mcp.fake', 'reconnect']]);
    source.connected = true;
    await session.turn(state.turnId).answer(cb!.id, new SignInAnswer({ connected: ['mcp.fake'] }));
    const done = await session.turn(state.turnId).result();
    assert.equal(done.type === 'completed' && done.text, 'echo {"a":1}');
    assert.equal(source.lists, 2);
    await session.cancel();
  });

  it('closeToolSourcesWhenDone waits for subagents an ended root turn left running', async () => {
    const source = new FakeSource('mcp.fake');
    const helper = new Subagent({ name: 'helper', toolSources: [source] });
    const model = new ScriptedModel({ agents: {
      main: [{ spawn: 'helper', task: 't' }, { say: 'left it running' }],
      helper: [{ call: 'fake_write', input: {} }, { say: 'helped' }],
    } } as never);
    const policy = new PermissionPolicy({ default: 'ask', rules: [PermissionRule({ tools: ['agents.*'], decision: 'allow' })] });
    const session = await new Agent({ name: 'main', model, instructions: '', subagents: [helper], builtins: new Builtins({ subagents: true }), permissionPolicy: policy }).startSession();
    const first = await session.run('go');
    assert.equal(first.type, 'completed', 'the root\'s turn ends; the helper it started still runs');
    for (let i = 0; i < 100 && session.openCallbacks().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    const ask = session.openCallbacks()[0];
    assert.ok(ask, 'the helper\'s write asks');
    let closed = false;
    const closing = session.closeToolSourcesWhenDone().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(closed, false, 'the helper still needs its server');
    assert.equal(source.closes, 0);
    await session.turn(first.turnId).answer(ask!.id, new AllowApproval());
    await closing;
    assert.equal(source.closes, 1);
    await session.cancel();
  });
});

describe('protected files and tools that are not ours', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'protected-mcp-')));
    fs.mkdirSync(path.join(dir, '.vscode'));
    fs.writeFileSync(path.join(dir, '.agentpolicy.jsonc'), '{ "version": 1, "rules": [] }');
    fs.writeFileSync(path.join(dir, '.vscode', 'mcp.json'), '{}');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const mcpTool: RuntimeTool = {
    id: 'mcp.evil.edit', kind: 'mcp', name: 'evil_edit', description: '', inputJsonSchema: { type: 'object' },
    annotations: { readOnlyHint: true }, check: (input) => ({ ok: true, value: input }), run: async () => 'ok',
  };

  it('any string of an MCP tool\'s input that names a protected file asks, whatever field holds it and whatever the hints claim', () => {
    const hook = protectedFilesHook([path.join(dir, '.agentpolicy.jsonc'), path.join(dir, '.vscode', 'mcp.json')]);
    const asks = (input: unknown): boolean => hook.check({ tool: mcpTool, input, agent: 'a', workspaceFolder: dir }) !== undefined;
    assert.equal(asks({ file_path: '.agentpolicy.jsonc' }), true);
    assert.equal(asks({ filename: '.vscode/mcp.json' }), true);
    assert.equal(asks({ edits: [{ target: `${dir}/.agentpolicy.jsonc` }] }), true);
    assert.equal(asks({ target: './.vscode/../.agentpolicy.jsonc' }), true);
    assert.equal(asks({ file_path: 'src/index.js', text: 'harmless' }), false);
    // Builtins' and client tools' annotations are the program's own: they keep the field-based check only.
    assert.equal(hook.check({ tool: { ...mcpTool, id: 'client.x', kind: 'client' }, input: { note: '.agentpolicy.jsonc' }, agent: 'a', workspaceFolder: dir }), undefined);
  });
});
