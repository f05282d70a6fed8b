// Small filesystem helpers shared by the builtin tools: errno codes, error sentences for the
// model, and entry types.
import type * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';

export type EntryType = 'file' | 'directory' | 'symlink';

export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

/** `lstat`, with undefined for a path that does not exist. */
export async function lstatOrUndefined(p: string): Promise<fs.Stats | undefined> {
  try {
    return await fsp.lstat(p);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** Rewrites common filesystem errors into sentences that name the path as the model gave it. */
export function fsError(tool: string, value: string, error: unknown): Error {
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

export function typeOf(st: fs.Stats | fs.Dirent): EntryType {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'directory';
  return 'file';
}
