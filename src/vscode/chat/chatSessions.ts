// Which session a chat request goes to: the conversation's session (found in the metadata of our
// earlier answers in `ChatContext.history`), a new one with the agent a `/agent` command names,
// or the workspace's first agent. Plain functions with no `vscode` import, tested in plain Node.
//
// The metadata comes back from VS Code's chat history (stored with the conversation): it is read
// field by field and only names a session; what that session may do is still the host's to say.
import { CHAT_TEXTS } from './chatStream.js';

export type Decision = 'allow' | 'ask' | 'deny';

/** The call a "Explain the last decision" or "Add a rule for this" followup is about. */
export interface LastCall {
  toolId: string;
  agent: string;
  decision: Decision;
  /** The input, when it is small enough to keep (Explain prefills it). */
  input?: unknown;
  /** The approval it opened, when it asked. */
  callbackId?: string;
}

/** What our answers carry in `ChatResult.metadata`. */
export interface ChatMetadata {
  sessionId: string;
  agent: string;
  lastCall?: LastCall;
}

/** An input kept in the metadata at most this long (as JSON); a longer one is left out. */
export const MAX_KEPT_INPUT = 2000;

const SESSION_ID = /^sess_[A-Za-z0-9]{1,40}$/;
const NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const TOOL_ID = /^[A-Za-z0-9_.\-/:]{1,300}$/;

/** The metadata of one of our answers, or undefined when it is not ours or not well formed. */
export function metadataOf(result: unknown): ChatMetadata | undefined {
  const metadata = (result as { metadata?: unknown } | undefined)?.metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const m = metadata as Record<string, unknown>;
  if (typeof m.sessionId !== 'string' || !SESSION_ID.test(m.sessionId) || typeof m.agent !== 'string' || !NAME.test(m.agent)) return undefined;
  const last = lastCallOf(m.lastCall);
  return { sessionId: m.sessionId, agent: m.agent, ...(last ? { lastCall: last } : {}) };
}

function lastCallOf(value: unknown): LastCall | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const c = value as Record<string, unknown>;
  if (typeof c.toolId !== 'string' || !TOOL_ID.test(c.toolId) || typeof c.agent !== 'string' || !NAME.test(c.agent)) return undefined;
  if (c.decision !== 'allow' && c.decision !== 'ask' && c.decision !== 'deny') return undefined;
  return {
    toolId: c.toolId, agent: c.agent, decision: c.decision,
    ...('input' in c ? { input: c.input } : {}),
    ...(typeof c.callbackId === 'string' && NAME.test(c.callbackId) ? { callbackId: c.callbackId } : {}),
  };
}

/** The metadata of the latest of our answers in the history that names a session (and, with `withCall`, a last call). */
export function latestMetadata(history: ReadonlyArray<unknown>, withCall = false): ChatMetadata | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const turn = history[i] as { result?: unknown } | undefined;
    if (!turn || !('result' in turn)) continue;
    const m = metadataOf(turn.result);
    if (m && (!withCall || m.lastCall)) return m;
  }
  return undefined;
}

/** The call to remember for the followups: its input only when small. */
export function keptCall(call: { toolId: string; agent: string; decision: Decision; input: unknown; callbackId?: string }): LastCall {
  const json = JSON.stringify(call.input) ?? '';
  return {
    toolId: call.toolId, agent: call.agent, decision: call.decision,
    ...(json.length <= MAX_KEPT_INPUT ? { input: call.input } : {}),
    ...(call.callbackId !== undefined ? { callbackId: call.callbackId } : {}),
  };
}

/** A listed session's state (`external`: another maker's agent's, never a chat's). */
export type SessionState = 'running' | 'completed' | 'failed' | 'cancelled' | 'external';

export type ChatPlan =
  | { kind: 'start'; agent: string; prompt: string; /** Why the conversation's earlier session is not continued. */ note?: 'gone' | 'cancelled' }
  | { kind: 'continue'; sessionId: string; agent: string; prompt: string }
  /** The conversation's session still runs a turn: a second prompt must wait. */
  | { kind: 'busy'; sessionId: string; agent: string }
  /** `/agent` with no name, or a name no agent has: list the agents. */
  | { kind: 'list-agents'; unknown?: string }
  | { kind: 'empty' }
  | { kind: 'explain' | 'callbacks' | 'rule'; metadata?: ChatMetadata };

export interface PlanInput {
  command: string | undefined;
  prompt: string;
  history: ReadonlyArray<unknown>;
  /** The workspace's agents, in the agents file's order (the first is the default). */
  agents: readonly string[];
  /** The state of a session this window runs; undefined when it does not run it (a reload forgot it). */
  stateOf(sessionId: string): SessionState | undefined;
}

/**
 * The decision (README, "Talking to agents in the Chat view"): a message goes to the
 * conversation's session when its turn has ended; `/agent <name> <prompt>` starts a new session
 * with that agent; the first message of a conversation starts the first agent of `.agents.jsonc`.
 */
export function planRequest(input: PlanInput): ChatPlan {
  const prompt = input.prompt.trim();
  if (input.command === 'explain' || input.command === 'callbacks' || input.command === 'rule') {
    const metadata = latestMetadata(input.history, input.command !== 'callbacks') ?? latestMetadata(input.history);
    return { kind: input.command, ...(metadata ? { metadata } : {}) };
  }
  if (input.command === 'agent') {
    const [name = '', ...rest] = prompt.split(/\s+/);
    if (!name || !input.agents.includes(name)) return { kind: 'list-agents', ...(name ? { unknown: name } : {}) };
    const task = rest.join(' ').trim();
    return task ? { kind: 'start', agent: name, prompt: task } : { kind: 'empty' };
  }
  if (!prompt) return { kind: 'empty' };
  const earlier = latestMetadata(input.history);
  if (earlier) {
    const state = input.stateOf(earlier.sessionId);
    if (state === 'completed' || state === 'failed') return { kind: 'continue', sessionId: earlier.sessionId, agent: earlier.agent, prompt };
    if (state === 'running') return { kind: 'busy', sessionId: earlier.sessionId, agent: earlier.agent };
    const agent = input.agents.includes(earlier.agent) ? earlier.agent : input.agents[0];
    if (agent !== undefined) return { kind: 'start', agent, prompt, note: state === 'cancelled' ? 'cancelled' : 'gone' };
  }
  const first = input.agents[0];
  return first === undefined ? { kind: 'list-agents' } : { kind: 'start', agent: first, prompt };
}

export interface Followup {
  prompt: string;
  label: string;
  command: 'explain' | 'callbacks' | 'rule';
}

/** The followups after an answer: Explain the last decision (when one was made), Show open callbacks, Add a rule for this (when it asked). */
export function followupsFor(metadata: ChatMetadata | undefined): Followup[] {
  if (!metadata) return [];
  const item = (label: string, command: Followup['command']): Followup => ({ prompt: label, label, command });
  return [
    ...(metadata.lastCall ? [item(CHAT_TEXTS.followupExplain, 'explain')] : []),
    item(CHAT_TEXTS.followupCallbacks, 'callbacks'),
    ...(metadata.lastCall?.decision === 'ask' ? [item(CHAT_TEXTS.followupRule, 'rule')] : []),
  ];
}
