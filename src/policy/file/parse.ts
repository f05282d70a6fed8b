// Text → validated policy file, with positions for every diagnostic. Never throws: whatever
// the input, the result is either a policy or diagnostics saying what is wrong and where.
import { createScanner, findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, SyntaxKind, type Node, type ParseError } from 'jsonc-parser';
import type { z } from 'zod';
import { LineMap, type Diagnostic } from './diagnostics.js';
import { readJsoncFast, type Span } from './jsoncFast.js';

/** A valid text's value and where its top-level arrays' elements are, as read before. */
export interface KnownReading {
  value: unknown;
  topLevelArrays: ReadonlyMap<string, readonly Span[]>;
}

export interface ParsedJsonc<T> {
  file: string;
  text: string;
  lines: LineMap;
  /** The syntax tree, when the text parsed (built at first use when the fast reader took the text). */
  readonly root: Node | undefined;
  /** Where the elements of the root object's arrays are, when the fast reader took the text (else read `root`). */
  topLevelArrays?: ReadonlyMap<string, readonly Span[]>;
  /** The validated value, when there are no syntax or schema errors. */
  value: T | undefined;
  /** The value is a reading kept from before (ParseOptions.known), not read from the text now. */
  fromKnownReading?: boolean;
  diagnostics: Diagnostic[];
}

/** Parses JSONC (comments and trailing commas allowed) and validates it against a zod schema. */
export interface ParseOptions<T = unknown> {
  /** How the file is named in messages, e.g. "the policy file". */
  what: string;
  /** Valid field names by path shape ('' for the root, 'rules.#' for a rule), for "did you mean" hints. */
  knownKeys?: ReadonlyMap<string, readonly string[]>;
  /**
   * What this exact text was read and validated to before (`agentpolicy hook` keeps it by the
   * text's digest): taken as is, without reading the text again or building the schema.
   */
  known?: KnownReading;
  /**
   * The schema's answer for the fast reader's value, worked out without the schema, or undefined
   * when not sure: then the schema decides. It must never take a value the schema refuses.
   */
  fastValidate?: (value: unknown) => T | undefined;
}

/** `schema` may be a function building it at first use. */
export function parseJsoncWithSchema<T>(text: string, file: string, given: z.ZodType<T> | (() => z.ZodType<T>), options: ParseOptions<T>): ParsedJsonc<T> {
  const schema = (): z.ZodType<T> => (typeof given === 'function' ? given() : given);
  const { what } = options;
  const lines = new LineMap(text);
  const result: { -readonly [K in keyof ParsedJsonc<T>]: ParsedJsonc<T>[K] } = { file, text, lines, root: undefined, value: undefined, diagnostics: [] };
  try {
    // A byte order mark is read as the space it stands in for: same length, so every offset stays right.
    const source = text.charCodeAt(0) === 0xfeff ? ` ${text.slice(1)}` : text;
    // A valid file is read without its syntax tree, which is built only if something asks for it.
    const fast = options.known ?? readJsoncFast(source, MAX_TEXT_DEPTH);
    if (fast) {
      const checked = options.known ? (options.known.value as T) : options.fastValidate?.(fast.value);
      const parsed = checked !== undefined ? { success: true as const, data: checked } : schema().safeParse(fast.value);
      if (parsed.success) {
        let tree: Node | undefined;
        Object.defineProperty(result, 'root', { get: () => (tree ??= parseTree(source, [], TREE_OPTIONS)), enumerable: true, configurable: true });
        result.topLevelArrays = fast.topLevelArrays;
        result.value = parsed.data;
        if (options.known) result.fromKnownReading = true;
        return result;
      }
    }
    // The parser, the duplicate-key walk and getNodeValue recurse once per level: text nested
    // deeper than any policy needs is refused before them, so it is a diagnostic, not a stack overflow.
    const tooDeep = maxNesting(source) > MAX_TEXT_DEPTH ? nestingDiagnostics(source, file, what) : [];
    if (tooDeep.length > 0) {
      result.diagnostics.push(...tooDeep);
      return result;
    }
    const errors: ParseError[] = [];
    const root = parseTree(source, errors, TREE_OPTIONS);
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
    const parsed = schema().safeParse(getNodeValue(root));
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

const TREE_OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false };

/** How deeply a policy file's text may nest: far beyond any real policy, far below a stack overflow. */
export const MAX_TEXT_DEPTH = 512;
/** How deeply an `equals` value may nest (the same bound as for a call's input). */
export const MAX_EQUALS_DEPTH = 256;

/** The message for an `equals` value nested too deeply; compile.ts gives the same one for shallower excess. */
export function equalsTooDeepMessage(pointer: string): string {
  return `the "equals" value at input ${JSON.stringify(pointer)} is nested more than ${MAX_EQUALS_DEPTH} levels deep`;
}

/**
 * How deeply the text's brackets nest, strings and comments skipped: one pass over the
 * characters, an upper bound of what the scanner would find (an unclosed string or comment
 * ends the count early, and the parser reports it). Only deeper text takes the slower pass
 * that places the diagnostic.
 */
export function maxNesting(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      if (++depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) {
      if (depth > 0) depth--;
    } else if (c === 0x22) {
      // A string ends, as the scanner reads it, at the next quote not escaped or at a line break.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22 || d === 0x0a || d === 0x0d) break;
      }
    } else if (c === 0x2f && text.charCodeAt(i + 1) === 0x2f) {
      for (i += 2; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x0a || d === 0x0d) break;
      }
    } else if (c === 0x2f && text.charCodeAt(i + 1) === 0x2a) {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
    }
  }
  return max;
}

interface Frame {
  array: boolean;
  offset: number;
  /** The current key (object) or index (array) of the child being read. */
  at: string | number | undefined;
}

/**
 * Text nested more than MAX_TEXT_DEPTH levels, found by one iterative pass of the scanner.
 * Inside an input matcher's `equals` the diagnostic sits on that matcher, as compile.ts puts it
 * for a value a little less deep; elsewhere it sits on the first container too deep.
 */
function nestingDiagnostics(text: string, file: string, what: string): Diagnostic[] {
  const scanner = createScanner(text, true);
  const stack: Frame[] = [];
  const out: Diagnostic[] = [];
  // A diagnostic still waiting for the end of the container it covers: [depth, diagnostic].
  const open: [number, Diagnostic][] = [];
  let general = false;
  let lastString: string | undefined;
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    switch (token) {
      case SyntaxKind.OpenBraceToken:
      case SyntaxKind.OpenBracketToken: {
        const offset = scanner.getTokenOffset();
        stack.push({ array: token === SyntaxKind.OpenBracketToken, offset, at: token === SyntaxKind.OpenBracketToken ? 0 : undefined });
        if (stack.length === MAX_TEXT_DEPTH + 1) {
          const f = stack;
          // root { rules [ rule { input { pointer: matcher { equals: value
          const inEquals = f.length > 6 && f[0]!.at === 'rules' && typeof f[1]!.at === 'number' && f[2]!.at === 'input' && typeof f[3]!.at === 'string' && f[4]!.at === 'equals';
          if (inEquals) {
            const matcher = f[4]!;
            if (!out.some((d) => d.offset === matcher.offset)) {
              const d: Diagnostic = { file, severity: 'error', code: 'schema', offset: matcher.offset, length: text.length - matcher.offset, message: equalsTooDeepMessage(f[3]!.at as string) };
              out.push(d);
              open.push([5, d]);
            }
          } else if (!general) {
            general = true;
            const d: Diagnostic = { file, severity: 'error', code: 'syntax', offset, length: text.length - offset, message: `${what} is nested more than ${MAX_TEXT_DEPTH} levels deep` };
            out.push(d);
            open.push([stack.length, d]);
          }
        }
        break;
      }
      case SyntaxKind.CloseBraceToken:
      case SyntaxKind.CloseBracketToken: {
        const end = scanner.getTokenOffset() + scanner.getTokenLength();
        while (open.length > 0 && open[open.length - 1]![0] === stack.length) {
          const d = open.pop()![1];
          d.length = end - d.offset;
        }
        stack.pop();
        break;
      }
      case SyntaxKind.StringLiteral:
        lastString = scanner.getTokenValue();
        break;
      case SyntaxKind.ColonToken: {
        const top = stack[stack.length - 1];
        if (top && !top.array) top.at = lastString;
        break;
      }
      case SyntaxKind.CommaToken: {
        const top = stack[stack.length - 1];
        if (top) top.at = top.array && typeof top.at === 'number' ? top.at + 1 : undefined;
        break;
      }
      default:
        break;
    }
  }
  return out;
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
    case 'too_big':
      return [at(node, `must be at most ${String(issue.maximum)}${where}`)];
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
  // The distance costs length × length: a name far longer than any field is no typo of one.
  if (name.length > MAX_TYPO_LENGTH) return undefined;
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

const MAX_TYPO_LENGTH = 64;

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
