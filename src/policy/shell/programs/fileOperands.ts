// Which of a program's words are files it writes, and which programs read or change everything
// under a folder they are given (docs/programs.md, "Paths named in commands"). Data read by
// src/policy/paths/commandPaths.ts.
import { longOption } from './programRow.js';

/** Programs whose operands (words that are no option) are all files they change. */
export const CHANGES_OPERANDS: ReadonlySet<string> = new Set(['tee', 'touch', 'mkdir', 'rm', 'rmdir', 'unlink', 'truncate', 'shred', 'chmod', 'chown', 'chgrp']);

/** Of those, the programs whose first operand is a mode or an owner, not a file. */
export const MODE_FIRST: ReadonlySet<string> = new Set(['chmod', 'chown', 'chgrp']);

/**
 * Programs whose operands are files they read: an operand with an expansion (`cat "$f"`) is then
 * a path the judge cannot place. Other programs' words with an expansion count only when they look
 * like a path (`"$DIR"/x`, `~$U`).
 */
export const READS_OPERANDS: ReadonlySet<string> = new Set(['cat', 'head', 'tail', 'less', 'more', 'nl', 'tac', 'base64', 'base32', 'xxd', 'od', 'hexdump', 'strings', 'wc', 'sort', 'uniq', 'cut', 'diff', 'cmp', 'source', '.', 'tar', 'zip', 'gzip', 'bzip2', 'xz', 'scp', 'rsync', 'cp', 'mv', 'ln', 'install', 'openssl', 'gpg', 'md5sum', 'sha1sum', 'sha256sum', 'file', 'stat', 'grep', 'rg']);

/** Programs whose last operand is where they write (with two operands or more), or `-t DIR`. */
export const WRITES_LAST: ReadonlySet<string> = new Set(['cp', 'mv', 'install', 'ln', 'rsync', 'scp']);

/** Options whose next word (or attached value) is a file the program writes. */
export const WRITE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  sort: ['-o', '--output'],
  cp: ['-t', '--target-directory'],
  mv: ['-t', '--target-directory'],
  install: ['-t', '--target-directory'],
  ln: ['-t', '--target-directory'],
  curl: ['-o', '--output'],
  wget: ['-O', '--output-document'],
};

/** Options whose next word (or attached value after `@`) is a file the program reads. */
export const READ_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  curl: ['-T', '--upload-file', '-K', '--config'],
  grep: ['-f', '--file'],
};

interface Recursion {
  /** Short option letters that make it recursive (also inside a cluster: `-rn`). */
  shorts: string;
  longs: readonly string[];
  /** Recursive with no option (rg searches folders it is given). */
  always?: true;
  /** It changes (removes, re-owns) what is under the folder rather than reading it. */
  writes?: true;
}

/** Programs that read or change everything under a folder operand, and the options that make them. */
export const RECURSIVE: Readonly<Record<string, Recursion>> = {
  grep: { shorts: 'rR', longs: ['recursive', 'dereference-recursive'] },
  egrep: { shorts: 'rR', longs: ['recursive', 'dereference-recursive'] },
  fgrep: { shorts: 'rR', longs: ['recursive', 'dereference-recursive'] },
  rg: { shorts: '', longs: [], always: true },
  ag: { shorts: '', longs: [], always: true },
  cp: { shorts: 'rRa', longs: ['recursive', 'archive'] },
  scp: { shorts: 'r', longs: [] },
  rsync: { shorts: 'ra', longs: ['recursive', 'archive'] },
  zip: { shorts: 'r', longs: ['recurse-paths'] },
  diff: { shorts: 'r', longs: ['recursive'] },
  // tar reads a folder it is given when it creates or adds to an archive (tar.ts knows the modes).
  tar: { shorts: 'cru', longs: ['create', 'append', 'update'] },
  rm: { shorts: 'rR', longs: ['recursive'], writes: true },
  chmod: { shorts: 'R', longs: ['recursive'], writes: true },
  chown: { shorts: 'R', longs: ['recursive'], writes: true },
  chgrp: { shorts: 'R', longs: ['recursive'], writes: true },
};

/** Searchers whose first operand is a pattern, and that search the working folder when given no other. */
export const PATTERN_FIRST: ReadonlySet<string> = new Set(['grep', 'egrep', 'fgrep', 'rg', 'ag']);

/** Whether the options among `words` make `program` recursive (tar's old style `czf` included). */
export function isRecursive(program: string, words: readonly string[]): Recursion | undefined {
  const r = RECURSIVE[program];
  if (r === undefined) return undefined;
  if (r.always === true) return r;
  for (const [i, w] of words.entries()) {
    if (w === '--') break;
    if (w.startsWith('--')) {
      if (longOption(w, r.longs) !== undefined) return r;
    } else if (w.startsWith('-') && [...w.slice(1)].some((ch) => r.shorts.includes(ch))) {
      return r;
    } else if (program === 'tar' && i === 0 && /^[A-Za-z]+$/.test(w) && /[cru]/.test(w)) {
      return r;
    }
  }
  return undefined;
}
