// Programs that run a command line they are handed, beyond the shell's own wrappers
// (shellUnwrap.ts reads those): package runners (`npm exec`, `pnpm dlx`), make's evaluated lines,
// GNU parallel, containers (`docker run IMAGE CMD`) and `env -S`. Each gives back what it runs as
// argument vectors or shell lines, which shellUnwrap.ts makes parts of their own.

/** What a wrapper runs: argument vectors (`from`: index of their first word in the wrapper's words, -1 when made up), and strings to split as shell commands. */
export interface Inner {
  argv: Array<{ words: string[]; from: number }>;
  scripts: Array<{ text: string; dynamic: boolean }>;
}

/** A command that cannot be read with certainty: the whole split is unparseable (the strict side). */
export class Unknowable extends Error {}

type Run = (from: number) => Inner;
type Script = (from: number, to?: number) => Inner['scripts'][number];

/**
 * npm/pnpm/yarn `exec`, `x`, `dlx`: `-- COMMAND…`, `-c`/`--call CMD` (a shell line), or the first
 * word that is no option (the package's command). Other sub-commands run no command of the line.
 */
export function packageRunner(
  program: string,
  words: string[],
  isStatic: (index: number) => boolean,
  run: Run,
  script: Script,
): Inner | undefined {
  const runners: Record<string, readonly string[]> = { npm: ['exec', 'x'], pnpm: ['exec', 'dlx'], yarn: ['exec', 'dlx'] };
  if (!runners[program]!.includes(words[1] ?? '')) return undefined;
  for (let k = 2; k < words.length; k++) {
    const w = words[k]!;
    if (w === '--') return k + 1 < words.length ? run(k + 1) : undefined;
    if (w === '-c' || w === '--call') return words[k + 1] === undefined ? undefined : { argv: [], scripts: [script(k + 1)] };
    if (w.startsWith('--call=')) return { argv: [], scripts: [{ text: w.slice(7), dynamic: !isStatic(k) }] };
    if (!w.startsWith('-')) return run(k);
    // Options that take the next word (`--package x`, `-w ws`): that word is not the command.
    if (['--package', '-p', '--workspace', '-w', '--filter', '-F', '--dir', '-C', '--prefix'].includes(w)) k++;
  }
  return undefined;
}

/**
 * make's `--eval=TEXT`, `--eval TEXT`, `-E TEXT`: makefile lines whose recipes it runs with the
 * shell, `target: ; recipe` or a line that starts with a tab (`@`, `-`, `+` before a recipe only
 * change how make runs it). `$$` is make's `$`.
 */
export function makeEval(words: string[], isStatic: (index: number) => boolean): Inner | undefined {
  const scripts: Inner['scripts'] = [];
  for (let k = 1; k < words.length; k++) {
    const w = words[k]!;
    let text: string | undefined;
    let at = k;
    if (w.startsWith('--eval=')) text = w.slice(7);
    else if (w === '--eval' || w === '-E') text = words[(at = ++k)];
    else if (/^-E./.test(w)) text = w.slice(2);
    if (text === undefined) continue;
    for (const recipe of recipesOf(text)) scripts.push({ text: recipe, dynamic: !isStatic(at) });
  }
  return scripts.length > 0 ? { argv: [], scripts } : undefined;
}

/** The recipe lines of makefile text. */
function recipesOf(text: string): string[] {
  const recipes: string[] = [];
  for (const line of text.split('\n')) {
    const rule = /^[^\t=#]*?:(?!=)[^;=]*;(.*)$/.exec(line);
    const recipe = line.startsWith('\t') ? line.slice(1) : rule?.[1];
    if (recipe !== undefined && recipe.trim() !== '') recipes.push(recipe.replace(/^[\s@+-]+/, '').replaceAll('$$', '$'));
  }
  return recipes;
}

/**
 * GNU parallel: `parallel [options] COMMAND ::: ARGS` runs COMMAND (a shell line, `{}` replaced)
 * for each argument; without a command it runs the lines it reads, which no judge can see.
 */
export function parallelCommand(words: string[], script: Script): Inner | undefined {
  let i = 1;
  for (; i < words.length && words[i]!.startsWith('-'); i++) {
    if (words[i] === '--') {
      i++;
      break;
    }
    // Options that take the next word (-j N, -S host, --arg-file f, …).
    if (/^(-[jSPIdEkXLNn]|--(jobs|sshlogin|arg-file|delimiter|colsep|joblog|results|tagstring|workdir|timeout|memfree|load|max-args|max-replace-args|env|basefile|return|transfer(file)?|eof|shebang))$/.test(words[i]!)) i++;
  }
  const end = words.findIndex((w, k) => k >= i && /^:::+\+?$|^::::\+?$/.test(w));
  const to = end === -1 ? words.length : end;
  if (i >= to) throw new Unknowable('parallel without a command runs the lines it reads');
  // parallel joins the command's words and runs them with the shell (`parallel 'gzip {}'`, `parallel echo {}`).
  return { argv: [], scripts: [script(i, to)] };
}

/** Options of `docker run` / `podman run` that take the next word as their value. */
const CONTAINER_ARGS = /^(-[aecuvwpmlhi]|--(attach|env|env-file|user|volume|workdir|publish|memory|label|hostname|name|network|net|mount|entrypoint|cpus|cap-add|cap-drop|device|add-host|dns|pid|ipc|uts|userns|platform|pull|restart|runtime|security-opt|shm-size|tmpfs|ulimit|volumes-from|log-driver|log-opt|health-cmd|stop-signal|cidfile|gpus|group-add|isolation|link|mac-address|ip|ip6|cgroupns|cgroup-parent|expose|init-path|kernel-memory|label-file|network-alias|oom-score-adj|storage-opt|sysctl|stop-timeout|detach-keys))$/;

/** `docker run [options] IMAGE [COMMAND…]`: COMMAND runs in the container (`--entrypoint` too). */
export function containerRun(words: string[], run: Run): Inner | undefined {
  let i = 2;
  for (; i < words.length && words[i]!.startsWith('-'); i++) if (CONTAINER_ARGS.test(words[i]!)) i++;
  return i + 1 < words.length ? run(i + 1) : undefined;
}

/**
 * `env -S STRING` / `--split-string=STRING`: env splits STRING into words (quotes kept as the
 * shell keeps them) and runs them with the rest; read as a shell line, which only splits more.
 */
export function envSplitString(words: string[], isStatic: (index: number) => boolean): Inner | undefined {
  for (let k = 1; k < words.length && words[k]!.startsWith('-'); k++) {
    const w = words[k]!;
    if (w === '--') return undefined;
    const attached = /^-[iv0]*S(.+)$/.exec(w)?.[1] ?? (w.startsWith('--split-string=') ? w.slice(15) : undefined);
    const next = /^-[iv0]*S$/.test(w) || w === '--split-string' ? k + 1 : undefined;
    if (attached === undefined && next === undefined) continue;
    const text = attached ?? words[next!];
    if (text === undefined) return undefined;
    const from = (next ?? k) + 1;
    return { argv: [], scripts: [{ text: [text, ...words.slice(from)].join(' '), dynamic: !isStatic(next ?? k) || words.slice(from).some((_, j) => !isStatic(from + j)) }] };
  }
  return undefined;
}
