// URLs as the network rules read them (urls.ts, urlMatchers.ts, commandUrls.ts): one spelling per
// address, anything read two ways unknown, host and URL globs that never reach outside what they name.
import assert from 'node:assert/strict';
import { commandUrls } from '../../src/policy/network/commandUrls.js';
import { urlValues } from '../../src/policy/network/callUrls.js';
import { GlobError } from '../../src/policy/globs/globs.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { splitCommand } from '../../src/policy/shell/shellSplit.js';
import { compileDomainGlob, compileUrlGlob } from '../../src/policy/network/urlMatchers.js';
import { readUrl } from '../../src/policy/network/urls.js';

/** [as written, normalised URL and host, or undefined when it must be unknown] */
const TRICKY: ReadonlyArray<readonly [string, { url: string; host: string } | undefined]> = [
  ['https://example.com', { url: 'https://example.com/', host: 'example.com' }],
  ['HTTPS://EXAMPLE.COM./A', { url: 'https://example.com/A', host: 'example.com' }],
  ['https://example.com:443/x', { url: 'https://example.com/x', host: 'example.com' }],
  ['http://example.com:8080/x', { url: 'http://example.com:8080/x', host: 'example.com' }],
  ['https://example.com/a/./b/../c', { url: 'https://example.com/a/c', host: 'example.com' }],
  ['https://example.com/a/%2e%2e/admin', { url: 'https://example.com/admin', host: 'example.com' }],
  ['https://example.com/%61dmin?q=%7e&r=%2f', { url: 'https://example.com/admin?q=~&r=%2F', host: 'example.com' }],
  ['https://example.com/x#fragment', { url: 'https://example.com/x', host: 'example.com' }],
  ['http://2130706433/', { url: 'http://127.0.0.1/', host: '127.0.0.1' }],
  ['http://0x7f.0.0.1/', { url: 'http://127.0.0.1/', host: '127.0.0.1' }],
  ['http://[::1]:8080/', { url: 'http://[::1]:8080/', host: '[::1]' }],
  ['http://[0:0:0:0:0:0:0:1]/', { url: 'http://[::1]/', host: '[::1]' }],
  ['https://bücher.de/', { url: 'https://xn--bcher-kva.de/', host: 'xn--bcher-kva.de' }],
  ['https://BÜCHER.de/', { url: 'https://xn--bcher-kva.de/', host: 'xn--bcher-kva.de' }],
  ['https://ｅxample．com/', { url: 'https://example.com/', host: 'example.com' }],
  ['wss://example.com/socket', { url: 'wss://example.com/socket', host: 'example.com' }],
  ['https://good.com@evil.com/', undefined],
  ['https://user:pass@good.com/', undefined],
  ['https://evil.com\\@good.com/', undefined],
  ['https:///evil.com@good.com/', undefined],
  ['https:////good.com/', undefined],
  ['HTTPS://[::ffff:127.0.0.1]/', { url: 'https://[::ffff:7f00:1]/', host: '[::ffff:7f00:1]' }],
  ['https://аpple.com/', { url: 'https://xn--pple-43d.com/', host: 'xn--pple-43d.com' }],
  ['https://evil%2ecom/', undefined],
  ['https://%65vil.com/', undefined],
  ['https://a..com/', undefined],
  ['https://.a.com/', undefined],
  ['https://exa mple.com/', undefined],
  ['https://example.com/\nx', undefined],
  ['http://256.1.1.1/', undefined],
  ['http:example.com', undefined],
  ['//example.com/', undefined],
  ['example.com', undefined],
  ['file:///etc/passwd', undefined],
  ['data:text/html,<script>', undefined],
  ['javascript:alert(1)', undefined],
  ['ssh://git@github.com/x', undefined],
  ['foo://example.com/', undefined],
  ['', undefined],
];

describe('URLs: normalisation', () => {
  for (const [text, expected] of TRICKY) {
    it(`${JSON.stringify(text)} → ${expected ? expected.url : 'unknown'}`, () => {
      const read = readUrl(text);
      if (expected === undefined) {
        assert.equal(read.known, false, JSON.stringify(read));
        if (!read.known) assert.ok(read.why.length > 0);
      } else {
        assert.ok(read.known, JSON.stringify(read));
        assert.equal(read.url, expected.url);
        assert.equal(read.host, expected.host);
      }
    });
  }

  it('a URL longer than the limit is unknown', () => {
    assert.equal(readUrl(`https://example.com/${'a'.repeat(9000)}`).known, false);
  });
});

describe('URLs: domain globs', () => {
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ['example.com', 'example.com', true],
    ['example.com', 'api.example.com', false],
    ['*.example.com', 'api.example.com', true],
    ['*.example.com', 'a.b.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'evilexample.com', false],
    ['*.example.com', 'example.com.evil.net', false],
    ['*', 'anything.at.all', true],
    ['*', '127.0.0.1', true],
    ['api-*.example.com', 'api-eu.example.com', true],
    ['api-*.example.com', 'api-eu.x.example.com', false],
    ['*.Bücher.DE', 'shop.xn--bcher-kva.de', true],
    ['Example.COM.', 'example.com', true],
    ['127.0.0.1', '127.0.0.1', true],
    ['2130706433', '127.0.0.1', true],
    ['[::1]', '[::1]', true],
    ['::1', '[::1]', true],
  ];
  for (const [pattern, host, expected] of cases) {
    it(`${pattern} ${expected ? 'matches' : 'does not match'} ${host}`, () => {
      assert.equal(compileDomainGlob(pattern).test(host), expected);
    });
  }
  for (const bad of ['https://example.com', 'example.com/x', 'example.com:443', 'a..b', 'user@example.com', '*.', 'exa mple.com', '**.a.com']) {
    it(`${JSON.stringify(bad)} is a bad glob`, () => {
      assert.throws(() => compileDomainGlob(bad), GlobError);
    });
  }
});

describe('URLs: url globs', () => {
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ['https://example.com/docs/**', 'https://example.com/docs/a/b?x=1', true],
    ['https://example.com/docs/*', 'https://example.com/docs/a', true],
    ['https://example.com/docs/*', 'https://example.com/docs/a/b', false],
    ['https://example.com', 'https://example.com/', true],
    ['https://example.com', 'https://example.com/x', false],
    ['https://*.example.com/**', 'https://api.example.com/x', true],
    ['https://*.example.com/**', 'https://example.com/x', false],
    ['https://*.example.com/**', 'https://api.example.com.evil.net/x', false],
    ['https://*.example.com/**', 'https://api.example.com:8443/x', false],
    ['https://*.example.com:*/**', 'https://api.example.com:8443/x', true],
    ['*://example.com/**', 'http://example.com/x', true],
    ['https://example.com/search?q=*', 'https://example.com/search?q=cats', true],
    ['https://example.com/search?q=*', 'https://example.com/searchXq=cats', false],
    ['HTTPS://EXAMPLE.com/A/**', 'https://example.com/A/b', true],
    ['https://bücher.de/**', 'https://xn--bcher-kva.de/x', true],
  ];
  for (const [pattern, url, expected] of cases) {
    it(`${pattern} ${expected ? 'matches' : 'does not match'} ${url}`, () => {
      assert.equal(compileUrlGlob(pattern).test(url), expected);
    });
  }
  for (const bad of ['example.com/**', 'https://**.example.com/', 'https://u@example.com/', 'https:///x', 'https://a.com:x/']) {
    it(`${JSON.stringify(bad)} is a bad glob`, () => {
      assert.throws(() => compileUrlGlob(bad), GlobError);
    });
  }
});

describe('URLs: the URL arguments of a call', () => {
  const shown = (input: unknown, declared?: readonly string[]): string[] =>
    urlValues(input, declared).map((r) => (r.known ? r.url : `?${r.text}`));

  it('reads url, urls, href and endpoint, and network URLs in uri', () => {
    assert.deepEqual(shown({ url: 'https://a.com', urls: ['https://b.com/x', 'https://c.com'], href: 'https://d.com', endpoint: 'https://e.com' }), [
      'https://a.com/', 'https://b.com/x', 'https://c.com/', 'https://d.com/', 'https://e.com/',
    ]);
    assert.deepEqual(shown({ uri: 'https://a.com/x' }), ['https://a.com/x']);
  });

  it('reads any other field named like a URL (baseUrl, webhook_url, imageUrls)', () => {
    assert.deepEqual(shown({ baseUrl: 'https://a.com', webhook_url: 'https://b.com', imageUrls: ['https://c.com'], title: 'https://d.com' }), ['https://a.com/', 'https://b.com/', 'https://c.com/']);
  });

  it('a uri that is a path or of another scheme is not a URL (the path rules read it)', () => {
    assert.deepEqual(shown({ uri: 'docs/readme.md' }), []);
    assert.deepEqual(shown({ uri: 'file:///etc/passwd' }), []);
    assert.deepEqual(shown({ uris: ['test://static/1'] }), []);
  });

  it('a URL argument that is not a string, or does not parse, is unknown', () => {
    assert.deepEqual(shown({ url: 42 }), ['?(url: a value that is not a string)']);
    assert.deepEqual(shown({ url: 'not a url' }), ['?not a url']);
  });

  it('declared URL arguments replace the conventional fields', () => {
    assert.deepEqual(shown({ url: 'https://a.com', target: 'https://b.com' }, ['target']), ['https://b.com/']);
  });
});

describe('URLs: curl and wget in commands', () => {
  before(async () => {
    await initShellParser();
  });

  const urlsOf = (command: string): string[][] =>
    splitCommand(command).commands.map((c) => (commandUrls(c) ?? []).map((r) => (r.known ? r.url : `?${r.text}`)));

  const cases: ReadonlyArray<readonly [string, string[]]> = [
    ['curl https://a.com/x', ['https://a.com/x']],
    ['curl -sSL -o out.html https://a.com/x', ['https://a.com/x']],
    ['curl -H "Accept: application/json" -d @body.json https://a.com/x', ['https://a.com/x']],
    ['curl --output=page.html --url https://a.com/x', ['https://a.com/x']],
    ['curl example.com/page', ['http://example.com/page']],
    ['curl localhost:8080/x', ['http://localhost:8080/x']],
    ['curl https://a.com https://b.com', ['https://a.com/', 'https://b.com/']],
    ['curl -x http://proxy.evil:8080 https://a.com', ['http://proxy.evil:8080/', 'https://a.com/']],
    ['curl -xproxy.evil:3128 https://a.com', ['http://proxy.evil:3128/', 'https://a.com/']],
    ['curl -- -weird.example', ['?-weird.example']],
    ['curl $U', ['?$U']],
    ['curl "https://a.com/$PATH_PART"', ['?"https://a.com/$PATH_PART"']],
    ['curl -K urls.txt', ['?-K urls.txt']],
    ['curl --resolve a.com:443:6.6.6.6 https://a.com', ['?--resolve a.com:443:6.6.6.6', 'https://a.com/']],
    ['curl "https://{a,b}.com/"', ['?https://{a,b}.com/']],
    ['curl file:/etc/passwd', ['?file:/etc/passwd']],
    ['curl https://good.com@evil.com/', ['?https://good.com@evil.com/']],
    ['https_proxy=http://evil.net curl https://a.com', ['http://evil.net/', 'https://a.com/']],
    ['wget -qO- https://a.com/x', ['https://a.com/x']],
    ['wget -O out -i list.txt', ['?-i list.txt']],
    ['wget -nv https://a.com/x', ['https://a.com/x']],
    ['wget --inp list.txt', ['?--input-file list.txt']],
    ['wget --exe http_proxy=http://evil.net https://a.com/', ['?--execute http_proxy=http://evil.net', 'https://a.com/']],
    ['curl --output-d out https://a.com/', ['https://a.com/']],
    ['curl --version', []],
    ['wget --help', []],
    ['curl -s', ['?curl -s']],
  ];
  for (const [command, expected] of cases) {
    it(`${command} → ${JSON.stringify(expected)}`, () => {
      // The command's own part (the first); an unwrapped part repeats it without the assignments.
      assert.deepEqual(urlsOf(command)[0], expected);
    });
  }

  it('a program named by its path, and one run by a wrapper, are read too', () => {
    assert.deepEqual(urlsOf('/usr/bin/curl https://a.com'), [['https://a.com/'], ['https://a.com/']]);
    assert.deepEqual(urlsOf('sudo curl https://a.com'), [[], ['https://a.com/']]);
    assert.deepEqual(urlsOf('echo https://evil.example | xargs curl'), [[], [], ['?curl']], 'xargs gives curl its URL from stdin: unknown');
  });

  it('other programs have no URL arguments', () => {
    const c = splitCommand('git clone https://a.com/x').commands[0]!;
    assert.equal(commandUrls(c), undefined);
  });
});
