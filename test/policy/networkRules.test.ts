// Network rules: the `domains` and `urls` matchers over the URL arguments of builtin.fetch, MCP
// and other tools, and over curl/wget in commands; each URL a part of its own; unknown URLs
// never allowed and always taken by ask and deny rules; the sandbox's network follows the rule.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import fc from 'fast-check';
import type { ToolCall } from '../../src/policy/rules/call.js';
import type { DecideOptions, PolicyDecision } from '../../src/policy/rules/decision.js';
import { lintShadowed } from '../../src/policy/checking/lint.js';
import { covers } from '../../src/policy/rules/ruleCoverage.js';
import { looseningDiff } from '../../src/policy/editing/loosening.js';
import { runInlineTests } from '../../src/policy/checking/inlineTests.js';
import { loadPolicyText, Policy, type PolicyLayer } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { ruleSuggestions } from '../../src/policy/editing/ruleSuggestions.js';
import { insertRuleEdit } from '../../src/policy/editing/ruleTextEdits.js';
import { readUrl } from '../../src/policy/network/urls.js';

function layer(policy: object): PolicyLayer {
  const l = loadPolicyText(JSON.stringify({ version: 1, ...policy }, null, 2), '.agentpolicy.jsonc', 'workspace');
  assert.equal(l.valid, true, JSON.stringify(l.diagnostics));
  return l;
}

const OPTIONS: DecideOptions = { workspaceFolder: os.tmpdir(), followSymlinks: false, sandbox: true };

function decide(policy: object, call: ToolCall, options: Partial<DecideOptions> = {}): PolicyDecision {
  return new Policy({ workspace: layer(policy) }).decide(call, { ...OPTIONS, ...options });
}

const fetchCall = (input: object): ToolCall => ({ tool: { id: 'builtin.fetch', kind: 'builtin', annotations: { readOnlyHint: true } }, input, agent: 'main' });
const run = (command: string): ToolCall => ({ tool: { id: 'builtin.run_command', commandArg: 'command', pathArgs: ['cwd'] }, input: { command }, agent: 'main' });
const partsOf = (d: PolicyDecision): Array<[string, string, string | null]> => (d.parts ?? []).map((p) => [p.part, p.decision, p.rule?.id ?? null]);

const GITHUB = {
  rules: [
    { id: 'no-evil', domains: ['*.evil.example'], decision: 'deny' },
    { id: 'github', tools: ['builtin.fetch'], domains: ['github.com', '*.github.com'], decision: 'allow' },
  ],
};

describe('network rules: builtin.fetch and URL arguments', () => {
  it('allows a URL whose host a domains rule names, and asks for others', () => {
    assert.equal(decide(GITHUB, fetchCall({ url: 'https://api.github.com/repos' })).decision, 'allow');
    assert.equal(decide(GITHUB, fetchCall({ url: 'https://GitHub.com./x' })).decision, 'allow');
    assert.equal(decide(GITHUB, fetchCall({ url: 'https://gitlab.com/x' })).decision, 'ask');
    assert.equal(decide(GITHUB, fetchCall({ url: 'https://x.evil.example/' })).decision, 'deny');
  });

  it('judges each URL of a call as a part of its own; the strictest decides', () => {
    const d = decide(GITHUB, fetchCall({ urls: ['https://github.com/a', 'https://example.org/b'] }));
    assert.equal(d.decision, 'ask');
    assert.deepEqual(partsOf(d), [['https://github.com/a', 'allow', 'github'], ['https://example.org/b', 'ask', null]]);
    const denied = decide(GITHUB, fetchCall({ urls: ['https://github.com/a', 'https://a.evil.example/'] }));
    assert.equal(denied.decision, 'deny');
    assert.equal(denied.rule?.id, 'no-evil');
  });

  it('never allows a URL that cannot be read, and every ask or deny rule with domains takes it', () => {
    for (const url of ['https://github.com@evil.example/', 'github.com/x', 'file:///etc/passwd', 'https://git%68ub.com/', 'https://evil.example\\@github.com/']) {
      const d = decide(GITHUB, fetchCall({ url }));
      assert.equal(d.decision, 'deny', `${url}: ${JSON.stringify(d)}`);
      assert.equal(d.rule?.id, 'no-evil');
    }
    const noDeny = { rules: [GITHUB.rules[1]] };
    assert.equal(decide(noDeny, fetchCall({ url: 'https://github.com@evil.example/' })).decision, 'ask');
    assert.equal(decide(noDeny, fetchCall({ url: 12 })).decision, 'ask');
  });

  it('a call with no URL matches no rule with domains', () => {
    const policy = { default: 'deny', rules: [{ id: 'any-host', domains: ['*'], decision: 'allow' }] };
    assert.equal(decide(policy, fetchCall({})).decision, 'deny');
    assert.equal(decide(policy, fetchCall({ url: 'https://anything.example/' })).decision, 'allow');
  });

  it('reads url fields of MCP tools, and a uri only when it is a network URL', () => {
    const policy = { rules: [{ id: 'docs', tools: ['mcp.*'], domains: ['docs.example.com'], decision: 'allow' }] };
    const mcp = (input: object): ToolCall => ({ tool: { id: 'mcp.web.get' }, input, agent: 'main' });
    assert.equal(decide(policy, mcp({ url: 'https://docs.example.com/x' })).decision, 'allow');
    assert.equal(decide(policy, mcp({ uri: 'https://docs.example.com/x' })).decision, 'allow');
    assert.equal(decide(policy, mcp({ uri: 'docs/readme.md' })).decision, 'ask', 'a path in uri is no URL: the rule does not match');
  });

  it('urls globs match the normalised URL', () => {
    const policy = {
      rules: [
        { id: 'no-admin', urls: ['https://example.com/admin/**'], decision: 'deny' },
        { id: 'docs', urls: ['https://example.com/**'], decision: 'allow' },
      ],
    };
    assert.equal(decide(policy, fetchCall({ url: 'https://example.com/docs/a' })).decision, 'allow');
    assert.equal(decide(policy, fetchCall({ url: 'https://EXAMPLE.com/%61dmin/x' })).decision, 'deny');
    assert.equal(decide(policy, fetchCall({ url: 'https://example.com/docs/../admin/x' })).decision, 'deny');
    assert.equal(decide(policy, fetchCall({ url: 'https://example.com:8443/docs' })).decision, 'ask');
  });

  it('explain says what was read of the URLs when domains or urls did not match', () => {
    const e = new Policy({ workspace: layer(GITHUB) }).explain(fetchCall({ url: 'https://GitHub.com.evil.net/x' }), OPTIONS);
    assert.deepEqual(e.trace.map((t) => [t.rule.id, t.failed, t.why]), [
      ['no-evil', 'domains', 'its URL: https://github.com.evil.net/x'],
      ['github', 'domains', 'its URL: https://github.com.evil.net/x'],
    ]);
    const unknown = new Policy({ workspace: layer({ rules: [GITHUB.rules[1]] }) }).explain(fetchCall({ url: 'https://github.com@evil.net/' }), OPTIONS);
    assert.match(unknown.trace[0]!.why ?? '', /^its URL: "https:\/\/github.com@evil.net\/" cannot be read: it carries user info/);
  });

  it('domains globs with ! excludes', () => {
    const policy = { rules: [{ id: 'gh', domains: ['*.github.com', '!gist.github.com'], decision: 'allow' }] };
    assert.equal(decide(policy, fetchCall({ url: 'https://api.github.com/' })).decision, 'allow');
    assert.equal(decide(policy, fetchCall({ url: 'https://gist.github.com/' })).decision, 'ask');
  });
});

describe('network rules: curl and wget in commands', () => {
  before(async () => {
    await initShellParser();
  });

  const CURL = {
    rules: [
      { id: 'no-evil', tools: ['builtin.run_command'], domains: ['*.evil.example'], decision: 'deny' },
      { id: 'gh', tools: ['builtin.run_command'], domains: ['*.github.com'], decision: 'allow' },
      { id: 'ls', tools: ['builtin.run_command'], commands: ['ls *'], decision: 'allow' },
    ],
  };

  it('a domains rule on run_command allows curl and wget to those hosts, whatever their options', () => {
    assert.equal(decide(CURL, run('curl -sSL https://api.github.com/repos/x')).decision, 'allow');
    assert.equal(decide(CURL, run('wget -qO- https://objects.github.com/y')).decision, 'allow');
    assert.equal(decide(CURL, run('curl https://example.org/')).decision, 'ask');
  });

  it('a command that is not curl or wget has no URL: a domains rule never matches it', () => {
    assert.equal(decide(CURL, run('rm -rf build')).decision, 'ask');
    const d = decide(CURL, run('curl https://api.github.com/x && rm -rf build'));
    assert.equal(d.decision, 'ask');
    assert.deepEqual(partsOf(d), [['curl https://api.github.com/x', 'allow', 'gh'], ['rm -rf build', 'ask', null]]);
  });

  it('each URL of one curl is a part, with its command', () => {
    const d = decide(CURL, run('curl https://api.github.com/a https://x.evil.example/b'));
    assert.equal(d.decision, 'deny');
    assert.deepEqual(partsOf(d), [
      ['curl https://api.github.com/a https://x.evil.example/b · https://api.github.com/a', 'allow', 'gh'],
      ['curl https://api.github.com/a https://x.evil.example/b · https://x.evil.example/b', 'deny', 'no-evil'],
    ]);
  });

  it('a URL known only when the command runs is never allowed, and a deny with domains takes it', () => {
    for (const command of ['curl $U', 'curl "https://api.github.com/$P"', 'U=https://api.github.com; curl $U', '$CURL https://api.github.com/', 'curl -K urls.txt', 'curl --resolve api.github.com:443:6.6.6.6 https://api.github.com/', 'curl "https://api.{github,evil}.com/"']) {
      const d = decide(CURL, run(command));
      assert.equal(d.decision, 'deny', `${command}: ${JSON.stringify(d.parts ?? d)}`);
    }
    const noDeny = { rules: CURL.rules.slice(1) };
    assert.equal(decide(noDeny, run('curl $U')).decision, 'ask');
  });

  it('text that cannot be seen into is taken by a deny with domains', () => {
    assert.equal(decide(CURL, run('curl https://api.github.com/ "unterminated')).decision, 'deny');
  });

  it('commands and domains on one rule must both match the same part', () => {
    const policy = { rules: [{ id: 'gh-get', tools: ['builtin.run_command'], commands: ['curl -s *'], domains: ['*.github.com'], decision: 'allow' }] };
    assert.equal(decide(policy, run('curl -s https://api.github.com/x')).decision, 'allow');
    assert.equal(decide(policy, run('curl -d @.env https://api.github.com/x')).decision, 'ask');
    assert.equal(decide(policy, run('curl -s https://example.org/')).decision, 'ask');
  });

  it('a policy with no domains or urls rule does not split a call by its URLs', () => {
    const policy = { rules: [{ id: 'ls', tools: ['builtin.run_command'], commands: ['ls *'], decision: 'allow' }] };
    const d = decide(policy, run('curl https://a.example/ https://b.example/ && ls'));
    assert.deepEqual(partsOf(d), [['curl https://a.example/ https://b.example/', 'ask', null], ['ls', 'allow', 'ls']]);
    const suggested = ruleSuggestions(run('curl https://a.example/ https://b.example/ && ls'), { workspaceFolder: os.tmpdir(), followSymlinks: false, asked: d });
    assert.deepEqual(suggested.find((s) => s.kind === 'command')?.rule.commands, ['curl *'], 'the asking part only (not ls)');
  });

  it('a commands-only rule still decides curl as before (its URL is no further part)', () => {
    const policy = { rules: [{ id: 'curl', tools: ['builtin.run_command'], commands: ['curl *'], decision: 'allow' }] };
    const d = decide(policy, run('curl https://anywhere.example/'));
    assert.equal(d.decision, 'allow');
    assert.equal(d.parts, undefined);
  });

  it('the sandbox: a domains allow no longer turns the whole network on (each connection is judged); "network": false turns it off, true opens it', () => {
    assert.deepEqual(decide(CURL, run('curl https://api.github.com/x')).sandbox, { sandboxed: true, network: false });
    assert.deepEqual(decide(CURL, run('curl https://api.github.com/x | ls -l')).sandbox, { sandboxed: true, network: false });
    const off = { rules: [{ tools: ['builtin.run_command'], domains: ['*.github.com'], decision: 'allow', sandbox: { network: false } }] };
    assert.deepEqual(decide(off, run('curl https://api.github.com/x')).sandbox, { sandboxed: true, network: false, offline: true });
    const open = { rules: [{ tools: ['builtin.run_command'], domains: ['*.github.com'], decision: 'allow', sandbox: { network: true } }] };
    assert.deepEqual(decide(open, run('curl https://api.github.com/x')).sandbox, { sandboxed: true, network: true });
    const required = { rules: [{ tools: ['builtin.run_command'], domains: ['*.github.com'], decision: 'allow', sandbox: true }] };
    assert.deepEqual(decide(required, run('curl https://api.github.com/x')).sandbox, { sandboxed: true, network: false });
    assert.equal(decide(required, run('curl https://api.github.com/x'), { sandbox: false }).decision, 'ask');
  });
});

const GITHUB_CURL = { rules: [{ id: 'gh', tools: ['builtin.run_command'], domains: ['*.github.com'], decision: 'allow' }] };

describe('network rules: the file', () => {
  before(async () => {
    await initShellParser();
  });

  it('domains and urls are checked pattern by pattern: bad-glob at the pattern', () => {
    const text = JSON.stringify({ version: 1, rules: [{ domains: ['github.com', 'https://x.com/'], urls: ['nope'], decision: 'allow' }] }, null, 2);
    const l = loadPolicyText(text, '.agentpolicy.jsonc');
    assert.equal(l.valid, false);
    const bad = l.diagnostics.filter((d) => d.code === 'bad-glob');
    assert.equal(bad.length, 2, JSON.stringify(l.diagnostics));
    assert.equal(text.slice(bad[0]!.offset, bad[0]!.offset + bad[0]!.length), '"https://x.com/"');
    assert.equal(text.slice(bad[1]!.offset, bad[1]!.offset + bad[1]!.length), '"nope"');
  });

  it('a misspelt field stays a schema error', () => {
    const l = loadPolicyText(JSON.stringify({ version: 1, rules: [{ domain: ['github.com'], decision: 'allow' }] }), '.agentpolicy.jsonc');
    assert.equal(l.valid, false);
    assert.ok(l.diagnostics.some((d) => d.code === 'schema'));
  });

  it('shadowed: *.x covers a later rule under .x; an allow never covers a later deny', () => {
    const shadowed = (rules: object[]): number[] => lintShadowed(layer({ rules })).map((d) => Number(/rule (\d+)/.exec(d.message)![1]));
    assert.deepEqual(shadowed([
      { domains: ['*.github.com'], decision: 'allow' },
      { domains: ['api.github.com'], decision: 'allow' },
      { domains: ['*.api.github.com'], decision: 'allow' },
      { domains: ['github.com'], decision: 'allow' },
    ]), [2, 3]);
    assert.deepEqual(shadowed([{ domains: ['*'], decision: 'allow' }, { domains: ['x.com'], decision: 'deny' }]), []);
    assert.deepEqual(shadowed([{ domains: ['*'], decision: 'deny' }, { domains: ['x.com'], decision: 'deny' }]), [2]);
    assert.deepEqual(shadowed([{ urls: ['https://a.com/**'], decision: 'ask' }, { urls: ['https://a.com/x'], decision: 'ask' }, { urls: ['https://a.com/*'], decision: 'ask' }]), [2]);
    assert.deepEqual(shadowed([{ domains: ['*.a.com', '!b.a.com'], decision: 'ask' }, { domains: ['b.a.com'], decision: 'ask' }]), []);
  });

  it('a change that adds a domains allow is listed as loosening, by a URL of the rule and by curl', () => {
    const before = layer({ rules: [] });
    const after = layer({ rules: [{ id: 'gh', tools: ['builtin.fetch', 'builtin.run_command'], domains: ['*.github.com'], decision: 'allow' }] });
    const changes = looseningDiff(before, after, { workspaceFolder: os.tmpdir(), followSymlinks: false });
    const shown = changes.map((c) => `${c.call.tool.id} ${JSON.stringify(c.call.input)}`);
    assert.ok(shown.includes('builtin.fetch {"url":"https://probe.github.com/probe"}'), shown.join('\n'));
    assert.ok(shown.includes('builtin.run_command {"command":"curl https://probe.github.com/probe"}'), shown.join('\n'));
    const urls = layer({ rules: [{ urls: ['https://docs.example.com/**'], decision: 'allow' }] });
    assert.ok(looseningDiff(before, urls, { workspaceFolder: os.tmpdir(), followSymlinks: false }).some((c) => (c.call.input as { url?: string }).url === 'https://docs.example.com/probe'));
  });

  it('Allow and Add Rule offers the hosts of the URLs that asked, when every one was read', () => {
    const hostRule = (call: ToolCall, asked?: PolicyDecision): object | undefined =>
      ruleSuggestions(call, { workspaceFolder: os.tmpdir(), followSymlinks: false, ...(asked ? { asked } : {}) }).find((s) => s.kind === 'host')?.rule;
    assert.deepEqual(hostRule(fetchCall({ url: 'https://Docs.Example.com/a' })), { id: 'allow-fetch-docs-example-com', tools: ['builtin.fetch'], domains: ['docs.example.com'], decision: 'allow' });
    assert.equal(hostRule(fetchCall({ url: 'https://user@docs.example.com/a' })), undefined);
    const inserted = insertRuleEdit('{\n  "version": 1,\n  "rules": []\n}\n', { tools: ['builtin.fetch'], domains: ['docs.example.com'], decision: 'allow' }, 'end').newText;
    assert.match(inserted, /"tools": \["builtin.fetch"\],\s+"domains": \["docs.example.com"\],\s+"decision": "allow"/, 'domains written with the matchers, before the decision');
    const curl = run('curl -s https://api.github.com/x && curl https://example.org/');
    const asked = decide(GITHUB_CURL, curl);
    assert.deepEqual((hostRule(curl, asked) as { domains: string[] }).domains, ['example.org'], 'only the part that asked');
  });

  it('inline tests judge fetch and curl calls', () => {
    const l = layer({
      ...GITHUB,
      tests: [
        { call: { tool: 'builtin.fetch', input: { url: 'https://api.github.com/x' } }, expect: 'allow', rule: 'github' },
        { call: { tool: 'builtin.fetch', input: { url: 'https://github.com@evil.example/' } }, expect: 'deny', rule: 'no-evil' },
        { call: { tool: 'builtin.run_command', input: { command: 'curl https://a.evil.example/' } }, expect: 'deny' },
      ],
    });
    const results = runInlineTests(l, os.tmpdir());
    assert.deepEqual(results.map((r) => r.passed), [true, true, true], JSON.stringify(results));
  });
});

describe('network rules: properties', () => {
  const anyRule = fc.record({
    domains: fc.array(fc.constantFrom('*', '*.a.com', 'a.com', 'github.com', '*.github.com', '127.0.0.1', 'evil.com'), { minLength: 1, maxLength: 3 }),
  });

  it('no URL that fails to parse or normalise is ever allowed by a domains allow', () => {
    const junk = fc.oneof(
      fc.string(),
      fc.webUrl().map((u) => u.replace('://', '://user@')),
      fc.webUrl().map((u) => u.replace('://', ':')),
      fc.webUrl().map((u) => u.replace(/\/\/([^/]+)/, (_, h: string) => `//${h.replace('.', '%2e')}`)),
      fc.webUrl().map((u) => u.replace(/^https?/, 'file')),
      fc.webUrl().map((u) => `${u}\\@x`),
      fc.webUrl().map((u) => u.replace('://', '://a..')),
    );
    fc.assert(
      fc.property(junk, anyRule, (url, rule) => {
        fc.pre(!readUrl(url).known);
        const d = decide({ rules: [{ ...rule, decision: 'allow' }] }, fetchCall({ url }));
        return d.decision !== 'allow';
      }),
      { numRuns: 400 },
    );
  });

  it('shadowed stays sound with domains and urls: an earlier rule that covers a later one matches every call the later one matches', () => {
    const host = fc.constantFrom('a.com', 'x.a.com', 'y.x.a.com', 'api-1.a.com', 'b.com', 'a.com.b.com', '127.0.0.1');
    const domain = fc.constantFrom('*', 'a.com', '*.a.com', '*.x.a.com', 'x.a.com', 'api-*.a.com', '!x.a.com', '!*.x.a.com', 'b.com', '127.0.0.1');
    const url = fc.constantFrom('https://a.com/**', 'https://a.com/x', 'https://*.a.com/**', 'https://a.com/*', '!https://a.com/x', '*://a.com/**');
    const rule = fc.record({
      decision: fc.constantFrom('allow', 'ask', 'deny'),
      domains: fc.option(fc.array(domain, { minLength: 1, maxLength: 3 }), { nil: undefined }),
      urls: fc.option(fc.array(url, { minLength: 1, maxLength: 2 }), { nil: undefined }),
    }).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
    const call = fc.oneof(
      fc.tuple(host, fc.constantFrom('/', '/x', '/x/y')).map(([h, p]) => fetchCall({ url: `https://${h}${p}` })),
      fc.tuple(host, host).map(([h, k]) => fetchCall({ urls: [`https://${h}/x`, `http://${k}/`] })),
      fc.constant(fetchCall({ url: 'https://user@a.com/' })),
      fc.constant(fetchCall({})),
    );
    fc.assert(
      fc.property(rule, rule, call, (earlierRule, laterRule, c) => {
        const l = layer({ rules: [earlierRule, laterRule] });
        fc.pre(covers(l.rules[0]!, l.rules[1]!));
        const later = new Policy({ workspace: layer({ rules: [laterRule] }) }).decide(c, OPTIONS);
        if (later.rule === null && (later.parts ?? []).every((p) => p.rule === null)) return true;
        // The later rule decided the call or a part of it alone; first in the list, the earlier one would decide it there.
        const both = new Policy({ workspace: l }).decide(c, OPTIONS);
        const decidedByLater = both.rule?.index === 1 || (both.parts ?? []).some((p) => p.rule?.index === 1);
        return !decidedByLater;
      }),
      { numRuns: 1500 },
    );
  });

  it('curl and wget under domains ["*.a.com"] never reach a host outside a.com, whatever the spelling and options', () => {
    const target = fc.tuple(
      fc.constantFrom('x.a.com', 'a.com', 'evil.net', 'x.a.com.evil.net', 'X.A.COM.', '127.0.0.1'),
      fc.constantFrom('https://', 'http://', '', 'https:///', 'https://u@', 'https://x.a.com@'),
      fc.constantFrom('/', '/p?q=1', '\\@x.a.com/', ':8080/'),
    ).map(([h, s, r]) => `${s}${h}${r}`);
    const option = fc.constantFrom('-s', '-sSL', '-o out', '-H "A: b"', '-x evil.net:3128', '--proxy=http://x.a.com', '-K cfg', '--resolve x.a.com:443:6.6.6.6', '--', '-d @f');
    const line = fc.tuple(fc.constantFrom('curl', 'wget', '/usr/bin/curl', 'sudo curl', 'env curl', 'https_proxy=http://evil.net curl'), fc.array(option, { maxLength: 3 }), target, fc.boolean())
      .map(([program, options, url, quote]) => `${program} ${options.join(' ')} ${quote ? `'${url}'` : url}`);
    const policy = { rules: [{ id: 'a', tools: ['builtin.run_command'], domains: ['*.a.com'], decision: 'allow' }] };
    fc.assert(
      fc.property(line, (command) => {
        const d = decide(policy, run(command));
        if (d.decision !== 'allow') return true;
        // Allowed: no proxy outside a.com, no resolver, no config, and the URL's host as WHATWG reads it is under a.com.
        if (/-x evil|-K |--resolve|_proxy=http:\/\/evil/.test(command)) return false;
        const url = command.trim().split(/\s+/).pop()!.replace(/^'|'$/g, '');
        const real = new URL(/^[a-z]+:\/\//i.test(url) ? url : `http://${url}`).hostname.toLowerCase().replace(/\.$/, '');
        return real.endsWith('.a.com');
      }),
      { numRuns: 800 },
    );
  });

  it('domains ["*.a.com"] never allows a host outside a.com, whatever the spelling', () => {
    const label = fc.stringMatching(/^[a-z0-9]{1,6}$/);
    const host = fc.oneof(
      fc.tuple(label, fc.constantFrom('a.com', 'b.com', 'a.com.evil.net', 'evila.com', 'xn--a-ecp.com', 'a.co')).map(([l, d]) => `${l}.${d}`),
      fc.constantFrom('a.com', '127.0.0.1', '[::1]', '2130706433', 'bücher.a.com', 'ｅvil．com'),
    );
    const spelled = fc.tuple(
      host,
      fc.constantFrom('', 'user@', 'x.a.com@', 'a.com:pw@'),
      fc.constantFrom('', '.'),
      fc.boolean(),
      fc.constantFrom('', ':443', ':8080'),
      fc.constantFrom('/', '/x', '\\@x.a.com/', '/%2e%2e/', '?u=http://x.a.com', '#@x.a.com'),
      fc.constantFrom('https://', 'http://', 'HTTPS://', 'wss://', 'https:///', 'https:/', 'https:\\\\', 'http:'),
      fc.boolean(),
    ).map(([h, userinfo, dot, upper, port, rest, scheme, encode]) => {
      let hostText = `${h}${dot}`;
      if (upper) hostText = hostText.toUpperCase();
      if (encode) hostText = hostText.replace('.', '%2E');
      return `${scheme}${userinfo}${hostText}${port}${rest}`;
    });
    fc.assert(
      fc.property(spelled, (url) => {
        const d = decide({ rules: [{ domains: ['*.a.com'], decision: 'allow' }] }, fetchCall({ url }));
        if (d.decision !== 'allow') return true;
        // Where the request really goes, by the parser that sends it.
        const real = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
        return real.endsWith('.a.com') && real.length > '.a.com'.length;
      }),
      { numRuns: 1000 },
    );
  });
});
