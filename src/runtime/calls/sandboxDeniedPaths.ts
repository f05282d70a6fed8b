// The paths the policy's `deny` rules on paths cover, as existing absolute paths, for the sandbox
// to hide (sandboxReads.ts): one rule then keeps a path from the read tools and from `cat` alike.
// Which rules count is Policy.unreadablePathRules. Literal patterns are looked up directly; glob
// patterns are matched against a bounded walk (breadth first, so shallow paths are seen first) of
// the workspace folder, of the home folder for `~/…` patterns, and of the literal folder an
// absolute glob starts with. Past the bound the rule still holds for the read tools and for the
// policy's judgement of a command's text; the sandbox hides what the walk found.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compilePathGlob, isLiteral, literalPrefix, type GlobTest } from '../../policy/globs/globs.js';
import type { Policy } from '../../policy/policy.js';
import { READ_TOOL_IDS } from '../tools/fileReadTools.js';

/** At most this many entries are looked at per command, over every walk. */
export const DENIED_PATHS_MAX_ENTRIES = 20_000;
/** And no deeper than this many folders below a walk's root. */
export const DENIED_PATHS_MAX_DEPTH = 32;

type Root = 'workspace' | 'home' | 'absolute';

interface Pattern {
  root: Root;
  /** The glob, over the path relative to the workspace, as `~/rel` for home, or absolute. */
  glob: string;
  test: GlobTest;
}

interface DenyRule {
  include: Pattern[];
  exclude: Pattern[];
}

export interface DeniedPaths {
  /** Existing paths the rules cover, absolute (links not followed: sandboxReads.ts resolves them). */
  paths: string[];
  /** The walk stopped at its bound: some covered paths may be missing from `paths`. */
  truncated: boolean;
}

function patternOf(raw: string): Pattern {
  // A trailing `/` names a folder; the walk's paths have none.
  const glob = raw.length > 1 && raw.endsWith('/') ? raw.replace(/\/+$/, '') : raw;
  const root: Root = glob === '~' || glob.startsWith('~/') ? 'home' : glob.startsWith('/') ? 'absolute' : 'workspace';
  return { root, glob, test: compilePathGlob(glob) };
}

/** How `abs` reads for a pattern of this root; undefined when it is not below that root. */
function shownFor(root: Root, abs: string, workspace: string, home: string): string | undefined {
  if (root === 'absolute') return abs;
  const base = root === 'workspace' ? workspace : home;
  const rel = path.relative(base, abs);
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  const posix = rel.split(path.sep).join('/');
  return root === 'home' ? `~/${posix}` : posix;
}

function matches(patterns: readonly Pattern[], abs: string, workspace: string, home: string): boolean {
  for (const p of patterns) {
    const shown = shownFor(p.root, abs, workspace, home);
    if (shown !== undefined && p.test(shown)) return true;
  }
  return false;
}

/** Where a literal pattern is, absolute. */
function literalPath(p: Pattern, workspace: string, home: string): string {
  if (p.root === 'absolute') return p.glob;
  if (p.root === 'home') return path.join(home, p.glob.slice(1));
  return path.join(workspace, p.glob);
}

/** The folder a glob's walk starts from: its root's folder, or for an absolute glob the literal folder it starts with. */
function walkRoot(p: Pattern, workspace: string, home: string): string {
  if (p.root === 'workspace') return workspace;
  if (p.root === 'home') {
    const prefix = literalPrefix(p.glob.slice(2));
    return path.join(home, prefix.slice(0, prefix.lastIndexOf('/') + 1));
  }
  const prefix = literalPrefix(p.glob);
  return prefix.slice(0, prefix.lastIndexOf('/') + 1) || '/';
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * The existing paths `rules` (each a rule's `paths` as written, `!` excludes included) cover.
 * A covered folder is hidden whole; but where its rule has `!` excludes, the walk goes into it
 * and hides its entries one by one, so that an excluded path inside stays readable (the folder's
 * names then show). A path is never left out because an excluded path lies beside it.
 */
export function expandDeniedPaths(
  rules: ReadonlyArray<readonly string[]>, workspaceFolder: string, home: string,
  limits: { maxEntries: number; maxDepth: number } = { maxEntries: DENIED_PATHS_MAX_ENTRIES, maxDepth: DENIED_PATHS_MAX_DEPTH },
): DeniedPaths {
  const workspace = path.resolve(workspaceFolder);
  const compiled: DenyRule[] = rules.map((paths) => ({
    include: paths.filter((p) => !p.startsWith('!')).map(patternOf),
    exclude: paths.filter((p) => p.startsWith('!')).map((p) => patternOf(p.slice(1))),
  }));
  const found = new Set<string>();
  // Where to walk, and the rules that cover everything there (a literal folder with excludes).
  const walkFrom = new Map<string, Set<number>>();
  const walkAt = (root: string, covering?: number): void => {
    const covered = walkFrom.get(root) ?? new Set<number>();
    if (covering !== undefined) covered.add(covering);
    walkFrom.set(root, covered);
  };
  for (const [i, rule] of compiled.entries()) {
    for (const p of rule.include) {
      if (!isLiteral(p.glob)) {
        walkAt(walkRoot(p, workspace, home));
        continue;
      }
      const abs = literalPath(p, workspace, home);
      if (exists(abs) && !matches(rule.exclude, abs, workspace, home)) {
        // A literal folder with excludes inside: walked like a glob's, to leave them out.
        if (rule.exclude.length > 0 && isFolder(abs)) walkAt(abs, i);
        else found.add(abs);
      }
    }
  }
  const budget = { left: limits.maxEntries, maxDepth: limits.maxDepth, truncated: false };
  for (const [root, covered] of [...walkFrom].sort(([a], [b]) => a.length - b.length)) {
    // Walked with its parent, unless a rule covers all of it (the parent's walk would not know).
    if (covered.size === 0 && [...walkFrom.keys()].some((other) => other !== root && isWithin(root, other))) continue;
    walk(root, covered, compiled, workspace, home, found, budget);
  }
  return { paths: [...found].sort(), truncated: budget.truncated };
}

function isFolder(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isWithin(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Breadth first, links not followed; `covered`: rules with excludes whose folder the walk went into. */
function walk(
  root: string, rootCovered: ReadonlySet<number>, rules: readonly DenyRule[], workspace: string, home: string, found: Set<string>, budget: { left: number; maxDepth: number; truncated: boolean },
): void {
  let level: Array<{ dir: string; covered: ReadonlySet<number> }> = [{ dir: root, covered: rootCovered }];
  for (let depth = 0; level.length > 0; depth++) {
    const next: typeof level = [];
    for (const { dir, covered } of level) {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        continue; // unreadable or gone: nothing to find there
      }
      for (const entry of entries) {
        if (budget.left-- <= 0) {
          budget.truncated = true;
          return;
        }
        const abs = path.join(dir, entry.name);
        if (found.has(abs)) continue;
        const folder = entry.isDirectory();
        let whole = false;
        const goInto = new Set<number>();
        rules.forEach((rule, i) => {
          if (whole) return;
          const included = covered.has(i) || matches(rule.include, abs, workspace, home);
          if (!included || matches(rule.exclude, abs, workspace, home)) return;
          if (folder && rule.exclude.length > 0) goInto.add(i);
          else whole = true;
        });
        if (whole) found.add(abs);
        else if (folder && depth < budget.maxDepth) next.push({ dir: abs, covered: goInto });
        else if (folder) budget.truncated = true;
      }
    }
    level = next;
  }
}

/** The paths the policy's unconditional `deny` rules on paths cover, for one command (the walk runs each time: files come and go). */
export function policyDeniedPaths(policy: Policy | undefined, workspaceFolder: string, home: string): DeniedPaths {
  if (!policy) return { paths: [], truncated: false };
  const rules = policy.unreadablePathRules(new Set(READ_TOOL_IDS)).map((r) => r.paths);
  if (rules.length === 0) return { paths: [], truncated: false };
  return expandDeniedPaths(rules, workspaceFolder, home);
}
