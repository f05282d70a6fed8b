// Hidden tools (issue 14): a tool the policy denies outright for an agent (every call of it
// denied, whatever its input and whatever the session has done) is not offered to that agent's
// model. The proof walks the rules as the judge does (managed, workspace, user, first match
// wins) but reads only what does not depend on the call: the tool's id, kind, hints and tags and
// the agent's name. A rule that also reads the call (paths, commands, input, domains, urls, when,
// or a field this file does not know) may or may not match: a deny of that sort is walked past
// (it denies or lets the walk go on, both fine), any other stops the proof. So hiding is sound
// (a hidden tool's every call is denied) but not complete (a tool may be denied for every input
// without a proof here, e.g. by an allow on paths no input can name).
import { effectiveHints, kindFromId, type ToolDescriptor } from './rules/call.js';
import { toolMismatch, type CompiledRule, type LayerName, type RuleRef, type ToolView } from './rules/compile.js';
import { literalPrefix, isOpenPrefix } from './globs/globs.js';
import type { Policy, PolicyLayer } from './policy.js';
import { SUBAGENT_TOOL_ANNOTATIONS } from './file/policyNames.js';
import type { Decision, ToolKind } from './file/schema.js';

/** `agents.spawn` as the runtime offers it (runtime/subagentTools.ts): hidden when every start is denied. */
export const SPAWN_TOOL: ToolDescriptor = { id: 'agents.spawn', kind: 'builtin', annotations: SUBAGENT_TOOL_ANNOTATIONS };

/** Why a tool is hidden: the rule, or the default, that denies every call of it. */
export interface OutrightDenial {
  /** The deny rule that decides every call; null when the default does. */
  rule: RuleRef | null;
  /** When the default denies: the layer that sets it, or null for the built-in one (the agent's permissionMode). */
  defaultFrom?: LayerName | null;
  /** The rule's reason. */
  reason?: string;
}

/** What a tool list is judged with beyond the policy: the decision when no layer sets a default (the agent's permissionMode). */
export interface HiddenToolOptions {
  fallbackDefault?: Decision;
}

/**
 * The fields of a rule that match nothing call-dependent and never turn its deny into anything
 * else. A field not named here (paths, commands, input, domains, urls, when, and any added later)
 * makes the rule one that may or may not match a call.
 */
const READS_ONLY_THE_TOOL: ReadonlySet<string> = new Set([
  'id', 'decision', 'reason', 'tools', 'kinds', 'agents', 'hints', 'tags',
  'timeout', 'onTimeout', 'remember', 'sandbox', 'marks', 'review',
]);

/** True when the rule decides every call its tool and agent matchers let through, whatever the input and the session's marks. */
export function readsOnlyTheTool(rule: CompiledRule): boolean {
  const fields = rule.rule as Record<string, unknown>;
  for (const key of Object.keys(fields)) if (fields[key] !== undefined && !READS_ONLY_THE_TOOL.has(key)) return false;
  return true;
}

/** How much of a set of calls a rule's tool and agent matchers let through. */
type Reach = 'every' | 'some' | 'none';

interface Walked {
  denial?: OutrightDenial;
  /** Deny rules that read only the tool and reach some of the tools walked for (a server's tools): they hide those. */
  partial: CompiledRule[];
}

/**
 * The judge's walk over every layer, for the calls a rule `reach`es: the first rule that reaches
 * every call and reads only the tool decides them all; a deny that reaches only some is walked
 * past; any other rule that may match one of them ends the proof.
 */
function walk(policy: Policy | undefined, rulesOf: (layer: PolicyLayer) => readonly CompiledRule[], reach: (rule: CompiledRule) => Reach, options: HiddenToolOptions): Walked {
  const partial: CompiledRule[] = [];
  for (const { state } of policy?.layers ?? []) {
    // An invalid file with no valid version asks every call that reaches it.
    if (state.kind === 'broken') return { partial };
    for (const rule of rulesOf(state.layer)) {
      const r = reach(rule);
      if (r === 'none') continue;
      const decidesAll = readsOnlyTheTool(rule);
      if (r === 'every' && decidesAll) return rule.decision === 'deny' ? { denial: denialBy(rule), partial } : { partial };
      if (rule.decision !== 'deny') return { partial };
      if (decidesAll) partial.push(rule);
    }
  }
  const fallback = policy?.defaultDecision(options.fallbackDefault) ?? { decision: options.fallbackDefault ?? 'ask', from: null };
  return fallback.decision === 'deny' ? { denial: { rule: null, defaultFrom: fallback.from }, partial } : { partial };
}

function denialBy(rule: CompiledRule): OutrightDenial {
  return { rule: rule.ref, ...(rule.rule.reason !== undefined ? { reason: rule.rule.reason } : {}) };
}

/**
 * Whether every call of `tool` by `agent` is denied, whatever its input and the session's marks;
 * and if so by what. `policy` undefined: only the permission mode decides (the runtime without a policy).
 */
export function outrightDenial(policy: Policy | undefined, tool: ToolDescriptor, agent: string, options: HiddenToolOptions = {}): OutrightDenial | undefined {
  const view: ToolView = { call: { tool, agent }, kind: tool.kind ?? kindFromId(tool.id), hints: effectiveHints(tool.annotations) };
  return walk(policy, (layer) => layer.candidates(tool.id), (rule) => (toolMismatch(rule, view) === null ? 'every' : 'none'), options).denial;
}

/** What can be said of tools not listed yet: all hidden, or some by these rules. */
export interface UnlistedToolsHidden {
  /** Every one of them is denied outright, by this. */
  all?: OutrightDenial;
  /** Deny rules that hide those of them they match (by name, hints or tags), unless an earlier rule decides them. */
  some: RuleRef[];
}

/**
 * Tools known before they are listed only by their ids and kind, not their hints and tags: an MCP
 * server's (`{ sourceId: 'mcp.github' }`: ids `mcp.github.<name>`, kind mcp), or a client tool an
 * agents file names (`{ id: 'client.lookup', kind: 'client' }`).
 */
export type UnlistedTools = { sourceId: string } | { id: string; kind: ToolKind };

/** Whether the policy hides all of these tools from this agent, or which rules hide some. */
export function unlistedToolsHidden(policy: Policy | undefined, tools: UnlistedTools, agent: string, options: HiddenToolOptions = {}): UnlistedToolsHidden {
  const kind: ToolKind = 'sourceId' in tools ? 'mcp' : tools.kind;
  const reach = (rule: CompiledRule): Reach => {
    if (rule.kinds && !rule.kinds.has(kind)) return 'none';
    if (rule.agents && !rule.agents.test(agent)) return 'none';
    const byName = 'sourceId' in tools ? nameReach(rule, `${tools.sourceId}.`) : rule.tools === undefined || rule.tools.test(tools.id) ? 'every' : 'none';
    if (byName === 'none') return 'none';
    // Hints and tags are what the tool will declare: not known yet.
    return byName === 'every' && rule.hints === undefined && rule.tags === undefined ? 'every' : 'some';
  };
  const walked = walk(policy, (layer) => ('sourceId' in tools ? layer.rules : layer.candidates(tools.id)), reach, options);
  return { ...(walked.denial ? { all: walked.denial } : {}), some: walked.partial.map((r) => r.ref) };
}

/** Whether a rule's `tools` reach every id that starts with `prefix`, some of them, or none. */
function nameReach(rule: CompiledRule, prefix: string): Reach {
  const tools = rule.tools;
  if (tools === undefined) return 'every';
  const canStartWith = (glob: string): boolean => {
    const lit = literalPrefix(glob);
    return lit.startsWith(prefix) || prefix.startsWith(lit);
  };
  if (!tools.positives.some(canStartWith)) return 'none';
  const everyName = tools.negatives.length === 0 && tools.test(`${prefix}x`)
    && tools.positives.some((g) => isOpenPrefix(g) && prefix.startsWith(g.replace(/\*+$/, '')));
  return everyName ? 'every' : 'some';
}

/** `workspace rule 3 "no-github" (.agentpolicy.jsonc:12)`, or which default denies. */
export function describeDenial(denial: OutrightDenial): string {
  const r = denial.rule;
  if (r !== null) return `${r.layer} rule ${r.index + 1}${r.id !== null ? ` "${r.id}"` : ''} (${r.file}:${r.line})`;
  return denial.defaultFrom ? `the ${denial.defaultFrom} policy's default` : 'the default (no policy sets one: the permission mode denies)';
}

/** The sentence explain shows: this tool is not offered to the agent's model, and why. */
export function hiddenSentence(denial: OutrightDenial, agent: string): string {
  return `this tool is hidden from agent "${agent}"'s model: ${describeDenial(denial)} denies every call of it, whatever its input`;
}
