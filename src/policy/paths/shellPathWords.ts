// A command word read as the paths bash would give the program (docs/programs.md, "Paths named in
// commands"): `~`, `~/x`, `~user/x` (the passwd file's home) and `~+`; `$HOME`, `${HOME}`, `$PWD`
// (the values the command will see); braces (`.{env,x}`, by minimatch's bash brace expansion) and
// globs (`.en?`, `.en[v]`, `~/.ssh/*`) matched against the folder as bash matches them (a leading
// dot only by a pattern that starts with one; no match leaves the word as it is). What is left
// with an expansion (`$DIR/x`, `$(cmd)`) is unknown: the caller says so rather than guess.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { braceExpand, minimatch } from 'minimatch';

export interface PathPlace {
  /** The working folder the word is read in. */
  cwd: string;
  home: string;
}

export type WordPaths = { known: true; paths: string[] } | { known: false; why: string };

/** At most this many paths come from one word's braces and globs (the rest are not judged). */
const MAX_EXPANSIONS = 64;
const GLOB_CHARS = /[*?[]/;

/**
 * The paths `word` names in `place`. `word` is the word after quote removal when `isStatic`, else
 * its raw text (quotes and all) as the splitter keeps it.
 */
export function wordPaths(word: string, isStatic: boolean, place: PathPlace): WordPaths {
  if (namesUnknownUser(word)) return { known: false, why: `${word} names the home of a user this machine does not know` };
  if (isStatic) return { known: true, paths: [resolveTilde(word, place) ?? path.resolve(place.cwd, word)] };
  // `<(cmd)` is a pipe from cmd (a part of its own), not a file.
  if (/^[<>]\(.*\)$/s.test(word)) return { known: true, paths: [] };
  if (/\$\(|`|<\(|>\(/.test(word)) return { known: false, why: `${word} is made by running a command` };
  // The variables whose values the judge knows are the ones bash gives the command too.
  const substituted = word.replace(/\$\{(HOME|PWD)\}|\$(HOME|PWD)(?![A-Za-z0-9_])/g, (_m, a?: string, b?: string) => ((a ?? b) === 'HOME' ? place.home : place.cwd));
  // Quotes only keep globs and braces from expanding; reading them as open can only name more paths.
  const unquoted = substituted.replace(/["']/g, '');
  if (unquoted.includes('$')) return { known: false, why: `${word} has an expansion the judge cannot know before it runs` };
  const paths: string[] = [];
  for (const one of braceExpand(unquoted).slice(0, MAX_EXPANSIONS)) {
    const resolved = resolveTilde(one, place) ?? path.resolve(place.cwd, one);
    paths.push(...(GLOB_CHARS.test(resolved) ? expandGlob(resolved) : [resolved]));
    if (paths.length >= MAX_EXPANSIONS) break;
  }
  return { known: true, paths: paths.slice(0, MAX_EXPANSIONS) };
}

/**
 * `~`, `~/x`, `~+`, `~user/x` as bash expands them; undefined when the word starts with no tilde
 * (the caller resolves it against the working folder). A `~user` this machine does not know is
 * left as it is by bash: then a relative name, which the caller's unknown check takes.
 */
function resolveTilde(word: string, place: PathPlace): string | undefined {
  if (!word.startsWith('~')) return undefined;
  const slash = word.indexOf('/');
  const prefix = slash === -1 ? word.slice(1) : word.slice(1, slash);
  const rest = slash === -1 ? '' : word.slice(slash);
  const base = prefix === '' ? place.home : prefix === '+' ? place.cwd : homeOfUser(prefix);
  return base === undefined ? undefined : path.join(base, rest);
}

/** A user's home folder from the passwd file, as bash's `~user` reads it. */
function homeOfUser(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name)) return undefined;
  return passwdHomes().get(name);
}

let passwd: { stamp: string; homes: Map<string, string> } | undefined;

/**
 * Each user's home from the passwd file, read again only when the file changed (a word is placed
 * in every folder a line may be in, and checked for an unknown user first: one read, not several).
 * No passwd file (macOS keeps users elsewhere): no user is known.
 */
function passwdHomes(): Map<string, string> {
  let stamp: string;
  try {
    const st = fs.statSync('/etc/passwd');
    stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return new Map();
  }
  if (passwd?.stamp !== stamp) {
    const homes = new Map<string, string>();
    try {
      for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
        const fields = line.split(':');
        if (fields[0] !== undefined && fields[5] !== undefined && fields[5] !== '' && !homes.has(fields[0])) homes.set(fields[0], fields[5]);
      }
    } catch {
      // Unreadable: no user is known (their words are unknown paths, the strict side).
    }
    passwd = { stamp, homes };
  }
  return passwd.homes;
}

/** Whether `word` is a `~user` this machine does not know (bash leaves it, the judge cannot place it). */
function namesUnknownUser(word: string): boolean {
  const m = /^~([^/+-][^/]*)/.exec(word);
  return m !== null && homeOfUser(m[1]!) === undefined;
}

/** The paths an absolute glob matches, segment by segment as bash does; the pattern itself when none. */
function expandGlob(pattern: string): string[] {
  let bases = [path.parse(pattern).root];
  for (const segment of pattern.slice(bases[0]!.length).split('/')) {
    if (segment === '') continue;
    if (!GLOB_CHARS.test(segment)) {
      bases = bases.map((b) => path.join(b, segment));
      continue;
    }
    const next: string[] = [];
    for (const base of bases) {
      let names: string[];
      try {
        names = fs.readdirSync(base);
      } catch {
        continue;
      }
      // Without globstar `**` is `*`; a dot file matches only a pattern that starts with a dot.
      for (const name of names) if (minimatch(name, segment, { noglobstar: true, dot: false, nobrace: true })) next.push(path.join(base, name));
      if (next.length >= MAX_EXPANSIONS) break;
    }
    bases = next.slice(0, MAX_EXPANSIONS);
    if (bases.length === 0) return [pattern];
  }
  return bases;
}
