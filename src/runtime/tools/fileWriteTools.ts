// The builtin tools that change files: write_file, delete_file and rename_file. Each path
// argument is confined to the workspace folder first (see workspacePaths.ts), and none of them
// touches the workspace folder itself.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import { PathResolver } from '../../policy/paths/paths.js';
import { errnoCode, fsError, lstatOrUndefined, typeOf, type EntryType } from '../sandbox/fileSystem.js';
import { withInputSchema } from './toolInputSchema.js';
import { zodTool, type RuntimeTool } from './tools.js';
import { CONFINED, confine, openParent, refuseWorkspaceRoot, verifyOpened, type OpenedFolder } from './workspacePaths.js';

const { O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

export interface WriteFileResult {
  path: string;
  bytes: number;
  created: boolean;
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

// ---------------------------------------------------------------------------------------------
// Schemas

const WriteFileInput = z.strictObject({
  path: z.string().min(1).describe('File path, relative to the workspace folder.'),
  content: z.string().describe('The complete new content of the file.'),
  createDirectories: z.boolean().optional().describe('Create missing parent directories. Default false.'),
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

// ---------------------------------------------------------------------------------------------
// The tools
//
// Each opens the parent folder of every path it changes (openParent: walked from the workspace
// folder without following links, then verified to be the judged folder) and acts on the final
// component through that opened folder, so a folder swapped for a link after the policy check
// cannot redirect the change outside the workspace.

/** Errors already phrased for the model pass through; file system errors are rephrased. */
function rethrown(tool: string, value: string, error: unknown): Error {
  if (error instanceof Error && error.message.startsWith(`${tool}:`)) return error;
  return fsError(tool, value, error);
}

/** `builtin.write_file`. */
export function writeFileTool(): RuntimeTool {
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
        const resolver = new PathResolver(context.workspaceFolder);
        const target = confine(resolver, tool, 'path', input.path);
        refuseWorkspaceRoot(tool, 'path', input.path, target);
        let opened: { folder: OpenedFolder; name: string };
        try {
          opened = await openParent(resolver, tool, 'path', input.path, target, { create: input.createDirectories === true });
        } catch (error) {
          if (errnoCode(error) === 'ENOENT') {
            throw new Error(`${tool}: the parent directory of ${JSON.stringify(input.path)} does not exist; pass createDirectories: true to create it`);
          }
          if (errnoCode(error) === 'ENOTDIR') throw new Error(`${tool}: the parent of ${JSON.stringify(input.path)} is not a directory`);
          throw rethrown(tool, input.path, error);
        }
        const { folder, name } = opened;
        try {
          const file = folder.child(name);
          const existing = await lstatOrUndefined(file);
          if (existing && !existing.isFile()) {
            throw new Error(`${tool}: ${JSON.stringify(input.path)} exists and is a ${existing.isDirectory() ? 'directory' : existing.isSymbolicLink() ? 'symbolic link' : 'special file'}; not written`);
          }
          const data = Buffer.from(input.content, 'utf8');
          // O_NOFOLLOW: a link swapped in as the final component fails (ELOOP) instead of being followed.
          const handle = await fsp.open(file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK, 0o666);
          try {
            const st = await handle.stat();
            if (!st.isFile()) throw new Error(`${tool}: ${JSON.stringify(input.path)} is not a regular file; not written`);
            await verifyOpened(handle, resolver.workspace, target.absolute, tool, 'path', input.path);
            await handle.writeFile(data);
          } finally {
            await handle.close();
          }
          return { path: target.display, bytes: data.length, created: existing === undefined };
        } catch (error) {
          throw rethrown(tool, input.path, error);
        } finally {
          await folder.close();
        }
      },
    ),
    WriteFileInput,
  );
}

/** `builtin.delete_file`. */
export function deleteFileTool(): RuntimeTool {
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
        const resolver = new PathResolver(context.workspaceFolder);
        const target = confine(resolver, tool, 'path', input.path);
        refuseWorkspaceRoot(tool, 'path', input.path, target);
        let opened: { folder: OpenedFolder; name: string };
        try {
          opened = await openParent(resolver, tool, 'path', input.path, target);
        } catch (error) {
          if (errnoCode(error) === 'ENOENT') return { path: target.display, deleted: false };
          throw rethrown(tool, input.path, error);
        }
        const { folder, name } = opened;
        try {
          // Acts on the entry inside the opened folder; unlink, rmdir and rm never follow a final link.
          // (A recursive rm walks the subtree by path and does not descend links, but a folder swapped
          // deep inside it during the walk is not pinned by a descriptor.)
          const entry = folder.child(name);
          const st = await lstatOrUndefined(entry);
          if (!st) return { path: target.display, deleted: false };
          const type = typeOf(st);
          if (type === 'directory') {
            if (input.recursive) await fsp.rm(entry, { recursive: true, force: false });
            else {
              try {
                await fsp.rmdir(entry);
              } catch (error) {
                const code = errnoCode(error);
                if (code === 'ENOTEMPTY' || code === 'EEXIST') {
                  throw new Error(`${tool}: ${JSON.stringify(input.path)} is a non-empty directory; pass recursive: true to delete it and its contents`);
                }
                throw error;
              }
            }
          } else {
            await fsp.unlink(entry);
          }
          return { path: target.display, deleted: true, type };
        } catch (error) {
          throw rethrown(tool, input.path, error);
        } finally {
          await folder.close();
        }
      },
    ),
    DeleteFileInput,
  );
}

/** `builtin.rename_file`. */
export function renameFileTool(): RuntimeTool {
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
        let fromParent: { folder: OpenedFolder; name: string } | undefined;
        let toParent: { folder: OpenedFolder; name: string } | undefined;
        try {
          try {
            fromParent = await openParent(resolver, tool, 'from', input.from, from);
          } catch (error) {
            if (errnoCode(error) === 'ENOENT') throw new Error(`${tool}: ${JSON.stringify(input.from)} does not exist`);
            throw error;
          }
          const fromEntry = fromParent.folder.child(fromParent.name);
          const fromStat = await lstatOrUndefined(fromEntry);
          if (!fromStat) throw new Error(`${tool}: ${JSON.stringify(input.from)} does not exist`);
          if (from.absolute === to.absolute) return { from: from.display, to: to.display, overwritten: false };
          if (fromStat.isDirectory() && to.absolute.startsWith(from.absolute + path.sep)) {
            throw new Error(`${tool}: cannot move the directory ${JSON.stringify(input.from)} into itself (${JSON.stringify(input.to)})`);
          }
          try {
            toParent = await openParent(resolver, tool, 'to', input.to, to);
          } catch (error) {
            const code = errnoCode(error);
            if (code === 'ENOENT' || code === 'ENOTDIR') throw new Error(`${tool}: the parent directory of ${JSON.stringify(input.to)} does not exist`);
            throw error;
          }
          const toEntry = toParent.folder.child(toParent.name);
          const toStat = await lstatOrUndefined(toEntry);
          if (toStat && !input.overwrite) {
            throw new Error(`${tool}: ${JSON.stringify(input.to)} already exists; pass overwrite: true to replace it`);
          }
          try {
            // Both ends name entries inside their opened, verified folders; rename never follows a final link.
            await fsp.rename(fromEntry, toEntry);
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
          throw rethrown(tool, input.from, error);
        } finally {
          await fromParent?.folder.close();
          await toParent?.folder.close();
        }
      },
    ),
    RenameFileInput,
  );
}
