// A plain HTTP server on 127.0.0.1 (a free port) for tests that stand in for a remote API, and the
// JSON body of a request to it. Shared by the replayed chat-completions server (test/providers)
// and the scripted models the agent CLIs talk to (test/hosts).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startLoopbackServer(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<http.Server> {
  const server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export function loopbackPort(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}

/** Closes the server and every connection still open to it. */
export async function closeLoopbackServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The request's body parsed as JSON; `{}` when it is empty, undefined when it is not JSON. */
export async function readJsonBody(req: http.IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
