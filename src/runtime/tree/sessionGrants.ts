// What a person allowed beyond one call, for the rest of a session or for a while: "Allow for
// Session", "Allow for 15 Minutes", "Allow for 1 Hour". Our own sessions (toolCall.ts) and another
// agent's session asking through its hook (externalSession.ts) remember the same way.
//
// A grant covers either
// - the same call: the same stable tool id and the same input as canonical JSON; nothing looser
//   (another path, another command) is ever allowed by it; or
// - one part of a compound command (a simple command of `npm test && git push`) that asked: the
//   part's text as the policy shows it (its words after quote removal), with the tool id and the
//   rest of the input (`cwd`, …) the same. A later call whose every asking part is granted so is
//   answered at once, in any order and with any parts the rules allow (a call of that one
//   command alone too); a call with any other asking part asks. Parts are granted only when each asking part can be (see `grantableParts`).
//
// A grant is honoured only while the ask it would answer could still be given it: never after it
// lapses (by the clock the session was started with), never for an ask that may not be remembered
// that long now (`remember`, an untrusted workspace), never for a hook's ask (callers check hooks first).
import { CONVENTIONAL_COMMAND_FIELDS } from '../../policy/rules/call.js';
import { canonicalJson } from '../../policy/rules/compile.js';
import { rememberSeconds, type Remember } from '../../policy/file/grantLength.js';
import type { PartDecision, PolicyDecision } from '../../policy/policy.js';
import { commandLabel } from '../../policy/rules/preparedCall.js';
import { splitPlainCommand } from '../../policy/shell/shellFastSplit.js';
import { SUMMARY_MAX, truncate, type AuditEntry } from '../audit/audit.js';

/** Epoch milliseconds; `Date.now` unless a test gives its own. */
export type Clock = () => number;

export interface Grant {
  readonly id: string;
  readonly toolId: string;
  /** `call`: this exact call; `part`: one simple command of a compound command. */
  readonly covers: 'call' | 'part';
  /** What a person sees: the call's input summary, or the part as the policy shows it. */
  readonly label: string;
  readonly grantedAt: number;
  /** When it lapses (epoch ms); undefined: at the end of the session. */
  readonly expiresAt: number | undefined;
}

/** A call as grants read it. */
export interface GrantCall {
  toolId: string;
  input: unknown;
  /** `canonicalJson(input)`, already made by the caller. */
  canonical: string;
  /** The tool's declared command argument, when it has one. */
  commandArg?: string | undefined;
  decision: PolicyDecision;
  /** Shown for a grant of the whole call. */
  summary: string;
}

let nextGrant = 0;

export class SessionGrants {
  private readonly grants = new Map<string, Grant>();

  constructor(private readonly clock: Clock = Date.now) {}

  /**
   * Remembers a person's answer: each part that asked, for a command whose parts can be granted
   * (`grantableParts`), else the call itself. `seconds` undefined: for the rest of the session.
   * Returns what was granted.
   */
  grant(call: GrantCall, seconds: number | undefined): Grant[] {
    const grantedAt = this.clock();
    const expiresAt = seconds === undefined ? undefined : grantedAt + seconds * 1000;
    const made: Grant[] = [];
    const put = (key: string, covers: Grant['covers'], label: string): void => {
      const grant: Grant = { id: `grant_${++nextGrant}`, toolId: call.toolId, covers, label, grantedAt, expiresAt };
      this.grants.set(key, grant);
      made.push(grant);
    };
    // The parts' grants answer the call itself too: with them, a grant of the call would be a second row for the same answer.
    const parts = grantableParts(call);
    if (parts) for (const part of parts.asking) put(partKey(call.toolId, parts.context, part.part), 'part', part.part);
    else put(callKey(call.toolId, call.canonical), 'call', call.summary);
    return made;
  }

  /**
   * The live grants that answer this ask at once: the grant of the same call, or one grant for
   * each part that asks. Undefined when a person must be asked.
   */
  answering(call: GrantCall): Grant[] | undefined {
    const now = this.clock();
    const widest = rememberSeconds(call.decision.ask?.remember ?? 'session');
    if (call.decision.decision !== 'ask' || call.decision.lowered || widest === 0) return undefined;
    const fits = (grant: Grant | undefined): grant is Grant => grant !== undefined && live(grant, now) && lengthSeconds(grant) <= widest;
    const same = this.grants.get(callKey(call.toolId, call.canonical));
    if (fits(same)) return [same];
    const parts = grantableParts(call);
    if (!parts) return undefined;
    const found = parts.asking.map((part) => this.grants.get(partKey(call.toolId, parts.context, part.part)));
    return found.every(fits) ? found : undefined;
  }

  /**
   * Of a compound command that asks, the asking parts a grant in force already covers: the
   * person is asked only for the others (the notification says so).
   */
  grantedParts(call: GrantCall): string[] {
    if (call.decision.lowered || call.decision.decision !== 'ask') return [];
    const parts = grantableParts(call);
    if (!parts || parts.asking.length < 2) return [];
    const now = this.clock();
    const widest = rememberSeconds(call.decision.ask?.remember ?? 'session');
    return parts.asking.map((p) => p.part).filter((part) => {
      const grant = this.grants.get(partKey(call.toolId, parts.context, part));
      return grant !== undefined && live(grant, now) && lengthSeconds(grant) <= widest;
    });
  }

  /** The grants still in force, oldest first; lapsed ones are forgotten. */
  list(): Grant[] {
    const now = this.clock();
    for (const [key, grant] of this.grants) if (!live(grant, now)) this.grants.delete(key);
    return [...this.grants.values()].sort((a, b) => a.grantedAt - b.grantedAt);
  }

  /** Takes a grant back; returns it, or undefined when it had lapsed or never was. */
  revoke(grantId: string): Grant | undefined {
    for (const [key, grant] of this.grants) {
      if (grant.id !== grantId) continue;
      this.grants.delete(key);
      return live(grant, this.clock()) ? grant : undefined;
    }
    return undefined;
  }
}

function live(grant: Grant, now: number): boolean {
  return grant.expiresAt === undefined || now < grant.expiresAt;
}

/** How long a grant was given for, in seconds (Infinity: the session). */
export function lengthSeconds(grant: Grant): number {
  return grant.expiresAt === undefined ? Infinity : (grant.expiresAt - grant.grantedAt) / 1000;
}

function callKey(toolId: string, canonical: string): string {
  return `call\u0000${toolId}\u0000${canonical}`;
}

function partKey(toolId: string, context: string, part: string): string {
  return `part\u0000${toolId}\u0000${context}\u0000${part}`;
}

/**
 * The parts of a compound command that asked, when each of them may be granted on its own, with
 * the rest of the input (everything but the command) as the context a part grant holds in.
 * Undefined, so that only the exact call is granted, when:
 * - the call has no command as a string, or is not split into parts;
 * - a part is denied (nothing of the call runs) or no part asks;
 * - a part that asks carries a note: it can never be allowed by a rule (it writes to a file, uses
 *   process substitution, its program name is known only when it runs, the text cannot be parsed)
 *   or is only there for ask and deny rules, and its text does not say all it does;
 * - the command feeds a program input its words do not show (a pipe, `<`, a here-document): a
 *   grant of `bash` from `make | bash` must not let `curl x | bash` through.
 */
export function grantableParts(call: Pick<GrantCall, 'input' | 'commandArg' | 'decision'>): { asking: PartDecision[]; context: string } | undefined {
  const input = call.input;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const record = input as Record<string, unknown>;
  const fields = call.commandArg !== undefined ? [call.commandArg] : CONVENTIONAL_COMMAND_FIELDS;
  const field = fields.find((f) => Object.prototype.hasOwnProperty.call(record, f));
  const command = field === undefined ? undefined : record[field];
  if (typeof command !== 'string' || feedsInput(command)) return undefined;
  const parts = call.decision.parts ?? onlyPart(command, call.decision);
  if (!parts || parts.some((p) => p.decision === 'deny')) return undefined;
  const asking = parts.filter((p) => p.decision === 'ask');
  if (asking.length === 0 || asking.some((p) => p.note !== undefined)) return undefined;
  const { [field!]: _command, ...rest } = record;
  return { asking, context: canonicalJson(rest) };
}

/**
 * A call of one simple command is judged whole and lists no parts; it is still the part it would
 * be in a chain (`npm test` of `npm test && git push`). Only plain text (letters, digits, blanks,
 * `_./=:+,@%-`: no quoting, expansion or operator) is read here, without the shell parser; its one
 * part is shown as the engine shows parts.
 */
function onlyPart(command: string, decision: PolicyDecision): PartDecision[] | undefined {
  const split = splitPlainCommand(command);
  if (!split?.ok || split.commands.length !== 1) return undefined;
  return [{ part: commandLabel(split.commands[0]!), decision: decision.decision, rule: decision.rule }];
}

/** A pipe (not `||`) or an input redirect or here-document anywhere in the text, quoted or not: read conservatively. */
function feedsInput(command: string): boolean {
  return /[<|]/.test(command.replaceAll('||', ''));
}

/**
 * The widest grant a person may give this ask: "never" for a hook's ask (protected files) and for
 * an allow an untrusted workspace lowered, else the rule's `remember` (the narrowest of the parts').
 */
export function longestGrant(decision: PolicyDecision, asksForAHook: boolean): Remember {
  if (asksForAHook || decision.lowered) return 'never';
  return decision.ask?.remember ?? 'session';
}

/** The audit fields of a call answered at once by grants: `allow-session` or `allow-duration`, and the parts when parts' grants answered it. */
export function grantAuditFields(granted: readonly Grant[]): { answer: 'allow-session' | 'allow-duration'; grantParts?: string[] } {
  const timed = granted.some((g) => g.expiresAt !== undefined);
  const parts = granted.filter((g) => g.covers === 'part').map((g) => g.label);
  return { answer: timed ? 'allow-duration' : 'allow-session', ...(parts.length > 0 ? { grantParts: parts } : {}) };
}

/** For the tool-call event of a call grants answered: when the first time-limited one of them ends (epoch ms), if any. */
export function grantedUntil(granted: readonly Grant[]): { grantedUntil?: number } {
  const ends = granted.flatMap((g) => (g.expiresAt === undefined ? [] : [g.expiresAt]));
  return ends.length > 0 ? { grantedUntil: Math.min(...ends) } : {};
}

/** The audit line of a grant a person took back. */
export function grantRevokedEntry(sessionId: string, agent: string, grant: Grant): Omit<AuditEntry, 'time'> {
  const seconds = lengthSeconds(grant);
  return {
    event: 'grant-revoked', session: sessionId, agent, tool: grant.toolId, summary: truncate(grant.label, SUMMARY_MAX),
    answer: Number.isFinite(seconds) ? 'allow-duration' : 'allow-session',
    ...(Number.isFinite(seconds) ? { grantSeconds: seconds } : {}),
    ...(grant.covers === 'part' ? { grantParts: [truncate(grant.label, SUMMARY_MAX)] } : {}),
  };
}
