// The fixed names of the policy format that code needs at run time without the schema (whose
// zod objects cost tens of milliseconds to build: `agentpolicy hook` starts for every call).
export const toolKinds = ['builtin', 'client', 'mcp', 'connector', 'plugin'] as const;
export const hintNames = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
export const decisionValues = ['allow', 'ask', 'deny'] as const;
export const reviewValues = ['result'] as const;
export const sandboxModes = ['required', 'auto', 'off'] as const;

/** The longest `timeout` a timer can hold: setTimeout takes at most 2^31-1 ms. */
export const MAX_ASK_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** An environment variable's name (a rule's `"sandbox": { "env": [...] }`): what a shell can export. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A `persistenceFiles` entry: a workspace-relative path in normal form (no leading `/`, no `.`
 * or `..` segment, no `~`), a trailing `/` naming a folder. Literal: no glob is expanded.
 */
export function isPersistenceEntry(value: string): boolean {
  const body = value.endsWith('/') ? value.slice(0, -1) : value;
  if (body === '' || body.startsWith('/') || body.startsWith('~') || body.includes('\\') || body.includes('\0')) return false;
  return body.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** A flow rule's mark: letters, digits and `_ . : -` (so `--marks a,b` and the tree show it as written). */
export const MARK_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * The annotations of the subagent tools (`agents.spawn`, `agents.message`, `agents.interrupt`;
 * `agents.wait` is also read-only), known here so that the `spawn-denied` lint judges
 * `agents.spawn` with the hints the runtime gives it.
 */
export const SUBAGENT_TOOL_ANNOTATIONS = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

/** A collector's OTLP/HTTP base URL (`controls.telemetry.endpoint`): http or https, a host, an optional path; no spaces. */
export const OTLP_ENDPOINT_PATTERN = /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/;

/**
 * Other makers' agent programs whose hooks the policy governs (docs/hooks.md): their tool ids are
 * `<host>.<tool>`, their sessions `<host>:<the host's session id>`.
 */
export const HOST_AGENTS = ['claude', 'codex', 'gemini', 'copilot', 'vscode', 'cursor'] as const;
