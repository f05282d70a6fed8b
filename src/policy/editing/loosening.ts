// Loosening held for a person (issue 5): when the workspace policy changes outside the editor
// (a `git pull`, a tool, another program), what the change allows that the accepted version
// did not, and the decision while it waits to be accepted.
//
// Two parts with different guarantees:
//  - `heldDecision` is the safety: for ANY call, it never allows what the accepted version
//    would not allow. It does not depend on finding the calls that change.
//  - `looseningDiff` is the explanation shown to the person: the decisions that get more
//    permissive over representative calls built from both versions' rules, inline tests and
//    calls seen recently. It may miss a call no rule names; the hold still covers that call.
import { createHash } from 'node:crypto';
import type { ToolCall } from '../rules/call.js';
import { Policy, type DecideOptions, type PolicyDecision, type PolicyLayer } from '../policy.js';
import type { Decision } from '../file/schema.js';
import { callKey, probeCalls } from './probeCalls.js';

export interface LooseningChange {
  call: ToolCall;
  before: PolicyDecision;
  after: PolicyDecision;
  /** Flow rules: the marks of the session this change shows in (none: a fresh session). */
  marks?: string[];
}

export interface LooseningOptions {
  workspaceFolder: string;
  trusted?: boolean;
  /** More calls to judge, e.g. the calls audited recently in this workspace. */
  extra?: readonly ToolCall[];
  /** Resolve symbolic links (default true). */
  followSymlinks?: boolean;
  /** The decision when neither version decides and sets no default (default "ask"). */
  fallbackDefault?: Decision;
}

const RANK: Record<Decision, number> = { deny: 0, ask: 1, allow: 2 };

/** deny → ask, deny → allow, ask → allow. */
export function isLoosening(before: Decision, after: Decision): boolean {
  return RANK[after] > RANK[before];
}

/**
 * The calls whose decision gets more permissive from `accepted` (undefined: there was no
 * workspace policy) to `next`, each once, sorted by tool id. Both versions are judged as the
 * workspace layer alone. An invalid `next` loosens nothing: it is never put in force (the last
 * valid version stays, or every call is asked).
 */
export function looseningDiff(accepted: PolicyLayer | undefined, next: PolicyLayer, options: LooseningOptions): LooseningChange[] {
  if (!next.valid) return [];
  const acceptedPolicy = new Policy(accepted ? { workspace: accepted } : {});
  const nextPolicy = new Policy({ workspace: next });
  const decideOptions = toDecideOptions(options);
  // Flow rules: each call in a fresh session, then in one that carries every mark a `when` names.
  const marked = markedLabels(accepted ? [accepted, next] : [next]);
  const changes: Array<LooseningChange & { key: string }> = [];
  for (const call of probeCalls(accepted ? [accepted, next] : [next], options.extra)) {
    for (const marks of marked.length > 0 ? [[], marked] : [[]]) {
      const withMarks = { ...decideOptions, marks: new Set(marks) };
      const before = acceptedPolicy.decide(call, withMarks);
      const after = nextPolicy.decide(call, withMarks);
      if (!isLoosening(before.decision, after.decision) && !dropsReview(before, after)) continue;
      changes.push({ call, before, after, ...(marks.length > 0 ? { marks } : {}), key: callKey(call) });
      break;
    }
  }
  changes.sort((a, b) => (a.call.tool.id < b.call.tool.id ? -1 : a.call.tool.id > b.call.tool.id ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return changes.map(({ key: _key, ...change }) => change);
}

/** A change that stops reviewing a call's result loosens it too: the agent would get unread what a person read first. */
function dropsReview(before: PolicyDecision, after: PolicyDecision): boolean {
  return before.review !== undefined && before.decision !== 'deny' && after.review === undefined && after.decision !== 'deny';
}

/** Every label a rule's `when.marked` names in these layers, sorted. */
function markedLabels(layers: readonly PolicyLayer[]): string[] {
  const labels = new Set<string>();
  for (const layer of layers) for (const rule of layer.rules) for (const m of rule.rule.when?.marked ?? []) labels.add(m);
  return [...labels].sort();
}

function toDecideOptions(options: LooseningOptions): DecideOptions {
  return {
    workspaceFolder: options.workspaceFolder,
    ...(options.trusted !== undefined ? { trusted: options.trusted } : {}),
    ...(options.followSymlinks !== undefined ? { followSymlinks: options.followSymlinks } : {}),
    ...(options.fallbackDefault !== undefined ? { fallbackDefault: options.fallbackDefault } : {}),
  };
}

/** `builtin.run_command {"command":"npm publish"}: ask (default) → allow (rule 3 "publish")`. */
export function describeChange(change: LooseningChange): string {
  const { call } = change;
  const extras: string[] = [];
  if (call.agent !== 'main') extras.push(`agent "${call.agent}"`);
  if (call.tool.kind !== undefined) extras.push(`kind ${call.tool.kind}`);
  if (call.tool.annotations) extras.push(`hints ${JSON.stringify(call.tool.annotations)}`);
  if (call.tool.tags?.length) extras.push(`tags ${call.tool.tags.join(', ')}`);
  const input = call.input === undefined ? '(no input)' : JSON.stringify(call.input);
  if (change.marks) extras.push(`in a session marked ${change.marks.join(', ')}`);
  const who = extras.length > 0 ? ` (${extras.join('; ')})` : '';
  return `${call.tool.id} ${input}${who}: ${describeOutcome(change.before)} → ${describeOutcome(change.after)}`;
}

function describeOutcome(d: PolicyDecision): string {
  const reviewed = d.review !== undefined ? ', result reviewed' : '';
  if (d.rule === null) return `${d.decision} (default${reviewed})`;
  return `${d.decision} (rule ${d.rule.index + 1}${d.rule.id !== null ? ` "${d.rule.id}"` : ''}${reviewed})`;
}

export const HELD_REASON =
  'the workspace policy changed outside the editor and now allows this, but the change is not accepted yet; accept it to let such calls run without asking';

/**
 * The decision while a change of the workspace policy waits for a person: `next` decides,
 * except that an `allow` which `accepted` would not give asks instead (and cannot be
 * remembered for the session), and a result `accepted` reviews stays reviewed. Tightenings apply at once.
 */
export function heldDecision(nextPolicy: Policy, acceptedPolicy: Policy, call: ToolCall, options: DecideOptions): PolicyDecision {
  const decided = nextPolicy.decide(call, options);
  if (decided.decision === 'deny') return decided;
  const accepted = acceptedPolicy.decide(call, options);
  // A result the accepted version reviews stays reviewed until the change is accepted.
  const next = dropsReview(accepted, decided) ? { ...decided, review: accepted.review } : decided;
  if (next.decision !== 'allow' || accepted.decision === 'allow') return next;
  return {
    ...next,
    decision: 'ask',
    reason: next.reason ? `${next.reason} (${HELD_REASON})` : HELD_REASON,
    warnings: [...next.warnings, 'the workspace policy changed outside the editor; its change is not accepted yet'],
    ask: { onTimeout: 'deny', remember: 'never' },
  };
}

/** sha256 of the text, hex: what "accepted" is remembered by, per workspace. */
export function contentDigest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
