// Grants beyond one call: time-limited grants lapse by the session's clock (a fake clock here),
// and grants of the parts of a compound command answer the same asking parts in any chain, and
// never a chain with any other asking part. In the store, in our sessions and in another agent's.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import fc from 'fast-check';
import { z } from 'zod';
import {
  Agent, AllowApproval, MemoryAuditLog, PermissionPolicy, PermissionRule, ScriptedModel, SdkError, tool,
  type Blocked, type OpenApproval, type Session, type TurnState,
} from '../../src/entries/runtime.js';
import type { ToolCall } from '../../src/policy/rules/call.js';
import { canonicalJson } from '../../src/policy/rules/compile.js';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { ExternalSession, type ExternalAsk } from '../../src/runtime/host/externalSession.js';
import { grantableParts, SessionGrants, type GrantCall } from '../../src/runtime/tree/sessionGrants.js';
import type { RuntimeEvent } from '../../src/runtime/tree/events.js';
import { describeEvent } from '../../src/runtime/host/transcript.js';

const MINUTE = 60_000;

/** A clock a test moves by hand. */
function fakeClock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

const POLICY = {
  rules: [
    { id: 'status', commands: ['git status'], decision: 'allow' },
    { id: 'rm', commands: ['rm *'], decision: 'deny' },
    { id: 'quick', commands: ['make *'], decision: 'ask', remember: '15m' },
    { id: 'rest', commands: ['*'], decision: 'ask' },
  ],
};

function policyOf(policy: object): Policy {
  const layer = loadPolicyText(JSON.stringify({ version: 1, ...policy }), 'workspace.jsonc', 'workspace');
  assert.equal(layer.valid, true, JSON.stringify(layer.diagnostics));
  return new Policy({ workspace: layer });
}

function shellCall(policy: Policy, command: string, extra: Record<string, unknown> = {}): GrantCall {
  const input = { command, ...extra };
  const call: ToolCall = { tool: { id: 'client.sh' }, input, agent: 'main' };
  const decision = policy.decide(call, { workspaceFolder: os.tmpdir(), followSymlinks: false });
  return { toolId: 'client.sh', input, canonical: canonicalJson(input), decision, summary: command };
}

describe('session grants', () => {
  before(async () => {
    await initShellParser();
  });
  const policy = policyOf(POLICY);

  describe('time-limited grants (a fake clock)', () => {
    it('a 15-minute grant answers the same call until it lapses, and never after', () => {
      const clock = fakeClock();
      const grants = new SessionGrants(clock.now);
      const call = shellCall(policy, 'npm test');
      assert.equal(grants.answering(call), undefined);
      const [made] = grants.grant(call, 15 * 60);
      assert.equal(made!.expiresAt, clock.now() + 15 * MINUTE);
      clock.advance(15 * MINUTE - 1);
      assert.deepEqual(grants.answering(call)?.map((g) => g.id), [made!.id]);
      clock.advance(1);
      assert.equal(grants.answering(call), undefined);
      assert.deepEqual(grants.list(), [], 'a lapsed grant is no longer listed');
    });

    it('a session grant has no end; another input is not answered', () => {
      const clock = fakeClock();
      const grants = new SessionGrants(clock.now);
      grants.grant(shellCall(policy, 'npm test'), undefined);
      clock.advance(1000 * 24 * 60 * MINUTE);
      assert.ok(grants.answering(shellCall(policy, 'npm test')));
      assert.equal(grants.answering(shellCall(policy, 'npm test --watch')), undefined);
      assert.equal(grants.answering(shellCall(policy, 'npm test', { cwd: 'sub' })), undefined);
    });

    it('a grant is not honoured for an ask that may not be remembered that long now', () => {
      const grants = new SessionGrants(fakeClock().now);
      const hour = shellCall(policy, 'make all');
      // Given under a policy that allowed an hour; the rule now says 15m.
      const wider = { ...hour, decision: { ...hour.decision, ask: { onTimeout: 'deny' as const, remember: '1h' as const } } };
      grants.grant(wider, 3600);
      assert.ok(grants.answering(wider));
      assert.equal(grants.answering(hour), undefined, 'remember: 15m takes no 1-hour grant');
      assert.equal(grants.answering({ ...hour, decision: { ...hour.decision, ask: { onTimeout: 'deny', remember: 'never' } } }), undefined);
      assert.equal(grants.answering({ ...wider, decision: { ...wider.decision, lowered: true } }), undefined, 'nor an untrusted workspace\'s lowered allow');
    });

    it('a revoked grant no longer answers; revoking it again says so', () => {
      const grants = new SessionGrants(fakeClock().now);
      const [made] = grants.grant(shellCall(policy, 'npm test'), 900);
      assert.equal(grants.revoke(made!.id)?.id, made!.id);
      assert.equal(grants.answering(shellCall(policy, 'npm test')), undefined);
      assert.equal(grants.revoke(made!.id), undefined);
    });

    it('property: a grant is honoured before its expiry and never after', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 24 * 3600 }), fc.integer({ min: 0, max: 2 * 24 * 3600 * 1000 }), fc.boolean(), (seconds, later, session) => {
          const clock = fakeClock();
          const grants = new SessionGrants(clock.now);
          const call = shellCall(policy, 'npm test');
          assert.equal(grants.grant(call, session ? undefined : seconds).length, 1);
          clock.advance(later);
          const answered = grants.answering(call) !== undefined;
          assert.equal(answered, session || later < seconds * 1000);
          assert.equal(grants.list().length, answered ? 1 : 0);
        }),
        { numRuns: 300 },
      );
    });
  });

  describe('one-prefix grants: the parts of a compound command that asked', () => {
    it('granting `npm test && git push` answers the same parts in any order and chain, with parts the rules allow', () => {
      const grants = new SessionGrants(fakeClock().now);
      const made = grants.grant(shellCall(policy, 'npm test && git push'), undefined);
      assert.deepEqual(made.map((g) => [g.covers, g.label]), [['part', 'npm test'], ['part', 'git push']]);
      for (const command of ['git push && npm test', 'npm test; git push', 'npm test', 'git push', 'git status && git push', 'npm   test && git  push']) {
        assert.ok(grants.answering(shellCall(policy, command)), command);
      }
      for (const command of ['npm test && git push --force', 'npm run build && git push', 'git push origin', 'npm test && make all']) {
        assert.equal(grants.answering(shellCall(policy, command)), undefined, command);
      }
    });

    it('only parts that asked are granted: an allowed part needs none and a denied call is never granted parts', () => {
      const grants = new SessionGrants(fakeClock().now);
      const made = grants.grant(shellCall(policy, 'git status && npm test'), undefined);
      assert.deepEqual(made.filter((g) => g.covers === 'part').map((g) => g.label), ['npm test']);
      assert.equal(grantableParts(shellCall(policy, 'npm test && rm -rf x')), undefined);
    });

    it('no part grants where a part says less than it does (writes to a file, pipes, input redirects, text that cannot be parsed)', () => {
      for (const command of ['npm test && echo x > out.txt', 'make all | bash', 'npm test && bash < script.sh', 'npm test && cat <<EOF\nx\nEOF', 'npm test && $X']) {
        assert.equal(grantableParts(shellCall(policy, command)), undefined, command);
        const grants = new SessionGrants(fakeClock().now);
        const made = grants.grant(shellCall(policy, command), undefined);
        assert.deepEqual(made.map((g) => g.covers), ['call'], command);
      }
    });

    it('a part grant holds with the rest of the input the same (another cwd asks)', () => {
      const grants = new SessionGrants(fakeClock().now);
      grants.grant(shellCall(policy, 'npm test && git push', { cwd: 'a' }), undefined);
      assert.ok(grants.answering(shellCall(policy, 'git push && npm test', { cwd: 'a' })));
      assert.equal(grants.answering(shellCall(policy, 'git push && npm test', { cwd: 'b' })), undefined);
    });

    it('part grants lapse with their grant', () => {
      const clock = fakeClock();
      const grants = new SessionGrants(clock.now);
      grants.grant(shellCall(policy, 'npm test && git push'), 900);
      assert.ok(grants.answering(shellCall(policy, 'git push && npm test')));
      clock.advance(15 * MINUTE);
      assert.equal(grants.answering(shellCall(policy, 'git push && npm test')), undefined);
    });

    it('property: a part grant never makes a call with an un-granted asking part pass', () => {
      const words = ['npm test', 'git push', 'git status', 'make all', 'rm x', 'ls', 'cat a', 'echo b > f', 'curl y'];
      const chain = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }).chain((cmds) =>
        fc.array(fc.constantFrom(' && ', '; ', ' || ', ' | '), { minLength: cmds.length - 1, maxLength: cmds.length - 1 }).map((ops) => cmds.map((c, i) => (i === 0 ? c : `${ops[i - 1]}${c}`)).join('')));
      fc.assert(
        fc.property(fc.array(chain, { maxLength: 4 }), chain, (given, asked) => {
          const grants = new SessionGrants(fakeClock().now);
          const grantedParts = new Set<string>();
          const grantedCalls = new Set<string>();
          for (const command of given) {
            const call = shellCall(policy, command);
            if (call.decision.decision !== 'ask') continue;
            grants.grant(call, undefined);
            grantedCalls.add(call.canonical);
            for (const p of grantableParts(call)?.asking ?? []) grantedParts.add(p.part);
          }
          const call = shellCall(policy, asked);
          const answered = grants.answering(call);
          if (answered === undefined) return;
          assert.equal(call.decision.decision, 'ask');
          if (grantedCalls.has(call.canonical)) return;
          // A call of one command lists no parts: it is its own part, shown as written (these are plain).
          const parts = call.decision.parts ?? [{ part: asked, decision: call.decision.decision, note: undefined }];
          const asking = parts.filter((p) => p.decision === 'ask');
          assert.ok(asking.length > 0, asked);
          for (const p of asking) {
            assert.ok(grantedParts.has(p.part), `${asked}: part ${p.part} was never granted`);
            assert.equal(p.note, undefined);
          }
          assert.ok(!parts.some((p) => p.decision === 'deny'));
        }),
        { numRuns: 400 },
      );
    });
  });
});

// ---------------------------------------------------------------------------------------------
// In sessions: our own (toolCall.ts) and another agent's (externalSession.ts).

function assertBlocked(state: TurnState): asserts state is Blocked {
  assert.equal(state.type, 'blocked', JSON.stringify(state));
}

function onlyApproval(state: Blocked): OpenApproval {
  const approvals = state.callbacks.filter((c): c is OpenApproval => c.type === 'approval');
  assert.equal(approvals.length, 1);
  return approvals[0]!;
}

describe('grants in a session', () => {
  before(async () => {
    await initShellParser();
  });
  const sessions: Session[] = [];
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.cancel();
  });

  /** A client tool whose input has a `command`; each run moves the fake clock on by `step`. */
  function shTool(clock: ReturnType<typeof fakeClock>, step: number): { tool: ReturnType<typeof tool>; ran: string[] } {
    const ran: string[] = [];
    return {
      ran,
      tool: tool({ name: 'sh', description: 'runs a command', inputSchema: z.object({ command: z.string() }) }, ({ command }) => {
        ran.push(command);
        clock.advance(step);
        return 'ok';
      }),
    };
  }

  it('Allow for 15 Minutes: the same call is not asked again within 15 minutes, and is asked after; audited', async () => {
    const clock = fakeClock();
    const sh = shTool(clock, 10 * MINUTE);
    const audit = new MemoryAuditLog();
    const agent = new Agent({
      instructions: '', tools: [sh.tool],
      permissionPolicy: new PermissionPolicy({ rules: [PermissionRule({ tools: ['client.sh'], decision: 'ask' })] }),
      model: new ScriptedModel({ agents: { main: [1, 2, 3].map(() => ({ call: 'sh', input: { command: 'npm test' } })).concat([{ say: 'done' } as never]) } }),
    });
    const asked: number[] = [];
    const session = await agent.startSession({
      audit, clock: clock.now,
      onApproval: (_ctx, request) => {
        asked.push(clock.now());
        assert.deepEqual([request.longestGrant, request.sessionAllowed], ['session', true]);
        return new AllowApproval({ scope: 'duration', seconds: 900 });
      },
    });
    sessions.push(session);
    const start = clock.now();
    assert.equal((await session.run('go')).type, 'completed');
    // Asked at 0, answered by the grant at 10 min, asked again at 20 min (the grant lapsed at 15).
    assert.deepEqual(asked.map((t) => (t - start) / MINUTE), [0, 20]);
    assert.equal(sh.ran.length, 3);
    const settled = audit.entries.filter((e) => e.event === 'callback-settled');
    assert.deepEqual(settled.map((e) => [e.answer, e.grantSeconds]), [['allow-duration', 900], ['allow-duration', 900]]);
    const byGrant = audit.entries.filter((e) => e.event === 'decision' && e.answeredBy === 'session');
    assert.deepEqual(byGrant.map((e) => e.answer), ['allow-duration']);
    assert.equal(session.grants().length, 1, 'the second grant is in force');
    // The transcript names the grant's end, not "(session)": the call at 10 min ran under the grant of minute 0.
    const treeEvents = (session as unknown as { tree: { events: RuntimeEvent[] } }).tree.events;
    const lines = treeEvents.flatMap((e) => describeEvent(e, session.id)).filter((l) => l.includes(' -> '));
    const until = new Date(start + 15 * MINUTE);
    const hhmm = `${String(until.getHours()).padStart(2, '0')}:${String(until.getMinutes()).padStart(2, '0')}`;
    assert.deepEqual(lines.map((l) => l.replace(/^.* -> /, '')), ['ask (workspace <PermissionPolicy>:4)', `allow (grant until ${hhmm})`, 'ask (workspace <PermissionPolicy>:4)']);
  });

  it('remember: "15m" offers 15 minutes at most: a longer grant or the session is refused (SdkError, nothing sent), 15 minutes works', async () => {
    const clock = fakeClock();
    const sh = shTool(clock, 0);
    const agent = new Agent({
      instructions: '', tools: [sh.tool],
      permissionPolicy: new PermissionPolicy({ rules: [PermissionRule({ tools: ['client.sh'], decision: 'ask', remember: '15m' })] }),
      model: new ScriptedModel({ agents: { main: [{ call: 'sh', input: { command: 'make all' } }, { call: 'sh', input: { command: 'make all' } }, { say: 'done' }] } }),
    });
    const session = await agent.startSession({ clock: clock.now });
    sessions.push(session);
    const state = await session.run('go');
    assertBlocked(state);
    const cb = onlyApproval(state);
    assert.deepEqual([cb.request.longestGrant, cb.request.sessionAllowed], ['15m', false]);
    const turn = session.turn(state.turnId);
    await assert.rejects(turn.answer(cb.id, new AllowApproval({ scope: 'duration', seconds: 3600 })), SdkError);
    await assert.rejects(turn.answer(cb.id, new AllowApproval({ scope: 'session' })), SdkError);
    await assert.rejects(turn.answer(cb.id, new AllowApproval({ scope: 'duration', seconds: 0 })), SdkError);
    assert.equal(sh.ran.length, 0);
    assert.equal((await turn.answer(cb.id, new AllowApproval({ scope: 'duration', seconds: 900 }))).type, 'answered');
    assert.equal((await turn.result({ after: state })).type, 'completed');
    assert.equal(sh.ran.length, 2, 'the second call was answered by the grant');
  });

  it('Allow for Session on a compound command grants its asking parts: the same parts in another chain are not asked', async () => {
    const clock = fakeClock();
    const sh = shTool(clock, 0);
    const agent = new Agent({
      instructions: '', tools: [sh.tool],
      permissionPolicy: new PermissionPolicy({
        rules: [
          PermissionRule({ tools: ['client.sh'], commands: ['git status'], decision: 'allow' }),
          PermissionRule({ tools: ['client.sh'], decision: 'ask' }),
        ],
      }),
      model: new ScriptedModel({
        agents: {
          main: [
            { call: 'sh', input: { command: 'npm test && git push' } },
            { call: 'sh', input: { command: 'git push && git status && npm test' } },
            { call: 'sh', input: { command: 'npm test && git push --force' } },
            { say: 'done' },
          ],
        },
      }),
    });
    const asked: string[] = [];
    const session = await agent.startSession({
      clock: clock.now,
      onApproval: (_ctx, request) => (asked.push((request.input as { command: string }).command), new AllowApproval({ scope: 'session' })),
    });
    sessions.push(session);
    assert.equal((await session.run('go')).type, 'completed');
    assert.deepEqual(asked, ['npm test && git push', 'npm test && git push --force']);
    assert.equal(sh.ran.length, 3);
    assert.ok(session.grants().some(({ grant }) => grant.covers === 'part' && grant.label === 'git push --force'));
  });

  it('a grant revoked from the session is asked again; the revocation is audited', async () => {
    const clock = fakeClock();
    const sh = shTool(clock, 0);
    const audit = new MemoryAuditLog();
    const agent = new Agent({
      instructions: '', tools: [sh.tool], permissionMode: 'ask',
      model: new ScriptedModel({ agents: { main: [{ call: 'sh', input: { command: 'npm test' } }, { say: 'one' }, { call: 'sh', input: { command: 'npm test' } }, { say: 'two' }] } }),
    });
    let asked = 0;
    const session = await agent.startSession({ audit, clock: clock.now, onApproval: () => (asked++, new AllowApproval({ scope: 'duration', seconds: 3600 })) });
    sessions.push(session);
    await session.run('one');
    const grant = session.grants()[0]!.grant;
    assert.equal(session.revokeGrant(grant.id), true);
    assert.equal(session.revokeGrant(grant.id), false);
    await session.run('two');
    assert.equal(asked, 2);
    const revoked = audit.entries.filter((e) => e.event === 'grant-revoked');
    assert.deepEqual(revoked.map((e) => [e.session, e.tool, e.answer, e.grantSeconds]), [[session.id, 'client.sh', 'allow-duration', 3600]]);
  });
});

describe("grants in another agent's session (its hook asks)", () => {
  function ask(overrides: Partial<ExternalAsk> = {}): ExternalAsk {
    return { toolId: 'builtin.run_command', input: { command: 'npm test' }, rule: null, lowered: false, remember: 'session', onTimeout: 'deny', ...overrides };
  }

  it('a 15-minute grant answers the same call at once until it lapses', async () => {
    const clock = fakeClock();
    const session = new ExternalSession({ host: 'claude', hostLabel: 'Claude Code', hostSession: 's1' }, { opened: () => undefined, changed: () => undefined, clock: clock.now });
    const first = session.ask(ask());
    session.answer(first.callbackId!, new AllowApproval({ scope: 'duration', seconds: 900 }));
    assert.deepEqual(await first.answer, { answer: 'allow-duration', by: 'person' });
    clock.advance(14 * MINUTE);
    const second = session.ask(ask());
    assert.equal(second.callbackId, undefined);
    assert.deepEqual(await second.answer, { answer: 'allow-duration', by: 'session' });
    assert.equal(session.grants().length, 1);
    clock.advance(MINUTE);
    const third = session.ask(ask());
    assert.notEqual(third.callbackId, undefined, 'asked again once the grant lapsed');
    session.close(third.callbackId!, 'test over');
  });

  it('remember "1h" from the hook bounds the grant; parts granted from the hook\'s parts', async () => {
    const session = new ExternalSession({ host: 'claude', hostLabel: 'Claude Code', hostSession: 's2' }, { opened: () => undefined, changed: () => undefined });
    const parts = [
      { part: 'npm test', decision: 'ask' as const, rule: null },
      { part: 'git push', decision: 'ask' as const, rule: null },
    ];
    const first = session.ask(ask({ input: { command: 'npm test && git push' }, parts, remember: '1h' }));
    assert.throws(() => session.answer(first.callbackId!, new AllowApproval({ scope: 'session' })), SdkError);
    session.answer(first.callbackId!, new AllowApproval({ scope: 'duration', seconds: 3600 }));
    await first.answer;
    const again = session.ask(ask({ input: { command: 'git push && npm test' }, parts: [...parts].reverse(), remember: '1h' }));
    assert.equal(again.callbackId, undefined);
    const withNote = session.ask(ask({ input: { command: 'git push && npm test > f' }, parts: [parts[1]!, { ...parts[0]!, part: 'npm test >…', note: 'never allowed: it writes to a file' }], remember: '1h' }));
    assert.notEqual(withNote.callbackId, undefined);
    session.closeAll('test over');
  });
});

describe('an ask says which of its parts are granted already', () => {
  before(async () => {
    await initShellParser();
  });

  it('grantedParts lists the asking parts a grant in force covers', () => {
    const policy = policyOf(POLICY);
    const clock = fakeClock();
    const grants = new SessionGrants(clock.now);
    grants.grant(shellCall(policy, 'npm test && git push'), 900);
    assert.deepEqual(grants.grantedParts(shellCall(policy, 'git push && ls -la && npm run build')), ['git push']);
    assert.deepEqual(grants.grantedParts(shellCall(policy, 'npm run build')), [], 'one command: nothing to tell');
    clock.advance(15 * MINUTE);
    assert.deepEqual(grants.grantedParts(shellCall(policy, 'git push && ls -la')), [], 'a lapsed grant covers nothing');
  });
});
