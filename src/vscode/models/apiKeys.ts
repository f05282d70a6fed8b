// Where the OpenAI-compatible key is kept and which endpoint it is for. Keys are stored per origin,
// so a key set for one server is never sent to another, whatever a setting later points at.
// No `vscode` import: tested in plain Node.

export const API_KEY_SECRET_PREFIX = 'agentPolicy.apiKey:';
export const BASE_URL_SETTING = 'agentPolicy.openaiCompatible.baseUrl';

import { originOf } from '../../runtime/providers/endpoints.js';

export { originOf };

/** The SecretStorage key of the API key for this base URL's origin. */
export function secretKeyFor(baseURL: string): string {
  return API_KEY_SECRET_PREFIX + originOf(baseURL);
}

/** The parts of `WorkspaceConfiguration.inspect()` the base URL is read from. */
export interface SettingValues<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
}

export interface ResolvedBaseUrl {
  value: string;
  source: 'default' | 'user' | 'workspace';
  /** A workspace value not applied because the workspace is not trusted. */
  ignoredWorkspaceValue?: string;
}

/**
 * The base URL in effect. An untrusted workspace may not choose the server the conversation (and
 * the workspace's files in it) is sent to: its value is ignored until the workspace is trusted.
 */
export function resolveBaseUrl(values: SettingValues<unknown> | undefined, trusted: boolean, fallback: string): ResolvedBaseUrl {
  const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
  const workspace = text(values?.workspaceValue);
  const user = text(values?.globalValue);
  const ignored = workspace !== undefined && !trusted ? { ignoredWorkspaceValue: workspace } : {};
  if (workspace !== undefined && trusted) return { value: workspace, source: 'workspace' };
  if (user !== undefined) return { value: user, source: 'user', ...ignored };
  return { value: text(values?.defaultValue) ?? fallback, source: 'default', ...ignored };
}

/** workspaceState: fingerprints of the MCP server configurations a person allowed to start. */
export const MCP_CONSENT_KEY = 'agentPolicy.mcpServersAllowed';
