// A chat-completions server on 127.0.0.1 that replays recorded streams (test/fixtures/chat-streams)
// and canned errors, one reply per request, and records what each request sent.
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import { closeLoopbackServer, loopbackPort, startLoopbackServer } from '../loopbackHttp';

export const STREAMS = path.join(__dirname, '..', 'fixtures', 'chat-streams');

export type Reply =
  /** A fixture's events, one write each; `stallAfter` events then silence (the connection stays open); `cutAfter` events then a dropped socket. */
  | { stream: string; stallAfter?: number; cutAfter?: number }
  /** A status with a JSON body (an API error). */
  | { status: number; headers?: Record<string, string>; json?: unknown }
  /** No response at all: the connection stays open. */
  | { hang: true };

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** Resolves when the client closed the connection or the response ended. */
  closed: Promise<void>;
  /** True when the client closed the connection before the response ended. */
  closedEarly: boolean;
}

export class ReplayServer {
  readonly requests: RecordedRequest[] = [];
  private stallWaiters: (() => void)[] = [];
  private stalls = 0;

  private constructor(
    private readonly server: http.Server,
    private readonly replies: readonly Reply[],
  ) {}

  /** Reply i answers request i; requests beyond the list get the last reply. */
  static async start(replies: readonly Reply[]): Promise<ReplayServer> {
    let self: ReplayServer | undefined;
    const server = await startLoopbackServer((req, res) => self!.handle(req, res));
    self = new ReplayServer(server, replies);
    return self;
  }

  get baseURL(): string {
    return `http://127.0.0.1:${loopbackPort(this.server)}/v1`;
  }

  /** Resolves once a `stallAfter` reply has sent its events and fallen silent. */
  stalled(): Promise<void> {
    if (this.stalls > 0) return Promise.resolve();
    return new Promise((resolve) => this.stallWaiters.push(resolve));
  }

  close(): Promise<void> {
    return closeLoopbackServer(this.server);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let ended = false;
      let markClosed!: () => void;
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
        closed: new Promise((resolve) => (markClosed = resolve)),
        closedEarly: false,
      };
      res.on('finish', () => (ended = true));
      res.on('close', () => {
        if (!ended) recorded.closedEarly = true;
        markClosed();
      });
      const reply = this.replies[Math.min(this.requests.length, this.replies.length - 1)]!;
      this.requests.push(recorded);
      void this.reply(reply, res);
    });
  }

  private async reply(reply: Reply, res: http.ServerResponse): Promise<void> {
    if ('hang' in reply) return;
    if ('status' in reply) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.json === undefined ? '' : JSON.stringify(reply.json));
      return;
    }
    const events = fs.readFileSync(path.join(STREAMS, reply.stream), 'utf8').split(/\n\n/).filter((e) => e.trim() !== '');
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const [i, event] of events.entries()) {
      if (i === reply.stallAfter) {
        this.stalls++;
        for (const w of this.stallWaiters.splice(0)) w();
        return;
      }
      if (i === reply.cutAfter) {
        res.socket?.destroy();
        return;
      }
      if (res.destroyed) return;
      res.write(`${event}\n\n`);
      // A turn of the event loop between events, so that they arrive as separate reads.
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  }
}
