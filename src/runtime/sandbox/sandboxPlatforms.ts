// What one sandboxed run must hold, in terms every platform's sandbox can take (policy-format.md,
// "Sandboxed commands"): the same policy gives the same lists on Linux (bubblewrap's mounts,
// sandboxMounts.ts), macOS (a Seatbelt profile, sandboxMacos.ts) and Windows (the engine's
// configuration, sandboxWindows.ts). Linux binds only what exists; Seatbelt and Windows' ACLs
// match paths by name, so here every listed path is given, existing or not, in each spelling
// (as written, and through the links on the way: both sandboxes see the real path).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { realpathOfExistingPrefix } from '../../policy/paths/paths.js';
import { isCredentialVariable } from './sandboxEnvironment.js';
import { isWithin } from './sandboxMounts.js';
import { HOME_CREDENTIAL_STORES } from './sandboxReads.js';

/** The network of a run: none; every host, unjudged; or only the command's own proxy on two loopback ports, which judges each connection. */
export type PlatformNetwork =
  | { kind: 'off' }
  | { kind: 'open' }
  | { kind: 'proxy'; httpPort: number; socksPort: number };

/** One run's sandbox, as lists of absolute paths and names. */
export interface PlatformSandboxInputs {
  /** The workspace folder, real path: writable. */
  workspaceFolder: string;
  /** Where the command starts (absolute, inside the workspace). */
  cwd: string;
  /** The run's private temporary folder, real path: writable (TMPDIR points there). */
  privateTmp: string;
  /** Protected and persistence paths inside the workspace: read-only however a command names them (empty when a person allowed writing them). */
  readOnly: string[];
  /** The home folder's credential stores and the policy's denied paths: unreadable. */
  unreadable: string[];
  /** Credential variables of the environment that are withheld (not passed by name). */
  withheldEnv: string[];
  network: PlatformNetwork;
}

export interface PlatformSandboxOptions {
  workspaceFolder: string;
  cwd: string;
  privateTmp: string;
  /** The session's protected paths, absolute (a folder may end in `/`), as ToolSandbox gives them. */
  protectedFiles: readonly string[];
  protectedWritable: boolean;
  /** The policy's denied paths (sandboxDeniedPaths.ts), absolute. */
  unreadable: readonly string[];
  /** The home folder whose credential stores are unreadable. */
  home: string;
  /** The environment the command would get, and the credential variables passed by name. */
  env: NodeJS.ProcessEnv;
  passEnv?: readonly string[];
  network: PlatformNetwork;
}

/** A path and, when links on the way lead elsewhere, its real path too. */
function spellings(p: string): string[] {
  const literal = path.resolve(p.length > 1 ? p.replace(/[/\\]+$/, '') : p);
  const real = realpathOfExistingPrefix(literal);
  return real === literal ? [literal] : [literal, real];
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}

/** The lists for one run, from what prepareSandbox gets. */
export function platformSandboxInputs(options: PlatformSandboxOptions): PlatformSandboxInputs {
  const workspace = path.resolve(options.workspaceFolder);
  const workspaceReal = fs.realpathSync(workspace);
  const inWorkspace = (p: string): boolean => isWithin(p, workspace) || isWithin(p, workspaceReal);
  // Outside the workspace (and the private temporary folder) nothing is writable anyway.
  const readOnly = options.protectedWritable
    ? []
    : unique(options.protectedFiles.flatMap(spellings).filter((p) => inWorkspace(p) && p !== workspace && p !== workspaceReal));
  // Never the workspace folder or a folder holding it: the command must run there (as sandboxReads.ts).
  const holdsWorkspace = (p: string): boolean => isWithin(workspace, p) || isWithin(workspaceReal, p);
  const candidates = [...HOME_CREDENTIAL_STORES.map((rel) => path.join(options.home, rel)), ...options.unreadable];
  const unreadable = unique(candidates.flatMap(spellings).filter((p) => !holdsWorkspace(p)));
  const passed = new Set(options.passEnv ?? []);
  const withheldEnv = Object.keys(options.env)
    .filter((name) => options.env[name] !== undefined && isCredentialVariable(name) && !passed.has(name))
    .sort();
  return {
    workspaceFolder: workspaceReal,
    cwd: options.cwd,
    privateTmp: fs.realpathSync(options.privateTmp),
    readOnly,
    unreadable,
    withheldEnv,
    network: options.network,
  };
}

/**
 * The environment that sends a command's traffic to the proxy on loopback ports, as on Linux
 * (sandboxNetwork.ts): each name in both cases, and Node told to read them.
 */
export function proxyVariables(network: PlatformNetwork): Record<string, string> {
  if (network.kind !== 'proxy') return {};
  const http = `http://127.0.0.1:${network.httpPort}`;
  const out: Record<string, string> = {};
  const vars: Array<[string, string]> = [
    ['HTTP_PROXY', http], ['HTTPS_PROXY', http],
    ['ALL_PROXY', `socks5h://127.0.0.1:${network.socksPort}`], ['NO_PROXY', 'localhost,127.0.0.1,::1'],
  ];
  for (const [name, value] of vars) {
    out[name] = value;
    out[name.toLowerCase()] = value;
  }
  out.NODE_USE_ENV_PROXY = '1';
  return out;
}
