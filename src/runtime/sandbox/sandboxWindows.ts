// A sandboxed run on Windows, as the sandbox engine's configuration (@anthropic-ai/sandbox-runtime's
// SandboxRuntimeConfig, checked with its own SandboxRuntimeConfigSchema), from the same lists as
// Linux's mounts (sandboxPlatforms.ts). The engine runs a command there under a dedicated
// `srt-sandbox` account (srt-win.exe), writes ACL entries for the lists below, and fences that
// account's network with WFP filters that let it reach only loopback ports in the install's proxy
// port range. So:
// - filesystem: `denyRead` the unreadable paths, `allowWrite` the workspace folder and the private
//   temporary folder, `denyWrite` the protected and persistence paths (all marked literal: names);
// - network: `allowedDomains` empty always. Judged: `httpProxyPort`/`socksProxyPort` are the
//   command's own proxy (the engine then starts none of its own), which judges each connection;
//   its ports must lie in the WFP range. Off: `strictAllowlist`, no ask callback, nothing gets
//   out. Open: every connection allowed, which on Windows needs the ask callback to say yes to
//   each (`network.allowedDomains` takes no bare `*`): see `windowsAskCallback`.
// - credentials: the withheld variables as `envVars` with mode `deny`.
// Agent Policy does not run commands through it yet (sandboxProbe.ts says why on win32); this is
// the configuration it would hand the engine, tested on Linux against the engine's schema.
import { SandboxRuntimeConfigSchema, type SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-config.js';
import { DEFAULT_WINDOWS_PROXY_PORT_RANGE } from '@anthropic-ai/sandbox-runtime/dist/sandbox/windows-sandbox-utils.js';
import type { PlatformSandboxInputs } from './sandboxPlatforms.js';

const literal = (p: string): { path: string; literal: true } => ({ path: p, literal: true });

/** The engine's configuration for one run; throws when the proxy's ports lie outside the WFP range (they would be fenced off). */
export function windowsSandboxConfig(inputs: PlatformSandboxInputs, options: { proxyPortRange?: readonly [number, number] } = {}): SandboxRuntimeConfig {
  const range: [number, number] = [...(options.proxyPortRange ?? DEFAULT_WINDOWS_PROXY_PORT_RANGE)] as [number, number];
  const net = inputs.network;
  if (net.kind === 'proxy') {
    for (const port of [net.httpPort, net.socksPort]) {
      if (port < range[0] || port > range[1]) {
        throw new Error(`the proxy's port ${port} is outside the Windows sandbox's proxy port range ${range[0]}-${range[1]}: the WFP filters would refuse it`);
      }
    }
  }
  const config: SandboxRuntimeConfig = {
    network: {
      allowedDomains: [],
      deniedDomains: [],
      ...(net.kind === 'off' ? { strictAllowlist: true } : {}),
      ...(net.kind === 'proxy' ? { httpProxyPort: net.httpPort, socksProxyPort: net.socksPort } : {}),
    },
    filesystem: {
      denyRead: inputs.unreadable.map(literal),
      allowWrite: [inputs.workspaceFolder, inputs.privateTmp].map(literal),
      denyWrite: inputs.readOnly.map(literal),
    },
    credentials: { envVars: inputs.withheldEnv.map((name) => ({ name, mode: 'deny' as const })) },
    windows: { proxyPortRange: range },
  };
  // The engine's own validation: what it would refuse at initialize() is refused here.
  return SandboxRuntimeConfigSchema.parse(config);
}

/**
 * The ask callback SandboxManager.initialize() takes with that configuration: asked for each host
 * no list decided. Every host when the network is open; none when it is off (strictAllowlist
 * never asks); with our proxy the engine's own proxy is not started, so it is not asked either.
 */
export function windowsAskCallback(inputs: PlatformSandboxInputs): () => Promise<boolean> {
  const open = inputs.network.kind === 'open';
  return async () => open;
}
