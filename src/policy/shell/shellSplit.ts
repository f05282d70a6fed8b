// Splitting a shell command line into its simple commands, the entry point of the shell
// analysis: plain commands and tame quoting take a fast path (shellFastSplit.ts), the rest go
// through the parser (shellParser.ts), the plain tree (shellTree.ts), the check for what the parser
// misread (shellMisread.ts) and the walker (shellWalker.ts).
import type { SplitResult } from './shellCommand.js';
import { splitPlainCommand, splitQuotedCommand } from './shellFastSplit.js';
import { markProgramReaches } from './shellPrograms.js';
import { misreadInput } from './shellMisread.js';
import { resetShellParser, shellParser } from './shellParser.js';
import { describeError, toPlainTree } from './shellTree.js';
import { unwrapCommands } from './shellUnwrap.js';
import { Walker, type SimpleCommand } from './shellWalker.js';

export type { SplitResult } from './shellCommand.js';

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
  // What programs do through their options (sed -i, git -c core.pager=…): marked on their parts.
  markProgramReaches(unwrapped.commands);
  // Nothing unwrapped (most lines): the split as it is.
  if (unwrapped.ok && unwrapped.commands === split.commands) return split;
  return split.ok ? unwrapped : { ok: false, error: split.error, commands: unwrapped.commands };
}

/** The split, a fast path or the parser, before wrappers are unwrapped. */
function splitUnwrapped(source: string): SplitResult {
  if (typeof source !== 'string') return splitWithParser(source);
  return splitPlainCommand(source) ?? splitQuotedCommand(source) ?? splitWithParser(source);
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
      walker.error ??= misreadInput(root, source);
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

function nonEmpty(c: SimpleCommand): boolean {
  return c.words.length > 0 || c.writesToFile || c.usesProcessSubstitution;
}
