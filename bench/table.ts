// The benchmark's output: one row per measured value, printed as an aligned plain-text table.
// Any benchmark adds rows; a row with a target gets a pass/miss verdict.

export interface Target {
  /** `<` or `<=` against `value` (smaller is better for everything measured here). */
  op: '<' | '<=';
  value: number;
}

export interface BenchRow {
  /** What was measured, e.g. "id-only" or "paths+commands+input". */
  subject: string;
  /** The size of what was measured, e.g. the number of rules. */
  size: number;
  metric: string;
  value: number;
  unit: string;
  /** Digits after the point when printed. */
  digits?: number;
  target?: Target;
  /** Anything worth knowing about how it was measured. */
  note?: string;
}

/** The median of the values, in any order (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
}

export function verdict(row: BenchRow): 'pass' | 'miss' | '' {
  if (!row.target) return '';
  const ok = row.target.op === '<' ? row.value < row.target.value : row.value <= row.target.value;
  return ok ? 'pass' : 'miss';
}

const group = (n: number, digits: number): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function formatTable(rows: readonly BenchRow[]): string {
  const header = ['policy', 'rules', 'metric', 'value', 'unit', 'target', 'result', 'note'];
  const right = new Set([1, 3, 5]);
  const cells = rows.map((r) => [
    r.subject,
    group(r.size, 0),
    r.metric,
    group(r.value, r.digits ?? 0),
    r.unit,
    r.target ? `${r.target.op === '<' ? '<' : '<='} ${group(r.target.value, 0)}` : '',
    verdict(r),
    r.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]): string =>
    c.map((s, i) => (right.has(i) ? s.padStart(widths[i]!) : s.padEnd(widths[i]!))).join('  ').trimEnd();
  const out = [line(header), line(widths.map((w) => '-'.repeat(w)))];
  let previous: string | undefined;
  for (let i = 0; i < rows.length; i++) {
    const key = `${rows[i]!.subject}\u0000${rows[i]!.size}`;
    if (previous !== undefined && key !== previous) out.push('');
    previous = key;
    out.push(line(cells[i]!));
  }
  return out.join('\n');
}
