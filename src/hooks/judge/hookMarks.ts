// Flow rules for other makers' agents: a hook process judges one call and ends, so the marks of a
// host session are kept in the user's state folder (a protected path), one file per host session,
// appended to by each hook process whose call the host will (or may) run. A call the hook allows
// adds its marks as known; one the host asks its own person about (the hook never learns the
// answer) adds them as perhaps there, which no allow rule's `when` trusts. A session the host does
// not name, or a file that cannot be read, has unknown marks: no `when` allow holds, every `when`
// ask and deny does.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionMarks } from '../../policy/rules/flowMarks.js';

/** The file of a host session's marks: `<state>/marks/<host>-<digest of the session id>.jsonl`. */
export function hookMarksFile(stateDir: string, host: string, hostSession: string): string {
  const digest = createHash('sha256').update(hostSession, 'utf8').digest('hex').slice(0, 32);
  return path.join(stateDir, 'marks', `${host}-${digest}.jsonl`);
}

/** The marks a host session carries, as the earlier hook processes of that session left them. */
export function readHookMarks(stateDir: string, host: string, hostSession: string): SessionMarks {
  if (hostSession === '' || hostSession === 'unknown') return 'unknown';
  let text: string;
  try {
    text = fs.readFileSync(hookMarksFile(stateDir, host, hostSession), 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { known: new Set(), maybe: new Set() } : 'unknown';
  }
  const known = new Set<string>();
  const maybe = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // A damaged line could have held any mark: the session's marks are not known any more.
      return 'unknown';
    }
    const entry = value as { known?: unknown; maybe?: unknown } | null;
    const labels = (list: unknown): string[] | undefined => (Array.isArray(list) && list.every((m) => typeof m === 'string') ? list : undefined);
    const sure = labels(entry?.known);
    const perhaps = labels(entry?.maybe);
    if (sure === undefined && perhaps === undefined) return 'unknown';
    for (const m of sure ?? []) known.add(m);
    for (const m of perhaps ?? []) maybe.add(m);
  }
  return { known, maybe };
}

/** The marks as an ask to the editor carries them (known, perhaps there); nothing when unknown or none. */
export function markLists(marks: SessionMarks): { marks?: string[]; maybeMarks?: string[] } {
  if (marks === 'unknown') return {};
  const known = 'known' in marks ? [...marks.known] : [...(marks as ReadonlySet<string>)];
  const maybe = 'maybe' in marks ? [...marks.maybe].filter((m) => !known.includes(m)) : [];
  return { ...(known.length > 0 ? { marks: known.sort() } : {}), ...(maybe.length > 0 ? { maybeMarks: maybe.sort() } : {}) };
}

/**
 * Adds marks to a host session: `known` for a call the host will run, else perhaps there. One
 * append of one short line (O_APPEND): hook processes of the same session running at once do not
 * lose each other's lines. Throws when it cannot write (the caller blocks the call: marks that
 * were not kept would let a later call through that should ask).
 */
export function addHookMarks(stateDir: string, host: string, hostSession: string, marks: readonly string[] | undefined, known: boolean): void {
  if (marks === undefined || marks.length === 0 || hostSession === '' || hostSession === 'unknown') return;
  const file = hookMarksFile(stateDir, host, hostSession);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.appendFileSync(file, `${JSON.stringify(known ? { known: marks } : { maybe: marks })}\n`, { mode: 0o600 });
}
