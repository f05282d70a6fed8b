// The ids the editor gives the rules it writes: lowercase words joined by `-`, short, and unique
// in the file (a taken id gets a `-2`, `-3`, … suffix).

/** What a generated rule id looks like: lowercase words joined by `-`, starting with a letter. */
export const FRIENDLY_ID = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const MAX_ID_LENGTH = 48;

export function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

/** Shortened at a word boundary, and always of the friendly shape. */
export function friendlyId(id: string): string {
  let s = slug(id);
  if (!/^[a-z]/.test(s)) s = `allow-${s}`.replace(/-+$/, '');
  if (s.length > MAX_ID_LENGTH) {
    s = s.slice(0, MAX_ID_LENGTH);
    const cut = s.lastIndexOf('-');
    if (cut > 0) s = s.slice(0, cut);
  }
  return s;
}

/** `base`, or `base-2`, `base-3`, …: the first one not used yet. */
export function uniqueId(base: string, used: ReadonlySet<string>): string {
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}
