// The model providers outside VS Code: a reference (`scripted:<file>`, `openai-compatible:<model>`)
// becomes a Model. The VS Code layer adds `vscode-lm:` and reads the key from SecretStorage.
import { ModelError } from '../model/model.js';
import { scriptedModelFactory, type ModelFactory } from '../agents/workspaceAgents.js';
import { DEFAULT_OPENAI_COMPATIBLE_BASE_URL, originOf } from './endpoints.js';
import { OpenAICompatibleModel } from './openaiCompatible.js';

export { DEFAULT_OPENAI_COMPATIBLE_BASE_URL };

export interface OpenAICompatibleSettings {
  /** Default: https://api.openai.com/v1. */
  baseURL?: string;
  /** A getter is awaited before each request, so a key set later is used without a reload. */
  apiKey?: string | (() => Promise<string | undefined>);
  /** How a person sets the key, ending the message of a refused key. Default: the VS Code command. */
  apiKeyHint?: string;
}

export interface ProviderOptions {
  openaiCompatible?: OpenAICompatibleSettings;
}

export function providerModelFactory(options: ProviderOptions = {}): ModelFactory {
  return (reference, context) => {
    const colon = reference.indexOf(':');
    const provider = colon < 0 ? reference : reference.slice(0, colon);
    if (provider === 'scripted') return scriptedModelFactory(reference, context);
    if (provider === 'openai-compatible') {
      // Everything after the first colon: `openai-compatible:llama3.1:8b` is the model `llama3.1:8b`.
      const model = colon < 0 ? '' : reference.slice(colon + 1).trim();
      if (model === '') throw new ModelError(`model "${reference}": name the model after the colon, e.g. openai-compatible:gpt-4o-mini`);
      const settings = options.openaiCompatible ?? {};
      return new OpenAICompatibleModel({
        baseURL: settings.baseURL || DEFAULT_OPENAI_COMPATIBLE_BASE_URL,
        model,
        ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
        ...(settings.apiKeyHint !== undefined ? { apiKeyHint: settings.apiKeyHint } : {}),
      });
    }
    if (provider === 'vscode-lm') {
      throw new ModelError(`model "${reference}": the vscode-lm provider runs only inside VS Code; here use openai-compatible:<model> or scripted:<file>`);
    }
    throw new ModelError(`model "${reference}": unknown provider "${provider}"; use scripted:<file>, openai-compatible:<model> or vscode-lm:<vendor/family>`);
  };
}

/** The CLI's settings: AGENTPOLICY_BASE_URL, and AGENTPOLICY_API_KEY (else OPENAI_API_KEY, but only for OpenAI's own API). */
export function openAICompatibleFromEnv(env: NodeJS.ProcessEnv = process.env): OpenAICompatibleSettings {
  const baseURL = env['AGENTPOLICY_BASE_URL'] || undefined;
  // A key meant for OpenAI never goes to another server the environment points at.
  const openAIKey = isOpenAI(baseURL ?? DEFAULT_OPENAI_COMPATIBLE_BASE_URL) ? env['OPENAI_API_KEY'] : undefined;
  const apiKey = env['AGENTPOLICY_API_KEY'] || openAIKey || undefined;
  return {
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
    apiKeyHint: 'set the AGENTPOLICY_API_KEY environment variable (or OPENAI_API_KEY)',
  };
}

function isOpenAI(baseURL: string): boolean {
  try {
    return originOf(baseURL) === 'https://api.openai.com';
  } catch {
    return false;
  }
}
