// Text → validated policy file, with positions for every diagnostic. Never throws: whatever
// the input, the result is either a policy or diagnostics saying what is wrong and where.
import { findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import type { z } from 'zod';
import { LineMap, type Diagnostic } from './diagnostics.js';

export interface ParsedJsonc<T> {
  file: string;
  text: string;
  lines: LineMap;
  /** The syntax tree, when the text parsed. */
  root: Node | undefined;
  /** The validated value, when there are no syntax or schema errors. */
  value: T | undefined;
  diagnostics: Diagnostic[];
}

/** Parses JSONC (comments and trailing commas allowed) and validates it against a zod schema. */
export interface ParseOptions {
  /** How the file is named in messages, e.g. "the policy file". */
  what: string;
  /** Valid field names by path shape ('' for the root, 'rules.#' for a rule), for "did you mean" hints. */
  knownKeys?: ReadonlyMap<string, readonly string[]>;
}

export function parseJsoncWithSchema<T>(text: string, file: string, schema: z.ZodType<T>, options: ParseOptions): ParsedJsonc<T> {
  const { what } = options;
  const lines = new LineMap(text);
  const result: ParsedJsonc<T> = { file, text, lines, root: undefined, value: undefined, diagnostics: [] };
  try {
    const errors: ParseError[] = [];
    const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
    for (const e of errors) {
      result.diagnostics.push({
        file, severity: 'error', code: 'syntax', offset: e.offset, length: Math.max(e.length, 1),
        message: `${describeParseError(printParseErrorCode(e.error))} in ${what}`,
      });
    }
    if (errors.length > 0 || root === undefined) {
      if (result.diagnostics.length === 0) {
        result.diagnostics.push({ file, severity: 'error', code: 'syntax', offset: 0, length: 1, message: `${what} is empty` });
      }
      return result;
    }
    result.root = root;
    result.diagnostics.push(...duplicateKeys(root, file));
    const parsed = schema.safeParse(getNodeValue(root));
    if (!parsed.success) {
      for (const issue of parsed.error.issues) result.diagnostics.push(...issueDiagnostics(issue, root, file, options.knownKeys));
    }
    if (result.diagnostics.length === 0 && parsed.success) result.value = parsed.data;
  } catch (error) {
    // Defensive: a bug here must report, not throw, and must never yield a value.
    result.value = undefined;
    result.diagnostics.push({ file, severity: 'error', code: 'syntax', offset: 0, length: 1, message: `${what} could not be read: ${(error as Error).message}` });
  }
  return result;
}

function describeParseError(code: string): string {
  const words: Record<string, string> = {
    InvalidSymbol: 'unexpected character',
    InvalidNumberFormat: 'invalid number',
    PropertyNameExpected: 'property name expected',
    ValueExpected: 'value expected',
    ColonExpected: '":" expected',
    CommaExpected: '"," expected',
    CloseBraceExpected: '"}" expected',
    CloseBracketExpected: '"]" expected',
    EndOfFileExpected: 'end of file expected',
    InvalidCommentToken: 'invalid comment',
    UnexpectedEndOfComment: 'unterminated comment',
    UnexpectedEndOfString: 'unterminated string',
    UnexpectedEndOfNumber: 'unterminated number',
    InvalidUnicode: 'invalid unicode escape',
    InvalidEscapeCharacter: 'invalid escape character',
    InvalidCharacter: 'invalid character',
  };
  return words[code] ?? code;
}

/** JSON lets a key repeat and keeps the last; in a policy that hides intent, so it is an error. */
function duplicateKeys(root: Node, file: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const visit = (node: Node): void => {
    // Most nodes are leaves: no `?? []` here, which would allocate an array for each of them.
    const children = node.children;
    if (children === undefined) return;
    if (node.type === 'object') {
      const seen = new Set<string>();
      for (const property of children) {
        const key = property.children?.[0];
        if (key === undefined) continue;
        const name = String(key.value);
        if (seen.has(name)) {
          out.push({ file, severity: 'error', code: 'schema', offset: key.offset, length: key.length, message: `duplicate field "${name}"` });
        }
        seen.add(name);
      }
    }
    for (const child of children) visit(child);
  };
  visit(root);
  return out;
}

type Issue = z.core.$ZodIssue;

function issueDiagnostics(issue: Issue, root: Node, file: string, knownKeys: ReadonlyMap<string, readonly string[]> | undefined): Diagnostic[] {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const at = (node: Node | undefined, message: string): Diagnostic => {
    const target = node ?? root;
    // For a property, point at the key: that is what a person reads and fixes.
    const shown = target.parent?.type === 'property' && target.parent.children?.[1] === target ? target.parent.children[0]! : target;
    return { file, severity: 'error', code: 'schema', offset: shown.offset, length: shown.length, message };
  };
  const node = findNodeAtLocation(root, path);
  const where = path.length === 0 ? '' : ` at ${formatPath(path)}`;
  switch (issue.code) {
    case 'unrecognized_keys': {
      const shape = path.map((p) => (typeof p === 'number' ? '#' : p)).join('.');
      const known = knownKeys?.get(shape) ?? [];
      return issue.keys.map((key) => {
        const keyNode = node?.children?.find((p) => p.children?.[0]?.value === key)?.children?.[0];
        const suggestion = nearest(key, known);
        const hint = suggestion ? `; did you mean "${suggestion}"?` : '';
        return at(keyNode ?? node, `unknown field "${key}"${where}${hint}`);
      });
    }
    case 'invalid_type':
    case 'invalid_value': {
      // A required field that is absent (zod reports a missing enum or literal as invalid_value).
      if (node === undefined && path.length > 0) {
        const parent = findNodeAtLocation(root, path.slice(0, -1));
        return [at(parent, `missing required field "${String(path[path.length - 1])}"${path.length > 1 ? ` at ${formatPath(path.slice(0, -1))}` : ''}`)];
      }
      if (issue.code === 'invalid_type') return [at(node, `expected ${issue.expected}${where}`)];
      return [at(node, `expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}${where}`)];
    }
    case 'invalid_union':
      return [at(node, `no matcher form fits${where}: use a glob string, or { "equals" }, { "regex" }, { "glob" } or { "exists" }`)];
    case 'too_small':
      return [at(node, `${issue.origin === 'array' ? 'must not be empty' : 'is too small'}${where}`)];
    default:
      return [at(node, `${issue.message}${where}`)];
  }
}

function formatPath(path: readonly (string | number)[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '');
}

/** The known name closest to `name` by edit distance, if it is close enough to be a likely typo. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of adjacent letters ("spwan" is one edit from "spawn"). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
