// What a sandboxed command sees (the bubblewrap mounts), and what must be checked once it ended.
// The whole file system read-only, a fresh /dev and /proc, a private /tmp, the workspace folder
// writable, and inside it, bound read-only again on top, every protected path that exists and the
// folders that hold one (`.vscode` for `.vscode/settings.json`). A bind is a mount point, which
// no spelling gets past: writes fail (EROFS), and rename, unlink and replacing fail (EBUSY), so
// `mv`, `rm -rf`, `sed -i`, `..` detours and links made inside the sandbox all end at the mount.
// What cannot be bound, because it does not exist yet, is recorded for sandboxCleanup.ts. Last,
// what the command may not read is hidden (sandboxReads.ts).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { realpathOfExistingPrefix } from '../../policy/paths/paths.js';
import { privateCacheArgs } from './sandboxEnvironment.js';
import { isolationArgs } from './sandboxProbe.js';
import { hiddenPaths, hideArgs, type HiddenPath } from './sandboxReads.js';

/**
 * Folders that hold protected paths but that ordinary tools must write into: git writes its
 * objects, refs and index in `.git`. They are pinned instead (bound onto themselves, writable:
 * they cannot be renamed, removed or replaced) and the protected paths inside them stay read-only.
 * Relative to the workspace folder.
 */
export const PINNED_HOLDERS: readonly string[] = ['.git'];

/** A protected path that did not exist when the command started. */
export interface MissingProtected {
  /** The protected path, literal and absolute. */
  file: string;
  /** The first part of it that was missing (the file itself, or a folder on the way). */
  firstMissing: string;
}

/** A symbolic link on the way to a protected path: the link itself sits in a writable folder. */
export interface LinkOnTheWay {
  link: string;
  target: string;
}

/** A protected file with other hard links: those names are writable, so its content is kept. */
export interface HardLinkedFile {
  file: string;
  content: Buffer;
}

/** What sandboxCleanup.ts checks after the command and its processes ended. */
export interface ProtectedWatch {
  workspace: string;
  missing: MissingProtected[];
  links: LinkOnTheWay[];
  hardLinked: HardLinkedFile[];
}

export interface SandboxPlan {
  /** bwrap's arguments up to (not including) the program to run. */
  args: string[];
  /** Read-only (`ro`) and pinned (`pin`) binds inside the workspace, outermost first. */
  binds: Array<{ path: string; kind: 'ro' | 'pin' }>;
  /** What the command cannot read (sandboxReads.ts): the home folder's credential stores and `unreadable`, those that exist. */
  hidden: HiddenPath[];
  watch: ProtectedWatch;
}

export interface SandboxPlanOptions {
  /** The workspace folder (absolute). */
  workspaceFolder: string;
  /** Where the command starts (absolute, inside the workspace, existing). */
  cwd: string;
  network: boolean;
  /** The protected paths, absolute and literal (session.ts resolves protected.ts's list and the configured ones). */
  protectedFiles: readonly string[];
  /** A person allowed the protected-files hook's ask: the protected paths are writable for this run. */
  protectedWritable: boolean;
  /** Whether bwrap makes a user namespace (see sandboxProbe.ts). */
  userNamespace: boolean;
  /** Paths to make unreadable besides the home folder's credential stores (absolute; the policy's denied paths, sandboxDeniedPaths.ts). */
  unreadable?: readonly string[];
  /** The home folder whose credential stores are hidden (default os.homedir()). */
  home?: string;
}

/** Contents kept for a hard-linked protected file at most; a larger one is only reported. */
const HARD_LINK_KEEP_BYTES = 1024 * 1024;

function lstatQuietly(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    return undefined;
  }
}

function statQuietly(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

/** `child` equal to or under `parent`. */
export function isWithin(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The protected path relative to the workspace (literal, else through links); undefined when outside it. */
function insideWorkspace(file: string, workspace: string, workspaceReal: string): { base: string; rel: string } | undefined {
  if (isWithin(file, workspace) && file !== workspace) return { base: workspace, rel: path.relative(workspace, file) };
  const real = realpathOfExistingPrefix(file);
  if (isWithin(real, workspaceReal) && real !== workspaceReal) return { base: workspaceReal, rel: path.relative(workspaceReal, real) };
  // Outside the workspace the whole file system is read-only already.
  return undefined;
}

/** The binds and the watch list for one command. */
export function sandboxPlan(options: SandboxPlanOptions): SandboxPlan {
  const workspace = path.resolve(options.workspaceFolder);
  const workspaceReal = fs.realpathSync(workspace);
  const kinds = new Map<string, 'ro' | 'pin'>();
  const watch: ProtectedWatch = { workspace: workspaceReal, missing: [], links: [], hardLinked: [] };
  const linkSeen = new Set<string>();

  if (!options.protectedWritable) {
    for (const file of options.protectedFiles) {
      const inside = insideWorkspace(path.resolve(file), workspace, workspaceReal);
      if (!inside) continue;
      const parts = inside.rel.split(path.sep);
      let current = inside.base;
      for (let i = 0; i < parts.length; i++) {
        current = path.join(current, parts[i] as string);
        const last = i === parts.length - 1;
        // lstat follows the links of the earlier parts, not of this one: a link on the way is seen.
        const st = lstatQuietly(current);
        if (!st) {
          watch.missing.push({ file: path.join(inside.base, inside.rel), firstMissing: current });
          break;
        }
        if (st.isSymbolicLink() && !linkSeen.has(current)) {
          linkSeen.add(current);
          watch.links.push({ link: current, target: fs.readlinkSync(current) });
        }
        const target = statQuietly(current);
        if (!target) {
          // A dangling link: what it names may be made by the command.
          watch.missing.push({ file: path.join(inside.base, inside.rel), firstMissing: current });
          break;
        }
        const real = fs.realpathSync(current);
        if (last) {
          kinds.set(real, 'ro');
          if (target.isFile() && target.nlink > 1) {
            // Another name of the same file would be writable: keep the content to restore.
            if (target.size <= HARD_LINK_KEEP_BYTES) watch.hardLinked.push({ file: real, content: fs.readFileSync(real) });
          }
          break;
        }
        const pinned = i === 0 && PINNED_HOLDERS.includes(parts[0] as string) && inside.base === workspace;
        if (!target.isDirectory()) {
          // A file where a folder was expected (`.git` of a worktree): nothing can be below it; keep it as it is.
          kinds.set(real, 'ro');
          break;
        }
        if (kinds.get(real) !== 'ro') kinds.set(real, pinned ? 'pin' : 'ro');
      }
    }
  }

  const binds = orderedBinds(kinds, workspaceReal);
  const hidden = hiddenPaths(options.home ?? os.homedir(), workspace, options.unreadable ?? []);
  const args = [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    '--bind', workspaceReal, workspaceReal,
    ...binds.flatMap((b) => [b.kind === 'ro' ? '--ro-bind' : '--bind', b.path, b.path]),
    // After every bind that could show them again: bwrap mounts in order.
    ...hideArgs(hidden),
    ...isolationArgs({ network: options.network, userNamespace: options.userNamespace }),
    ...privateCacheArgs(),
    '--chdir', options.cwd,
  ];
  return { args, binds, hidden, watch };
}

/**
 * Outermost first (bwrap mounts in order: a later bind of a parent would hide the child's), and
 * nothing under a read-only bind (it is read-only already). Only paths inside the workspace:
 * a link that leads out of it leads to what is read-only anyway.
 */
function orderedBinds(kinds: ReadonlyMap<string, 'ro' | 'pin'>, workspaceReal: string): Array<{ path: string; kind: 'ro' | 'pin' }> {
  const sorted = [...kinds.entries()]
    .filter(([p]) => isWithin(p, workspaceReal) && p !== workspaceReal)
    .sort(([a], [b]) => a.split(path.sep).length - b.split(path.sep).length || a.localeCompare(b));
  const out: Array<{ path: string; kind: 'ro' | 'pin' }> = [];
  for (const [p, kind] of sorted) {
    if (out.some((b) => b.kind === 'ro' && isWithin(p, b.path))) continue;
    out.push({ path: p, kind });
  }
  return out;
}
