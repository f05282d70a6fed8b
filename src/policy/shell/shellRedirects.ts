// The files a simple command's redirects name (`> f`, `>> ~/.bashrc`: written; `< f`: read), kept
// beside the command rather than on it so a command stays its words and flags (the shell tests
// compare them whole). Read by commandPaths.ts for the rules on paths.
import type { SimpleCommand } from './shellCommand.js';

export interface RedirectFile {
  /** The target after quote removal, or its raw text when it has an expansion or a glob. */
  file: string;
  writes: boolean;
  /** False when it has an expansion or a glob. */
  known: boolean;
}

const redirects = new WeakMap<SimpleCommand, RedirectFile[]>();

export function addRedirectFile(cmd: SimpleCommand, file: RedirectFile): void {
  const list = redirects.get(cmd);
  if (list === undefined) redirects.set(cmd, [file]);
  else list.push(file);
}

export function redirectFilesOf(cmd: SimpleCommand): readonly RedirectFile[] {
  return redirects.get(cmd) ?? [];
}

/** A further part made from `cmd` (an unwrapped wrapper) writes where `cmd` does. */
export function shareRedirectFiles(from: SimpleCommand, to: SimpleCommand): void {
  const list = redirects.get(from);
  if (list !== undefined) redirects.set(to, list);
}
