// The events a session tree reports as it runs (`session.events()`), for transcripts and UIs.
// Types only; imports types from the policy engine, answers.ts and sandboxNote.ts, nothing else.
import type { PolicyDecision } from '../../policy/policy.js';
import type { OpenCallback } from './answers.js';
import type { CommandSandboxReport } from '../sandbox/sandboxNote.js';

export type RuntimeEvent =
  | { type: 'turn-started'; sessionId: string; turnId: string; agent: string; prompt: string }
  | { type: 'message'; sessionId: string; turnId: string; agent: string; text: string }
  | { type: 'tool-call'; sessionId: string; turnId: string; agent: string; callId: string; toolId: string; name: string; input: unknown; decision: PolicyDecision; effective: 'allow' | 'ask' | 'deny'; by: string; sandbox?: CommandSandboxReport; /** Allowed by a time-limited grant: when it ends (epoch ms). */ grantedUntil?: number }
  | { type: 'tool-result'; sessionId: string; turnId: string; agent: string; callId: string; toolId: string; ok: boolean; content: string }
  | { type: 'callback-opened'; sessionId: string; turnId: string; agent: string; callback: OpenCallback }
  | { type: 'callback-settled'; sessionId: string; turnId: string; agent: string; callbackId: string; outcome: string; by: string }
  | { type: 'turn-ended'; sessionId: string; turnId: string; agent: string; state: 'completed' | 'failed'; text?: string; error?: string }
  | { type: 'subagent-started'; sessionId: string; parentSessionId: string; parentTurnId: string; agent: string; task: string }
  | { type: 'warning'; sessionId: string; message: string }
  /** Flow rules: a call that runs put new marks on the session tree (`added`); `marks` is all it carries now. */
  | { type: 'marks'; sessionId: string; agent: string; toolId: string; added: string[]; marks: string[] }
  /**
   * Hidden tools: before a model request, the tools not offered to the session's model because the
   * policy denies every call of them (`by`: the rule or default), when that list changed (empty: none is hidden any more).
   */
  | { type: 'tools-hidden'; sessionId: string; agent: string; hidden: Array<{ toolId: string; name: string; by: string }> }
  /** At the start of a session that can run commands: whether they run sandboxed here, and why not. */
  | { type: 'sandbox'; sessionId: string; available: boolean; message: string };
