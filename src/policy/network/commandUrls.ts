// The URL arguments of a `curl` or `wget` simple command, read the way those programs read their
// command line: options that take a value skip it (so `-o page.html` is not a URL), the values of
// the options that name where to connect (`--url`, `-x/--proxy`, `--doh-url`, …) are URLs too,
// and options that take the address from somewhere the text does not show (`-K/--config`,
// `--resolve`, `--connect-to`, `--unix-socket`, wget's `-i` and `-e`) give an unknown URL, as does
// a word only known when the command runs (`curl $U`). An option this table does not know is
// taken to have no value: its value, if it has one, is then read as one more URL, which can only
// keep an allow from matching, never hide a URL.
import { isStaticWord, programIndex } from '../shell/shellDynamic.js';
import type { SimpleCommand } from '../shell/shellCommand.js';
import { readUrl, unknownUrl, type UrlReading } from './urls.js';

interface OptionTable {
  /** Short option letters that take a value. */
  shortValue: ReadonlySet<string>;
  /** Long options (without `--`) that take a value. */
  longValue: ReadonlySet<string>;
  /** Options whose value is where to connect: read as a URL. */
  destination: ReadonlySet<string>;
  /** Options that take the address from elsewhere (a file, a resolver): an unknown URL. */
  elsewhere: ReadonlySet<string>;
}

const words = (text: string): Set<string> => new Set(text.trim().split(/\s+/));

const CURL: OptionTable = {
  shortValue: new Set('AbcCdDeEFHKmoPQrtTuUwxXyYz'),
  longValue: words(`
    abstract-unix-socket alt-svc aws-sigv4 cacert capath cert cert-type ciphers config connect-timeout connect-to
    continue-at cookie cookie-jar create-file-mode crlfile curves data data-ascii data-binary data-raw data-urlencode
    delegation dns-interface dns-ipv4-addr dns-ipv6-addr dns-servers doh-url dump-header ech egd-file engine
    etag-compare etag-save expect100-timeout form form-string ftp-account ftp-alternative-to-user ftp-method ftp-port
    ftp-ssl-ccc-mode happy-eyeballs-timeout-ms haproxy-clientip header hostpubmd5 hostpubsha256 hsts interface ip-tos
    ipfs-gateway json keepalive-cnt keepalive-time key key-type krb libcurl limit-rate local-port login-options
    mail-auth mail-from mail-rcpt max-filesize max-redirs max-time netrc-file noproxy oauth2-bearer output output-dir
    parallel-max pass pinnedpubkey preproxy proto proto-default proto-redir proxy proxy-cacert proxy-capath proxy-cert
    proxy-cert-type proxy-ciphers proxy-crlfile proxy-header proxy-key proxy-key-type proxy-pass proxy-pinnedpubkey
    proxy-service-name proxy-tls13-ciphers proxy-tlsauthtype proxy-tlspassword proxy-tlsuser proxy-user proxy1.0
    pubkey quote random-file range rate referer request request-target resolve retry retry-delay retry-max-time
    sasl-authzid service-name socks4 socks4a socks5 socks5-gssapi-service socks5-hostname speed-limit speed-time
    stderr telnet-option tftp-blksize time-cond tls-max tls13-ciphers tlsauthtype tlspassword tlsuser trace
    trace-ascii trace-config unix-socket upload-file url url-query user user-agent variable write-out`),
  destination: words('url x proxy preproxy proxy1.0 socks4 socks4a socks5 socks5-hostname doh-url ipfs-gateway'),
  elsewhere: words('K config resolve connect-to unix-socket abstract-unix-socket dns-servers variable'),
};

const WGET: OptionTable = {
  shortValue: new Set('oaeiBtOTwQPUlARDXIn'),
  longValue: words(`
    output-file append-output execute config input-file base tries output-document timeout dns-timeout connect-timeout
    read-timeout wait waitretry quota bind-address bind-dns-address limit-rate directory-prefix user-agent level accept
    reject accept-regex reject-regex regex-type domains exclude-domains exclude-directories include-directories user
    password http-user http-password ftp-user ftp-password proxy-user proxy-password header post-data post-file
    body-data body-file method referer load-cookies save-cookies certificate certificate-type private-key
    private-key-type ca-certificate ca-directory crl-file secure-protocol ciphers restrict-file-names cut-dirs
    default-page max-redirect progress local-encoding remote-encoding report-speed use-askpass compression hsts-file
    warc-file warc-header warc-max-size warc-dedup warc-tempdir follow-tags ignore-tags pinnedpubkey prefer-family
    rejected-log backups retry-on-http-error dns-servers`),
  destination: words('B base'),
  elsewhere: words('e execute i input-file config dns-servers'),
};

const TABLES: ReadonlyMap<string, OptionTable> = new Map([['curl', CURL], ['wget', WGET]]);

/** Environment assignments before the program that send its requests elsewhere. */
const PROXY_VARIABLE = /^(?:https?|all|ftp)_proxy=/i;

/**
 * The URLs a `curl` or `wget` simple command reaches, in order; undefined when the command runs
 * another program. One with no URL in its text has an unknown one, unless it only prints about
 * itself (`--version`, `--help`).
 */
export function commandUrls(cmd: SimpleCommand): UrlReading[] | undefined {
  const at = programIndex(cmd.words);
  if (at >= cmd.words.length || !isStaticWord(cmd, at)) return undefined;
  const table = TABLES.get(basename(cmd.words[at]!));
  if (table === undefined) return undefined;
  const out: UrlReading[] = [];
  for (let k = 0; k < at; k++) {
    const word = cmd.words[k]!;
    if (PROXY_VARIABLE.test(word)) out.push(isStaticWord(cmd, k) ? programUrl(word.slice(word.indexOf('=') + 1)) : unknownUrl(word, 'a proxy set by an expansion'));
  }
  const dash = (option: string): string => (option.length === 1 ? '-' : '--') + option;
  const value = (option: string, text: string, dynamic = false): void => {
    if (table.elsewhere.has(option)) out.push(unknownUrl(`${dash(option)} ${text}`, `${dash(option)} takes where to connect from elsewhere than the command's text`));
    else if (table.destination.has(option)) out.push(dynamic ? unknownUrl(text, 'an expansion, known only when it runs') : programUrl(text));
  };
  let k = at + 1;
  // The option's value is the next word.
  const takeNext = (option: string): void => {
    k++;
    value(option, cmd.words[k]!, !isStaticWord(cmd, k));
  };
  let endOfOptions = false;
  for (; k < cmd.words.length; k++) {
    const word = cmd.words[k]!;
    if (!isStaticWord(cmd, k)) {
      // An expansion could be an option, a URL, or both: unknown.
      out.push(unknownUrl(word, 'an expansion, known only when it runs'));
      continue;
    }
    if (endOfOptions || !word.startsWith('-') || word === '-') {
      out.push(programUrl(word));
      continue;
    }
    if (word === '--') {
      endOfOptions = true;
      continue;
    }
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      const name = longOption(table, eq === -1 ? word.slice(2) : word.slice(2, eq));
      if (name.startsWith('expand-')) {
        // curl's --expand-<option> fills in variables: its value is known only when it runs.
        out.push(unknownUrl(word, `--${name} fills in variables when it runs`));
        if (eq === -1) k++;
        continue;
      }
      if (!table.longValue.has(name)) continue;
      if (eq !== -1) value(name, word.slice(eq + 1));
      else if (k + 1 < cmd.words.length) takeNext(name);
      continue;
    }
    // A cluster of short options: the first that takes a value takes the rest of the word, or the next word.
    for (let j = 1; j < word.length; j++) {
      const letter = word[j]!;
      if (!table.shortValue.has(letter)) continue;
      const attached = word.slice(j + 1);
      if (attached !== '') value(letter, attached);
      else if (k + 1 < cmd.words.length) takeNext(letter);
      break;
    }
  }
  // No URL in the text: curl and wget only print something (`--version`, `--help`), or the
  // address comes from where the text does not show (`… | xargs curl`, a config file).
  if (out.length === 0 && !cmd.words.slice(at + 1).some((w) => INFO_ONLY.has(w))) {
    out.push(unknownUrl(cmd.words.slice(at).join(' '), 'no URL in the text: the address comes from elsewhere (xargs, stdin, a config file)'));
  }
  return out;
}

/** Options with which curl or wget only prints about itself. */
const INFO_ONLY: ReadonlySet<string> = new Set(['--version', '-V', '--help', '-h', '--manual', '-M']);

/**
 * A URL as curl and wget take it: with a scheme as written, else `http://` in front (both
 * default to it). A word curl could read as another scheme (`file:/x`), or with its URL
 * globbing (`{a,b}`, `[1-3]`), or naming a file of URLs (`@list`), is unknown.
 */
function programUrl(word: string): UrlReading {
  if (/[{}[\]]/.test(word)) return unknownUrl(word, 'curl expands {…} and […] in URLs into several addresses');
  if (word.startsWith('@')) return unknownUrl(word, 'a file of URLs');
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(word)) return readUrl(word);
  const colon = /^[^/]*?:([^/]*)/.exec(word);
  if (colon && !/^\d+$/.test(colon[1]!)) return unknownUrl(word, 'it could be read as a scheme other than http');
  const read = readUrl(`http://${word}`);
  return read.known ? read : unknownUrl(word, read.why);
}

/**
 * A long option as the program reads it: itself, or the one option it is a unique prefix of
 * (getopt_long, and curl before 8, take `--inp` for `--input-file`).
 */
function longOption(table: OptionTable, name: string): string {
  if (table.longValue.has(name) || name.length === 0) return name;
  let found: string | undefined;
  for (const option of table.longValue) {
    if (!option.startsWith(name)) continue;
    if (found !== undefined) return name; // ambiguous: the program refuses it
    found = option;
  }
  return found ?? name;
}

function basename(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash === -1 ? word : word.slice(slash + 1);
}
