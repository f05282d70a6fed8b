// The builtin tools: files in the session's workspace folder, and shell commands.
//
// Confinement is the point. Every path argument is resolved the way the policy resolves it
// (`PathResolver`: against the workspace folder, normalised, through the symbolic links of the
// part that exists, dangling links included) and refused when it lands outside the workspace
// folder. The tools then act on the resolved real path, never on the text the model gave, so a
// link inside the folder that points outside cannot be used to reach past it, and what the tool
// touches is exactly what the policy judged. Final path components are opened with O_NOFOLLOW,
// so a link swapped in after resolution fails instead of being followed.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { Minimatch } from 'minimatch';
import { z } from 'zod';
import { PathResolver, type ResolvedPath } from '../policy/paths.js';
import { withoutSchemaUri } from './model.js';
import { zodTool, type RuntimeTool, type ToolRunContext } from './tools.js';

/** The largest file read_file reads and search_files searches. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** Directories whose contents recursive listing and searching skip (the directory itself is listed). */
export const SKIPPED_DIRECTORIES: readonly string[] = ['.git', 'node_modules'];

const DEFAULT_MAX_ENTRIES = 1000;
const DEFAULT_MAX_RESULTS = 200;
const MAX_LIMIT = 100_000;
const MAX_MATCH_TEXT = 400;
const BINARY_SNIFF_BYTES = 8192;
const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_TIMEOUT_MS = 60 * 60_000;
const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;
const KILL_GRACE_MS = 2000;
/** After the shell exits, how long to wait for its output pipes to close (a background child may hold them). */
const PIPE_DRAIN_MS = 250;

const { O_RDONLY, O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

export type EntryType = 'file' | 'directory' | 'symlink';

export interface ReadFileResult {
  path: string;
  content: string;
  totalLines: number;
  /** Lines after the returned range were left out (by `limit`). */
  truncated: boolean;
}
export interface WriteFileResult {
  path: string;
  bytes: number;
  created: boolean;
}
export interface ListFilesResult {
  path: string;
  entries: Array<{ path: string; type: EntryType }>;
  /** More entries existed than `maxEntries`. */
  truncated: boolean;
  /** Directories (`.git`, `node_modules`) listed but whose contents were not. */
  skipped: string[];
  note?: string;
}
export interface SearchFilesResult {
  matches: Array<{ path: string; line: number; text: string }>;
  /** More matches existed than `maxResults`. */
  truncated: boolean;
  filesSearched: number;
  /** Files not searched because they are binary, larger than MAX_FILE_BYTES or unreadable. */
  filesSkipped: number;
  /** Directories (`.git`, `node_modules`) whose contents were not searched. */
  skipped: string[];
  note?: string;
}
export interface DeleteFileResult {
  path: string;
  /** False when nothing existed at the path. */
  deleted: boolean;
  type?: EntryType;
}
export interface RenameFileResult {
  from: string;
  to: string;
  /** Something existed at `to` and was replaced. */
  overwritten: boolean;
}
export interface RunCommandResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
}

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

// ---------------------------------------------------------------------------------------------
// Confinement

interface Confined extends ResolvedPath {
  relative: string;
  /** The workspace-relative path for results: '.' for the folder itself. */
  display: string;
}

function confine(resolver: PathResolver, tool: string, argument: string, value: string): Confined {
  const r = resolver.resolve(value);
  if (r.relative === null) throw new OutsideWorkspaceError(tool, argument, value, r.absolute, resolver.workspace);
  return { absolute: r.absolute, relative: r.relative, display: r.relative === '' ? '.' : r.relative };
}

function refuseWorkspaceRoot(tool: string, argument: string, value: string, p: Confined): void {
  if (p.relative === '') {
    throw new Error(`${tool}: ${argument} ${JSON.stringify(value)} is the workspace folder itself; refused, nothing was done`);
  }
}

async function lstatOrUndefined(p: string): Promise<fs.Stats | undefined> {
  try {
    return await fsp.lstat(p);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

/** Rewrites common filesystem errors into sentences that name the path as the model gave it. */
function fsError(tool: string, value: string, error: unknown): Error {
  const what = JSON.stringify(value);
  switch (errnoCode(error)) {
    case 'ENOENT':
      return new Error(`${tool}: ${what} does not exist`);
    case 'ENOTDIR':
      return new Error(`${tool}: a parent of ${what} is not a directory`);
    case 'EISDIR':
      return new Error(`${tool}: ${what} is a directory`);
    case 'EACCES':
    case 'EPERM':
      return new Error(`${tool}: permission denied for ${what}`);
    case 'ELOOP':
      return new Error(`${tool}: ${what} changed into a symbolic link while being opened; refused`);
    case 'ENOTEMPTY':
    case 'EEXIST':
      return new Error(`${tool}: ${what} is a non-empty directory`);
    default:
      return error instanceof Error ? new Error(`${tool}: ${error.message}`) : new Error(`${tool}: ${String(error)}`);
  }
}

function typeOf(st: fs.Stats | fs.Dirent): EntryType {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'directory';
  return 'file';
}

function throwIfCancelled(tool: string, signal: AbortSignal): void {
  if (signal.aborted) throw new Error(`${tool}: cancelled`);
}

// ---------------------------------------------------------------------------------------------
// Reading

type TextRead = { ok: true; text: string } | { ok: false; reason: string };

/** Reads a regular file as UTF-8 text, refusing non-regular, binary and too-large files. */
async function readText(absolute: string): Promise<TextRead> {
  // O_NONBLOCK: opening a FIFO must not hang; fstat then refuses it.
  const handle = await fsp.open(absolute, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    const st = await handle.stat();
    if (st.isDirectory()) return { ok: false, reason: 'is a directory (use list_files)' };
    if (!st.isFile()) return { ok: false, reason: 'is not a regular file' };
    if (st.size > MAX_FILE_BYTES) return { ok: false, reason: `is ${st.size} bytes, larger than the ${MAX_FILE_BYTES}-byte (1 MiB) limit` };
    // Read at most one byte past the limit, in case the file grew since fstat.
    const buffer = Buffer.alloc(Math.min(st.size, MAX_FILE_BYTES) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > MAX_FILE_BYTES) return { ok: false, reason: `is larger than the ${MAX_FILE_BYTES}-byte (1 MiB) limit` };
    const data = buffer.subarray(0, length);
    if (data.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { ok: false, reason: 'looks binary (it contains NUL bytes)' };
    return { ok: true, text: data.toString('utf8') };
  } finally {
    await handle.close();
  }
}

/** Lines with their terminators, so joining a range gives back the file's exact text. */
function splitLinesKeepingEnds(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

// ---------------------------------------------------------------------------------------------
// Walking

interface WalkEntry {
  absolute: string;
  relative: string;
  type: EntryType;
}

/**
 * Entries under a directory, sorted by name, depth first. Never follows a symbolic link (links
 * are reported as `symlink` and not descended), so a walk never leaves the directory it starts in.
 */
async function* walk(
  tool: string,
  absolute: string,
  relative: string,
  recursive: boolean,
  skipped: string[],
  signal: AbortSignal,
  isRoot = true,
): AsyncGenerator<WalkEntry> {
  throwIfCancelled(tool, signal);
  let dirents: fs.Dirent[];
  try {
    dirents = await fsp.readdir(absolute, { withFileTypes: true });
  } catch (error) {
    if (isRoot) throw error;
    return; // An unreadable subdirectory (permissions, removed meanwhile): skip it.
  }
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const d of dirents) {
    const entry: WalkEntry = {
      absolute: path.join(absolute, d.name),
      relative: relative === '' ? d.name : `${relative}/${d.name}`,
      type: typeOf(d),
    };
    yield entry;
    if (recursive && entry.type === 'directory') {
      if (SKIPPED_DIRECTORIES.includes(d.name)) skipped.push(entry.relative);
      else yield* walk(tool, entry.absolute, entry.relative, recursive, skipped, signal, false);
    }
  }
}

const SKIPPED_NOTE = `The contents of ${SKIPPED_DIRECTORIES.join(' and ')} directories were skipped (see "skipped"); pass one of them as "path" to look inside.`;

// ---------------------------------------------------------------------------------------------
// Schemas

const limitNumber = z.number().int().min(1).max(MAX_LIMIT);

const ReadFileInput = z.strictObject({
  path: z.string().min(1).describe('File path, relative to the workspace folder.'),
  offset: z.number().int().min(1).optional().describe('First line to return (1-based). Default 1.'),
  limit: limitNumber.optional().describe('Number of lines to return. Default: all.'),
});

const WriteFileInput = z.strictObject({
  path: z.string().min(1).describe('File path, relative to the workspace folder.'),
  content: z.string().describe('The complete new content of the file.'),
  createDirectories: z.boolean().optional().describe('Create missing parent directories. Default false.'),
});

const ListFilesInput = z.strictObject({
  path: z.string().min(1).default('.').describe('Directory, relative to the workspace folder. Default ".".'),
  recursive: z.boolean().optional().describe('List subdirectories too. Default false.'),
  maxEntries: limitNumber.optional().describe(`Most entries to return. Default ${DEFAULT_MAX_ENTRIES}.`),
});

const SearchFilesInput = z.strictObject({
  pattern: z.string().describe('A JavaScript regular expression, matched against each line.'),
  path: z.string().min(1).default('.').describe('Directory or file to search, relative to the workspace folder. Default ".".'),
  glob: z.string().min(1).optional().describe('Only files whose workspace-relative path matches this glob, e.g. "src/**/*.ts".'),
  maxResults: limitNumber.optional().describe(`Most matches to return. Default ${DEFAULT_MAX_RESULTS}.`),
});

const DeleteFileInput = z.strictObject({
  path: z.string().min(1).describe('File or directory path, relative to the workspace folder.'),
  recursive: z.boolean().optional().describe('Required to delete a non-empty directory. Default false.'),
});

const RenameFileInput = z.strictObject({
  from: z.string().min(1).describe('Existing path, relative to the workspace folder.'),
  to: z.string().min(1).describe('New path, relative to the workspace folder. Its parent directory must exist.'),
  overwrite: z.boolean().optional().describe('Replace whatever exists at "to". Default false.'),
});

const RunCommandInput = z.strictObject({
  command: z.string().min(1).describe('A command line, run by /bin/sh -c.'),
  cwd: z.string().min(1).optional().describe('Working directory, relative to the workspace folder. Default: the workspace folder.'),
  timeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional().describe('Time limit in milliseconds.'),
});

/**
 * zodTool describes the schema's output, where a field with a default is required. The model
 * must see the input side (such a field is optional); `check` still applies the default, so the
 * policy sees the path the tool will really use.
 */
function withInputSchema(tool: RuntimeTool, schema: z.ZodType): RuntimeTool {
  tool.inputJsonSchema = withoutSchemaUri(z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>);
  return tool;
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const CONFINED = 'Paths are relative to the workspace folder; a path outside it (through "..", an absolute path or a symbolic link) is refused.';

// ---------------------------------------------------------------------------------------------
// File tools

function readFileTool(): RuntimeTool {
  return withInputSchema(
    zodTool(
      {
        id: 'builtin.read_file',
        kind: 'builtin',
        name: 'read_file',
        description:
          `Read a UTF-8 text file, optionally a range of lines (offset is 1-based). Files larger than 1 MiB and binary files are refused. ${CONFINED}`,
        inputSchema: ReadFileInput,
        annotations: { ...READ_ONLY },
        pathArgs: ['path'],
      },
      async (input, context): Promise<ReadFileResult> => {
        const tool = 'read_file';
        const target = confine(new PathResolver(context.workspaceFolder), tool, 'path', input.path);
        let read: TextRead;
        try {
          read = await readText(target.absolute);
        } catch (error) {
          throw fsError(tool, input.path, error);
        }
        if (!read.ok) throw new Error(`${tool}: ${JSON.stringify(input.path)} ${read.reason}; not read`);
        const lines = splitLinesKeepingEnds(read.text);
        const offset = input.offset ?? 1;
        if (offset > 1 && offset > lines.length) {
          throw new Error(`${tool}: offset ${offset} is past the end of ${JSON.stringify(input.path)}, which has ${lines.length} lines`);
        }
        const end = input.limit === undefined ? lines.length : Math.min(lines.length, offset - 1 + input.limit);
        return {
          path: target.display,
          content: lines.slice(offset - 1, end).join(''),
          totalLines: lines.length,
          truncated: end < lines.length,
        };
      },
    ),
    ReadFileInput,
  );
}

function writeFileTool(): RuntimeTool {
  return withInputSchema(
    zodTool(
      {
        id: 'builtin.write_file',
        kind: 'builtin',
        name: 'write_file',
        description:
          `Create or replace a file with exactly the given content (UTF-8). Missing parent directories are created only with createDirectories: true. ${CONFINED}`,
        inputSchema: WriteFileInput,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
        pathArgs: ['path'],
      },
      async (input, context): Promise<WriteFileResult> => {
        const tool = 'write_file';
        const target = confine(new PathResolver(context.workspaceFolder), tool, 'path', input.path);
        refuseWorkspaceRoot(tool, 'path', input.path, target);
        try {
          const existing = await lstatOrUndefined(target.absolute);
          if (existing && !existing.isFile()) {
            throw new Error(`${tool}: ${JSON.stringify(input.path)} exists and is a ${existing.isDirectory() ? 'directory' : 'special file'}; not written`);
          }
          const parent = path.dirname(target.absolute);
          if (input.createDirectories) {
            await fsp.mkdir(parent, { recursive: true });
          } else {
            const parentStat = await lstatOrUndefined(parent);
            if (!parentStat) {
              throw new Error(`${tool}: the parent directory of ${JSON.stringify(input.path)} does not exist; pass createDirectories: true to create it`);
            }
            if (!parentStat.isDirectory()) throw new Error(`${tool}: the parent of ${JSON.stringify(input.path)} is not a directory`);
          }
          const data = Buffer.from(input.content, 'utf8');
          const handle = await fsp.open(target.absolute, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK, 0o666);
          try {
            const st = await handle.stat();
            if (!st.isFile()) throw new Error(`${tool}: ${JSON.stringify(input.path)} is not a regular file; not written`);
            await handle.writeFile(data);
          } finally {
            await handle.close();
          }
          return { path: target.display, bytes: data.length, created: existing === undefined };
        } catch (error) {
          if (error instanceof Error && error.message.startsWith(`${tool}:`)) throw error;
          throw fsError(tool, input.path, error);
        }
      },
    ),
    WriteFileInput,
  );
}

function listFilesTool(): RuntimeTool {
  return withInputSchema(
    zodTool(
      {
        id: 'builtin.list_files',
        kind: 'builtin',
        name: 'list_files',
        description:
          `List a directory's entries (file, directory or symlink), optionally recursively. Entry paths are relative to the workspace folder. ` +
          `Recursion never follows symbolic links and does not descend into ${SKIPPED_DIRECTORIES.join(' or ')} (they are reported in "skipped"). ${CONFINED}`,
        inputSchema: ListFilesInput,
        annotations: { ...READ_ONLY },
        pathArgs: ['path'],
      },
      async (input, context): Promise<ListFilesResult> => {
        const tool = 'list_files';
        const requested = input.path ?? '.';
        const root = confine(new PathResolver(context.workspaceFolder), tool, 'path', requested);
        let st: fs.Stats;
        try {
          st = await fsp.stat(root.absolute);
        } catch (error) {
          throw fsError(tool, requested, error);
        }
        if (!st.isDirectory()) throw new Error(`${tool}: ${JSON.stringify(requested)} is not a directory`);
        const max = input.maxEntries ?? DEFAULT_MAX_ENTRIES;
        const entries: ListFilesResult['entries'] = [];
        const skipped: string[] = [];
        let truncated = false;
        try {
          for await (const entry of walk(tool, root.absolute, root.relative, input.recursive ?? false, skipped, context.signal)) {
            if (entries.length === max) {
              truncated = true;
              break;
            }
            entries.push({ path: entry.relative, type: entry.type });
          }
        } catch (error) {
          if (error instanceof Error && error.message.startsWith(`${tool}:`)) throw error;
          throw fsError(tool, requested, error);
        }
        return { path: root.display, entries, truncated, skipped, ...(skipped.length > 0 ? { note: SKIPPED_NOTE } : {}) };
      },
    ),
    ListFilesInput,
  );
}

function searchFilesTool(): RuntimeTool {
  return withInputSchema(
    zodTool(
      {
        id: 'builtin.search_files',
        kind: 'builtin',
        name: 'search_files',
        description:
          `Search text files for lines matching a JavaScript regular expression, under a directory (recursively) or in one file. ` +
          `glob filters by workspace-relative path (minimatch, e.g. "**/*.ts"). Binary files, files over 1 MiB, symbolic links and the contents of ` +
          `${SKIPPED_DIRECTORIES.join(' and ')} are skipped. ${CONFINED}`,
        inputSchema: SearchFilesInput,
        annotations: { ...READ_ONLY },
        pathArgs: ['path'],
      },
      async (input, context): Promise<SearchFilesResult> => {
        const tool = 'search_files';
        let regex: RegExp;
        try {
          regex = new RegExp(input.pattern);
        } catch (error) {
          throw new Error(`${tool}: invalid regular expression ${JSON.stringify(input.pattern)}: ${(error as Error).message}`);
        }
        let glob: Minimatch | undefined;
        if (input.glob !== undefined) {
          try {
            glob = new Minimatch(input.glob, { dot: true, nocomment: true, nonegate: true, platform: 'linux' });
          } catch (error) {
            throw new Error(`${tool}: invalid glob ${JSON.stringify(input.glob)}: ${(error as Error).message}`);
          }
        }
        const requested = input.path ?? '.';
        const root = confine(new PathResolver(context.workspaceFolder), tool, 'path', requested);
        let st: fs.Stats;
        try {
          st = await fsp.stat(root.absolute);
        } catch (error) {
          throw fsError(tool, requested, error);
        }
        const max = input.maxResults ?? DEFAULT_MAX_RESULTS;
        const result: SearchFilesResult = { matches: [], truncated: false, filesSearched: 0, filesSkipped: 0, skipped: [] };

        const searchFile = async (file: WalkEntry): Promise<boolean> => {
          if (glob && !glob.match(file.relative)) return true;
          let read: TextRead;
          try {
            read = await readText(file.absolute);
          } catch {
            read = { ok: false, reason: 'unreadable' };
          }
          if (!read.ok) {
            result.filesSkipped++;
            return true;
          }
          result.filesSearched++;
          const lines = read.text.split(/\r?\n/);
          if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
          for (let i = 0; i < lines.length; i++) {
            const line = lines[i] as string;
            if (!regex.test(line)) continue;
            if (result.matches.length === max) {
              result.truncated = true;
              return false;
            }
            const text = line.length > MAX_MATCH_TEXT ? `${line.slice(0, MAX_MATCH_TEXT)}…` : line;
            result.matches.push({ path: file.relative, line: i + 1, text });
          }
          return true;
        };

        if (st.isFile()) {
          await searchFile({ absolute: root.absolute, relative: root.relative, type: 'file' });
        } else if (st.isDirectory()) {
          try {
            for await (const entry of walk(tool, root.absolute, root.relative, true, result.skipped, context.signal)) {
              if (entry.type !== 'file') continue;
              if (!(await searchFile(entry))) break;
            }
          } catch (error) {
            if (error instanceof Error && error.message.startsWith(`${tool}:`)) throw error;
            throw fsError(tool, requested, error);
          }
        } else {
          throw new Error(`${tool}: ${JSON.stringify(requested)} is neither a file nor a directory`);
        }
        if (result.skipped.length > 0) result.note = SKIPPED_NOTE;
        return result;
      },
    ),
    SearchFilesInput,
  );
}

function deleteFileTool(): RuntimeTool {
  return withInputSchema(
    zodTool(
      {
        id: 'builtin.delete_file',
        kind: 'builtin',
        name: 'delete_file',
        description:
          `Delete a file, or a directory (a non-empty one only with recursive: true). The workspace folder itself cannot be deleted. ` +
          `A path that does not exist is reported with deleted: false. ${CONFINED}`,
        inputSchema: DeleteFileInput,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
        pathArgs: ['path'],
      },
      async (input, context): Promise<DeleteFileResult> => {
        const tool = 'delete_file';
        const target = confine(new PathResolver(context.workspaceFolder), tool, 'path', input.path);
        refuseWorkspaceRoot(tool, 'path', input.path, target);
        try {
          const st = await lstatOrUndefined(target.absolute);
          if (!st) return { path: target.display, deleted: false };
          const type = typeOf(st);
          if (type === 'directory') {
            if (input.recursive) await fsp.rm(target.absolute, { recursive: true, force: false });
            else {
              try {
                await fsp.rmdir(target.absolute);
              } catch (error) {
                const code = errnoCode(error);
                if (code === 'ENOTEMPTY' || code === 'EEXIST') {
                  throw new Error(`${tool}: ${JSON.stringify(input.path)} is a non-empty directory; pass recursive: true to delete it and its contents`);
                }
                throw error;
              }
            }
          } else {
            await fsp.unlink(target.absolute);
          }
          return { path: target.display, deleted: true, type };
        } catch (error) {
          if (error instanceof Error && error.message.startsWith(`${tool}:`)) throw error;
          throw fsError(tool, input.path, error);
        }
      },
    ),
    DeleteFileInput,
  );
}

function renameFileTool(): RuntimeTool {
  return withInputSchema(
    zodTool(
      {
        id: 'builtin.rename_file',
        kind: 'builtin',
        name: 'rename_file',
        description:
          `Rename or move a file or directory within the workspace folder. Refuses to replace an existing "to" unless overwrite: true. ${CONFINED}`,
        inputSchema: RenameFileInput,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
        pathArgs: ['from', 'to'],
      },
      async (input, context): Promise<RenameFileResult> => {
        const tool = 'rename_file';
        const resolver = new PathResolver(context.workspaceFolder);
        // Both are confined before either is touched.
        const from = confine(resolver, tool, 'from', input.from);
        const to = confine(resolver, tool, 'to', input.to);
        refuseWorkspaceRoot(tool, 'from', input.from, from);
        refuseWorkspaceRoot(tool, 'to', input.to, to);
        try {
          const fromStat = await lstatOrUndefined(from.absolute);
          if (!fromStat) throw new Error(`${tool}: ${JSON.stringify(input.from)} does not exist`);
          if (from.absolute === to.absolute) return { from: from.display, to: to.display, overwritten: false };
          if (fromStat.isDirectory() && to.absolute.startsWith(from.absolute + path.sep)) {
            throw new Error(`${tool}: cannot move the directory ${JSON.stringify(input.from)} into itself (${JSON.stringify(input.to)})`);
          }
          const toStat = await lstatOrUndefined(to.absolute);
          if (toStat && !input.overwrite) {
            throw new Error(`${tool}: ${JSON.stringify(input.to)} already exists; pass overwrite: true to replace it`);
          }
          const parentStat = await lstatOrUndefined(path.dirname(to.absolute));
          if (!parentStat?.isDirectory()) {
            throw new Error(`${tool}: the parent directory of ${JSON.stringify(input.to)} does not exist`);
          }
          try {
            await fsp.rename(from.absolute, to.absolute);
          } catch (error) {
            const code = errnoCode(error);
            if (code === 'ENOTEMPTY' || code === 'EEXIST') throw new Error(`${tool}: ${JSON.stringify(input.to)} is a non-empty directory; not replaced`);
            if (code === 'EISDIR' || code === 'ENOTDIR') {
              throw new Error(`${tool}: cannot replace ${JSON.stringify(input.to)}: one of the two is a directory and the other is not`);
            }
            throw error;
          }
          return { from: from.display, to: to.display, overwritten: toStat !== undefined };
        } catch (error) {
          if (error instanceof Error && error.message.startsWith(`${tool}:`)) throw error;
          throw fsError(tool, input.from, error);
        }
      },
    ),
    RenameFileInput,
  );
}

/** read_file, write_file, list_files, search_files, delete_file and rename_file. */
export function builtinFileTools(): RuntimeTool[] {
  return [readFileTool(), writeFileTool(), listFilesTool(), searchFilesTool(), deleteFileTool(), renameFileTool()];
}

// ---------------------------------------------------------------------------------------------
// run_command

/** Keeps the first and the last half of a stream's bytes, and counts what it drops. */
class OutputCapture {
  private readonly headCap: number;
  private readonly tailCap: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;

  constructor(private readonly cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = cap - this.headCap;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headCap) {
      const take = Math.min(this.headCap - this.headBytes, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.tailCap === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes > this.tailCap) {
      const first = this.tail[0] as Buffer;
      const excess = this.tailBytes - this.tailCap;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  get truncated(): boolean {
    return this.total > this.cap;
  }

  text(name: string): string {
    if (!this.truncated) return Buffer.concat([...this.head, ...this.tail]).toString('utf8');
    // Cut at character boundaries: hold back a partial character at the end of the head, skip
    // continuation bytes at the start of the tail.
    const head = new StringDecoder('utf8').write(Buffer.concat(this.head));
    let tail = Buffer.concat(this.tail);
    let skip = 0;
    while (skip < 3 && skip < tail.length && ((tail[skip] as number) & 0xc0) === 0x80) skip++;
    tail = tail.subarray(skip);
    const omitted = this.total - this.headBytes - this.tailBytes + skip;
    return `${head}\n[… ${name} truncated: ${omitted} of ${this.total} bytes omitted …]\n${tail.toString('utf8')}`;
  }
}

/** Whether a live (not zombie) process is left in the process group. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  // kill(…, 0) also succeeds for zombies, which an init that does not reap leaves around forever.
  try {
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      let stat: string;
      try {
        stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      } catch {
        continue;
      }
      // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
    }
    return false;
  } catch {
    return true;
  }
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function runShell(
  input: z.infer<typeof RunCommandInput>,
  context: ToolRunContext,
  defaultTimeoutMs: number,
  maxOutputBytes: number,
): Promise<RunCommandResult> {
  const tool = 'run_command';
  const cwdArg = input.cwd ?? '.';
  const cwd = confine(new PathResolver(context.workspaceFolder), tool, 'cwd', cwdArg);
  let st: fs.Stats;
  try {
    st = await fsp.stat(cwd.absolute);
  } catch (error) {
    throw fsError(tool, cwdArg, error);
  }
  if (!st.isDirectory()) throw new Error(`${tool}: cwd ${JSON.stringify(cwdArg)} is not a directory`);

  const started = Date.now();
  const stdout = new OutputCapture(maxOutputBytes);
  const stderr = new OutputCapture(maxOutputBytes);
  const finish = (exitCode: number | null, signal: string | null, timedOut: boolean, cancelled: boolean): RunCommandResult => ({
    exitCode,
    signal,
    stdout: stdout.text('stdout'),
    stderr: stderr.text('stderr'),
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    timedOut,
    cancelled,
    durationMs: Date.now() - started,
  });
  if (context.signal.aborted) return finish(null, null, false, true);

  const child = spawn('/bin/sh', ['-c', input.command], {
    cwd: cwd.absolute,
    detached: true, // its own process group, so the whole group can be killed
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', (error) => {
      if (child.pid === undefined) reject(new Error(`${tool}: could not start /bin/sh: ${error.message}`));
    });
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let timedOut = false;
  let cancelled = false;
  let killing: Promise<void> | undefined;
  const terminate = (): void => {
    const pgid = child.pid;
    if (killing || pgid === undefined) return;
    killGroup(pgid, 'SIGTERM');
    killing = (async () => {
      const deadline = Date.now() + KILL_GRACE_MS;
      while (Date.now() < deadline) {
        await sleep(50);
        if (!groupAlive(pgid)) return;
      }
      killGroup(pgid, 'SIGKILL');
    })();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    terminate();
  }, input.timeoutMs ?? defaultTimeoutMs);
  const onAbort = (): void => {
    cancelled = true;
    terminate();
  };
  context.signal.addEventListener('abort', onAbort, { once: true });

  try {
    const { code, signal } = await exited;
    clearTimeout(timer);
    context.signal.removeEventListener('abort', onAbort);
    if (killing) await killing;
    // Output may still be in the pipes; a background child may also hold them open: wait a little, not for it.
    await Promise.race([closed, sleep(PIPE_DRAIN_MS)]);
    child.stdout.destroy();
    child.stderr.destroy();
    return finish(code, signal, timedOut, cancelled);
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener('abort', onAbort);
  }
}

/** `builtin.run_command`: `/bin/sh -c command` in the workspace folder (or a cwd inside it). */
export function runCommandTool(options: { defaultTimeoutMs?: number; maxOutputBytes?: number } = {}): RuntimeTool {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!Number.isInteger(defaultTimeoutMs) || defaultTimeoutMs < 1) throw new Error(`runCommandTool: defaultTimeoutMs must be a positive integer`);
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 1) throw new Error(`runCommandTool: maxOutputBytes must be a positive integer`);
  return withInputSchema(
    zodTool(
      {
        id: 'builtin.run_command',
        kind: 'builtin',
        name: 'run_command',
        description:
          `Run a shell command with /bin/sh -c, in the workspace folder or in cwd (relative to it). Returns the exit code, stdout and stderr ` +
          `(each capped at ${maxOutputBytes} bytes; the middle of longer output is cut and the result says so). ` +
          `The command and everything it started are killed after timeoutMs (default ${defaultTimeoutMs} ms) or when the turn is cancelled. ` +
          `A non-zero exit code is a result, not an error. stdin is empty.`,
        inputSchema: RunCommandInput,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
        pathArgs: ['cwd'],
        commandArg: 'command',
      },
      (input, context) => runShell(input, context, defaultTimeoutMs, maxOutputBytes),
    ),
    RunCommandInput,
  );
}

/** The six file tools and run_command. */
export function builtinTools(): RuntimeTool[] {
  return [...builtinFileTools(), runCommandTool()];
}
