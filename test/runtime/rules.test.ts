// The fifteen rules of runtime.md, one `describe` each, plus concurrency, protected files,
// timeouts, the audit log, subagents left running by an earlier turn, the spawn-denied warning
// and sign-ins. Every test would fail if its rule were broken.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import {
  Agent, AllowApproval, AlreadySettled, Answered, Blocked, Builtins, Completed, DenyApproval, Failed, KeepCallbackOpen,
  MemoryAuditLog, NotFound, OpenApproval, OpenSignIn, PermissionPolicy, PermissionRule, ScriptedModel, SdkError,
  SignInAnswer, Subagent, tool,
  type AnswerResult, type ApprovalRequest, type CallbackContext, type RuntimeEvent, type RuntimeTool, type Session,
  type SignInSourceRequest, type TurnState,
} from '../../src/entries/runtime.js';
import { type AuditEntry } from '../../src/runtime/audit/audit.js';
import { inputDigest } from '../../src/runtime/audit/auditSummary.js';

// ---------------------------------------------------------------------------------------------
// Helpers

type Scenario = ConstructorParameters<typeof ScriptedModel>[0];

function scripted(agents: Scenario['agents']): ScriptedModel {
  return new ScriptedModel({ agents });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** 'pending' when `p` has not settled within `ms`. */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<'settled' | 'pending'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  try {
    return await Promise.race([p.then(() => 'settled' as const, () => 'settled' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The first event (from the start of the session) that matches; fails after `ms`. */
async function waitForEvent(session: Session, match: (e: RuntimeEvent) => boolean, ms = 2000): Promise<RuntimeEvent> {
  const it = session.events();
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, left))));
    const next = await Promise.race([it.next(), late]);
    clearTimeout(timer);
    if (next === 'late') throw new Error(`no matching event within ${ms} ms`);
    if (next.done) throw new Error('the events ended without a matching event');
    if (match(next.value)) {
      void it.return(undefined);
      return next.value;
    }
  }
}

function callbackOpenedFor(toolId: string): (e: RuntimeEvent) => boolean {
  return (e) => e.type === 'callback-opened' && e.callback.type === 'approval' && e.callback.request.tool.id === toolId;
}

function toolResultOf(toolId: string): (e: RuntimeEvent) => boolean {
  return (e) => e.type === 'tool-result' && e.toolId === toolId;
}

/** A client tool that records every input it runs with. */
function counted<S extends z.ZodType>(
  name: string,
  inputSchema: S,
  fn: (input: z.infer<S>) => unknown = () => ({ ok: true }),
): { tool: RuntimeTool; calls: Array<z.infer<S>> } {
  const calls: Array<z.infer<S>> = [];
  const t = tool({ name, description: `the ${name} tool`, inputSchema }, async (input) => {
    calls.push(input);
    return await fn(input);
  });
  return { tool: t, calls };
}

const Product = z.object({ product: z.string() });
const Empty = z.object({});

function priceTool(): { tool: RuntimeTool; calls: Array<{ product: string }> } {
  const prices: Record<string, string> = { atlas: '1,200 EUR', nova: '850 EUR' };
  return counted('lookup_price', Product, (a) => ({ price: prices[a.product] ?? 'unknown' }));
}

function allowRule(...tools: string[]) {
  return PermissionRule({ tools, decision: 'allow' });
}
function askRule(...tools: string[]) {
  return PermissionRule({ tools, decision: 'ask' });
}

function assertBlocked(state: TurnState): asserts state is Blocked {
  assert.ok(state instanceof Blocked, `expected Blocked, got ${state.type}${state instanceof Failed ? `: ${state.error}` : ''}`);
}
function assertCompleted(state: TurnState): asserts state is Completed {
  assert.ok(state instanceof Completed, `expected Completed, got ${state.type}${state instanceof Failed ? `: ${state.error}` : ''}`);
}

function approvals(state: Blocked): OpenApproval[] {
  return state.callbacks.filter((c): c is OpenApproval => c instanceof OpenApproval);
}

function only<T>(items: readonly T[], what = 'item'): T {
  assert.equal(items.length, 1, `expected exactly one ${what}, got ${items.length}`);
  return items[0]!;
}

const sessions: Session[] = [];
/** Starts a session that is cancelled after the test. */
async function start(agent: Agent, options: Parameters<Agent['startSession']>[0] = {}): Promise<Session> {
  const s = await agent.startSession(options);
  sessions.push(s);
  return s;
}
async function cancelSessions(): Promise<void> {
  for (const s of sessions.splice(0)) await s.cancel();
}

function settledLines(audit: MemoryAuditLog, callbackId: string): AuditEntry[] {
  return audit.entries.filter((e) => e.event === 'callback-settled' && e.callback === callbackId);
}

// ---------------------------------------------------------------------------------------------

describe('runtime rules (runtime.md)', () => {
  afterEach(cancelSessions);

  describe('rule 1: the policy judges every call first: allow runs, deny returns the reason, ask opens an approval', () => {
    it('allow runs the tool and its result goes to the model', async () => {
      const price = priceTool();
      const agent = new Agent({
        instructions: '', tools: [price.tool], permissionPolicy: new PermissionPolicy({ default: 'deny', rules: [allowRule('client.lookup_price')] }),
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'It costs {{last.price}}.' }] }),
      });
      const session = await start(agent);
      const state = await session.run('price?');
      assertCompleted(state);
      assert.equal(state.text, 'It costs 1,200 EUR.');
      assert.deepEqual(price.calls, [{ product: 'atlas' }]);
    });

    it("deny runs nothing and returns a denial with the rule's reason as the tool's result", async () => {
      const price = priceTool();
      const agent = new Agent({
        instructions: '', tools: [price.tool],
        permissionPolicy: new PermissionPolicy({ default: 'allow', rules: [PermissionRule({ tools: ['client.lookup_price'], decision: 'deny', reason: 'prices are secret today' })] }),
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'Model saw: {{last.error}}' }] }),
      });
      const session = await start(agent, { onApproval: () => assert.fail('a denied call is never asked') });
      const state = await session.run('price?');
      assertCompleted(state);
      assert.match(state.text, /^Model saw: denied: prices are secret today/);
      assert.deepEqual(price.calls, []);
      const result = await waitForEvent(session, toolResultOf('client.lookup_price'));
      assert.ok(result.type === 'tool-result' && !result.ok && result.content.includes('prices are secret today'));
    });

    it('ask opens an approval for the call (and runs nothing until it is answered)', async () => {
      const price = priceTool();
      const agent = new Agent({
        instructions: '', tools: [price.tool], permissionPolicy: new PermissionPolicy({ default: 'allow', rules: [askRule('client.lookup_price')] }),
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'nova' } }, { say: '{{last.price}}' }] }),
      });
      const session = await start(agent);
      const state = await session.run('price?');
      assertBlocked(state);
      const cb = only(approvals(state), 'approval');
      assert.equal(cb.request.tool.id, 'client.lookup_price');
      assert.equal(cb.request.tool.kind, 'client');
      assert.deepEqual(cb.request.input, { product: 'nova' });
      assert.equal(typeof cb.request.title, 'string');
      assert.deepEqual(price.calls, []);
      assert.ok((await session.turn(state.turnId).answer(cb.id, new AllowApproval())) instanceof Answered);
      const done = await session.turn(state.turnId).result({ after: state });
      assertCompleted(done);
      assert.equal(done.text, '850 EUR');
      assert.deepEqual(price.calls, [{ product: 'nova' }]);
    });

    it('the policy comes first: a denied call needs no sign-in and no approval', async () => {
      const gh = counted('gh_issues', Empty);
      gh.tool.signIn = { source: 'mcp', id: 'gh', name: 'GitHub', isConnected: () => false };
      const agent = new Agent({
        instructions: '', tools: [gh.tool],
        permissionPolicy: new PermissionPolicy({ default: 'deny' }),
        model: scripted({ main: [{ call: 'gh_issues' }, { say: '{{last.error}}' }] }),
      });
      const session = await start(agent, { onSignIn: () => assert.fail('no sign-in for a denied call') });
      const state = await session.run('issues?');
      assertCompleted(state);
      assert.match(state.text, /^denied:/);
      assert.deepEqual(gh.calls, []);
    });
    for (const [mode, expected] of [['auto', 'allow'], ['ask', 'ask'], ['deny', 'deny']] as const) {
      it(`a call no rule decides, under a policy with no default, takes permissionMode "${mode}": ${expected}`, async () => {
        const price = priceTool();
        const agent = new Agent({
          instructions: '', tools: [price.tool], permissionMode: mode,
          permissionPolicy: new PermissionPolicy({ rules: [PermissionRule({ tools: ['client.other'], decision: 'allow' })] }),
          model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'saw {{last}}' }] }),
        });
        const session = await start(agent);
        const state = await session.run('go');
        if (expected === 'ask') {
          assertBlocked(state);
          assert.equal(only(approvals(state)).request.tool.id, 'client.lookup_price');
        } else {
          assertCompleted(state);
          assert.equal(price.calls.length, expected === 'allow' ? 1 : 0);
        }
      });
    }
  });

  describe('rule 2: onApproval (plain or async) answers; any other return raises SdkError', () => {
    function askingAgent(calls: { tool: RuntimeTool }) {
      return new Agent({
        instructions: '', tools: [calls.tool], permissionMode: 'ask',
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'result: {{last}}' }] }),
      });
    }

    it('a plain function returning AllowApproval allows the call', async () => {
      const price = priceTool();
      const session = await start(askingAgent(price), { onApproval: () => new AllowApproval() });
      const state = await session.run('go');
      assertCompleted(state);
      assert.deepEqual(price.calls, [{ product: 'atlas' }]);
    });

    it('an async function returning DenyApproval denies it, and the model is told', async () => {
      const price = priceTool();
      const session = await start(askingAgent(price), {
        onApproval: async () => {
          await sleep(5);
          return new DenyApproval();
        },
      });
      const state = await session.run('go');
      assertCompleted(state);
      assert.match(state.text, /denied/);
      assert.deepEqual(price.calls, []);
    });

    const bad: Array<[string, unknown]> = [
      ['undefined', undefined],
      ['null', null],
      ['a string', 'allow'],
      ['true', true],
      ['an empty object', {}],
      ['a SignInAnswer', new SignInAnswer()],
    ];
    for (const [what, value] of bad) {
      it(`returning ${what} raises SdkError in run() and runs nothing`, async () => {
        const price = priceTool();
        const session = await start(askingAgent(price), { onApproval: () => value });
        await assert.rejects(session.run('go'), SdkError);
        assert.deepEqual(price.calls, []);
        assert.equal(session.openCallbacks().length, 1);
      });
    }

    it('an async handler resolving to undefined raises SdkError too', async () => {
      const price = priceTool();
      const session = await start(askingAgent(price), { onApproval: async () => undefined });
      await assert.rejects(session.run('go'), SdkError);
      assert.deepEqual(price.calls, []);
    });
  });

  describe('rule 3: the handler runs only while run() or result() waits; events() never runs it', () => {
    it('an approval opened between calls stays open until a later result() offers it', async () => {
      const first = counted('first', Empty);
      const second = counted('second', Empty);
      const agent = new Agent({
        instructions: '', tools: [first.tool, second.tool], permissionMode: 'ask',
        model: scripted({ main: [{ call: 'first' }, { call: 'second' }, { say: 'done' }] }),
      });
      const seen: string[] = [];
      const session = await start(agent, {
        onApproval: (_ctx, request) => {
          seen.push(request.tool.id);
          return new KeepCallbackOpen();
        },
      });
      const state = await session.run('go');
      assertBlocked(state);
      assert.deepEqual(seen, ['client.first']);
      // A person answers; the turn goes on and asks again while nothing waits.
      const turn = session.turn(state.turnId);
      assert.ok((await turn.answer(approvals(state)[0]!.id, new AllowApproval())) instanceof Answered);
      // Reading events() up to the new approval does not run the handler either.
      await waitForEvent(session, callbackOpenedFor('client.second'));
      await sleep(30);
      assert.deepEqual(seen, ['client.first'], 'neither events() nor the passing of time ran the handler');
      assert.equal(session.openCallbacks().length, 1);
      const again = await turn.result({ after: state });
      assertBlocked(again);
      assert.deepEqual(seen, ['client.first', 'client.second']);
      assert.equal(first.calls.length, 1);
      assert.equal(second.calls.length, 0);
    });
  });

  describe('rule 4: a throwing handler or a bad return raises in the waiting call; the approval stays open; the turn keeps running', () => {
    it('the error is the one thrown; the approval stays open; a parallel call finishes; a later result() completes', async () => {
      const price = priceTool();
      const side = counted('side', Empty, async () => {
        await sleep(30);
        return { side: 'done' };
      });
      const agent = new Agent({
        instructions: '', tools: [price.tool, side.tool],
        permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [allowRule('client.side')] }),
        model: scripted({ main: [{ parallel: [{ call: 'lookup_price', input: { product: 'atlas' } }, { call: 'side' }] }, { say: '{{results.0.price}} {{results.1.side}}' }] }),
      });
      const boom = new Error('the handler broke');
      let throws = true;
      let offered = 0;
      const session = await start(agent, {
        onApproval: () => {
          offered++;
          if (throws) throw boom;
          return new AllowApproval();
        },
      });
      await assert.rejects(session.run('go'), (e) => e === boom);
      const open = only(session.openCallbacks(), 'open callback');
      assert.equal(open.type, 'approval');
      const turn = session.currentTurn!;
      // The turn keeps running: the allowed parallel call finishes without a driver.
      await waitForEvent(session, toolResultOf('client.side'));
      assert.deepEqual(side.calls.length, 1);
      assert.deepEqual(price.calls, []);
      throws = false;
      const state = await turn.result();
      assertCompleted(state);
      assert.equal(state.text, '1,200 EUR done');
      assert.equal(offered, 2);
      assert.deepEqual(price.calls, [{ product: 'atlas' }]);
    });

    it('after a bad return the approval can still be answered with turn.answer', async () => {
      const price = priceTool();
      const agent = new Agent({
        instructions: '', tools: [price.tool], permissionMode: 'ask',
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'nova' } }, { say: '{{last.price}}' }] }),
      });
      const session = await start(agent, { onApproval: () => 'yes please' });
      await assert.rejects(session.run('go'), SdkError);
      const cb = only(session.openCallbacks());
      const turn = session.currentTurn!;
      assert.ok((await turn.answer(cb.id, new AllowApproval())) instanceof Answered);
      await waitForEvent(session, (e) => e.type === 'turn-ended');
      const state = await turn.result();
      assertCompleted(state);
      assert.equal(state.text, '850 EUR');
    });
  });

  describe('rule 5: one handler answers the whole tree, ctx naming the session and turn that asked', () => {
    it('root, subagent and sub-subagent approvals all reach the one handler with their own session and turn', async () => {
      const rootPrice = priceTool();
      const workerPrice = priceTool();
      const agent = new Agent({
        instructions: '', tools: [rootPrice.tool], permissionMode: 'ask',
        subagents: [
          new Subagent({ name: 'lead', builtins: new Builtins({ subagents: true }) }),
          new Subagent({ name: 'worker', tools: [workerPrice.tool] }),
        ],
        model: scripted({
          main: [{ spawn: 'lead', task: 'lead it' }, { wait: 'all' }, { call: 'lookup_price', input: { product: 'nova' } }, { say: 'main done' }],
          lead: [{ spawn: 'worker', task: 'work' }, { wait: 'all' }, { say: 'lead done' }],
          worker: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'worker: {{last.price}}' }],
        }),
      });
      const seen: Array<{ tool: string; session: string; turn: string; agent: string; cbSession: string; cbTurn: string }> = [];
      const session = await start(agent, {
        onApproval: (ctx: CallbackContext, request: ApprovalRequest) => {
          seen.push({ tool: request.tool.id, session: ctx.session.id, turn: ctx.session.turnId, agent: ctx.session.agent, cbSession: ctx.callback.sessionId, cbTurn: ctx.callback.turnId });
          return new AllowApproval();
        },
      });
      const state = await session.run('go');
      assertCompleted(state);
      const lead = only(session.children, 'lead');
      const worker = only(lead.children, 'worker');
      assert.deepEqual(seen, [
        { tool: 'agents.spawn', session: session.id, turn: state.turnId, agent: 'main', cbSession: session.id, cbTurn: state.turnId },
        { tool: 'agents.spawn', session: lead.id, turn: lead.currentTurn!.id, agent: 'lead', cbSession: lead.id, cbTurn: lead.currentTurn!.id },
        { tool: 'client.lookup_price', session: worker.id, turn: worker.currentTurn!.id, agent: 'worker', cbSession: worker.id, cbTurn: worker.currentTurn!.id },
        { tool: 'client.lookup_price', session: session.id, turn: state.turnId, agent: 'main', cbSession: session.id, cbTurn: state.turnId },
      ]);
      assert.notEqual(worker.currentTurn!.id, state.turnId);
      assert.deepEqual(workerPrice.calls, [{ product: 'atlas' }]);
      assert.deepEqual(rootPrice.calls, [{ product: 'nova' }]);
    });
  });

  describe('rule 6: decisions are made on request.tool.id, never on the name the model used', () => {
    it('a rule naming the model-facing name does not match; the stable id does', async () => {
      const byName = priceTool();
      const agentByName = new Agent({
        instructions: '', tools: [byName.tool],
        permissionPolicy: new PermissionPolicy({ default: 'deny', rules: [allowRule('lookup_price')] }),
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: '{{last}}' }] }),
      });
      const s1 = await start(agentByName);
      const st1 = await s1.run('go');
      assertCompleted(st1);
      assert.match(st1.text, /denied/);
      assert.deepEqual(byName.calls, []);

      const byId = priceTool();
      const agentById = new Agent({
        instructions: '', tools: [byId.tool],
        permissionPolicy: new PermissionPolicy({ default: 'deny', rules: [allowRule('client.lookup_price')] }),
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: '{{last.price}}' }] }),
      });
      const s2 = await start(agentById);
      const st2 = await s2.run('go');
      assertCompleted(st2);
      assert.equal(st2.text, '1,200 EUR');
    });

    it('a client tool named like a builtin is not judged as the builtin; the request carries both id and name', async () => {
      const fake = counted('read_file', z.object({ path: z.string() }));
      const agent = new Agent({
        instructions: '', tools: [fake.tool],
        permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [allowRule('builtin.read_file')] }),
        model: scripted({ main: [{ call: 'read_file', input: { path: 'x' } }, { say: 'done' }] }),
      });
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(approvals(state));
      assert.equal(cb.request.tool.id, 'client.read_file');
      assert.equal(cb.request.tool.name, 'read_file');
      assert.equal(cb.request.tool.kind, 'client');
      assert.deepEqual(fake.calls, []);
    });

    it('agents.spawn is asked as agents.spawn though the model calls spawn_agent', async () => {
      const agent = new Agent({
        instructions: '', permissionMode: 'ask', subagents: [new Subagent({ name: 'helper' })],
        model: scripted({ main: [{ spawn: 'helper', task: 't' }, { say: 'ok' }], helper: [{ say: 'hi' }] }),
      });
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(approvals(state));
      assert.equal(cb.request.tool.id, 'agents.spawn');
      assert.equal(cb.request.tool.name, 'spawn_agent');
    });
  });

  describe('rule 7: AllowApproval({ scope: "session" }) allows the same tool id and input for the rest of the session', () => {
    const Opts = z.object({ product: z.string(), options: z.record(z.string(), z.number()) });

    it('the same input (canonical JSON, any key order) is not asked again, in this turn or the next; a different input is', async () => {
      const t = counted('quote', Opts, (a) => ({ quoted: a.product }));
      const audit = new MemoryAuditLog();
      const agent = new Agent({
        instructions: '', tools: [t.tool], permissionMode: 'ask',
        model: scripted({
          main: [
            { call: 'quote', input: { product: 'atlas', options: { a: 1, b: 2 } } },
            { call: 'quote', input: { options: { b: 2, a: 1 }, product: 'atlas' } },
            { call: 'quote', input: { product: 'nova', options: { a: 1, b: 2 } } },
            { say: 'turn one' },
            { call: 'quote', input: { product: 'atlas', options: { b: 2, a: 1 } } },
            { say: 'turn two' },
          ],
        }),
      });
      const asked: unknown[] = [];
      const session = await start(agent, {
        audit,
        onApproval: (_ctx, request) => {
          asked.push(request.input);
          return new AllowApproval({ scope: 'session' });
        },
      });
      assertCompleted(await session.run('one'));
      assertCompleted(await session.run('two'));
      assert.deepEqual(asked, [
        { product: 'atlas', options: { a: 1, b: 2 } },
        { product: 'nova', options: { a: 1, b: 2 } },
      ]);
      assert.equal(t.calls.length, 4);
      const bySession = audit.entries.filter((e) => e.event === 'decision' && e.answeredBy === 'session');
      assert.equal(bySession.length, 2);
    });

    it('a session allow given by a person through turn.answer works the same', async () => {
      const price = priceTool();
      const agent = new Agent({
        instructions: '', tools: [price.tool], permissionMode: 'ask',
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { call: 'lookup_price', input: { product: 'atlas' } }, { say: 'done' }] }),
      });
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      await session.turn(state.turnId).answer(only(approvals(state)).id, new AllowApproval({ scope: 'session' }));
      assertCompleted(await session.turn(state.turnId).result({ after: state }));
      assert.equal(price.calls.length, 2);
    });

    it('a rule with remember: "never" cannot be allowed for the session (SdkError, nothing sent); once works', async () => {
      const price = priceTool();
      const agent = new Agent({
        instructions: '', tools: [price.tool],
        permissionPolicy: new PermissionPolicy({ rules: [PermissionRule({ tools: ['client.lookup_price'], decision: 'ask', remember: 'never' })] }),
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'done' }] }),
      });
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(approvals(state));
      assert.equal(cb.request.sessionAllowed, false);
      const turn = session.turn(state.turnId);
      await assert.rejects(turn.answer(cb.id, new AllowApproval({ scope: 'session' })), SdkError);
      assert.equal(only(session.openCallbacks()).id, cb.id);
      assert.ok((await turn.answer(cb.id, new AllowApproval())) instanceof Answered);
      assertCompleted(await turn.result({ after: state }));
      assert.equal(price.calls.length, 1);
    });

    it('allow once asks again for the same call; a new session asks again after a session allow', async () => {
      const price = priceTool();
      const moves = { main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { call: 'lookup_price', input: { product: 'atlas' } }, { say: 'done' }] };
      let asked = 0;
      const once = await start(new Agent({ instructions: '', tools: [price.tool], permissionMode: 'ask', model: scripted(moves) }), {
        onApproval: () => (asked++, new AllowApproval()),
      });
      assertCompleted(await once.run('go'));
      assert.equal(asked, 2);

      const agent = new Agent({ instructions: '', tools: [price.tool], permissionMode: 'ask', model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'done' }] }) });
      let askedA = 0;
      const a = await start(agent, { onApproval: () => (askedA++, new AllowApproval({ scope: 'session' })) });
      assertCompleted(await a.run('go'));
      let askedB = 0;
      const b = await start(agent, { onApproval: () => (askedB++, new AllowApproval({ scope: 'session' })) });
      assertCompleted(await b.run('go'));
      assert.deepEqual([askedA, askedB], [1, 1]);
    });
  });

  describe('rule 8: a hook\'s approval cannot be allowed for the session', () => {
    function hookedAgent(t: { tool: RuntimeTool }) {
      return new Agent({
        instructions: '', tools: [t.tool], permissionPolicy: new PermissionPolicy({ default: 'allow' }),
        model: scripted({ main: [{ call: 'deploy', input: { env: 'prod' } }, { say: 'deployed {{last.env}}' }] }),
      });
    }
    const Deploy = z.object({ env: z.string() });
    const reviewHook = { name: 'review', check: ({ tool: t }: { tool: RuntimeTool }) => (t.id === 'client.deploy' ? 'a person reviews deploys' : undefined) };

    it('a handler answering it with scope "session" raises SdkError and sends nothing; AllowApproval() once works', async () => {
      const t = counted('deploy', Deploy, (a) => ({ env: a.env }));
      const audit = new MemoryAuditLog();
      let scope: 'session' | 'once' = 'session';
      const session = await start(hookedAgent(t), {
        audit, hooks: [reviewHook],
        onApproval: (_ctx, request) => {
          assert.equal(request.hook, 'review');
          return new AllowApproval({ scope });
        },
      });
      await assert.rejects(session.run('go'), SdkError);
      const cb = only(session.openCallbacks());
      assert.equal(cb.type, 'approval');
      assert.deepEqual(settledLines(audit, cb.id), []);
      assert.deepEqual(t.calls, []);
      scope = 'once';
      const state = await session.currentTurn!.result();
      assertCompleted(state);
      assert.equal(state.text, 'deployed prod');
      assert.equal(t.calls.length, 1);
    });

    it('turn.answer with scope "session" rejects with SdkError and leaves it open; once is Answered', async () => {
      const t = counted('deploy', Deploy, (a) => ({ env: a.env }));
      const session = await start(hookedAgent(t), { hooks: [reviewHook] });
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(approvals(state));
      assert.equal(cb.request.hook, 'review');
      const turn = session.turn(state.turnId);
      await assert.rejects(turn.answer(cb.id, new AllowApproval({ scope: 'session' })), SdkError);
      assert.equal(only(session.openCallbacks()).id, cb.id);
      assert.deepEqual(t.calls, []);
      assert.ok((await turn.answer(cb.id, new AllowApproval())) instanceof Answered);
      assertCompleted(await turn.result({ after: state }));
      assert.equal(t.calls.length, 1);
    });
  });

  describe('rule 9: KeepCallbackOpen leaves the approval open and the call returns Blocked listing the whole tree', () => {
    it('Blocked lists the root\'s and every subagent\'s open approvals, each naming its session and turn', async () => {
      const price = priceTool();
      const rootTool = counted('confirm', Empty);
      const agent = new Agent({
        instructions: '', tools: [rootTool.tool], permissionMode: 'ask',
        subagents: [new Subagent({ name: 'researcher', tools: [price.tool] })],
        model: scripted({
          main: [{ parallel: [{ spawn: 'researcher', task: 'atlas' }, { spawn: 'researcher', task: 'nova' }] }, { parallel: [{ call: 'confirm' }, { wait: 'all' }] }, { say: 'done' }],
          researcher: [{ call: 'lookup_price', input: { product: '{{task}}' } }, { say: '{{last.price}}' }],
        }),
      });
      const offered: string[] = [];
      const session = await start(agent, {
        onApproval: (ctx, request) => {
          offered.push(`${request.tool.id}@${ctx.session.id}`);
          return request.tool.id === 'agents.spawn' ? new AllowApproval() : new KeepCallbackOpen();
        },
      });
      const state = await session.run('go');
      assertBlocked(state);
      assert.equal(state.turnId, session.currentTurn!.id);
      const open = approvals(state);
      assert.equal(open.length, 3);
      assert.equal(state.callbacks.length, 3);
      const kids = session.children;
      assert.equal(kids.length, 2);
      const byTool = (id: string) => open.filter((c) => c.request.tool.id === id);
      const rootCb = only(byTool('client.confirm'));
      assert.equal(rootCb.sessionId, session.id);
      assert.equal(rootCb.turnId, state.turnId);
      const subCbs = byTool('client.lookup_price');
      assert.deepEqual(subCbs.map((c) => c.sessionId).sort(), kids.map((k) => k.id).sort());
      for (const c of subCbs) {
        const kid = kids.find((k) => k.id === c.sessionId)!;
        assert.equal(c.turnId, kid.currentTurn!.id);
        assert.equal(c.agent, 'researcher');
      }
      // Each kept approval was offered once, by this one waiting call.
      assert.equal(offered.filter((o) => !o.startsWith('agents.spawn')).length, 3);
      assert.deepEqual(price.calls, []);
      assert.deepEqual(rootTool.calls, []);
    });

    it('turn.answer refuses KeepCallbackOpen with SdkError and sends nothing', async () => {
      const price = priceTool();
      const audit = new MemoryAuditLog();
      const agent = new Agent({
        instructions: '', tools: [price.tool], permissionMode: 'ask',
        model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'done' }] }),
      });
      const session = await start(agent, { audit });
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(approvals(state));
      const turn = session.turn(state.turnId);
      await assert.rejects(turn.answer(cb.id, new KeepCallbackOpen() as never), SdkError);
      await assert.rejects(turn.answer(cb.id, undefined as never), SdkError);
      await assert.rejects(turn.answer(cb.id, new SignInAnswer() as never), SdkError);
      assert.equal(only(session.openCallbacks()).id, cb.id);
      assert.deepEqual(settledLines(audit, cb.id), []);
      assert.deepEqual(price.calls, []);
      assert.equal(await settledWithin(turn.result({ after: state }), 50), 'pending');
    });
  });

  describe('rule 10: turn.answer on the root answers a subagent\'s callback; Answered, AlreadySettled, NotFound', () => {
    function researchAgent(price: { tool: RuntimeTool }) {
      return new Agent({
        instructions: '', tools: [], permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [allowRule('agents.spawn')] }),
        subagents: [new Subagent({ name: 'researcher', tools: [price.tool] })],
        model: scripted({
          main: [{ spawn: 'researcher', task: 'atlas' }, { wait: 'all' }, { say: 'main: {{last.results.0.text}}' }],
          researcher: [{ call: 'lookup_price', input: { product: '{{task}}' } }, { say: '{{last.price}}' }],
        }),
      });
    }

    it("the root's turn answers on the subagent's session; then the root says NotFound and the subagent says AlreadySettled", async () => {
      const price = priceTool();
      const session = await start(researchAgent(price));
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(approvals(state));
      const sub = only(session.children);
      assert.equal(cb.sessionId, sub.id);
      const rootTurn = session.turn(state.turnId);
      const subTurn = sub.turn(cb.turnId);

      const answered = await rootTurn.answer(cb.id, new AllowApproval());
      assert.ok(answered instanceof Answered);
      assert.equal(answered.sessionId, sub.id, 'answered on the subagent session');
      assert.equal(answered.callbackId, cb.id);
      assert.ok(answered.answer instanceof AllowApproval);

      const rootAgain = await rootTurn.answer(cb.id, new AllowApproval());
      assert.ok(rootAgain instanceof NotFound, `root says ${rootAgain.type}`);
      const subAgain = await subTurn.answer(cb.id, new DenyApproval());
      assert.ok(subAgain instanceof AlreadySettled, `subagent says ${subAgain.type}`);

      const done = await rootTurn.result({ after: state });
      assertCompleted(done);
      assert.equal(done.text, 'main: 1,200 EUR');
      assert.equal(price.calls.length, 1);
    });

    it('an id never opened is NotFound; a root callback answered on a subagent turn is NotFound; a second answer is AlreadySettled', async () => {
      const price = priceTool();
      const agent = new Agent({
        instructions: '', permissionMode: 'ask', tools: [priceTool().tool],
        subagents: [new Subagent({ name: 'researcher', tools: [price.tool] })],
        model: scripted({
          main: [{ spawn: 'researcher', task: 'atlas' }, { call: 'lookup_price', input: { product: 'nova' } }, { say: 'done' }],
          researcher: [{ call: 'lookup_price', input: { product: '{{task}}' } }, { say: '{{last.price}}' }],
        }),
      });
      const session = await start(agent, { onApproval: (_c, r) => (r.tool.id === 'agents.spawn' ? new AllowApproval() : new KeepCallbackOpen()) });
      const state = await session.run('go');
      assertBlocked(state);
      const rootTurn = session.turn(state.turnId);
      const sub = only(session.children);
      const rootCb = only(approvals(state).filter((c) => c.sessionId === session.id));
      const subCb = only(approvals(state).filter((c) => c.sessionId === sub.id));
      const subTurn = sub.turn(subCb.turnId);

      assert.ok((await rootTurn.answer('cb_never_opened', new AllowApproval())) instanceof NotFound);
      assert.ok((await subTurn.answer('cb_never_opened', new AllowApproval())) instanceof NotFound);
      assert.ok((await subTurn.answer(rootCb.id, new AllowApproval())) instanceof NotFound, 'a subagent cannot answer its parent');
      assert.equal(session.openCallbacks().length, 2, 'nothing changed');

      assert.ok((await subTurn.answer(subCb.id, new DenyApproval())) instanceof Answered, "the subagent's own turn answers too");
      assert.ok((await rootTurn.answer(rootCb.id, new DenyApproval())) instanceof Answered);
      assert.ok((await rootTurn.answer(rootCb.id, new AllowApproval())) instanceof AlreadySettled);
    });

    it('a callback closed by interrupting the subagent: root NotFound, subagent AlreadySettled', async () => {
      const price = priceTool();
      const subAsked = deferred();
      const pause = counted('pause', Empty, async () => {
        await subAsked.promise;
        return {};
      });
      const agent = new Agent({
        instructions: '', tools: [pause.tool], permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [allowRule('agents.spawn', 'client.pause')] }),
        subagents: [new Subagent({ name: 'researcher', tools: [price.tool] })],
        model: scripted({
          main: [{ spawn: 'researcher', task: 'atlas', as: 'r' }, { call: 'pause' }, { interrupt: '{{r.id}}' }, { wait: 'all' }, { say: '{{last.results.0.error}}' }],
          researcher: [{ call: 'lookup_price', input: { product: '{{task}}' } }, { say: '{{last.price}}' }],
        }),
      });
      let subCb: OpenApproval | undefined;
      const session = await start(agent, {
        onApproval: (ctx) => {
          subCb = ctx.callback as OpenApproval;
          subAsked.resolve();
          return new KeepCallbackOpen();
        },
      });
      const state = await session.run('go');
      assertCompleted(state);
      assert.equal(state.text, 'interrupted');
      assert.ok(subCb);
      const sub = only(session.children);
      assert.deepEqual(session.openCallbacks(), []);
      assert.ok((await session.turn(state.turnId).answer(subCb.id, new AllowApproval())) instanceof NotFound);
      assert.ok((await sub.turn(subCb.turnId).answer(subCb.id, new AllowApproval())) instanceof AlreadySettled);
      assert.deepEqual(price.calls, []);
    });

    it("a root callback closed by cancelling the session is AlreadySettled on the root", async () => {
      const price = priceTool();
      const agent = new Agent({ instructions: '', tools: [price.tool], permissionMode: 'ask', model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'x' }] }) });
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      await session.cancel();
      assert.ok((await session.turn(state.turnId).answer(only(approvals(state)).id, new AllowApproval())) instanceof AlreadySettled);
      assert.deepEqual(price.calls, []);
    });
  });

  describe('rule 11: result({ after }) returns only on a later change than that Blocked', () => {
    it('with the same Blocked it waits; without after it returns Blocked at once; an answer wakes it', async () => {
      const price = priceTool();
      const agent = new Agent({ instructions: '', tools: [price.tool], permissionMode: 'ask', model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: '{{last.price}}' }] }) });
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      const turn = session.turn(state.turnId);
      const waiting = turn.result({ after: state });
      assert.equal(await settledWithin(waiting, 80), 'pending');
      const again = await turn.result();
      assertBlocked(again);
      assert.deepEqual(again.callbacks.map((c) => c.id), state.callbacks.map((c) => c.id));
      assert.ok((await turn.answer(state.callbacks[0]!.id, new AllowApproval())) instanceof Answered);
      const done = await waiting;
      assertCompleted(done);
      assert.equal(done.text, '1,200 EUR');
    });

    it('with a handler that keeps it open, result({ after }) does not re-offer and return the same Blocked', async () => {
      const price = priceTool();
      let offers = 0;
      const agent = new Agent({ instructions: '', tools: [price.tool], permissionMode: 'ask', model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: '{{last}}' }] }) });
      const session = await start(agent, { onApproval: () => (offers++, new KeepCallbackOpen()) });
      const state = await session.run('go');
      assertBlocked(state);
      const turn = session.turn(state.turnId);
      const waiting = turn.result({ after: state });
      assert.equal(await settledWithin(waiting, 80), 'pending');
      assert.equal(offers, 1);
      await turn.answer(state.callbacks[0]!.id, new DenyApproval());
      assertCompleted(await waiting);
    });

    it('a Blocked that is already stale returns at once with the new state', async () => {
      const a = counted('a', Empty);
      const b = counted('b', Empty);
      const agent = new Agent({ instructions: '', tools: [a.tool, b.tool], permissionMode: 'ask', model: scripted({ main: [{ call: 'a' }, { call: 'b' }, { say: 'done' }] }) });
      const session = await start(agent);
      const first = await session.run('go');
      assertBlocked(first);
      const turn = session.turn(first.turnId);
      await turn.answer(first.callbacks[0]!.id, new AllowApproval());
      await waitForEvent(session, callbackOpenedFor('client.b'));
      const second = await turn.result({ after: first });
      assertBlocked(second);
      assert.equal(only(approvals(second)).request.tool.id, 'client.b');
      assert.ok(second.version > first.version);
    });
  });

  describe('rule 12: in "ask" mode agents.spawn asks; agents.message, agents.wait and agents.interrupt never ask', () => {
    const scenario = {
      main: [
        { spawn: 'helper', task: 'first', as: 'h' },
        { wait: 'all' },
        { message: '{{h.id}}', text: 'second' },
        { wait: ['{{h.id}}'] },
        { interrupt: '{{h.id}}' },
        { say: 'helper said {{results.3.results.0.text}}' },
      ],
      helper: [{ say: 'one: {{prompt}}' }, { say: 'two: {{prompt}}' }],
    } satisfies Scenario['agents'];

    for (const [label, options] of [
      ['permissionMode "ask", no policy', { permissionMode: 'ask' as const }],
      ['a policy whose default is ask', { permissionPolicy: new PermissionPolicy({ default: 'ask' }) }],
      ['a policy with an ask rule for agents.*', { permissionPolicy: new PermissionPolicy({ default: 'allow', rules: [askRule('agents.*')] }) }],
    ] as const) {
      it(`only the spawn is asked (${label})`, async () => {
        const audit = new MemoryAuditLog();
        const agent = new Agent({ instructions: '', subagents: [new Subagent({ name: 'helper' })], model: scripted(scenario), ...options });
        const asked: string[] = [];
        const session = await start(agent, { audit, onApproval: (_c, r) => (asked.push(r.tool.id), new AllowApproval()) });
        const state = await session.run('go');
        assertCompleted(state);
        assert.equal(state.text, 'helper said two: second');
        assert.deepEqual(asked, ['agents.spawn']);
        const decided = audit.entries.filter((e) => e.event === 'decision' || e.event === 'callback-opened').map((e) => `${e.tool}:${e.decision}`);
        assert.deepEqual(decided, ['agents.spawn:ask', 'agents.wait:allow', 'agents.message:allow', 'agents.wait:allow', 'agents.interrupt:allow']);
      });
    }

    it('without a handler the spawn blocks: the subagent never starts until it is answered', async () => {
      const agent = new Agent({ instructions: '', permissionMode: 'ask', subagents: [new Subagent({ name: 'helper' })], model: scripted(scenario) });
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      assert.equal(only(approvals(state)).request.tool.id, 'agents.spawn');
      assert.equal(session.children.length, 0);
    });
  });

  describe('rule 13: an agent with subagents under a policy denying agents.spawn warns when the session starts', () => {
    let emitted: unknown[][] = [];
    let original: typeof process.emitWarning;
    beforeEach(() => {
      emitted = [];
      original = process.emitWarning;
      process.emitWarning = ((...args: unknown[]) => void emitted.push(args)) as unknown as typeof process.emitWarning;
    });
    afterEach(() => {
      process.emitWarning = original;
    });

    const withSubagents = (policy: PermissionPolicy | undefined, mode?: 'ask' | 'deny' | 'auto') =>
      new Agent({
        instructions: '', subagents: [new Subagent({ name: 'helper' })],
        ...(policy ? { permissionPolicy: policy } : {}), ...(mode ? { permissionMode: mode } : {}),
        model: scripted({ main: [{ spawn: 'helper', task: 't' }, { say: '{{last.error}}' }], helper: [{ say: 'hi' }] }),
      });

    function assertWarned(session: Session): void {
      const w = only(session.warnings, 'warning');
      assert.match(w, /agents\.spawn/);
      assert.match(w, /every start is denied/);
      assert.equal(emitted.length, 1);
      assert.equal(emitted[0]![0], w);
    }

    it('by the default', async () => {
      const session = await start(withSubagents(new PermissionPolicy({ default: 'deny' })));
      assertWarned(session);
      const ev = await waitForEvent(session, (e) => e.type === 'warning');
      assert.ok(ev.type === 'warning' && /agents\.spawn/.test(ev.message));
      // And indeed the start is denied.
      const state = await session.run('go');
      assertCompleted(state);
      assert.match(state.text, /denied/);
      assert.equal(session.children.length, 0);
    });

    it('by a rule', async () => {
      const session = await start(withSubagents(new PermissionPolicy({ default: 'allow', rules: [PermissionRule({ tools: ['agents.*'], decision: 'deny' })] })));
      assertWarned(session);
    });

    it('by a policy given to startSession, which replaces the agent\'s', async () => {
      const agent = withSubagents(new PermissionPolicy({ default: 'allow' }));
      const session = await start(agent, { policy: new PermissionPolicy({ default: 'deny' }).policy });
      assertWarned(session);
    });

    it('no warning when agents.spawn is allowed or asked, or when the agent has no subagents', async () => {
      const a = await start(withSubagents(new PermissionPolicy({ default: 'deny', rules: [allowRule('agents.spawn')] })));
      const b = await start(withSubagents(new PermissionPolicy({ default: 'deny', rules: [askRule('agents.spawn')] })));
      const c = await start(new Agent({ instructions: '', model: scripted({ main: [{ say: 'x' }] }), permissionPolicy: new PermissionPolicy({ default: 'deny' }) }));
      const d = await start(withSubagents(undefined, 'ask'));
      assert.deepEqual([a.warnings, b.warnings, c.warnings, d.warnings], [[], [], [], []]);
      assert.equal(emitted.length, 0);
    });
  });

  describe('rule 14: sign-ins', () => {
    function signInAgent(isConnected: () => boolean | Promise<boolean>, wasConnected?: () => boolean) {
      const gh = counted('gh_issues', Empty, () => ({ issues: 3 }));
      gh.tool.signIn = { source: 'mcp', id: 'gh', name: 'GitHub', isConnected, ...(wasConnected ? { wasConnected } : {}) };
      const agent = new Agent({
        instructions: '', tools: [gh.tool], permissionPolicy: new PermissionPolicy({ default: 'allow' }),
        model: scripted({ main: [{ call: 'gh_issues' }, { say: 'agent saw: {{last}}' }] }),
      });
      return { agent, calls: gh.calls };
    }

    it('an OpenSignIn lists the source with mode connect', async () => {
      const { agent } = signInAgent(() => false);
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(state.callbacks);
      assert.ok(cb instanceof OpenSignIn);
      assert.deepEqual(cb.sources, [{ source: 'mcp', id: 'gh', name: 'GitHub', mode: 'connect' }]);
      assert.equal(cb.sessionId, session.id);
      assert.equal(cb.turnId, state.turnId);
    });

    it('mode is reconnect for a source that was connected before', async () => {
      const { agent } = signInAgent(() => false, () => true);
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      assert.equal((only(state.callbacks) as OpenSignIn).sources[0]!.mode, 'reconnect');
    });

    it('an answer that leaves a source out raises SdkError, sends nothing, and the sign-in stays open', async () => {
      let connected = false;
      const { agent, calls } = signInAgent(() => connected);
      const audit = new MemoryAuditLog();
      const session = await start(agent, { audit });
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(state.callbacks);
      const turn = session.turn(state.turnId);
      await assert.rejects(turn.answer(cb.id, new SignInAnswer()), SdkError);
      await assert.rejects(turn.answer(cb.id, new SignInAnswer({ connected: ['other'] })), SdkError);
      await assert.rejects(turn.answer(cb.id, new AllowApproval()), SdkError);
      assert.equal(only(session.openCallbacks()).id, cb.id);
      assert.deepEqual(settledLines(audit, cb.id), []);
      assert.equal(await settledWithin(turn.result({ after: state }), 50), 'pending');
      connected = true;
      assert.ok((await turn.answer(cb.id, new SignInAnswer({ connected: ['gh'] }))) instanceof Answered);
      const done = await turn.result({ after: state });
      assertCompleted(done);
      assert.equal(done.text, 'agent saw: {"issues":3}');
      assert.equal(calls.length, 1);
    });

    it('an onSignIn handler leaving a source out raises SdkError in the waiting call', async () => {
      const { agent, calls } = signInAgent(() => false);
      const seen: SignInSourceRequest[][] = [];
      const session = await start(agent, { onSignIn: (_ctx, sources) => (seen.push([...sources]), new SignInAnswer({ connected: [] })) });
      await assert.rejects(session.run('go'), SdkError);
      assert.equal(seen.length, 1);
      assert.equal(only(session.openCallbacks()).type, 'sign-in');
      assert.equal(calls.length, 0);
    });

    it('a source said to be connected that still is not is reported to the agent; the tool does not run', async () => {
      const { agent, calls } = signInAgent(() => false);
      const session = await start(agent, { onSignIn: () => new SignInAnswer({ connected: ['gh'] }) });
      const state = await session.run('go');
      assertCompleted(state);
      assert.match(state.text, /GitHub is still not connected/);
      assert.equal(calls.length, 0);
    });

    it('a denied source is reported to the agent; the tool does not run', async () => {
      const { agent, calls } = signInAgent(() => false);
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      await session.turn(state.turnId).answer(state.callbacks[0]!.id, new SignInAnswer({ denied: ['gh'] }));
      const done = await session.turn(state.turnId).result({ after: state });
      assertCompleted(done);
      assert.match(done.text, /refused to connect GitHub/);
      assert.equal(calls.length, 0);
    });

    it('connected works and the tool runs', async () => {
      let connected = false;
      const { agent, calls } = signInAgent(() => connected);
      const session = await start(agent, {
        onSignIn: () => {
          connected = true;
          return new SignInAnswer({ connected: ['gh'] });
        },
      });
      const state = await session.run('go');
      assertCompleted(state);
      assert.equal(state.text, 'agent saw: {"issues":3}');
      assert.equal(calls.length, 1);
    });

    it('a slow isConnected check is work in progress, not a Blocked with nothing to answer', async () => {
      let connected = false;
      const { agent, calls } = signInAgent(async () => {
        await sleep(25);
        return connected;
      });
      const session = await start(agent);
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(state.callbacks, 'open sign-in');
      assert.ok(cb instanceof OpenSignIn);
      connected = true;
      await session.turn(state.turnId).answer(cb.id, new SignInAnswer({ connected: ['gh'] }));
      const done = await session.turn(state.turnId).result({ after: state });
      assertCompleted(done);
      assert.equal(calls.length, 1);
    });
  });

  describe('rule 15: approvals of subagents left running by an earlier turn are answered by a later turn\'s handler', () => {
    function deployAgent(extraRules: ReturnType<typeof PermissionRule>[], gate: Promise<void>) {
      const deploy = counted('deploy', z.object({ version: z.string() }), (a) => ({ version: a.version }));
      const prepare = counted('prepare', Empty, async () => {
        await gate;
        return {};
      });
      const ci = counted('check_ci', Empty, () => ({ status: 'green' }));
      const agent = new Agent({
        instructions: '', tools: [ci.tool],
        permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [allowRule('agents.spawn', 'client.prepare'), ...extraRules] }),
        subagents: [new Subagent({ name: 'deployer', tools: [prepare.tool, deploy.tool] })],
        model: scripted({
          main: [{ spawn: 'deployer', task: 'deploy v2' }, { say: 'started the deployer' }, { call: 'check_ci' }, { say: 'CI is {{last.status}}' }],
          deployer: [{ call: 'prepare' }, { call: 'deploy', input: { version: 'v2' } }, { say: 'deployed {{last.version}}' }],
        }),
      });
      return { agent, deploy, ci };
    }

    it("turn 1 completes without waiting; the deployer's ask stays open between turns; turn 2's handler answers it, naming the deployer's session and turn", async () => {
      const gate = deferred();
      const { agent, deploy } = deployAgent([allowRule('client.check_ci')], gate.promise);
      const seen: Array<{ tool: string; session: string; turn: string }> = [];
      const session = await start(agent, {
        onApproval: (ctx, request) => {
          seen.push({ tool: request.tool.id, session: ctx.session.id, turn: ctx.session.turnId });
          return new AllowApproval();
        },
      });
      const turn1 = await session.run('deploy v2 please');
      assertCompleted(turn1);
      assert.equal(turn1.text, 'started the deployer');
      const deployer = only(session.children);
      const deployerTurn = deployer.currentTurn!.id;
      gate.resolve();
      await waitForEvent(session, callbackOpenedFor('client.deploy'));
      await sleep(20);
      assert.deepEqual(seen, [], 'nothing waits, so no handler ran');
      assert.equal(only(session.openCallbacks()).sessionId, deployer.id);
      assert.deepEqual(deploy.calls, []);

      const turn2 = await session.run('is CI green?');
      assertCompleted(turn2);
      assert.equal(turn2.text, 'CI is green');
      assert.notEqual(turn2.turnId, turn1.turnId);
      assert.deepEqual(seen, [{ tool: 'client.deploy', session: deployer.id, turn: deployerTurn }]);
      assert.notEqual(deployerTurn, turn2.turnId);
      const deployed = await deployer.turn(deployerTurn).result();
      assertCompleted(deployed);
      assert.equal(deployed.text, 'deployed v2');
      assert.equal(deploy.calls.length, 1);
    });

    it("without a handler, turn 2's Blocked lists the deployer's approval from turn 1 with its session and turn", async () => {
      const gate = deferred();
      gate.resolve();
      const { agent, deploy, ci } = deployAgent([], gate.promise);
      const session = await start(agent);
      const turn1 = await session.run('deploy v2 please');
      assertCompleted(turn1);
      const deployer = only(session.children);
      const deployerTurn = deployer.currentTurn!.id;
      await waitForEvent(session, callbackOpenedFor('client.deploy'));

      const state = await session.run('is CI green?');
      assertBlocked(state);
      assert.equal(state.turnId, session.currentTurn!.id);
      assert.notEqual(state.turnId, turn1.turnId);
      const open = approvals(state);
      assert.equal(open.length, 2);
      const old = only(open.filter((c) => c.request.tool.id === 'client.deploy'));
      assert.equal(old.sessionId, deployer.id);
      assert.equal(old.turnId, deployerTurn);
      assert.equal(old.agent, 'deployer');
      const mine = only(open.filter((c) => c.request.tool.id === 'client.check_ci'));
      assert.equal(mine.sessionId, session.id);
      assert.equal(mine.turnId, state.turnId);

      const turn = session.turn(state.turnId);
      const a = await turn.answer(old.id, new AllowApproval());
      assert.ok(a instanceof Answered);
      assert.equal(a.sessionId, deployer.id);
      assert.ok((await turn.answer(mine.id, new AllowApproval())) instanceof Answered);
      const done = await turn.result({ after: state });
      assertCompleted(done);
      assert.equal(done.text, 'CI is green');
      assertCompleted(await deployer.turn(deployerTurn).result());
      assert.equal(deploy.calls.length, 1);
      assert.equal(ci.calls.length, 1);
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('concurrency: one callback, many answers', () => {
  afterEach(cancelSessions);

  function payAgent() {
    const pay = counted('pay', z.object({ amount: z.number() }), (a) => ({ paid: a.amount }));
    const agent = new Agent({
      instructions: '', tools: [pay.tool], permissionMode: 'ask',
      model: scripted({ main: [{ call: 'pay', input: { amount: 10 } }, { say: 'result {{last}}' }] }),
    });
    return { agent, pay };
  }

  function tally(results: AnswerResult[]): { answered: number; settled: number; other: number } {
    return {
      answered: results.filter((r) => r instanceof Answered).length,
      settled: results.filter((r) => r instanceof AlreadySettled).length,
      other: results.filter((r) => !(r instanceof Answered) && !(r instanceof AlreadySettled)).length,
    };
  }

  for (const n of [2, 10]) {
    it(`${n} concurrent turn.answer calls: exactly one Answered, the rest AlreadySettled; the tool runs once`, async () => {
      const { agent, pay } = payAgent();
      const audit = new MemoryAuditLog();
      const session = await start(agent, { audit });
      const state = await session.run('pay');
      assertBlocked(state);
      const cb = only(state.callbacks);
      // Separate Turn objects, as separate clients would hold.
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) => session.turn(state.turnId).answer(cb.id, i % 3 === 2 ? new DenyApproval() : new AllowApproval())),
      );
      assert.deepEqual(tally(results), { answered: 1, settled: n - 1, other: 0 });
      const done = await session.turn(state.turnId).result({ after: state });
      assertCompleted(done);
      assert.equal(pay.calls.length, 1);
      assert.equal(settledLines(audit, cb.id).length, 1);
    });
  }

  it("concurrent answers to a subagent's callback: one Answered; the subagent's own turn says AlreadySettled, the root NotFound", async () => {
    const pay = counted('pay', z.object({ amount: z.number() }));
    const agent = new Agent({
      instructions: '', permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [allowRule('agents.spawn')] }),
      subagents: [new Subagent({ name: 'payer', tools: [pay.tool] })],
      model: scripted({ main: [{ spawn: 'payer', task: 'p' }, { wait: 'all' }, { say: 'done' }], payer: [{ call: 'pay', input: { amount: 1 } }, { say: 'paid' }] }),
    });
    const session = await start(agent);
    const state = await session.run('go');
    assertBlocked(state);
    const cb = only(state.callbacks);
    const sub = only(session.children);
    const results = await Promise.all([
      sub.turn(cb.turnId).answer(cb.id, new AllowApproval()),
      sub.turn(cb.turnId).answer(cb.id, new AllowApproval()),
      session.turn(state.turnId).answer(cb.id, new AllowApproval()),
    ]);
    assert.deepEqual(results.map((r) => r.type), ['answered', 'already-settled', 'not-found']);
    assertCompleted(await session.turn(state.turnId).result({ after: state }));
    assert.equal(pay.calls.length, 1);
  });

  it('a person answering while the handler is still deciding wins; the late handler answer is dropped', async () => {
    const { agent, pay } = payAgent();
    const audit = new MemoryAuditLog();
    const entered = deferred();
    const release = deferred();
    const session = await start(agent, {
      audit,
      onApproval: async () => {
        entered.resolve();
        await release.promise;
        return new DenyApproval();
      },
    });
    const running = session.run('pay');
    await entered.promise;
    const cb = only(session.openCallbacks());
    const turn = session.currentTurn!;
    const results = await Promise.all([turn.answer(cb.id, new AllowApproval()), turn.answer(cb.id, new AllowApproval())]);
    assert.deepEqual(tally(results), { answered: 1, settled: 1, other: 0 });
    release.resolve();
    const state = await running;
    assertCompleted(state);
    assert.equal(state.text, 'result {"paid":10}');
    assert.equal(pay.calls.length, 1);
    const lines = settledLines(audit, cb.id);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.answeredBy, 'person');
  });

  it('a handler answer racing a turn.answer: exactly one settles it, the tool runs once', async () => {
    for (let round = 0; round < 5; round++) {
      const { agent, pay } = payAgent();
      const audit = new MemoryAuditLog();
      const session = await start(agent, { audit, onApproval: () => new AllowApproval() });
      const person = (async () => {
        const ev = await waitForEvent(session, (e) => e.type === 'callback-opened');
        assert.ok(ev.type === 'callback-opened');
        return session.turn(ev.turnId).answer(ev.callback.id, new AllowApproval());
      })();
      const [state, answer] = await Promise.all([session.run('pay'), person]);
      assertCompleted(state);
      assert.equal(pay.calls.length, 1);
      const cbId = only(audit.entries.filter((e) => e.event === 'callback-opened')).callback!;
      const lines = settledLines(audit, cbId);
      assert.equal(lines.length, 1);
      if (answer instanceof Answered) assert.equal(lines[0]!.answeredBy, 'person');
      else {
        assert.ok(answer instanceof AlreadySettled, answer.type);
        assert.equal(lines[0]!.answeredBy, 'handler');
      }
    }
  });

  it('two drivers at once (run and result) still settle each approval once and run the tool once', async () => {
    const { agent, pay } = payAgent();
    let offers = 0;
    const session = await start(agent, {
      onApproval: async () => {
        offers++;
        await sleep(10);
        return new AllowApproval();
      },
    });
    const running = session.run('pay');
    const other = session.currentTurn!.result();
    const [a, b] = await Promise.all([running, other]);
    assertCompleted(a);
    assertCompleted(b);
    assert.equal(pay.calls.length, 1);
    assert.equal(offers, 1, 'one approval is offered to the handler once, not once per waiting call');
  });
});

// ---------------------------------------------------------------------------------------------

describe('protected files: always asked by the protected-files hook, never for the session', () => {
  afterEach(cancelSessions);

  let tmp: string;
  beforeEach(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rules-protected-')));
    fs.writeFileSync(path.join(tmp, '.agentpolicy.jsonc'), '{ "version": 1 }\n');
    fs.writeFileSync(path.join(tmp, '.agents.jsonc'), '{ "agents": [] }\n');
    fs.mkdirSync(path.join(tmp, '.vscode'));
    fs.writeFileSync(path.join(tmp, '.vscode', 'settings.json'), '{}\n');
    fs.writeFileSync(path.join(tmp, 'draft.jsonc'), '{ "version": 1, "default": "allow" }\n');
  });
  afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const allowAll = () => new PermissionPolicy({ default: 'allow' });

  function fileAgent(call: { call: string; input: Record<string, unknown> }, policy: PermissionPolicy = allowAll()) {
    return new Agent({
      instructions: '', permissionPolicy: policy, builtins: new Builtins({ files: true, commands: true, subagents: false }),
      model: scripted({ main: [call, { say: 'result: {{last}}' }] }),
    });
  }

  const asked: Array<[string, { call: string; input: Record<string, unknown> }, string?]> = [
    ['write_file on .agentpolicy.jsonc', { call: 'write_file', input: { path: '.agentpolicy.jsonc', content: '{ "version": 1, "default": "allow" }' } }],
    ['write_file on ./.vscode/../.agents.jsonc', { call: 'write_file', input: { path: './.vscode/../.agents.jsonc', content: '{}' } }],
    ['delete_file on .agents.jsonc', { call: 'delete_file', input: { path: '.agents.jsonc' } }],
    ['rename_file from .agentpolicy.jsonc', { call: 'rename_file', input: { from: '.agentpolicy.jsonc', to: 'old.jsonc' } }],
    ['rename_file whose to is .agentpolicy.jsonc', { call: 'rename_file', input: { from: 'draft.jsonc', to: '.agentpolicy.jsonc', overwrite: true } }],
    ['delete_file of the folder holding the protected files', { call: 'delete_file', input: { path: '.', recursive: true } }],
    ['delete_file of .vscode (holding settings.json)', { call: 'delete_file', input: { path: '.vscode', recursive: true } }],
    ['run_command mentioning .agentpolicy.jsonc', { call: 'run_command', input: { command: 'echo "{}" > .agentpolicy.jsonc' } }],
    ['run_command mentioning .agents.jsonc', { call: 'run_command', input: { command: 'rm -f .agents.jsonc' } }],
  ];

  for (const [label, call] of asked) {
    it(`${label} is asked under an allow-everything policy, with request.hook "protected-files"`, async () => {
      const before = fs.readFileSync(path.join(tmp, '.agentpolicy.jsonc'), 'utf8');
      const session = await start(fileAgent(call), { workspaceFolder: tmp });
      const state = await session.run('go');
      assertBlocked(state);
      const cb = only(approvals(state));
      assert.equal(cb.request.hook, 'protected-files');
      assert.equal(cb.request.tool.id, `builtin.${call.call}`);
      assert.equal(cb.request.sessionAllowed, false);
      const turn = session.turn(state.turnId);
      assert.ok((await turn.answer(cb.id, new DenyApproval())) instanceof Answered);
      const done = await turn.result({ after: state });
      assertCompleted(done);
      assert.match(done.text, /denied/);
      assert.equal(fs.readFileSync(path.join(tmp, '.agentpolicy.jsonc'), 'utf8'), before);
      assert.ok(fs.existsSync(path.join(tmp, '.agents.jsonc')));
      assert.ok(fs.existsSync(path.join(tmp, '.vscode', 'settings.json')));
    });
  }

  it('a write through a symbolic link to .agentpolicy.jsonc is asked', async () => {
    fs.symlinkSync('.agentpolicy.jsonc', path.join(tmp, 'alias.jsonc'));
    const session = await start(fileAgent({ call: 'write_file', input: { path: 'alias.jsonc', content: 'x' } }), { workspaceFolder: tmp });
    const state = await session.run('go');
    assertBlocked(state);
    assert.equal(only(approvals(state)).request.hook, 'protected-files');
  });

  it('a file given in protectedFiles: deleting its folder is asked', async () => {
    fs.mkdirSync(path.join(tmp, 'pkg'));
    fs.writeFileSync(path.join(tmp, 'pkg', '.agents.jsonc'), '{}');
    const session = await start(fileAgent({ call: 'delete_file', input: { path: 'pkg', recursive: true } }), { workspaceFolder: tmp, protectedFiles: ['pkg/.agents.jsonc'] });
    const state = await session.run('go');
    assertBlocked(state);
    assert.equal(only(approvals(state)).request.hook, 'protected-files');
  });

  it('AllowApproval({ scope: "session" }) raises SdkError and sends nothing; AllowApproval() once writes the real file', async () => {
    const audit = new MemoryAuditLog();
    const content = '{ "version": 1, "default": "deny" }\n';
    const session = await start(fileAgent({ call: 'write_file', input: { path: '.agentpolicy.jsonc', content } }), { workspaceFolder: tmp, audit });
    const state = await session.run('go');
    assertBlocked(state);
    const cb = only(approvals(state));
    const turn = session.turn(state.turnId);
    await assert.rejects(turn.answer(cb.id, new AllowApproval({ scope: 'session' })), SdkError);
    assert.equal(only(session.openCallbacks()).id, cb.id);
    assert.deepEqual(settledLines(audit, cb.id), []);
    assert.equal(fs.readFileSync(path.join(tmp, '.agentpolicy.jsonc'), 'utf8'), '{ "version": 1 }\n');
    const opened = only(audit.entries.filter((e) => e.event === 'callback-opened'));
    assert.equal(opened.hook, 'protected-files');

    assert.ok((await turn.answer(cb.id, new AllowApproval())) instanceof Answered);
    const done = await turn.result({ after: state });
    assertCompleted(done);
    assert.equal(fs.readFileSync(path.join(tmp, '.agentpolicy.jsonc'), 'utf8'), content);
  });

  it('a handler answering with scope "session" raises SdkError in run() and writes nothing; every write is asked again', async () => {
    let scope: 'session' | 'once' = 'session';
    let asked = 0;
    const agent = new Agent({
      instructions: '', permissionPolicy: allowAll(), builtins: new Builtins({ files: true, subagents: false }),
      model: scripted({
        main: [
          { call: 'write_file', input: { path: '.agents.jsonc', content: 'one' } },
          { call: 'write_file', input: { path: '.agents.jsonc', content: 'one' } },
          { say: 'done' },
        ],
      }),
    });
    const session = await start(agent, {
      workspaceFolder: tmp,
      onApproval: (_c, r) => {
        asked++;
        assert.equal(r.hook, 'protected-files');
        return new AllowApproval({ scope });
      },
    });
    await assert.rejects(session.run('go'), SdkError);
    assert.equal(fs.readFileSync(path.join(tmp, '.agents.jsonc'), 'utf8'), '{ "agents": [] }\n');
    scope = 'once';
    assertCompleted(await session.currentTurn!.result());
    assert.equal(asked, 3, 'the same write is asked again: once is once');
    assert.equal(fs.readFileSync(path.join(tmp, '.agents.jsonc'), 'utf8'), 'one');
  });

  it('a deny rule still denies, without asking', async () => {
    const policy = new PermissionPolicy({
      default: 'allow',
      rules: [PermissionRule({ tools: ['builtin.write_file'], paths: ['.agentpolicy.jsonc'], decision: 'deny', reason: 'the policy file is read-only here' })],
    });
    const session = await start(fileAgent({ call: 'write_file', input: { path: '.agentpolicy.jsonc', content: 'x' } }, policy), {
      workspaceFolder: tmp, onApproval: () => assert.fail('a denied call is not asked'),
    });
    const state = await session.run('go');
    assertCompleted(state);
    assert.match(state.text, /the policy file is read-only here/);
    assert.equal(fs.readFileSync(path.join(tmp, '.agentpolicy.jsonc'), 'utf8'), '{ "version": 1 }\n');
  });

  it('reading it is allowed without asking', async () => {
    const session = await start(
      new Agent({
        instructions: '', permissionPolicy: allowAll(), builtins: new Builtins({ files: true, subagents: false }),
        model: scripted({ main: [{ call: 'read_file', input: { path: '.agentpolicy.jsonc' } }, { say: '{{last.content}}' }] }),
      }),
      { workspaceFolder: tmp, onApproval: () => assert.fail('reading is not asked') },
    );
    const state = await session.run('go');
    assertCompleted(state);
    assert.equal(state.text, '{ "version": 1 }\n');
  });

  it("a subagent's write is asked too, with ctx naming the subagent", async () => {
    const agent = new Agent({
      instructions: '', permissionPolicy: allowAll(),
      subagents: [new Subagent({ name: 'editor', builtins: new Builtins({ subagents: false, files: true }) })],
      model: scripted({
        main: [{ spawn: 'editor', task: 't' }, { wait: 'all' }, { say: '{{last.results.0.text}}' }],
        editor: [{ call: 'write_file', input: { path: '.agentpolicy.jsonc', content: 'sub' } }, { say: '{{last}}' }],
      }),
    });
    const seen: string[] = [];
    const session = await start(agent, {
      workspaceFolder: tmp,
      onApproval: (ctx, r) => {
        seen.push(`${ctx.session.agent}:${r.hook}`);
        return new DenyApproval();
      },
    });
    const state = await session.run('go');
    assertCompleted(state);
    assert.deepEqual(seen, ['editor:protected-files']);
    assert.match(state.text, /denied/);
  });
});

// ---------------------------------------------------------------------------------------------

describe('timeouts', () => {
  afterEach(cancelSessions);

  function slowAskAgent(onTimeout: 'deny' | 'keep') {
    const t = counted('pricey', Empty, () => ({ ran: true }));
    const agent = new Agent({
      instructions: '', tools: [t.tool],
      permissionPolicy: new PermissionPolicy({ default: 'allow', rules: [PermissionRule({ tools: ['client.pricey'], decision: 'ask', timeout: 0.2, onTimeout })] }),
      model: scripted({ main: [{ call: 'pricey' }, { say: 'model saw: {{last}}' }] }),
    });
    return { agent, t };
  }

  it('onTimeout deny: the call is denied after the timeout, the model is told it timed out, the audit says timeout', async () => {
    const { agent, t } = slowAskAgent('deny');
    const audit = new MemoryAuditLog();
    const session = await start(agent, { audit });
    const started = Date.now();
    const state = await session.run('go');
    assertBlocked(state);
    const cb = only(approvals(state));
    assert.equal(cb.request.timeout?.onTimeout, 'deny');
    const done = await session.turn(state.turnId).result({ after: state });
    const elapsed = Date.now() - started;
    assertCompleted(done);
    assert.ok(elapsed >= 190, `denied after ${elapsed} ms`);
    assert.match(done.text, /timed out/);
    const result = await waitForEvent(session, toolResultOf('client.pricey'));
    assert.ok(result.type === 'tool-result' && !result.ok && /timed out/.test(result.content));
    const line = only(settledLines(audit, cb.id));
    assert.equal(line.answeredBy, 'timeout');
    assert.equal(line.answer, 'deny');
    assert.equal(t.calls.length, 0);
    assert.ok((await session.turn(state.turnId).answer(cb.id, new AllowApproval())) instanceof AlreadySettled);
  });

  it('onTimeout deny while a handler keeps it open: the waiting result() ends with the denial', async () => {
    const { agent, t } = slowAskAgent('deny');
    const session = await start(agent, { onApproval: () => new KeepCallbackOpen() });
    const state = await session.run('go');
    assertBlocked(state);
    const done = await session.turn(state.turnId).result({ after: state });
    assertCompleted(done);
    assert.match(done.text, /timed out/);
    assert.equal(t.calls.length, 0);
  });

  it('onTimeout keep: the approval stays open after the timeout and can still be answered', async () => {
    const { agent, t } = slowAskAgent('keep');
    const audit = new MemoryAuditLog();
    const session = await start(agent, { audit });
    const state = await session.run('go');
    assertBlocked(state);
    const cb = only(approvals(state));
    assert.equal(cb.request.timeout?.onTimeout, 'keep');
    await waitForEvent(session, (e) => e.type === 'warning' && e.message.includes(cb.id));
    assert.equal(only(session.openCallbacks()).id, cb.id);
    const kept = only(settledLines(audit, cb.id));
    assert.deepEqual([kept.answeredBy, kept.answer], ['timeout', 'kept']);
    const turn = session.turn(state.turnId);
    assert.ok((await turn.answer(cb.id, new AllowApproval())) instanceof Answered);
    const done = await turn.result({ after: state });
    assertCompleted(done);
    assert.equal(t.calls.length, 1);
    const lines = settledLines(audit, cb.id);
    assert.deepEqual(lines.map((l) => [l.answeredBy, l.answer]), [['timeout', 'kept'], ['person', 'allow-once']]);
  });

  it('an approval answered before its timeout is not denied later', async () => {
    const { agent, t } = slowAskAgent('deny');
    const audit = new MemoryAuditLog();
    const session = await start(agent, { audit, onApproval: () => new AllowApproval() });
    assertCompleted(await session.run('go'));
    await sleep(250);
    assert.equal(t.calls.length, 1);
    const settled = audit.entries.filter((e) => e.event === 'callback-settled');
    assert.deepEqual(settled.map((l) => l.answeredBy), ['handler']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('audit: every decision is appended, before the tool runs', () => {
  afterEach(cancelSessions);

  it('allow, deny, ask → callback-opened and its settlement by the handler, in order, with digests', async () => {
    const audit = new MemoryAuditLog();
    const free = counted('free', Empty);
    const secret = counted('secret', Empty);
    const pricey = counted('pricey', Product);
    const agent = new Agent({
      instructions: '', tools: [free.tool, secret.tool, pricey.tool],
      permissionPolicy: new PermissionPolicy({
        default: 'ask',
        rules: [allowRule('client.free'), PermissionRule({ id: 'no-secrets', tools: ['client.secret'], decision: 'deny', reason: 'secret' })],
      }),
      model: scripted({ main: [{ call: 'free' }, { call: 'secret' }, { call: 'pricey', input: { product: 'atlas' } }, { say: 'done' }] }),
    });
    const session = await start(agent, { audit, onApproval: () => new AllowApproval() });
    const state = await session.run('go');
    assertCompleted(state);
    // (client.secret is denied outright, so a tools-hidden line says its model was not offered it: test/runtime/hiddenTools.test.ts.)
    const lines = audit.entries.filter((e) => e.event !== 'session-started' && e.event !== 'tools-hidden');
    assert.deepEqual(
      lines.map((e) => [e.event, e.tool, e.decision ?? e.answer, e.answeredBy]),
      [
        ['decision', 'client.free', 'allow', undefined],
        ['decision', 'client.secret', 'deny', undefined],
        ['callback-opened', 'client.pricey', 'ask', undefined],
        ['callback-settled', 'client.pricey', 'allow-once', 'handler'],
      ],
    );
    assert.equal(lines[1]!.reason, 'secret');
    assert.equal(lines[1]!.rule?.id, 'no-secrets');
    assert.equal(lines[0]!.rule?.index, 0);
    assert.equal(lines[2]!.callback, lines[3]!.callback);
    assert.equal(lines[2]!.inputDigest, inputDigest({ product: 'atlas' }));
    for (const l of lines) assert.equal(l.session, session.id);
    assert.equal(audit.entries[0]!.event, 'session-started');
  });

  it('a person (turn.answer) is logged as person; a session-allowed repeat as session', async () => {
    const audit = new MemoryAuditLog();
    const price = priceTool();
    const agent = new Agent({
      instructions: '', tools: [price.tool], permissionMode: 'ask',
      model: scripted({ main: [{ call: 'lookup_price', input: { product: 'atlas' } }, { call: 'lookup_price', input: { product: 'atlas' } }, { say: 'done' }] }),
    });
    const session = await start(agent, { audit });
    const state = await session.run('go');
    assertBlocked(state);
    const cb = only(approvals(state));
    await session.turn(state.turnId).answer(cb.id, new AllowApproval({ scope: 'session' }));
    assertCompleted(await session.turn(state.turnId).result({ after: state }));
    const settled = only(settledLines(audit, cb.id));
    assert.deepEqual([settled.answeredBy, settled.answer, settled.tool], ['person', 'allow-session', 'client.lookup_price']);
    const repeat = only(audit.entries.filter((e) => e.event === 'decision'));
    assert.deepEqual([repeat.tool, repeat.decision, repeat.answeredBy], ['client.lookup_price', 'allow', 'session']);
    assert.equal(repeat.inputDigest, inputDigest({ product: 'atlas' }));
    assert.equal(price.calls.length, 2);
  });

  it('the decision line is in the log when the tool runs (allow, asked, and session-allowed)', async () => {
    const audit = new MemoryAuditLog();
    const sawOwnLine: string[] = [];
    const probe = tool({ name: 'probe', description: 'checks the audit', inputSchema: z.object({ n: z.number() }) }, (input) => {
      const digest = inputDigest(input);
      const mine = audit.entries.filter((e) => e.tool === 'client.probe' && e.inputDigest === digest);
      const last = mine[mine.length - 1];
      assert.ok(last, `no audit line for probe ${input.n} when it ran`);
      sawOwnLine.push(`${input.n}:${last.event}:${last.decision ?? last.answer}:${last.answeredBy ?? '-'}`);
      return { n: input.n };
    });
    const agent = new Agent({
      instructions: '', tools: [probe],
      permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [PermissionRule({ tools: ['client.probe'], input: { '/n': { equals: 1 } }, decision: 'allow' })] }),
      model: scripted({ main: [{ call: 'probe', input: { n: 1 } }, { call: 'probe', input: { n: 2 } }, { call: 'probe', input: { n: 2 } }, { say: 'done' }] }),
    });
    const session = await start(agent, { audit, onApproval: () => new AllowApproval({ scope: 'session' }) });
    assertCompleted(await session.run('go'));
    assert.deepEqual(sawOwnLine, ['1:decision:allow:-', '2:callback-settled:allow-session:handler', '2:decision:allow:session']);
  });

  it('a decision the log cannot record stops the turn; its other asked call is closed and never runs', async () => {
    const pay = counted('pay', Empty);
    const free = counted('free', Empty);
    const agent = new Agent({
      instructions: '', tools: [pay.tool, free.tool],
      permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [allowRule('client.free')] }),
      model: scripted({ main: [{ parallel: [{ call: 'pay' }, { call: 'free' }] }, { say: 'done' }] }),
    });
    const sink = {
      write(e: AuditEntry) {
        if (e.event === 'decision') throw new Error('disk full');
      },
      close() {},
    };
    const session = await start(agent, { audit: sink });
    const state = await session.run('go');
    assert.ok(state instanceof Failed, state.type);
    assert.match(state.error, /disk full/);
    assert.deepEqual(session.openCallbacks(), [], 'no approval of an ended turn stays open');
    assert.deepEqual([pay.calls.length, free.calls.length], [0, 0]);
  });

  it('an answer the log cannot record raises in turn.answer, is not acted on, and the turn does not hang', async () => {
    const pay = counted('pay', Empty);
    const agent = new Agent({ instructions: '', tools: [pay.tool], permissionMode: 'ask', model: scripted({ main: [{ call: 'pay' }, { say: '{{last.error}}' }] }) });
    const sink = {
      write(e: AuditEntry) {
        if (e.event === 'callback-settled') throw new Error('disk full');
      },
      close() {},
    };
    const session = await start(agent, { audit: sink });
    const state = await session.run('go');
    assertBlocked(state);
    const turn = session.turn(state.turnId);
    await assert.rejects(turn.answer(state.callbacks[0]!.id, new AllowApproval()), /disk full/);
    const done = await turn.result({ after: state });
    assertCompleted(done);
    assert.match(done.text, /audit log could not record/);
    assert.equal(pay.calls.length, 0);
  });

  it('a sign-in and a cancelled approval are logged too; subagent sessions are logged with their parent', async () => {
    const audit = new MemoryAuditLog();
    const price = priceTool();
    const agent = new Agent({
      instructions: '', permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [allowRule('agents.spawn')] }),
      subagents: [new Subagent({ name: 'researcher', tools: [price.tool] })],
      model: scripted({ main: [{ spawn: 'researcher', task: 'atlas' }, { wait: 'all' }, { say: 'x' }], researcher: [{ call: 'lookup_price', input: { product: 'atlas' } }, { say: 'y' }] }),
    });
    const session = await start(agent, { audit });
    const state = await session.run('go');
    assertBlocked(state);
    const sub = only(session.children);
    const cb = only(state.callbacks);
    assert.ok(audit.entries.some((e) => e.event === 'session-started' && e.session === sub.id && e.parentSession === session.id && e.agent === 'researcher'));
    await session.cancel();
    const closed = only(settledLines(audit, cb.id));
    assert.deepEqual([closed.answer, closed.answeredBy, closed.session], ['closed', 'cancel', sub.id]);
    assert.ok(audit.entries.some((e) => e.event === 'session-ended' && e.session === session.id));
    assert.equal(price.calls.length, 0);
  });
});
