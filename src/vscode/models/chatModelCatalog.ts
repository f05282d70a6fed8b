// The models Agent Policy offers in VS Code's model picker (vendor `agent-policy`), and the model
// reference the runtime uses for a model picked there. No `vscode` import: tested in plain Node;
// chatModels.ts registers the provider. What the picker shows and the errors go through
// @vscode/l10n (as describe.ts's); the endpoint, names and fields are placeholders.
import * as l10n from '@vscode/l10n';
import { BASE_URL_SETTING } from './apiKeys.js';
import { LM_PROVIDER, lmReferenceOf } from './lmMessages.js';

export const CHAT_VENDOR = 'agent-policy';
/** The scripted model's id and family: `vscode-lm:agent-policy/scripted`. */
export const SCRIPTED_CHAT_MODEL = 'scripted';
const OPENAI_COMPATIBLE = 'openai-compatible';

/** What `provideLanguageModelChatInformation` returns for one model (VS Code's `LanguageModelChatInformation`). */
export interface ChatModelInfo {
  id: string;
  name: string;
  family: string;
  version: string;
  tooltip: string;
  detail: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  capabilities: { toolCalling: boolean; imageInput: boolean };
}

/** A model's name as an OpenAI-compatible server knows it: `gpt-4o`, `llama3.1:8b`, `meta-llama/Llama-3-70b`. */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$/;

/**
 * The OpenAI-compatible model names in these references, in order, each once. Names come from the
 * workspace's agents file and the settings: one that does not look like a model name (spaces,
 * control characters, 128 characters or more) is left out, so the picker shows nothing odd.
 */
export function openaiCompatibleModelsIn(references: Iterable<string | undefined>): string[] {
  const names = new Set<string>();
  for (const reference of references) {
    const name = openaiCompatibleModelOf(reference);
    if (name !== undefined) names.add(name);
  }
  return [...names];
}

function openaiCompatibleModelOf(reference: string | undefined): string | undefined {
  const trimmed = reference?.trim() ?? '';
  if (!trimmed.startsWith(`${OPENAI_COMPATIBLE}:`)) return undefined;
  const name = trimmed.slice(OPENAI_COMPATIBLE.length + 1).trim();
  return MODEL_NAME.test(name) ? name : undefined;
}

/** The scripted model first, then one entry per OpenAI-compatible model, served at `endpoint` (shown, never a secret: user info is left out). */
export function chatModelsOffered(openaiModels: readonly string[], endpoint: string): ChatModelInfo[] {
  const scripted: ChatModelInfo = {
    id: SCRIPTED_CHAT_MODEL,
    name: l10n.t('Scripted (offline)'),
    family: SCRIPTED_CHAT_MODEL,
    version: '1',
    tooltip: l10n.t('Agent Policy\'s scripted model: in {0} sessions each agent plays its own {1} scenario, offline and deterministic.', '@agents', 'scripted:'),
    detail: l10n.t('Agent Policy'),
    // Nominal: the script reads no tokens.
    maxInputTokens: 1_000_000,
    maxOutputTokens: 100_000,
    capabilities: { toolCalling: true, imageInput: false },
  };
  const host = hostOf(endpoint);
  const served = openaiModels.map((name): ChatModelInfo => ({
    id: `${OPENAI_COMPATIBLE}:${name}`,
    name,
    family: name,
    version: '1',
    tooltip: host !== undefined
      ? l10n.t('{0} at {1}, the OpenAI-compatible endpoint of {2}, with the key of \'Agent Policy: Set API Key\'.', name, host, BASE_URL_SETTING)
      : l10n.t('{0} at an unusable base URL ({1}), with the key of \'Agent Policy: Set API Key\'.', name, BASE_URL_SETTING),
    detail: host ?? l10n.t('an unusable base URL'),
    // Not known without asking the server: values most chat-completions models take.
    maxInputTokens: 128_000,
    maxOutputTokens: 4_096,
    capabilities: { toolCalling: true, imageInput: false },
  }));
  return [scripted, ...served];
}

/** The endpoint's host (never its user info), or undefined when it is not a URL. */
function hostOf(endpoint: string): string | undefined {
  try {
    return new URL(endpoint).host || endpoint;
  } catch {
    return undefined;
  }
}

/** The fields of a `LanguageModelChat` the mapping reads; each is a string some extension chose. */
export interface PickedModel {
  vendor: string;
  id: string;
  family: string;
}

/**
 * The model reference the runtime uses for a model picked in the Chat view: our scripted model →
 * `undefined` (each agent keeps its own `scripted:` scenario), our OpenAI-compatible model → its
 * `openai-compatible:<model>` (the runtime calls the server itself), another vendor's model →
 * `vscode-lm:<vendor>/<family>`. Throws, saying why, for a model whose fields would not read back
 * as the same reference (control characters, a vendor with a slash, an id of ours we never gave).
 */
export function chatModelReferenceOf(model: PickedModel): string | undefined {
  const vendor = checkedField(model.vendor, 'vendor', model);
  if (vendor === CHAT_VENDOR) {
    const id = checkedField(model.id, 'id', model);
    if (id === SCRIPTED_CHAT_MODEL) return undefined;
    const name = openaiCompatibleModelOf(id);
    if (name !== undefined) return `${OPENAI_COMPATIBLE}:${name}`;
    throw new Error(l10n.t('the model picked in the Chat view ({0}) is not one Agent Policy offers; pick another', describe(model)));
  }
  if (vendor.includes('/')) throw new Error(l10n.t('the model picked in the Chat view ({0}) has a vendor with a "/", which {1} cannot name; pick another', describe(model), `${LM_PROVIDER}:<vendor>/<family>`));
  const family = checkedField(model.family, 'family', model);
  return lmReferenceOf({ vendor, family });
}

/** A field that is a non-empty string of printable characters without surrounding spaces (the reference parser trims). */
function checkedField(value: unknown, field: string, model: PickedModel): string {
  if (typeof value !== 'string' || value === '' || value !== value.trim() || /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value) || value.length > 200) {
    throw new Error(l10n.t('the model picked in the Chat view ({0}) has a {1} Agent Policy cannot use as a model reference; pick another', describe(model), field));
  }
  return value;
}

function describe(model: PickedModel): string {
  const show = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v.slice(0, 60)) : typeof v);
  return l10n.t('vendor {0}, family {1}', show(model.vendor), show(model.family));
}
