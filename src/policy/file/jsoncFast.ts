// The value of a JSONC text in one pass of the scanner, without the syntax tree: building a node
// for every value is most of what loading a large policy costs, and the tree is needed only to
// place a diagnostic. Anything this reader does not take as plainly valid (a syntax error, a
// duplicate key, nesting too deep, a key JSON.parse-like building would treat specially) makes
// it give up, and the caller takes the full way, which says what is wrong and where.
import { createScanner, ScanError, SyntaxKind } from 'jsonc-parser';

/** Where an element of a top-level array sits in the text. */
export interface Span {
  offset: number;
  length: number;
}

export interface FastJsonc {
  value: unknown;
  /** The spans of the elements of each array that is a property of the root object, by property name. */
  topLevelArrays: ReadonlyMap<string, readonly Span[]>;
}

/**
 * Where a container's reading is. Objects: start → key → colon → value → comma → key …;
 * arrays: start → value → comma → value …. A comma may come last (JSONC allows it).
 */
type State = 'start' | 'key' | 'colon' | 'value' | 'comma';

interface Frame {
  container: Record<string, unknown> | unknown[];
  state: State;
  /** For an object: the key waiting for its value, and how many keys it has (each one already set in it). */
  key: string | undefined;
  keyCount: number;
  /** Spans of this array's elements, when it is a property of the root object. */
  spans: Span[] | undefined;
}

/** A key an object built by assignment would not keep as its own (`__proto__`), or one V8 reorders (an array index). */
const SPECIAL_KEY = /^(?:__proto__|0|[1-9]\d{0,9})$/;

const MAX_KEYS = 64;

function withoutPrototype(): Record<string, unknown> {
  const object = {};
  Object.setPrototypeOf(object, null);
  return object as Record<string, unknown>;
}

/** The value, or undefined when the full reader must decide (and report). */
export function readJsoncFast(text: string, maxDepth: number): FastJsonc | undefined {
  const scanner = createScanner(text, true);
  const stack: Frame[] = [];
  const topLevelArrays = new Map<string, Span[]>();
  let root: unknown;
  let done = false;

  /** Puts a value where the reading expects one; false when it expects none. */
  const place = (value: unknown, start: number, end: number): boolean => {
    const top = stack[stack.length - 1];
    if (top === undefined) {
      if (done) return false;
      root = value;
      done = true;
      return true;
    }
    if (Array.isArray(top.container)) {
      if (top.state === 'value') return false;
      top.container.push(value);
      top.spans?.push({ offset: start, length: end - start });
    } else {
      if (top.state !== 'colon') return false;
      top.container[top.key!] = value;
      top.key = undefined;
    }
    top.state = 'value';
    return true;
  };

  // A container is placed in its parent when it opens (so its span starts right) and filled after.
  const open = (container: Record<string, unknown> | unknown[], start: number): boolean => {
    if (stack.length >= maxDepth) return false;
    const parent = stack[stack.length - 1];
    const key = parent && !Array.isArray(parent.container) ? parent.key : undefined;
    if (!place(container, start, start)) return false;
    const spans = Array.isArray(container) && stack.length === 1 && key !== undefined ? [] : undefined;
    if (spans) topLevelArrays.set(key!, spans);
    stack.push({ container, state: 'start', key: undefined, keyCount: 0, spans });
    return true;
  };

  const close = (array: boolean, end: number): boolean => {
    const frame = stack[stack.length - 1];
    if (frame === undefined || Array.isArray(frame.container) !== array) return false;
    if (frame.state === 'key' || frame.state === 'colon') return false; // a key without its value
    stack.pop();
    // The span of the container just closed, in its parent's list, ends here.
    const spans = stack[stack.length - 1]?.spans;
    if (spans && spans.length > 0) {
      const last = spans[spans.length - 1]!;
      if (last.length === 0) last.length = end - last.offset;
    }
    return true;
  };

  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    if (scanner.getTokenError() !== ScanError.None) return undefined;
    const start = scanner.getTokenOffset();
    const end = start + scanner.getTokenLength();
    const top = stack[stack.length - 1];
    switch (token) {
      case SyntaxKind.OpenBraceToken:
        // Without a prototype, as the full reader builds objects (the schema sees the same values);
        // but not by Object.create(null), whose objects V8 keeps as hash tables (several times
        // the memory and the time per rule): a literal whose prototype is then taken away stays compact.
        if (!open(withoutPrototype(), start)) return undefined;
        break;
      case SyntaxKind.OpenBracketToken:
        if (!open([], start)) return undefined;
        break;
      case SyntaxKind.CloseBraceToken:
      case SyntaxKind.CloseBracketToken:
        if (!close(token === SyntaxKind.CloseBracketToken, end)) return undefined;
        break;
      case SyntaxKind.CommaToken:
        if (top === undefined || top.state !== 'value') return undefined;
        top.state = 'comma';
        break;
      case SyntaxKind.ColonToken:
        if (top === undefined || top.state !== 'key') return undefined;
        top.state = 'colon';
        break;
      case SyntaxKind.StringLiteral: {
        const value = scanner.getTokenValue();
        if (top !== undefined && !Array.isArray(top.container) && (top.state === 'start' || top.state === 'comma')) {
          // A key, never seen before in its object, and nothing special. The object has no
          // prototype and every earlier key already holds its value, so `in` asks exactly that.
          // (More than MAX_KEYS go the full way.)
          if (SPECIAL_KEY.test(value) || top.keyCount >= MAX_KEYS || value in top.container) return undefined;
          top.keyCount++;
          top.key = value;
          top.state = 'key';
          break;
        }
        if (!place(value, start, end)) return undefined;
        break;
      }
      case SyntaxKind.NumericLiteral: {
        const value = Number(scanner.getTokenValue());
        if (Number.isNaN(value) || !place(value, start, end)) return undefined;
        break;
      }
      case SyntaxKind.TrueKeyword:
      case SyntaxKind.FalseKeyword:
      case SyntaxKind.NullKeyword:
        if (!place(token === SyntaxKind.NullKeyword ? null : token === SyntaxKind.TrueKeyword, start, end)) return undefined;
        break;
      default:
        return undefined; // anything else is not JSONC
    }
  }
  return done && stack.length === 0 ? { value: root, topLevelArrays } : undefined;
}
