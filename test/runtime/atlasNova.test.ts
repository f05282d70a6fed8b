// The seed's example "approvals across subagents": a main agent starts one researcher per
// product; each calls lookup_price; the answer is one sentence. Both forms the seed shows.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { z } from 'zod';
import {
  Agent, AllowApproval, Blocked, Builtins, Completed, KeepCallbackOpen, OpenApproval, ScriptedModel, Subagent, tool,
  type ApprovalRequest, type CallbackContext,
} from '../../src/entries/runtime.js';

const PRICES: Record<string, string> = { atlas: '1,200 EUR', nova: '850 EUR' };

function makeAgent(calls: string[]): Agent {
  const lookupPrice = tool(
    { name: 'lookup_price', description: 'Price of one product.', inputSchema: z.object({ product: z.string() }) },
    async (args) => {
      calls.push(args.product);
      return { price: PRICES[args.product.toLowerCase()] ?? 'unknown' };
    },
  );
  return new Agent({
    model: ScriptedModel.fromFile(path.join(__dirname, '..', 'fixtures', 'atlas-nova.scenario.jsonc')),
    permissionMode: 'ask',
    instructions: 'You answer questions about our products. Start one researcher per product, wait for every result, then answer in one sentence.',
    subagents: [
      new Subagent({
        name: 'researcher',
        description: 'Looks up one product and reports its price.',
        instructions: 'Call lookup_price once, then answer with the product name and its price.',
        tools: [lookupPrice],
        builtins: new Builtins({ subagents: false }),
      }),
    ],
  });
}

const ANSWER = 'The Atlas costs 1,200 EUR and the Nova costs 850 EUR.';

describe('the Atlas/Nova example (seed: approvals across subagents)', () => {
  it('one handler answers the whole tree and prints the one-sentence answer', async () => {
    const calls: string[] = [];
    const seen: Array<{ tool: string; session: string; root: boolean }> = [];
    const agent = makeAgent(calls);
    let rootId = '';
    const pricePolicy = (ctx: CallbackContext, request: ApprovalRequest) => {
      seen.push({ tool: request.tool.id, session: ctx.session.id, root: ctx.session.id === rootId });
      const allowed = ['agents.spawn', 'client.lookup_price'];
      return allowed.includes(request.tool.id) ? new AllowApproval() : new KeepCallbackOpen();
    };
    const session = await agent.startSession({ onApproval: pricePolicy });
    rootId = session.id;
    const printed: string[] = [];
    const state = await session.run('What do the Atlas and the Nova cost?');
    if (state instanceof Completed) printed.push(state.text);
    await session.cancel();

    assert.deepEqual(printed, [ANSWER]);
    // "The handler allowed the two agents.spawn calls of the parent and the lookup_price call of each researcher."
    assert.deepEqual(seen.filter((s) => s.tool === 'agents.spawn').map((s) => s.root), [true, true]);
    const lookups = seen.filter((s) => s.tool === 'client.lookup_price');
    assert.equal(lookups.length, 2);
    assert.ok(lookups.every((s) => !s.root), 'a researcher asks on its own session');
    assert.notEqual(lookups[0]!.session, lookups[1]!.session);
    assert.deepEqual(calls.sort(), ['atlas', 'nova']);
  });

  it('stepping through Blocked with turn.answer on the root turn prints what the seed prints', async () => {
    const calls: string[] = [];
    const agent = makeAgent(calls);
    const session = await agent.startSession();
    const out: string[] = [];
    let state = await session.run('What do the Atlas and the Nova cost?');
    let rounds = 0;
    while (state instanceof Blocked) {
      assert.ok(rounds++ < 10, 'the loop ends');
      const turn = session.turn(state.turnId);
      for (const callback of state.callbacks) {
        if (callback instanceof OpenApproval) {
          out.push(`${callback.sessionId === session.id ? 'True' : 'False'} ${callback.request.tool.id}`);
          const answered = await turn.answer(callback.id, new AllowApproval());
          assert.equal(answered.type, 'answered');
        }
      }
      state = await turn.result({ after: state });
    }
    assert.ok(state instanceof Completed);
    out.push(state.text);
    await session.cancel();

    // The seed prints one line per kind of approval; here each approval prints its own line,
    // so the two spawns and the two lookups each appear twice, in the seed's order.
    assert.deepEqual(out, ['True agents.spawn', 'True agents.spawn', 'False client.lookup_price', 'False client.lookup_price', ANSWER]);
    assert.deepEqual([...new Set(out)], ['True agents.spawn', 'False client.lookup_price', ANSWER]);
    assert.deepEqual(calls.sort(), ['atlas', 'nova']);
  });
});
