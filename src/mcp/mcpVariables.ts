// The variables of a server's config (`${workspaceFolder}`, `${env:NAME}`, `${input:id}`, …) at
// connect time: which inputs a server uses, and its config with every variable replaced. The
// file keeps them as written (mcpConfig.ts); they are resolved only when the server starts.
import * as os from 'node:os';
import * as path from 'node:path';
import { VARIABLE, type McpServerConfig } from './mcpConfig.js';

/** The `${input:id}` ids a server's strings use, in order of first use. */
export function inputIdsOf(server: McpServerConfig): string[] {
  const ids: string[] = [];
  for (const s of stringsOf(server)) {
    for (const match of s.matchAll(VARIABLE)) {
      const v = match[1]!;
      if (v.startsWith('input:')) {
        const id = v.slice('input:'.length);
        if (!ids.includes(id)) ids.push(id);
      }
    }
  }
  return ids;
}

function stringsOf(server: McpServerConfig): string[] {
  if (server.type === 'stdio') {
    return [server.command, ...server.args, ...Object.values(server.env).filter((v): v is string => v !== null),
      ...(server.envFile !== undefined ? [server.envFile] : []), ...(server.cwd !== undefined ? [server.cwd] : [])];
  }
  return [server.url, ...Object.values(server.headers)];
}

export interface VariableContext {
  workspaceFolder: string;
  /** Values of `${input:id}`; an id missing here is an error. */
  inputs: ReadonlyMap<string, string>;
  env?: NodeJS.ProcessEnv;
}

/** Replaces the variables of one string. Throws on an input with no value or a variable not supported. */
export function resolveVariables(value: string, context: VariableContext): string {
  const env = context.env ?? process.env;
  return value.replace(VARIABLE, (whole, variable: string) => {
    switch (variable) {
      case 'workspaceFolder': return context.workspaceFolder;
      case 'workspaceFolderBasename': return path.basename(context.workspaceFolder);
      case 'userHome': return os.homedir();
      case 'pathSeparator':
      case '/': return path.sep;
    }
    if (variable.startsWith('env:')) return env[variable.slice(4)] ?? '';
    if (variable.startsWith('input:')) {
      const id = variable.slice(6);
      const v = context.inputs.get(id);
      if (v === undefined) throw new Error(`input "${id}" has no value`);
      return v;
    }
    throw new Error(`variable ${whole} is not supported`);
  });
}

/** The server with every variable replaced; paths (`cwd`, `envFile`) are made absolute against the workspace folder. */
export function resolveServer<S extends McpServerConfig>(server: S, context: VariableContext): S {
  const r = (s: string): string => resolveVariables(s, context);
  if (server.type === 'stdio') {
    const env = Object.fromEntries(Object.entries(server.env).map(([k, v]) => [k, v === null ? null : r(v)]));
    return {
      ...server, command: r(server.command), args: server.args.map(r), env,
      ...(server.envFile !== undefined ? { envFile: path.resolve(context.workspaceFolder, r(server.envFile)) } : {}),
      ...(server.cwd !== undefined ? { cwd: path.resolve(context.workspaceFolder, r(server.cwd)) } : {}),
    };
  }
  return { ...server, url: r(server.url), headers: Object.fromEntries(Object.entries(server.headers).map(([k, v]) => [k, r(v)])) };
}
