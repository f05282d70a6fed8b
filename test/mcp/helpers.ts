// Shared by the MCP tests: where the real servers are, temporary folders, and checks that no
// server process is left behind.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { McpServerConfig } from '../../src/mcp/mcpConfig.js';
import type { McpConnection } from '../../src/mcp/mcpConnection.js';
import type { McpToolSource } from '../../src/mcp/mcpToolSource.js';
import type { RuntimeTool, ToolRunContext } from '../../src/runtime/tools/tools.js';

const ROOT = path.resolve(__dirname, '..', '..');
export const FILESYSTEM_SERVER = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
export const EVERYTHING_SERVER = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FIXTURES = path.join(__dirname, 'fixtures');

/** tsx's loader by its URL: a server runs in a temporary folder, where `tsx` alone would not resolve. */
const TSX = pathToFileURL(path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/** A stdio server run by this Node (tsx loaded, so fixtures may be TypeScript). */
export function nodeServer(name: string, script: string, args: string[] = []): McpServerConfig {
  const loader = script.endsWith('.ts') ? ['--import', TSX] : [];
  return { name, type: 'stdio', command: process.execPath, args: [...loader, script, ...args], env: {} };
}

export function tempDir(prefix: string): string {
  // realpath: macOS's /var is a link, and the filesystem server compares resolved paths.
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Processes whose command line contains `marker` (Linux's /proc; elsewhere none are found). */
export function processesWith(marker: string): number[] {
  if (!fs.existsSync('/proc/self/cmdline')) return [];
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Closes every connection the sources opened and checks their processes are gone. */
export async function closeAll(sources: readonly McpToolSource[], pids: readonly number[] = []): Promise<void> {
  for (const source of sources) {
    for (const connection of source.connections) {
      if (connection.pid !== undefined) (pids as number[]).push(connection.pid);
    }
    await source.closeAll();
  }
  for (const pid of pids) await waitFor(`process ${pid} to end`, () => !isAlive(pid), 8000);
}

export function context(workspaceFolder: string, extra: Partial<ToolRunContext> = {}): ToolRunContext {
  return { sessionId: 's1', turnId: 't1', agent: 'main', workspaceFolder, signal: new AbortController().signal, ...extra };
}

export function byId(tools: readonly RuntimeTool[], id: string): RuntimeTool {
  const found = tools.find((t) => t.id === id);
  assert.ok(found, `no tool ${id} among ${tools.map((t) => t.id).join(', ')}`);
  return found;
}

/** As the runtime does: check the input, then run. */
export async function call(tool: RuntimeTool, input: unknown, ctx: ToolRunContext): Promise<unknown> {
  const checked = tool.check(input);
  if (!checked.ok) throw new Error(checked.error);
  return await tool.run(checked.value, ctx);
}

export function pidOf(connection: McpConnection): number {
  const pid = connection.pid;
  assert.ok(pid !== undefined, 'the server is not running');
  return pid;
}
