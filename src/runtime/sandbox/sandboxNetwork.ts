// The network of a sandboxed command, per connection (policy-format.md, "Sandboxed commands";
// docs/network.md). The command has no network of its own (bubblewrap's --unshare-net): inside
// it, socat listens on the loopback's proxy ports and relays to two Unix sockets bound in from
// here, one for HTTP (plain requests and CONNECT tunnels) and one for SOCKS5. Each command gets
// sockets and proxy servers of its own, so every connection is known to be that command's: no
// name or token the command could present is trusted for it. The proxy servers, the parsing of
// what a client sends, and the refusal of names that resolve to loopback, link-local, metadata
// or this machine's own addresses are @anthropic-ai/sandbox-runtime's (the engine under Claude
// Code's sandbox); what each connection may reach is our policy's, asked of `judge`.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHttpProxyServer, markHandedInConnection } from '@anthropic-ai/sandbox-runtime/dist/sandbox/http-proxy.js';
import { createSocksProxyServer } from '@anthropic-ai/sandbox-runtime/dist/sandbox/socks-proxy.js';
import { createResolvedAddressGuard } from '@anthropic-ai/sandbox-runtime/dist/sandbox/resolved-address-guard.js';
import { capabilityArgs, processHasBoundingCapability } from '@anthropic-ai/sandbox-runtime/dist/sandbox/linux-sandbox-utils.js';
import type { ConnectionTarget } from '../../policy/rules/connection.js';
import { processAlive } from './processState.js';
import type { SecretProxyOptions } from './sandboxSecrets.js';

/** Where the proxy sockets appear inside the sandbox: its private /tmp, so no other process sees them. */
export const SANDBOX_PROXY_DIR = '/tmp/.agentpolicy-proxy';
/**
 * Where the seccomp helper appears inside the sandbox: its own path may be hidden there (an
 * extension installed under /tmp is behind the sandbox's private /tmp), so it is bound in.
 */
const SANDBOX_HELPER = '/tmp/.agentpolicy-helper/apply-seccomp';
/** The loopback port socat listens on inside the sandbox, for HTTP and SOCKS5 alike (HTTP's usual proxy port). */
export const HTTP_PROXY_PORT = 3128;

/** What the policy (or a person) says about one connection. */
export type ConnectionAnswer = { allow: true } | { allow: false; reason: string };

/** Decides one connection of this command. Called once per connection; never throws (a throw refuses). */
export type ConnectionJudge = (target: ConnectionTarget) => Promise<ConnectionAnswer>;

/** One command's proxy: its socket, in a folder only this user can enter. */
export interface CommandProxy {
  /** The folder holding `proxy.sock`, HTTP and SOCKS5 on one socket (bind it at SANDBOX_PROXY_DIR). */
  readonly dir: string;
  /** Stops listening, ends every connection still open, removes the folder. */
  close(): Promise<void>;
}

/**
 * One command's proxy on two TCP ports of 127.0.0.1 (`listen: 'tcp'`): for macOS's Seatbelt and
 * Windows, whose sandboxes reach the host only on loopback ports (sandboxPlatforms.ts). Unlike the
 * sockets of a private folder, a loopback port can be reached by any local process of any user.
 */
export interface TcpCommandProxy {
  readonly httpPort: number;
  readonly socksPort: number;
  /** Stops listening and ends every connection still open. */
  close(): Promise<void>;
}

export interface CommandProxyOptions {
  judge: ConnectionJudge;
  /** Hosts the policy names exactly: only these may resolve to loopback, link-local or this machine. */
  namedHosts: readonly string[];
  /** Told each connection's answer (for the audit and the transcript). */
  onConnection?(target: ConnectionTarget, answer: ConnectionAnswer): void;
  /**
   * Where the proxy listens: `unix` (the default, Linux), one socket in a private folder that
   * takes HTTP and SOCKS5 alike (one relay in the sandbox, not two); `tcp`, two ephemeral ports
   * of 127.0.0.1 (macOS and Windows).
   */
  listen?: 'unix' | 'tcp';
  /**
   * Masked secrets (sandboxSecrets.ts): TLS terminated for the hosts named for them and their
   * stand-ins made real in the requests to those hosts. Which connections are allowed is still
   * `judge`'s alone.
   */
  secrets?: SecretProxyOptions;
}

/** Starts the proxy for one command. */
export async function startCommandProxy(options: CommandProxyOptions & { listen?: 'unix' }): Promise<CommandProxy>;
export async function startCommandProxy(options: CommandProxyOptions & { listen: 'tcp' }): Promise<TcpCommandProxy>;
export async function startCommandProxy(options: CommandProxyOptions): Promise<CommandProxy | TcpCommandProxy> {
  const tcp = options.listen === 'tcp';
  if (!tcp) sweepStaleProxyDirs();
  const dir = tcp ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), `${PROXY_DIR_PREFIX}${process.pid}-`));
  if (dir !== undefined) fs.chmodSync(dir, 0o700);
  const guard = createResolvedAddressGuard({ allowedDomains: options.namedHosts });
  const decide = async (port: number, host: string, explain?: (reason: string) => void): Promise<boolean> => {
    let answer: ConnectionAnswer;
    try {
      answer = await options.judge({ host, port });
    } catch (error) {
      answer = { allow: false, reason: `the connection could not be judged: ${error instanceof Error ? error.message : String(error)}` };
    }
    options.onConnection?.({ host, port }, answer);
    if (!answer.allow) explain?.(answer.reason);
    return answer.allow;
  };
  const http = createHttpProxyServer({
    ...options.secrets,
    filter: (port, host, _socket, _encoded, explain) => decide(port, host, explain),
    lookupFor: (port) => guard.lookupFor(port),
  });
  const socks = createSocksProxyServer({
    filter: (port, host) => decide(port, host),
    lookupFor: (port) => guard.lookupFor(port),
  });
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const httpListener = net.createServer((socket) => {
    track(socket);
    markHandedInConnection(socket);
    http.emit('connection', socket);
  });
  const socksListener = net.createServer((socket) => {
    track(socket);
    socks.handleConnection(socket);
  });
  /** Linux's one socket for both (below). */
  let front: net.Server | undefined;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      front?.close();
      httpListener.close();
      socksListener.close();
      for (const socket of sockets) socket.destroy();
      await socks.close().catch(() => undefined);
      http.close();
      if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    })());
  if (dir === undefined) {
    try {
      await Promise.all([listenTcp(httpListener), listenTcp(socksListener)]);
    } catch (error) {
      await close();
      throw error;
    }
    return { httpPort: portOf(httpListener), socksPort: portOf(socksListener), close };
  }
  // One socket for both: SOCKS clients open with the version byte (4 or 5), HTTP with a method's letter.
  front = net.createServer((socket) => {
    socket.once('readable', () => {
      const first = socket.read(1) as Buffer | null;
      if (first === null) {
        socket.destroy();
        return;
      }
      socket.unshift(first);
      (first[0] === 0x04 || first[0] === 0x05 ? socksListener : httpListener).emit('connection', socket);
    });
    socket.on('error', () => socket.destroy());
  });
  try {
    await listen(front, path.join(dir, 'proxy.sock'));
  } catch (error) {
    await close();
    throw error;
  }
  return { dir, close };
}

/** Listens on an ephemeral port of 127.0.0.1 only (never every address: the proxy is this machine's alone). */
function listenTcp(server: net.Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function portOf(server: net.Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP port');
  return address.port;
}

const PROXY_DIR_PREFIX = 'agentpolicy-net-';
let swept = false;

/** Once per process: removes the socket folders of processes that died without closing their proxies (killed outright). */
function sweepStaleProxyDirs(): void {
  if (swept) return;
  swept = true;
  let names: string[];
  try {
    names = fs.readdirSync(os.tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^agentpolicy-net-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || processAlive(pid)) continue;
    try {
      const dir = path.join(os.tmpdir(), name);
      // Only our own folders: a name is no proof of who made it.
      if (fs.lstatSync(dir).uid !== process.getuid?.()) continue;
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // another process swept it
    }
  }
}


function listen(server: net.Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Inside the sandbox: socat relays the loopback's proxy ports to the command's two sockets, then
// the command runs under the engine's apply-seccomp (no new Unix-domain or VM sockets: a socket
// file reachable through a read-only mount would lead to a daemon outside the sandbox). socat
// itself needs Unix sockets, which is why the filter is not bubblewrap's for the whole sandbox.

/** The programs the bridge needs; undefined members are missing (then a command gets no network: bridgeTools says why). */
export interface BridgeTools {
  socat: string | undefined;
  applySeccomp: string | undefined;
}

const SOCAT_PATHS = ['/usr/bin/socat', '/bin/socat', '/usr/local/bin/socat'];

/** The engine's seccomp helper for this machine's ABI: beside the bundle (dist/vendor), else in node_modules. */
function findApplySeccomp(): string | undefined {
  const arch = process.arch === 'x64' ? 'x64' : process.arch === 'arm64' ? 'arm64' : undefined;
  if (arch === undefined) return undefined;
  const candidates = [path.join(__dirname, 'vendor', 'seccomp', arch, 'apply-seccomp')];
  try {
    const pkg = require.resolve('@anthropic-ai/sandbox-runtime/package.json');
    candidates.push(path.join(path.dirname(pkg), 'vendor', 'seccomp', arch, 'apply-seccomp'));
  } catch {
    // Bundled without node_modules: only the copy beside the bundle.
  }
  return candidates.find((file) => {
    try {
      if (!fs.statSync(file).isFile()) return false;
      // A VSIX is a zip: the mode may be lost on the way; the extension's own copy may be made executable again.
      fs.accessSync(file, fs.constants.X_OK);
      return true;
    } catch {
      try {
        fs.chmodSync(file, 0o755);
        fs.accessSync(file, fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    }
  });
}

let tools: BridgeTools | undefined;

/** Looked for once per process. */
export function bridgeTools(locate: (name: string, usual: readonly string[]) => string | undefined): BridgeTools {
  return (tools ??= { socat: locate('socat', SOCAT_PATHS), applySeccomp: findApplySeccomp() });
}

/** Why commands cannot reach judged hosts here (a sentence with what to install), or undefined. */
export function bridgeMissing(found: BridgeTools): string | undefined {
  if (found.socat === undefined) return 'socat is not installed, so sandboxed commands have no network (Debian, Ubuntu: apt-get install socat; Fedora: dnf install socat)';
  if (found.applySeccomp === undefined) return `the sandbox engine's seccomp helper is missing for ${process.arch}, so sandboxed commands have no network`;
  return undefined;
}

/** CAP_SETFCAP in bubblewrap's capability set (from 31), which a root caller's helper needs. */
const CAP_SETFCAP = 31;

/**
 * The capabilities the helper needs, as the engine works them out: run by root, apply-seccomp
 * maps uid 0 in a nested user namespace, which Linux allows only with CAP_SETFCAP (the engine's
 * filter there refuses every call that changes a mount tree, so no read-only bind can be undone).
 * Added after isolationArgs' `--cap-drop ALL`.
 */
function helperCapabilities(): string[] {
  const euid = typeof process.geteuid === 'function' ? process.geteuid() : undefined;
  const args = capabilityArgs({ euid, hasSetfcap: processHasBoundingCapability(CAP_SETFCAP), usesSeccompHelper: true });
  return args.filter((a, i) => !(a === '--cap-drop' || args[i - 1] === '--cap-drop'));
}

/** The environment that sends a command's traffic to the proxy (each name in both cases: tools read either). */
function proxyEnvironment(): string[] {
  const http = `http://127.0.0.1:${HTTP_PROXY_PORT}`;
  const vars: Array<[string, string]> = [
    ['HTTP_PROXY', http], ['HTTPS_PROXY', http],
    // The same port: the proxy tells SOCKS from HTTP by the first byte.
    ['ALL_PROXY', `socks5h://127.0.0.1:${HTTP_PROXY_PORT}`], ['NO_PROXY', 'localhost,127.0.0.1,::1'],
  ];
  const out: string[] = [];
  for (const [name, value] of vars) out.push('--setenv', name, value, '--setenv', name.toLowerCase(), value);
  // Node's own fetch and http read the variables above only when told to (Node 24).
  out.push('--setenv', 'NODE_USE_ENV_PROXY', '1');
  return out;
}

/**
 * The bash script the bridge runs: both relays in the background, a wait (reading
 * /proc/net/tcp, no sleeping program) until both listen, then the command under the filter
 * (`"$@"`: apply-seccomp, the shell, its arguments and the command line, never re-quoted).
 */
const bridgeScript = (socat: string): string => [
  `${shellQuote(socat)} TCP-LISTEN:${HTTP_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SANDBOX_PROXY_DIR}/proxy.sock >/dev/null 2>&1 &`,
  // The namespace is new: until socat listens, /proc/net/tcp holds its header line alone.
  'listening() {',
  `  while read -r _sl _local _remote _state _rest; do case "$_local:$_state" in *:${hexPort(HTTP_PROXY_PORT)}:0A) return 0 ;; esac; done < /proc/net/tcp`,
  '  return 1',
  '}',
  'i=0',
  'until listening; do i=$((i+1)); [ "$i" -lt 20000 ] || break; done',
  'unset -f listening; unset i _sl _local _remote _state _rest',
  'exec "$@"',
].join('\n');

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function hexPort(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, '0');
}

/** bubblewrap's extra arguments and the wrapper for a command whose connections go through `proxyDir`'s sockets. */
export function bridgeLaunch(proxyDir: string, found: { socat: string; applySeccomp: string }, shell: { path: string; isBash: boolean }): { args: string[]; wrapper: string[] } {
  return {
    args: [
      '--bind', proxyDir, SANDBOX_PROXY_DIR, '--ro-bind', found.applySeccomp, SANDBOX_HELPER,
      ...proxyEnvironment(), ...helperCapabilities(), '--setenv', 'SRT_ALLOW_NESTED_USERNS', '0',
    ],
    wrapper: [shell.path, ...(shell.isBash ? ['--noprofile', '--norc'] : []), '-c', bridgeScript(found.socat), 'agentpolicy-network-bridge', SANDBOX_HELPER],
  };
}
