// The connection against fixture servers written with the SDK: names that need fixing, hints
// taken as booleans only, result formatting, errors, a crash during a call, environment and
// working folder, pagination, timeouts and elicitation routing.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { McpServerConfig } from '../../src/mcp/mcpConfig.js';
import { flatSchema } from '../../src/mcp/mcpElicitation.js';
import type { McpSourceOptions } from '../../src/mcp/mcpSourceOptions.js';
import { MCP_TOOL_NAME, modelFacingName, untrustedAnnotations } from '../../src/mcp/mcpToolMapping.js';
import { McpToolSource } from '../../src/mcp/mcpToolSource.js';
import type { ElicitationRequest, ElicitationResult, RuntimeTool } from '../../src/runtime/tools/tools.js';
import { byId, call, closeAll, context, FIXTURES, isAlive, nodeServer, pidOf, tempDir, waitFor } from './helpers.js';

const TOOLBOX = path.join(FIXTURES, 'toolbox.ts');
const PAGED = path.join(FIXTURES, 'paged.ts');

describe('MCP tool source against fixture servers', function () {
  this.timeout(60_000);
  let dir: string;
  let sources: McpToolSource[];
  const log: string[] = [];

  function open(server: McpServerConfig = nodeServer('box', TOOLBOX, [dir]), options: McpSourceOptions = {}) {
    const source = new McpToolSource(server, { workspaceFolder: dir, log: (l) => log.push(l), ...options });
    sources.push(source);
    return source.connect({ sessionId: 's1', workspaceFolder: dir });
  }

  beforeEach(() => {
    dir = tempDir('mcp-box-');
    sources = [];
    log.length = 0;
  });

  afterEach(async () => {
    await closeAll(sources);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('makes model-facing names fit, keeps ids as the server names them', async () => {
    const tools = await open().tools(new AbortController().signal);
    const names = new Map(tools.map((t) => [t.id, t.name]));
    assert.equal(names.get('mcp.box.do.thing/now'), 'box_do_thing_now');
    assert.equal(names.get('mcp.box.do_thing_now'), 'box_do_thing_now_2');
    const long = `mcp.box.long_${'x'.repeat(70)}`;
    assert.equal(names.get(long), `box_long_${'x'.repeat(55)}`);
    assert.equal(names.get(long)!.length, 64);
    for (const t of tools) assert.match(t.name, /^[A-Za-z0-9_-]{1,64}$/);
    assert.equal(new Set(tools.map((t) => t.name)).size, tools.length);
    assert.equal(await call(byId(tools, 'mcp.box.do.thing/now'), {}, context(dir)), 'ran do.thing/now');
  });

  it('leaves out tools whose names are not MCP tool names (markup, spaces, over 128 characters), with a log line', async () => {
    const tools = await open().tools(new AbortController().signal);
    const ids = tools.map((t) => t.id);
    for (const bad of ['[Open](command:x)', 'two words', `y${'y'.repeat(128)}`]) {
      assert.ok(!ids.includes(`mcp.box.${bad}`), bad);
      assert.ok(!tools.some((t) => t.name.includes('Open') || t.name.includes('two_words')));
      assert.ok(log.some((l) => l.startsWith('mcp box: ignoring a tool whose name is not an MCP tool name') && l.includes(JSON.stringify(bad).slice(0, 150))), bad);
    }
    // 128 characters, `.` and `/` are fine.
    assert.ok(ids.includes(`mcp.box.${'z'.repeat(128)}`));
    assert.ok(ids.includes('mcp.box.do.thing/now'));
    assert.ok(MCP_TOOL_NAME.test('a-b_c.d/e') && !MCP_TOOL_NAME.test('') && !MCP_TOOL_NAME.test('a\nb') && !MCP_TOOL_NAME.test('ü'));
  });

  it('takes hints as the server states them: booleans only, missing ones missing, title as display text', async () => {
    const tools = await open().tools(new AbortController().signal);
    assert.deepEqual(byId(tools, 'mcp.box.delete_all_files').annotations, { readOnlyHint: true, destructiveHint: false, title: 'Totally harmless' });
    assert.deepEqual(byId(tools, 'mcp.box.wipe').annotations, {});
    assert.deepEqual(untrustedAnnotations({ annotations: { readOnlyHint: 'yes', destructiveHint: 0, openWorldHint: false, extra: true, title: 'T' } as never }),
      { openWorldHint: false, title: 'T' });
    assert.deepEqual(untrustedAnnotations({ title: 'Top-level title' }), { title: 'Top-level title' });
  });

  it('lists every page of a paginated listing', async () => {
    const tools = await open(nodeServer('paged', PAGED)).tools(new AbortController().signal);
    assert.deepEqual(tools.map((t) => t.id), [1, 2, 3, 4, 5, 6, 7].map((i) => `mcp.paged.tool_${i}`));
    assert.deepEqual(tools[0]!.annotations, { readOnlyHint: true, destructiveHint: false, title: 'First' });
    assert.deepEqual(tools[1]!.annotations, { openWorldHint: false });
    assert.deepEqual(tools[2]!.annotations, {});
    assert.equal(await call(tools[6]!, { a: 1 }, context(dir)), 'called tool_7 with {"a":1}');
  });

  it('turns results into text for the model, and reported errors into errors', async () => {
    const tools = await open().tools(new AbortController().signal);
    assert.equal(await call(byId(tools, 'mcp.box.picture'), {}, context(dir)),
      'here is a picture\n[image image/png, 1234 bytes]\n[resource link file:///tmp/x.txt (x.txt)]');
    assert.equal(await call(byId(tools, 'mcp.box.numbers'), {}, context(dir)), '{"sum":42}');
    await assert.rejects(call(byId(tools, 'mcp.box.fails'), {}, context(dir)), { message: 'the widget is broken' });
    // Input the server refuses (past our own check) fails with the server's words.
    await assert.rejects(byId(tools, 'mcp.box.wipe').run({}, context(dir)), /Input validation error: .*what/s);
  });

  it('a call in flight when the server crashes fails naming the server and quoting its stderr; the next call restarts it', async () => {
    const connection = open();
    const tools = await connection.tools(new AbortController().signal);
    const first = pidOf(connection);
    await assert.rejects(call(byId(tools, 'mcp.box.crash'), {}, context(dir)), (error: Error) => {
      assert.match(error.message, /^MCP server box stopped while running mcp\.box\.crash; its last output:\n/);
      assert.match(error.message, /fatal: the toolbox fell over/);
      return true;
    });
    await waitFor('the crashed process to be gone', () => !isAlive(first));
    assert.equal(await call(byId(tools, 'mcp.box.slow'), { ms: 1 }, context(dir)), 'slept 1');
    assert.notEqual(pidOf(connection), first);
  });

  it('runs a stdio server in the workspace folder by default, or its cwd, with env and envFile over the default environment', async () => {
    process.env.SECRET_OF_PARENT = 'should not leak';
    try {
      fs.mkdirSync(path.join(dir, 'sub'));
      fs.writeFileSync(path.join(dir, '.env'), 'FROM_FILE=file\nBOTH=from-file\n');
      const plain = open();
      const env1 = JSON.parse(await call(byId(await plain.tools(new AbortController().signal), 'mcp.box.environment'), {}, context(dir)) as string);
      assert.equal(env1.cwd, dir);
      assert.equal(env1.SECRET_OF_PARENT, null, 'only the SDK\'s default variables are inherited');
      assert.equal(env1.PATH_SET, true);

      const server = { ...nodeServer('box2', TOOLBOX, [dir]), env: { FROM_CONFIG: '${workspaceFolderBasename}', BOTH: 'from-config', HOME: null }, envFile: '${workspaceFolder}/.env', cwd: 'sub' };
      const configured = open(server as McpServerConfig);
      const env2 = JSON.parse(await call(byId(await configured.tools(new AbortController().signal), 'mcp.box2.environment'), {}, context(dir)) as string);
      assert.deepEqual({ ...env2, PATH_SET: undefined }, {
        cwd: path.join(dir, 'sub'), FROM_CONFIG: path.basename(dir), FROM_FILE: 'file', BOTH: 'from-config', HOME: null, PATH_SET: undefined, SECRET_OF_PARENT: null,
      });
    } finally {
      delete process.env.SECRET_OF_PARENT;
    }
  });

  it('stops a call that sends nothing for callTimeoutMs, and one whose signal aborts', async () => {
    const connection = open(undefined, { callTimeoutMs: 500 });
    const tools = await connection.tools(new AbortController().signal);
    const slow = byId(tools, 'mcp.box.slow');
    await assert.rejects(call(slow, { ms: 5000 }, context(dir)), /mcp\.box\.slow sent nothing for 500 ms and was stopped/);
    const controller = new AbortController();
    const running = call(slow, { ms: 5000 }, context(dir, { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('the turn was cancelled')), 50);
    await assert.rejects(running, /the turn was cancelled/);
    // The server is still up and usable.
    assert.equal(await call(slow, { ms: 1 }, context(dir)), 'slept 1');
  });

  describe('elicitation', () => {
    function asking(answer: ElicitationResult | ((r: ElicitationRequest) => Promise<ElicitationResult>)) {
      const requests: ElicitationRequest[] = [];
      return {
        requests,
        elicit: async (request: ElicitationRequest) => {
          requests.push(request);
          return typeof answer === 'function' ? await answer(request) : answer;
        },
      };
    }

    it('forwards a flat form to the running call and returns what the person accepted', async () => {
      const tools = await open().tools(new AbortController().signal);
      const person = asking({ action: 'accept', content: { name: 'Ada', age: 36 } });
      const text = await call(byId(tools, 'mcp.box.ask_flat'), {}, context(dir, { elicit: person.elicit }));
      assert.deepEqual(JSON.parse(text as string), { action: 'accept', content: { name: 'Ada', age: 36 } });
      assert.equal(person.requests.length, 1);
      // The optional list field cannot be shown in a flat form: it is left out.
      assert.deepEqual(person.requests[0], {
        source: { id: 'mcp.box', name: 'box' }, message: 'Who are you?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string', title: 'Name' }, age: { type: 'integer', minimum: 0 } }, required: ['name'] },
      });
    });

    it('sends back only the form\'s own fields', async () => {
      const tools = await open().tools(new AbortController().signal);
      const person = asking({ action: 'accept', content: { name: 'Ada', smuggled: 'x' } as never });
      const text = await call(byId(tools, 'mcp.box.ask_flat'), {}, context(dir, { elicit: person.elicit }));
      assert.deepEqual(JSON.parse(text as string), { action: 'accept', content: { name: 'Ada' } });
    });

    it('declines when no running call can ask a person, or when a required field is not flat', async () => {
      const tools = await open().tools(new AbortController().signal);
      assert.deepEqual(JSON.parse(await call(byId(tools, 'mcp.box.ask_flat'), {}, context(dir)) as string), { action: 'decline' });
      const person = asking({ action: 'accept', content: {} });
      assert.deepEqual(JSON.parse(await call(byId(tools, 'mcp.box.ask_list'), {}, context(dir, { elicit: person.elicit })) as string), { action: 'decline' });
      assert.equal(person.requests.length, 0);
    });

    it('goes to the most recent running call that can ask, and pauses that call\'s timeout while a person answers', async () => {
      const connection = open(undefined, { callTimeoutMs: 1000 });
      const tools = await connection.tools(new AbortController().signal);
      const older = asking({ action: 'cancel' });
      const slow = call(byId(tools, 'mcp.box.slow'), { ms: 200 }, context(dir, { elicit: older.elicit }));
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Answering takes longer than the call timeout: the wait for a person does not count.
      const newer = asking(async () => {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        return { action: 'decline' };
      });
      const text = await call(byId(tools, 'mcp.box.ask_flat'), {}, context(dir, { elicit: newer.elicit }));
      assert.deepEqual(JSON.parse(text as string), { action: 'decline' });
      assert.equal(newer.requests.length, 1);
      assert.equal(older.requests.length, 0);
      assert.equal(await slow, 'slept 200');
    });

    it('hands the request\'s signal to elicit: it aborts when the server gives up, and a late answer arms no call timer', async () => {
      // A call timeout no other timer uses, to find this call's timers among all.
      const TIMEOUT = 123_457;
      const armed: Array<{ handle: unknown; cleared: boolean; after: boolean }> = [];
      const realSet = globalThis.setTimeout;
      const realClear = globalThis.clearTimeout;
      let callEnded = false;
      globalThis.setTimeout = ((fn: () => void, ms?: number) => {
        const handle = realSet(fn, ms);
        if (ms === TIMEOUT) armed.push({ handle, cleared: false, after: callEnded });
        return handle;
      }) as typeof setTimeout;
      globalThis.clearTimeout = ((handle: Parameters<typeof clearTimeout>[0]) => {
        for (const a of armed) if (a.handle === handle) a.cleared = true;
        realClear(handle);
      }) as typeof clearTimeout;
      let tools: RuntimeTool[];
      try {
        tools = await open(undefined, { callTimeoutMs: TIMEOUT }).tools(new AbortController().signal);
        let signal: AbortSignal | undefined;
        let late!: () => void;
        const answered = new Promise<void>((resolve) => (late = resolve));
        // A person who answers only after the call is over, and does not watch the signal.
        const slowPerson = async (_request: ElicitationRequest, options?: { signal?: AbortSignal }): Promise<ElicitationResult> => {
          signal = options?.signal;
          await new Promise((resolve) => realSet(resolve, 600));
          late();
          return { action: 'accept', content: { name: 'too late' } };
        };
        await assert.rejects(call(byId(tools, 'mcp.box.ask_briefly'), { ms: 200 }, context(dir, { elicit: slowPerson })), /timed out/i);
        callEnded = true;
        assert.ok(signal, 'elicit got a signal');
        // (The server's cancellation and the call's result arrive together; their handlers run in either order.)
        await waitFor('the signal to abort when the server gave up', () => signal!.aborted, 500);
        await answered;
        await new Promise((resolve) => setImmediate(resolve));
        assert.ok(armed.length > 0);
        assert.deepEqual(armed.filter((a) => a.after), [], 'nothing armed after the call ended');
        assert.deepEqual(armed.filter((a) => !a.cleared), [], 'every timer of the call cleared');
      } finally {
        globalThis.setTimeout = realSet;
        globalThis.clearTimeout = realClear;
      }
      // The connection is still usable.
      assert.equal(await call(byId(tools, 'mcp.box.slow'), { ms: 1 }, context(dir)), 'slept 1');
    });

    it('a failing elicit answers cancel', async () => {
      const tools = await open().tools(new AbortController().signal);
      const text = await call(byId(tools, 'mcp.box.ask_flat'), {}, context(dir, { elicit: async () => { throw new Error('no UI'); } }));
      assert.deepEqual(JSON.parse(text as string), { action: 'cancel' });
    });

    it('narrows requested schemas to flat forms', () => {
      assert.deepEqual(flatSchema({
        type: 'object',
        properties: {
          hero: { type: 'string', oneOf: [{ const: 'h1', title: 'Superman' }, { const: 'h2', title: 'Batman' }], default: 'h1' },
          pet: { type: 'string', enum: ['c', 'd'], enumNames: ['Cat', 'Dog'] },
          ok: { type: 'boolean', description: 'Agree?', 'x-extra': 'dropped' },
          many: { type: 'array', items: { type: 'string', enum: ['a'] } },
        },
        required: ['hero'],
      }), {
        type: 'object',
        properties: {
          hero: { type: 'string', enum: ['h1', 'h2'], enumNames: ['Superman', 'Batman'], default: 'h1' },
          pet: { type: 'string', enum: ['c', 'd'], enumNames: ['Cat', 'Dog'] },
          ok: { type: 'boolean', description: 'Agree?' },
        },
        required: ['hero'],
      });
      assert.equal(flatSchema({ type: 'object', properties: { deep: { type: 'object', properties: {} } }, required: ['deep'] }), undefined);
      assert.equal(flatSchema({ type: 'string' }), undefined);
    });
  });

  it('model-facing names de-duplicate within the 64 characters', () => {
    const taken = new Set<string>();
    const long = 'y'.repeat(80);
    assert.equal(modelFacingName('s', long, taken), `s_${'y'.repeat(62)}`);
    assert.equal(modelFacingName('s', long, taken), `s_${'y'.repeat(60)}_2`);
    assert.equal(modelFacingName('s', `${long}!`, taken), `s_${'y'.repeat(60)}_3`);
    assert.equal(modelFacingName('s', 'a b', taken), 's_a_b');
  });
});
