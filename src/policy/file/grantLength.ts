// How long a person's grant on an ask may last: a rule's `remember` is the widest grant a person
// may give ("never": only once; a duration such as "15m" or "1h"; "session": any). The same
// grammar serves anything else that bounds grants. Plain values: no clock here.

/** A duration: a whole number of seconds, minutes or hours, "15m", "1h", "90s". */
export const DURATION_PATTERN = /^[1-9][0-9]{0,5}[smh]$/;

/** The longest duration a grant may name (24 hours); anything longer is written `"session"`. */
export const MAX_GRANT_SECONDS = 24 * 3600;

/** `"session"`, `"never"` or a duration (`"15m"`). */
export type Remember = 'session' | 'never' | `${number}${'s' | 'm' | 'h'}`;

/** The durations the editor offers as answers, in seconds: 15 minutes and 1 hour (those a rule's widest allows). */
export const OFFERED_GRANT_SECONDS: readonly number[] = [15 * 60, 3600];

const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

/** The seconds of a duration, or undefined when the text is not one (or is longer than MAX_GRANT_SECONDS). */
export function durationSeconds(text: string): number | undefined {
  if (!DURATION_PATTERN.test(text)) return undefined;
  const seconds = Number(text.slice(0, -1)) * UNIT_SECONDS[text.slice(-1) as keyof typeof UNIT_SECONDS];
  return seconds <= MAX_GRANT_SECONDS ? seconds : undefined;
}

/** Whether the text is a valid `remember` value. */
export function isRemember(text: string): text is Remember {
  return text === 'session' || text === 'never' || durationSeconds(text) !== undefined;
}

/** The longest grant `remember` lets a person give, in seconds: 0 for never, Infinity for the session. */
export function rememberSeconds(remember: Remember): number {
  if (remember === 'never') return 0;
  if (remember === 'session') return Infinity;
  return durationSeconds(remember) ?? 0;
}

/** Of several `remember` values (the parts of one call that ask), the narrowest: a grant must fit every one. */
export function narrowestRemember(values: readonly Remember[]): Remember {
  let narrowest: Remember = 'session';
  for (const value of values) if (rememberSeconds(value) < rememberSeconds(narrowest)) narrowest = value;
  return narrowest;
}

/**
 * The time-limited answers offered for an ask whose widest grant is `remember`, shortest first:
 * 15 minutes and 1 hour where they fit, and the rule's own duration when it is neither ("30m"
 * offers 15 minutes and 30 minutes).
 */
export function offeredDurations(remember: Remember): number[] {
  const widest = rememberSeconds(remember);
  if (widest === 0) return [];
  const offered = OFFERED_GRANT_SECONDS.filter((s) => s <= widest);
  if (Number.isFinite(widest) && !offered.includes(widest)) offered.push(widest);
  return offered;
}

/** "15 Minutes", "1 Hour", "90 Seconds", "1 Hour 30 Minutes": for button labels ("Allow for 15 Minutes"). */
export function durationLabel(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts: string[] = [];
  if (h > 0) parts.push(`${h} Hour${h === 1 ? '' : 's'}`);
  if (m > 0) parts.push(`${m} Minute${m === 1 ? '' : 's'}`);
  if (s > 0 || parts.length === 0) parts.push(`${s} Second${s === 1 ? '' : 's'}`);
  return parts.join(' ');
}

/** What `remember` lets a person answer, for explanations: "once, for 15 minutes, for 1 hour or for the session". */
export function describeRemember(remember: Remember): string {
  if (remember === 'never') return 'once only (remember: never)';
  const answers = ['once', ...offeredDurations(remember).map((s) => `for ${durationLabel(s).toLowerCase()}`)];
  if (remember === 'session') answers.push('for the session');
  const listed = `${answers.slice(0, -1).join(', ')} or ${answers[answers.length - 1]}`;
  return remember === 'session' ? listed : `${listed} (remember: ${remember})`;
}
