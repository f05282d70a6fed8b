// Reading the audit log back: tolerant of a half-written last line (a crash mid-write) or a
// garbage line, which are reported and skipped, never the end of reading; the table the CLI
// prints; the sessions a crash left with open callbacks.
import * as fs from 'node:fs';
import { z } from 'zod';
import { AUDIT_EVENTS, truncate, type AuditEntry, type AuditEvent } from './audit.js';
import { oneLine } from './auditSummary.js';
import { AuditSandboxSchema, undoneCell } from './auditSandbox.js';

export interface AuditProblem {
  /** 1-based line number in the file. */
  line: number;
  message: string;
}

export interface AuditRead {
  entries: AuditEntry[];
  problems: AuditProblem[];
}

const RuleSchema = z.looseObject({
  layer: z.string(),
  id: z.string().nullable(),
  index: z.number().int(),
  file: z.string(),
  line: z.number().int(),
});

/** Loose: fields the reader does not know are kept; known fields of the wrong type are problems. */
const EntrySchema = z.looseObject({
  time: z.string(),
  event: z.enum(AUDIT_EVENTS as [AuditEvent, ...AuditEvent[]]),
  session: z.string(),
  parentSession: z.string().optional(),
  turn: z.string().optional(),
  agent: z.string().optional(),
  tool: z.string().optional(),
  inputDigest: z.string().optional(),
  summary: z.string().optional(),
  decision: z.enum(['allow', 'ask', 'deny']).optional(),
  rule: RuleSchema.nullable().optional(),
  default: z.string().optional(),
  lowered: z.boolean().optional(),
  reason: z.string().optional(),
  parts: z.array(z.looseObject({ part: z.string(), decision: z.enum(['allow', 'ask', 'deny']), rule: RuleSchema.nullable() })).optional(),
  partsOmitted: z.number().int().optional(),
  hidden: z.array(z.looseObject({ tool: z.string(), rule: RuleSchema.nullable(), default: z.string().optional() })).optional(),
  hiddenOmitted: z.number().int().optional(),
  hook: z.string().optional(),
  callback: z.string().optional(),
  answeredBy: z.enum(['handler', 'person', 'timeout', 'session', 'cancel']).optional(),
  answer: z.enum(['allow-once', 'allow-session', 'allow-duration', 'deny', 'kept', 'closed', 'connected', 'refused', 'accepted', 'declined', 'cancelled', 'passed', 'withheld']).optional(),
  grantSeconds: z.number().optional(),
  grantParts: z.array(z.string()).optional(),
  state: z.enum(['completed', 'failed', 'cancelled', 'interrupted']).optional(),
  sandbox: AuditSandboxSchema.optional(),
  undone: z.array(z.string()).optional(),
  marks: z.array(z.string()).optional(),
  review: z.literal('result').optional(),
  resultDigest: z.string().optional(),
  host: z.string().optional(),
  port: z.number().int().optional(),
});

/** Reads a log file; a file that does not exist yet reads as empty. Other I/O errors throw. */
export function readAuditLog(file: string): AuditRead {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], problems: [] };
    throw error;
  }
  return parseAuditText(text);
}

/**
 * Parses JSON lines. Blank lines are skipped; a line that is not JSON or not an entry is a
 * problem (with its 1-based line number) and reading goes on with the next one. A last line
 * without its newline is what a crash mid-write leaves: it is read if it happens to be whole,
 * and otherwise reported as cut off.
 */
export function parseAuditText(text: string): AuditRead {
  const entries: AuditEntry[] = [];
  const problems: AuditProblem[] = [];
  const lines = text.split('\n');
  const unterminated = lines[lines.length - 1] !== '';
  if (!unterminated) lines.pop();
  lines.forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    const lineNumber = i + 1;
    const last = unterminated && i === lines.length - 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      problems.push({
        line: lineNumber,
        message: last
          ? `cut off: the file ends in a half-written line (${preview(line)})`
          : `not JSON: ${(error as Error).message} (${preview(line)})`,
      });
      return;
    }
    const checked = EntrySchema.safeParse(value);
    if (!checked.success) {
      const details = checked.error.issues
        .map((issue) => `${issue.path.length ? issue.path.join('.') : 'entry'}: ${issue.message}`)
        .join('; ');
      problems.push({ line: lineNumber, message: `not an audit entry: ${details}` });
      return;
    }
    // The hash chain's fields are the file's, not the entry's (auditChain.ts; `agentpolicy audit verify` checks them).
    const { prev: _prev, hash: _hash, ...entry } = checked.data as AuditEntry & { prev?: unknown; hash?: unknown };
    entries.push(entry);
  });
  return { entries, problems };
}

function preview(line: string): string {
  return JSON.stringify(truncate(line, 60));
}

// ---------------------------------------------------------------------------------------------
// Presenting

const COLUMNS = ['time', 'session', 'agent', 'tool', 'decision', 'rule', 'answered', 'summary'] as const;

/** A rule as `layer:id@file:line`, or `layer:#index@file:line` for a rule without an id. */
export function formatRule(rule: NonNullable<AuditEntry['rule']>): string {
  return `${rule.layer}:${rule.id ?? `#${rule.index}`}@${rule.file}:${rule.line}`;
}

/**
 * An aligned plain-text table, one row per entry (optionally only some events), columns
 * separated by two spaces. For events other than decisions the decision column names the
 * event (`session-ended: completed`, …); the answered column shows `by/how` for settled
 * callbacks and `open <id>` for opened ones.
 */
export function auditTable(entries: readonly AuditEntry[], options: { events?: AuditEvent[] } = {}): string {
  const events = options.events ? new Set(options.events) : undefined;
  const rows: string[][] = [[...COLUMNS]];
  for (const e of entries) {
    if (events && !events.has(e.event)) continue;
    rows.push([e.time, e.session, e.agent ?? '', e.tool ?? '', decisionCell(e), ruleCell(e), answeredCell(e), summaryCell(e)].map(cell));
  }
  const widths = COLUMNS.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const format = (row: readonly string[]): string =>
    row.map((text, c) => (c === row.length - 1 ? text : text.padEnd(widths[c]!))).join('  ').trimEnd();
  const separator = widths.map((w) => '-'.repeat(w));
  return [format(rows[0]!), format(separator), ...rows.slice(1).map(format)].join('\n');
}

function cell(text: string): string {
  return oneLine(text);
}

function decisionCell(e: AuditEntry): string {
  // Flow rules: the marks a call that ran put on its session.
  const marks = e.marks !== undefined && e.marks.length > 0 ? ` +marks ${e.marks.join(',')}` : '';
  // Result review: a call whose result a person reviews, and the review's own lines (they name the result's digest).
  const review = e.resultDigest !== undefined ? ' (result review)' : e.event === 'decision' && e.review !== undefined ? ' +review' : '';
  return eventCell(e) + marks + review;
}

function eventCell(e: AuditEntry): string {
  switch (e.event) {
    case 'decision':
      return `${e.decision ?? '?'}${e.lowered ? ' (lowered)' : ''}`;
    case 'session-ended':
      return e.state ? `session-ended: ${e.state}` : 'session-ended';
    default:
      return e.event;
  }
}

function ruleCell(e: AuditEntry): string {
  const parts: string[] = [];
  if (e.rule) parts.push(formatRule(e.rule));
  else if (e.rule === null) parts.push(`default (${e.default ?? '?'})`);
  else if (e.default !== undefined) parts.push(`default (${e.default})`);
  if (e.hook !== undefined) parts.push(`hook:${e.hook}`);
  return parts.join(' ');
}

function answeredCell(e: AuditEntry): string {
  if (e.event === 'callback-opened') return e.callback !== undefined ? `open ${e.callback}` : 'open';
  return [e.answeredBy, e.answer].filter((p) => p !== undefined).join('/');
}

function summaryCell(e: AuditEntry): string {
  if (e.summary !== undefined) return e.summary;
  if (e.event === 'sandbox-cleanup') return undoneCell(e.undone);
  // An answer the runtime refused: why (a grant longer than the ask may be given, and what capped it).
  if (e.event === 'answer-refused') return e.reason ?? '';
  if (e.event === 'session-started' && e.parentSession !== undefined) return `subagent of ${e.parentSession}`;
  // Hidden tools: what the model was not offered (denied outright), or that every tool is offered again.
  if (e.event === 'tools-hidden') {
    const list = (e.hidden ?? []).map((h) => h.tool).join(', ');
    return list === '' ? 'every tool offered again' : `not offered: ${list}${e.hiddenOmitted ? ` and ${e.hiddenOmitted} more` : ''}`;
  }
  return '';
}

// ---------------------------------------------------------------------------------------------
// Recovery

export interface RecoveredSession {
  session: string;
  agent?: string;
  parentSession?: string;
  /** The time of its session-started (or of its first entry, if the start line is missing). */
  startedAt: string;
  /** The callback-opened entries never settled, in the order they were opened. */
  openCallbacks: AuditEntry[];
}

/**
 * Sessions the log shows started but never ended (the window reloaded or crashed), with the
 * callbacks still open in each, in the order the sessions first appear. A session whose
 * session-started line is missing or unreadable counts too when it left a callback open, so a
 * damaged line never hides an open callback; one with no start and nothing open does not (the
 * sessions of other agents whose hooks write to this log never start or end here). A callback is settled by a callback-settled entry
 * of the same session and callback id; a session-ended settles all of its session's callbacks.
 * A session started again after it ended is a new run, tracked afresh.
 */
export function interruptedSessions(entries: readonly AuditEntry[]): RecoveredSession[] {
  // Map order is insertion order: a session ended and started again goes to the end.
  const live = new Map<string, { session: RecoveredSession; started: boolean; open: Map<string, AuditEntry> }>();
  for (const e of entries) {
    if (e.event === 'session-ended') {
      live.delete(e.session);
      continue;
    }
    let record = live.get(e.session);
    if (!record) {
      record = { session: { session: e.session, startedAt: e.time, openCallbacks: [] }, started: false, open: new Map() };
      live.set(e.session, record);
    }
    const s = record.session;
    if (e.event === 'session-started') {
      if (!record.started) s.startedAt = e.time;
      record.started = true;
      if (e.parentSession !== undefined) s.parentSession = e.parentSession;
    }
    if (s.agent === undefined && e.agent !== undefined) s.agent = e.agent;
    if (e.event === 'callback-opened' && e.callback !== undefined) record.open.set(e.callback, e);
    if (e.event === 'callback-settled' && e.callback !== undefined) record.open.delete(e.callback);
  }
  return [...live.values()].filter(({ started, open }) => started || open.size > 0).map(({ session, open }) => ({ ...session, openCallbacks: [...open.values()] }));
}

// ---------------------------------------------------------------------------------------------
// Flow rules

/**
 * The marks a session's tree carried when the log ends, rebuilt from the `marks` of its lines (a
 * call let run lists the marks it added). The tree is the session's root, found through the
 * `parentSession` of each `session-started`, and every session started under that root.
 */
export function sessionMarks(entries: readonly AuditEntry[], session: string): string[] {
  const parent = new Map<string, string>();
  for (const e of entries) if (e.event === 'session-started' && e.parentSession !== undefined) parent.set(e.session, e.parentSession);
  const rootOf = (id: string): string => {
    const seen = new Set<string>();
    let at = id;
    for (let up = parent.get(at); up !== undefined && !seen.has(up); up = parent.get(at)) {
      seen.add(at);
      at = up;
    }
    return at;
  };
  const root = rootOf(session);
  const marks = new Set<string>();
  for (const e of entries) if (e.marks && rootOf(e.session) === root) for (const m of e.marks) marks.add(m);
  return [...marks].sort();
}
