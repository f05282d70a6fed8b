// The resident decision service (`agentpolicy serve`, docs/hooks.md "The decision service"): one
// process per user that answers the hook calls of every governed host with the same judgement as
// `agentpolicy hook` (runHook), from policies compiled once per workspace and layer file and
// compiled again when a file changes. A hook call then costs a local request instead of a Node
// start and a policy build.
//
// Local only: a Unix socket in the user's state folder (0600 in a 0700 folder) and 127.0.0.1.
// Every request carries the user's secret (`Authorization: Bearer <hex>`, the secret kept in the
// state folder, readable by its owner alone). A request refused (no or wrong secret, not POST, an
// unknown path or host, a body over 1 MiB, a body that is not a JSON object, a bad parameter) gets
// a 4xx with a JSON error, and nothing is decided or audited.
//
//   POST /hook/<agent>  the host's hook input → {"exitCode","stdout","stderr"}: exactly what
//                       `agentpolicy hook --agent <agent>` would have printed and exited with.
//   POST /http/<agent>  (Claude Code's `type: "http"` hook) the host's hook input → the host's
//                       own JSON answer, status 200 (Claude Code reads a 2xx body as a command
//                       hook's stdout; any other status is a failure, a block with `onFailure: "block"`).
//   POST /raw/<agent>   the same answer as /hook/ for a client without a JSON parser (the hook
//                       client, hookClient.ts): the body is the stdout, byte for byte; the exit code
//                       is the header `X-Agentpolicy-Exit`, the stderr (base64) `X-Agentpolicy-Stderr`.
//
// Query parameters stand for what `agentpolicy hook`'s flags and its environment give today:
// timeout, workspace, untrusted, policy, managed, user, audit, cwd (the hook process's folder: the
// last resort for the workspace when the input names none), and the host's environment the
// judgement reads (CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR, COPILOT_PROJECT_DIR, COPILOT_CLI), and the
// host's AGENTPOLICY_HOOK_SANDBOX (hookSandbox.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { initShellParser } from '../../policy/shell/shellParser.js';
import { systemManagedPolicy } from '../../policy/system/systemPolicy.js';
import { editorFor } from '../editor/editorBridge.js';
import { MAX_SOCKET_PATH_BYTES } from '../state/editorDiscovery.js';
import { blocked, runHook, type HookDeps, type HookOptions } from '../judge/hookCommand.js';
import { findWorkspacePolicy, loadHookPolicy, type HookPolicy, type HookPolicySources } from '../judge/hookPolicy.js';
import { HOST_AGENTS, isHostAgent, type HostAgent } from '../hosts/hostAgents.js';
import { writePrivateFile } from '../state/privateFile.js';
import {
  discoveryFileOf, ensureServicePort, httpHookToken, readServiceDiscovery, SERVICE_PORT, SERVICE_SOCKET, serviceRuns, serviceSecret, socketAnswers, type ServiceDiscovery,
} from '../state/serviceFiles.js';
import { defaultStateDir } from '../state/stateDir.js';

/** The largest request body taken (a host's hook input is a few KiB; a file write can be large). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** The hosts with an `http` hook type whose answer format is checked (docs/hook-hosts.md §2). */
export const HTTP_HOOK_AGENTS: readonly HostAgent[] = ['claude'];
/** The headers of a `/raw/` answer: the exit code, and the stderr in base64 (empty: none). */
export const RAW_EXIT_HEADER = 'x-agentpolicy-exit';
export const RAW_STDERR_HEADER = 'x-agentpolicy-stderr';
/** The host's environment the judgement reads: a request names it; the service's own never counts. */
export const HOST_ENV = ['CLAUDE_PROJECT_DIR', 'GEMINI_PROJECT_DIR', 'COPILOT_PROJECT_DIR', 'COPILOT_CLI', 'AGENTPOLICY_HOOK_SANDBOX'] as const;
/** Of HOST_ENV, those the service's own environment may set too (the host's value wins): the switch of hookSandbox.ts. */
const SERVICE_MAY_SET: readonly string[] = ['AGENTPOLICY_HOOK_SANDBOX'];
/** Path parameters, as `agentpolicy hook`'s flags of the same names (`cwd`: the hook process's folder). */
const PATH_PARAMS = ['cwd', 'workspace', 'policy', 'managed', 'user', 'audit'] as const;
/** The http hook's note for people (hookEntries.ts IF_REFUSED): taken and ignored. */
const IGNORED_PARAM = 'if-refused';
/** A body over the limit is read on (and dropped) up to this much, so the client reads its 413; beyond it the connection is cut. */
const DRAIN_LIMIT_FACTOR = 4;
/** Policies kept compiled at most (one per workspace file, workspace folder and layer files); the least recently used go first. */
const POLICIES_KEPT = 64;

// ---------------------------------------------------------------------------------------------
// The policy, compiled once and again only when one of its files changes.

type LoadedPolicy = Extract<HookPolicy, { ok: true }>;

/** A file changed this recently may change again within the file system's timestamp tick, keeping size and times: its content is compared too. */
const RACY_MS = 2000;

/**
 * A file's identity and version, cheap to read per call: a change of content changes its size,
 * mtime or ctime, a rename over it its inode. A file changed in the last RACY_MS adds a digest of
 * its content (timestamps are coarse: two writes of the same size within one tick look alike).
 */
function stampOf(file: string | undefined, now = Date.now()): string {
  if (file === undefined) return '-';
  try {
    const st = fs.statSync(file, { bigint: true });
    const stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    const changedMs = Number(st.ctimeNs > st.mtimeNs ? st.ctimeNs : st.mtimeNs) / 1e6;
    if (Math.abs(now - changedMs) >= RACY_MS) return stamp;
    return `${stamp}:${createHash('sha256').update(fs.readFileSync(file)).digest('hex')}`;
  } catch (error) {
    return `!${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}

/**
 * loadHookPolicy with its valid results kept: a call whose policy files (the workspace file found
 * for its folder, the managed and user files) have the same stamps as when the kept policy was
 * loaded gets that policy. A failure to load is never kept (the next call tries again).
 */
export class PolicyCache {
  private readonly kept = new Map<string, { stamp: string; loaded: LoadedPolicy }>();
  /** Calls answered from a kept policy, and loads from disk (for tests and status). */
  hits = 0;
  loads = 0;

  constructor(private readonly limit = POLICIES_KEPT) {}

  get size(): number {
    return this.kept.size;
  }

  load(sources: HookPolicySources): HookPolicy {
    const folder = path.resolve(sources.folder);
    const workspaceFile = sources.policyFile !== undefined ? path.resolve(folder, sources.policyFile) : findWorkspacePolicy(folder);
    const managedFile = sources.managedFile !== undefined ? path.resolve(folder, sources.managedFile) : undefined;
    const userFile = sources.userFile !== undefined ? path.resolve(folder, sources.userFile) : undefined;
    // What the result depends on besides the files' contents: the same key and stamps give the same policy.
    const workspaceFolder = path.resolve(sources.workspace ?? (workspaceFile !== undefined ? path.dirname(workspaceFile) : folder));
    // The system managed policy, checked at every call (its owner or a folder's mode may change
    // without its stamp changing): what is found is part of the key, its file one of the stamped.
    const system = systemManagedPolicy(sources.system);
    const files = [managedFile, workspaceFile, userFile, system.kind === 'none' ? undefined : system.file];
    const key = JSON.stringify([sources.stateDir ?? '', workspaceFolder, ...files.map((f) => f ?? null), system]);
    const stamp = files.map(stampOf).join('|');
    const kept = this.kept.get(key);
    this.kept.delete(key);
    if (kept !== undefined && kept.stamp === stamp) {
      this.kept.set(key, kept); // the most recently used last
      this.hits++;
      return kept.loaded;
    }
    const resolved: HookPolicySources = {
      ...sources, folder,
      ...(workspaceFile !== undefined ? { policyFile: workspaceFile } : {}),
      ...(managedFile !== undefined ? { managedFile } : {}),
      ...(userFile !== undefined ? { userFile } : {}),
    };
    const loaded = loadHookPolicy(resolved);
    this.loads++;
    // Kept only when no file changed while it was read: otherwise the next call reads it again.
    if (loaded.ok && files.map(stampOf).join('|') === stamp) {
      this.kept.set(key, { stamp, loaded });
      for (const oldest of this.kept.keys()) {
        if (this.kept.size <= this.limit) break;
        this.kept.delete(oldest);
      }
    }
    return loaded;
  }

  clear(): void {
    this.kept.clear();
  }
}

// ---------------------------------------------------------------------------------------------
// Requests.

/** A refused request: its status and the error said in its JSON body. */
class Refusal extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Which key the request's bearer token is: the user's secret, the http hook's token (compared in constant time, as digests of equal length), or none. */
function authorizedAs(header: string | undefined, secretDigest: Buffer, httpTokenDigest: Buffer): 'secret' | 'http-token' | undefined {
  const match = typeof header === 'string' ? /^Bearer ([^\s]+)$/.exec(header.trim()) : null;
  const given = digest(match?.[1] ?? '');
  const isSecret = timingSafeEqual(given, secretDigest);
  const isHttpToken = timingSafeEqual(given, httpTokenDigest);
  if (match === null) return undefined;
  return isSecret ? 'secret' : isHttpToken ? 'http-token' : undefined;
}

/** The body, whole, or a refusal: over the limit (read on and dropped up to a bound, then the connection is cut). */
function readBody(req: http.IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit * DRAIN_LIMIT_FACTOR) {
      reject(Object.assign(new Refusal(413, `the body is over ${limit} bytes`), { cut: true }));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        if (size > limit * DRAIN_LIMIT_FACTOR) {
          req.removeAllListeners('data');
          req.removeAllListeners('end');
          reject(Object.assign(new Refusal(413, `the body is over ${limit} bytes`), { cut: true }));
        }
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => (over ? reject(new Refusal(413, `the body is over ${limit} bytes`)) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.once('error', reject);
  });
}

/** What a request's query stands for: `agentpolicy hook`'s options, the hook process's folder, and the host's environment. */
interface RequestParams {
  options: Omit<HookOptions, 'agent'>;
  cwd?: string;
  hostEnv: Partial<Record<(typeof HOST_ENV)[number], string>>;
}

function requestParams(query: URLSearchParams): RequestParams {
  const seen = new Set<string>();
  for (const key of query.keys()) {
    if (seen.has(key)) throw new Refusal(400, `the parameter ${key} is given twice`);
    seen.add(key);
    if (![...PATH_PARAMS, ...HOST_ENV, 'timeout', 'untrusted', IGNORED_PARAM].includes(key)) throw new Refusal(400, `unknown parameter ${key}`);
  }
  const value = (key: string): string | undefined => query.get(key) ?? undefined;
  const cwd = value('cwd');
  if (cwd !== undefined && !path.isAbsolute(cwd)) throw new Refusal(400, 'cwd must be an absolute path');
  const pathOf = (key: string): string | undefined => {
    const v = value(key);
    if (v === undefined) return undefined;
    if (v === '' || v.includes('\0')) throw new Refusal(400, `${key} must be a path`);
    if (path.isAbsolute(v)) return v;
    if (cwd === undefined) throw new Refusal(400, `${key} must be an absolute path (or relative, with cwd)`);
    return path.resolve(cwd, v);
  };
  const options: Omit<HookOptions, 'agent'> = {};
  const timeout = value('timeout');
  if (timeout !== undefined) {
    const seconds = Number(timeout);
    if (!(timeout.trim() !== '' && Number.isFinite(seconds) && seconds > 0)) throw new Refusal(400, 'timeout takes a number of seconds above 0');
    options.timeoutSeconds = seconds;
  }
  const untrusted = value('untrusted');
  if (untrusted !== undefined) {
    if (!['', '1', 'true', '0', 'false'].includes(untrusted)) throw new Refusal(400, 'untrusted takes 1, true, 0 or false');
    if (['', '1', 'true'].includes(untrusted)) options.untrusted = true;
  }
  const named: Array<[string, keyof HookOptions]> = [['workspace', 'workspace'], ['policy', 'policyFile'], ['managed', 'managedFile'], ['user', 'userFile'], ['audit', 'auditFile']];
  for (const [key, option] of named) {
    const v = pathOf(key);
    if (v !== undefined) (options as Record<string, unknown>)[option] = v;
  }
  const hostEnv: RequestParams['hostEnv'] = {};
  for (const key of HOST_ENV) {
    const v = value(key);
    if (v !== undefined) hostEnv[key] = v;
  }
  return { options, ...(cwd !== undefined ? { cwd } : {}), hostEnv };
}

// ---------------------------------------------------------------------------------------------
// The service.

export interface DecisionServiceOptions {
  /** The user's state folder (default: $XDG_STATE_HOME/agentpolicy or ~/.local/state/agentpolicy). */
  stateDir?: string;
  /** The folder of a call whose input and request name none (default: the service's working folder). */
  workspace?: string;
  /** The port on 127.0.0.1 (default: the one kept in the state folder, serviceFiles.ts, picked and kept the first time; 0: one the system picks, not kept). */
  port?: number;
  /** The service's environment (default: the process's; the host variables in HOST_ENV are left out of it). */
  env?: NodeJS.ProcessEnv;
  /** The editor window for a folder, asked when the policy asks (default: the window the hook would find). */
  findEditor?: HookDeps['findEditor'];
  maxBodyBytes?: number;
}

export interface DecisionService {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  /** The Unix socket's path (undefined on Windows). */
  readonly socket: string | undefined;
  /** What `agentpolicy serve` prints: `http://127.0.0.1:PORT unix:/…/service.sock`. */
  readonly address: string;
  readonly stateDir: string;
  readonly discoveryFile: string;
  readonly policies: PolicyCache;
  /** Stops listening, ends open connections, removes the socket and the discovery file (when still its own). */
  close(): Promise<void>;
}

function listen(server: http.Server, target: { port: number; host: string } | { path: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(target, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Starts the service; throws, saying why, when it cannot (another one runs for this user, an unsafe state folder, a socket path too long). */
export async function startDecisionService(options: DecisionServiceOptions = {}): Promise<DecisionService> {
  const env = options.env ?? process.env;
  const stateDir = path.resolve(options.stateDir ?? defaultStateDir(env));
  const secretDigest = digest(serviceSecret(stateDir));
  const httpTokenDigest = digest(httpHookToken(stateDir));
  const discoveryFile = discoveryFileOf(stateDir);
  const socket = process.platform === 'win32' ? undefined : path.join(stateDir, SERVICE_SOCKET);
  if (socket !== undefined && Buffer.byteLength(socket) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(`the socket path ${socket} is too long for the system (at most ${MAX_SOCKET_PATH_BYTES} bytes): name a shorter state folder`);
  }
  const running = await serviceRuns(stateDir);
  if (running !== undefined) throw new Error(`a decision service already runs for this user (pid ${running}, ${readServiceDiscovery(stateDir)?.url ?? 'its url unknown'})`);
  // A resident process parses many commands: the parser compiled fully once, at the start.
  await initShellParser();

  const serviceEnv: NodeJS.ProcessEnv = { ...env };
  for (const key of HOST_ENV) if (!SERVICE_MAY_SET.includes(key)) delete serviceEnv[key];
  const defaultCwd = path.resolve(options.workspace ?? process.cwd());
  const findEditor = options.findEditor ?? editorFor;
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const policies = new PolicyCache();

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const startedAt = performance.now();
    const send = (status: number, body: string, contentType = 'application/json', extra: http.OutgoingHttpHeaders = {}): void => {
      res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body), ...extra });
      res.end(body);
    };
    try {
      const key = authorizedAs(req.headers.authorization, secretDigest, httpTokenDigest);
      if (key === undefined) throw new Refusal(401, 'no valid secret: send "Authorization: Bearer <the secret in the state folder>"');
      if (req.method !== 'POST') throw Object.assign(new Refusal(405, 'only POST is answered'), { allow: true });
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://127.0.0.1');
      } catch {
        throw new Refusal(400, 'the request line names no path');
      }
      const route = /^\/(hook|http|raw)\/([a-z]+)$/.exec(url.pathname);
      if (route === null) throw new Refusal(404, `unknown path ${url.pathname.slice(0, 200)}: POST /hook/<agent>, /raw/<agent> or /http/<agent>`);
      const kind = route[1] as 'hook' | 'http' | 'raw';
      const agent = route[2]!;
      if (!isHostAgent(agent)) throw new Refusal(404, `unknown agent ${agent}: one of ${HOST_AGENTS.join(', ')}`);
      if (kind === 'http' && !HTTP_HOOK_AGENTS.includes(agent)) throw new Refusal(404, `no http hook is answered for ${agent}: POST /hook/${agent}`);
      // The http hook's token is written in the host's settings: it opens the http hook alone.
      if (key === 'http-token' && kind !== 'http') throw new Refusal(401, 'the http hook\'s token opens POST /http/<agent> only');
      const params = requestParams(url.searchParams);
      const stdin = await readBody(req, maxBody);
      let body: unknown;
      try {
        body = JSON.parse(stdin);
      } catch (error) {
        throw new Refusal(400, `the body is not JSON (${(error as Error).message})`);
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Refusal(400, 'the body is not a JSON object');
      const result = await runHook({ ...params.options, agent, stateDir }, {
        stdin, env: { ...serviceEnv, ...params.hostEnv }, cwd: params.cwd ?? defaultCwd, startedAt,
        loadShellParser: () => initShellParser(), findEditor, loadPolicy: (sources) => policies.load(sources),
      });
      const stderr = result.stderr !== undefined ? `${result.stderr}\n` : '';
      if (kind === 'hook') {
        send(200, JSON.stringify({ exitCode: result.exitCode, stdout: result.stdout, stderr }));
        return;
      }
      if (kind === 'raw') {
        send(200, result.stdout, 'application/octet-stream', {
          [RAW_EXIT_HEADER]: String(result.exitCode), [RAW_STDERR_HEADER]: Buffer.from(stderr).toString('base64'),
        });
        return;
      }
      // The host's own answer; an exit code that blocks in a command hook is a deny in the body here.
      const answer = result.exitCode === 0 ? result.stdout : blocked(agent, 'PreToolUse', result.stderr ?? 'the hook blocked this call').stdout;
      send(200, answer);
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const refusal = error instanceof Refusal ? error : new Refusal(500, `the service failed (${error instanceof Error ? error.message : String(error)})`);
      const cut = (error as { cut?: boolean }).cut === true;
      send(refusal.status, JSON.stringify({ error: refusal.message }), 'application/json', {
        ...((error as { allow?: boolean }).allow ? { allow: 'POST' } : {}),
        ...(cut || refusal.status === 401 ? { connection: 'close' } : {}),
      });
      // A body too large to drain, or any body from a client without the secret, is not read: the
      // connection ends after the answer. Another refused request's body is read on and dropped.
      if (cut || (refusal.status === 401 && !req.complete)) res.once('finish', () => req.socket.destroySoon());
      else if (!req.complete) req.resume();
    }
  };
  const makeServer = (): http.Server => {
    const server = http.createServer((req, res) => void handle(req, res));
    server.requestTimeout = 30_000;
    server.headersTimeout = 10_000;
    return server;
  };

  const tcp = makeServer();
  // The port kept in the state folder (picked now the first time): Claude Code's http hook names it.
  const wantedPort = options.port ?? (await ensureServicePort(stateDir));
  try {
    await listen(tcp, { port: wantedPort, host: '127.0.0.1' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new Error(`127.0.0.1:${wantedPort} is taken by another program${options.port === undefined ? ` (the port kept in ${path.join(stateDir, SERVICE_PORT)}, which Claude Code's http hook names: stop that program, or delete the file and run agentpolicy hook install again to pick another)` : ''}`);
  }
  const port = (tcp.address() as net.AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  let unix: http.Server | undefined;
  const servers = [tcp];
  try {
    if (socket !== undefined) {
      unix = makeServer();
      try {
        await listen(unix, { path: socket });
      } catch (error) {
        // A socket left by a service that ended without closing: nothing answers on it, so it goes.
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || (await socketAnswers(socket))) throw error;
        fs.rmSync(socket, { force: true });
        unix = makeServer();
        await listen(unix, { path: socket });
      }
      servers.push(unix);
      fs.chmodSync(socket, 0o600);
    }
    const discovery: ServiceDiscovery = { version: 1, pid: process.pid, url, ...(socket !== undefined ? { socket } : {}), started: new Date().toISOString() };
    writePrivateFile(discoveryFile, `${JSON.stringify(discovery)}\n`);
  } catch (error) {
    for (const server of servers) server.close();
    throw error;
  }

  const removeDiscovery = (): void => {
    if (readServiceDiscovery(stateDir)?.pid === process.pid) fs.rmSync(discoveryFile, { force: true });
  };
  // A process that ends without close() (process.exit elsewhere) still takes its discovery file along.
  process.once('exit', removeDiscovery);
  let closing: Promise<void> | undefined;
  return {
    url, port, socket, stateDir, discoveryFile, policies,
    address: socket !== undefined ? `${url} unix:${socket}` : url,
    close: () => {
      closing ??= (async () => {
        process.off('exit', removeDiscovery);
        removeDiscovery();
        await Promise.all(servers.map((server) => new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        })));
        if (socket !== undefined) fs.rmSync(socket, { force: true });
      })();
      return closing;
    },
  };
}
