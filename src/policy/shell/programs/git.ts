// git: configuration that names programs (`-c core.pager=…`, `alias.x=!…`), options that run a
// program or write a file, and sub-commands that run one (docs/programs.md, "git").
import { longOption, row, type ProgramKnowledge, type ProgramReach, type ProgramRow } from './programRow.js';

const CONFIG = row('git.config-program', 'runs-program', '-c KEY=VALUE (a key that names a program)', 'sets a configuration key whose value git runs as a program (core.pager, core.editor, core.sshCommand, alias.*=!…, *.textconv, filter.*, credential.helper, …)', []);
const EXEC_PATH = row('git.exec-path', 'runs-program', '--exec-path=DIR', 'runs git\'s sub-commands from another folder', ['--exec-path']);
const PACK = row('git.pack-program', 'runs-program', '--upload-pack / --receive-pack / -u / --exec CMD', 'runs CMD in place of git\'s own pack program', ['--upload-pack', '--receive-pack', '--exec', '-u']);
const FOREACH = row('git.submodule-foreach', 'runs-program', 'submodule foreach CMD', 'runs CMD in a shell in every submodule', ['foreach']);
const EXTCMD = row('git.difftool-extcmd', 'runs-program', 'difftool -x / --extcmd CMD', 'runs CMD on every changed file', ['-x', '--extcmd']);
const PAGER = row('git.grep-pager', 'runs-program', 'grep -O / --open-files-in-pager[=CMD]', 'opens the matching files with CMD', ['-O', '--open-files-in-pager']);
const REBASE = row('git.rebase-exec', 'runs-program', 'rebase -x / --exec CMD', 'runs CMD after every commit it replays', ['-x', '--exec']);
const BISECT = row('git.bisect-run', 'runs-program', 'bisect run CMD', 'runs CMD at every step', ['run']);
const OUTPUT = row('git.output', 'writes', '--output=FILE (log, show, diff, format-patch -o DIR)', 'writes its output to a file it names', ['--output', '-o']);
const CONFIG_WRITE = row('git.config-write', 'writes', 'config KEY VALUE (a write)', 'writes git\'s configuration, where a key can name a program it runs later', ['config']);
export const GIT_ROWS: readonly ProgramRow[] = [CONFIG, EXEC_PATH, PACK, FOREACH, EXTCMD, PAGER, REBASE, BISECT, OUTPUT, CONFIG_WRITE];

/** Keys (lower case; `*` one name part) whose value git runs, or that bring in such keys. */
const PROGRAM_KEYS: readonly RegExp[] = [
  /^core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|worktree)$/,
  /^sequence\.editor$/, /^gpg\.(program|[^.]+\.program)$/, /^credential\.([^.]+\.)?helper$/,
  /^diff\.(external|[^.]+\.(textconv|command))$/, /^[^.]+\.[^.]+\.textconv$/, /^filter\.[^.]+\.(clean|smudge|process)$/,
  /^merge\.[^.]+\.driver$/, /^(diff|merge)tool\.[^.]+\.(cmd|path)$/, /^pager\./, /^include(if\.[^.]+)?\.path$/, /^includeif\./,
  /^remote\.[^.]+\.(uploadpack|receivepack|proxy)$/, /^uploadpack\.packobjectshook$/, /^protocol\.(ext|allow|[^.]+\.allow)$/,
  /^ssh\.variant$/, /^instaweb\./, /^sendemail\.(smtpserver|tocmd|cccmd)$/, /^web\.browser$/, /^browser\.[^.]+\.(cmd|path)$/,
];

/** A `-c` key=value that makes git run a program (alias: only one that starts with `!`, a shell command). */
function runsProgram(assignment: string): boolean {
  const eq = assignment.indexOf('=');
  const key = (eq < 0 ? assignment : assignment.slice(0, eq)).toLowerCase();
  if (key.startsWith('alias.')) return eq >= 0 && assignment.slice(eq + 1).trimStart().startsWith('!');
  return PROGRAM_KEYS.some((k) => k.test(key));
}

/** Global options that take the next word (when not attached). */
const GLOBAL_ARG = ['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix', '--list-cmds', '--attr-source'];
const GLOBAL_LONGS = ['git-dir', 'work-tree', 'namespace', 'config-env', 'exec-path', 'super-prefix', 'list-cmds', 'attr-source', 'no-pager', 'paginate', 'bare', 'no-replace-objects', 'literal-pathspecs', 'glob-pathspecs', 'noglob-pathspecs', 'icase-pathspecs', 'no-optional-locks', 'no-advice', 'html-path', 'man-path', 'info-path', 'version', 'help'];
const PACK_LONGS = ['upload-pack', 'receive-pack', 'exec'];

/** The index of git's sub-command: its global options (`-C dir`, `-c k=v`, `--no-pager`, …) skipped. */
export function gitSubcommandIndex(words: readonly string[]): number {
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith('-') || w === '--') break;
    const long = longOption(w, GLOBAL_LONGS);
    if (w === '-c' || w === '-C' || (long !== undefined && ['git-dir', 'work-tree', 'namespace', 'config-env', 'super-prefix', 'list-cmds', 'attr-source'].includes(long) && !w.includes('='))) i++;
  }
  return i;
}

export const git: ProgramKnowledge = {
  programs: ['git'],
  rows: GIT_ROWS,
  read(words, isStatic) {
    const hits: ProgramReach[] = [];
    let i = 1;
    // Global options before the sub-command: none of them hides it.
    for (; i < words.length; i++) {
      const w = words[i]!;
      if (!w.startsWith('-') || w === '--') break;
      const long = longOption(w, GLOBAL_LONGS);
      if (w === '-c' || w.startsWith('-c') || long === 'config-env') {
        const attached = w === '-c' ? undefined : long === 'config-env' ? (w.includes('=') ? w.slice(w.indexOf('=') + 1) : undefined) : w.slice(2);
        const value = attached ?? words[i + 1] ?? '';
        const index = attached === undefined ? i + 1 : i;
        if (!isStatic(index) || runsProgram(value)) hits.push({ row: CONFIG, word: value });
        if (attached === undefined) i++;
        continue;
      }
      if (long === 'exec-path' && w.includes('=')) hits.push({ row: EXEC_PATH, word: w });
      if (GLOBAL_ARG.includes(w) || (long !== undefined && ['git-dir', 'work-tree', 'namespace', 'super-prefix', 'list-cmds', 'attr-source'].includes(long) && !w.includes('='))) i++;
    }
    const sub = words[i];
    const rest = words.slice(i + 1);
    if (sub === undefined) return hits;
    // An option as git reads it: `--exec`, an abbreviation of it (`--exe`), `-x` alone, attached (`-xCMD`) or in a cluster (`-ix`).
    const has = (...spellings: string[]): string | undefined => rest.find((w) => spellings.some((s) => w === s || (s.startsWith('--') && longOption(w, [s.slice(2)]) !== undefined) || (s.length === 2 && !w.startsWith('--') && new RegExp(`^-[A-Za-z0-9]*${s[1]}`).test(w))));
    const packOption = rest.find((w) => longOption(w, PACK_LONGS) !== undefined);
    if (packOption !== undefined) hits.push({ row: PACK, word: packOption });
    if (['fetch', 'clone', 'pull', 'ls-remote', 'archive'].includes(sub) && rest.some((w) => w === '-u' || /^-u./.test(w))) hits.push({ row: PACK, word: '-u' });
    switch (sub) {
      case 'submodule':
        if (rest.includes('foreach')) hits.push({ row: FOREACH, word: 'foreach' });
        break;
      case 'difftool': {
        const x = has('-x', '--extcmd');
        if (x !== undefined) hits.push({ row: EXTCMD, word: x });
        break;
      }
      case 'grep': {
        const o = has('-O', '--open-files-in-pager');
        if (o !== undefined) hits.push({ row: PAGER, word: o });
        break;
      }
      case 'rebase': {
        const x = has('-x', '--exec');
        if (x !== undefined) hits.push({ row: REBASE, word: x });
        break;
      }
      case 'bisect':
        if (rest[0] === 'run') hits.push({ row: BISECT, word: 'run' });
        break;
      case 'config':
        if (configWrites(rest)) hits.push({ row: CONFIG_WRITE, word: 'config' });
        break;
    }
    if (['log', 'show', 'diff', 'whatchanged', 'format-patch', 'range-diff', 'archive', 'bundle'].includes(sub)) {
      const out = rest.find((w) => longOption(w, ['output', 'output-directory']) !== undefined || (sub === 'format-patch' && (w === '-o' || /^-o./.test(w))) || (sub === 'archive' && (w === '-o' || /^-o./.test(w))));
      if (out !== undefined) {
        // --output=FILE, --output FILE, -oDIR, -o DIR: the file (or folder) it writes.
        const value = out.includes('=') ? out.slice(out.indexOf('=') + 1) : /^-o./.test(out) ? out.slice(2) : rest[rest.indexOf(out) + 1];
        hits.push({ row: OUTPUT, word: out, ...(value !== undefined ? { files: [value] } : {}) });
      }
      if (sub === 'bundle' && rest[0] === 'create') hits.push({ row: OUTPUT, word: 'bundle create' });
    }
    return hits;
  },
};

/** `git config …` changes the configuration unless it only reads (`--get`, `--list`, `get`, `list`, a key alone). */
function configWrites(rest: readonly string[]): boolean {
  const reading = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool', '--list', '-l', '--show-origin', '--show-scope', '--name-only', '--null', '-z', '--includes', '--no-includes', '--type', '--bool', '--int', '--path', '--expiry-date', '--global', '--system', '--local', '--worktree', '--file', '-f', '--blob', '--default'];
  const sub = rest[0];
  if (sub === 'get' || sub === 'list') return false;
  if (['set', 'unset', 'rename-section', 'remove-section', 'edit', '--add', '--unset', '--unset-all', '--replace-all', '--rename-section', '--remove-section', '--edit', '-e'].some((w) => rest.includes(w))) return true;
  const positional: string[] = [];
  for (let k = 0; k < rest.length; k++) {
    const w = rest[k]!;
    if (w.startsWith('-')) {
      if (!reading.some((r) => w === r || w.startsWith(`${r}=`))) return true;
      if ((w === '--file' || w === '-f' || w === '--blob' || w === '--type' || w === '--default') && !w.includes('=')) k++;
      if (['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '-l', '--get-color', '--get-colorbool'].includes(w)) return false;
      continue;
    }
    positional.push(w);
  }
  // `git config KEY` reads; `git config KEY VALUE` writes.
  return positional.length >= 2;
}
