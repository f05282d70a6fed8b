// The audit lines of a response's parallel calls are written together (tree.ts, batchAudit):
// no tool runs before its line is written, nobody is asked about a call whose line is not, and a
// batch that cannot be written runs none of its tools and fails the turn, as a failed line did.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { z } from 'zod';
import { Agent, PermissionPolicy, PermissionRule } from '../../src/runtime/agents/agent.js';
import { AllowApproval, Blocked, Completed, Failed } from '../../src/runtime/tree/answers.js';
import type { AuditEntry, AuditSink } from '../../src/runtime/audit/audit.js';
import { ScriptedModel } from '../../src/runtime/model/scripted.js';
import { tool } from '../../src/runtime/tools/tools.js';

/** A sink that records each write as it comes: one entry, or a batch of them. */
class RecordingSink implements AuditSink {
  readonly writes: AuditEntry[][] = [];
  failBatches = false;
  write(entry: AuditEntry): void {
    this.writes.push([structuredClone(entry)]);
  }
  writeAll(entries: readonly AuditEntry[]): void {
    if (this.failBatches && entries.length > 0) throw new Error('disk full');
    this.writes.push(entries.map((e) => structuredClone(e)));
  }
  get written(): AuditEntry[] {
    return this.writes.flat();
  }
  close(): void {}
}

/** One response of `verdicts.length` parallel calls, each of a tool the policy allows, asks or denies; then an answer. */
function session(verdicts: readonly ('allow' | 'ask' | 'deny')[], audit: AuditSink) {
  const ran: { i: number; lineWritten: boolean }[] = [];
  const sink = audit as RecordingSink;
  // An allowed call's line is its decision; an asked one's, the callback-opened line (then its settled one).
  const lineOf = (i: number) => sink.written.some((e) => (e.event === 'decision' || e.event === 'callback-opened') && e.summary === JSON.stringify({ i }));
  const run = (input: { i: number }) => {
    ran.push({ i: input.i, lineWritten: lineOf(input.i) });
    return { ok: true };
  };
  const tools = (['allow', 'ask', 'deny'] as const).map((d) => tool({ name: d, description: d, inputSchema: z.object({ i: z.number() }) }, run));
  const agent = new Agent({
    model: new ScriptedModel({ agents: { main: [{ parallel: verdicts.map((d, i) => ({ call: d, input: { i } })) }, { say: 'done' }] } }),
    instructions: '',
    tools,
    permissionPolicy: new PermissionPolicy({ rules: (['allow', 'ask', 'deny'] as const).map((d) => PermissionRule({ tools: [`client.${d}`], decision: d })) }),
  });
  return { agent, ran };
}

describe('audit lines of parallel calls, written together', () => {
  it('writes a response\'s decisions in one batch, and each tool runs after its line is written', async () => {
    const sink = new RecordingSink();
    const { agent, ran } = session(Array.from({ length: 20 }, () => 'allow' as const), sink);
    const s = await agent.startSession({ audit: sink });
    const state = await s.run('go');
    assert.ok(state instanceof Completed, state.type);
    const batch = sink.writes.find((w) => w.some((e) => e.event === 'decision'))!;
    assert.deepEqual(batch.map((e) => e.summary), Array.from({ length: 20 }, (_, i) => JSON.stringify({ i })));
    assert.deepEqual(ran.map((r) => r.i), Array.from({ length: 20 }, (_, i) => i), 'the tools start in the order of the calls');
    assert.ok(ran.every((r) => r.lineWritten));
    await s.cancel();
  });

  it('property: whatever the mix of allowed, asked and denied calls, no tool runs and no one is asked before the line is written', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('allow', 'ask', 'deny'), { minLength: 1, maxLength: 12 }), async (verdicts) => {
        const sink = new RecordingSink();
        const { agent, ran } = session(verdicts, sink);
        const s = await agent.startSession({ audit: sink });
        let state = await s.run('go');
        if (state instanceof Blocked) {
          // Each ask's callback-opened line is written before it is listed as open.
          for (const cb of state.callbacks) assert.ok(sink.written.some((e) => e.event === 'callback-opened' && e.callback === cb.id), cb.id);
          const turn = s.turn(state.turnId);
          for (const cb of state.callbacks) await turn.answer(cb.id, new AllowApproval());
          state = await turn.result({ after: state });
        }
        assert.ok(state instanceof Completed, state.type);
        const expected = verdicts.flatMap((d, i) => (d === 'deny' ? [] : [i]));
        assert.deepEqual([...ran.map((r) => r.i)].sort((a, b) => a - b), expected);
        assert.ok(ran.every((r) => r.lineWritten), JSON.stringify(ran));
        await s.cancel();
      }),
      { numRuns: 40 },
    );
  });

  it('a batch that cannot be written runs none of its tools, asks no one, and fails the turn', async () => {
    for (const verdicts of [['allow', 'allow', 'allow'], ['allow', 'ask'], ['ask'], ['deny', 'deny']] as const) {
      const sink = new RecordingSink();
      sink.failBatches = true;
      const { agent, ran } = session(verdicts, sink);
      const s = await agent.startSession({ audit: sink });
      const state = await s.run('go');
      assert.ok(state instanceof Failed, `${verdicts.join(',')}: ${state.type}`);
      assert.match(state.error, /disk full/);
      assert.deepEqual(ran, [], verdicts.join(','));
      await s.cancel();
    }
  });
});
