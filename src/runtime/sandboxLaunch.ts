// One sandboxed run, from how the call is to run (ToolSandbox) to bubblewrap's arguments: the
// mounts (sandboxMounts.ts: protected and persistence files read-only, credential stores and
// denied paths hidden), the credential variables withheld, and the network (off; every host; or
// each connection judged through the command's own proxy, sandboxNetwork.ts). Shared by
// builtin.run_command, `agentpolicy sandbox` and sandboxed MCP servers; `close()` after the run
// stops the proxy. The caller checks what the mounts could not stop (sandboxCleanup.ts, `watch`).
import { locateProgram, type CommandShell, type SandboxLaunch } from './commandProcess.js';
import { sandboxPlan, type ProtectedWatch } from './sandboxMounts.js';
import { bridgeLaunch, bridgeMissing, bridgeTools, startCommandProxy, type CommandProxy } from './sandboxNetwork.js';
import { sandboxAvailability } from './sandboxProbe.js';
import { unixSocketFilter } from './sandboxSeccomp.js';
import type { ToolSandbox } from './tools.js';

export interface PreparedSandbox {
  launch: SandboxLaunch;
  watch: ProtectedWatch;
  /** Set when each connection is judged through the run's own proxy. */
  hostsJudged: boolean;
  /** Why the run's connections cannot be judged here (so it has no network), when that is so: what to install. */
  networkMissing?: string;
  /** Stops the run's proxy (after the run, or when it could not start). */
  close(): Promise<void>;
}

export class SandboxUnavailableError extends Error {}

/** Prepares one sandboxed run in `cwd` (absolute, inside the workspace); throws SandboxUnavailableError where there is no sandbox. */
export async function prepareSandbox(workspaceFolder: string, cwd: string, sandbox: Omit<ToolSandbox, 'onUndone'>, shell: CommandShell): Promise<PreparedSandbox> {
  const available = sandboxAvailability();
  // The decision said sandboxed: a machine that cannot is an error here, never a silent fallback.
  if (!available.available) throw new SandboxUnavailableError(available.reason);
  const plan = sandboxPlan({
    workspaceFolder, cwd, network: sandbox.network,
    protectedFiles: sandbox.protectedFiles, protectedWritable: sandbox.protectedWritable, userNamespace: available.userNamespace,
    unreadable: sandbox.unreadable?.() ?? [], ...(sandbox.home !== undefined ? { home: sandbox.home } : {}),
  });
  const passEnv = sandbox.env ? { passEnv: sandbox.env } : {};
  const seccomp = !sandbox.network ? unixSocketFilter() : undefined;
  const offline: PreparedSandbox = {
    launch: { bwrap: available.bwrap, args: plan.args, ...(seccomp ? { seccomp } : {}), ...passEnv },
    watch: plan.watch, hostsJudged: false, close: async () => undefined,
  };
  if (!sandbox.judgesHosts) return offline;
  // Each connection judged: the run's own proxy, bridged in; the Unix-socket filter then comes from the bridge.
  const found = bridgeTools(locateProgram);
  const missing = bridgeMissing(found);
  if (missing !== undefined) return { ...offline, networkMissing: missing };
  // A run with no judge (outside a session) refuses every connection.
  const connections = sandbox.connections ?? { judge: async () => ({ allow: false as const, reason: 'no one can judge this connection' }), namedHosts: [] };
  const proxy: CommandProxy = await startCommandProxy({ judge: connections.judge, namedHosts: connections.namedHosts });
  const bridge = bridgeLaunch(proxy.dir, { socat: found.socat!, applySeccomp: found.applySeccomp! }, shell);
  return {
    launch: { bwrap: available.bwrap, args: [...plan.args, ...bridge.args], wrapper: bridge.wrapper, ...passEnv },
    watch: plan.watch, hostsJudged: true, close: () => proxy.close(),
  };
}
