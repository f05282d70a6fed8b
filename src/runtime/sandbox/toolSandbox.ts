// How one sandboxed command runs, as a tool hands it to the sandbox (docs/sandbox.md,
// docs/network.md): the sandbox's own type, so that tools lean on the sandbox and never back.
import type { ConnectionJudge } from './sandboxNetwork.js';

/** How a sandboxed command runs (docs/sandbox.md, docs/network.md). */
export interface ToolSandbox {
  /** Every host is reachable, unjudged (every deciding rule says `"sandbox": { "network": true }`). */
  network: boolean;
  /** Its connections go through the sandbox's proxy, each judged (not every host allowed, and no rule said `"network": false`). */
  judgesHosts?: true;
  /** For such a run: the judge the proxy asks, and the hosts the policy names exactly (only these may resolve to loopback or this machine). */
  connections?: { judge: ConnectionJudge; namedHosts: readonly string[] };
  /** The protected paths are writable: a person allowed exactly that (the protected-files hook's ask). */
  protectedWritable: boolean;
  /** The session's protected paths, absolute (protected.ts's defaults and the configured ones). */
  protectedFiles: readonly string[];
  /** The credential variables passed in by name (the decision's `sandbox.env`); every other one is withheld (sandboxEnvironment.ts). */
  env?: readonly string[];
  /**
   * The secret variables masked (the decision's `sandbox.mask`): name → the hosts its real value
   * may be substituted for, in HTTPS requests through the run's proxy (sandboxSecrets.ts); the
   * command gets a stand-in in its place, never the value.
   */
  mask?: Readonly<Record<string, readonly string[]>>;
  /**
   * Paths the policy's `deny` rules on paths cover, absolute and existing (sandboxDeniedPaths.ts),
   * worked out when the command starts: unreadable in the sandbox, as the home folder's credential stores are.
   */
  unreadable?: () => readonly string[];
  /** The home folder whose credential stores are hidden (sandboxReads.ts); default os.homedir(). */
  home?: string;
  /** Told what was undone after the command because it changed protected paths (for the audit and the transcript). */
  onUndone?(undone: readonly string[], left: readonly string[]): void;
}
