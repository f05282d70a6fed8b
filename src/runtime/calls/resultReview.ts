// Result review: a call decided by a rule with `"review": "result"` runs, and its result waits
// for a person (a result-review callback, Pass / Withhold) before the model sees it. Fetched pages
// and MCP results may carry instructions meant for the model; a person reads them first. Until a
// Pass the model gets nothing of the result: a Withhold, a timeout with onTimeout deny, a cancelled
// turn or session all give it only a note that the result was withheld. The audit log records the
// result's digest, never its content.
// Imports answers.ts, audit.ts, callbacks.ts, tree.ts (for newId) and types only.
import { hash } from 'node:crypto';
import type { PolicyDecision } from '../../policy/policy.js';
import { OpenResultReview, type ResultReviewRequest } from '../tree/answers.js';
import { truncate } from '../audit/audit.js';
import { inputDigest, summarizeInput } from '../audit/auditSummary.js';
import { openCallback } from '../tree/callbacks.js';
import { newId, type SessionScope, type Tree } from '../tree/tree.js';
import type { TurnCore } from '../tree/turn.js';
import type { RuntimeTool } from '../tools/tools.js';

/** How much of a held result the callback shows inline (a notification, a tooltip); the whole result is in `request.result`. */
export const RESULT_PREVIEW_CHARS = 2000;

/** 'sha256:' + hex of the result text, as the audit log names a result. */
export function resultDigest(result: string): string {
  return `sha256:${hash('sha256', result, 'hex')}`;
}

/** What the model gets instead of a result no person passed: what happened, never the content. */
export function withheldResult(toolId: string, why: string): string {
  return JSON.stringify({ error: `withheld: the tool ran, but its result was withheld from you (${why}); nothing of its content is available`, tool: toolId });
}

/**
 * Holds `content`, the result of a call that ran, for a person. Resolves with what the model
 * gets: the content after a Pass, otherwise a withheld note.
 */
export async function reviewResult(
  tree: Tree, session: SessionScope, turn: TurnCore, tool: RuntimeTool, callName: string, input: unknown, ok: boolean, content: string, decision: PolicyDecision,
): Promise<{ passed: boolean; content: string }> {
  // A turn that ended while the tool ran has no one to give the result to.
  if (turn.state !== 'running') return withheld(tool.id, 'the turn ended before anyone reviewed it');
  const summary = summarizeInput(input);
  const timeoutSeconds = decision.ask?.timeout;
  const onTimeout = decision.ask?.onTimeout ?? 'deny';
  const request: ResultReviewRequest = {
    tool: { id: tool.id, name: callName, kind: tool.kind },
    title: `${session.agentName} ran ${tool.id}: ${summary}; review its result before the agent sees it`,
    input, summary, ok, result: content,
    preview: truncate(content, RESULT_PREVIEW_CHARS),
    chars: content.length,
    digest: resultDigest(content),
    decision,
    ...(timeoutSeconds !== undefined ? { timeout: { at: Date.now() + timeoutSeconds * 1000, onTimeout } } : {}),
  };
  const callback = new OpenResultReview(newId('cb'), session.id, turn.id, session.agentName, Date.now(), request);
  tree.audit({
    event: 'callback-opened', session: session.id, turn: turn.id, agent: session.agentName, tool: tool.id,
    inputDigest: inputDigest(input), summary, rule: decision.rule, callback: callback.id, review: 'result', resultDigest: request.digest,
  });
  const outcome = await openCallback(tree, callback, timeoutSeconds, onTimeout);
  if (outcome.kind === 'closed') return withheld(tool.id, `the review was closed: ${outcome.reason}`);
  const answer = outcome.answer;
  if (answer.type === 'result-review' && answer.action === 'pass') return { passed: true, content };
  if (outcome.by === 'timeout') return withheld(tool.id, `no one reviewed it within ${timeoutSeconds} s`);
  return withheld(tool.id, 'a person withheld it after review');
}

function withheld(toolId: string, why: string): { passed: false; content: string } {
  return { passed: false, content: withheldResult(toolId, why) };
}
