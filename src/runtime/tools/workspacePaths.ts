// Workspace path confinement for the builtin tools.
//
// Confinement is the point. Every path argument is resolved the way the policy resolves it
// (`PathResolver`: against the workspace folder, normalised, through the symbolic links of the
// part that exists, dangling links included) and refused when it lands outside the workspace
// folder. The tools then act on the resolved real path, never on the text the model gave, so a
// link inside the folder that points outside cannot be used to reach past it, and what the tool
// touches is exactly what the policy judged. Final path components are opened with O_NOFOLLOW,
// so a link swapped in after resolution fails instead of being followed, and parent folders are
// opened without following links and verified (see "Opening what was judged" below).
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { PathResolver, type ResolvedPath } from '../../policy/paths/paths.js';
import { errnoCode, fsError } from '../sandbox/fileSystem.js';

/** The sentence each builtin tool's description ends with, so the model knows the rule. */
export const CONFINED = 'Paths are relative to the workspace folder; a path outside it (through "..", an absolute path or a symbolic link) is refused.';

/** A path argument that resolves outside the workspace folder. Thrown before anything is touched. */
export class OutsideWorkspaceError extends Error {
  constructor(
    readonly tool: string,
    readonly argument: string,
    readonly value: string,
    readonly resolved: string,
    readonly workspaceFolder: string,
  ) {
    super(
      `${tool}: ${argument} ${JSON.stringify(value)} is outside the workspace folder ${workspaceFolder}` +
        ` (it resolves to ${resolved}); refused, nothing was done`,
    );
    this.name = 'OutsideWorkspaceError';
  }
}

/** A path argument resolved inside the workspace folder. */
export interface Confined extends ResolvedPath {
  relative: string;
  /** The workspace-relative path for results: '.' for the folder itself. */
  display: string;
}

/** Resolves `value` (the `argument` of `tool`) inside the workspace folder, or throws OutsideWorkspaceError. */
export function confine(resolver: PathResolver, tool: string, argument: string, value: string): Confined {
  const r = resolver.resolve(value);
  if (r.relative === null) throw new OutsideWorkspaceError(tool, argument, value, r.absolute, resolver.workspace);
  return { absolute: r.absolute, relative: r.relative, display: r.relative === '' ? '.' : r.relative };
}

/** For tools that change a path: the workspace folder itself is never written, deleted or moved. */
export function refuseWorkspaceRoot(tool: string, argument: string, value: string, p: Confined): void {
  if (p.relative === '') {
    throw new Error(`${tool}: ${argument} ${JSON.stringify(value)} is the workspace folder itself; refused, nothing was done`);
  }
}

// ---------------------------------------------------------------------------------------------
// Opening what was judged
//
// `confine` judges a path; between that judgement and the system call a parent folder can be
// swapped for a symbolic link. So the tools that touch a path open its parent folder by walking
// down from the workspace folder's real path one component at a time, each opened with
// O_DIRECTORY | O_NOFOLLOW (a link met on the way is refused, never followed), and then check
// that the opened folder really is the folder that was judged. They act on the final component
// through the opened folder, again with O_NOFOLLOW where they open it.
//
// On Linux each step goes through `/proc/self/fd/N/<name>`, which resolves relative to the open
// descriptor (the effect of openat(2)), so a swap after the walk changes nothing; the opened
// folder's real path is read back from `/proc/self/fd/N`. Where /proc/self/fd is not available
// (macOS, Windows) the walk uses plain paths, and the opened folder is verified by comparing its
// fstat dev/ino with a fresh lstat walk from the workspace folder (every component a real
// directory, no links); a swap in the short window after that check is not caught there. Windows
// cannot open a folder as a file, so there each folder is only lstat-checked on the way down.

const { O_RDONLY, O_NOFOLLOW } = fs.constants;
const O_DIRECTORY = fs.constants.O_DIRECTORY ?? 0;

/**
 * For tests only: `beforeOpen` runs after a path was judged and before its folder is opened (to
 * simulate the race deterministically); `withoutProcFd` forces the fallback used where
 * /proc/self/fd is missing.
 */
export const confinementTesting: { beforeOpen?: (tool: string) => void | Promise<void>; withoutProcFd?: boolean } = {};

let procFdAvailable: boolean | undefined;
function useProcFd(): boolean {
  if (confinementTesting.withoutProcFd) return false;
  if (procFdAvailable === undefined) {
    try {
      procFdAvailable = process.platform === 'linux' && fs.statSync('/proc/self/fd').isDirectory();
    } catch {
      procFdAvailable = false;
    }
  }
  return procFdAvailable;
}

/** A folder inside the workspace, opened and verified to be the one that was judged. */
export interface OpenedFolder {
  /** The folder's real path, as judged and verified. */
  readonly real: string;
  /** A path naming `name` inside the opened folder (through the descriptor where the system allows). */
  child(name: string): string;
  close(): Promise<void>;
}

class Folder implements OpenedFolder {
  constructor(
    /** Undefined on Windows, where a folder cannot be opened as a file. */
    readonly handle: fsp.FileHandle | undefined,
    readonly real: string,
    private readonly viaFd: boolean,
  ) {}
  child(name: string): string {
    return this.viaFd && this.handle ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.real, name);
  }
  async close(): Promise<void> {
    await this.handle?.close();
  }
}

/** Opens a folder without following a final link (on Windows: checks it with lstat instead). */
async function openFolder(at: string): Promise<fsp.FileHandle | undefined> {
  if (process.platform !== 'win32') return fsp.open(at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  const st = await fsp.lstat(at);
  if (st.isSymbolicLink() || !st.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, open '${at}'`), { code: 'ENOTDIR' });
  return undefined;
}

/** Thrown when what was opened is not what was judged (a folder on the way was swapped). */
export class ChangedWhileOpeningError extends Error {
  constructor(tool: string, value: string, detail: string) {
    super(`${tool}: ${JSON.stringify(value)} changed while being opened (${detail}); refused, nothing was done`);
    this.name = 'ChangedWhileOpeningError';
  }
}

function sameFile(a: fs.Stats, b: fs.Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** Fallback verification: lstat every component from the workspace folder down; none may be a link. */
async function lstatWalk(workspace: string, components: readonly string[]): Promise<fs.Stats | undefined> {
  let current = workspace;
  let st = await fsp.lstat(current);
  for (const name of components) {
    if (!st.isDirectory()) return undefined;
    current = path.join(current, name);
    st = await fsp.lstat(current);
    if (st.isSymbolicLink()) return undefined;
  }
  return st;
}

/**
 * Checks that an opened descriptor is `expected` (a real path inside the workspace folder):
 * its /proc/self/fd real path on Linux, else fstat dev/ino against a fresh lstat walk.
 */
export async function verifyOpened(
  handle: fsp.FileHandle | undefined,
  workspace: string,
  expected: string,
  tool: string,
  argument: string,
  value: string,
): Promise<void> {
  if (handle && useProcFd()) {
    const actual = await fsp.realpath(`/proc/self/fd/${handle.fd}`);
    if (actual === expected) return;
    const rel = path.relative(workspace, actual);
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
      throw new OutsideWorkspaceError(tool, argument, value, actual, workspace);
    }
    throw new ChangedWhileOpeningError(tool, value, `it was opened as ${actual}`);
  }
  const rel = path.relative(workspace, expected);
  const components = rel === '' ? [] : rel.split(path.sep);
  const [opened, walked] = await Promise.all([handle?.stat(), lstatWalk(workspace, components).catch(() => undefined)]);
  if (!walked || (opened && !sameFile(opened, walked))) throw new ChangedWhileOpeningError(tool, value, 'a folder on the way was replaced');
}

/**
 * Opens the parent folder of `target` by walking down from the workspace folder without
 * following links (creating missing folders when `create`), and verifies it. Errors from the
 * file system (ENOENT, ENOTDIR, ...) are thrown as they are; a link met on the way, or an opened
 * folder that is not the judged one, is refused. The caller closes the folder.
 */
export async function openParent(
  resolver: PathResolver,
  tool: string,
  argument: string,
  value: string,
  target: Confined,
  options: { create?: boolean } = {},
): Promise<{ folder: OpenedFolder; name: string }> {
  await confinementTesting.beforeOpen?.(tool);
  const workspace = resolver.workspace;
  const components = target.relative.split('/');
  const name = components.pop() as string;
  const viaFd = useProcFd();
  let folder = new Folder(await openFolder(workspace), workspace, viaFd);
  try {
    for (const component of components) {
      const next = folder.child(component);
      const real = path.join(folder.real, component);
      let handle: fsp.FileHandle | undefined;
      try {
        handle = await openFolder(next);
      } catch (error) {
        const code = errnoCode(error);
        if (code === 'ENOENT' && options.create) {
          try {
            await fsp.mkdir(next);
          } catch (mkdirError) {
            if (errnoCode(mkdirError) !== 'EEXIST') throw mkdirError;
          }
          handle = await openFolder(next).catch(async (again: unknown) => {
            throw await explainOpenError(again, next, tool, value);
          });
        } else {
          throw await explainOpenError(error, next, tool, value);
        }
      }
      await folder.close();
      folder = new Folder(handle, real, viaFd);
    }
    await verifyOpened(folder.handle, workspace, folder.real, tool, argument, value);
    return { folder, name };
  } catch (error) {
    await folder.close();
    throw error;
  }
}

/** A folder on the way that is now a symbolic link was swapped in after the judgement. */
async function explainOpenError(error: unknown, at: string, tool: string, value: string): Promise<unknown> {
  const code = errnoCode(error);
  if (code === 'ENOTDIR' || code === 'ELOOP') {
    const st = await fsp.lstat(at).catch(() => undefined);
    if (st?.isSymbolicLink()) return new ChangedWhileOpeningError(tool, value, 'a folder on the way is now a symbolic link');
  }
  return error;
}

/** A path argument confined to the workspace folder that must already exist, with its stats. */
export async function confineExisting(workspaceFolder: string, tool: string, argument: string, value: string): Promise<{ confined: Confined; stats: fs.Stats }> {
  const confined = confine(new PathResolver(workspaceFolder), tool, argument, value);
  try {
    return { confined, stats: await fsp.stat(confined.absolute) };
  } catch (error) {
    throw fsError(tool, value, error);
  }
}
