// Whether builtin.run_command can run commands in the sandbox on this machine. On Linux:
// bubblewrap is installed AND it can create its namespaces here (user namespaces may be disabled,
// a container may forbid them), probed once per process by running `true` with the very flags a
// command gets. On macOS: /usr/bin/sandbox-exec is there (Seatbelt, sandboxMacos.ts). On Windows:
// never yet; the sandbox engine's install is checked (`srt-win status`) so the answer says what
// is missing and how to install it (sandboxWindows.ts).
// The answer is stated plainly (status bar, Explain, transcripts); the policy engine decides what
// a missing sandbox means (policy-format.md, "Sandboxed commands"): nothing here falls back.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import {
  checkWindowsSandboxStatus, checkWindowsSandboxStatusAsync, windowsInstallInstructions, type WindowsSandboxStatus,
} from '@anthropic-ai/sandbox-runtime/dist/sandbox/windows-sandbox-utils.js';
import { locateProgram } from './commandProcess.js';
import { bridgeMissing, bridgeTools } from './sandboxNetwork.js';
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
  | {
      available: true;
      platform: 'darwin';
      /** The sandbox-exec that applies the Seatbelt profile (sandboxMacos.ts). */
      sandboxExec: string;
    }
  | { available: false; reason: string };

/** Where macOS keeps sandbox-exec (part of the system). */
export const SANDBOX_EXEC_PATH = '/usr/bin/sandbox-exec';

export interface ProbeOptions {
  platform?: NodeJS.Platform;
  bwrap?: string | null;
  /** macOS: sandbox-exec's path (default SANDBOX_EXEC_PATH); null: missing. */
  sandboxExec?: string | null;
  /** Windows: what `srt-win status` says (default: asked); throws like it when srt-win cannot run. */
  windowsStatus?: () => WindowsSandboxStatus;
}

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

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** macOS: Seatbelt through sandbox-exec, which ships with the system. */
function darwinAvailability(sandboxExec: string | null | undefined): SandboxAvailability {
  const file = sandboxExec === null ? undefined : (sandboxExec ?? SANDBOX_EXEC_PATH);
  if (file === undefined || !isExecutable(file)) {
    return { available: false, reason: `${file ?? SANDBOX_EXEC_PATH} is missing, so there is no Seatbelt sandbox on this Mac (it ships with macOS)` };
  }
  return { available: true, platform: 'darwin', sandboxExec: file };
}

/**
 * Windows: what the sandbox engine's install lacks, with how to install it; and, where it is all
 * there, that Agent Policy does not run commands through it yet. Never available.
 */
export function windowsAvailability(status: WindowsSandboxStatus | Error): SandboxAvailability {
  const install = windowsInstallInstructions(undefined).replace(/\s*\n\s*/g, ' ').trim().replace(/\.+$/, '');
  const notYet = 'Agent Policy does not run commands through it yet, even once installed';
  if (status instanceof Error) {
    return { available: false, reason: `the Windows sandbox helper (srt-win.exe, from @anthropic-ai/sandbox-runtime) could not run: ${status.message.replace(/\.+$/, '')}. ${install}. ${notYet}` };
  }
  const missing: string[] = [];
  if (!status.user.provisioned) missing.push('the srt-sandbox account is not provisioned');
  else if (!status.user.credPresent) missing.push("the srt-sandbox account's credential is not readable");
  if (status.wfp.state === 'absent') missing.push('the WFP network filters are not installed');
  else if (status.wfp.state === 'loopback-mismatch') missing.push('the WFP network filters are not the ones the install recorded');
  if (missing.length > 0) return { available: false, reason: `the Windows sandbox is not installed (${missing.join('; ')}). ${install}. ${notYet}` };
  return {
    available: false,
    reason: 'the Windows sandbox (srt-sandbox account, WFP filters) is installed, but Agent Policy does not run commands through it yet: only its configuration is generated and checked',
  };
}

function windowsStatusNow(options: ProbeOptions): WindowsSandboxStatus | Error {
  try {
    return (options.windowsStatus ?? checkWindowsSandboxStatus)();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

async function windowsStatusLater(options: ProbeOptions): Promise<WindowsSandboxStatus | Error> {
  try {
    return options.windowsStatus ? options.windowsStatus() : await checkWindowsSandboxStatusAsync();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Before running bwrap: the platform and bwrap itself; a sure answer, or what to try. */
function precheck(options: ProbeOptions): SandboxAvailability | { bwrap: string; filter: Buffer | undefined } {
  const platform = options.platform ?? process.platform;
  if (platform === 'darwin') return darwinAvailability(options.sandboxExec);
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
export function probeSandbox(options: ProbeOptions = {}): SandboxAvailability {
  if ((options.platform ?? process.platform) === 'win32') return windowsAvailability(windowsStatusNow(options));
  const pre = precheck(options);
  if ('available' in pre) return pre;
  const withUserNs = tryRun(pre.bwrap, true, pre.filter);
  return answer(pre.bwrap, withUserNs, withUserNs === undefined ? undefined : tryRun(pre.bwrap, false, pre.filter));
}

/** probeSandbox without blocking the event loop (for the editor, right after activation). */
export async function probeSandboxLater(options: ProbeOptions = {}): Promise<SandboxAvailability> {
  if ((options.platform ?? process.platform) === 'win32') return windowsAvailability(await windowsStatusLater(options));
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
  if (a.available && 'sandboxExec' in a) {
    return (
      `Commands run sandboxed here (macOS Seatbelt, ${a.sandboxExec}, with the sandbox engine's profile): files can be written only in the workspace folder and a private temporary folder, ` +
      `the workspace's protected files are read-only, the home folder's credential stores and the paths the policy denies are unreadable, ` +
      `and the only network is the command's own proxy on a loopback port, which judges each connection's host (every host when a rule says "sandbox": { "network": true }, none when it says "network": false).`
    );
  }
  if (a.available) {
    return (
      `Commands run sandboxed here (bubblewrap, ${a.bwrap}): the file system is read-only except the workspace folder and a private /tmp, ` +
      `the workspace's protected and persistence files are read-only, the home folder's credential stores and the paths the policy denies are unreadable, ` +
      `and the only network is the command's own proxy, which judges each connection's host (every host when a rule says "sandbox": { "network": true }, none when it says "network": false).` +
      (a.unixSocketsBlocked ? '' : ` (On this CPU Unix-domain sockets are not filtered: with the network off a command can still reach local daemons through them.)`) +
      networkBridgeSentence()
    );
  }
  return `Commands are NOT sandboxed here: ${a.reason}.`;
}

/**
 * Where bubblewrap runs but the pieces that carry a sandboxed command's judged connections do not
 * (socat, the sandbox engine's seccomp helper: sandboxNetwork.ts): that such commands have no
 * network, and what to install. Empty when they are there.
 */
export function networkBridgeSentence(missing: string | undefined = bridgeMissing(bridgeTools(locateProgram))): string {
  if (missing === undefined) return '';
  const install = /seccomp helper/.test(missing) ? ` (it ships with Agent Policy, from @anthropic-ai/sandbox-runtime: reinstall the extension, or run npm ci in a checkout)` : '';
  return ` But ${missing}${install}.`;
}
