// A call's URLs (policy-format.md addition, "URL arguments"): the values of its tool's declared
// URL arguments, else of the conventional URL fields; and for a command, the URL arguments of
// each `curl` and `wget` simple command (commandUrls.ts).
import { readUrl, unknownUrl, type UrlReading } from './urls.js';

/**
 * Input fields read as URLs when a tool declares no URL arguments of its own, with every other
 * top-level field whose name ends in `url` or `urls` (`baseUrl`, `webhook_url`). `uri` and `uris`
 * hold paths as often as URLs (it is a path field too): only a value that starts with a network
 * scheme (`https://…`) is a URL there.
 */
export const CONVENTIONAL_URL_FIELDS = ['url', 'urls', 'uri', 'uris', 'href', 'endpoint'] as const;

/** The fields of an undeclared tool's input read as URLs: the conventional ones, then those named like one. */
function conventionalFields(record: Record<string, unknown>): string[] {
  const named = Object.keys(record).filter((k) => /urls?$/i.test(k) && !(CONVENTIONAL_URL_FIELDS as readonly string[]).includes(k));
  return [...CONVENTIONAL_URL_FIELDS, ...named];
}

const MAYBE_PATH_FIELDS: ReadonlySet<string> = new Set(['uri', 'uris']);
const NETWORK_PREFIX = /^(?:https?|wss?|ftp):/i;

/** The URLs named by a call's input, read; a value that is not a string is an unknown URL. */
export function urlValues(input: unknown, declared: readonly string[] | undefined): UrlReading[] {
  const out: UrlReading[] = [];
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return out;
  const record = input as Record<string, unknown>;
  for (const field of declared ?? conventionalFields(record)) {
    if (!Object.prototype.hasOwnProperty.call(record, field)) continue;
    const value = record[field];
    if (value === undefined || value === null) continue;
    const onlyNetwork = declared === undefined && MAYBE_PATH_FIELDS.has(field);
    const take = (item: unknown): void => {
      if (typeof item === 'string') {
        if (!onlyNetwork || NETWORK_PREFIX.test(item)) out.push(readUrl(item));
      } else if (!onlyNetwork) out.push(unknownUrl(`(${field}: a value that is not a string)`, 'a URL argument that is not a string'));
    };
    if (Array.isArray(value)) value.forEach(take);
    else take(value);
  }
  return out;
}
