// The hook's answer in each host's own format (docs/hook-hosts.md §1, "The right answer per
// host"). Only JSON on stdout and exit 0: every host reads a JSON deny, while the exit codes
// that block differ from host to host.
import type { HostAgent } from './hostAgents.js';
import { HOSTS } from './hostAgents.js';

export type HookVerdict = { decision: 'allow' | 'deny' | 'ask'; reason: string };

export interface HostAnswer {
  stdout: string;
  exitCode: number;
}

/**
 * Whether the host can put an `ask` to a person from this event. Codex reports an ask as a hook
 * failure and runs the call; Gemini CLI ends a headless run silently on one; Cursor's
 * beforeReadFile takes only allow or deny.
 */
export function hostCanAsk(host: HostAgent, event: string): boolean {
  if (host === 'codex' || host === 'gemini') return false;
  if (host === 'cursor' && event === 'beforeReadFile') return false;
  return true;
}

/**
 * The verdict the host is given: an ask the host cannot put to a person becomes a deny that says
 * so (never silence, which Codex and Gemini take as no objection).
 */
export function nearestSafe(host: HostAgent, event: string, verdict: HookVerdict): HookVerdict {
  if (verdict.decision !== 'ask' || hostCanAsk(host, event)) return verdict;
  return { decision: 'deny', reason: `${verdict.reason} (the policy asks, and ${HOSTS[host].label} cannot ask a person from its hook: denied)` };
}

function json(value: unknown): HostAnswer {
  return { stdout: `${JSON.stringify(value)}\n`, exitCode: 0 };
}

/**
 * The answer to print. `camelCase`: Copilot CLI's own payload shape (it answers in the same shape).
 * `updatedInput`: the replacement tool input (hookSandbox.ts), given with an allow only, in each
 * host's field: Claude Code's and Codex's `updatedInput`, Gemini CLI's `hookSpecificOutput.tool_input`,
 * Copilot CLI's `modifiedArgs` (docs/hook-hosts.md).
 */
export function hostAnswer(host: HostAgent, event: string, given: HookVerdict, camelCase = false, updatedInput?: Record<string, unknown>): HostAnswer {
  const verdict = nearestSafe(host, event, given);
  // A reason is never empty: Codex ignores a deny without one.
  const reason = verdict.reason.trim() === '' ? `Agent Policy: ${verdict.decision}` : verdict.reason;
  const rewrite = verdict.decision === 'allow' ? updatedInput : undefined;
  switch (host) {
    case 'codex':
      // Codex honours a deny with a reason, and an allow only with updatedInput; a plain allow is reported as a failed hook run, so it gets silence.
      if (rewrite !== undefined) return json({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: reason, updatedInput: rewrite } });
      return verdict.decision === 'allow' ? { stdout: '', exitCode: 0 }
        : json({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } });
    case 'gemini':
      if (verdict.decision !== 'allow') return json({ decision: 'deny', reason });
      return json({ decision: 'allow', reason, ...(rewrite !== undefined ? { hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: rewrite } } : {}) });
    case 'cursor':
      return json({ permission: verdict.decision, user_message: reason, agent_message: reason });
    case 'copilot':
      if (camelCase) return json({ permissionDecision: verdict.decision, permissionDecisionReason: reason, ...(rewrite !== undefined ? { modifiedArgs: rewrite } : {}) });
      break;
  }
  const changed = (host === 'claude' || host === 'copilot') && rewrite !== undefined ? { updatedInput: rewrite } : {};
  return json({ hookSpecificOutput: { hookEventName: event === '' ? 'PreToolUse' : event, permissionDecision: verdict.decision, permissionDecisionReason: reason, ...changed } });
}
