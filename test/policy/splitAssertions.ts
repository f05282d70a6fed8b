// Assertions on the shell split shared by the shell tests: what parsed into which parts.
import assert from 'node:assert/strict';
import { splitCommand } from '../../src/policy/shell/shellSplit.js';
import type { SimpleCommand } from '../../src/policy/shell/shellWalker.js';

/** The parts of `source`, which must parse cleanly. */
export function parts(source: string): SimpleCommand[] {
  const r = splitCommand(source);
  assert.equal(r.ok, true, `expected ${JSON.stringify(source)} to parse, got ${JSON.stringify(r)}`);
  return r.commands;
}

/** The words of every part of `source` (which must parse cleanly). */
export function words(source: string): string[][] {
  return parts(source).map((c) => c.words);
}

/** Asserts some part of `source` is exactly `expected`. */
export function hasPart(source: string, expected: string[]): void {
  const all = words(source);
  assert.ok(
    all.some((w) => JSON.stringify(w) === JSON.stringify(expected)),
    `expected ${JSON.stringify(source)} to have part ${JSON.stringify(expected)}, got ${JSON.stringify(all)}`,
  );
}

/** Asserts `source` is unparseable (never allowed), and why when `why` is given. */
export function rejected(source: string, why?: RegExp): void {
  const r = splitCommand(source);
  assert.equal(r.ok, false, `expected ${JSON.stringify(source)} to be unparseable, got ${JSON.stringify(r)}`);
  if (why && !r.ok) assert.match(r.error, why);
}
