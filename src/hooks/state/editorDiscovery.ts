// Where an editor window and the hooks of other agents find each other: a folder only the user
// can open ($XDG_RUNTIME_DIR/agentpolicy, else <tmpdir>/agentpolicy-<uid>), holding per window a
// Unix socket and per workspace folder a discovery file (0600) that names the socket, the
// window's random token and what the hook needs of the window. Both sides check the folder and
// the files before using them: a folder or file that another user could have made or changed is
// refused. Linux and macOS only (Windows would need named pipes; the hook then uses the host's
// own ask). Plain Node: the hook reads this in a new process at every call, so it stays small.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ownProcessAlive } from '../../runtime/sandbox/processState.js';
import { writePrivateFile } from './privateFile.js';

/** What the discovery file says; written by the window, checked by the hook. */
export interface Discovery {
  version: 1;
  /** The folder the window runs for, as its real path. */
  workspaceFolder: string;
  socket: string;
  /** Random per window: the hook presents it with every ask. */
  token: string;
  pid: number;
  /** The window's audit log: the hook writes its decision lines there too. */
  auditFile: string;
  /** VS Code workspace trust for the folder: when false the hook lowers the workspace layer. */
  trusted: boolean;
  managedPolicyFile?: string;
  userPolicyFile?: string;
  /**
   * A change to the workspace policy made outside the window that allows more, held until a person
   * accepts it: the hook judges as the window does (the change's new allows ask). `acceptedFile`
   * holds the accepted version's text, beside the discovery file.
   */
  held?: { acceptedFile: string };
}

/** The longest socket path both Linux (108 bytes with the NUL) and macOS (104) take. */
export const MAX_SOCKET_PATH_BYTES = 103;

const MAX_DISCOVERY_BYTES = 16 * 1024;

export function bridgeSupported(platform: NodeJS.Platform = process.platform): boolean {
  return platform === 'linux' || platform === 'darwin';
}

function uid(): number {
  return process.getuid?.() ?? -1;
}

/**
 * The folders a window may use, the first the one it does use. The hook looks in all of them: a
 * host started outside the desktop session may not have the window's XDG_RUNTIME_DIR.
 */
export function bridgeDirectories(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs: string[] = [];
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && path.isAbsolute(runtime)) dirs.push(path.join(runtime, 'agentpolicy'));
  for (const tmp of [os.tmpdir(), '/tmp']) {
    const dir = path.join(tmp, `agentpolicy-${uid()}`);
    if (!dirs.includes(dir)) dirs.push(dir);
  }
  return dirs;
}

/**
 * Why `dir` must not be used, or undefined when it is private to this user: a real folder (not a
 * link), owned by this user, that no group or other user can open, in a parent that no other user
 * can rename it out of (not writable by others, or sticky like /tmp).
 */
export function privateDirectoryProblem(dir: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (error) {
    return `${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  if (st.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!st.isDirectory()) return `${dir} is not a folder`;
  if (st.uid !== uid()) return `${dir} belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o077) !== 0) return `${dir} can be opened by other users (mode ${(st.mode & 0o777).toString(8)})`;
  let parent: fs.Stats;
  try {
    parent = fs.statSync(path.dirname(dir));
  } catch (error) {
    return `${path.dirname(dir)} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  const othersMayRename = (parent.mode & 0o022) !== 0 && (parent.mode & 0o1000) === 0;
  if (othersMayRename || (parent.uid !== uid() && parent.uid !== 0)) return `${path.dirname(dir)} lets other users replace ${path.basename(dir)}`;
  return undefined;
}

/** Makes the window's folder (0700) and checks it; throws with the reason it cannot be used. */
export function ensurePrivateDirectory(dir: string): void {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const problem = privateDirectoryProblem(dir);
  if (problem !== undefined) throw new Error(`${problem}; Agent Policy will not use it`);
}

/** A short name for a folder (a digest of its real path): socket paths have a length limit. */
export function folderKey(realFolder: string): string {
  return createHash('sha256').update(realFolder).digest('hex').slice(0, 16);
}

export function discoveryFile(dir: string, realFolder: string): string {
  return path.join(dir, `${folderKey(realFolder)}.json`);
}

/** A new socket path for a window of this folder; undefined when the folder's path makes it too long. */
export function newSocketPath(dir: string, realFolder: string): string | undefined {
  const socket = path.join(dir, `${folderKey(realFolder)}-${randomBytes(4).toString('hex')}.sock`);
  return Buffer.byteLength(socket) <= MAX_SOCKET_PATH_BYTES ? socket : undefined;
}

export function newToken(): string {
  return randomBytes(32).toString('hex');
}

/** The real path of a folder (the same folder reached through a link is the same window's). */
export function realFolder(folder: string): string {
  try {
    return fs.realpathSync.native(path.resolve(folder));
  } catch {
    return path.resolve(folder);
  }
}

/** Writes the discovery file whole (temporary file, then rename) and private (0600). */
export function writeDiscovery(dir: string, discovery: Discovery): string {
  const file = discoveryFile(dir, discovery.workspaceFolder);
  writePrivateFile(file, `${JSON.stringify(discovery)}\n`);
  return file;
}


/** Removes the discovery file if it is still this window's (another window of the folder may have replaced it). */
export function removeDiscovery(file: string, token: string): void {
  const current = readDiscovery(file);
  if (current.discovery?.token === token) fs.rmSync(file, { force: true });
}

/** A private regular file or socket of this user: owned by the uid, nothing for group or others. */
function privateNodeProblem(file: string, kind: 'file' | 'socket', maxBytes = MAX_DISCOVERY_BYTES): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (error) {
    return `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  if (kind === 'file' ? !st.isFile() : !st.isSocket()) return `${file} is not a ${kind}`;
  if (st.uid !== uid()) return `${file} belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o077) !== 0) return `${file} is open to other users (mode ${(st.mode & 0o777).toString(8)})`;
  return kind === 'file' && st.size > maxBytes ? `${file} is too large` : undefined;
}


function optionalPath(value: unknown): value is string | undefined {
  return value === undefined || (typeof value === 'string' && path.isAbsolute(value));
}

function isDiscovery(value: unknown): value is Discovery {
  const d = value as Partial<Discovery> | null;
  return typeof d === 'object' && d !== null && d.version === 1
    && typeof d.workspaceFolder === 'string' && path.isAbsolute(d.workspaceFolder)
    && typeof d.socket === 'string' && path.isAbsolute(d.socket)
    && typeof d.token === 'string' && /^[0-9a-f]{64}$/.test(d.token)
    && Number.isSafeInteger(d.pid) && (d.pid as number) > 0
    && typeof d.auditFile === 'string' && path.isAbsolute(d.auditFile)
    && typeof d.trusted === 'boolean'
    && optionalPath(d.managedPolicyFile) && optionalPath(d.userPolicyFile)
    && (d.held === undefined || (typeof d.held === 'object' && d.held !== null && typeof d.held.acceptedFile === 'string' && path.isAbsolute(d.held.acceptedFile)));
}

/** Where a window keeps the accepted workspace policy's text while a change is held (beside its discovery file; one per window). */
export function acceptedPolicyFile(dir: string, realFolder: string, token: string): string {
  return discoveryFile(dir, realFolder).replace(/\.json$/, `-${token.slice(0, 8)}.accepted.jsonc`);
}

/**
 * The accepted text a live discovery file names, when it is a private file of this user beside the
 * window's socket (in the bridge's private folder).
 */
export function readAcceptedPolicy(discovery: Pick<Discovery, 'socket' | 'held'>): string | undefined {
  const file = discovery.held?.acceptedFile;
  if (file === undefined || path.dirname(file) !== path.dirname(discovery.socket) || privateNodeProblem(file, 'file', Infinity) !== undefined) return undefined;
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Reads and checks a discovery file: private, well formed. Whether its window still runs is `liveDiscovery`'s. */
export function readDiscovery(file: string): { discovery?: Discovery; problem?: string } {
  const problem = privateNodeProblem(file, 'file');
  if (problem !== undefined) return { problem };
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    return { problem: `${file} is not JSON (${(error as Error).message})` };
  }
  return isDiscovery(value) ? { discovery: value } : { problem: `${file} is not a discovery file` };
}

/**
 * The discovery file of `realFolder` in `dir` when its window runs: the file is private and well
 * formed, names this folder, its process is alive, and its socket is there, private, in `dir`.
 */
export function liveDiscovery(dir: string, realFolder: string): { discovery?: Discovery; problem?: string } {
  const read = readDiscovery(discoveryFile(dir, realFolder));
  const d = read.discovery;
  if (!d) return read;
  if (d.workspaceFolder !== realFolder) return { problem: `the discovery file names ${d.workspaceFolder}, not ${realFolder}` };
  if (path.dirname(d.socket) !== dir) return { problem: `the socket ${d.socket} is outside ${dir}` };
  if (!ownProcessAlive(d.pid)) return { problem: `the window's process ${d.pid} is gone` };
  const socket = privateNodeProblem(d.socket, 'socket');
  return socket === undefined ? { discovery: d } : { problem: socket };
}

/** A socket with no discovery file is left alone this long: its window may be between listening and writing the file. */
const ORPHAN_SOCKET_MS = 60_000;

/**
 * Removes what windows that ended without closing (a crash, a killed extension host) left in the
 * folder: discovery files whose process is gone, with their sockets, and sockets no discovery
 * file names. Run by each window as it starts; failures are ignored (it is only tidying).
 */
export function sweepStale(dir: string, now = Date.now()): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  const named = new Set<string>();
  for (const name of names.filter((n) => /^[0-9a-f]{16}\.json$/.test(n))) {
    const file = path.join(dir, name);
    const { discovery } = readDiscovery(file);
    if (discovery && ownProcessAlive(discovery.pid)) {
      named.add(discovery.socket);
      continue;
    }
    if (discovery && path.dirname(discovery.socket) === dir) fs.rmSync(discovery.socket, { force: true });
    const accepted = discovery?.held?.acceptedFile;
    if (accepted !== undefined && path.dirname(accepted) === dir) fs.rmSync(accepted, { force: true });
    fs.rmSync(file, { force: true });
  }
  for (const name of names.filter((n) => /^[0-9a-f]{16}-[0-9a-f]{8}\.sock$/.test(n))) {
    const socket = path.join(dir, name);
    try {
      if (!named.has(socket) && now - fs.lstatSync(socket).mtimeMs > ORPHAN_SOCKET_MS) fs.rmSync(socket, { force: true });
    } catch {
      // Gone meanwhile.
    }
  }
}

