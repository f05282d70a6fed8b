// The decision service's files in the user's state folder (docs/hooks.md, "The decision
// service"): the folder itself (0700), the user's secret, the token of Claude Code's http hook,
// the port the service keeps, and the discovery file that says where it listens. Every file is
// this user's alone (0600); one others could read is worth nothing and is made again.
import { randomBytes, randomInt } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { ownProcessAlive } from '../../runtime/sandbox/processState.js';
import { privateDirectoryProblem } from './editorDiscovery.js';
import { writePrivateFile } from './privateFile.js';

/** The names of the service's files in the state folder. */
export const SERVICE_SOCKET = 'service.sock';
export const SERVICE_SECRET = 'service-secret';
export const SERVICE_DISCOVERY = 'service.json';
/** The token Claude Code's http hook sends (it is written in the host's settings, so it is not the secret: it opens `/http/` only). */
export const HTTP_HOOK_TOKEN = 'http-hook-token';
/** The port on 127.0.0.1 the service keeps, so an http hook's URL stays right across restarts. */
export const SERVICE_PORT = 'service-port';

/** Where a kept port is picked: below Linux's ephemeral range (32768+), so no outgoing connection holds it. */
const PORT_RANGE = [20_000, 32_000] as const;

function uid(): number {
  return process.getuid?.() ?? -1;
}

/** Makes the state folder (0700), narrows one of this user's that others could open, and checks it; throws saying why it cannot be used. */
export function ensureStateFolder(stateDir: string): void {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(stateDir);
  if (st.isDirectory() && !st.isSymbolicLink() && st.uid === uid() && (st.mode & 0o077) !== 0) fs.chmodSync(stateDir, 0o700);
  const problem = privateDirectoryProblem(stateDir);
  if (problem !== undefined) throw new Error(`${problem}; the decision service will not use it`);
}

const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

/** The token in the file, when it is this user's alone; one others could read (or a damaged one) is removed: it is worth nothing. */
function readToken(file: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (!st.isFile()) throw new Error(`${file} is not a file; the decision service will not use it`);
  if (st.uid !== uid()) throw new Error(`${file} belongs to another user (uid ${st.uid}); the decision service will not use it`);
  const text = (st.mode & 0o077) === 0 && st.size < 1024 ? fs.readFileSync(file, 'utf8').trim() : '';
  if (TOKEN_PATTERN.test(text)) return text;
  fs.rmSync(file, { force: true });
  return undefined;
}

/**
 * A token of 32 random bytes in hex in `<stateDir>/<name>` (0600), made once. Two processes making
 * it at once agree: the file appears whole and only once (a link, which fails when it exists),
 * and the loser reads the winner's.
 */
function privateToken(stateDir: string, name: string): string {
  ensureStateFolder(stateDir);
  const file = path.join(stateDir, name);
  for (let attempt = 0; attempt < 5; attempt++) {
    const existing = readToken(file);
    if (existing !== undefined) return existing;
    const token = randomBytes(32).toString('hex');
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      fs.writeFileSync(temp, `${token}\n`, { mode: 0o600, flag: 'wx' });
      fs.linkSync(temp, file);
      return token;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(temp, { force: true });
    }
  }
  throw new Error(`${file} could not be made`);
}

/** The user's secret: every request to the service carries it (the hook client reads it from the file). */
export function serviceSecret(stateDir: string): string {
  return privateToken(stateDir, SERVICE_SECRET);
}

/** The token of Claude Code's http hook, written into `.claude/settings.local.json`: it opens `POST /http/<agent>` only. */
export function httpHookToken(stateDir: string): string {
  return privateToken(stateDir, HTTP_HOOK_TOKEN);
}

/** The http hook's token when it was made (nothing is made: for a dry run). */
export function readHttpHookToken(stateDir: string): string | undefined {
  try {
    return readToken(path.join(stateDir, HTTP_HOOK_TOKEN));
  } catch {
    return undefined;
  }
}

/** The port the service keeps, when one was picked (a private file holding a port number). */
export function readServicePort(stateDir: string): number | undefined {
  const file = path.join(stateDir, SERVICE_PORT);
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.uid !== uid() || (st.mode & 0o077) !== 0 || st.size > 16) return undefined;
    const text = fs.readFileSync(file, 'utf8').trim();
    const port = Number(text);
    return /^\d+$/.test(text) && port >= 1 && port <= 65535 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** Whether 127.0.0.1:port can be listened on now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * The port the service keeps: the one picked before, else a free one picked now (at random in
 * 20000-31999) and written down. An http hook names it in its URL, so it must not move.
 */
export async function ensureServicePort(stateDir: string): Promise<number> {
  ensureStateFolder(stateDir);
  const kept = readServicePort(stateDir);
  if (kept !== undefined) return kept;
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = randomInt(PORT_RANGE[0], PORT_RANGE[1]);
    if (!(await portFree(port))) continue;
    writePrivateFile(path.join(stateDir, SERVICE_PORT), `${port}\n`);
    return port;
  }
  throw new Error(`no free port on 127.0.0.1 in ${PORT_RANGE[0]}-${PORT_RANGE[1] - 1} for the decision service`);
}

/** What the discovery file says: where the service listens, and which process it is. */
export interface ServiceDiscovery {
  version: 1;
  pid: number;
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** The Unix socket's path (absent where there is none: Windows). */
  socket?: string;
  started: string;
}

export function discoveryFileOf(stateDir: string): string {
  return path.join(stateDir, SERVICE_DISCOVERY);
}

/** The discovery file's content, when it is a private file of this user in the right shape. */
export function readServiceDiscovery(stateDir: string): ServiceDiscovery | undefined {
  const file = discoveryFileOf(stateDir);
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.uid !== uid() || (st.mode & 0o077) !== 0 || st.size > 16 * 1024) return undefined;
    const d = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ServiceDiscovery> | null;
    if (d === null || typeof d !== 'object' || d.version !== 1 || !Number.isInteger(d.pid) || typeof d.url !== 'string' || !/^http:\/\/127\.0\.0\.1:\d+$/.test(d.url)) return undefined;
    if (d.socket !== undefined && (typeof d.socket !== 'string' || !path.isAbsolute(d.socket))) return undefined;
    if (typeof d.started !== 'string') return undefined;
    return d as ServiceDiscovery;
  } catch {
    return undefined;
  }
}

/** Whether something answers on this Unix socket. */
export function socketAnswers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const connection = net.connect(socket);
    connection.once('connect', () => {
      connection.destroy();
      resolve(true);
    });
    connection.once('error', () => resolve(false));
  });
}

/** The pid of this user's service when it answers now (its discovery file, its process alive, its socket answering). */
export async function serviceRuns(stateDir: string): Promise<number | undefined> {
  const found = readServiceDiscovery(stateDir);
  if (found === undefined || !ownProcessAlive(found.pid)) return undefined;
  if (found.socket !== undefined && !(await socketAnswers(found.socket))) return undefined;
  return found.pid;
}
