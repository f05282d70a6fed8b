// VS Code's own `.vscode/mcp.json` (JSONC): the MCP servers a workspace declares, and the inputs
// (`${input:id}`) their strings use. Read tolerantly, like VS Code: a bad server is reported and
// left out, the others stay usable. Variables are kept as written and resolved at connect time.
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { findNodeAtLocation, getNodeValue, type Node } from 'jsonc-parser';
import { z } from 'zod';
import type { Diagnostic } from '../policy/file/diagnostics.js';
import { nearest, parseJsoncWithSchema } from '../policy/file/parse.js';

export interface McpStdioServerConfig {
  name: string;
  type: 'stdio';
  command: string;
  args: string[];
  /** `null` removes a variable the server would otherwise inherit. */
  env: Record<string, string | null>;
  envFile?: string;
  cwd?: string;
}

export interface McpHttpServerConfig {
  name: string;
  /** `http`: streamable HTTP, falling back to SSE when the server refuses it; `sse`: SSE only. */
  type: 'http' | 'sse';
  url: string;
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** An entry of `inputs`: a value a person types once (a token), referenced as `${input:id}`. */
export interface McpInputDeclaration {
  type: 'promptString' | 'pickString';
  id: string;
  description: string;
  password: boolean;
  default?: string;
  /** `pickString` only. */
  options?: string[];
}

export interface McpConfig {
  file: string;
  /** The file's text as read ('' when there is none): what diagnostics' offsets point into. */
  text: string;
  /** The servers that can be used: those with errors are left out (and reported). */
  servers: McpServerConfig[];
  inputs: McpInputDeclaration[];
  diagnostics: Diagnostic[];
}

/** Where the values of `${input:id}` come from (the extension keeps them in its secret storage). */
export interface McpInputs {
  get(id: string): Promise<string | undefined>;
}

/** Server names become part of tool ids (`mcp.<server>.<tool>`) and model-facing names. */
const SERVER_NAME = /^[A-Za-z0-9_-]+$/;

/** A variable in a string of the config, `${name}`; mcpVariables.ts resolves them. */
export const VARIABLE = /\$\{([^}]*)\}/g;
/** Variables VS Code's mcp.json supports that do not need anything but the workspace. */
const PLAIN_VARIABLES = ['workspaceFolder', 'workspaceFolderBasename', 'userHome', 'pathSeparator', '/'];

const STDIO_FIELDS = ['command', 'args', 'env', 'envFile', 'cwd'];
const HTTP_FIELDS = ['url', 'headers'];
/** Server fields VS Code knows that do not matter here: accepted without a word. */
const IGNORED_FIELDS = ['type', 'dev', 'gallery', 'version', 'sandbox', 'sandboxEnabled', 'description', 'disabled'];
const INPUT_FIELDS = ['type', 'id', 'description', 'password', 'default', 'options'];

// The file's outline only; servers and inputs are checked one by one so that one bad entry does
// not take the others with it.
const OutlineSchema = z.looseObject({
  servers: z.record(z.string(), z.unknown()).optional(),
  inputs: z.array(z.unknown()).optional(),
});

/** `.vscode/mcp.json` text → servers, inputs and diagnostics with offsets. Never throws. */
export function parseMcpConfig(text: string, file: string): McpConfig {
  const config: McpConfig = { file, text, servers: [], inputs: [], diagnostics: [] };
  const parsed = parseJsoncWithSchema(text, file, OutlineSchema, { what: 'mcp.json' });
  config.diagnostics.push(...parsed.diagnostics);
  const root = parsed.root;
  if (root === undefined || root.type !== 'object') return config;
  const report = (node: Node | undefined, severity: Diagnostic['severity'], message: string): void => {
    const target = node ?? root;
    config.diagnostics.push({ file, severity, code: 'schema', offset: target.offset, length: target.length, message });
  };

  const inputsNode = findNodeAtLocation(root, ['inputs']);
  if (inputsNode?.type === 'array') {
    const seen = new Set<string>();
    for (const node of inputsNode.children ?? []) {
      const input = readInput(node, report);
      if (input === undefined) continue;
      if (seen.has(input.id)) {
        report(findNodeAtLocation(node, ['id']), 'error', `input id "${input.id}" is declared twice`);
        continue;
      }
      seen.add(input.id);
      config.inputs.push(input);
    }
  }

  const serversNode = findNodeAtLocation(root, ['servers']);
  if (serversNode?.type === 'object') {
    const declared = new Set(config.inputs.map((i) => i.id));
    for (const property of serversNode.children ?? []) {
      const [keyNode, valueNode] = property.children ?? [];
      if (keyNode === undefined || valueNode === undefined) continue;
      const server = readServer(String(keyNode.value), keyNode, valueNode, text, declared, report);
      if (server !== undefined) config.servers.push(server);
    }
  }
  config.diagnostics.sort((a, b) => a.offset - b.offset);
  return config;
}

/** Reads `<workspaceFolder>/.vscode/mcp.json`; a folder without one has no servers. */
export async function loadMcpConfig(workspaceFolder: string): Promise<McpConfig> {
  const file = path.join(workspaceFolder, '.vscode', 'mcp.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { file, text: '', servers: [], inputs: [], diagnostics: [] };
    return {
      file, text: '', servers: [], inputs: [],
      diagnostics: [{ file, severity: 'error', code: 'syntax', offset: 0, length: 1, message: `mcp.json could not be read: ${(error as Error).message}` }],
    };
  }
  return parseMcpConfig(text, file);
}

type Report = (node: Node | undefined, severity: Diagnostic['severity'], message: string) => void;

/** For a property's value, the key: that is what a person reads and fixes. */
function keyOf(node: Node): Node {
  const parent = node.parent;
  return parent?.type === 'property' && parent.children?.[1] === node ? parent.children[0]! : node;
}

function readServer(name: string, keyNode: Node, node: Node, text: string, declaredInputs: ReadonlySet<string>, report: Report): McpServerConfig | undefined {
  const where = `server "${name}"`;
  let ok = true;
  const fail = (at: Node | undefined, message: string): void => {
    ok = false;
    report(at ?? keyNode, 'error', message);
  };
  if (!SERVER_NAME.test(name)) {
    fail(keyNode, `server name "${name}" must be letters, digits, "_" or "-" (it becomes part of the tool ids mcp.<server>.<tool>)`);
  }
  if (node.type !== 'object') {
    fail(node, `${where} must be an object with "command" (a local server) or "url" (a remote one)`);
    return undefined;
  }
  const field = (key: string): Node | undefined => findNodeAtLocation(node, [key]);
  const value = getNodeValue(node) as Record<string, unknown>;

  const typeNode = field('type');
  let type: McpServerConfig['type'] | undefined;
  if (typeNode !== undefined) {
    const t = value.type;
    if (t === 'stdio' || t === 'http' || t === 'sse') type = t;
    else fail(typeNode, `${where}: unknown type ${JSON.stringify(t)}; use "stdio", "http" or "sse"`);
  }
  const hasCommand = field('command') !== undefined;
  const hasUrl = field('url') !== undefined;
  if (typeNode === undefined) {
    if (hasCommand && hasUrl) fail(keyNode, `${where} has both "command" and "url"; say which it is with "type": "stdio" or "http"`);
    else if (hasCommand) type = 'stdio';
    else if (hasUrl) type = 'http';
    else fail(keyNode, `${where} has neither "command" (a local server) nor "url" (a remote one)`);
  }

  for (const key of Object.keys(value)) {
    if (STDIO_FIELDS.includes(key) || HTTP_FIELDS.includes(key) || IGNORED_FIELDS.includes(key)) continue;
    const suggestion = nearest(key, [...STDIO_FIELDS, ...HTTP_FIELDS, 'type']);
    if (suggestion) report(keyOf(field(key)!), 'warning', `${where}: unknown field "${key}" is ignored; did you mean "${suggestion}"?`);
  }
  if (type === undefined) return undefined;

  const variables = (at: Node | undefined): void => {
    if (at === undefined) return;
    for (const problem of variableProblems(at, text, declaredInputs)) {
      if (problem.severity === 'error') ok = false;
      report(problem.node, problem.severity, `${where}: ${problem.message}`);
    }
  };
  const str = (key: string): string | undefined => {
    const at = field(key);
    if (at === undefined) return undefined;
    if (typeof value[key] !== 'string' || (value[key] as string).trim() === '') {
      fail(at, `${where}: "${key}" must be a non-empty string`);
      return undefined;
    }
    variables(at);
    return value[key] as string;
  };
  /**
   * An object of names and strings (`env`, `headers`): with `scalars`, numbers and booleans are
   * taken as their text; with `allowNull`, `null` stays `null`. Anything else is an error naming
   * the entry as `<what> "<name>"`.
   */
  const stringMap = (key: string, what: string, accept: { scalars: boolean; allowNull: boolean }): Record<string, string | null> => {
    const out: Record<string, string | null> = {};
    const at = field(key);
    if (at === undefined) return out;
    if (at.type !== 'object') {
      fail(at, `${where}: "${key}" must be an object of names and string values`);
      return out;
    }
    for (const property of at.children ?? []) {
      const [k, v] = property.children ?? [];
      if (k === undefined || v === undefined) continue;
      const name = String(k.value);
      if (v.type === 'string') {
        out[name] = v.value as string;
        variables(v);
      } else if (accept.scalars && (v.type === 'number' || v.type === 'boolean')) out[name] = String(v.value);
      else if (accept.allowNull && v.type === 'null') out[name] = null;
      else fail(v, `${where}: ${what} "${name}" must be a string`);
    }
    return out;
  };
  const misplaced = (keys: readonly string[], kind: string): void => {
    for (const key of keys) {
      const at = field(key);
      if (at !== undefined) report(keyOf(at), 'warning', `${where}: "${key}" is ignored for ${kind} server`);
    }
  };

  if (type === 'stdio') {
    misplaced(HTTP_FIELDS, 'a stdio');
    const command = str('command');
    if (command === undefined && !hasCommand) fail(keyNode, `${where} is a stdio server but has no "command"`);
    const args: string[] = [];
    const argsNode = field('args');
    if (argsNode !== undefined) {
      if (argsNode.type !== 'array') fail(argsNode, `${where}: "args" must be a list of strings`);
      else {
        for (const item of argsNode.children ?? []) {
          if (item.type === 'string') {
            args.push(item.value as string);
            variables(item);
          } else if (item.type === 'number' || item.type === 'boolean') {
            args.push(String(item.value));
          } else fail(item, `${where}: each of "args" must be a string`);
        }
      }
    }
    const env = stringMap('env', 'env', { scalars: true, allowNull: true });
    const envFile = str('envFile');
    const cwd = str('cwd');
    if (!ok || command === undefined) return undefined;
    return { name, type, command, args, env, ...(envFile !== undefined ? { envFile } : {}), ...(cwd !== undefined ? { cwd } : {}) };
  }

  misplaced(STDIO_FIELDS, type === 'sse' ? 'an sse' : 'an http');
  const url = str('url');
  if (url === undefined && !hasUrl) fail(keyNode, `${where} is an ${type} server but has no "url"`);
  if (url !== undefined && !urlLooksValid(url)) fail(field('url'), `${where}: "${url}" is not an http or https URL`);
  const headers = stringMap('headers', 'header', { scalars: false, allowNull: false }) as Record<string, string>;
  if (!ok || url === undefined) return undefined;
  return { name, type, url, headers };
}

/** A URL is checked with its variables stood in for, since they are known only at connect time. */
function urlLooksValid(url: string): boolean {
  try {
    const u = new URL(url.replace(VARIABLE, 'x'));
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function variableProblems(node: Node, text: string, declaredInputs: ReadonlySet<string>): { node: Node; severity: Diagnostic['severity']; message: string }[] {
  const value = node.value;
  if (typeof value !== 'string') return [];
  const raw = text.slice(node.offset, node.offset + node.length);
  const out: { node: Node; severity: Diagnostic['severity']; message: string }[] = [];
  for (const match of value.matchAll(VARIABLE)) {
    const variable = match[1]!;
    // Point at the variable itself when it is written plainly in the source.
    const at = raw.indexOf(match[0]);
    const spot: Node = at >= 0 ? { ...node, offset: node.offset + at, length: match[0].length, parent: undefined } : node;
    if (PLAIN_VARIABLES.includes(variable)) continue;
    if (variable.startsWith('env:')) {
      if (!/^env:[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) out.push({ node: spot, severity: 'error', message: `"${match[0]}" is not a valid environment variable reference` });
      continue;
    }
    if (variable.startsWith('input:')) {
      const id = variable.slice('input:'.length);
      if (id === '') out.push({ node: spot, severity: 'error', message: `"${match[0]}" names no input` });
      else if (!declaredInputs.has(id)) {
        out.push({ node: spot, severity: 'warning', message: `input "${id}" is not declared in "inputs"; it will be asked for by its id` });
      }
      continue;
    }
    out.push({
      node: spot, severity: 'error',
      message: `variable "${match[0]}" is not supported here; use \${workspaceFolder}, \${userHome}, \${env:NAME} or \${input:id}`,
    });
  }
  return out;
}

function readInput(node: Node, report: Report): McpInputDeclaration | undefined {
  if (node.type !== 'object') {
    report(node, 'error', 'an input must be an object with "type", "id" and "description"');
    return undefined;
  }
  const value = getNodeValue(node) as Record<string, unknown>;
  const field = (key: string): Node | undefined => findNodeAtLocation(node, [key]);
  const id = value.id;
  if (typeof id !== 'string' || id === '') {
    report(field('id') ?? node, 'error', id === undefined ? 'an input needs an "id"' : 'an input\'s "id" must be a non-empty string');
    return undefined;
  }
  let ok = true;
  const type = value.type;
  if (type !== 'promptString' && type !== 'pickString') {
    ok = false;
    report(field('type') ?? node, 'error',
      type === undefined ? `input "${id}" needs "type": "promptString"` : `input "${id}": type ${JSON.stringify(type)} is not supported; use "promptString"`);
  }
  for (const key of Object.keys(value)) {
    if (INPUT_FIELDS.includes(key)) continue;
    const suggestion = nearest(key, INPUT_FIELDS);
    report(keyOf(field(key)!), 'warning', `input "${id}": unknown field "${key}" is ignored${suggestion ? `; did you mean "${suggestion}"?` : ''}`);
  }
  const description = typeof value.description === 'string' ? value.description : id;
  if (value.description !== undefined && typeof value.description !== 'string') report(field('description'), 'warning', `input "${id}": "description" must be a string`);
  if (value.password !== undefined && typeof value.password !== 'boolean') {
    ok = false;
    report(field('password'), 'error', `input "${id}": "password" must be true or false`);
  }
  let options: string[] | undefined;
  if (type === 'pickString') {
    const raw = value.options;
    options = Array.isArray(raw) ? raw.map((o) => (typeof o === 'string' ? o : (o as { value?: unknown })?.value)).filter((o): o is string => typeof o === 'string') : [];
    if (options.length === 0) {
      ok = false;
      report(field('options') ?? node, 'error', `input "${id}": a pickString needs "options"`);
    }
  }
  if (!ok) return undefined;
  return {
    type: type as McpInputDeclaration['type'], id, description, password: value.password === true,
    ...(typeof value.default === 'string' ? { default: value.default } : {}),
    ...(options ? { options } : {}),
  };
}

/** A dotenv file: `NAME=value` lines, `#` comments, optional `export `, single or double quotes. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    let v = m[2]!;
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).replace(/\\n/g, '\n').replace(/\\"/g, '"');
    else if (v.startsWith("'") && v.endsWith("'") && v.length >= 2) v = v.slice(1, -1);
    else v = v.replace(/\s+#.*$/, '');
    out[m[1]!] = v;
  }
  return out;
}
