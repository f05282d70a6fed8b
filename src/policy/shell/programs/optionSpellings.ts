// Options as the program reads them, for `ask` and `deny` patterns (docs/programs.md, "Every
// spelling of an option"): `"git push --force *"` takes `git push -f`, `--forc`, `--force-with-lease`,
// `origin +main`, `-vf`, and `git -C dir -c k=v push --force`, the option anywhere among the
// arguments. A command of a sub-command the table knows is read as its words that are no option,
// in order, and the set of its options by their full names (clusters split, abbreviations and
// synonyms resolved, refspecs read); a pattern is read the same way.
import { gitSubcommandIndex } from './git.js';
import { longOption } from './programRow.js';

export interface OptionReading {
  /** The words that are neither options nor their values, in order (program and sub-command first). */
  positional: string[];
  /** Each option by its full name (`force`, `delete`). */
  options: Set<string>;
}

interface SubcommandOptions {
  /** Short letter → full names it stands for (`D` → delete and force). */
  shorts: Record<string, readonly string[]>;
  /** Long options; a synonym maps to the names it stands for. */
  longs: Record<string, readonly string[]>;
  /** Options that take a value (the next word, when not attached). */
  takesValue: readonly string[];
  /** A refspec `+x` forces, `:x` deletes (git push). */
  refspecs?: boolean;
  /** Short options whose value, if any, is only attached: the rest of their cluster (`sed -i.bak`). */
  attachedValue?: string;
  /** The first word may be a cluster without a dash (`tar xzf a.tgz`). */
  bareCluster?: boolean;
}

const same = (...names: string[]): Record<string, readonly string[]> => Object.fromEntries(names.map((n) => [n, [n]]));

/** git's sub-commands whose destructive options people deny (push, branch, reset, clean, checkout, tag). */
const GIT: Record<string, SubcommandOptions> = {
  push: {
    shorts: { f: ['force'], d: ['delete'], u: ['set-upstream'], v: ['verbose'], q: ['quiet'], n: ['dry-run'], o: ['push-option'], '4': ['ipv4'], '6': ['ipv6'] },
    longs: { ...same('force', 'delete', 'set-upstream', 'verbose', 'quiet', 'dry-run', 'push-option', 'all', 'branches', 'mirror', 'tags', 'follow-tags', 'atomic', 'no-verify', 'verify', 'porcelain', 'prune', 'repo', 'receive-pack', 'exec', 'signed', 'no-signed', 'thin', 'no-thin', 'recurse-submodules', 'ipv4', 'ipv6', 'progress'), 'force-with-lease': ['force'], 'force-if-includes': ['force'] },
    takesValue: ['o', 'push-option', 'repo', 'receive-pack', 'exec'],
    refspecs: true,
  },
  branch: {
    shorts: { d: ['delete'], D: ['delete', 'force'], f: ['force'], m: ['move'], M: ['move', 'force'], c: ['copy'], C: ['copy', 'force'], a: ['all'], r: ['remotes'], v: ['verbose'], l: ['list'], u: ['set-upstream-to'], t: ['track'], q: ['quiet'] },
    longs: { ...same('delete', 'force', 'move', 'copy', 'all', 'remotes', 'verbose', 'list', 'set-upstream-to', 'unset-upstream', 'track', 'no-track', 'quiet', 'merged', 'no-merged', 'contains', 'no-contains', 'sort', 'format', 'show-current', 'edit-description', 'points-at', 'column', 'color', 'ignore-case', 'create-reflog', 'abbrev') },
    takesValue: ['u', 'set-upstream-to', 'merged', 'no-merged', 'contains', 'no-contains', 'sort', 'format', 'points-at'],
  },
  reset: {
    shorts: { q: ['quiet'], p: ['patch'], N: ['intent-to-add'] },
    longs: { ...same('hard', 'soft', 'mixed', 'merge', 'keep', 'quiet', 'patch', 'recurse-submodules', 'no-recurse-submodules', 'pathspec-from-file', 'intent-to-add') },
    takesValue: ['pathspec-from-file'],
  },
  clean: {
    shorts: { f: ['force'], d: ['directories'], x: ['ignored-too'], X: ['only-ignored'], n: ['dry-run'], i: ['interactive'], q: ['quiet'], e: ['exclude'] },
    longs: { ...same('force', 'dry-run', 'interactive', 'quiet', 'exclude') },
    takesValue: ['e', 'exclude'],
  },
  checkout: {
    shorts: { f: ['force'], b: ['new-branch'], B: ['new-branch', 'force'], q: ['quiet'], t: ['track'], m: ['merge'], p: ['patch'] },
    longs: { ...same('force', 'quiet', 'track', 'no-track', 'merge', 'patch', 'detach', 'orphan', 'ours', 'theirs', 'conflict', 'overwrite-ignore', 'ignore-other-worktrees', 'recurse-submodules', 'progress') },
    takesValue: ['b', 'B', 'orphan', 'conflict'],
  },
  tag: {
    shorts: { d: ['delete'], f: ['force'], a: ['annotate'], s: ['sign'], m: ['message'], F: ['file'], l: ['list'], v: ['verify'], n: ['lines'], u: ['local-user'] },
    longs: { ...same('delete', 'force', 'annotate', 'sign', 'message', 'file', 'list', 'verify', 'local-user', 'sort', 'contains', 'points-at', 'merged', 'no-merged', 'format') },
    takesValue: ['m', 'message', 'F', 'file', 'u', 'local-user', 'sort', 'contains', 'points-at', 'merged', 'no-merged', 'format'],
  },
};

/**
 * Programs without sub-commands whose options people ask about or deny (GNU's option parsing:
 * options anywhere before `--`): `rm -rf`, `chmod -R`, `sed -i`, `tar -x`, `sort -o`.
 */
const PROGRAMS: Record<string, SubcommandOptions> = {
  rm: {
    shorts: { f: ['force'], r: ['recursive'], R: ['recursive'], d: ['dir'], i: ['interactive'], I: ['interactive'], v: ['verbose'] },
    longs: { ...same('force', 'recursive', 'dir', 'interactive', 'verbose', 'one-file-system', 'no-preserve-root', 'preserve-root') },
    takesValue: [],
  },
  chmod: {
    shorts: { R: ['recursive'], v: ['verbose'], c: ['changes'], f: ['silent'] },
    longs: { ...same('recursive', 'verbose', 'changes', 'silent', 'quiet', 'reference', 'no-preserve-root', 'preserve-root') },
    takesValue: [],
  },
  sed: {
    shorts: { i: ['in-place'], n: ['quiet'], e: ['expression'], f: ['file'], E: ['regexp-extended'], r: ['regexp-extended'], s: ['separate'], u: ['unbuffered'], z: ['null-data'], l: ['line-length'] },
    longs: { ...same('in-place', 'quiet', 'expression', 'file', 'regexp-extended', 'separate', 'unbuffered', 'null-data', 'line-length', 'posix', 'debug', 'sandbox', 'follow-symlinks', 'help', 'version'), silent: ['quiet'] },
    takesValue: ['e', 'expression', 'f', 'file', 'l', 'line-length'],
    attachedValue: 'i',
  },
  tar: {
    shorts: {
      x: ['extract'], c: ['create'], t: ['list'], r: ['append'], u: ['update'], A: ['catenate'], d: ['diff'], f: ['file'], z: ['gzip'], j: ['bzip2'], J: ['xz'],
      v: ['verbose'], C: ['directory'], p: ['preserve-permissions'], k: ['keep-old-files'], O: ['to-stdout'], P: ['absolute-names'], h: ['dereference'],
      T: ['files-from'], X: ['exclude-from'], I: ['use-compress-program'], a: ['auto-compress'], m: ['touch'], W: ['verify'], b: ['blocking-factor'], H: ['format'], N: ['newer'], g: ['listed-incremental'],
    },
    longs: {
      ...same('extract', 'create', 'list', 'append', 'update', 'catenate', 'diff', 'delete', 'file', 'gzip', 'bzip2', 'xz', 'zstd', 'verbose', 'directory', 'to-command',
        'checkpoint-action', 'checkpoint', 'use-compress-program', 'absolute-names', 'overwrite', 'keep-old-files', 'files-from', 'exclude-from', 'exclude', 'transform',
        'owner', 'group', 'mode', 'mtime', 'newer', 'format', 'blocking-factor', 'strip-components', 'to-stdout', 'preserve-permissions', 'dereference', 'auto-compress',
        'touch', 'verify', 'listed-incremental', 'info-script', 'new-volume-script', 'rsh-command', 'rmt-command', 'index-file', 'warning', 'wildcards', 'recursion', 'remove-files'),
      get: ['extract'], concatenate: ['catenate'], compare: ['diff'], gunzip: ['gzip'], ungzip: ['gzip'], 'compress-program': ['use-compress-program'], xform: ['transform'],
    },
    takesValue: ['f', 'file', 'C', 'directory', 'T', 'files-from', 'X', 'exclude-from', 'I', 'use-compress-program', 'b', 'blocking-factor', 'H', 'format', 'N', 'newer', 'g', 'listed-incremental',
      'to-command', 'checkpoint-action', 'exclude', 'transform', 'owner', 'group', 'mode', 'mtime', 'strip-components', 'info-script', 'new-volume-script', 'rsh-command', 'rmt-command', 'index-file', 'warning'],
    bareCluster: true,
  },
  sort: {
    shorts: { o: ['output'], r: ['reverse'], n: ['numeric-sort'], u: ['unique'], k: ['key'], t: ['field-separator'], S: ['buffer-size'], T: ['temporary-directory'], b: ['ignore-leading-blanks'], f: ['ignore-case'], h: ['human-numeric-sort'], m: ['merge'], s: ['stable'], z: ['zero-terminated'], V: ['version-sort'], c: ['check'], C: ['check'], M: ['month-sort'], g: ['general-numeric-sort'], R: ['random-sort'], d: ['dictionary-order'], i: ['ignore-nonprinting'] },
    longs: { ...same('output', 'reverse', 'numeric-sort', 'unique', 'key', 'field-separator', 'buffer-size', 'temporary-directory', 'ignore-leading-blanks', 'ignore-case', 'human-numeric-sort', 'merge', 'stable', 'zero-terminated', 'version-sort', 'check', 'month-sort', 'general-numeric-sort', 'random-sort', 'dictionary-order', 'ignore-nonprinting', 'files0-from', 'compress-program', 'parallel', 'batch-size', 'random-source', 'sort', 'debug') },
    takesValue: ['o', 'output', 'k', 'key', 't', 'field-separator', 'S', 'buffer-size', 'T', 'temporary-directory', 'files0-from', 'compress-program', 'parallel', 'batch-size', 'random-source', 'sort'],
  },
};

/** Whether the table reads `program`'s options (a cheap test before readOptions). */
export function readsOptionsOf(program: string | undefined): boolean {
  return program === 'git' || (program !== undefined && Object.hasOwn(PROGRAMS, program));
}

/** The reading of a command (or a pattern's words), when its program (and sub-command) are in the table. */
export function readOptions(words: readonly string[]): OptionReading | undefined {
  const program = words[0];
  if (program !== undefined && program !== 'git' && Object.hasOwn(PROGRAMS, program)) return readWith(PROGRAMS[program]!, [program], words, 0);
  if (program !== 'git') return undefined;
  const at = gitSubcommandIndex(words);
  const sub = words[at];
  const spec = sub === undefined || !Object.hasOwn(GIT, sub) ? undefined : GIT[sub];
  if (spec === undefined) return undefined;
  return readWith(spec, ['git', sub!], words, at);
}

/** `words` read by `spec` from after index `at` (the program or sub-command), `head` its positional start. */
function readWith(spec: SubcommandOptions, head: string[], words: readonly string[], at: number): OptionReading {
  const sub = head[head.length - 1]!;
  const reading: OptionReading = { positional: [...head], options: new Set() };
  const add = (names: readonly string[] | undefined): void => {
    for (const n of names ?? [`?${sub}`]) reading.options.add(n);
  };
  const longs = Object.keys(spec.longs);
  let operands = false;
  for (let i = at + 1; i < words.length; i++) {
    // tar's old style: the first word is a cluster without its dash (`tar xzf a.tgz`).
    const w = spec.bareCluster === true && i === at + 1 && /^[A-Za-z]+$/.test(words[i]!) ? `-${words[i]!}` : words[i]!;
    if (operands || !w.startsWith('-') || w === '-') {
      if (w === '*') {
        reading.positional.push(w);
        continue;
      }
      if (spec.refspecs === true && w.length > 1 && w.startsWith('+')) add(['force']);
      if (spec.refspecs === true && w.length > 1 && w.startsWith(':')) add(['delete']);
      reading.positional.push(w);
      continue;
    }
    if (w === '--') {
      operands = true;
      continue;
    }
    if (w.startsWith('--')) {
      const bare = w.slice(2).split('=')[0]!;
      // `--no-force` and the like undo an option: they add nothing (`--no-verify` is an option of its own).
      if (bare.startsWith('no-') && !longs.includes(bare) && longOption(`--${bare.slice(3)}`, longs) !== undefined) continue;
      const name = longOption(w, longs);
      // An option the table does not know is its own name.
      add(name === undefined ? [bare] : spec.longs[name]);
      // A pattern's final `*` is never an option's value: it stands for the rest of the words.
      if (name !== undefined && spec.takesValue.includes(name) && !w.includes('=') && words[i + 1] !== '*') i++;
      continue;
    }
    for (let j = 1; j < w.length; j++) {
      const ch = w[j]!;
      add(spec.shorts[ch] ?? [`-${ch}`]);
      if (spec.attachedValue?.includes(ch) === true) break;
      if (spec.takesValue.includes(ch)) {
        if (j === w.length - 1 && words[i + 1] !== '*') i++;
        break;
      }
    }
  }
  return reading;
}
