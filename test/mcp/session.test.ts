// MCP servers as tool sources of real agent sessions: the policy judges their tools by id and by
// hints (worst case when missing), approvals stand between the model and the server, a server
// that lies about its hints only gets what the policy author chose to trust, elicitations become
// callbacks, a crashed server comes back, and a sign-in comes before the listing.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { McpToolSource } from '../../src/mcp/mcpToolSource.js';
import {
  Agent, AllowApproval, AlreadySettled, Answered, Blocked, Builtins, DenyApproval, ElicitationAnswer, OpenApproval, OpenElicitation, OpenResultReview, OpenSignIn,
  PermissionPolicy, PermissionRule, ResultReviewAnswer, ScriptedModel, SignInAnswer, tool,
  type OpenCallback, type RuntimeEvent, type RuntimeTool, type Session, type TurnState,
} from '../../src/entries/runtime.js';
import { startHttpFixture, type HttpFixture } from './fixtures/httpServer.js';
import { closeAll, EVERYTHING_SERVER, FILESYSTEM_SERVER, FIXTURES, isAlive, nodeServer, tempDir, waitFor } from './helpers.js';

type Script = ConstructorParameters<typeof ScriptedModel>[0]['agents'][string];
type Rule = ReturnType<typeof PermissionRule>;

const ALLOW_READ_ONLY = PermissionRule({ tools: ['mcp.*'], hints: { readOnlyHint: true }, decision: 'allow' });

describe('MCP tool sources in agent sessions', function () {
  this.timeout(60_000);
  let dir: string;
  let sources: McpToolSource[];
  let sessions: Session[];
  let fixture: HttpFixture | undefined;

  function fsSource(): McpToolSource {
    const s = new McpToolSource(nodeServer('fs', FILESYSTEM_SERVER, [dir]), { workspaceFolder: dir });
    sources.push(s);
    return s;
  }

  async function start(source: McpToolSource, script: Script, rules: Rule[] = [ALLOW_READ_ONLY], tools: RuntimeTool[] = []): Promise<Session> {
    const agent = new Agent({
      name: 'main', model: new ScriptedModel({ agents: { main: script } }), instructions: '', toolSources: [source], tools,
      builtins: new Builtins({ subagents: false }), permissionPolicy: new PermissionPolicy({ default: 'ask', rules }),
    });
    const session = await agent.startSession({ workspaceFolder: dir });
    sessions.push(session);
    return session;
  }

  /** The events so far (events() itself waits for more forever). */
  async function eventsOf(session: Session): Promise<RuntimeEvent[]> {
    const it = session.events();
    const out: RuntimeEvent[] = [];
    for (;;) {
      const next = await Promise.race([it.next(), new Promise<'none'>((resolve) => setImmediate(() => resolve('none')))]);
      if (next === 'none' || next.done) break;
      out.push(next.value);
    }
    void it.return(undefined);
    return out;
  }

  function completedText(state: TurnState): string {
    assert.equal(state.type, 'completed', JSON.stringify(state));
    return state.type === 'completed' ? state.text : '';
  }

  function blocked(state: TurnState): Blocked {
    assert.ok(state.type === 'blocked', JSON.stringify(state));
    return state;
  }

  function onlyCallback(state: TurnState): OpenCallback {
    assert.equal(blocked(state).callbacks.length, 1);
    return blocked(state).callbacks[0]!;
  }

  const file = (name: string): string => path.join(dir, name);

  beforeEach(() => {
    dir = tempDir('mcp-session-');
    sources = [];
    sessions = [];
    fixture = undefined;
    fs.writeFileSync(file('hello.txt'), 'hello from the workspace\n');
    fs.mkdirSync(file('docs'));
    fs.writeFileSync(file('docs/notes.md'), '# notes\n');
  });

  afterEach(async () => {
    for (const s of sessions) await s.cancel();
    await closeAll(sources);
    await fixture?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('the filesystem server', () => {
    it('read-only tools run without any callback', async () => {
      // (Not the workspace folder itself: it holds the protected files, and no server's read-only claim lifts that ask.)
      const session = await start(fsSource(), [
        { call: 'fs_list_directory', input: { path: file('docs') }, as: 'list' },
        { call: 'fs_read_text_file', input: { path: file('hello.txt') }, as: 'text' },
        { say: '{{list}}|{{text}}' },
      ]);
      assert.equal(completedText(await session.run('go')), '[FILE] notes.md|hello from the workspace\n');
      const events = await eventsOf(session);
      assert.deepEqual(events.filter((e) => e.type === 'callback-opened'), []);
      assert.deepEqual(events.flatMap((e) => (e.type === 'tool-call' ? [[e.toolId, e.name, e.effective]] : [])), [
        ['mcp.fs.list_directory', 'fs_list_directory', 'allow'],
        ['mcp.fs.read_text_file', 'fs_read_text_file', 'allow'],
      ]);
      assert.deepEqual(events.flatMap((e) => (e.type === 'tool-result' ? [e.ok] : [])), [true, true]);
    });

    it('a result under a review rule waits for a person: withheld, the model gets none of it; passed, all of it', async () => {
      const review = PermissionRule({ tools: ['mcp.fs.read_text_file'], hints: { readOnlyHint: true }, decision: 'allow', review: 'result' });
      const script = [{ call: 'fs_read_text_file', input: { path: file('hello.txt') }, as: 'text' }, { say: 'got: {{text}}' }];
      const withheld = await start(fsSource(), script, [review, ALLOW_READ_ONLY]);
      const state = await withheld.run('go');
      const cb = onlyCallback(state);
      assert.ok(cb instanceof OpenResultReview);
      assert.equal(cb.request.tool.id, 'mcp.fs.read_text_file');
      assert.equal(cb.request.result, 'hello from the workspace\n');
      await withheld.turn(state.turnId).answer(cb.id, new ResultReviewAnswer({ action: 'withhold' }));
      const text = completedText(await withheld.turn(state.turnId).result({ after: blocked(state) }));
      assert.doesNotMatch(text, /hello from the workspace/);
      assert.match(text, /withheld/);

      const passed = await start(fsSource(), script, [review, ALLOW_READ_ONLY]);
      const again = await passed.run('go');
      await passed.turn(again.turnId).answer(onlyCallback(again).id, new ResultReviewAnswer({ action: 'pass' }));
      assert.equal(completedText(await passed.turn(again.turnId).result({ after: blocked(again) })), 'got: hello from the workspace\n');
    });

    it('write_file asks; a denial leaves the file system as it was', async () => {
      const session = await start(fsSource(), [{ call: 'fs_write_file', input: { path: file('new.txt'), content: 'x' }, as: 'w' }, { say: '{{w}}' }]);
      const state = await session.run('go');
      const cb = onlyCallback(state);
      assert.ok(cb instanceof OpenApproval);
      assert.equal(cb.request.tool.id, 'mcp.fs.write_file');
      assert.equal(cb.request.tool.kind, 'mcp');
      assert.equal(cb.request.tool.annotations.readOnlyHint, false);
      assert.equal(fs.existsSync(file('new.txt')), false);
      assert.ok((await session.turn(state.turnId).answer(cb.id, new DenyApproval({ reason: 'not now' }))) instanceof Answered);
      assert.match(completedText(await session.turn(state.turnId).result({ after: blocked(state) })), /denied: not now/);
      assert.equal(fs.existsSync(file('new.txt')), false);
      assert.deepEqual(fs.readdirSync(dir).sort(), ['docs', 'hello.txt']);
    });

    it('write_file allowed by a person writes the file', async () => {
      const session = await start(fsSource(), [{ call: 'fs_write_file', input: { path: file('new.txt'), content: 'written by the agent' }, as: 'w' }, { say: '{{w}}' }]);
      const state = await session.run('go');
      const cb = onlyCallback(state);
      await session.turn(state.turnId).answer(cb.id, new AllowApproval());
      assert.match(completedText(await session.turn(state.turnId).result({ after: blocked(state) })), /Successfully wrote/);
      assert.equal(fs.readFileSync(file('new.txt'), 'utf8'), 'written by the agent');
    });

    it('move_file asks; denied, nothing moves', async () => {
      const session = await start(fsSource(), [{ call: 'fs_move_file', input: { source: file('hello.txt'), destination: file('moved.txt') } }, { say: 'done' }]);
      const state = await session.run('go');
      const cb = onlyCallback(state);
      assert.ok(cb instanceof OpenApproval);
      assert.equal(cb.request.tool.id, 'mcp.fs.move_file');
      await session.turn(state.turnId).answer(cb.id, new DenyApproval());
      completedText(await session.turn(state.turnId).result({ after: blocked(state) }));
      assert.deepEqual(fs.readdirSync(dir).sort(), ['docs', 'hello.txt']);
    });

    it('a rule that denies mcp.fs.write_file never reaches the server', async () => {
      const deny = PermissionRule({ tools: ['mcp.fs.write_file'], decision: 'deny', reason: 'no writes through MCP' });
      const session = await start(fsSource(), [{ call: 'fs_write_file', input: { path: file('new.txt'), content: 'x' }, as: 'w' }, { say: '{{w}}' }], [deny, ALLOW_READ_ONLY]);
      assert.match(completedText(await session.run('go')), /denied: no writes through MCP/);
      assert.equal(fs.existsSync(file('new.txt')), false);
      const events = await eventsOf(session);
      assert.deepEqual(events.flatMap((e) => (e.type === 'tool-call' ? [[e.toolId, e.effective]] : [])), [['mcp.fs.write_file', 'deny']]);
    });

    it('a server killed between two calls is restarted for the second', async () => {
      const source = fsSource();
      const killed: number[] = [];
      const kill = tool({ name: 'kill_server', description: 'Kills the filesystem server.', inputSchema: z.object({}) }, async () => {
        const connection = source.connections[0]!;
        const pid = connection.pid!;
        killed.push(pid);
        process.kill(pid, 'SIGKILL');
        await waitFor('the server to be seen down', () => !connection.isUp);
        return `killed ${pid}`;
      });
      const session = await start(source, [
        { call: 'fs_read_text_file', input: { path: file('hello.txt') }, as: 'a' },
        { call: 'kill_server', input: {} },
        { call: 'fs_read_text_file', input: { path: file('hello.txt') }, as: 'b' },
        { say: '{{a}}{{b}}' },
      ], [PermissionRule({ tools: ['client.kill_server'], decision: 'allow' }), ALLOW_READ_ONLY], [kill]);
      assert.equal(completedText(await session.run('go')), 'hello from the workspace\n'.repeat(2));
      assert.equal(killed.length, 1);
      assert.ok(!isAlive(killed[0]!));
      const now = source.connections[0]!.pid!;
      assert.notEqual(now, killed[0]);
      assert.ok(isAlive(now));
      await session.cancel();
      await waitFor('the restarted server to stop with the session', () => !isAlive(now));
      assert.equal(source.connections.length, 0);
    });
  });

  describe('a server that lies about its hints', () => {
    function liar(): McpToolSource {
      const s = new McpToolSource(nodeServer('box', path.join(FIXTURES, 'toolbox.ts'), [dir]), { workspaceFolder: dir });
      sources.push(s);
      return s;
    }

    it('a tool with no hints is judged by the worst case: a rule denying destructiveHint denies it, and it never runs', async () => {
      const denyDestructive = PermissionRule({ tools: ['mcp.*'], hints: { destructiveHint: true }, decision: 'deny', reason: 'destructive' });
      const session = await start(liar(), [{ call: 'box_wipe', input: { what: 'disk' }, as: 'w' }, { say: '{{w}}' }], [denyDestructive, ALLOW_READ_ONLY]);
      assert.match(completedText(await session.run('go')), /denied: destructive/);
      assert.equal(fs.existsSync(file('wiped-disk.txt')), false);
    });

    it('a tool with no hints is never allowed by a hint rule: it is asked', async () => {
      const session = await start(liar(), [{ call: 'box_wipe', input: { what: 'disk' } }, { say: 'done' }]);
      const cb = onlyCallback(await session.run('go'));
      assert.ok(cb instanceof OpenApproval);
      assert.equal(cb.request.tool.id, 'mcp.box.wipe');
      assert.deepEqual(cb.request.tool.annotations, {});
      assert.equal(fs.existsSync(file('wiped-disk.txt')), false);
    });

    it('a false readOnlyHint gets only what the policy author chose to trust, and a rule by id takes it back', async () => {
      // The author trusted readOnlyHint for every MCP tool: the liar's claim is believed (hints only loosen what a rule lets them).
      const trusting = await start(liar(), [{ call: 'box_delete_all_files', input: {}, as: 'r' }, { say: '{{r}}' }]);
      assert.equal(completedText(await trusting.run('go')), 'all files deleted');
      assert.equal(fs.existsSync(file('deleted-everything.txt')), true);
      fs.rmSync(file('deleted-everything.txt'));

      // A rule on the stable id comes first and asks, whatever the server claims; and the title is display text only.
      const distrust = PermissionRule({ tools: ['mcp.box.*'], decision: 'ask', reason: 'box is not trusted' });
      const careful = await start(liar(), [{ call: 'box_delete_all_files', input: {} }, { say: 'done' }], [distrust, ALLOW_READ_ONLY]);
      const cb = onlyCallback(await careful.run('go'));
      assert.ok(cb instanceof OpenApproval);
      assert.equal(cb.request.tool.id, 'mcp.box.delete_all_files');
      assert.equal(cb.request.tool.annotations.title, 'Totally harmless');
      assert.equal(fs.existsSync(file('deleted-everything.txt')), false);
    });
  });

  describe('elicitation with server-everything over stdio', () => {
    const TOOL = 'mcp.everything.trigger-elicitation-request';

    function everything(): McpToolSource {
      const s = new McpToolSource(nodeServer('everything', EVERYTHING_SERVER, ['stdio']), { workspaceFolder: dir });
      sources.push(s);
      return s;
    }

    async function openElicitation(): Promise<{ session: Session; state: TurnState; cb: OpenElicitation }> {
      const session = await start(everything(), [{ call: 'everything_trigger-elicitation-request', input: {}, as: 'r' }, { say: '{{r}}' }],
        [PermissionRule({ tools: [TOOL], decision: 'allow' })]);
      const state = await session.run('go');
      const cb = onlyCallback(state);
      assert.ok(cb instanceof OpenElicitation, `expected an elicitation, got ${cb.type}`);
      return { session, state, cb };
    }

    it('opens an elicitation callback; an accepted answer goes back to the server and into the result', async () => {
      const { session, state, cb } = await openElicitation();
      assert.equal(cb.type, 'elicitation');
      assert.equal(cb.sessionId, session.id);
      assert.equal(cb.request.source.id, 'mcp.everything');
      assert.equal(cb.request.source.name, 'everything');
      assert.equal(cb.request.toolId, TOOL);
      assert.equal(cb.request.message, 'Please provide inputs for the following fields:');
      const schema = cb.request.requestedSchema;
      assert.deepEqual(schema.required, ['name']);
      assert.deepEqual(schema.properties.name, { type: 'string', title: 'String', description: 'Your full, legal name' });
      assert.deepEqual(schema.properties.titledSingleSelectEnum?.enum, ['hero-1', 'hero-2', 'hero-3']);
      assert.deepEqual(schema.properties.titledSingleSelectEnum?.enumNames, ['Superman', 'Green Lantern', 'Wonder Woman']);
      // Multi-select lists are not flat fields: left out of the form (they are optional).
      assert.equal(schema.properties.untitledMultipleSelectEnum, undefined);
      assert.equal(schema.properties.titledMultipleSelectEnum, undefined);

      const turn = session.turn(state.turnId);
      const answered = await turn.answer(cb.id, new ElicitationAnswer({ action: 'accept', content: { name: 'Ada Lovelace', check: true, integer: 7 } }));
      assert.ok(answered instanceof Answered);
      assert.ok((await turn.answer(cb.id, new ElicitationAnswer({ action: 'decline' }))) instanceof AlreadySettled);
      const text = completedText(await turn.result({ after: blocked(state) }));
      assert.match(text, /User provided the requested information/);
      assert.match(text, /- Name: Ada Lovelace/);
      assert.match(text, /- Agreed to terms: true/);
      assert.match(text, /- Favorite Integer: 7/);
      const result = (await eventsOf(session)).find((e) => e.type === 'tool-result' && e.toolId === TOOL);
      assert.ok(result?.type === 'tool-result' && result.ok && result.content.includes('Ada Lovelace'));
    });

    it('a declined request reaches the server as declined', async () => {
      const { session, state, cb } = await openElicitation();
      assert.ok((await session.turn(state.turnId).answer(cb.id, new ElicitationAnswer({ action: 'decline' }))) instanceof Answered);
      assert.match(completedText(await session.turn(state.turnId).result({ after: blocked(state) })), /User declined to provide the requested information/);
    });
  });

  describe('an elicitation the server gives up on', () => {
    it('closes the callback when the server stops waiting; the model is told, and the turn goes on', async () => {
      const source = new McpToolSource(nodeServer('box', path.join(FIXTURES, 'toolbox.ts'), [dir]), { workspaceFolder: dir });
      sources.push(source);
      const session = await start(source, [
        { call: 'box_ask_briefly', input: { ms: 1500, linger: 3000 }, as: 'r' },
        { call: 'box_wipe', input: { what: 'disk' }, as: 'w' },
        { say: '{{r}}|{{w}}' },
      ], [PermissionRule({ tools: ['mcp.box.ask_briefly'], decision: 'allow' })]);
      const state = await session.run('go');
      const cb = onlyCallback(state);
      assert.ok(cb instanceof OpenElicitation, `expected an elicitation, got ${cb.type}`);
      assert.equal(cb.request.toolId, 'mcp.box.ask_briefly');
      assert.equal(cb.request.message, 'Quick, your name?');

      // The server's own request timeout (1.5 s) sends notifications/cancelled: the callback closes
      // without an answer, while the call still runs (the server lingers 3 s before it fails).
      await waitFor('the elicitation to close', () => !session.openCallbacks().some((c) => c.id === cb.id), 10_000);
      assert.deepEqual((await eventsOf(session)).filter((e) => e.type === 'tool-result'), [], 'the call is still running');
      const turn = session.turn(state.turnId);
      assert.ok((await turn.answer(cb.id, new ElicitationAnswer({ action: 'accept', content: { name: 'too late' } }))) instanceof AlreadySettled);

      // The turn went on to the next call, which asks: Blocked on that approval, not a hang.
      const next = await turn.result({ after: blocked(state) });
      const approval = onlyCallback(next);
      assert.ok(approval instanceof OpenApproval);
      assert.equal(approval.request.tool.id, 'mcp.box.wipe');
      await turn.answer(approval.id, new DenyApproval({ reason: 'no' }));
      const text = completedText(await turn.result({ after: blocked(next) }));
      // The model is told the question went unanswered.
      assert.match(text, /^\{"error":"MCP error -32001: Request timed out"\}\|/);
      assert.match(text, /denied: no/);
      const events = await eventsOf(session);
      const result = events.find((e) => e.type === 'tool-result' && e.toolId === 'mcp.box.ask_briefly');
      assert.ok(result?.type === 'tool-result' && !result.ok && /timed out/.test(result.content), JSON.stringify(result));
      assert.deepEqual(session.openCallbacks(), []);
    });
  });

  describe('sign-in before listing', () => {
    it('opens an OpenSignIn for a server whose inputs are missing; once the token is stored and said connected, its tools run', async () => {
      fixture = await startHttpFixture({ token: 'open-sesame' });
      const values = new Map<string, string>();
      const source = new McpToolSource(
        { name: 'secure', type: 'http', url: fixture.url, headers: { Authorization: 'Bearer ${input:token}' } },
        { workspaceFolder: dir, inputs: { get: async (id) => values.get(id) } },
      );
      sources.push(source);
      const session = await start(source, [{ call: 'secure_echo', input: { message: 'hi' }, as: 'r' }, { say: '{{r}}' }]);
      const state = await session.run('go');
      const cb = onlyCallback(state);
      assert.ok(cb instanceof OpenSignIn);
      assert.deepEqual(cb.sources, [{ source: 'mcp', id: 'mcp.secure', name: 'secure', mode: 'connect' }]);
      assert.equal(fixture.sessions, 0);
      values.set('token', 'open-sesame');
      await session.turn(state.turnId).answer(cb.id, new SignInAnswer({ connected: ['mcp.secure'] }));
      assert.equal(completedText(await session.turn(state.turnId).result({ after: blocked(state) })), 'echo over streamable HTTP: hi');
    });
  });
});
