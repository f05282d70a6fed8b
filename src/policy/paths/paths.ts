// A call's path arguments, resolved the way policy-format.md says: against the workspace
// folder, normalised, through symbolic links where they exist, and tested for containment.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The separator, read once: a bundled namespace import reads it through a getter each time. */
const SEP = path.sep;

/** Input fields read as paths when a tool declares no path arguments of its own. */
export const CONVENTIONAL_PATH_FIELDS = [
  'path', 'paths', 'file', 'files', 'source', 'destination', 'from', 'to', 'directory', 'dir', 'cwd', 'uri',
] as const;

export interface ResolvedPath {
  /** The absolute, normalised, symlink-resolved path. */
  absolute: string;
  /** Relative to the workspace folder with `/` separators ('' for the folder itself), or null when outside it. */
  relative: string | null;
}

export interface CallPaths {
  paths: ResolvedPath[];
  /** A path field held something that is not a string (or list of strings): loosening rules must not match. */
  opaque: boolean;
}

export interface PathResolverOptions {
  /** Resolve symbolic links of existing path prefixes (default true). Tests of pure matching may turn it off. */
  followSymlinks?: boolean;
}

/** Resolves paths against one workspace folder; the folder's own real path is computed once. */
export class PathResolver {
  readonly workspace: string;
  /** The folder as named, before its symbolic links were resolved. */
  private readonly named: string;
  private readonly followSymlinks: boolean;

  constructor(workspaceFolder: string, options: PathResolverOptions = {}) {
    this.followSymlinks = options.followSymlinks ?? true;
    this.named = path.resolve(workspaceFolder);
    this.workspace = this.followSymlinks ? realpathOfExistingPrefix(this.named) : this.named;
  }

  /** `likelyExists`: the path is probably there (a read): try the one-call way first; the answer is the same. */
  resolve(value: string, likelyExists = false): ResolvedPath {
    // Most values are relative paths already in normal form: joined as they are, no path.resolve.
    const normal = isNormalRelative(value) ? (value === '' ? this.workspace : this.workspace + SEP + value) : path.resolve(this.workspace, fromFileUri(value));
    const absolute = this.followSymlinks ? realpathOfExistingPrefix(normal, likelyExists) : normal;
    const rel = relativeInside(this.workspace, absolute);
    return { absolute, relative: rel === null || SEP === '/' ? rel : rel.split(SEP).join('/') };
  }

  /**
   * Whether a path value names a place outside the folder as written, without touching the
   * file system (so a warning never depends on which rules made the engine resolve it).
   */
  outsideAsWritten(value: string): boolean {
    if (isNormalRelative(value)) return false;
    const normal = path.resolve(this.workspace, fromFileUri(value));
    return relativeInside(this.workspace, normal) === null && relativeInside(this.named, normal) === null;
  }

  /** The paths named by a call's input: the tool's declared path arguments, else the conventional fields. */
  collect(input: unknown, declared: readonly string[] | undefined): CallPaths {
    const raw = pathValues(input, declared);
    return { paths: raw.values.map((v) => this.resolve(v)), opaque: raw.opaque };
  }
}

function fromFileUri(value: string): string {
  if (!value.startsWith('file:')) return value;
  try {
    return fileURLToPath(value);
  } catch {
    return value; // not a valid file URI: the text as a relative path, which keeps it inside the folder's rules
  }
}

/**
 * Whether `value` is a relative path in normal form, which path.resolve would only join to the
 * folder: no leading `/`, no empty, `.` or `..` segment, no `file:` URI, and on POSIX only (a
 * Windows path has two separators and drive letters). '' is the folder itself.
 */
export function isNormalRelative(value: string): boolean {
  if (SEP !== '/' || value.startsWith('file:')) return false;
  let segmentStart = 0;
  for (let i = 0; i <= value.length; i++) {
    if (i < value.length && value.charCodeAt(i) !== 0x2f) continue;
    const length = i - segmentStart;
    // An empty segment (a leading, doubled or trailing `/`) or `.` and `..`: not in normal form.
    if (length === 0) return value.length === 0;
    if (length <= 2 && value.charCodeAt(segmentStart) === 0x2e && (length === 1 || value.charCodeAt(segmentStart + 1) === 0x2e)) return false;
    segmentStart = i + 1;
  }
  return true;
}

/** The path of `target` relative to `folder`, or null when it is outside. */
function relativeInside(folder: string, target: string): string | null {
  // Both absolute and in normal form: a target under the folder is the folder, a separator and the rest.
  if (target.startsWith(folder)) {
    if (target.length === folder.length) return '';
    if (target.charCodeAt(folder.length) === 0x2f && SEP === '/' && !folder.endsWith('/')) return target.slice(folder.length + 1);
  }
  const rel = path.relative(folder, target);
  // `..` as a whole first segment, not a name such as `..cache` that merely starts with it.
  const inside = rel === '' || (rel !== '..' && !rel.startsWith(`..${SEP}`) && !path.isAbsolute(rel));
  return inside ? rel : null;
}

/** A call's path arguments as given, not yet resolved; `opaque` when one is not a string. */
export interface PathValues {
  values: string[];
  opaque: boolean;
}

/** The path values of a call's input: the tool's declared path arguments, else the conventional fields. */
export function pathValues(input: unknown, declared: readonly string[] | undefined): PathValues {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return NO_PATH_VALUES;
  const record = input as Record<string, unknown>;
  // Most inputs name no conventional path field: one pass over their own keys says so without a lookup per field.
  if (declared === undefined && !hasSomeKey(record, CONVENTIONAL_PATH_FIELD_SET)) return NO_PATH_VALUES;
  const result: PathValues = { values: [], opaque: false };
  for (const field of declared ?? CONVENTIONAL_PATH_FIELDS) {
    if (!Object.prototype.hasOwnProperty.call(record, field)) continue;
    const value = record[field];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') result.values.push(value);
    else if (Array.isArray(value)) {
      for (const item of value) {
        if (typeof item === 'string') result.values.push(item);
        else result.opaque = true;
      }
    } else result.opaque = true;
  }
  return result;
}

/** No path values (most calls): one shared value, frozen so that no caller can add to it. */
const NO_PATH_VALUES: PathValues = Object.freeze({ values: Object.freeze([]) as unknown as string[], opaque: false });

const CONVENTIONAL_PATH_FIELD_SET: ReadonlySet<string> = new Set(CONVENTIONAL_PATH_FIELDS);

/** Whether the record has an own key in the set (non-enumerable ones too, as hasOwnProperty sees them). */
function hasSomeKey(record: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key of Object.getOwnPropertyNames(record)) if (keys.has(key)) return true;
  return false;
}

/**
 * realpath of the longest prefix that exists, with the rest appended: a file about to be
 * created inside a symlinked folder is judged by where it will really land.
 */
export function realpathOfExistingPrefix(absolute: string, likelyExists = false): string {
  if (likelyExists) {
    // One look when the path exists; when it does not, the thrown error costs more than the
    // lstat of the walk below would have (which is why paths about to be written do not start here).
    const real = realpathOfExisting(absolute);
    if (real !== undefined) return real;
    // not there (or a dangling link): the walk below
  }
  return walkToExistingPrefix(absolute, 0, realpathKnowingEntry);
}

/**
 * The real path of something the walk found there: of a symbolic link, its own; else its
 * folder's with its name appended, one `readlink` fewer than asking for its own (the walk's
 * `lstat` already said that the last segment is no link).
 */
function realpathKnowingEntry(p: string, entry: fs.Stats): string | undefined {
  if (entry.isSymbolicLink()) return realpathOfExisting(p);
  const parent = path.dirname(p);
  if (parent === p) return realpathOfExisting(p);
  const realParent = realpathOfExisting(parent);
  if (realParent === undefined) return undefined;
  const name = path.basename(p);
  return realParent.endsWith(SEP) ? realParent + name : realParent + SEP + name;
}

/**
 * The plain way, with glibc's realpath alone: what the quick ways must give (a test compares
 * them over links, dangling links, gaps and deep paths).
 */
export function realpathByWalk(absolute: string): string {
  return walkToExistingPrefix(absolute, 0, realpathQuietly);
}

/** lstat up to the longest existing prefix, then one `real` of it, with the rest appended. */
function walkToExistingPrefix(absolute: string, depth: number, real: (p: string, entry: fs.Stats) => string | undefined): string {
  let existing = absolute;
  const rest: string[] = [];
  for (;;) {
    // lstat without throwing finds the longest existing prefix cheaply (a thrown error costs
    // more than the system call); realpath then runs once, on something that exists.
    const entry = lstatQuietly(existing);
    if (entry) {
      const resolved = real(existing, entry);
      if (resolved !== undefined) return rest.length === 0 ? resolved : path.join(resolved, ...rest.reverse());
      // A dangling symbolic link still decides where a new file lands: follow its text.
      if (entry.isSymbolicLink() && depth < 40) {
        const target = readlinkQuietly(existing);
        if (target !== undefined) {
          return walkToExistingPrefix(path.join(path.resolve(path.dirname(existing), target), ...rest.reverse()), depth + 1, real);
        }
      }
    }
    const parent = path.dirname(existing);
    if (parent === existing) return absolute;
    rest.push(path.basename(existing));
    existing = parent;
  }
}

function lstatQuietly(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined; // ENOTDIR and the like: not there either
  }
}

/**
 * Linux's O_PATH: a descriptor that names a file without opening it (a FIFO does not block, a
 * device is not opened). Its value on these architectures; elsewhere the way is not taken.
 */
const O_PATH = process.platform === 'linux' && ['x64', 'arm64', 'ia32', 'arm', 'riscv64'].includes(process.arch) ? 0o10000000 : undefined;
/** Whether the descriptor way gave realpath's answer on its first use (checked once per process). */
let descriptorWayChecked: boolean | undefined;

/**
 * Segments from which the descriptor way costs less than realpath: measured on this project's
 * machine, realpath took 9–12 µs at 4–5 segments, 15–19 at 7–8 and 27–30 at 11–13; the descriptor
 * way 10–15 at any depth.
 */
const DESCRIPTOR_WAY_SEGMENTS = 7;

/** Whether an absolute path has at least `n` segments (counts its separators, no allocation). */
function atLeastSegments(p: string, n: number): boolean {
  let at = 0;
  for (let seen = 0; seen < n; seen++) {
    at = p.indexOf('/', at) + 1;
    if (at === 0) return false;
  }
  return true;
}

/**
 * The real path of something that exists, or undefined (not there, or not reachable). For a
 * deep path, through a descriptor where it can: open with O_PATH, read /proc/self/fd's link,
 * close, three system calls however deep the path; glibc's realpath reads the link of every
 * segment in turn, one call each (seven for /tmp/ws/area5/src/deep/m.ts).
 */
function realpathOfExisting(p: string): string | undefined {
  if (O_PATH !== undefined && descriptorWayChecked !== false && atLeastSegments(p, DESCRIPTOR_WAY_SEGMENTS)) {
    const real = realpathThroughDescriptor(p);
    if (descriptorWayChecked === true) return real;
    // The first use: the way must give realpath's own answer, else it is never taken.
    const expected = realpathQuietly(p);
    if (real !== undefined || expected !== undefined) descriptorWayChecked = real === expected;
    return expected;
  }
  return realpathQuietly(p);
}

/** Whether paths are resolved through descriptors (undefined: not decided yet). For tests. */
export function resolvesThroughDescriptors(): boolean | undefined {
  return O_PATH === undefined ? false : descriptorWayChecked;
}

function realpathThroughDescriptor(p: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(p, O_PATH!);
  } catch {
    return undefined;
  }
  try {
    const real = fs.readlinkSync(`/proc/self/fd/${fd}`);
    // A file removed meanwhile reads "… (deleted)"; anything not a plain absolute path is left to the walk.
    return real.startsWith('/') && !real.endsWith(' (deleted)') ? real : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function realpathQuietly(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

function readlinkQuietly(p: string): string | undefined {
  try {
    return fs.readlinkSync(p);
  } catch {
    return undefined;
  }
}
