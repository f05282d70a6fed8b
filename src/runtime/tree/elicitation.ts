// Elicitation: a running tool (an MCP server) asks a person for structured input. Each request
// is an elicitation callback on the calling session and turn; the requests of one call are
// closed when that call ends, since nothing would receive their answers.
// Imports answers.ts, callbacks.ts, tree.ts (for newId) and types only (turn, tools).
import { OpenElicitation } from './answers.js';
import { openCallback } from './callbacks.js';
import { newId, type SessionScope, type Tree } from './tree.js';
import type { TurnCore } from './turn.js';
import type { ElicitationRequest, ElicitationResult, RuntimeTool } from '../tools/tools.js';

/** The requests for input one tool call made, so they can be closed when it ends. */
export interface CallElicitations {
  ids: Set<string>;
  pending: Set<Promise<unknown>>;
  /** The call ended: a later request is cancelled at once. */
  closed: boolean;
}

/**
 * A running tool asks a person for input: an elicitation callback on this session and turn.
 * While it is open the tree is waiting, not working, so a driver can return Blocked.
 */
export async function elicit(
  tree: Tree, session: SessionScope, turn: TurnCore, tool: RuntimeTool, request: ElicitationRequest, call: CallElicitations, signal: AbortSignal | undefined,
): Promise<ElicitationResult> {
  if (turn.state !== 'running' || call.closed || signal?.aborted) return { action: 'cancel' };
  const callback = new OpenElicitation(newId('cb'), session.id, turn.id, session.agentName, Date.now(), {
    source: { ...request.source }, message: request.message, requestedSchema: request.requestedSchema, toolId: tool.id,
  });
  call.ids.add(callback.id);
  const opened = openCallback(tree, callback, undefined, 'deny');
  const gaveUp = (): void => {
    tree.callbacks.get(callback.id)?.settle({ kind: 'closed', reason: 'the server stopped waiting for the answer' });
  };
  signal?.addEventListener('abort', gaveUp, { once: true });
  const waited = tree.waiting(opened);
  call.pending.add(waited);
  try {
    const outcome = await waited;
    if (outcome.kind === 'closed' || outcome.answer.type !== 'elicitation') return { action: 'cancel' };
    const answer = outcome.answer;
    return answer.action === 'accept' ? { action: 'accept', content: { ...answer.content } } : { action: answer.action };
  } finally {
    signal?.removeEventListener('abort', gaveUp);
    call.pending.delete(waited);
  }
}

export async function closeElicitations(tree: Tree, call: CallElicitations, reason: string): Promise<void> {
  call.closed = true;
  for (const id of call.ids) {
    const record = tree.callbacks.get(id);
    if (record?.open) record.settle({ kind: 'closed', reason });
  }
  // Their waits end before the call's own tracking does, so the tree's count of work in flight stays right.
  if (call.pending.size > 0) await Promise.allSettled([...call.pending]);
}
