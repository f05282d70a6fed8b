// Flow rules (issue 14): a rule's `marks` label the session when it decides a call that runs, and
// a rule's `when` makes it depend on the marks the session (with its subagents) already carries.
// The engine keeps no state: the caller passes the session's marks in and adds the decision's
// `marks` once the call runs.
import type { Decision, When } from './schema.js';

export { MARK_PATTERN } from './policyNames.js';

/** The session's marks as the caller knows them; `'unknown'` when it cannot (judged on the safe side). */
export type SessionMarks = ReadonlySet<string> | 'unknown';

export const NO_MARKS: ReadonlySet<string> = new Set();

/**
 * Whether a rule's `when` holds in a session with these marks: every `marked` label present and
 * no `unmarked` one. With the marks unknown, a tightening rule (ask, deny) is taken to hold and a
 * loosening one (allow) not, so not knowing never allows more.
 */
export function whenHolds(when: When | undefined, decision: Decision, marks: SessionMarks): boolean {
  if (when === undefined) return true;
  if (marks === 'unknown') return decision !== 'allow';
  if (when.marked) for (const m of when.marked) if (!marks.has(m)) return false;
  if (when.unmarked) for (const m of when.unmarked) if (marks.has(m)) return false;
  return true;
}

/** Why a rule's `when` does not hold: `the session lacks the mark "secret"`, `… carries the mark "web"`. */
export function whenFailure(when: When, marks: SessionMarks): string {
  if (marks === 'unknown') return 'the session\'s marks are unknown here, so a rule with "when" never allows';
  const missing = (when.marked ?? []).filter((m) => !marks.has(m));
  if (missing.length > 0) return `the session lacks the mark${missing.length > 1 ? 's' : ''} ${missing.map((m) => JSON.stringify(m)).join(', ')}`;
  const present = (when.unmarked ?? []).filter((m) => marks.has(m));
  return `the session carries the mark${present.length > 1 ? 's' : ''} ${present.map((m) => JSON.stringify(m)).join(', ')}`;
}

/** Why a `when` rule decided: `because this session carries the mark "secret"` (for an ask's notification). */
export function whenBecause(when: When | undefined, marks: SessionMarks): string | undefined {
  if (when === undefined) return undefined;
  if (marks === 'unknown') return 'because the session may carry marks that this rule asks about (they are not kept here)';
  const has = when.marked ?? [];
  const lacks = when.unmarked ?? [];
  const said: string[] = [];
  if (has.length > 0) said.push(`carries the mark${has.length > 1 ? 's' : ''} ${has.map((m) => JSON.stringify(m)).join(', ')}`);
  if (lacks.length > 0) said.push(`does not carry ${lacks.map((m) => JSON.stringify(m)).join(' or ')}`);
  return `because this session ${said.join(' and ')}`;
}

/** The union of the marks of these rules, sorted (a decision's `marks`). */
export function unionMarks(lists: ReadonlyArray<readonly string[] | undefined>): string[] {
  const all = new Set<string>();
  for (const list of lists) if (list) for (const m of list) all.add(m);
  return [...all].sort();
}

/** Reads `--marks secret,web` (or an inline test's list) into a set. */
export function parseMarkList(text: string): string[] {
  return text.split(',').map((m) => m.trim()).filter((m) => m.length > 0);
}
