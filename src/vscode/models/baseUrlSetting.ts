// The OpenAI-compatible base URL in effect, read from the settings without loading a provider
// (the model picker lists the endpoint's models at activation).
import * as vscode from 'vscode';
import { DEFAULT_OPENAI_COMPATIBLE_BASE_URL } from '../../runtime/providers/endpoints.js';
import { BASE_URL_SETTING, resolveBaseUrl, type ResolvedBaseUrl } from './apiKeys.js';

/** The base URL in effect; a workspace's value counts only in a trusted workspace. */
export function configuredBaseUrl(): ResolvedBaseUrl {
  const values = vscode.workspace.getConfiguration().inspect<string>(BASE_URL_SETTING);
  return resolveBaseUrl(values, vscode.workspace.isTrusted, DEFAULT_OPENAI_COMPATIBLE_BASE_URL);
}
