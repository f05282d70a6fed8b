// One tool call of the model, top to bottom: check the input, decide (the policy), let the hooks
// ask (protected files), ask a person when it must, run the tool, and audit and report each step.
// The audit line is written before the tool runs; a result a rule holds for review waits for a person before the model gets it (resultReview.ts). `grants` remembers the calls (and the parts of
// compound commands) a person allowed for the session or for a while (sessionGrants.ts). A `builtin.run_command` call runs in the sandbox as the decision
// and who allowed it say (sandboxRun.ts).
// Imports the policy engine, answers, audit, callbacks, signIn, elicitation, offeredTools, resultReview, sessionGrants, tree (for newId)
// and types only (turn, events, model, tools); never session.ts.
import type { ToolCall } from '../../policy/rules/call.js';
import { canonicalJson, InputTooDeepError } from '../../policy/rules/compile.js';
import { permissionModeDecision } from '../../policy/checking/lint.js';
import type { PolicyDecision } from '../../policy/policy.js';
import { OpenApproval, type ApprovalRequest } from '../tree/answers.js';
import { truncate, type AuditEntry } from '../audit/audit.js';
import { auditParts, inputDigest, summarizeInput } from '../audit/auditSummary.js';
import { openCallback } from '../tree/callbacks.js';
import { closeElicitations, elicit, type CallElicitations } from '../tree/elicitation.js';
import type { RuntimeEvent } from '../tree/events.js';
import type { ModelToolCall } from '../model/model.js';
import { offeredTools } from './offeredTools.js';
import { PROTECTED_FILES_HOOK } from './protected.js';
import { reviewResult } from './resultReview.js';
import { beginApprovedProtectedChange } from '../sandbox/sandboxCleanup.js';
import { commandConnections, type CommandConnections } from './connectionAsks.js';
import { deniedPathsOf, permissionModeSandbox, runSandbox, sandboxForDecision, sandboxReportOf, SANDBOXED_TOOL, type AllowedBy } from './sandboxRun.js';
import { longestGrant, grantAuditFields, grantedUntil, type GrantCall, type SessionGrants } from '../tree/sessionGrants.js';
import { ensureSignedIn } from '../tree/signIn.js';
import { newId, type SessionScope, type Tree } from '../tree/tree.js';
import type { TurnCore } from '../tree/turn.js';
import type { RuntimeTool, SubagentHost } from '../tools/tools.js';
import type { ToolSandbox } from '../sandbox/toolSandbox.js';

const NEVER_ASK = new Set(['agents.message', 'agents.wait', 'agents.interrupt']);

type ToolCallEvent = Omit<Extract<RuntimeEvent, { type: 'tool-call' }>, 'type' | 'effective' | 'by' | 'sandbox'>;
type RunSandbox = Omit<ToolSandbox, 'onUndone'>;
type AuditBase = Omit<AuditEntry, 'time' | 'event'>;



/** The policy's decision on a call, or the permission mode's when the tree has no policy. */
export function decide(tree: Tree, call: ToolCall): PolicyDecision {
  const policy = tree.currentPolicy();
  const trusted = tree.trustedNow();
  const fallback = permissionModeDecision(tree.permissionMode);
  if (!policy) {
    const sandbox = permissionModeSandbox(call.tool.id, fallback);
    return {
      decision: fallback, rule: null, lowered: false, warnings: [], defaultFrom: null,
      ...(fallback === 'ask' ? { ask: { onTimeout: 'deny', remember: 'session' } } : {}),
      ...(sandbox ? { sandbox } : {}),
    };
  }
  return policy.decide(call, { workspaceFolder: tree.workspaceFolder, trusted, fallbackDefault: fallback, ...sandboxForDecision(call.tool.id), marks: tree.marks });
}

/** Flow rules: the marks an allowed call puts on the session, for its audit line. */
export function marksField(decision: PolicyDecision): Pick<AuditEntry, 'marks'> {
  return decision.marks !== undefined && decision.decision !== 'deny' ? { marks: decision.marks } : {};
}

function grantCall(tool: RuntimeTool, input: unknown, canonical: string, decision: PolicyDecision): GrantCall {
  return { toolId: tool.id, input, canonical, commandArg: tool.commandArg, decision, summary: summarizeInput(input) };
}

/** The hook name of the ask of a tool whose definition changed since a person approved it (RuntimeTool.held). */
export const DEFINITION_CHANGED_HOOK = 'mcp-tool-changed';

/** The first hook that asks about this call, with its title: a tool held for its changed definition first. */
function hookAsks(tree: Tree, agent: string, tool: RuntimeTool, input: unknown): { hook: string; title: string } | undefined {
  const held = tool.held?.();
  if (held !== undefined) return { hook: DEFINITION_CHANGED_HOOK, title: `${agent} wants to run ${tool.id}: ${summarizeInput(input)} (${held})` };
  for (const hook of tree.hooks) {
    const title = hook.check({ tool, input, agent, workspaceFolder: tree.workspaceFolder });
    if (title !== undefined) return { hook: hook.name, title };
  }
  return undefined;
}

/** The tool calls of one session. */
export class ToolCalls {
  /** What a person allowed beyond one call, kept in the tree by session (the tree lists and revokes them). */
  private get grants(): SessionGrants {
    return this.tree.grantsOf(this.session.id);
  }

  constructor(
    private readonly tree: Tree,
    private readonly session: SessionScope,
    /** The session's tools by the name the model calls them (tool sources add theirs as they are listed). */
    private readonly tools: ReadonlyMap<string, RuntimeTool>,
    /** Set when the session may start subagents: the agents.* tools' view of it. */
    private readonly subagents: SubagentHost | undefined,
  ) {}

  /** Judges one call, asks when it must, runs it when allowed; returns the content for the model. */
  async call(turn: TurnCore, call: ModelToolCall): Promise<string> {
    const tool = this.tools.get(call.name);
    if (!tool) {
      // Named from the tools its model is offered: a hidden tool (offeredTools.ts) is not advertised here either.
      const offered = offeredTools(this.tree, this.session.agentName, this.tools.values()).offered;
      return JSON.stringify({ error: `there is no tool named "${call.name}"; the tools are: ${offered.map((t) => t.name).join(', ')}` });
    }
    const checked = tool.check(call.input);
    if (!checked.ok) return JSON.stringify({ error: `invalid input for ${call.name}: ${checked.error}` });
    const input = checked.value;
    // Computed once: the depth check, the audit digest and the session key all use it.
    let canonical: string;
    try {
      canonical = canonicalJson(input);
    } catch (error) {
      if (error instanceof InputTooDeepError) return JSON.stringify({ error: `invalid input for ${call.name}: ${error.message}` });
      throw error;
    }
    const agent = this.session.agentName;
    const policyCall: ToolCall = { tool, input, agent };
    const decision = decide(this.tree, policyCall);
    const hookTitle = decision.decision === 'deny' ? undefined : hookAsks(this.tree, agent, tool, input);
    const base: ToolCallEvent = { sessionId: this.session.id, turnId: turn.id, agent, callId: call.id, toolId: tool.id, name: call.name, input, decision };
    // Digest and summary cost more than the decision itself: only made when there is an audit log.
    const auditBase: AuditBase = this.tree.options.audit === undefined ? { session: this.session.id } : {
      session: this.session.id, turn: turn.id, agent, tool: tool.id, inputDigest: inputDigest(input, canonical),
      summary: summarizeInput(input), rule: decision.rule, lowered: decision.lowered,
      ...(decision.rule === null ? { default: decision.defaultFrom ?? 'permissionMode' } : {}),
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      ...auditParts(decision.parts),
      ...(decision.review !== undefined ? { review: decision.review } : {}),
    };

    let effective = decision.decision;
    if (effective === 'ask' && NEVER_ASK.has(tool.id)) effective = 'allow';

    if (hookTitle !== undefined) {
      return this.askThenRun(turn, tool, call, input, canonical, decision, base, auditBase, { hook: hookTitle.hook, title: hookTitle.title });
    }
    if (effective === 'deny') {
      this.tree.audit({ event: 'decision', ...auditBase, decision: 'deny' });
      this.tree.emit({ type: 'tool-call', ...base, effective: 'deny', by: 'policy' });
      return this.denial(tool.id, decision.reason ?? 'the policy denies this call', call, turn);
    }
    const granted = effective === 'ask' && hookTitle === undefined ? this.grants.answering(grantCall(tool, input, canonical, decision)) : undefined;
    if (granted !== undefined) {
      const run = this.runSandbox(decision, tool, { by: 'person' });
      this.tree.audit({ event: 'decision', ...auditBase, decision: 'allow', answeredBy: 'session', ...grantAuditFields(granted), ...this.sandboxField(tool, run), ...marksField(decision) });
      this.tree.mark(this.session, tool.id, decision.marks);
      this.tree.emit({ type: 'tool-call', ...base, effective: 'allow', by: 'session', ...grantedUntil(granted), ...this.sandboxField(tool, run) });
      return this.runTool(turn, tool, call, input, decision, run, auditBase);
    }
    if (effective === 'ask') {
      return this.askThenRun(turn, tool, call, input, canonical, decision, base, auditBase, undefined);
    }
    const run = this.runSandbox(decision, tool, { by: 'policy' });
    this.tree.audit({ event: 'decision', ...auditBase, decision: 'allow', ...this.sandboxField(tool, run), ...marksField(decision) });
    // Before the tool runs: a call judged after this one (in the same batch, or by a subagent) sees the marks.
    this.tree.mark(this.session, tool.id, decision.marks);
    this.tree.emit({ type: 'tool-call', ...base, effective: 'allow', by: 'policy', ...this.sandboxField(tool, run) });
    return this.runTool(turn, tool, call, input, decision, run, auditBase);
  }

  private runSandbox(decision: PolicyDecision, tool: RuntimeTool, allowed: AllowedBy): RunSandbox | undefined {
    return runSandbox(decision, tool.id, allowed, this.tree.protectedPaths(), deniedPathsOf(() => this.tree.currentPolicy(), this.tree.workspaceFolder));
  }

  /** How a run_command call runs (or would run, once a person allows it), for its event and audit line; nothing for other tools. */
  private sandboxField(tool: RuntimeTool, run: RunSandbox | undefined): { sandbox?: ReturnType<typeof sandboxReportOf> } {
    return tool.id === SANDBOXED_TOOL ? { sandbox: sandboxReportOf(run) } : {};
  }

  private async askThenRun(
    turn: TurnCore, tool: RuntimeTool, call: ModelToolCall, input: unknown, canonical: string, decision: PolicyDecision,
    base: ToolCallEvent,
    auditBase: AuditBase,
    hook: { hook: string; title: string } | undefined,
  ): Promise<string> {
    const widest = longestGrant(decision, hook !== undefined);
    const grantedParts = widest === 'never' ? [] : this.grants.grantedParts(grantCall(tool, input, canonical, decision));
    // How the command would run if a person allows it: the notification and the audit say so.
    const run = this.runSandbox(decision, tool, { by: 'person', ...(hook ? { hook: hook.hook } : {}) });
    const timeoutSeconds = hook === undefined ? decision.ask?.timeout : undefined;
    const request: ApprovalRequest = {
      tool: {
        id: tool.id, name: call.name, kind: tool.kind, description: tool.description, annotations: { ...tool.annotations },
        ...(tool.pathArgs ? { pathArgs: tool.pathArgs } : {}),
        ...(tool.commandArg ? { commandArg: tool.commandArg } : {}),
        ...(tool.urlArgs ? { urlArgs: tool.urlArgs } : {}),
        ...(tool.tags ? { tags: tool.tags } : {}),
      },
      ...(hook ? { hook: hook.hook } : {}),
      title: hook?.title ?? `${this.session.agentName} wants to run ${tool.id}: ${summarizeInput(input)}`,
      input,
      decision,
      sessionAllowed: widest === 'session',
      longestGrant: widest,
      ...(grantedParts.length > 0 ? { grantedParts } : {}),
      ...this.sandboxField(tool, run),
      ...(timeoutSeconds !== undefined ? { timeout: { at: Date.now() + timeoutSeconds * 1000, onTimeout: decision.ask?.onTimeout ?? 'deny' } } : {}),
    };
    const callback = new OpenApproval(newId('cb'), this.session.id, turn.id, this.session.agentName, Date.now(), request);
    // The ask is both a decision and an open callback: one line says both, so a reload can tell what was left open.
    this.tree.audit({ event: 'callback-opened', ...auditBase, decision: 'ask', callback: callback.id, ...(hook ? { hook: hook.hook } : {}), ...this.sandboxField(tool, run) });
    // No one is asked about a call whose line was not written (tree.ts, batchAudit).
    const held = this.tree.auditWritten();
    if (held !== undefined) await held;
    this.tree.emit({ type: 'tool-call', ...base, effective: 'ask', by: hook ? `hook:${hook.hook}` : 'policy', ...this.sandboxField(tool, run) });
    const outcome = await openCallback(this.tree, callback, timeoutSeconds, decision.ask?.onTimeout ?? 'deny');
    if (outcome.kind === 'closed') return JSON.stringify({ error: `not run: ${outcome.reason}` });
    const answer = outcome.answer;
    if (answer.type === 'allow') {
      if (answer.scope !== 'once') this.grants.grant(grantCall(tool, input, canonical, decision), answer.scope === 'duration' ? answer.seconds : undefined);
      // The callback-settled line (callbacks.ts) lists these marks.
      this.tree.mark(this.session, tool.id, decision.marks);
      // A person allowed a change to protected files: a sandboxed command running meanwhile must not undo it.
      const approved = hook?.hook === PROTECTED_FILES_HOOK ? beginApprovedProtectedChange() : undefined;
      try {
        return await this.runTool(turn, tool, call, input, decision, run, auditBase);
      } finally {
        approved?.();
      }
    }
    if (outcome.by === 'timeout') {
      return this.denial(tool.id, `the approval timed out after ${timeoutSeconds} s and the call was denied`, call, turn);
    }
    const reason = answer.type === 'deny' && answer.options.reason ? answer.options.reason : 'a person denied this call';
    return this.denial(tool.id, reason, call, turn);
  }

  private denial(toolId: string, reason: string, call: ModelToolCall, turn: TurnCore): string {
    const content = JSON.stringify({ error: `denied: ${reason}`, tool: toolId });
    this.tree.emit({ type: 'tool-result', sessionId: this.session.id, turnId: turn.id, agent: this.session.agentName, callId: call.id, toolId, ok: false, content });
    return content;
  }

  private async runTool(turn: TurnCore, tool: RuntimeTool, call: ModelToolCall, input: unknown, decision: PolicyDecision, run?: RunSandbox, auditBase?: AuditBase): Promise<string> {
    const held = this.tree.auditWritten();
    if (held !== undefined) await held; // its line, held with the response's (tree.ts, batchAudit), is written first
    if (tool.signIn) {
      const signedIn = await ensureSignedIn(this.tree, this.session, turn, tool.signIn);
      if (signedIn !== true) return this.finishCall(turn, tool, call, false, JSON.stringify({ error: signedIn }));
    }
    let content: string;
    let ok = true;
    // Made at the first request for input: most calls make none.
    let elicitations: CallElicitations | undefined;
    let ended = false;
    // A sandboxed command whose connections are each judged: the proxy's judge, and the questions it opens.
    const connections = run?.judgesHosts ? this.connections(turn, tool, input) : undefined;
    const sandbox = run ? {
      ...run, onUndone: (undone: readonly string[], left: readonly string[]) => this.undone(turn, tool, auditBase, undone, left),
      ...(connections ? { connections: { judge: connections.judge, namedHosts: this.tree.currentPolicy()?.namedHosts() ?? [] } } : {}),
    } : undefined;
    try {
      const result = await this.tree.track(async () => {
        try {
          return await tool.run(input, {
            sessionId: this.session.id, turnId: turn.id, agent: this.session.agentName, workspaceFolder: this.tree.workspaceFolder, signal: turn.abort.signal,
            elicit: (request, options) => elicit(this.tree, this.session, turn, tool, request, (elicitations ??= { ids: new Set(), pending: new Set(), closed: ended }), options?.signal),
            ...(this.subagents ? { subagents: this.subagents } : {}),
            ...(sandbox ? { sandbox } : {}),
          });
        } finally {
          // A request for input cannot outlive the call that made it: nothing would receive the answer.
          ended = true;
          if (elicitations) await closeElicitations(this.tree, elicitations, 'the tool call ended');
          if (connections) await connections.close('the command ended');
        }
      });
      content = typeof result === 'string' ? result : (JSON.stringify(result) ?? 'null');
    } catch (error) {
      ok = false;
      content = JSON.stringify({ error: error instanceof Error ? error.message : String(error) });
    }
    if (decision.review === 'result') {
      // An error is reviewed too: a server's error text can carry instructions as well as its result.
      const reviewed = await reviewResult(this.tree, this.session, turn, tool, call.name, input, ok, content, decision);
      ok &&= reviewed.passed;
      content = reviewed.content;
    }
    return this.finishCall(turn, tool, call, ok, content);
  }

  /** The judge of a sandboxed command's connections (connectionAsks.ts). */
  private connections(turn: TurnCore, tool: RuntimeTool, input: unknown): CommandConnections {
    const command = typeof (input as { command?: unknown }).command === 'string' ? (input as { command: string }).command : '';
    return commandConnections({
      tree: this.tree, session: this.session, turn, tool, command,
      policy: () => this.tree.currentPolicy(),
      trusted: () => this.tree.trustedNow(),
    });
  }

  /** A sandboxed command changed protected paths that could not be bound: what was undone goes to the audit and the transcript. */
  private undone(turn: TurnCore, tool: RuntimeTool, auditBase: AuditBase | undefined, undone: readonly string[], left: readonly string[]): void {
    // An audit line has a byte limit and arrays are not cut: a few sentences, each bounded.
    const all = [...undone, ...left];
    const lines = all.slice(0, 8).map((line) => truncate(line, 300));
    if (all.length > lines.length) lines.push(`… and ${all.length - lines.length} more`);
    this.tree.audit({ event: 'sandbox-cleanup', ...(auditBase ?? { session: this.session.id }), turn: turn.id, tool: tool.id, undone: lines });
    for (const line of [...undone, ...left]) this.tree.emit({ type: 'warning', sessionId: this.session.id, message: `sandbox: ${line}` });
  }

  private finishCall(turn: TurnCore, tool: RuntimeTool, call: ModelToolCall, ok: boolean, content: string): string {
    this.tree.emit({ type: 'tool-result', sessionId: this.session.id, turnId: turn.id, agent: this.session.agentName, callId: call.id, toolId: tool.id, ok, content });
    return content;
  }
}
