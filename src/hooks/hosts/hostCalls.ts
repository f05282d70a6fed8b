// A host's hook input, read into the call our policy judges: the stable tool id, our input
// fields, the host's session and the workspace. The table of names is docs/hooks.md's
// "What a host's tool becomes"; the hosts' own formats are in docs/hook-hosts.md.
// Everything here comes from another program: nothing is trusted to be of the type it claims.
import * as path from 'node:path';
import type { ToolCall, ToolDescriptor } from '../../policy/rules/call.js';
import { heredocPatch, isPatch, patchPaths } from './applyPatch.js';
import type { HostAgent } from './hostAgents.js';

/** One tool call a host's hook asks about, as our policy sees it. */
export interface HostToolCall {
  host: HostAgent;
  /** The host's hook event (`PreToolUse`, `beforeShellExecution`, …): the answer's shape can depend on it. */
  event: string;
  /** The host's session id ('' when it gives none). */
  session: string;
  /** The host's subagent, when it says. */
  subagent?: string;
  /** The folder the host works in: its project dir, else its cwd. */
  folder: string;
  /** The host's working folder: its relative paths are relative to it. */
  cwd: string;
  /** The host's own tool name, as it sent it. */
  hostTool: string;
  /** The host's own tool input, as it sent it (Claude-style payloads): an answer's `updatedInput` starts from it. */
  hostInput?: Record<string, unknown>;
  call: ToolCall;
  /** Copilot CLI sent its camelCase shape (answered in camelCase) rather than the Claude-style one. */
  camelCase?: boolean;
  /** The host's permission mode when it says (Claude Code's and Codex's `permission_mode`). */
  permissionMode?: string;
}

/** The input could not be read as a tool call of that host: the hook blocks, saying why. */
export class HostInputError extends Error {}

type Json = Record<string, unknown>;

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const WRITE = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false } as const;

const RUN_COMMAND: ToolDescriptor = { id: 'builtin.run_command', kind: 'builtin', commandArg: 'command', pathArgs: [] };
const READ_FILE: ToolDescriptor = { id: 'builtin.read_file', kind: 'builtin', annotations: READ_ONLY, pathArgs: ['path'] };
const LIST_FILES: ToolDescriptor = { id: 'builtin.list_files', kind: 'builtin', annotations: READ_ONLY, pathArgs: ['path'] };
const SEARCH_FILES: ToolDescriptor = { id: 'builtin.search_files', kind: 'builtin', annotations: READ_ONLY, pathArgs: ['path'] };
const WRITE_FILE: ToolDescriptor = { id: 'builtin.write_file', kind: 'builtin', annotations: WRITE, pathArgs: ['path', 'paths'] };
const FETCH: ToolDescriptor = { id: 'builtin.fetch', kind: 'builtin', annotations: { readOnlyHint: true, openWorldHint: true }, pathArgs: [] };

function object(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A field that must be a non-empty string for the call to mean anything: missing is an input error. */
function required(input: Json, field: string, tool: string): string {
  const v = input[field];
  if (typeof v !== 'string' || v === '') throw new HostInputError(`${tool} without a string "${field}"`);
  return v;
}

function shell(command: string, cwd?: string): { tool: ToolDescriptor; input: Json } {
  return { tool: RUN_COMMAND, input: { command, ...(cwd !== undefined && cwd !== '' ? { cwd } : {}) } };
}

function write(paths: readonly string[]): { tool: ToolDescriptor; input: Json } {
  return { tool: WRITE_FILE, input: paths.length === 1 ? { path: paths[0] } : { paths: [...paths] } };
}

/** A patch's paths, relative to the folder the patch applies in. */
function patchWrite(patch: string, cd?: string): { tool: ToolDescriptor; input: Json } {
  const paths = patchPaths(patch).map((p) => (cd === undefined || path.isAbsolute(p) ? p : path.join(cd, p)));
  return write(paths);
}

/**
 * A shell command, unless it is exactly a patch fed to apply_patch (Codex's edit with a model it
 * has no metadata for): then the files it writes.
 */
function shellOrPatch(command: string, cwd?: string): { tool: ToolDescriptor; input: Json } {
  const patch = heredocPatch(command);
  if (patch && isPatch(patch.patch)) return patchWrite(patch.patch, cwd !== undefined && patch.cd !== undefined ? path.join(cwd, patch.cd) : patch.cd ?? cwd);
  return shell(command, cwd);
}

/** A name as one segment of a stable id: no dots (they would make `mcp.a.*` match server `a.b`), nothing a glob reads. */
function idSegment(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_-]/g, '_');
  return clean === '' ? '_' : clean;
}

function mcp(server: string, tool: string): ToolDescriptor {
  return { id: `mcp.${idSegment(server)}.${idSegment(tool)}`, kind: 'mcp' };
}

/** A tool we have no name for: `<host>.<tool>`, so a rule can still name it; its strings are checked for protected files. */
function unknown(host: HostAgent, tool: string, input: unknown): { tool: ToolDescriptor; input: unknown } {
  return { tool: { id: `${host}.${idSegment(tool)}` }, input };
}

/** URLs in a text (Gemini's web_fetch takes them inside its prompt). */
function urlsIn(prompt: string): string[] {
  return [...prompt.matchAll(/https?:\/\/[^\s"'<>)\]]+/g)].map((m) => m[0]);
}

/** `{url}` for one, `{urls}` for several. */
function fetch(urls: readonly string[], extra: Json = {}): { tool: ToolDescriptor; input: Json } {
  return { tool: FETCH, input: { ...(urls.length === 1 ? { url: urls[0] } : { urls: [...urls] }), ...extra } };
}

// ---------------------------------------------------------------------------------------------
// Per host: the host's tool name and input → our tool and input.

type Mapped = { tool: ToolDescriptor; input: unknown };

/** Claude Code (and Copilot's and VS Code's Claude-style names). */
function claudeTool(name: string, input: Json, host: HostAgent, mcpServer?: string): Mapped {
  switch (name) {
    case 'Bash':
      return shellOrPatch(required(input, 'command', name));
    case 'Read':
      return { tool: READ_FILE, input: { path: required(input, 'file_path', name) } };
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
      return write([required(input, 'file_path', name)]);
    case 'NotebookEdit':
      return write([required(input, 'notebook_path', name)]);
    case 'WebFetch':
      return fetch([required(input, 'url', name)]);
    case 'Glob':
      return { tool: LIST_FILES, input: { path: text(input.path) ?? '.', pattern: input.pattern } };
    case 'Grep':
      return { tool: SEARCH_FILES, input: { path: text(input.path) ?? '.', pattern: input.pattern } };
  }
  // The host's word for the server (Claude's mcp_server.name) cuts the name where it really ends.
  if (mcpServer !== undefined && name.startsWith(`mcp__${mcpServer}__`)) return { tool: mcp(mcpServer, name.slice(`mcp__${mcpServer}__`.length)), input };
  return mcpByName(host, name, input);
}

/**
 * `mcp__<server>__<tool>` cut at its one `__` after the prefix. With more than one the cut is a
 * guess (a server `a__b`, or a tool `b__c`), and a wrong guess could let a rule on one server
 * match another's tool: such a name stays whole, `<host>.<name>`, of kind mcp.
 */
function mcpByName(host: HostAgent, name: string, input: unknown): Mapped {
  const m = /^mcp__(.+?)__(.+)$/.exec(name);
  if (!m) return unknown(host, name, input);
  if (m[2]!.includes('__')) return { tool: { ...unknown(host, name, input).tool, kind: 'mcp' }, input };
  return { tool: mcp(m[1]!, m[2]!), input };
}

function codexTool(name: string, input: Json): Mapped {
  if (name === 'Bash') return shellOrPatch(required(input, 'command', name));
  if (name === 'apply_patch') return patchWrite(required(input, 'command', name));
  return mcpByName('codex', name, input);
}

function geminiTool(name: string, input: Json, mcpContext: Json | undefined): Mapped {
  switch (name) {
    case 'run_shell_command':
      return shellOrPatch(required(input, 'command', name), text(input.dir_path));
    case 'read_file':
      return { tool: READ_FILE, input: { path: required(input, 'file_path', name) } };
    case 'write_file':
    case 'replace':
      return write([required(input, 'file_path', name)]);
    case 'list_directory':
      return { tool: LIST_FILES, input: { path: text(input.dir_path) ?? '.' } };
    case 'glob':
      return { tool: LIST_FILES, input: { path: text(input.dir_path) ?? '.', pattern: input.pattern } };
    case 'grep_search':
      return { tool: SEARCH_FILES, input: { path: text(input.dir_path) ?? '.', pattern: input.pattern } };
    case 'web_fetch':
      return fetch(urlsIn(text(input.prompt) ?? text(input.url) ?? ''), { prompt: input.prompt });
  }
  // The host, not the MCP server, says which server a tool is from; its `mcp_<server>_<tool>` name
  // is ambiguous when names hold `_`, so only mcp_context names the server.
  const server = text(mcpContext?.server_name);
  const tool = text(mcpContext?.tool_name);
  if (server !== undefined && tool !== undefined) return { tool: mcp(server, tool), input };
  return unknown('gemini', name, input);
}

/** Copilot CLI's own tool names (its camelCase payload, and the fields of its Claude-style one). */
function copilotTool(name: string, input: Json): Mapped {
  switch (name) {
    case 'bash':
    case 'Bash':
      return shellOrPatch(required(input, 'command', name));
    case 'view':
    case 'Read':
      return { tool: READ_FILE, input: { path: required(input, 'path', name) } };
    case 'create':
    case 'edit':
    case 'Write':
    case 'Edit':
      return write([required(input, 'path', name)]);
    case 'glob':
      return { tool: LIST_FILES, input: { path: text(input.path) ?? '.', pattern: input.pattern } };
    case 'grep':
      return { tool: SEARCH_FILES, input: { path: text(input.path) ?? '.', pattern: input.pattern } };
    case 'web_fetch':
      return fetch([required(input, 'url', name)]);
  }
  // MCP tools arrive as `<server>-<tool>` with no word of which server: server names may hold `-`,
  // so the name is not split (a rule on `mcp.github.*` must not match server `github-admin`).
  return { tool: { ...unknown('copilot', name, input).tool, ...(name.includes('-') ? { kind: 'mcp' as const } : {}) }, input };
}

function vscodeTool(name: string, input: Json): Mapped {
  switch (name) {
    case 'run_in_terminal':
      return shellOrPatch(required(input, 'command', name));
    case 'read_file':
      return { tool: READ_FILE, input: { path: required(input, 'filePath', name) } };
    case 'create_file':
    case 'replace_string_in_file':
    case 'insert_edit_into_file':
    case 'edit_notebook_file':
      return write([required(input, 'filePath', name)]);
    case 'multi_replace_string_in_file': {
      const list = Array.isArray(input.replacements) ? input.replacements : [];
      const paths = list.map((r) => text(object(r)?.filePath)).filter((p): p is string => p !== undefined);
      if (paths.length === 0) throw new HostInputError(`${name} without replacements[].filePath`);
      return write([...new Set(paths)]);
    }
    case 'apply_patch':
      return patchWrite(required(input, 'input', name));
    case 'create_directory':
      return write([required(input, 'dirPath', name)]);
    case 'fetch_webpage': {
      const urls = Array.isArray(input.urls) ? input.urls.filter((u): u is string => typeof u === 'string') : [];
      if (urls.length === 0) throw new HostInputError(`${name} without urls`);
      return fetch(urls);
    }
  }
  return claudeTool(name, input, 'vscode');
}

/** Cursor: the event says what the call is; `preToolUse` names its tool. */
function cursorTool(event: string, body: Json): Mapped & { name: string } {
  switch (event) {
    case 'beforeShellExecution':
      return { name: 'Shell', ...shellOrPatch(required(body, 'command', event), text(body.cwd)) };
    case 'beforeReadFile':
      return { name: 'Read', tool: READ_FILE, input: { path: required(body, 'file_path', event) } };
    case 'beforeMCPExecution': {
      const server = required(body, 'mcp_server_name', event);
      const tool = required(body, 'tool_name', event);
      // tool_input is a JSON string in Cursor's payload.
      let input: unknown = body.tool_input;
      if (typeof input === 'string') {
        try {
          input = JSON.parse(input);
        } catch {
          // Kept as the string: a rule's input pointers then match nothing.
        }
      }
      return { name: tool, tool: mcp(server, tool), input };
    }
  }
  const name = required(body, 'tool_name', event);
  const input = object(body.tool_input) ?? {};
  const file = text(input.file_path) ?? text(input.path) ?? text(input.target_file);
  if (name === 'Shell') return { name, ...shellOrPatch(required(input, 'command', name), text(body.cwd)) };
  if ((name === 'Write' || name === 'Delete') && file !== undefined) return { name, ...write([file]) };
  if (name === 'Read' && file !== undefined) return { name, tool: READ_FILE, input: { path: file } };
  if (name === 'Fetch' && text(input.url) !== undefined) return { name, ...fetch([text(input.url)!]) };
  const m = /^MCP:(.+)$/.exec(name);
  if (m) return { name, ...unknown('cursor', `MCP_${m[1]}`, input) };
  return { name, ...unknown('cursor', name, input) };
}

// ---------------------------------------------------------------------------------------------

/** The first of these that is a non-empty string. */
function firstText(...values: unknown[]): string | undefined {
  for (const v of values) if (typeof v === 'string' && v !== '') return v;
  return undefined;
}

/**
 * Reads one host's hook input. `env` is the hook's environment (hosts name the project folder
 * there); `cwd` is the hook's own working folder, the last resort for the workspace.
 */
export function readHostCall(host: HostAgent, stdin: string, env: NodeJS.ProcessEnv, cwd: string): HostToolCall {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdin);
  } catch (error) {
    throw new HostInputError(`the hook's input is not JSON (${(error as Error).message})`);
  }
  const body = object(parsed);
  if (!body) throw new HostInputError('the hook\'s input is not a JSON object');
  const folderOf = (...candidates: unknown[]): string => path.resolve(cwd, firstText(...candidates) ?? cwd);
  const hostCwd = folderOf(body.cwd);

  if (host === 'cursor') {
    const event = firstText(body.hook_event_name) ?? 'preToolUse';
    const roots = Array.isArray(body.workspace_roots) ? body.workspace_roots : [];
    const mapped = cursorTool(event, body);
    return {
      host, event, session: firstText(body.conversation_id, body.session_id) ?? '', folder: folderOf(roots[0], body.cwd), cwd: hostCwd,
      hostTool: mapped.name, call: { tool: mapped.tool, input: mapped.input, agent: host },
    };
  }

  // Copilot CLI's own payload is camelCase (`toolName`, `toolArgs` as an object or a JSON string).
  if (host === 'copilot' && typeof body.toolName === 'string') {
    let args: unknown = body.toolArgs;
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args);
      } catch {
        throw new HostInputError('toolArgs is not JSON');
      }
    }
    const mapped = copilotTool(body.toolName, object(args) ?? {});
    return {
      host, event: 'preToolUse', session: firstText(body.sessionId) ?? '', folder: folderOf(env.COPILOT_PROJECT_DIR, body.cwd),
      cwd: hostCwd, hostTool: body.toolName, hostInput: object(args) ?? {}, call: { ...mapped, agent: host }, camelCase: true,
    };
  }

  const toolName = firstText(body.tool_name);
  if (toolName === undefined) throw new HostInputError('the hook\'s input names no tool (tool_name)');
  const input = object(body.tool_input);
  if (!input) throw new HostInputError(`${toolName}: tool_input is not an object`);
  const event = firstText(body.hook_event_name, body.hookEventName) ?? 'PreToolUse';
  const session = firstText(body.session_id, body.sessionId) ?? '';
  const subagent = firstText(body.agent_type, body.agent_id);
  let mapped: Mapped;
  let folder: string;
  switch (host) {
    case 'claude':
      mapped = claudeTool(toolName, input, host, text(object(body.mcp_server)?.name));
      folder = folderOf(env.CLAUDE_PROJECT_DIR, body.cwd);
      break;
    case 'codex':
      mapped = codexTool(toolName, input);
      folder = folderOf(body.cwd);
      break;
    case 'gemini':
      mapped = geminiTool(toolName, input, object(body.mcp_context));
      folder = folderOf(env.GEMINI_PROJECT_DIR, body.cwd);
      break;
    case 'copilot':
      mapped = copilotTool(toolName, input);
      folder = folderOf(env.COPILOT_PROJECT_DIR, body.cwd);
      break;
    case 'vscode':
      mapped = vscodeTool(toolName, input);
      folder = folderOf(body.cwd);
      break;
  }
  return {
    host, event, session, folder, cwd: hostCwd, hostTool: toolName, hostInput: input,
    ...(subagent !== undefined ? { subagent } : {}),
    ...(typeof body.permission_mode === 'string' ? { permissionMode: body.permission_mode } : {}),
    call: { ...mapped, agent: subagent !== undefined ? `${host}:${subagent}` : host },
  };
}
