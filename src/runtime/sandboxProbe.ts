// Whether builtin.run_command can run commands in the sandbox on this machine: bubblewrap is
// installed AND it can create its namespaces here (user namespaces may be disabled, a container
// may forbid them). Probed once per process by running `true` with the very flags a command gets.
// The answer is stated plainly (status bar, Explain, transcripts); the policy engine decides what
// a missing sandbox means (policy-format.md, "Sandboxed commands"): nothing here falls back.
import { spawn, spawnSync } from 'node:child_process';
import { locateProgram } from './commandProcess.js';
import { hasUnixSocketFilter, unixSocketFilter } from './sandboxSeccomp.js';

export type SandboxAvailability =
  | {
      available: true;
      /** The bwrap that runs commands. */
      bwrap: string;
      /** Whether bwrap makes a user namespace too (it can, or it is setuid where it cannot). */
      userNamespace: boolean;
      /** Whether, with the network off, Unix-domain sockets are refused too (x86-64 and arm64). */
      unixSocketsBlocked: boolean;
    }
  | { available: false; reason: string };

/** Where bwrap is looked for before PATH. */
const BWRAP_PATHS = ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'];

const PROBE_TIMEOUT_MS = 10_000;

/** Tests set `availability` to act as a machine with (or without) a sandbox; undefined: probe. */
export const sandboxTesting: { availability?: SandboxAvailability } = {};

/** bwrap's path: the usual places, then PATH (absolute entries only); undefined where there is none. */
export function locateBwrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return locateProgram('bwrap', BWRAP_PATHS, env);
}

/**
 * The namespace and privilege flags every sandboxed command gets (the mounts are sandboxMounts.ts's).
 * As root bwrap would keep every capability, and CAP_SYS_ADMIN could unmount the read-only binds:
 * `--cap-drop ALL` always. A user namespace also locks the mounts against any later unmount.
 */
export function isolationArgs(options: { network: boolean; userNamespace: boolean }): string[] {
  return [
    ...(options.network ? [] : ['--unshare-net']),
    '--unshare-pid', '--unshare-ipc', '--unshare-uts',
    ...(options.userNamespace ? ['--unshare-user'] : []),
    '--cap-drop', 'ALL',
    '--die-with-parent',
    // No controlling terminal shared with the editor: no TIOCSTI keystroke injection.
    '--new-session',
  ];
}

/** bwrap's arguments for the probe: `true` in a sandbox like a command's (network off, the filter on stdin). */
function probeArgs(userNamespace: boolean, withFilter: boolean): string[] {
  return [
    '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp',
    ...isolationArgs({ network: false, userNamespace }),
    ...(withFilter ? ['--seccomp', '0'] : []),
    'true',
  ];
}

/** The first line bwrap said when it failed; undefined when it ran. */
function failure(status: number | null, signal: string | null, stderr: string, error?: Error): string | undefined {
  if (error) return error.message;
  if (status === 0) return undefined;
  return stderr.trim().split('\n').find((l) => l.trim() !== '') ?? `exit ${status ?? signal}`;
}

// The filter goes to bwrap on its stdin (`--seccomp 0`): bwrap reads it whole and closes it before `true` runs.
function tryRun(bwrap: string, userNamespace: boolean, filter: Buffer | undefined): string | undefined {
  const r = spawnSync(bwrap, probeArgs(userNamespace, filter !== undefined), {
    stdio: ['pipe', 'ignore', 'pipe'], input: filter ?? Buffer.alloc(0), encoding: 'utf8', timeout: PROBE_TIMEOUT_MS,
  });
  return failure(r.status, r.signal, r.stderr ?? '', r.error);
}

function tryRunLater(bwrap: string, userNamespace: boolean, filter: Buffer | undefined): Promise<string | undefined> {
  return new Promise((resolve) => {
    let stderr = '';
    const child = spawn(bwrap, probeArgs(userNamespace, filter !== undefined), { stdio: ['pipe', 'ignore', 'pipe'], timeout: PROBE_TIMEOUT_MS });
    child.stdin?.on('error', () => undefined); // bwrap may fail before it reads
    child.stdin?.end(filter ?? Buffer.alloc(0));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', (error) => resolve(failure(null, null, stderr, error)));
    child.once('close', (status, signal) => resolve(failure(status, signal, stderr)));
  });
}

/** Before running bwrap: the platform and bwrap itself; a sure answer, or what to try. */
function precheck(options: { platform?: NodeJS.Platform; bwrap?: string | null }): SandboxAvailability | { bwrap: string; filter: Buffer | undefined } {
  const platform = options.platform ?? process.platform;
  if (platform !== 'linux') {
    return { available: false, reason: `there is no sandbox on ${platform}: it uses bubblewrap, which runs on Linux only` };
  }
  const bwrap = options.bwrap === null ? undefined : (options.bwrap ?? locateBwrap());
  if (bwrap === undefined) {
    return { available: false, reason: 'bubblewrap (bwrap) is not installed; install it (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)' };
  }
  return { bwrap, filter: unixSocketFilter() };
}

/** The answer from the two tries: with a user namespace first (a setuid bwrap on a machine without them still sandboxes). */
function answer(bwrap: string, withUserNs: string | undefined, without: string | undefined): SandboxAvailability {
  if (withUserNs === undefined) return { available: true, bwrap, userNamespace: true, unixSocketsBlocked: hasUnixSocketFilter() };
  if (without === undefined) return { available: true, bwrap, userNamespace: false, unixSocketsBlocked: hasUnixSocketFilter() };
  return {
    available: false,
    reason: `${bwrap} cannot create its namespaces on this machine (user namespaces disabled, or a container that forbids them): ${withUserNs}`,
  };
}

/** Probes now, without the per-process cache (see sandboxAvailability). */
export function probeSandbox(options: { platform?: NodeJS.Platform; bwrap?: string | null } = {}): SandboxAvailability {
  const pre = precheck(options);
  if ('available' in pre) return pre;
  const withUserNs = tryRun(pre.bwrap, true, pre.filter);
  return answer(pre.bwrap, withUserNs, withUserNs === undefined ? undefined : tryRun(pre.bwrap, false, pre.filter));
}

/** probeSandbox without blocking the event loop (for the editor, right after activation). */
export async function probeSandboxLater(options: { platform?: NodeJS.Platform; bwrap?: string | null } = {}): Promise<SandboxAvailability> {
  const pre = precheck(options);
  if ('available' in pre) return pre;
  const withUserNs = await tryRunLater(pre.bwrap, true, pre.filter);
  return answer(pre.bwrap, withUserNs, withUserNs === undefined ? undefined : await tryRunLater(pre.bwrap, false, pre.filter));
}

let probed: SandboxAvailability | undefined;
let probing: Promise<SandboxAvailability> | undefined;

/** Whether commands can run sandboxed here: probed once per process (unless a test says otherwise). */
export function sandboxAvailability(): SandboxAvailability {
  if (sandboxTesting.availability) return sandboxTesting.availability;
  probed ??= probeSandbox();
  return probed;
}

/** sandboxAvailability without blocking the event loop; the same once-per-process answer. */
export async function sandboxAvailabilityLater(): Promise<SandboxAvailability> {
  if (sandboxTesting.availability) return sandboxTesting.availability;
  if (probed) return probed;
  probing ??= probeSandboxLater().then((a) => (probed ??= a));
  return probing;
}

/** One sentence for people: the status bar, Explain, the start of a transcript. */
export function describeSandbox(a: SandboxAvailability = sandboxAvailability()): string {
  if (a.available) {
    return (
      `Commands run sandboxed here (bubblewrap, ${a.bwrap}): the file system is read-only except the workspace folder and a private /tmp, ` +
      `the workspace's protected files are read-only, and the network is off unless a rule says "sandbox": { "network": true } or a person allowed the command.` +
      (a.unixSocketsBlocked ? '' : ` (On this CPU Unix-domain sockets are not filtered: with the network off a command can still reach local daemons through them.)`)
    );
  }
  return `Commands are NOT sandboxed here: ${a.reason}.`;
}
