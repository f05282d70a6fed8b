// `agentpolicy hook --agent HOST`: one tool call of another maker's agent, read from the host's
// hook input, judged with the workspace's layered policy and the protected files, written to the
// audit log, put to a person in the editor when the policy asks and a window runs for the
// folder, and answered in the host's format. Whatever goes wrong, the answer blocks: a hook that
// fails must never let a call through (most hosts let a call through when the hook crashes).
import * as os from 'node:os';
import * as path from 'node:path';
import type { ToolCall } from '../../policy/rules/call.js';
import type { Remember } from '../../policy/file/grantLength.js';
import type { PolicyDecision } from '../../policy/policy.js';
import { mcpServerOf, mcpServerRefusal } from '../../policy/rules/managedControls.js';
import { FileAuditLog, type AuditEntry } from '../../runtime/audit/audit.js';
import { auditParts, inputDigest, summarizeInput } from '../../runtime/audit/auditSummary.js';
import { TelemetryAuditSink } from '../../runtime/telemetry/auditTelemetry.js';
import { PROTECTED_FILES_HOOK, protectedFilesCheck, protectedPathsOf } from '../../runtime/calls/protected.js';
import { bridgeDirectories } from '../state/editorDiscovery.js';
import { HOSTS, type HostAgent } from '../hosts/hostAgents.js';
import { addHookMarks, markLists, readHookMarks } from './hookMarks.js';
import { hostAnswer, nearestSafe, type HookVerdict, type HostAnswer } from '../hosts/hostAnswers.js';
import { HostInputError, readHostCall, type HostToolCall } from '../hosts/hostCalls.js';
import { HOOK_SANDBOX_ENV, hookSandboxSwitchedOff, machineSandbox, ownSandboxLauncher, sandboxedLine, type SandboxLauncher } from './hookSandbox.js';
import { installedHookHosts } from '../install/hookInstall.js';
import { defaultStateDir, findWorkspacePolicy, loadHookPolicy, withHeldChange, type HookPolicy, type HookPolicySources } from './hookPolicy.js';

export interface HookOptions {
  agent: HostAgent;
  /** The host's timeout for this hook, in seconds (the entry's `timeout`); the hook answers before it. */
  timeoutSeconds?: number;
  policyFile?: string;
  workspace?: string;
  managedFile?: string;
  userFile?: string;
  /** The audit log to append to (default: the editor's for the folder, else the user's state folder). */
  auditFile?: string;
  /** Judge the workspace layer as untrusted (it can only tighten). */
  untrusted?: boolean;
  /** The user's state folder (last valid policies, the default audit log). */
  stateDir?: string;
}

/** What the editor is asked when the policy asks (the editor bridge's request). */
export interface HookAsk {
  host: HostAgent;
  hostLabel: string;
  hostSession: string;
  agent?: string;
  toolId: string;
  input: unknown;
  summary: string;
  reason?: string;
  rule: PolicyDecision['rule'];
  /** When no rule decided: the layer whose `default` asked (the notification names it). */
  defaultFrom?: PolicyDecision['defaultFrom'];
  parts?: PolicyDecision['parts'];
  remember: Remember;
  timeoutSeconds?: number;
  onTimeout: 'deny' | 'keep';
  /** Flow rules: the marks the host session carries, and those only perhaps there (the tree shows them). */
  marks?: string[];
  maybeMarks?: string[];
}

/** `by: 'timeout'`: the rule's own ask timeout lapsed in the window (always a deny). */
export type HookEditorAnswer = { answer: 'allow-once' | 'allow-session' | 'allow-duration' | 'deny'; by: 'person' | 'session' | 'timeout'; reason?: string };

/** An editor window running for the folder, as the hook sees it. */
export interface HookEditor {
  auditFile?: string;
  trusted?: boolean;
  managedPolicyFile?: string;
  userPolicyFile?: string;
  /**
   * While the window holds a change to the workspace policy made outside it: the accepted
   * version's text (null when the window says it holds one but its text cannot be read: the
   * workspace layer is then judged as untrusted). Undefined when nothing is held.
   */
  heldAcceptedPolicy?(): string | null | undefined;
  ask(ask: HookAsk, deadlineMs: number): Promise<HookEditorAnswer | undefined>;
}

export interface HookDeps {
  stdin: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The editor window for a folder, if one runs. */
  findEditor?: (folder: string) => HookEditor | undefined;
  /** Loads the shell parser (only a command needs it, and it costs a WebAssembly compile). */
  loadShellParser?: () => Promise<void>;
  /** Loads the layered policy (default: loadHookPolicy, from disk each call; the decision service keeps it compiled). */
  loadPolicy?: (sources: HookPolicySources) => HookPolicy;
  now?: () => number;
  /** When the hook started, on performance.now()'s clock (default 0: the process's start): its audit line's hookMs counts from there. */
  startedAt?: number;
  /** Whether this machine has a sandbox (default: hookSandbox.ts machineSandbox, probed once per process). */
  sandboxAvailable?: () => { available: true } | { available: false; reason: string };
  /** The node and cli.js an allowed command is sandboxed with (default: this process's: hookSandbox.ts). */
  sandboxLauncher?: () => SandboxLauncher | { problem: string };
}

/** The hook's answer, and a line for the host's log when it blocked on an error. */
export interface HookResult extends HostAnswer {
  verdict: HookVerdict;
  stderr?: string;
}

/** Seconds kept in hand before the host's timeout: the answer must reach the host before it gives up. */
function marginSeconds(timeout: number): number {
  return Math.min(5, Math.max(0.5, timeout * 0.2));
}

/** Relative paths of the host are relative to its working folder; the policy resolves them against the workspace. */
function anchored(call: ToolCall, hostCwd: string, workspace: string): ToolCall {
  const input = call.input as Record<string, unknown>;
  if (call.tool.kind !== 'builtin' || input === null || typeof input !== 'object') return call;
  if (path.resolve(hostCwd) === path.resolve(workspace)) return call;
  const out: Record<string, unknown> = { ...input };
  const absolute = (v: unknown): unknown => (typeof v === 'string' ? path.resolve(hostCwd, v) : v);
  if ('path' in out) out.path = absolute(out.path);
  if (Array.isArray(out.paths)) out.paths = out.paths.map(absolute);
  if (call.tool.id === 'builtin.run_command') out.cwd = out.cwd !== undefined ? absolute(out.cwd) : hostCwd;
  return { ...call, input: out };
}

/** The protected paths of the workspace, and the hook's own state (last valid policies, its audit log). */
function protectedPaths(workspace: string, stateDir: string, env: NodeJS.ProcessEnv, persistenceFiles: readonly string[]): string[] {
  // The bridge's folders too: a discovery file written there would point the hook at a fake window.
  return [
    ...protectedPathsOf(workspace, persistenceFiles, env.HOME || os.homedir()),
    `${stateDir}/`,
    ...bridgeDirectories(env).map((d) => `${d}/`),
  ];
}

/**
 * The host really running an entry written for `agent`: Copilot CLI (it sets COPILOT_CLI=1) and
 * VS Code (its input has a camelCase `hookEventName`) read Claude Code's settings files too.
 */
function hostRunning(agent: HostAgent, deps: HookDeps): HostAgent {
  if (agent !== 'claude') return agent;
  if (deps.env.COPILOT_CLI === '1') return 'copilot';
  try {
    const body = JSON.parse(deps.stdin) as Record<string, unknown> | null;
    if (body && typeof body === 'object' && 'hookEventName' in body && !('hook_event_name' in body)) return 'vscode';
  } catch {
    // Unreadable input is the reader's to refuse.
  }
  return agent;
}

/** A blocking answer in the host's format, saying why. */
export function blocked(agent: HostAgent, event: string, reason: string, camelCase = false): HookResult {
  const verdict: HookVerdict = { decision: 'deny', reason: `Agent Policy blocked this call: ${reason}` };
  return { ...hostAnswer(agent, event, verdict, camelCase), verdict, stderr: `agentpolicy hook: ${reason}` };
}

/** Answers one hook call. Never throws: an error is a blocking answer that says what went wrong. */
export async function runHook(options: HookOptions, deps: HookDeps): Promise<HookResult> {
  const { agent } = options;
  let event = 'PreToolUse';
  let camelCase = false;
  try {
    const runs = hostRunning(agent, deps);
    const hostCall = readHostCall(runs, deps.stdin, deps.env, deps.cwd);
    event = hostCall.event;
    camelCase = hostCall.camelCase === true;
    if (runs !== agent) {
      // Copilot CLI and VS Code also run the Claude Code entry of .claude/settings.json. Where their
      // own entry is in place it judges the call: this one steps aside (no output: no objection),
      // so a call is not judged, audited and asked twice. Otherwise it judges as the host it is.
      const policyFile = findWorkspacePolicy(hostCall.folder);
      const folder = policyFile !== undefined ? path.dirname(policyFile) : hostCall.folder;
      if (installedHookHosts(folder).includes(runs)) return { stdout: '', exitCode: 0, verdict: { decision: 'allow', reason: `${HOSTS[runs].label} runs its own entry` } };
    }
    return await judgeAndAnswer({ ...options, agent: runs }, deps, hostCall);
  } catch (error) {
    const reason = error instanceof HostInputError ? error.message : `the hook failed (${error instanceof Error ? error.message : String(error)})`;
    return blocked(agent, event, reason, camelCase);
  }
}

async function judgeAndAnswer(options: HookOptions, deps: HookDeps, hostCall: HostToolCall): Promise<HookResult> {
  const { agent } = options;
  const label = HOSTS[agent].label;
  const now = deps.now ?? Date.now;
  const started = now();
  const timeout = options.timeoutSeconds ?? HOSTS[agent].defaultTimeoutSeconds;
  const deadline = started + (timeout - marginSeconds(timeout)) * 1000;
  const stateDir = options.stateDir ?? defaultStateDir(deps.env);
  const editor = deps.findEditor?.(hostCall.folder);

  const loaded = (deps.loadPolicy ?? loadHookPolicy)({
    folder: hostCall.folder, stateDir,
    ...(options.policyFile !== undefined ? { policyFile: options.policyFile } : {}),
    ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
    ...pick('managedFile', options.managedFile ?? editor?.managedPolicyFile ?? nonEmpty(deps.env.AGENTPOLICY_MANAGED_POLICY)),
    // What named it (the system managed policy, when one counts, is in force instead: managedInForce.ts).
    managedFrom: options.managedFile !== undefined ? '--managed' : editor?.managedPolicyFile !== undefined ? 'the editor' : 'AGENTPOLICY_MANAGED_POLICY',
    system: { env: deps.env },
    ...pick('userFile', options.userFile ?? editor?.userPolicyFile ?? nonEmpty(deps.env.AGENTPOLICY_USER_POLICY)),
  });
  const auditFile = options.auditFile ?? editor?.auditFile ?? nonEmpty(deps.env.AGENTPOLICY_AUDIT) ?? path.join(stateDir, 'audit.jsonl');
  const session = `${agent}:${hostCall.session || 'unknown'}`;
  const call = anchored(hostCall.call, hostCall.cwd, loaded.workspaceFolder);
  const auditBase: Omit<AuditEntry, 'time' | 'event'> = {
    session, agent: call.agent, tool: call.tool.id, inputDigest: inputDigest(call.input), summary: summarizeInput(call.input),
  };
  // Decisions in OpenTelemetry (docs/teams.md): each line also exported when AGENTPOLICY_ENABLE_TELEMETRY or the managed policy says so.
  const audit = new TelemetryAuditSink(new FileAuditLog(auditFile), { env: deps.env, controls: () => (loaded.ok ? loaded.policy.controls : undefined) });
  try {
    if (!loaded.ok) {
      const result = blocked(agent, hostCall.event, loaded.reason, hostCall.camelCase);
      audit.write({ time: new Date().toISOString(), event: 'decision', hookMs: hookMs(deps), ...auditBase, decision: 'deny', rule: null, default: 'builtin', reason: loaded.reason });
      return result;
    }
    // A change to the workspace file the editor holds for a person: judged as the editor judges it.
    const acceptedText = editor?.heldAcceptedPolicy?.();
    const held = acceptedText === undefined ? { policy: loaded.policy } : acceptedText === null ? { policy: loaded.policy, lower: true } : withHeldChange(loaded, acceptedText, stateDir);
    const trusted = options.untrusted !== true && editor?.trusted !== false && held.lower !== true;
    // Flow rules: the host session's marks, as its earlier hook processes kept them (hookMarks.ts).
    const marks = readHookMarks(stateDir, agent, hostCall.session);
    // An allowed shell command of a host that takes a changed input runs in our sandbox: the rules
    // judge it as sandboxed then (a `"sandbox": true` allow holds), else as run by the host itself.
    const sandboxed = sandboxRewrite(agent, hostCall, loaded.workspaceFolder, held.policy.sandboxMode().mode === 'off', deps);
    const decide = (): PolicyDecision => held.policy.decide(call, {
      workspaceFolder: loaded.workspaceFolder, trusted, marks,
      sandbox: sandboxed?.input !== undefined,
      sandboxUnavailable: sandboxed !== undefined ? `${label}'s command would not be ${sandboxed.note.replace(/^not run in/, 'run in')}` : `${label} runs the command itself, outside Agent Policy's sandbox`,
    });
    let decision: PolicyDecision;
    try {
      decision = decide();
    } catch (error) {
      // A command the plain-list reader cannot split needs the shell parser, loaded only then
      // (it costs a WebAssembly compile). Any other error throws again, and blocks.
      if (!deps.loadShellParser) throw error;
      await deps.loadShellParser();
      decision = decide();
    }
    // Result review: the host runs the tool after this hook and hands its result to its model itself,
    // so no result can be held here. A review rule asks before the call instead, once at a time.
    if (decision.review === 'result' && decision.decision !== 'deny') decision = reviewAsksFirst(decision, label);
    // Managed controls: the host starts its own MCP servers, so what can be stopped is every call to a refused server's tools.
    const server = mcpServerOf(call.tool.id);
    const serverRefused = server === undefined ? undefined : mcpServerRefusal(server, held.policy.controls);
    if (serverRefused !== undefined) decision = { decision: 'deny', rule: null, lowered: false, warnings: decision.warnings, reason: serverRefused };
    const protectedTitle = decision.decision === 'deny' ? undefined
      : protectedFilesCheck(protectedPaths(loaded.workspaceFolder, stateDir, deps.env, held.policy.persistenceFiles()))({ tool: call.tool, input: call.input, workspaceFolder: loaded.workspaceFolder });
    const decided: Omit<AuditEntry, 'time' | 'event'> = {
      ...auditBase, rule: decision.rule, lowered: decision.lowered,
      ...(decision.rule === null ? { default: decision.defaultFrom ?? 'builtin' } : {}),
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      ...auditParts(decision.parts),
      ...(protectedTitle !== undefined ? { hook: PROTECTED_FILES_HOOK } : {}),
    };
    const asks = protectedTitle !== undefined || decision.decision === 'ask';
    /** The answer, after keeping the marks of a call the host will run (known) or may run (its own ask). */
    const marking = (verdict: HookVerdict): HookResult => {
      const given = nearestSafe(agent, hostCall.event, verdict).decision;
      if (given !== 'deny') addHookMarks(stateDir, agent, hostCall.session, decision.marks, given === 'allow');
      if (given !== 'allow' || sandboxed === undefined) return answer(agent, hostCall, verdict);
      const reason = `${verdict.reason}; ${sandboxed.note}`;
      return answer(agent, hostCall, { ...verdict, reason }, sandboxed.input);
    };
    if (!asks) {
      audit.write({ time: new Date().toISOString(), event: 'decision', hookMs: hookMs(deps), ...decided, decision: decision.decision, ...(decision.decision === 'allow' && decision.marks ? { marks: decision.marks } : {}) });
      const reason = decision.decision === 'deny' ? decision.reason ?? 'the policy denies this call' : describeAllow(decision);
      return marking({ decision: decision.decision, reason });
    }
    // The reason a rule or the protected files give; the window words a default's ask itself.
    const given = protectedTitle ?? decision.reason;
    const reason = given ?? `the policy asks before ${call.tool.id}`;
    audit.write({ time: new Date().toISOString(), event: 'decision', hookMs: hookMs(deps), ...decided, decision: 'ask' });
    if (!editor) return marking({ decision: 'ask', reason });
    const ask: HookAsk = {
      host: agent, hostLabel: label, hostSession: hostCall.session, toolId: call.tool.id, input: call.input,
      summary: summarizeInput(call.input), ...(given !== undefined ? { reason: given } : {}), rule: decision.rule, ...(decision.rule === null ? { defaultFrom: decision.defaultFrom ?? null } : {}),
      ...(hostCall.subagent !== undefined ? { agent: hostCall.subagent } : {}),
      ...(decision.parts ? { parts: decision.parts } : {}),
      remember: protectedTitle !== undefined ? 'never' : decision.ask?.remember ?? 'session',
      ...(decision.ask?.timeout !== undefined ? { timeoutSeconds: decision.ask.timeout } : {}),
      onTimeout: decision.ask?.onTimeout ?? 'deny',
      ...markLists(marks),
    };
    const answered = await editor.ask(ask, deadline);
    if (answered === undefined) {
      // No answer before the host would give up: the rule's onTimeout (keep: the host's own ask, where it has one).
      const onTimeout = ask.onTimeout === 'keep' ? 'ask' : 'deny';
      return marking({ decision: onTimeout, reason: `${reason} (no answer in the editor within ${Math.round((deadline - started) / 1000)} s)` });
    }
    if (answered.answer === 'deny') return answer(agent, hostCall, { decision: 'deny', reason: answered.reason ?? 'a person denied this call in the editor' });
    return marking({ decision: 'allow', reason: answered.by !== 'session' ? 'a person allowed this call in the editor' : answered.answer === 'allow-duration' ? 'allowed for a limited time in the editor' : 'allowed for this session in the editor' });
  } catch (error) {
    // Above all an audit line that could not be written: the call must not run unrecorded.
    return blocked(agent, hostCall.event, `${error instanceof Error ? error.message : String(error)}`, hostCall.camelCase);
  } finally {
    try {
      audit.close();
    } catch {
      // Closing cannot lose a line: each was written whole before.
    }
  }
}

function answer(agent: HostAgent, hostCall: HostToolCall, verdict: HookVerdict, updatedInput?: Record<string, unknown>): HookResult {
  return { ...hostAnswer(agent, hostCall.event, verdict, hostCall.camelCase, updatedInput), verdict };
}

/** The hosts that take a changed tool input with an allow, and the field they take it in (hostAnswers.ts). */
const REWRITES_INPUT: readonly HostAgent[] = ['claude', 'codex', 'gemini', 'copilot'];

/**
 * An allowed shell call of a host that takes a changed tool input (Claude Code's and Codex's
 * `Bash`, Gemini CLI's `run_shell_command`, Copilot CLI's `bash`): its input with the command run
 * under `agentpolicy sandbox` (hookSandbox.ts), or only a note saying why it is not; undefined for
 * any other call. Codex's commands only when Codex runs them unsandboxed itself (its permission mode
 * `bypassPermissions`): inside its own sandbox ours would be a second one, which may not start.
 */
function sandboxRewrite(agent: HostAgent, hostCall: HostToolCall, workspace: string, policyOff: boolean, deps: HookDeps): { input?: Record<string, unknown>; note: string } | undefined {
  const command = hostCall.hostInput?.command;
  if (!REWRITES_INPUT.includes(agent) || hostCall.call.tool.id !== 'builtin.run_command' || typeof command !== 'string' || command.trim() === '') return undefined;
  const not = (why: string): { note: string } => ({ note: `not run in Agent Policy's sandbox: ${why}` });
  if (agent === 'codex' && hostCall.permissionMode !== 'bypassPermissions') return not(`Codex runs it in its own sandbox (permission mode ${hostCall.permissionMode ?? 'not given'})`);
  if (hookSandboxSwitchedOff(deps.env)) return not(`${HOOK_SANDBOX_ENV}=${deps.env[HOOK_SANDBOX_ENV]} switches it off`);
  if (policyOff) return not('the policy says "sandbox": "off"');
  const available = (deps.sandboxAvailable ?? machineSandbox)();
  if (!available.available) return not(`there is no sandbox here (${available.reason})`);
  const launcher = (deps.sandboxLauncher ?? ownSandboxLauncher)();
  if ('problem' in launcher) return not(launcher.problem);
  return {
    input: { ...hostCall.hostInput, command: sandboxedLine(launcher, workspace, command) },
    note: 'runs in Agent Policy\'s sandbox (agentpolicy sandbox)',
  };
}

/** A `"review": "result"` decision under a hook: an ask before the call, saying why, never granted for longer than once. */
export function reviewAsksFirst(decision: PolicyDecision, hostLabel: string): PolicyDecision {
  const why = `the rule holds this tool's result for review, which ${hostLabel} cannot do (it runs the tool after its hook and gives the result to its model itself), so the call is asked before it runs instead`;
  return {
    ...decision, decision: 'ask', reason: decision.reason ? `${decision.reason} (${why})` : why,
    ask: { ...(decision.ask ?? { onTimeout: 'deny' }), remember: 'never' },
  };
}

function describeAllow(decision: PolicyDecision): string {
  if (decision.rule) return `allowed by ${decision.rule.layer} rule ${decision.rule.id !== null ? `"${decision.rule.id}"` : decision.rule.index + 1} (${decision.rule.file}:${decision.rule.line})`;
  return `allowed by the ${decision.defaultFrom ?? 'built-in'} default`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' ? value : undefined;
}

function pick<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

/** The milliseconds since the hook started (one decimal). */
function hookMs(deps: HookDeps): number {
  return Math.round((performance.now() - (deps.startedAt ?? 0)) * 10) / 10;
}
