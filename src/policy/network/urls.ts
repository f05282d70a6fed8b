// URLs as the `domains` and `urls` matchers read them: parsed with WHATWG's URL (Node's, the
// parser `builtin.fetch` sends with), then normalised so that one address has one spelling.
// Anything a parser could read two ways, or that names no network host, is `known: false`: no
// allow rule with `domains` or `urls` ever matches it, and every ask and deny rule with one does.
import { domainToASCII } from 'node:url';

/** A URL as the rules see it. */
export type UrlReading = KnownUrl | UnknownUrl;

export interface KnownUrl {
  known: true;
  /** As given (a command's word, an input's string). */
  text: string;
  /** The normalised URL: `scheme://host[:port]/path[?query]`, no user info, no fragment. */
  url: string;
  /** The normalised host: lower case, punycode, no trailing dot; IPv4 dotted, IPv6 in brackets. */
  host: string;
}

export interface UnknownUrl {
  known: false;
  text: string;
  /** Why it cannot be read, said in explanations. */
  why: string;
}

/** The schemes whose host names a place on the network, and that WHATWG parses the same way everywhere. */
export const NETWORK_SCHEMES: ReadonlySet<string> = new Set(['http', 'https', 'ws', 'wss', 'ftp']);

/** Longer than any address a tool needs: refused rather than parsed. */
export const MAX_URL_LENGTH = 8192;

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
// Characters different URL parsers (WHATWG, curl, a server) read differently, or that a parser
// silently drops: backslashes, blanks and control characters anywhere make the URL unknown.
const AMBIGUOUS = /[\\\s\u0000-\u001f\u007f]/;
const HOST_NAME = /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;
const IPV4 = /^(?:\d{1,3}\.){3}\d{1,3}$/;

export function unknownUrl(text: string, why: string): UnknownUrl {
  return { known: false, text, why };
}

/** Reads one URL (see above). Never throws. */
export function readUrl(text: string): UrlReading {
  if (text.length > MAX_URL_LENGTH) return unknownUrl(text.slice(0, 80) + '…', `longer than ${MAX_URL_LENGTH} characters`);
  const scheme = SCHEME.exec(text);
  if (!scheme) return unknownUrl(text, 'not an absolute URL (scheme://host…)');
  const name = scheme[1]!.toLowerCase();
  if (!NETWORK_SCHEMES.has(name)) return unknownUrl(text, `"${name}:" is not a network scheme (${[...NETWORK_SCHEMES].join(', ')})`);
  if (AMBIGUOUS.test(text)) return unknownUrl(text, 'it holds a backslash, a blank or a control character, which URL parsers read differently');
  const rest = text.slice(scheme[0].length);
  // `https:///host`: WHATWG skips the extra slashes, other parsers read an empty host.
  if (rest.startsWith('/')) return unknownUrl(text, 'more than two slashes after the scheme, which URL parsers read differently');
  const authority = rest.slice(0, authorityEnd(rest));
  // User info (`good.com@evil.com`) is read differently by different parsers and carries
  // credentials; a percent sign in the host is decoded by some parsers and not by others.
  if (authority.includes('@')) return unknownUrl(text, 'it carries user info (user@host), which is never matched');
  if (authority.includes('%')) return unknownUrl(text, 'its host is percent-encoded');
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return unknownUrl(text, 'it does not parse as a URL');
  }
  if (parsed.username !== '' || parsed.password !== '') return unknownUrl(text, 'it carries user info (user@host), which is never matched');
  const host = normaliseHost(parsed.hostname);
  if (host === undefined) return unknownUrl(text, `its host "${parsed.hostname}" is not a host name or IP address`);
  const port = parsed.port === '' ? '' : `:${parsed.port}`;
  const url = `${parsed.protocol}//${host}${port}${normaliseEscapes(parsed.pathname || '/')}${normaliseEscapes(parsed.search)}`;
  return { known: true, text, url, host };
}

/** Where the authority ends: at the first `/`, `?` or `#`. */
function authorityEnd(rest: string): number {
  const m = /[/?#]/.exec(rest);
  return m ? m.index : rest.length;
}

/**
 * A WHATWG host name made canonical: one trailing dot taken off, every label checked (no empty
 * labels, letters, digits, `-` and `_` only, which WHATWG's IDNA output already is), or an
 * IPv4 or bracketed IPv6 literal. Undefined when it is none of those.
 */
export function normaliseHost(hostname: string): string | undefined {
  let host = hostname.toLowerCase();
  if (host.startsWith('[')) return /^\[[0-9a-f:.]+\]$/.test(host) ? host : undefined;
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host.length === 0 || host.length > 253) return undefined;
  if (IPV4.test(host)) return host.split('.').every((o) => Number(o) <= 255) ? host : undefined;
  return HOST_NAME.test(host) ? host : undefined;
}

/**
 * Percent escapes of unreserved characters decoded (`%61` → `a`), the others in upper case
 * (RFC 3986, 6.2.2): `/%61dmin` and `/admin` are one path to a server, so they are one to a rule.
 */
function normaliseEscapes(part: string): string {
  return part.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/**
 * A host name pattern's literal labels made canonical like a URL's host (lower case, punycode);
 * undefined when a label is not a host name label. `*` stays as written.
 */
export function normaliseHostPattern(pattern: string): string | undefined {
  if (!pattern.includes('*')) {
    const read = readUrl(`http://${pattern.includes(':') && !pattern.startsWith('[') ? `[${pattern}]` : pattern}/`);
    return read.known && read.url === `http://${read.host}/` ? read.host : undefined;
  }
  let body = pattern;
  if (body.endsWith('.')) body = body.slice(0, -1);
  const labels = body.split('.');
  const out: string[] = [];
  for (const label of labels) {
    if (label.includes('*')) {
      if (!/^[A-Za-z0-9_*-]+$/.test(label)) return undefined;
      out.push(label.toLowerCase());
      continue;
    }
    const ascii = domainToASCII(label);
    if (ascii === '' || !/^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/.test(ascii)) return undefined;
    out.push(ascii);
  }
  return out.join('.');
}

/** Why a view's URLs did not match a rule with `domains` or `urls`: what was read of each, for explanations. */
export function urlsFailure(urls: readonly UrlReading[]): string {
  if (urls.length === 0) return 'the call has no URL';
  const shown = urls.slice(0, 3).map((u) => (u.known ? u.url : `${JSON.stringify(u.text.length > 60 ? `${u.text.slice(0, 60)}…` : u.text)} cannot be read: ${u.why}`));
  return `${urls.length === 1 ? 'its URL' : 'its URLs'}: ${shown.join('; ')}${urls.length > 3 ? `; and ${urls.length - 3} more` : ''}`;
}
