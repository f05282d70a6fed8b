// The environment of a sandboxed command (policy-format.md, "Sandboxed commands", Environment):
// variables that hold credentials, or lead to something that hands them out (an agent's or the
// editor's socket), are withheld unless the policy passes them by name (`"sandbox": { "env": [...] }`
// on the deciding allow rules). The sandbox keeps a command from changing things; this keeps it
// from being handed the keys in its environment, which it could print into its output or, with
// the network on, send away. docs/sandbox.md lists the patterns and why each is there; the list
// is the policy's (src/policy/shell/programs/credentialNames.ts): the judge reads commands by it too.
import { isCredentialVariable } from '../../policy/shell/programs/credentialNames.js';

export { CREDENTIAL_VARIABLE_PATTERNS, isCredentialVariable } from '../../policy/shell/programs/credentialNames.js';

/**
 * `env` without its credential variables, but for those named in `passed` (exact names, as a
 * shell exports them). A new object; `env` is left as it is.
 */
export function withoutCredentials(env: NodeJS.ProcessEnv, passed: readonly string[] = []): NodeJS.ProcessEnv {
  const keep = new Set(passed);
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (isCredentialVariable(name) && !keep.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/**
 * Caches in the sandbox's private /tmp: the home folder is read-only there, so npm, pip and the
 * tools that follow XDG would fail to write their caches (npm ci would stop at its first
 * download). Each command starts with empty caches, gone when it ends.
 */
export const PRIVATE_CACHES: ReadonlyArray<readonly [string, string]> = [
  ['npm_config_cache', '/tmp/.cache/npm'],
  ['PIP_CACHE_DIR', '/tmp/.cache/pip'],
  ['XDG_CACHE_HOME', '/tmp/.cache'],
];

/** bubblewrap's arguments that point the caches at the private /tmp. */
export function privateCacheArgs(): string[] {
  return PRIVATE_CACHES.flatMap(([name, value]) => ['--setenv', name, value]);
}
