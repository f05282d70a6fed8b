// The window's side of "asks answered in VS Code": a Unix socket in the user's private folder
// (editorDiscovery.ts) and the discovery file that names it. Each connection carries one ask of
// a host's hook (editorAskMessage.ts checks it); the ask becomes an open callback of that host's
// session in the SessionHost (externalSession.ts), answered by a person like any other, and the
// answer goes back on the connection. A hook that goes away closes its callback. Plain Node: the
// extension starts it with its core and disposes of it with the window.
import * as fs from 'node:fs';
import * as net from 'node:net';
import type { SessionHost } from '../../runtime/host/sessionHost.js';
import { readAskLine } from './editorAskMessage.js';
import { MAX_ASK_BYTES } from './editorBridge.js';
import {
  acceptedPolicyFile, bridgeDirectories, bridgeSupported, discoveryFile, ensurePrivateDirectory, newSocketPath, newToken, realFolder, removeDiscovery,
  sweepStale, writeDiscovery,
} from '../state/editorDiscovery.js';
import { HOSTS } from '../hosts/hostAgents.js';
import { writePrivateFile } from '../state/privateFile.js';

/** What the hook needs of the window besides the socket; read again by `refresh()`. */
export interface WindowFacts {
  auditFile: string;
  trusted: boolean;
  managedPolicyFile?: string;
  userPolicyFile?: string;
  /** The accepted workspace policy's text while a loosening change made outside the window is held. */
  heldAcceptedText?: string;
}

export interface EditorServerOptions {
  workspaceFolder: string;
  host: SessionHost;
  facts: () => WindowFacts;
  /** The private folder to use (tests); by default the first of `bridgeDirectories()`. */
  directory?: string;
}

/** Connections at once: parallel tool calls of a few hosts, with room to spare. */
const MAX_CONNECTIONS = 64;
/** A connection that sends no whole line in this time is dropped. */
const FIRST_LINE_MS = 10_000;

export class EditorServer {
  private readonly sockets = new Set<net.Socket>();
  private disposed = false;

  private constructor(
    private readonly server: net.Server,
    private readonly options: EditorServerOptions,
    private readonly directory: string,
    private readonly folder: string,
    /** The socket's path. */
    readonly socket: string,
    private readonly token: string,
    /** The discovery file's path. */
    readonly discoveryFile: string,
  ) {}

  /** Listens and writes the discovery file. Throws, saying why, where it cannot (Windows, an unsafe folder, a path too long). */
  static async start(options: EditorServerOptions): Promise<EditorServer> {
    if (!bridgeSupported()) throw new Error(`hooks cannot ask the editor on ${process.platform} (Linux and macOS only)`);
    const directory = options.directory ?? bridgeDirectories()[0]!;
    ensurePrivateDirectory(directory);
    const folder = realFolder(options.workspaceFolder);
    sweepStale(directory);
    const socket = newSocketPath(directory, folder);
    if (socket === undefined) throw new Error(`the socket path in ${directory} would be too long for the system`);
    const token = newToken();
    let self: EditorServer | undefined;
    const server = net.createServer((connection) => (self ? self.accept(connection) : connection.destroy()));
    server.maxConnections = MAX_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
    try {
      fs.chmodSync(socket, 0o600);
      self = new EditorServer(server, options, directory, folder, socket, token, discoveryFile(directory, folder));
      self.writeDiscovery();
      return self;
    } catch (error) {
      server.close();
      fs.rmSync(socket, { force: true });
      throw error;
    }
  }

  /** Writes the discovery file again with the window's facts as they are now (trust granted, a setting changed). */
  refresh(): void {
    if (!this.disposed) this.writeDiscovery();
  }

  private writeDiscovery(): void {
    const facts = this.options.facts();
    // The accepted text first: a discovery file never names one that is not there whole.
    const acceptedFile = acceptedPolicyFile(this.directory, this.folder, this.token);
    if (facts.heldAcceptedText !== undefined) writePrivateFile(acceptedFile, facts.heldAcceptedText);
    writeDiscovery(this.directory, {
      version: 1, workspaceFolder: this.folder, socket: this.socket, token: this.token, pid: process.pid,
      auditFile: facts.auditFile, trusted: facts.trusted,
      ...(facts.managedPolicyFile !== undefined ? { managedPolicyFile: facts.managedPolicyFile } : {}),
      ...(facts.userPolicyFile !== undefined ? { userPolicyFile: facts.userPolicyFile } : {}),
      ...(facts.heldAcceptedText !== undefined ? { held: { acceptedFile } } : {}),
    });
    if (facts.heldAcceptedText === undefined) fs.rmSync(acceptedFile, { force: true });
  }

  private accept(connection: net.Socket): void {
    if (this.disposed) return void connection.destroy();
    this.sockets.add(connection);
    const chunks: Buffer[] = [];
    let length = 0;
    let asked = false;
    const idle = setTimeout(() => connection.destroy(), FIRST_LINE_MS);
    idle.unref();
    connection.on('data', (chunk: Buffer) => {
      // One ask per connection: what comes after its line is ignored.
      if (asked) return;
      const end = chunk.indexOf(0x0a);
      chunks.push(end >= 0 ? chunk.subarray(0, end) : chunk);
      length += end >= 0 ? end + 1 : chunk.length;
      if (length > MAX_ASK_BYTES) {
        asked = true;
        clearTimeout(idle);
        return refuse(connection, `too large: an ask is at most ${MAX_ASK_BYTES} bytes`);
      }
      if (end < 0) return;
      asked = true;
      clearTimeout(idle);
      this.ask(connection, Buffer.concat(chunks).toString('utf8'));
    });
    connection.on('error', () => undefined);
    connection.on('close', () => {
      clearTimeout(idle);
      this.sockets.delete(connection);
    });
  }

  private ask(connection: net.Socket, line: string): void {
    const read = readAskLine(line, this.token);
    if ('refused' in read) return refuse(connection, read.refused);
    const { ask } = read;
    const session = this.options.host.externalSession({ host: ask.host, hostLabel: HOSTS[ask.host].label, hostSession: ask.hostSession });
    let pending: ReturnType<typeof session.ask>;
    try {
      pending = session.ask(ask);
    } catch (error) {
      // The audit log could not record the ask: it is not put to anyone.
      return refuse(connection, `the editor could not open the ask (${error instanceof Error ? error.message : String(error)})`);
    }
    const { callbackId } = pending;
    if (callbackId !== undefined) {
      connection.on('close', () => session.close(callbackId, 'the hook went away before an answer (its deadline passed, or its host stopped it)'));
    }
    void pending.answer.then((answer) => {
      if (answer === undefined) connection.end(`${JSON.stringify({ error: 'closed: the ask was closed without an answer' })}\n`);
      else connection.end(`${JSON.stringify(answer)}\n`);
    });
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    try {
      removeDiscovery(this.discoveryFile, this.token);
    } catch {
      // Already gone: nothing names this window.
    }
    // Each open connection's callback closes with it.
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    fs.rmSync(this.socket, { force: true });
    fs.rmSync(acceptedPolicyFile(this.directory, this.folder, this.token), { force: true });
  }
}

function refuse(connection: net.Socket, reason: string): void {
  connection.end(`${JSON.stringify({ error: reason })}\n`);
}
