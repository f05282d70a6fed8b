// Flow rules (issue 14): a rule's `marks` label the session when it decides a call that runs, and
// a rule's `when` makes it depend on the marks the session (with its subagents) already carries.
// The engine keeps no state: the caller passes the session's marks in and adds the decision's
// `marks` once the call runs.
import type { Decision, When } from '../file/schema.js';

export { MARK_PATTERN } from '../file/policyNames.js';

/**
 * Marks some of which only may be there: a call another maker's agent was let ask its own person
 * about may or may not have run (agentpolicy hook learns no answer).
 */
export interface UncertainMarks {
  readonly known: ReadonlySet<string>;
  readonly maybe: ReadonlySet<string>;
}

/** The session's marks as the caller knows them; `'unknown'` when it cannot (judged on the safe side). */
export type SessionMarks = ReadonlySet<string> | 'unknown' | UncertainMarks;

export const NO_MARKS: ReadonlySet<string> = new Set();

function isUncertain(marks: SessionMarks): marks is UncertainMarks {
  return typeof marks === 'object' && !(marks instanceof Set) && 'known' in marks && 'maybe' in marks;
}

/** Three answers per label: there, not there, or perhaps (`'unknown'`: every label perhaps). */
function markState(marks: SessionMarks, label: string): 'yes' | 'no' | 'maybe' {
  if (marks === 'unknown') return 'maybe';
  if (isUncertain(marks)) return marks.known.has(label) ? 'yes' : marks.maybe.has(label) ? 'maybe' : 'no';
  return marks.has(label) ? 'yes' : 'no';
}

/**
 * Whether a rule's `when` holds in a session with these marks: every `marked` label present and
 * no `unmarked` one. Where a label only may be there, a tightening rule (ask, deny) takes it as
 * holding when it could, a loosening one (allow) only when it surely does: not knowing never
 * allows more.
 */
export function whenHolds(when: When | undefined, decision: Decision, marks: SessionMarks): boolean {
  if (when === undefined) return true;
  const tightening = decision !== 'allow';
  for (const m of when.marked ?? []) {
    const state = markState(marks, m);
    if (state === 'no' || (state === 'maybe' && !tightening)) return false;
  }
  for (const m of when.unmarked ?? []) {
    const state = markState(marks, m);
    if (state === 'yes' || (state === 'maybe' && !tightening)) return false;
  }
  return true;
}

const quoted = (labels: readonly string[]): string => labels.map((m) => JSON.stringify(m)).join(', ');
const plural = (labels: readonly string[]): string => (labels.length > 1 ? 's' : '');

/** Why a rule's `when` does not hold: `the session lacks the mark "secret"`, `… carries the mark "web"`. */
export function whenFailure(when: When, marks: SessionMarks): string {
  const missing = (when.marked ?? []).filter((m) => markState(marks, m) === 'no');
  if (missing.length > 0) return `the session lacks the mark${plural(missing)} ${quoted(missing)}`;
  const present = (when.unmarked ?? []).filter((m) => markState(marks, m) === 'yes');
  if (present.length > 0) return `the session carries the mark${plural(present)} ${quoted(present)}`;
  const unsure = [...(when.marked ?? []), ...(when.unmarked ?? [])].filter((m) => markState(marks, m) === 'maybe');
  return `it is not known whether the session carries the mark${plural(unsure)} ${quoted(unsure)}, and an allow needs to be sure`;
}

/** Why a `when` rule decided: `because this session carries the mark "secret"` (for an ask's notification). */
export function whenBecause(when: When | undefined, marks: SessionMarks): string | undefined {
  if (when === undefined) return undefined;
  const has = when.marked ?? [];
  const lacks = when.unmarked ?? [];
  const said: string[] = [];
  const surely = has.filter((m) => markState(marks, m) === 'yes');
  const perhaps = has.filter((m) => markState(marks, m) === 'maybe');
  if (surely.length > 0) said.push(`carries the mark${plural(surely)} ${quoted(surely)}`);
  if (perhaps.length > 0) said.push(`may carry the mark${plural(perhaps)} ${quoted(perhaps)}`);
  const absent = lacks.filter((m) => markState(marks, m) === 'no');
  const unsure = lacks.filter((m) => markState(marks, m) === 'maybe');
  if (absent.length > 0) said.push(`does not carry ${absent.map((m) => JSON.stringify(m)).join(' or ')}`);
  if (unsure.length > 0) said.push(`may not carry ${unsure.map((m) => JSON.stringify(m)).join(' or ')}`);
  return `because this session ${said.join(' and ')}`;
}

/** The union of the marks of these rules, sorted (a decision's `marks`). */
export function unionMarks(lists: ReadonlyArray<readonly string[] | undefined>): string[] {
  const all = new Set<string>();
  for (const list of lists) if (list) for (const m of list) all.add(m);
  return [...all].sort();
}

/** Reads `--marks secret,web` into its labels. */
export function parseMarkList(text: string): string[] {
  return text.split(',').map((m) => m.trim()).filter((m) => m.length > 0);
}
