// A TCP server on 127.0.0.1 that answers every connection with the same bytes: what the sandbox
// tests try to reach with the network off and on. Closing it ends open connections too.
import * as net from 'node:net';

export interface ReplyServer {
  port: number;
  close(): Promise<void>;
}

export async function startReplyServer(reply: string): Promise<ReplyServer> {
  const connections = new Set<net.Socket>();
  const server = net.createServer((c) => {
    connections.add(c.on('close', () => connections.delete(c)));
    c.end(reply);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const c of connections) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
