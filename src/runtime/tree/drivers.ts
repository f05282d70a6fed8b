// Drivers: handlers run only inside a pending `session.run()` or `turn.result()`, the driver.
// Every turn runs as its own async loop; a call that must be asked opens a callback and awaits
// its settlement. A driver offers each open callback of its session's subtree to its handler
// once, and returns the turn's state when it ends, or `Blocked` once the tree is quiet (no model
// call or tool in flight) and some callback is left open.
// Imports answers.ts, callbacks.ts and types only (tree, turn, session options).
import { Blocked, type OpenCallback, type TurnState } from './answers.js';
import { checkAnswer } from './callbacks.js';
import type { ApprovalHandler, CallbackContext, ElicitationHandler, ResultReviewHandler, SignInHandler } from './sessionOptions.js';
import type { Tree } from './tree.js';
import type { TurnCore } from './turn.js';

const HANDLER_NAME = { approval: 'onApproval', 'sign-in': 'onSignIn', elicitation: 'onElicitation', 'result-review': 'onResultReview' } as const;

/** Waits for `turn`, running the handlers for open callbacks of the subtree of the session `sessionId`. */
export async function drive(tree: Tree, sessionId: string, turn: TurnCore, after: Blocked | undefined): Promise<TurnState> {
  const driver = tree.nextDriverId();
  if (after) {
    // The same Blocked again is no news: wait for a later change.
    while (turn.state === 'running' && tree.version === after.version) await tree.nextWake();
  }
  for (;;) {
    const seen = tree.driverWakes;
    const final = turn.finalState;
    if (final) return final;
    if (await offerToHandlers(tree, sessionId, driver)) continue;
    if (await tree.quiet()) {
      const settled = turn.finalState;
      if (settled) return settled;
      if (hasUnoffered(tree, sessionId, driver)) continue;
      return new Blocked(turn.id, tree.openCallbacks(sessionId), tree.version);
    }
    await Promise.race([tree.driverWokenSince(seen), turn.done]);
  }
}

function hasUnoffered(tree: Tree, sessionId: string, driver: number): boolean {
  for (const r of tree.callbacks.values()) {
    if (r.open && !r.offeredBy.has(driver) && handlerFor(tree, r.callback) && tree.inSubtree(r.callback.sessionId, sessionId)) return true;
  }
  return false;
}

function handlerFor(tree: Tree, callback: OpenCallback): ApprovalHandler | SignInHandler | ElicitationHandler | ResultReviewHandler | undefined {
  if (callback.type === 'approval') return tree.options.onApproval;
  if (callback.type === 'result-review') return tree.options.onResultReview;
  return callback.type === 'sign-in' ? tree.options.onSignIn : tree.options.onElicitation;
}

/** Offers each open callback not yet offered by this driver to its handler. True if any was offered. */
async function offerToHandlers(tree: Tree, sessionId: string, driver: number): Promise<boolean> {
  let offered = false;
  for (const record of [...tree.callbacks.values()]) {
    const handler = handlerFor(tree, record.callback);
    if (!record.open || !handler || record.offeredBy.has(driver) || !tree.inSubtree(record.callback.sessionId, sessionId)) continue;
    record.offeredBy.add(driver);
    // Another waiting call's handler is deciding it: one approval is put to the handler once at a time.
    if (record.handling) continue;
    offered = true;
    const callback = record.callback;
    const ctx: CallbackContext = { session: { id: callback.sessionId, turnId: callback.turnId, agent: callback.agent }, callback };
    // A throwing handler or a bad return raises in this waiting call; the callback stays open.
    // While it decides, the tree is not quiet: other waiting calls wait for its answer rather than return Blocked.
    record.handling = true;
    let returned: unknown;
    try {
      returned = await tree.track(async () =>
        callback.type === 'approval' ? await (handler as ApprovalHandler)(ctx, callback.request)
          : callback.type === 'sign-in' ? await (handler as SignInHandler)(ctx, callback.sources)
          : callback.type === 'result-review' ? await (handler as ResultReviewHandler)(ctx, callback.request)
          : await (handler as ElicitationHandler)(ctx, callback.request),
      );
    } finally {
      record.handling = false;
    }
    if (isKeep(returned)) continue;
    const answer = checkAnswer(tree, callback, returned, HANDLER_NAME[callback.type]);
    const unrecorded = record.open ? record.settle({ kind: 'answer', answer, by: 'handler' }) : undefined;
    if (unrecorded !== undefined) throw unrecorded;
  }
  return offered;
}

function isKeep(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'keep';
}
