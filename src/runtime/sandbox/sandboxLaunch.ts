// One sandboxed run, from how the call is to run (ToolSandbox) to bubblewrap's arguments: the
// mounts (sandboxMounts.ts: protected and persistence files read-only, credential stores and
// denied paths hidden), the credential variables withheld, and the network (off; every host; or
// each connection judged through the command's own proxy, sandboxNetwork.ts). Shared by
// builtin.run_command, `agentpolicy sandbox` and sandboxed MCP servers; `close()` after the run
// stops the proxy. The caller checks what the mounts could not stop (sandboxCleanup.ts, `watch`).
// On macOS the same lists become the sandbox engine's Seatbelt profile (sandboxMacos.ts), its
// connections judged by the same proxy on two loopback ports; Windows has no sandbox here yet
// (sandboxProbe.ts says what its install lacks; sandboxWindows.ts is the configuration it would get).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { locateProgram, type CommandShell, type SandboxLaunch } from './commandProcess.js';
import { seatbeltLaunch } from './sandboxMacos.js';
import { sandboxPlan, type ProtectedWatch } from './sandboxMounts.js';
import { bridgeLaunch, bridgeMissing, bridgeTools, startCommandProxy, type CommandProxy, type ConnectionJudge, type TcpCommandProxy } from './sandboxNetwork.js';
import { platformSandboxInputs, type PlatformNetwork } from './sandboxPlatforms.js';
import { sandboxAvailability } from './sandboxProbe.js';
import { maskSecrets, processCa, secretProxyOptions, trustArgs } from './sandboxSecrets.js';
import { unixSocketFilter } from './sandboxSeccomp.js';
import type { ToolSandbox } from './toolSandbox.js';

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
  if ('sandboxExec' in available) return prepareSeatbelt(workspaceFolder, cwd, sandbox, shell, available.sandboxExec);
  const plan = sandboxPlan({
    workspaceFolder, cwd, network: sandbox.network,
    protectedFiles: sandbox.protectedFiles, protectedWritable: sandbox.protectedWritable, userNamespace: available.userNamespace,
    unreadable: sandbox.unreadable?.() ?? [], ...(sandbox.home !== undefined ? { home: sandbox.home } : {}),
  });
  // Masked secrets: withheld, their stand-ins set instead (sandboxSecrets.ts); never passed in the clear.
  const secrets = sandbox.mask ? maskSecrets(sandbox.mask) : undefined;
  const passEnv = passedEnv(sandbox);
  const withheld = secrets ? { withheldEnv: secrets.withheld } : {};
  const args = [...plan.args, ...(secrets?.envArgs ?? [])];
  const seccomp = !sandbox.network ? unixSocketFilter() : undefined;
  const offline: PreparedSandbox = {
    launch: { bwrap: available.bwrap, args, ...(seccomp ? { seccomp } : {}), ...passEnv, ...withheld },
    watch: plan.watch, hostsJudged: false, close: async () => undefined,
  };
  if (!sandbox.judgesHosts) return offline;
  // Each connection judged: the run's own proxy, bridged in; the Unix-socket filter then comes from the bridge.
  const found = bridgeTools(locateProgram);
  const missing = bridgeMissing(found);
  if (missing !== undefined) return { ...offline, networkMissing: missing };
  const connections = connectionsOf(sandbox);
  // Stand-ins to substitute: the proxy terminates TLS for their hosts, with this process's CA, which the sandbox trusts.
  const ca = secrets?.substitutes ? processCa() : undefined;
  const proxy: CommandProxy = await startCommandProxy({
    judge: connections.judge, namedHosts: connections.namedHosts, ...(secrets && ca ? { secrets: secretProxyOptions(secrets, ca) } : {}),
  });
  const bridge = bridgeLaunch(proxy.dir, { socat: found.socat!, applySeccomp: found.applySeccomp! }, shell);
  return {
    launch: { bwrap: available.bwrap, args: [...args, ...(ca ? trustArgs(ca) : []), ...bridge.args], wrapper: bridge.wrapper, ...passEnv, ...withheld },
    watch: plan.watch, hostsJudged: true, close: () => proxy.close(),
  };
}

/** The credential variables passed in the clear: never a masked one. */
function passedEnv(sandbox: Omit<ToolSandbox, 'onUndone'>): { passEnv?: readonly string[] } {
  if (!sandbox.env) return {};
  const masked = sandbox.mask ?? {};
  return { passEnv: sandbox.env.filter((name) => !Object.hasOwn(masked, name)) };
}

/** The run's judge; a run with no judge (outside a session) refuses every connection. */
function connectionsOf(sandbox: Omit<ToolSandbox, 'onUndone'>): { judge: ConnectionJudge; namedHosts: readonly string[] } {
  return sandbox.connections ?? { judge: async () => ({ allow: false as const, reason: 'no one can judge this connection' }), namedHosts: [] };
}

/**
 * macOS: the engine's Seatbelt profile from the same lists (sandboxPlatforms.ts), a private
 * temporary folder (TMPDIR) of the run's own, and for judged hosts the run's proxy on two
 * 127.0.0.1 ports, the only addresses the profile lets the command reach.
 */
async function prepareSeatbelt(
  workspaceFolder: string, cwd: string, sandbox: Omit<ToolSandbox, 'onUndone'>, shell: CommandShell, sandboxExec: string,
): Promise<PreparedSandbox> {
  // What sandboxCleanup.ts checks afterwards (hard-linked protected files above all: Seatbelt judges names).
  const { watch } = sandboxPlan({
    workspaceFolder, cwd, network: sandbox.network,
    protectedFiles: sandbox.protectedFiles, protectedWritable: sandbox.protectedWritable, userNamespace: false,
  });
  const privateTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-tmp-'));
  let proxy: TcpCommandProxy | undefined;
  const close = async (): Promise<void> => {
    await proxy?.close();
    fs.rmSync(privateTmp, { recursive: true, force: true });
  };
  try {
    let network: PlatformNetwork = sandbox.network ? { kind: 'open' } : { kind: 'off' };
    if (!sandbox.network && sandbox.judgesHosts) {
      const connections = connectionsOf(sandbox);
      proxy = await startCommandProxy({ judge: connections.judge, namedHosts: connections.namedHosts, listen: 'tcp' });
      network = { kind: 'proxy', httpPort: proxy.httpPort, socksPort: proxy.socksPort };
    }
    const inputs = platformSandboxInputs({
      workspaceFolder, cwd, privateTmp, protectedFiles: sandbox.protectedFiles, protectedWritable: sandbox.protectedWritable,
      unreadable: sandbox.unreadable?.() ?? [], home: sandbox.home ?? os.homedir(), env: process.env,
      ...passedEnv(sandbox), network,
    });
    const wrapped = seatbeltLaunch(inputs, shell.path);
    // Masked secrets are withheld here: this sandbox gets no stand-ins (docs/sandbox.md, "Masked secrets").
    const withheldEnv = Object.keys(sandbox.mask ?? {});
    const launch: SandboxLaunch = {
      kind: 'prefix', bwrap: sandboxExec, args: ['-p', wrapped.profile], argv: wrapped.argv, ...passedEnv(sandbox),
      ...(withheldEnv.length > 0 ? { withheldEnv } : {}),
    };
    return { launch, watch, hostsJudged: proxy !== undefined, close };
  } catch (error) {
    await close();
    throw error;
  }
}
