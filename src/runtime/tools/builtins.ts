// The builtin tools: files in the session's workspace folder, shell commands, and fetching a URL.
// This module assembles the set; each family lives in its own file (fileReadTools.ts,
// fileWriteTools.ts, runCommandTool.ts, fetchTool.ts), and every path argument is confined to the
// workspace folder (workspacePaths.ts).
import { listFilesTool, readFileTool, searchFilesTool } from './fileReadTools.js';
import { deleteFileTool, renameFileTool, writeFileTool } from './fileWriteTools.js';
import { fetchTool } from './fetchTool.js';
import { runCommandTool } from './runCommandTool.js';
import type { RuntimeTool } from './tools.js';

export { fetchTool, runCommandTool };

/** read_file, write_file, list_files, search_files, delete_file and rename_file. */
export function builtinFileTools(): RuntimeTool[] {
  return [readFileTool(), writeFileTool(), listFilesTool(), searchFilesTool(), deleteFileTool(), renameFileTool()];
}

/** The six file tools, run_command and fetch. */
export function builtinTools(): RuntimeTool[] {
  return [...builtinFileTools(), runCommandTool(), fetchTool()];
}
