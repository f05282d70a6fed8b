// A real network host for tests of the sandbox's network proxy: not loopback (a careful proxy
// refuses loopback) and never an address outside this machine. As root, startTestHost() makes a
// network namespace, a veth pair from the root namespace into it with private addresses from a
// /29 in 10.253.0.0/16 (host side .1, the namespace .2 and .3), runs test/netHostServer.mjs inside
// it (plain node:http on 0.0.0.0, port 80 unless told otherwise) and names the two namespace
// addresses in /etc/hosts, in a block marked with the namespace's name. stop() undoes all of it;
// so does the process's exit, and a later run sweeps what a killed run left behind.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface TestHostOptions {
  /** Ports the server listens on, on both addresses; default [80]. */
  ports?: number[];
  /** HTTPS ports too, with a certificate the test makes for the host's two names. */
  tls?: { ports: number[]; certificate(names: TestHost['names']): { key: string; cert: string } };
}

export interface TestHost {
  /** The namespace's name, `aptest-<pid>-<n>`. */
  namespace: string;
  /** Host names in /etc/hosts: `allowed` maps to addresses.allowed, `other` to addresses.other. */
  names: { allowed: string; other: string };
  /** `root` is the root namespace's end of the veth; `allowed` and `other` are in the namespace. */
  addresses: { root: string; allowed: string; other: string };
  ports: number[];
  /** The HTTPS ports (options.tls), if any. */
  tlsPorts: number[];
  /** The server's process id. */
  serverPid: number;
  /** Stops the server, deletes the namespace and its veth and removes the /etc/hosts block. */
  stop(): Promise<void>;
}

// Beside this file; from a bundle (npm run bench bundles into .cache/), in the repository's test/.
const SERVER = [path.join(__dirname, 'netHostServer.mjs'), path.join(process.cwd(), 'test', 'netHostServer.mjs')].find((f) => fs.existsSync(f)) ?? path.join(__dirname, 'netHostServer.mjs');
const STATE_DIR = '/run/agent-policy-nethost';
const HOSTS = '/etc/hosts';
const SLOTS = 8192; // /29s in 10.253.0.0/16

let counter = 0;
const live = new Map<string, () => void>();
let exitHookInstalled = false;

/** Whether this process can make test hosts; when not, why. */
export function canMakeTestHost(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: 'test hosts need Linux network namespaces' };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return { ok: false, reason: 'test hosts need root (network namespaces, veth, /etc/hosts)' };
  }
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
  } catch {
    return { ok: false, reason: "test hosts need iproute2's `ip` with netns support (apt-get install iproute2)" };
  }
  return { ok: true };
}

/**
 * For a mocha `before`: skips the suite when not root (with the reason on stderr), and fails it
 * when root but a test host cannot be made, so CI (root) never skips silently.
 */
export function requireTestHost(ctx: Mocha.Context): void {
  const can = canMakeTestHost();
  if (can.ok) return;
  if (typeof process.getuid === 'function' && process.getuid() === 0) throw new Error(can.reason);
  process.stderr.write(`skipping: ${can.reason}\n`);
  ctx.skip();
}

export async function startTestHost(options: TestHostOptions = {}): Promise<TestHost> {
  const can = canMakeTestHost();
  if (!can.ok) throw new Error(can.reason);
  const ports = options.ports ?? [80];
  fs.mkdirSync(STATE_DIR, { recursive: true });
  sweepStale();

  const n = counter++;
  const ns = `aptest-${process.pid}-${n}`;
  const slot = reserveSlot(ns);
  const base = slotBase(slot);
  const addresses = { root: ipString(base + 1), allowed: ipString(base + 2), other: ipString(base + 3) };
  const rootVeth = `aph${slot}`;
  const nsVeth = `apn${slot}`;
  const names = { allowed: `allowed-${process.pid}-${n}.aptest`, other: `other-${process.pid}-${n}.aptest` };
  writeState(slot, { pid: process.pid, ns, rootVeth });

  let server: ChildProcess | undefined;
  let serverPid = 0;
  let stopped = false;
  const cleanupSync = (): void => {
    if (stopped) return;
    stopped = true;
    live.delete(ns);
    if (serverPid > 0) killQuietly(serverPid, 'SIGKILL');
    else server?.kill('SIGKILL');
    teardown(slot, ns, rootVeth);
  };
  live.set(ns, cleanupSync);
  installExitHook();

  try {
    ip('netns', 'add', ns);
    ip('link', 'add', rootVeth, 'type', 'veth', 'peer', 'name', nsVeth, 'netns', ns);
    ip('addr', 'add', `${addresses.root}/29`, 'dev', rootVeth);
    ip('link', 'set', rootVeth, 'up');
    ip('-n', ns, 'addr', 'add', `${addresses.allowed}/29`, 'dev', nsVeth);
    ip('-n', ns, 'addr', 'add', `${addresses.other}/29`, 'dev', nsVeth);
    ip('-n', ns, 'link', 'set', nsVeth, 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');

    const tls = options.tls ? options.tls.certificate(names) : undefined;
    const tlsArgs = (options.tls?.ports ?? []).map((p) => `tls:${p}`);
    server = spawn('ip', ['netns', 'exec', ns, process.execPath, SERVER, ...ports.map(String), ...tlsArgs], {
      stdio: ['pipe', 'pipe', 'inherit'],
      ...(tls ? { env: { ...process.env, NETHOST_TLS_KEY: tls.key, NETHOST_TLS_CERT: tls.cert } } : {}),
    });
    serverPid = await waitReady(server);
    // A test that forgets stop() must not keep the process alive: the exit hook cleans up then.
    server.unref();
    (server.stdin as unknown as { unref(): void }).unref();
    (server.stdout as unknown as { unref(): void }).unref();
    editHosts((lines) => [
      ...removeBlock(lines, ns),
      `# >>> agent-policy test host ${ns}`,
      `${addresses.allowed} ${names.allowed}`,
      `${addresses.other} ${names.other}`,
      `# <<< agent-policy test host ${ns}`,
    ]);
  } catch (err) {
    cleanupSync();
    throw err;
  }

  const child = server;
  return {
    namespace: ns,
    names,
    addresses,
    ports,
    tlsPorts: options.tls?.ports ?? [],
    serverPid,
    async stop() {
      if (stopped) return;
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        killQuietly(serverPid, 'SIGTERM');
        const timer = setTimeout(() => killQuietly(serverPid, 'SIGKILL'), 1000);
        await exited;
        clearTimeout(timer);
      }
      serverPid = 0;
      cleanupSync();
    },
  };
}

function waitReady(server: ChildProcess): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error('test host server did not start within 10 s')), 10_000);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    server.once('error', fail);
    server.once('exit', (code, signal) => fail(new Error(`test host server exited (${code ?? signal}) before it was ready`)));
    server.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /^ready (\d+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        server.removeAllListeners('exit');
        resolve(Number(m[1]));
      }
    });
  });
}

// ---- addresses and slots ---------------------------------------------------------------------

function slotBase(slot: number): number {
  return ((10 << 24) | (253 << 16) | (slot << 3)) >>> 0;
}

function ipString(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

function parseCidr(text: string): { addr: number; len: number } | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)(?:\/(\d+))?$/.exec(text);
  if (!m) return undefined;
  const addr = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
  return { addr, len: m[5] === undefined ? 32 : Number(m[5]) };
}

function overlaps(a: { addr: number; len: number }, b: { addr: number; len: number }): boolean {
  const len = Math.min(a.len, b.len);
  if (len === 0) return false; // the default route overlaps everything; it is no collision
  const mask = (~0 << (32 - len)) >>> 0;
  return ((a.addr & mask) >>> 0) === ((b.addr & mask) >>> 0);
}

const ROUTE_TYPES = new Set(['unicast', 'local', 'broadcast', 'multicast', 'anycast', 'blackhole', 'unreachable', 'prohibit', 'throw', 'nat']);

/** The prefixes in use in the root namespace: its addresses and its routes' destinations. */
function prefixesInUse(): { addr: number; len: number }[] {
  const used: { addr: number; len: number }[] = [];
  for (const m of ipOut('-4', '-o', 'addr').matchAll(/\binet (\S+)/g)) {
    const p = parseCidr(m[1]!);
    if (p) used.push({ addr: p.addr, len: 32 });
  }
  for (const line of ipOut('-4', 'route', 'show', 'table', 'all').split('\n')) {
    const p = parseCidr(line.split(' ').filter((w) => !ROUTE_TYPES.has(w))[0] ?? '');
    if (p) used.push(p);
  }
  return used;
}

/** A /29 no live run holds and no address or route here overlaps, reserved by its state file. */
function reserveSlot(ns: string): number {
  const used = prefixesInUse();
  const start = ((process.pid % 1024) * 8 + counter) % SLOTS;
  for (let i = 0; i < SLOTS; i++) {
    const slot = (start + i) % SLOTS;
    const prefix = { addr: slotBase(slot), len: 29 };
    if (used.some((u) => overlaps(u, prefix))) continue;
    try {
      fs.writeFileSync(statePath(slot), JSON.stringify({ pid: process.pid, ns }), { flag: 'wx' });
      return slot;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error('no free /29 in 10.253.0.0/16 for a test host');
}

function statePath(slot: number): string {
  return path.join(STATE_DIR, `slot-${slot}.json`);
}

function writeState(slot: number, state: { pid: number; ns: string; rootVeth: string }): void {
  fs.writeFileSync(statePath(slot), JSON.stringify(state));
}

/** Undoes what a run that is gone (killed before its exit hook) left: namespace, veth, hosts block. */
function sweepStale(): void {
  for (const file of fs.readdirSync(STATE_DIR)) {
    const m = /^slot-(\d+)\.json$/.exec(file);
    if (!m) continue;
    let state: { pid?: number; ns?: string; rootVeth?: string };
    try {
      state = JSON.parse(fs.readFileSync(path.join(STATE_DIR, file), 'utf8')) as typeof state;
    } catch {
      continue; // being written right now
    }
    if (typeof state.pid !== 'number' || isAlive(state.pid)) continue;
    teardown(Number(m[1]), state.ns, state.rootVeth);
  }
}

function teardown(slot: number, ns: string | undefined, rootVeth: string | undefined): void {
  // Deleting one end of the veth deletes both now; a namespace's own teardown is asynchronous.
  if (rootVeth) ipQuiet('link', 'del', rootVeth);
  if (ns) {
    ipQuiet('netns', 'del', ns);
    try {
      editHosts((lines) => removeBlock(lines, ns));
    } catch {
      // /etc/hosts unwritable: nothing of ours can be in it
    }
  }
  fs.rmSync(statePath(slot), { force: true });
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const cleanup of [...live.values()]) {
      try {
        cleanup();
      } catch {
        // best effort at exit
      }
    }
  });
}

// ---- /etc/hosts ------------------------------------------------------------------------------

function removeBlock(lines: string[], ns: string): string[] {
  const begin = `# >>> agent-policy test host ${ns}`;
  const end = `# <<< agent-policy test host ${ns}`;
  const kept: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (line === begin) inside = true;
    else if (line === end && inside) inside = false;
    else if (!inside) kept.push(line);
  }
  return kept;
}

/** Rewrites /etc/hosts under a lock (other test runs edit it too): temporary file, then rename. */
function editHosts(edit: (lines: string[]) => string[]): void {
  withLock(path.join(STATE_DIR, 'hosts.lock'), () => {
    const text = fs.readFileSync(HOSTS, 'utf8');
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const next = edit(lines).join('\n') + '\n';
    if (next === text) return;
    const tmp = `${HOSTS}.${path.basename(STATE_DIR)}.${process.pid}.tmp`;
    const mode = fs.statSync(HOSTS).mode & 0o7777;
    fs.writeFileSync(tmp, next, { mode });
    try {
      fs.renameSync(tmp, HOSTS);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      // A bind-mounted /etc/hosts (containers) cannot be replaced: write it in place.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EBUSY' && code !== 'EXDEV' && code !== 'EPERM') throw err;
      fs.writeFileSync(HOSTS, next);
    }
  });
}

function withLock(lockFile: string, body: () => void): void {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder = NaN;
      try {
        holder = Number(fs.readFileSync(lockFile, 'utf8'));
      } catch {
        continue; // released meanwhile
      }
      if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) {
        fs.rmSync(lockFile, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lockFile} held by process ${holder} for 10 s`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
  try {
    body();
  } finally {
    fs.rmSync(lockFile, { force: true });
  }
}

// ---- processes and ip ------------------------------------------------------------------------

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function ip(...args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString('utf8').trim();
    throw new Error(`ip ${args.join(' ')}: ${stderr || (err as Error).message}`);
  }
}

function ipQuiet(...args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: 'ignore' });
  } catch {
    // already gone
  }
}

function ipOut(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8' });
}
