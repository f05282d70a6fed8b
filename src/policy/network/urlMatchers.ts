// The `domains` and `urls` matchers: host globs and URL globs, compiled once, tested against
// the URLs a call's view holds (urls.ts reads them). Only known URLs are ever tested here;
// what an unknown URL matches is decided by the rule's decision (compile.ts).
import { GlobError } from '../globs/globs.js';
import { normaliseHostPattern, type KnownUrl } from './urls.js';

/** A list of `domains` or `urls` globs with `!` excludes: a URL matches a positive one and no exclude. */
export interface UrlMatcher {
  test(url: KnownUrl): boolean;
  /** The rule's list, as written. */
  source: readonly string[];
  /** The positive patterns in their canonical form (lint compares these). */
  positives: readonly string[];
  negatives: readonly string[];
}

type HostTest = (host: string) => boolean;

/**
 * One host glob. `*` alone matches every host; a leading `*.` matches one or more labels, so
 * `*.example.com` matches `api.example.com` and `a.b.example.com` but never `example.com` itself
 * (list both for both); any other `*` matches within one label (`api-*.example.com`). Literal
 * labels are compared after the same normalisation as a URL's host (lower case, punycode).
 */
export function compileDomainGlob(pattern: string): { test: HostTest; canonical: string } {
  if (pattern === '*') return { test: () => true, canonical: '*' };
  const sub = pattern.startsWith('*.');
  let body = sub ? pattern.slice(2) : pattern;
  // An IPv6 address may be written without its brackets.
  if (/^[0-9A-Fa-f:.]+$/.test(body) && body.includes(':')) body = `[${body}]`;
  if (body.includes('**')) throw new GlobError(`domain ${JSON.stringify(pattern)}: "**" means nothing more than "*" here; write "*." for sub-domains`);
  if (/[/:@?#%\\\s]/.test(body) && !body.startsWith('[')) throw new GlobError(`domain ${JSON.stringify(pattern)} is not a host name glob: write the host alone (no scheme, port or path; "urls" matches those)`);
  if (body.length === 0) throw new GlobError(`domain ${JSON.stringify(pattern)} names no host`);
  const canonicalBody = normaliseHostPattern(body);
  if (canonicalBody === undefined) throw new GlobError(`domain ${JSON.stringify(pattern)} is not a host name glob (labels of letters, digits, "-" and "_", a leading "*." for sub-domains, an IP address)`);
  const canonical = sub ? `*.${canonicalBody}` : canonicalBody;
  if (!canonicalBody.includes('*')) {
    if (sub) {
      const suffix = `.${canonicalBody}`;
      return { test: (host) => host.length > suffix.length && host.endsWith(suffix), canonical };
    }
    return { test: (host) => host === canonicalBody, canonical };
  }
  // `*` inside labels: within one label only, so no `*` can reach outside the written suffix.
  const labels = canonicalBody.split('.').map((l) => l.split('*').map(escapeRegex).join('[a-z0-9_-]*'));
  const re = new RegExp(`^${sub ? '(?:[a-z0-9_-]+\\.)+' : ''}${labels.join('\\.')}$`);
  return { test: (host) => re.test(host), canonical };
}

/**
 * One URL glob over the normalised URL (`scheme://host[:port]/path[?query]`, no user info, no
 * fragment): `**` matches any run of characters, `*` any run without `/`; every other character
 * (`?` included) is itself. The scheme and host are written as in a normalised URL (lower case,
 * punycode; they are made so here); `**` in the host is refused, since it could cross into the
 * path. A pattern with nothing after the host means its root, `/`.
 */
export function compileUrlGlob(pattern: string): { test: (url: string) => boolean; canonical: string } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*|\*):\/\/([^/?#]*)(.*)$/.exec(pattern);
  if (!m) throw new GlobError(`url ${JSON.stringify(pattern)} must start with scheme://host (a scheme may be *)`);
  const scheme = m[1]!.toLowerCase();
  const authority = m[2]!;
  if (authority.includes('**')) throw new GlobError(`url ${JSON.stringify(pattern)}: "**" in the host could match a path; use "*." for sub-domains`);
  if (authority.includes('@')) throw new GlobError(`url ${JSON.stringify(pattern)}: user info is never part of a normalised URL`);
  const portAt = authority.startsWith('[') ? authority.indexOf(']:') + 1 : authority.lastIndexOf(':');
  const hostPart = portAt > 0 ? authority.slice(0, portAt) : authority;
  const port = portAt > 0 ? authority.slice(portAt) : '';
  if (port !== '' && !/^:(\d+|\*)$/.test(port)) throw new GlobError(`url ${JSON.stringify(pattern)}: the port must be digits or *`);
  if (hostPart === '') throw new GlobError(`url ${JSON.stringify(pattern)} names no host`);
  const host = hostPart === '*' ? '*' : normaliseHostPattern(hostPart);
  if (host === undefined) throw new GlobError(`url ${JSON.stringify(pattern)}: "${hostPart}" is not a host name glob`);
  const rest = m[3] === '' ? '/' : m[3]!;
  const canonical = `${scheme}://${host}${port}${rest}`;
  // In the host, `*` stays within the host (no `/`, `:` into the port, `.` only as written).
  const hostRe = host.split('*').map(escapeRegex).join('[a-z0-9_.-]*');
  const schemeRe = scheme === '*' ? '[a-z][a-z0-9+.-]*' : escapeRegex(scheme);
  const portRe = port === ':*' ? '(?::\\d+)?' : escapeRegex(port);
  const restRe = rest.split('**').map((piece) => piece.split('*').map(escapeRegex).join('[^/]*')).join('.*');
  const re = new RegExp(`^${schemeRe}://${hostRe}${portRe}${restRe}$`);
  return { test: (url) => re.test(url), canonical };
}

export function compileDomainSet(patterns: readonly string[]): UrlMatcher {
  return compileSet(patterns, (p) => {
    const g = compileDomainGlob(p);
    return { test: (u: KnownUrl) => g.test(u.host), canonical: g.canonical };
  });
}

export function compileUrlSet(patterns: readonly string[]): UrlMatcher {
  return compileSet(patterns, (p) => {
    const g = compileUrlGlob(p);
    return { test: (u: KnownUrl) => g.test(u.url), canonical: g.canonical };
  });
}

function compileSet(patterns: readonly string[], compile: (p: string) => { test: (u: KnownUrl) => boolean; canonical: string }): UrlMatcher {
  const include: ((u: KnownUrl) => boolean)[] = [];
  const exclude: ((u: KnownUrl) => boolean)[] = [];
  const positives: string[] = [];
  const negatives: string[] = [];
  for (const p of patterns) {
    const negative = p.startsWith('!');
    const g = compile(negative ? p.slice(1) : p);
    (negative ? exclude : include).push(g.test);
    (negative ? negatives : positives).push(g.canonical);
  }
  return {
    test: (u) => include.some((t) => t(u)) && !exclude.some((t) => t(u)),
    source: patterns,
    positives,
    negatives,
  };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
