// From the policy's decision to how a `builtin.run_command` call runs (policy-format.md,
// "Sandboxed commands"): the engine says whether the command is sandboxed and with network; a
// command a person allowed runs sandboxed (where the decision says so) with the network on, and
// with the protected files writable only when the ask came from the protected-files hook itself.
// With no policy at all (permission modes only) a command runs sandboxed where the machine can,
// with the network off unless a person allowed it.
import * as os from 'node:os';
import { SANDBOXED_TOOL } from '../../policy/rules/judgement.js';
import type { Policy, PolicyDecision, SandboxRun } from '../../policy/policy.js';
import { PROTECTED_FILES_HOOK } from './protected.js';
import type { CommandSandboxReport } from '../sandbox/sandboxNote.js';
import { policyDeniedPaths } from './sandboxDeniedPaths.js';
import { describeSandbox, sandboxAvailability } from '../sandbox/sandboxProbe.js';
import type { ToolSandbox } from '../sandbox/toolSandbox.js';

export { SANDBOXED_TOOL };

/** What decide() tells the engine (`DecideOptions.sandbox`, and why not): only run_command is ever sandboxed, so only it probes. */
export function sandboxForDecision(toolId: string): { sandbox: boolean; sandboxUnavailable?: string } {
  if (toolId !== SANDBOXED_TOOL) return { sandbox: false };
  const available = sandboxAvailability();
  return available.available ? { sandbox: true } : { sandbox: false, sandboxUnavailable: available.reason };
}

/** The sandbox of a decision made by the permission mode alone (no policy): sandboxed where it can be, network off. */
export function permissionModeSandbox(toolId: string, decision: PolicyDecision['decision']): SandboxRun | undefined {
  if (toolId !== SANDBOXED_TOOL || decision === 'deny') return undefined;
  return { sandboxed: sandboxAvailability().available, network: false };
}

/** Who let the call run: the policy's allow, or a person (an ask answered allow, now or earlier for the session). */
export type AllowedBy = { by: 'policy' } | { by: 'person'; hook?: string };

/** How the call runs once allowed; undefined: not sandboxed (not run_command, the sandbox off or missing, or a decision that names none yet). */
export function runSandbox(
  decision: PolicyDecision, toolId: string, allowed: AllowedBy, protectedFiles: readonly string[],
  /** The paths the policy's deny rules hide (sandboxDeniedPaths.ts), worked out when the command starts. */
  unreadable?: () => readonly string[],
): Omit<ToolSandbox, 'onUndone'> | undefined {
  const planned = decision.sandbox;
  if (toolId !== SANDBOXED_TOOL || !planned?.sandboxed) return undefined;
  // Credential variables only as the deciding rules pass (or mask) them, whoever allowed the call; the same reads hidden.
  const more = { ...(planned.env ? { env: planned.env } : {}), ...(planned.mask ? { mask: planned.mask } : {}), ...(unreadable ? { unreadable } : {}) };
  // Each connection is judged unless every host is allowed or a rule said "network": false.
  const judged = !planned.network && planned.offline !== true ? { judgesHosts: true as const } : {};
  if (allowed.by === 'policy') return { network: planned.network, ...judged, protectedWritable: false, protectedFiles, ...more };
  // A person saw this exact command, not the hosts it will reach: its connections are still judged;
  // the protected files are writable only when that was the question.
  return { network: planned.network, ...judged, protectedWritable: allowed.hook === PROTECTED_FILES_HOOK, protectedFiles, ...more };
}

/** The paths a session's policy hides from its sandboxed commands, as a function runSandbox takes (asked when a command starts: files come and go). */
export function deniedPathsOf(policy: () => Policy | undefined, workspaceFolder: string, home?: string): () => readonly string[] {
  return () => policyDeniedPaths(policy(), workspaceFolder, home ?? os.homedir()).paths;
}

/** The report of how a call ran (or would run once allowed), for events, approvals and the audit. */
export function sandboxReportOf(run: Omit<ToolSandbox, 'onUndone'> | undefined): CommandSandboxReport {
  if (!run) return { sandboxed: false, network: true };
  return {
    sandboxed: true, network: run.network, ...(run.judgesHosts ? { hostsJudged: true } : {}),
    ...(run.protectedWritable ? { protectedWritable: true } : {}),
  };
}

/** The line a session that can run commands starts its transcript with: whether commands run sandboxed here, and why not. */
export function sessionSandboxLine(policy: Policy | undefined): { available: boolean; text: string } {
  const available = sandboxAvailability();
  const mode = policy?.sandboxMode();
  if (mode?.mode === 'off') {
    return { available: available.available, text: `Commands are NOT sandboxed: the ${mode.from !== null ? `${mode.from} ` : ''}policy sets "sandbox": "off".` };
  }
  if (!available.available && mode?.mode === 'required') {
    return { available: false, text: `${describeSandbox(available)} The policy sets "sandbox": "required", so every command is asked.` };
  }
  return { available: available.available, text: describeSandbox(available) };
}
