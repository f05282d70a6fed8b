// Which server a base URL names: keys are kept and handed out per origin. No dependencies, so
// the extension can use it at activation without loading a provider.

/** The API root `openai-compatible:` models use when none is configured. */
export const DEFAULT_OPENAI_COMPATIBLE_BASE_URL = 'https://api.openai.com/v1';

/** `https://api.openai.com/v1` → `https://api.openai.com`; throws for anything but an http(s) URL. */
export function originOf(baseURL: string): string {
  let url: URL;
  try {
    url = new URL(baseURL.trim());
  } catch {
    throw new Error(`"${baseURL}" is not a URL: use the API root, e.g. https://api.openai.com/v1`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`"${baseURL}" must be an http or https URL, e.g. https://api.openai.com/v1`);
  // The origin leaves out the path, any user:password@ and a default port, and lower-cases the host.
  return url.origin;
}
