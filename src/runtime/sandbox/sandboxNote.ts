// What a sandboxed command's result says about the sandbox: how it ran, and, when it failed on
// something the sandbox refuses (a read-only file system, a mount that cannot be moved, no
// network), a note naming the sandbox, so that the model and the person reading the transcript can
// tell a sandbox refusal from the program's own error.

/** How a run_command call ran, as its result, its event and its audit line say. */
export interface CommandSandboxReport {
  sandboxed: boolean;
  /** Whether the command could reach every host (always true when not sandboxed). */
  network: boolean;
  /** Its connections went through the sandbox's proxy, each judged by the policy (or asked). */
  hostsJudged?: boolean;
  /** Sandboxed with the protected files writable: a person allowed the protected-files hook's ask. */
  protectedWritable?: boolean;
  /** Changes to protected paths undone after the command ended (sandboxCleanup.ts). */
  undone?: string[];
}

// Read-only mounts: writes fail with EROFS; rename, unlink and replace of a mount point with EBUSY;
// a hard link across mounts with EXDEV.
const FILE_LIMIT = /Read-only file system|\bEROFS\b|Device or resource busy|\bEBUSY\b|Invalid cross-device link|\bEXDEV\b/;

// No network namespace to the world: no route, no name server, nothing listening on the editor's loopback.
const NETWORK_LIMIT =
  /from proxy after CONNECT|CONNECT tunnel failed|Proxy CONNECT aborted|403 Forbidden|returned error: 403|Network is unreachable|\bENETUNREACH\b|Could not resolve host|Temporary failure in name resolution|getaddrinfo|\bEAI_AGAIN\b|\bENOTFOUND\b|Name or service not known|No address associated with hostname|Connection refused|\bECONNREFUSED\b|Could not connect to server|Failed to connect to/;

/** The sentence that says what the sandbox allowed this run. */
export function sandboxLimits(run: { network: boolean; hostsJudged?: boolean; protectedWritable?: boolean }): string {
  const files = run.protectedWritable
    ? 'everything outside the workspace folder (but a private /tmp) is read-only'
    : "the workspace's protected files and everything outside the workspace folder (but a private /tmp) are read-only";
  const network = run.network
    ? 'the network is on'
    : run.hostsJudged
      ? 'the network reaches only the hosts the policy allows (or a person allowed) through the sandbox\'s proxy'
      : 'the network is off';
  return `${files}, and ${network}`;
}

/**
 * The note for a sandboxed command that failed on a sandbox limit, or undefined. Only for a
 * failure (a non-zero exit or a signal) whose output shows such a refusal.
 */
export function sandboxLimitNote(
  result: { exitCode: number | null; signal: string | null; stdout: string; stderr: string },
  run: { network: boolean; hostsJudged?: boolean; protectedWritable?: boolean },
): string | undefined {
  if (result.exitCode === 0) return undefined;
  const text = `${result.stderr}\n${result.stdout}`;
  const hit = FILE_LIMIT.test(text) || (!run.network && NETWORK_LIMIT.test(text));
  if (!hit) return undefined;
  return `[sandbox: this command ran in the sandbox: ${sandboxLimits(run)}; the failure above may be the sandbox refusing]`;
}

/** The note for changes to protected paths that were undone (or found) after the command ended. */
export function cleanupNote(undone: readonly string[], left: readonly string[]): string | undefined {
  if (undone.length === 0 && left.length === 0) return undefined;
  return [...undone, ...left].map((s) => `[sandbox: ${s}]`).join('\n');
}
