// Protected files: a call that would write, rename or delete the policy files, the agents file
// or the editor files that widen what agents may do is always asked, whatever the rules say,
// and can never be allowed for the session. Nothing an agent does may approve the agent.
// Imports the policy engine and session options' types only.
import * as path from 'node:path';
import { commandOf, effectiveHints } from '../policy/call.js';
import { PathResolver, realpathOfExistingPrefix } from '../policy/paths.js';
import type { ToolHook } from './sessionOptions.js';

/** Default protected files: the policy and agents files, and the VS Code files that could widen what agents may do. */
export const DEFAULT_PROTECTED_FILES = ['.agentpolicy.jsonc', '.agents.jsonc', '.vscode/settings.json', '.vscode/mcp.json'];

export const PROTECTED_FILES_HOOK = 'protected-files';

export function protectedFilesHook(files: readonly string[]): ToolHook {
  const perFolder = new Map<string, { resolver: PathResolver; shown: ProtectedName[] }>();
  // Resolved once: judging a call must not cost a dozen file-system calls.
  const protectedPaths = files.map((f) => realpathOfExistingPrefix(path.resolve(f)));
  const names = new Set(protectedPaths.flatMap((f) => [path.basename(f)]));
  return {
    name: PROTECTED_FILES_HOOK,
    check({ tool, input, workspaceFolder }) {
      // Builtins' annotations are ours and honest; anyone else's read-only claim is not trusted here.
      if (tool.kind === 'builtin' && effectiveHints(tool.annotations).readOnlyHint) return undefined;
      let folder = perFolder.get(workspaceFolder);
      if (!folder) perFolder.set(workspaceFolder, (folder = { resolver: new PathResolver(workspaceFolder), shown: protectedPaths.map((f) => nameIn(workspaceFolder, f)) }));
      const { paths } = folder.resolver.collect(input, tool.pathArgs);
      for (const p of paths) {
        const hit = protectedPaths.find((f) => f === p.absolute || f.startsWith(p.absolute.endsWith(path.sep) ? p.absolute : p.absolute + path.sep));
        if (hit) return `${tool.id} would change the protected file ${path.relative(workspaceFolder, hit) || hit}: only a person can allow this, once`;
      }
      const { command } = commandOf({ tool, input, agent: '' });
      if (command !== undefined) {
        for (const name of names) {
          if (name && command.includes(name)) return `the command mentions the protected file ${name}: only a person can allow this, once`;
        }
      }
      // A tool that is not ours may take its paths in any field, nested or not (file_path, edits[].path…),
      // and resolve them its own way: any string that names a protected file asks.
      if (tool.kind !== 'builtin' && tool.kind !== 'client') {
        const named = stringNaming(input, workspaceFolder, folder.shown);
        if (named !== undefined) return `${tool.id} names the protected file ${path.relative(workspaceFolder, named) || named}: only a person can allow this, once`;
      }
      return undefined;
    },
  };
}

interface ProtectedName {
  file: string;
  /** How a string would name it: relative to the workspace (`.vscode/mcp.json`), else absolute. */
  shown: string;
}

function nameIn(workspaceFolder: string, file: string): ProtectedName {
  const relative = path.relative(workspaceFolder, file);
  return { file, shown: relative.startsWith('..') || path.isAbsolute(relative) ? file : relative.split(path.sep).join('/') };
}

/**
 * The protected file that a string anywhere in the input names (depth-limited): by its path
 * relative to the workspace (`.vscode/mcp.json` in `"edit .vscode/mcp.json"`), or resolved as a path.
 */
function stringNaming(value: unknown, workspaceFolder: string, names: readonly ProtectedName[], depth = 0): string | undefined {
  if (typeof value === 'string') {
    const resolved = path.resolve(workspaceFolder, value);
    for (const { file, shown } of names) {
      if (value.includes(shown) || resolved === file) return file;
    }
    return undefined;
  }
  if (depth > 64 || typeof value !== 'object' || value === null) return undefined;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    const hit = stringNaming(item, workspaceFolder, names, depth + 1);
    if (hit !== undefined) return hit;
  }
  return undefined;
}
