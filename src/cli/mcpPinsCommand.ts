// `agentpolicy mcp pins [--workspace DIR] [--json]` lists the MCP tool definitions pinned for a
// workspace; `agentpolicy mcp pins reset [SERVER[/TOOL]] [--workspace DIR]` forgets them (docs/mcp.md,
// "MCP tools pinned"): a server reset pins its tools afresh at its next start, a tool its next
// definition. Exit codes: 0 success, 1 nothing to reset, 2 usage.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultStateDir } from '../hooks/state/stateDir.js';
import { McpToolPins } from '../mcp/mcpToolPins.js';

export interface McpPinsIo {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
  /** The environment: XDG_STATE_HOME (default: the process's). */
  env?: NodeJS.ProcessEnv;
}

export const MCP_PINS_USAGE = `  agentpolicy mcp pins [--workspace DIR] [--json]
  agentpolicy mcp pins reset [SERVER[/TOOL]] [--workspace DIR]`;

/** `argv`: the arguments after `mcp`. `stateDir`: for tests. */
export function mcpCommand(argv: readonly string[], io: McpPinsIo, stateDir?: string): number {
  const [what, ...rest] = argv;
  if (what !== 'pins') return usage(io, what === undefined ? 'mcp: name a subcommand (pins)' : `mcp ${what}: unknown subcommand`);
  let values: { workspace?: string; json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...rest], strict: true, allowPositionals: true,
      options: { workspace: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    return usage(io, (error as Error).message);
  }
  if (values.help === true) {
    io.out(`usage:\n${MCP_PINS_USAGE}`);
    return 0;
  }
  const workspace = path.resolve(io.cwd, values.workspace ?? '.');
  if (!isFolder(workspace)) return usage(io, `--workspace ${values.workspace ?? '.'}: no such folder`);
  const pins = new McpToolPins(workspace, { stateDir: stateDir ?? defaultStateDir(io.env ?? process.env) });
  const [action, target, ...extra] = positionals;
  if (action === undefined) return list(pins, values.json === true, io);
  if (action !== 'reset' || extra.length > 0) return usage(io, `mcp pins ${positionals.join(' ')}: unknown arguments`);
  const [server, tool] = target === undefined ? [undefined, undefined] : splitTarget(target);
  const forgotten = pins.reset(server, tool);
  const named = target === undefined ? 'every server' : tool === undefined ? `the server ${server}` : `${server}/${tool}`;
  if (forgotten === 0) {
    io.err(`agentpolicy: no pins of ${named} for ${workspace}`);
    return 1;
  }
  io.out(`forgot ${forgotten} pinned tool definition(s) of ${named}; ${tool === undefined ? 'the server pins its tools again at its next start' : 'the tool is pinned again at its next listing'}`);
  return 0;
}

function list(pins: McpToolPins, json: boolean, io: McpPinsIo): number {
  const listed = pins.list();
  if (json) {
    io.out(JSON.stringify({ workspace: pins.workspaceFolder, file: pins.file, pins: listed }, null, 2));
    return 0;
  }
  if (listed.length === 0) {
    io.out(`no MCP tool definitions are pinned for ${pins.workspaceFolder}`);
    return 0;
  }
  io.out(`MCP tool definitions pinned for ${pins.workspaceFolder} (${pins.file}):`);
  for (const p of listed) io.out(`  mcp.${p.server}.${p.tool}  ${p.digest.slice(0, 'sha256:'.length + 12)}  ${p.accepted ? 'change accepted' : 'pinned'} ${p.pinnedAt}`);
  return 0;
}

/** `server/tool`: the first `/` splits (tool names may hold `/`, server names do not). */
function splitTarget(target: string): [string, string | undefined] {
  const slash = target.indexOf('/');
  return slash === -1 ? [target, undefined] : [target.slice(0, slash), target.slice(slash + 1)];
}

function isFolder(folder: string): boolean {
  try {
    return fs.statSync(folder).isDirectory();
  } catch {
    return false;
  }
}

function usage(io: McpPinsIo, message: string): number {
  io.err(`agentpolicy: ${message}`);
  io.err(`usage:\n${MCP_PINS_USAGE}`);
  return 2;
}
