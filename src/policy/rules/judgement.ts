// Judging a call part by part (policy-format.md, "Each part is judged on its own; the call
// takes the strictest"): each part goes through the whole ordered rule list, first match wins
// for it, trust lowering and the sandbox conditions apply to it; then the strictest part decides.
import { pathWords } from './literalStartIndex.js';
import { urlsFailure } from '../network/urls.js';
import { unnamedReaches } from './commandPatterns.js';
import { mismatch, type CompiledRule, type LayerName } from './compile.js';
import { narrowestRemember } from '../file/grantLength.js';
import { unionMarks, whenBecause, whenFailure, whenHolds, type SessionMarks } from './flowMarks.js';
import type { AskSettings, PartDecision, PolicyDecision, SandboxRun, TraceEntry } from './decision.js';
import type { CallPart, CallView, PreparedCall } from './preparedCall.js';
import type { ToolRules } from './toolIndex.js';
import type { Decision, Rule, SandboxMode } from '../file/schema.js';

/** A layer as the judge sees it: its rules for a tool, or the file that broke it. */
export interface JudgedLayer {
  name: LayerName;
  /** Set when the layer's file is invalid and no valid version is in force. */
  broken?: string;
  /** The layer's rules that can judge this tool, with their indexes. */
  forTool(toolId: string): ToolRules;
}

/** Tests compare the indexed engine with the plain ordered scan of every candidate. */
export const judgeTesting = { plainScan: false };

/** Whether this call's commands can run in the sandbox, and if not, why. */
export type SandboxAvailability = { available: true } | { available: false; why: string };

export interface JudgeContext {
  layers: readonly JudgedLayer[];
  trusted: boolean;
  fallback: { decision: Decision; from: LayerName | null };
  sandboxMode: { mode: SandboxMode; from: LayerName | null };
  sandbox: SandboxAvailability;
  /** The session's marks (flow rules' `when`). */
  marks: SessionMarks;
  /** Judging one connection of a sandboxed command (connection.ts): only rules with `domains` or `urls` decide; none: ask. */
  connection?: true;
}

/** One view (the whole call or one part) as the rule list judged it. */
interface Judgement {
  decision: Decision;
  rule: CompiledRule | null;
  lowered: boolean;
  reason?: string;
  defaultFrom?: LayerName | null;
  ask?: AskSettings;
  /** The invalid file that made this part an ask. */
  broken?: string;
  /** A tighten-only part no ask or deny rule matched: it does not count. */
  neutral?: boolean;
}

const LOWERED_REASON = 'the workspace is not trusted, so its allow rules and default only ask';
const STRICTNESS: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };
const PLAIN_ASK: AskSettings = { onTimeout: 'deny', remember: 'session' };

const NO_HOST_RULE = 'no rule with domains or urls decides this host for this command';

/** The tool the runtime runs inside its sandbox; no other tool's commands are ever sandboxed. */
export const SANDBOXED_TOOL = 'builtin.run_command';

/** Whether this call's commands would run sandboxed, and why not. */
export function sandboxAvailability(
  toolId: string,
  mode: { mode: SandboxMode; from: LayerName | null },
  machine: { sandbox?: boolean; sandboxUnavailable?: string },
): SandboxAvailability {
  if (toolId !== SANDBOXED_TOOL) return new NotSandboxedTool(toolId);
  if (mode.mode === 'off') return { available: false, why: `the sandbox is off (the ${mode.from ?? 'built-in'} policy says "sandbox": "off")` };
  if (machine.sandbox !== true) return { available: false, why: machine.sandboxUnavailable ?? 'this machine has no sandbox' };
  return { available: true };
}

/** A tool the runtime never sandboxes: every call has one, few read why (an allow with sandbox conditions). */
class NotSandboxedTool {
  readonly available = false;
  constructor(private readonly toolId: string) {}

  get why(): string {
    return `${this.toolId} does not run its commands in Agent Policy's sandbox`;
  }
}

/** Judges the whole call, or each of its parts, and combines them into the call's decision. */
export function judgeCall(prepared: PreparedCall, context: JudgeContext, warnings: string[], trace: TraceEntry[] | undefined): PolicyDecision {
  const parts = prepared.parts();
  if (parts === undefined) {
    const judged = judgeView(prepared, context, trace, undefined);
    return finish(prepared, context, [judged], undefined, warnings);
  }
  const judged = parts.map((part, index) => judgeView(part, context, trace, { label: part.label, index }, part.tightenOnly));
  return finish(prepared, context, judged, parts, warnings);
}

/** One part of a connection as the rules with domains or urls judged it (connection.ts). */
export interface ConnectionPartJudgement {
  part: string;
  decision: Decision;
  rule: CompiledRule | null;
  reason?: string;
}

/** Judges each part of a connection's view on its own (the caller combines them: connection.ts). */
export function judgeConnectionParts(prepared: PreparedCall, context: JudgeContext): ConnectionPartJudgement[] {
  const connection: JudgeContext = { ...context, connection: true };
  const parts = prepared.parts();
  const views: Array<{ view: CallView; label: string; tightenOnly: boolean }> =
    parts === undefined ? [{ view: prepared, label: '', tightenOnly: false }] : parts.map((p) => ({ view: p, label: p.label, tightenOnly: p.tightenOnly }));
  return views.map(({ view, label, tightenOnly }) => {
    const j = judgeView(view, connection, undefined, undefined, tightenOnly);
    // A tighten-only part no ask or deny rule matched does not count: as if no rule allowed it.
    const decision = j.neutral ? 'ask' : j.decision;
    return { part: label, decision, rule: j.neutral ? null : j.rule, ...(j.reason !== undefined ? { reason: j.reason } : {}) };
  });
}

/**
 * The rules of a layer that can decide this view, in file order: for one simple command that can
 * be seen into, or for a call with no command and one path, only those its leading words (or
 * segments) do not rule out (literalStartIndex.ts); else every candidate.
 * Explain uses the same lists (what a decision worked out, and so its warnings, must not differ),
 * so its trace leaves out the rules the index rules out.
 */
function rulesFor(layer: JudgedLayer, toolId: string, view: CallView): readonly CompiledRule[] {
  const rules = layer.forTool(toolId);
  if (judgeTesting.plainScan) return rules.candidates;
  const command = view.command;
  if (!command.present) {
    // One path that can be seen (a string): only the rules its leading segments do not rule out.
    const index = rules.pathIndex;
    if (!index.useful) return rules.candidates;
    const paths = view.paths;
    if (paths.opaque || paths.paths.length !== 1) return rules.candidates;
    return index.forWords(pathWords(paths.paths[0]!.relative));
  }
  if (!command.parsed || command.commands.length !== 1) return rules.candidates;
  const only = command.commands[0]!;
  // A program name worked out at run time is taken by every tightening command rule.
  if (only.dynamic === true) return rules.candidates;
  return rules.commandIndex.forWords(only.words);
}

function judgeView(view: CallView, context: JudgeContext, trace: TraceEntry[] | undefined, part: { label: string; index: number } | undefined, tightenOnly = false): Judgement {
  const toolId = view.call.tool.id;
  for (const layer of context.layers) {
    if (layer.broken !== undefined) {
      return {
        decision: 'ask', rule: null, lowered: false, defaultFrom: null, broken: layer.broken,
        reason: `the ${layer.name} policy ${layer.broken} is invalid and has no valid version in force, so every call it could decide is asked`,
        ask: { onTimeout: 'deny', remember: 'never' },
      };
    }
    for (const rule of rulesFor(layer, toolId, view)) {
      if (tightenOnly && rule.decision === 'allow') continue;
      if (context.connection && rule.rule.domains === undefined && rule.rule.urls === undefined) continue;
      // `when` last: the explanation then says a rule fits the call but not the session's marks.
      const failed = mismatch(rule, view, true) ?? (whenHolds(rule.rule.when, rule.decision, context.marks) ? null : 'when');
      trace?.push({
        ...(part !== undefined ? { part: part.label, partIndex: part.index } : {}), rule: rule.ref, decision: rule.decision, failed,
        ...(failed === 'when' ? { why: whenFailure(rule.rule.when!, context.marks) } : {}),
        ...(failed === 'domains' || failed === 'urls' ? { why: urlsFailure(view.urls) } : {}),
        ...(failed === 'commands' ? whyCommands(rule, view) : {}),
      });
      if (failed !== null) continue;
      const lowered = rule.decision === 'allow' && layer.name === 'workspace' && !context.trusted;
      const ruleReason = joinOptional(rule.rule.reason, whenBecause(rule.rule.when, context.marks));
      if (lowered) {
        return { decision: 'ask', rule, lowered, reason: joinReasons(ruleReason, LOWERED_REASON), ask: PLAIN_ASK };
      }
      const judged: Judgement = { decision: rule.decision, rule, lowered: false };
      if (ruleReason !== undefined) judged.reason = ruleReason;
      if (rule.decision === 'ask') {
        judged.ask = {
          onTimeout: rule.rule.onTimeout ?? 'deny',
          remember: rule.rule.remember ?? 'session',
          ...(rule.rule.timeout !== undefined ? { timeout: rule.rule.timeout } : {}),
        };
      }
      return rule.decision === 'allow' ? sandboxConditions(judged, view, context) : judged;
    }
  }
  if (tightenOnly) return { decision: 'allow', rule: null, lowered: false, neutral: true };
  if (context.connection) return { decision: 'ask', rule: null, lowered: false, defaultFrom: null, reason: NO_HOST_RULE, ask: PLAIN_ASK };
  const { decision, from } = context.fallback;
  const lowered = decision === 'allow' && from === 'workspace' && !context.trusted;
  if (lowered) return { decision: 'ask', rule: null, lowered, defaultFrom: from, reason: LOWERED_REASON, ask: PLAIN_ASK };
  const judged: Judgement = { decision, rule: null, lowered: false, defaultFrom: from };
  if (decision === 'ask') judged.ask = PLAIN_ASK;
  return decision === 'allow' ? sandboxConditions(judged, view, context) : judged;
}

/** An allow that holds only inside a sandbox this call cannot have becomes an ask that says why. */
function sandboxConditions(judged: Judgement, view: CallView, context: JudgeContext): Judgement {
  if (context.sandbox.available) return judged;
  const why = context.sandbox.why;
  if (judged.rule?.rule.sandbox !== undefined) {
    return { ...judged, decision: 'ask', reason: joinReasons(judged.rule.rule.reason, `this rule allows it only inside the sandbox, and ${why}`), ask: PLAIN_ASK };
  }
  if (context.sandboxMode.mode === 'required' && view.command.present) {
    const by = context.sandboxMode.from ?? 'built-in';
    return { ...judged, decision: 'ask', reason: joinReasons(judged.reason, `the ${by} policy requires every command to run sandboxed ("sandbox": "required"), and ${why}`), ask: PLAIN_ASK };
  }
  return judged;
}

function finish(prepared: PreparedCall, context: JudgeContext, judged: Judgement[], parts: CallPart[] | undefined, warnings: string[]): PolicyDecision {
  // The first part of the strictest decision names the rule; a part that did not count never does.
  let strictest = 0;
  for (let i = 0; i < judged.length; i++) {
    if (judged[i]!.neutral === true) continue;
    strictest = i;
    break;
  }
  for (let i = strictest + 1; i < judged.length; i++) if (STRICTNESS[judged[i]!.decision] > STRICTNESS[judged[strictest]!.decision]) strictest = i;
  const top = judged[strictest]!;
  const result: PolicyDecision = { decision: top.decision, rule: top.rule?.ref ?? null, lowered: top.lowered, warnings };
  if (top.reason !== undefined) result.reason = top.reason;
  if (top.rule === null) result.defaultFrom = top.defaultFrom ?? null;
  if (top.decision === 'ask') result.ask = combinedAsk(judged);
  let marked = false;
  let reviewed = false;
  for (const j of judged) {
    if (j.broken !== undefined && !warnings.includes(`${j.broken} is invalid`)) warnings.push(`${j.broken} is invalid`);
    if (j.rule?.rule.marks !== undefined) marked = true;
    if (j.rule?.rule.review !== undefined) reviewed = true;
  }
  if (parts !== undefined) {
    result.parts = parts.map((part, i): PartDecision => {
      const j = judged[i]!;
      return {
        part: part.label, decision: j.decision, rule: j.rule?.ref ?? null,
        ...(j.rule === null && !j.neutral ? { defaultFrom: j.defaultFrom ?? null } : {}),
        ...(j.reason !== undefined ? { reason: j.reason } : {}),
        ...(part.note !== undefined ? { note: part.note } : {}),
      };
    });
  }
  const sandbox = sandboxRun(prepared, context, judged);
  if (sandbox !== undefined) result.sandbox = sandbox;
  // Every part's deciding rule marks the session if the call runs (a denied call never runs).
  if (top.decision !== 'deny') {
    if (marked) {
      const marks = unionMarks(judged.map((j) => j.rule?.rule.marks));
      if (marks.length > 0) result.marks = marks;
    }
    // Result review: any part's deciding rule asks for it (the safe reading: one reviewed part reviews the call).
    if (reviewed) result.review = 'result';
  }
  return result;
}

/** Several parts ask: the question takes the strictest of their settings. */
function combinedAsk(judged: readonly Judgement[]): AskSettings {
  const asks = judged.filter((j) => j.decision === 'ask').map((j) => j.ask ?? PLAIN_ASK);
  if (asks.length === 1) return asks[0]!;
  const timeouts = asks.map((a) => a.timeout).filter((t): t is number => t !== undefined);
  return {
    onTimeout: asks.some((a) => a.onTimeout === 'deny') ? 'deny' : 'keep',
    remember: narrowestRemember(asks.map((a) => a.remember)),
    ...(timeouts.length > 0 ? { timeout: Math.min(...timeouts) } : {}),
  };
}

/**
 * How a sandboxable command is to run: in the sandbox where there is one; reaching every host
 * unjudged only when every part was allowed by a rule that says so (grantsNetwork); with no
 * network at all when a deciding rule says `"network": false`; else each connection is judged by
 * the sandbox's proxy (connection.ts).
 */
function sandboxRun(prepared: PreparedCall, context: JudgeContext, judged: readonly Judgement[]): SandboxRun | undefined {
  if (prepared.call.tool.id !== SANDBOXED_TOOL) return undefined;
  let network = true;
  let offline = false;
  // Credential variables: only those every counted part's allowing rule passes (none when a part was not allowed by a rule).
  let env: Set<string> | undefined;
  let mask: Map<string, Set<string>> | undefined;
  for (const j of judged) {
    if (j.decision === 'deny') return undefined;
    if (j.neutral) continue;
    if (j.decision !== 'allow' || j.rule === null || !grantsNetwork(j.rule.rule)) network = false;
    const sandbox = j.rule?.rule.sandbox;
    if (typeof sandbox === 'object' && sandbox.network === false) offline = true;
    // Masked secrets: only those every counted part's allowing rule masks, for the hosts they all name.
    const masks = j.decision === 'allow' && typeof sandbox === 'object' ? (sandbox.mask ?? {}) : {};
    // A rule that both passes and masks a variable masks it: it never passes that one in the clear.
    const passed = j.decision === 'allow' && typeof sandbox === 'object' ? (sandbox.env ?? []).filter((name) => !Object.hasOwn(masks, name)) : [];
    env = env === undefined ? new Set(passed) : new Set(passed.filter((name) => env!.has(name)));
    const next = new Map<string, Set<string>>();
    for (const name of Object.keys(masks)) {
      const hosts = new Set((masks[name] ?? []).map((h) => h.toLowerCase()));
      const before = mask?.get(name);
      if (mask === undefined) next.set(name, hosts);
      else if (before !== undefined) next.set(name, new Set([...hosts].filter((h) => before.has(h))));
    }
    mask = next;
  }
  // A variable both passed and masked is masked: its real value never enters the sandbox.
  const masked = [...(mask ?? new Map<string, Set<string>>()).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const names = [...(env ?? [])].filter((name) => !mask?.has(name)).sort();
  return {
    sandboxed: context.sandbox.available, network: network && !offline, ...(offline ? { offline: true } : {}), ...(names.length > 0 ? { env: names } : {}),
    ...(masked.length > 0 ? { mask: Object.fromEntries(masked.map(([name, hosts]) => [name, [...hosts].sort()])) } : {}),
  };
}

/**
 * An allow rule lets its command reach every host, unjudged, only when it says
 * `"sandbox": { "network": true }`. A rule with `domains` or `urls` no longer turns the whole
 * network on: the sandbox's proxy judges each connection by those rules instead.
 */
export function grantsNetwork(rule: Rule): boolean {
  const sandbox = rule.sandbox;
  return typeof sandbox === 'object' && sandbox.network === true;
}

function joinReasons(a: string | undefined, b: string): string {
  return a ? `${a} (${b})` : b;
}

function joinOptional(a: string | undefined, b: string | undefined): string | undefined {
  return b === undefined ? a : joinReasons(a, b);
}

/** For a trace: what an allowing rule's patterns leave unnamed (src/policy/shell/programs/), when that is why it did not match. */
function whyCommands(rule: CompiledRule, view: CallView): { why?: string } {
  const why = unnamedReaches(rule.commands, rule.decision, view.command);
  return why === undefined ? {} : { why };
}
