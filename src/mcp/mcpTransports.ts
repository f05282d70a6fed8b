// How a resolved server config is reached: a child process over stdio (its environment built from
// envFile and env, its last stderr lines kept for error messages), in the sandbox when the policy
// says so (mcpSandboxTransport.ts), streamable HTTP, or SSE; and
// which transport errors mean the server is not there.
import { readFile } from 'node:fs/promises';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Readable } from 'node:stream';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { commandEnvironment, type SandboxLaunch } from '../runtime/sandbox/commandProcess.js';
import { withoutCredentials } from '../runtime/sandbox/sandboxEnvironment.js';
import { parseEnvFile, type McpHttpServerConfig, type McpStdioServerConfig } from './mcpConfig.js';
import { SandboxedStdioTransport } from './mcpSandboxTransport.js';

/** How many of a server's last stderr lines are kept to quote. */
const STDERR_LINES = 20;

/**
 * The variables a stdio server's config sets: its envFile's, then its `env` (a null value
 * leaves the variable out of the child's environment: undefined here, even one the SDK would pass on).
 */
async function configEnvironment(server: McpStdioServerConfig): Promise<Record<string, string | undefined>> {
  let env: Record<string, string | undefined> = {};
  if (server.envFile !== undefined) {
    try {
      env = parseEnvFile(await readFile(server.envFile, 'utf8'));
    } catch (error) {
      throw new Error(`MCP server ${server.name} cannot start: its envFile ${server.envFile} could not be read: ${(error as Error).message}`);
    }
  }
  for (const [key, value] of Object.entries(server.env)) env[key] = value === null ? undefined : value;
  return env;
}

/** Keeps a server's last stderr lines (and logs each). */
function collectStderr(stream: Readable | null | undefined, log: (line: string) => void): string[] {
  const stderr: string[] = [];
  let partial = '';
  stream?.on('data', (chunk: Buffer | string) => {
    const lines = (partial + chunk.toString()).split(/\r?\n/);
    partial = lines.pop() ?? '';
    if (partial.length > 2000) partial = partial.slice(-2000);
    for (const line of lines) {
      if (line.trim() === '') continue;
      stderr.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
      if (stderr.length > STDERR_LINES) stderr.shift();
      log(`stderr: ${line}`);
    }
  });
  return stderr;
}

/**
 * The transport that starts a stdio server in `cwd` (unless it has its own), and the array its
 * last stderr lines collect in; each line is also logged.
 */
export async function stdioTransport(
  server: McpStdioServerConfig, cwd: string, log: (line: string) => void,
): Promise<{ transport: StdioClientTransport; stderr: string[] }> {
  const env = await configEnvironment(server);
  const transport = new StdioClientTransport({
    command: server.command, args: server.args, env: env as Record<string, string>, cwd: server.cwd ?? cwd, stderr: 'pipe',
  });
  return { transport, stderr: collectStderr(transport.stderr as Readable | null, log) };
}

/**
 * The transport that starts a stdio server inside the sandbox (`launch`, sandboxLaunch.ts; docs/mcp.md,
 * "Sandboxed servers"). Its environment is what an unsandboxed server gets (the SDK's short list of
 * inherited variables) less the credential variables (sandboxEnvironment.ts; those the launch
 * passes by name stay), plus its config's envFile and `env`, which a person wrote for this server,
 * so they pass; the sandbox's own proxy variables win over the config's (bubblewrap sets them).
 */
export async function sandboxedStdioTransport(
  server: McpStdioServerConfig, cwd: string, launch: SandboxLaunch, log: (line: string) => void, onEnded: () => void,
): Promise<{ transport: SandboxedStdioTransport; stderr: string[] }> {
  const env: NodeJS.ProcessEnv = { ...withoutCredentials(commandEnvironment(getDefaultEnvironment()), launch.passEnv) };
  for (const [key, value] of Object.entries(await configEnvironment(server))) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  const transport = new SandboxedStdioTransport({ launch, command: server.command, args: server.args, env, cwd: server.cwd ?? cwd, onEnded });
  return { transport, stderr: collectStderr(transport.stderr, log) };
}

export function streamableHttpTransport(server: McpHttpServerConfig): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
}

export function sseTransport(server: McpHttpServerConfig): SSEClientTransport {
  return new SSEClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
}

/**
 * The status a server answered the streamable POST with when that means an older SSE server (the
 * spec's backwards compatibility: a 4xx other than 401 and 403); `undefined` otherwise.
 */
export function olderSseServerStatus(error: unknown): number | undefined {
  const original = error instanceof Error && error.cause !== undefined ? error.cause : error;
  const code = (original as { code?: unknown }).code;
  if (original instanceof StreamableHTTPError && typeof code === 'number' && code >= 400 && code < 500 && code !== 401 && code !== 403) return code;
  return undefined;
}

/** A remote server that is not there (refused, reset, gone), or a session it no longer knows (404). */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof StreamableHTTPError && error.code === 404) return true;
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return true;
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = cause?.code ?? (error as { code?: unknown } | undefined)?.code;
  return error instanceof TypeError || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(String(code));
}
