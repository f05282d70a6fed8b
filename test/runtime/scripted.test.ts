import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineMap } from '../../src/policy/file/diagnostics.js';
import { ModelError, type Message, type ModelRequest, type ModelResponse } from '../../src/runtime/model/model.js';
import { ScenarioSchema, ScriptedModel, type Scenario } from '../../src/runtime/model/scripted.js';

const FIXTURE = join(__dirname, '..', 'fixtures', 'atlas-nova.scenario.jsonc');

function request(agent: string, messages: Message[], signal: AbortSignal = new AbortController().signal): ModelRequest {
  return { agent, sessionId: `session-${agent}`, instructions: '', messages, tools: [], signal };
}

const user = (content: string): Message => ({ role: 'user', content });
const assistant = (response: ModelResponse): Message => ({ role: 'assistant', content: response.text, toolCalls: response.toolCalls });
const toolResult = (callId: string, name: string, content: unknown): Message => ({
  role: 'tool', callId, name, content: typeof content === 'string' ? content : JSON.stringify(content),
});

/** Plays the first move of `agent` with a single user message. */
async function first(scenario: Scenario, agent = 'main', task = 'the task'): Promise<ModelResponse> {
  return new ScriptedModel(scenario).respond(request(agent, [user(task)]));
}

/** Plays `moves` for main: each earlier move answered by the given tool results, then returns the last response. */
async function play(moves: Scenario['agents'][string], results: unknown[][], task = 'the task'): Promise<ModelResponse> {
  const model = new ScriptedModel({ agents: { main: moves } });
  const messages: Message[] = [user(task)];
  for (const outputs of results) {
    const response = await model.respond(request('main', messages));
    messages.push(assistant(response));
    response.toolCalls.forEach((call, i) => messages.push(toolResult(call.id, call.name, outputs[i])));
  }
  return model.respond(request('main', messages));
}

async function rejectsWithModelError(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ModelError, `expected a ModelError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

function positioned(text: string, file = 'demo.scenario.jsonc'): { line: number; column: number; message: string }[] {
  const { model, diagnostics } = ScriptedModel.parse(text, file);
  assert.equal(model, undefined);
  const lines = new LineMap(text);
  return diagnostics.map((d) => ({ ...lines.position(d.offset), message: d.message }));
}

describe('ScriptedModel', () => {
  describe('moves', () => {
    it('spawn: a call to spawn_agent {agent, task}', async () => {
      const response = await first({ agents: { main: [{ spawn: 'researcher', task: 'atlas', as: 'a' }] } });
      assert.deepEqual(response, {
        text: '',
        toolCalls: [{ id: 'call_main_0_0', name: 'spawn_agent', input: { agent: 'researcher', task: 'atlas' } }],
      });
    });

    it('call: any tool by its model-facing name, with its input', async () => {
      const response = await first({ agents: { main: [{ call: 'read_file', input: { path: 'README.md', lines: [1, 2] } }] } });
      assert.deepEqual(response, { text: '', toolCalls: [{ id: 'call_main_0_0', name: 'read_file', input: { path: 'README.md', lines: [1, 2] } }] });
    });

    it('call without input: the input is {}', async () => {
      const response = await first({ agents: { main: [{ call: 'list_files' }] } });
      assert.deepEqual(response.toolCalls, [{ id: 'call_main_0_0', name: 'list_files', input: {} }]);
    });

    it('wait "all": wait_agents {}', async () => {
      const response = await first({ agents: { main: [{ wait: 'all', as: 'reports' }] } });
      assert.deepEqual(response, { text: '', toolCalls: [{ id: 'call_main_0_0', name: 'wait_agents', input: {} }] });
    });

    it('wait on ids: wait_agents {ids}', async () => {
      const response = await play(
        [{ spawn: 'researcher', task: 'atlas', as: 'a' }, { wait: ['{{a.id}}', 's9'] }],
        [[{ id: 's2', agent: 'researcher' }]],
      );
      assert.deepEqual(response, { text: '', toolCalls: [{ id: 'call_main_1_0', name: 'wait_agents', input: { ids: ['s2', 's9'] } }] });
    });

    it('message: message_agent {id, message}', async () => {
      const response = await play(
        [{ spawn: 'researcher', task: 'atlas', as: 'a' }, { message: '{{a.id}}', text: 'also check the Nova' }],
        [[{ id: 's2' }]],
      );
      assert.deepEqual(response.toolCalls, [{ id: 'call_main_1_0', name: 'message_agent', input: { id: 's2', message: 'also check the Nova' } }]);
    });

    it('interrupt: interrupt_agent {id}', async () => {
      const response = await play([{ spawn: 'researcher', task: 'atlas', as: 'a' }, { interrupt: '{{a.id}}' }], [[{ id: 's2' }]]);
      assert.deepEqual(response.toolCalls, [{ id: 'call_main_1_0', name: 'interrupt_agent', input: { id: 's2' } }]);
    });

    it('parallel: several calls in one response, ids numbered by call', async () => {
      const response = await first({
        agents: { main: [{ parallel: [{ spawn: 'researcher', task: 'nova' }, { call: 'read_file', input: { path: 'README.md' } }, { wait: 'all' }] }] },
      });
      assert.deepEqual(response, {
        text: '',
        toolCalls: [
          { id: 'call_main_0_0', name: 'spawn_agent', input: { agent: 'researcher', task: 'nova' } },
          { id: 'call_main_0_1', name: 'read_file', input: { path: 'README.md' } },
          { id: 'call_main_0_2', name: 'wait_agents', input: {} },
        ],
      });
    });

    it('say: final text and no tool calls', async () => {
      const response = await first({ agents: { main: [{ say: 'Done: {{task}}.' }] } }, 'main', 'tidy up');
      assert.deepEqual(response, { text: 'Done: tidy up.', toolCalls: [] });
    });

    it('call ids are sanitised to letters, digits and "_"', async () => {
      const model = new ScriptedModel({ agents: { 'code-review.v2': [{ call: 'x' }, { call: 'y' }] } });
      const one = await model.respond(request('code-review.v2', [user('go')]));
      assert.equal(one.toolCalls[0]!.id, 'call_code_review_v2_0_0');
      const two = await model.respond(request('code-review.v2', [user('go'), assistant(one), toolResult(one.toolCalls[0]!.id, 'x', 'ok')]));
      assert.equal(two.toolCalls[0]!.id, 'call_code_review_v2_1_0');
    });

    it('is deterministic: the same request gives the same response', async () => {
      const model = new ScriptedModel({ agents: { main: [{ parallel: [{ call: 'a', input: { q: '{{task}}' } }, { call: 'b' }] }] } });
      const a = await model.respond(request('main', [user('x')]));
      const b = await model.respond(request('main', [user('x')]));
      assert.deepEqual(a, b);
    });

    it('does not share input objects between responses or with the scenario', async () => {
      const scenario: Scenario = { agents: { main: [{ call: 'write', input: { nested: { list: [1] } } }] } };
      const model = new ScriptedModel(scenario);
      const a = await model.respond(request('main', [user('x')]));
      (a.toolCalls[0]!.input as { nested: { list: number[] } }).nested.list.push(2);
      const b = await model.respond(request('main', [user('x')]));
      assert.deepEqual(b.toolCalls[0]!.input, { nested: { list: [1] } });
      assert.deepEqual(scenario.agents.main![0], { call: 'write', input: { nested: { list: [1] } } });
    });
  });

  describe('position', () => {
    it('counts the assistant messages of the session, so a second turn continues after the first say', async () => {
      const model = new ScriptedModel({
        agents: { main: [{ call: 'look' }, { say: 'first: {{last}}' }, { say: 'second: {{prompt}} (task {{task}})' }] },
      });
      const messages: Message[] = [user('turn one')];
      const r0 = await model.respond(request('main', messages));
      assert.equal(r0.toolCalls[0]!.id, 'call_main_0_0');
      messages.push(assistant(r0), toolResult('call_main_0_0', 'look', 'seen'));
      const r1 = await model.respond(request('main', messages));
      assert.deepEqual(r1, { text: 'first: seen', toolCalls: [] });
      messages.push(assistant(r1), user('turn two'));
      const r2 = await model.respond(request('main', messages));
      assert.deepEqual(r2, { text: 'second: turn two (task turn one)', toolCalls: [] });
    });

    it('plays each agent its own script, and every session of a subagent from the start with its own task', async () => {
      const model = new ScriptedModel({
        agents: {
          main: [{ say: 'main speaks' }],
          researcher: [{ call: 'lookup_price', input: { product: '{{task}}' } }],
        },
      });
      const atlas = await model.respond(request('researcher', [user('atlas')]));
      const nova = await model.respond(request('researcher', [user('nova')]));
      assert.deepEqual(atlas.toolCalls, [{ id: 'call_researcher_0_0', name: 'lookup_price', input: { product: 'atlas' } }]);
      assert.deepEqual(nova.toolCalls, [{ id: 'call_researcher_0_0', name: 'lookup_price', input: { product: 'nova' } }]);
      assert.equal((await model.respond(request('main', [user('hi')]))).text, 'main speaks');
    });
  });

  describe('templates', () => {
    const typed = { n: 3, flag: true, none: null, list: [1, 'two'], obj: { a: 1, b: [true] }, s: 'str' };

    it('a string that is exactly one template keeps the value\'s JSON type', async () => {
      const response = await play(
        [{ call: 'get', as: 'v' }, {
          call: 'use',
          input: { n: '{{v.n}}', flag: '{{ v.flag }}', none: '{{v.none}}', list: '{{v.list}}', obj: '{{v.obj}}', s: '{{v.s}}', all: '{{v}}' },
        }],
        [[typed]],
      );
      assert.deepEqual(response.toolCalls[0]!.input, { n: 3, flag: true, none: null, list: [1, 'two'], obj: { a: 1, b: [true] }, s: 'str', all: typed });
    });

    it('inside a longer string: strings as is, other values as compact JSON', async () => {
      const response = await play(
        [{ call: 'get', as: 'v' }, { call: 'use', input: { text: 'n={{v.n}} flag={{v.flag}} none={{v.none}} list={{v.list}} obj={{v.obj}} s={{v.s}}' } }],
        [[typed]],
      );
      assert.deepEqual(response.toolCalls[0]!.input, { text: 'n=3 flag=true none=null list=[1,"two"] obj={"a":1,"b":[true]} s=str' });
    });

    it('substitutes recursively in every string of the input, and in say text', async () => {
      const response = await play(
        [{ call: 'get', as: 'v' }, { call: 'use', input: { deep: { list: [{ x: '{{v.obj.b.0}}' }, 'k {{v.list.1}}'], num: 7 } } }],
        [[typed]],
      );
      assert.deepEqual(response.toolCalls[0]!.input, { deep: { list: [{ x: true }, 'k two'], num: 7 } });
      const said = await play([{ call: 'get', as: 'v' }, { say: '{{v.obj}}' }], [[typed]]);
      assert.deepEqual(said, { text: '{"a":1,"b":[true]}', toolCalls: [] });
    });

    it('binds "as" names of single calls and of each call inside parallel', async () => {
      const response = await play(
        [
          { parallel: [{ call: 'one', as: 'first' }, { call: 'two' }, { call: 'three', as: 'third' }] },
          { call: 'echo', as: 'echoed' },
          { say: '{{first.v}} {{third.v}} {{echoed}}' },
        ],
        [[{ v: 1 }, { v: 2 }, { v: 3 }], ['plain text, not JSON']],
      );
      assert.equal(response.text, '1 3 plain text, not JSON');
    });

    it('results lists every tool result in order (JSON parsed, else the string); last is the latest', async () => {
      const response = await play(
        [{ parallel: [{ call: 'a' }, { call: 'b' }] }, { call: 'c' }, { call: 'report', input: { all: '{{results}}', last: '{{last}}', second: '{{results.1.k}}' } }],
        [[{ k: 'A' }, { k: 'B' }], ['not json {']],
      );
      assert.deepEqual(response.toolCalls[0]!.input, { all: [{ k: 'A' }, { k: 'B' }, 'not json {'], last: 'not json {', second: 'B' });
    });

    it('JSON scalars in tool results are parsed too', async () => {
      const response = await play([{ call: 'count' }, { call: 'use', input: { n: '{{last}}', s: '{{results.0}}!' } }], [['42']]);
      assert.deepEqual(response.toolCalls[0]!.input, { n: 42, s: '42!' });
    });

    it('task is the first user message, prompt the latest', async () => {
      const model = new ScriptedModel({ agents: { main: [{ say: 'one' }, { call: 'x', input: { task: '{{task}}', prompt: '{{prompt}}' } }] } });
      const messages: Message[] = [user('first')];
      messages.push(assistant(await model.respond(request('main', messages))), user('second'));
      const response = await model.respond(request('main', messages));
      assert.deepEqual(response.toolCalls[0]!.input, { task: 'first', prompt: 'second' });
    });

    it('binds "as" by the call ids of the earlier response, wherever the results come in the conversation', async () => {
      const model = new ScriptedModel({ agents: { main: [{ parallel: [{ call: 'a', as: 'x' }, { call: 'b', as: 'y' }] }, { say: '{{x}} {{y}} {{last}}' }] } });
      const messages: Message[] = [user('go')];
      const r0 = await model.respond(request('main', messages));
      // Results arrive out of order: y's first.
      messages.push(assistant(r0), toolResult(r0.toolCalls[1]!.id, 'b', 'B'), toolResult(r0.toolCalls[0]!.id, 'a', 'A'));
      assert.equal((await model.respond(request('main', messages))).text, 'A B A');
    });
  });

  describe('errors at play time', () => {
    it('an unknown template path names the agent, the move and the path', async () => {
      const moves: Scenario['agents'][string] = [{ wait: 'all', as: 'reports' }, { say: 'The Atlas costs {{reports.results.2.text}}.' }];
      await rejectsWithModelError(
        play(moves, [[{ results: [{ text: 'a' }, { text: 'b' }] }]]),
        /^the script for agent main, move 2 \(say\): unknown template path "reports\.results\.2\.text": "reports\.results" has 2 items$/,
      );
      await rejectsWithModelError(play([{ call: 'get', as: 'v' }, { call: 'use', input: { x: '{{v.prise}}' } }], [[{ price: 1 }]]),
        /move 2 \(call use\): unknown template path "v\.prise": "v" has no field "prise"; did you mean "price"\?/);
      await rejectsWithModelError(play([{ call: 'get', as: 'v' }, { say: '{{v.a.b}}' }], [[{ a: 'text' }]]),
        /unknown template path "v\.a\.b": "v\.a" is the string "text", not an object or a list/);
    });

    it('last with no tool result yet is an unknown path', async () => {
      await rejectsWithModelError(first({ agents: { main: [{ say: '{{last.price}}' }] } }),
        /^the script for agent main, move 1 \(say\): unknown template path "last\.price": there is no tool result yet$/);
    });

    it('an "as" name whose call has no result is an unknown path', async () => {
      const model = new ScriptedModel({ agents: { main: [{ call: 'a', as: 'x' }, { say: '{{x}}' }] } });
      const r0 = await model.respond(request('main', [user('go')]));
      await rejectsWithModelError(model.respond(request('main', [user('go'), assistant(r0)])), /unknown template path "x": no value is named "x" yet/);
    });

    it('an exhausted script', async () => {
      const model = new ScriptedModel({ agents: { main: [{ call: 'a' }, { say: 'done' }] } });
      const messages: Message[] = [user('go'), assistant({ text: '', toolCalls: [{ id: 'c', name: 'a', input: {} }] }), toolResult('c', 'a', 'ok'),
        assistant({ text: 'done', toolCalls: [] }), user('again')];
      await rejectsWithModelError(model.respond(request('main', messages)), /^the script for agent main has no move 3 \(it has 2\)$/);
    });

    it('an agent with no script', async () => {
      const model = new ScriptedModel({ agents: { main: [{ say: 'hi' }], researcher: [{ say: 'hi' }] } });
      await rejectsWithModelError(model.respond(request('reviewer', [user('go')])), /has no script for agent reviewer \(it has main, researcher\)/);
      await rejectsWithModelError(model.respond(request('reseacher', [user('go')])), /has no script for agent reseacher; did you mean "researcher"\?/);
    });

    it('honours the abort signal', async () => {
      const controller = new AbortController();
      controller.abort();
      const model = new ScriptedModel({ agents: { main: [{ say: 'hi' }] } });
      await assert.rejects(model.respond(request('main', [user('go')], controller.signal)), (error: unknown) => (error as Error).name === 'AbortError');
    });
  });

  describe('the scenario file', () => {
    it('parses JSONC (comments, trailing commas) and names the model after the file', () => {
      const { model, diagnostics } = ScriptedModel.parse('// demo\n{ "agents": { "main": [ { "say": "hi" }, ], }, }', '/some/dir/demo.scenario.jsonc');
      assert.deepEqual(diagnostics, []);
      assert.equal(model!.id, 'scripted:demo.scenario.jsonc');
      assert.equal(new ScriptedModel({ agents: { main: [{ say: 'hi' }] } }).id, 'scripted:inline');
      assert.equal(new ScriptedModel({ agents: { main: [{ say: 'hi' }] } }, { id: 'scripted:custom' }).id, 'scripted:custom');
    });

    it('an unknown move field is an error at its key, with a did-you-mean hint (a swap of two letters too)', () => {
      const text = '{\n  "agents": {\n    "main": [\n      { "spwan": "researcher", "task": "atlas" }\n    ]\n  }\n}';
      assert.deepEqual(positioned(text), [
        { line: 4, column: 9, message: 'unknown field "spwan" at agents.main[0]; did you mean "spawn"?' },
      ]);
    });

    it('unknown fields elsewhere: the root, inside parallel, with one-edit typos', () => {
      assert.deepEqual(positioned('{ "agnets": {} }'), [
        { line: 1, column: 1, message: 'missing required field "agents"' },
        { line: 1, column: 3, message: 'unknown field "agnets"; did you mean "agents"?' },
      ]);
      const text = '{ "agents": { "main": [\n  { "parallel": [ { "cal": "x" } ] }\n] } }';
      assert.deepEqual(positioned(text), [
        { line: 2, column: 21, message: 'unknown field "cal" at agents.main[0].parallel[0]; did you mean "call"?' },
      ]);
    });

    it('move structure errors, each positioned', () => {
      const text = [
        '{ "agents": { "main": [',
        '  {},',
        '  { "spawn": "researcher" },',
        '  { "spawn": "researcher", "task": "x", "text": "y" },',
        '  { "call": "x", "say": "y" },',
        '  { "parallel": [ { "say": "no" } ] },',
        '  { "wait": "some" },',
        '  { "call": "x", "as": "last" },',
        '  { "say": "" , "as": "a" },',
        '  { "parallel": [] },',
        '] } }',
      ].join('\n');
      assert.deepEqual(positioned(text), [
        { line: 2, column: 3, message: 'a move needs one of "spawn", "call", "wait", "message", "interrupt", "parallel" or "say" at agents.main[0]' },
        { line: 3, column: 3, message: 'a "spawn" move needs "task" at agents.main[1]' },
        { line: 4, column: 41, message: '"text" does not go with "spawn"; it goes with "message" at agents.main[2].text' },
        { line: 5, column: 18, message: 'a move is one thing; this one has both "call" and "say" at agents.main[3].say' },
        { line: 6, column: 21, message: '"say" cannot be inside "parallel", which holds tool calls only at agents.main[4].parallel[0].say' },
        { line: 7, column: 5, message: 'expected "all" or a list of agent ids at agents.main[5].wait' },
        { line: 8, column: 18, message: 'an "as" name cannot be "task", "prompt", "results", "last" (they are built in) at agents.main[6].as' },
        { line: 9, column: 17, message: '"as" does not go with "say" at agents.main[7].as' },
        { line: 10, column: 5, message: 'must not be empty at agents.main[8].parallel' },
      ]);
    });

    it('a template must start at a built-in name or the "as" of an earlier move', () => {
      const text = [
        '{ "agents": { "main": [',
        '  { "call": "x", "input": { "q": "{{reprots.results}}" } },',
        '  { "wait": "all", "as": "reports" },',
        '  { "say": "{{reprots.results.0.text}} {{reports.results.0.text}} {{ later }}" },',
        '  { "call": "y", "as": "later" },',
        '] } }',
      ].join('\n');
      assert.deepEqual(positioned(text), [
        { line: 2, column: 29, message: 'unknown name "reprots" in template "{{reprots.results}}"; known: task, prompt, results, last at agents.main[0].input.q' },
        { line: 4, column: 5, message: 'unknown name "reprots" in template "{{reprots.results.0.text}}"; did you mean "reports"? at agents.main[2].say' },
        { line: 4, column: 5, message: 'unknown name "later" in template "{{ later }}" ("later" is named by this or a later move); known: task, prompt, results, last, reports at agents.main[2].say' },
      ]);
    });

    it('an "as" name is used once per agent; agent names are checked', () => {
      const text = '{ "agents": { "main": [ { "call": "a", "as": "x" }, { "parallel": [ { "call": "b", "as": "x" } ] } ], "bad name": [ { "say": "hi" } ] } }';
      const found = positioned(text).map((d) => d.message);
      assert.deepEqual(found, [
        '"as" name "x" is already used by move 1 at agents.main[1]',
        'agent name "bad name" must be letters, digits, "_", "." or "-" at agents.bad name',
      ]);
    });

    it('syntax errors and wrong types are diagnostics, never exceptions', () => {
      assert.deepEqual(positioned('{ "agents": { "main": [ { "say": "hi" } }')[0], { line: 1, column: 41, message: '"," expected in the scenario file' });
      assert.deepEqual(positioned('{\n  "agents": {}\n} x'), [{ line: 3, column: 3, message: 'unexpected character in the scenario file' }]);
      assert.deepEqual(positioned('{ "agents": { "main": [ { "say": 3 } ] } }'), [
        { line: 1, column: 27, message: 'expected string at agents.main[0].say' },
      ]);
      assert.deepEqual(positioned('{ "agents": { "main": [] } }'), [{ line: 1, column: 15, message: 'must not be empty at agents.main' }]);
    });

    it('fromFile throws an Error listing file:line:col message for each diagnostic', () => {
      const dir = mkdtempSync(join(tmpdir(), 'scripted-'));
      try {
        const file = join(dir, 'bad.scenario.jsonc');
        writeFileSync(file, '{\n  "agents": {\n    "main": [ { "spwan": "r", "task": "t" }, { "say": 1 } ]\n  }\n}');
        assert.throws(() => ScriptedModel.fromFile(file), (error: unknown) => {
          assert.ok(error instanceof Error);
          const lines = error.message.split('\n');
          assert.deepEqual(lines.slice(1), [
            `${file}:3:17 unknown field "spwan" at agents.main[0]; did you mean "spawn"?`,
            `${file}:3:48 expected string at agents.main[1].say`,
          ]);
          return true;
        });
        assert.throws(() => ScriptedModel.fromFile(join(dir, 'missing.jsonc')), /cannot read the scenario file .*missing\.jsonc/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('the constructor rejects an invalid scenario', () => {
      assert.throws(() => new ScriptedModel({ agents: { main: [{ spawn: 'x' } as never] } }), /invalid scenario:\n {2}agents\.main\[0\]: a "spawn" move needs "task"/);
      assert.throws(() => new ScriptedModel({ agents: { main: [{ say: '{{nope}}' }] } }), /unknown name "nope"/);
    });

    it('ScenarioSchema validates a scenario value', () => {
      assert.equal(ScenarioSchema.safeParse({ agents: { main: [{ say: 'hi' }] } }).success, true);
      assert.equal(ScenarioSchema.safeParse({ agents: { main: [{ say: 'hi', extra: 1 }] } }).success, false);
    });
  });

  describe('the Atlas/Nova example', () => {
    const SCENARIO = `
      // main starts one researcher per product, waits for both, then answers in one sentence.
      {
        "agents": {
          "main": [
            { "parallel": [ { "spawn": "researcher", "task": "atlas" }, { "spawn": "researcher", "task": "nova" } ] },
            { "wait": "all", "as": "reports" },
            { "say": "The Atlas costs {{reports.results.0.text}} and the Nova costs {{reports.results.1.text}}." },
          ],
          "researcher": [
            { "call": "lookup_price", "input": { "product": "{{task}}" } },
            { "say": "{{last.price}}" },
          ],
        },
      }`;
    const PRICES: Record<string, string> = { atlas: '1,200 EUR', nova: '850 EUR' };

    /** A researcher session, played by hand: its task, one lookup_price call, its answer. */
    async function researcher(model: ScriptedModel, task: string): Promise<string> {
      const messages: Message[] = [user(task)];
      const r0 = await model.respond(request('researcher', messages));
      assert.deepEqual(r0.toolCalls, [{ id: 'call_researcher_0_0', name: 'lookup_price', input: { product: task } }]);
      messages.push(assistant(r0), toolResult(r0.toolCalls[0]!.id, 'lookup_price', { price: PRICES[task] ?? 'unknown' }));
      const r1 = await model.respond(request('researcher', messages));
      assert.deepEqual(r1.toolCalls, []);
      return r1.text;
    }

    async function run(model: ScriptedModel): Promise<string> {
      const messages: Message[] = [user('What do the Atlas and the Nova cost?')];
      const spawn = await model.respond(request('main', messages));
      assert.deepEqual(spawn, {
        text: '',
        toolCalls: [
          { id: 'call_main_0_0', name: 'spawn_agent', input: { agent: 'researcher', task: 'atlas' } },
          { id: 'call_main_0_1', name: 'spawn_agent', input: { agent: 'researcher', task: 'nova' } },
        ],
      });
      messages.push(assistant(spawn),
        toolResult('call_main_0_0', 'spawn_agent', { id: 's2', agent: 'researcher' }),
        toolResult('call_main_0_1', 'spawn_agent', { id: 's3', agent: 'researcher' }));

      const wait = await model.respond(request('main', messages));
      assert.deepEqual(wait, { text: '', toolCalls: [{ id: 'call_main_1_0', name: 'wait_agents', input: {} }] });
      const atlas = await researcher(model, 'atlas');
      const nova = await researcher(model, 'nova');
      assert.equal(atlas, '1,200 EUR');
      assert.equal(nova, '850 EUR');
      messages.push(assistant(wait), toolResult('call_main_1_0', 'wait_agents', {
        results: [
          { id: 's2', agent: 'researcher', state: 'completed', text: atlas },
          { id: 's3', agent: 'researcher', state: 'completed', text: nova },
        ],
      }));

      const answer = await model.respond(request('main', messages));
      assert.deepEqual(answer.toolCalls, []);
      return answer.text;
    }

    it('plays the example from a JSONC string', async () => {
      const { model, diagnostics } = ScriptedModel.parse(SCENARIO, 'atlas-nova.scenario.jsonc');
      assert.deepEqual(diagnostics, []);
      assert.equal(await run(model!), 'The Atlas costs 1,200 EUR and the Nova costs 850 EUR.');
    });

    it('plays the same example from test/fixtures/atlas-nova.scenario.jsonc', async () => {
      const model = ScriptedModel.fromFile(FIXTURE);
      assert.equal(model.id, 'scripted:atlas-nova.scenario.jsonc');
      assert.deepEqual(model.scenario, ScriptedModel.parse(SCENARIO, 'x').model!.scenario);
      assert.equal(await run(model), 'The Atlas costs 1,200 EUR and the Nova costs 850 EUR.');
      assert.ok(readFileSync(FIXTURE, 'utf8').includes('"{{last.price}}"'));
    });
  });
});
