// How a resolved server config is reached: a child process over stdio (its environment built from
// envFile and env, its last stderr lines kept for error messages), streamable HTTP, or SSE; and
// which transport errors mean the server is not there.
import { readFile } from 'node:fs/promises';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { parseEnvFile, type McpHttpServerConfig, type McpStdioServerConfig } from './mcpConfig.js';

/** How many of a server's last stderr lines are kept to quote. */
const STDERR_LINES = 20;

/**
 * The transport that starts a stdio server in `cwd` (unless it has its own), and the array its
 * last stderr lines collect in; each line is also logged.
 */
export async function stdioTransport(
  server: McpStdioServerConfig, cwd: string, log: (line: string) => void,
): Promise<{ transport: StdioClientTransport; stderr: string[] }> {
  let env: Record<string, string> = {};
  if (server.envFile !== undefined) {
    try {
      env = parseEnvFile(await readFile(server.envFile, 'utf8'));
    } catch (error) {
      throw new Error(`MCP server ${server.name} cannot start: its envFile ${server.envFile} could not be read: ${(error as Error).message}`);
    }
  }
  for (const [key, value] of Object.entries(server.env)) {
    // undefined leaves the variable out of the child's environment, even one the SDK would pass on.
    if (value === null) (env as Record<string, string | undefined>)[key] = undefined;
    else env[key] = value;
  }
  const transport = new StdioClientTransport({
    command: server.command, args: server.args, env, cwd: server.cwd ?? cwd, stderr: 'pipe',
  });
  const stderr: string[] = [];
  let partial = '';
  transport.stderr?.on('data', (chunk: Buffer | string) => {
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
  return { transport, stderr };
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
