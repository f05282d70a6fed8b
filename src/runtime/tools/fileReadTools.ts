// The builtin tools that only look at files: read_file, list_files and search_files. Each path
// argument is confined to the workspace folder first (see workspacePaths.ts).
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { Minimatch } from 'minimatch';
import { z } from 'zod';
import { PathResolver } from '../../policy/paths/paths.js';
import { fsError, typeOf, type EntryType } from '../sandbox/fileSystem.js';
import { withInputSchema } from './toolInputSchema.js';
import { zodTool, type RuntimeTool } from './tools.js';
import { CONFINED, confine, confineExisting, openParent, verifyOpened, type OpenedFolder } from './workspacePaths.js';

/** The largest file read_file reads and search_files searches. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** Directories whose contents recursive listing and searching skip (the directory itself is listed). */
export const SKIPPED_DIRECTORIES: readonly string[] = ['.git', 'node_modules'];

const DEFAULT_MAX_ENTRIES = 1000;
const DEFAULT_MAX_RESULTS = 200;
const MAX_LIMIT = 100_000;
const MAX_MATCH_TEXT = 400;
const BINARY_SNIFF_BYTES = 8192;

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

export interface ReadFileResult {
  path: string;
  content: string;
  totalLines: number;
  /** Lines after the returned range were left out (by `limit`). */
  truncated: boolean;
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

// ---------------------------------------------------------------------------------------------
// Reading

type TextRead = { ok: true; text: string } | { ok: false; reason: string };

/** Reads a regular file as UTF-8 text, refusing non-regular, binary and too-large files. */
async function readText(absolute: string, verify?: (handle: fsp.FileHandle) => Promise<void>): Promise<TextRead> {
  // O_NONBLOCK: opening a FIFO must not hang; fstat then refuses it.
  const handle = await fsp.open(absolute, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    await verify?.(handle);
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

function throwIfCancelled(tool: string, signal: AbortSignal): void {
  if (signal.aborted) throw new Error(`${tool}: cancelled`);
}

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

/** The read tools' ids: a policy `deny` on paths for them (or for any tool) hides those paths from sandboxed commands too (sandboxDeniedPaths.ts). */
export const READ_TOOL_IDS: readonly string[] = ['builtin.read_file', 'builtin.list_files', 'builtin.search_files'];

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

// ---------------------------------------------------------------------------------------------
// The tools

/** `builtin.read_file`. */
export function readFileTool(): RuntimeTool {
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
        const resolver = new PathResolver(context.workspaceFolder);
        const target = confine(resolver, tool, 'path', input.path);
        let read: TextRead;
        // The parent folder is opened without following links and verified (openParent), the file
        // is opened through it with O_NOFOLLOW, and the opened descriptor is checked to be the
        // judged file before anything is read.
        let folder: OpenedFolder | undefined;
        try {
          const opened = await openParent(resolver, tool, 'path', input.path, target);
          folder = opened.folder;
          read = await readText(folder.child(opened.name), (handle) => verifyOpened(handle, resolver.workspace, target.absolute, tool, 'path', input.path));
        } catch (error) {
          if (error instanceof Error && error.message.startsWith(`${tool}:`)) throw error;
          throw fsError(tool, input.path, error);
        } finally {
          await folder?.close();
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

/** `builtin.list_files`. */
export function listFilesTool(): RuntimeTool {
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
        const { confined: root, stats: st } = await confineExisting(context.workspaceFolder, tool, 'path', requested);
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

/** `builtin.search_files`. */
export function searchFilesTool(): RuntimeTool {
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
        const { confined: root, stats: st } = await confineExisting(context.workspaceFolder, tool, 'path', requested);
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
