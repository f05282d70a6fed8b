// The no-bash hook: builtin.run_command runs commands with bash, the grammar the policy's
// command splitter reads. Where there is no bash a command would run with /bin/sh, which reads
// some lines differently (`&>`, `$'…'`), so no rule can vouch for it: every command is asked.
import { findBash } from '../sandbox/commandProcess.js';
import type { ToolHook } from '../tree/sessionOptions.js';

export const NO_BASH_HOOK = 'no-bash';

export const NO_BASH_REASON =
  'bash is not installed on this machine, so commands cannot be read by the grammar they run with; every command is asked';

/** Asks for every `builtin.run_command` call when `options.findBash` (default: findBash) finds no bash. */
export function noBashHook(options: { findBash?: () => string | undefined } = {}): ToolHook {
  const find = options.findBash ?? findBash;
  return {
    name: NO_BASH_HOOK,
    check({ tool }) {
      if (tool.id !== 'builtin.run_command') return undefined;
      return find() === undefined ? NO_BASH_REASON : undefined;
    },
  };
}
