// The lock every writer of one audit file holds while it reads the file's last line and appends
// its own (the hash chain needs the line before; auditChain.ts). Writers are several processes
// (the extension, `agentpolicy hook` runs, the decision service, `agentpolicy run`) and Node has
// no flock(2), so the lock is `<audit file>.lock`, made atomically (failing if it exists) and removed
// after the write: held for one read and one write, microseconds. It is a symbolic link whose
// target is its holder's token (pid, PID namespace, a nonce): made and read in one system call
// each, never an empty lock (on Windows, where links need a privilege, a file made with O_EXCL).
//
// A holder killed with the lock held (kill -9) leaves the file behind. It is stale, and broken,
// when its holder is dead (a process of this PID namespace that no longer exists), or when it is
// older than STALE_MS whoever made it (a holder in another PID namespace, a PID reused). Breakers
// take a second lock, `<audit file>.lock.break`, so that only one of them removes a stale lock and
// none removes the new lock of a writer that got in between.
import * as fs from 'node:fs';
import * as os from 'node:os';

/** A lock older than this is stale whoever holds it: a write holds it for microseconds. */
export const STALE_MS = 5000;
/** Give up (the write throws, so what it records does not happen) after this long. */
const GIVE_UP_MS = 4 * STALE_MS;

const sleeper = new Int32Array(new SharedArrayBuffer(4));
let counter = 0;
let namespace: string | undefined;

/** This process's PID namespace: PIDs of lock holders are comparable only within one. */
function pidNamespace(): string {
  if (namespace !== undefined) return namespace;
  try {
    namespace = fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    namespace = `${process.platform}:${os.hostname()}`;
  }
  return namespace;
}

/** Runs `run` holding the lock of `file` (the audit file). */
export function withAuditLock<T>(file: string, run: () => T): T {
  const lock = `${file}.lock`;
  const token = `${process.pid} ${pidNamespace()} ${++counter}:${Math.random().toString(36).slice(2)}`;
  const giveUp = Date.now() + GIVE_UP_MS;
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(lock, token)) break;
    if (Date.now() > giveUp) throw new Error(`audit log ${file}: its lock ${lock} has been held for ${GIVE_UP_MS / 1000} s`);
    if (attempt % 8 === 7) breakIfStale(lock);
    // A few quick retries first (the lock is held for microseconds), then a millisecond at a time.
    Atomics.wait(sleeper, 0, 0, attempt < 4 ? 0 : 1);
  }
  try {
    return run();
  } finally {
    release(lock, token);
  }
}

const LINKS = process.platform !== 'win32';

function tryCreate(lock: string, token: string): boolean {
  try {
    if (LINKS) fs.symlinkSync(token, lock);
    else fs.writeFileSync(lock, token, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Removes the lock if it is still ours (a breaker may have judged it stale and taken it). */
function release(lock: string, token: string): void {
  if (readToken(lock) === token) fs.rmSync(lock, { force: true });
}

function readToken(lock: string): string | undefined {
  try {
    return LINKS ? fs.readlinkSync(lock) : fs.readFileSync(lock, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function readLock(lock: string): { text: string; ageMs: number } | undefined {
  const text = readToken(lock);
  if (text === undefined) return undefined;
  try {
    return { text, ageMs: Date.now() - fs.lstatSync(lock).mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function isStale(held: { text: string; ageMs: number }): boolean {
  if (held.ageMs > STALE_MS) return true;
  const [pid, ns] = held.text.split(' ');
  // An empty lock (Windows): its maker died between creating and filling it, or is filling it now.
  if (pid === undefined || pid === '') return held.ageMs > 100;
  if (ns !== pidNamespace() || Number(pid) === process.pid) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Under the breakers' lock: removes the lock if it is stale and still the one judged so. */
function breakIfStale(lock: string): void {
  const held = readLock(lock);
  if (held === undefined || !isStale(held)) return;
  const breaker = `${lock}.break`;
  const token = `${process.pid} ${pidNamespace()} break`;
  if (!tryCreate(breaker, token)) {
    // A breaker that died breaking: its lock goes once stale by age alone.
    const other = readLock(breaker);
    if (other !== undefined && other.ageMs > STALE_MS) fs.rmSync(breaker, { force: true });
    return;
  }
  try {
    if (readToken(lock) === held.text) fs.rmSync(lock, { force: true });
  } finally {
    fs.rmSync(breaker, { force: true });
  }
}
