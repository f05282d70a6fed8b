// Splitting a shell command line into its simple commands, the entry point of the shell
// analysis: plain commands take a fast path, the rest go through the parser (shellParser.ts),
// the plain tree (shellTree.ts) and the walker (shellWalker.ts).
import { resetShellParser, shellParser } from './shellParser.js';
import { describeError, toPlainTree } from './shellTree.js';
import { unwrapCommands } from './shellUnwrap.js';
import { Walker, type SimpleCommand } from './shellWalker.js';

export type SplitResult =
  | { ok: true; commands: SimpleCommand[] }
  | { ok: false; error: string; commands: SimpleCommand[] }; // commands: whatever could be recovered, best effort

/**
 * Splits a shell command line into its simple commands (including those nested in
 * $(...), `...`, <(...), ${...}, here-documents, subshells, groups, compound commands and
 * function bodies), with what wrappers and programs named by a path run as further parts.
 * Whatever bash would run is a part, or the result is `ok: false`; a part whose program is
 * only known when it runs is `dynamic`. Requires `initShellParser()` to have completed
 * (throws otherwise); for any string input after that it never throws.
 */
export function splitCommand(source: string): SplitResult {
  const split = splitUnwrapped(source);
  // Programs that run programs (env, sudo, xargs, bash -c, ...) and /bin/rm: what they run is a further part.
  const unwrapped = unwrapCommands(split.commands, splitUnwrapped);
  return split.ok ? unwrapped : { ok: false, error: split.error, commands: unwrapped.commands };
}

/** The split, fast path or parser, before wrappers are unwrapped. */
function splitUnwrapped(source: string): SplitResult {
  return (typeof source === 'string' ? splitPlainCommand(source) : undefined) ?? splitWithParser(source);
}

/** The parser's split, with no fast path (tests compare the two). */
export function splitWithParser(source: string): SplitResult {
  const parser = shellParser();
  if (!parser) {
    throw new Error('splitCommand() called before the shell parser was initialised: await initShellParser() once at startup');
  }
  let walker: Walker | undefined;
  try {
    if (typeof source !== 'string') return { ok: false, error: 'input is not a string', commands: [] };
    const tree = parser.parse(source);
    if (!tree) return { ok: false, error: 'shell parser returned no tree', commands: [] };
    try {
      const root = toPlainTree(tree);
      walker = new Walker(source, splitUnwrapped);
      walker.walk(root);
      if (root.hasError && walker.error === undefined) walker.error = describeError(root, source);
      if (walker.error !== undefined) {
        return { ok: false, error: walker.error, commands: walker.out.filter(nonEmpty) };
      }
      return { ok: true, commands: walker.out };
    } finally {
      tree.delete();
    }
  } catch (err) {
    resetShellParser();
    const msg =
      err instanceof RangeError && /call stack/i.test(err.message)
        ? 'command is nested too deeply to analyse'
        : err instanceof Error
          ? err.message
          : String(err);
    return { ok: false, error: `shell parser failure: ${msg}`, commands: walker ? walker.out.filter(nonEmpty) : [] };
  }
}

// A command made only of these characters has no quoting, expansions, globs, comments or
// redirections: every shell reads it as simple commands whose words are the blank-separated
// fields, joined by the list and pipe operators (`&&`, `||`, `;`, `&`, `|`, `|&`). Such commands
// (most allowed ones: `npm test`, `git status && git diff`) skip the parser, which costs tens
// of microseconds.
const PLAIN = /^[A-Za-z0-9 \t_.\/=:+,;&|-]*$/;
const OPERATOR = /&&|\|\||\|&|[;&|]/;
const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'in', 'function', 'select', 'time', 'coproc', '{', '}', '!', '[[', ']]']);

/** The split of a plain command, or undefined when the parser must decide. */
export function splitPlainCommand(source: string): SplitResult | undefined {
  if (source.length > 4096 || !PLAIN.test(source)) return undefined;
  const segments = OPERATOR.test(source) ? source.split(OPERATOR) : [source];
  const commands: SimpleCommand[] = [];
  for (const segment of segments) {
    const words = segment.split(/[ \t]+/).filter((w) => w.length > 0);
    // An empty command between operators (`a;;b`, `&& a`, `a &`) is the parser's to judge.
    if (words.length === 0) {
      if (segments.length > 1) return undefined;
      continue;
    }
    if (words.some((w) => RESERVED.has(w))) return undefined;
    commands.push({ words, writesToFile: false, usesProcessSubstitution: false });
  }
  return { ok: true, commands };
}

function nonEmpty(c: SimpleCommand): boolean {
  return c.words.length > 0 || c.writesToFile || c.usesProcessSubstitution;
}
