// One connection of a sandboxed command, as the sandbox's proxy asks the policy about it
// (connection.ts): only rules with domains or urls decide; a deny on any part refuses, an allow
// on any part lets through, anything else asks; a tunnel is judged by its host's root URL, a
// plain HTTP request by its own URL; the hosts the rules name exactly are listed for the
// proxy's loopback guard. A property: no connection is ever allowed without an allow rule
// with domains or urls, and never past a matching deny.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { connectionCall, connectionUrl, type ConnectionTarget } from '../../src/policy/rules/connection.js';
import { ruleSuggestions } from '../../src/policy/editing/ruleSuggestions.js';
import type { DecideOptions } from '../../src/policy/rules/decision.js';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

const OPTIONS: DecideOptions = { workspaceFolder: os.tmpdir(), followSymlinks: false, sandbox: true };

function policy(rules: object[], extra: object = {}): Policy {
  const l = loadPolicyText(JSON.stringify({ version: 1, rules, ...extra }), '.agentpolicy.jsonc', 'workspace');
  assert.equal(l.valid, true, JSON.stringify(l.diagnostics));
  return new Policy({ workspace: l });
}

const judge = (p: Policy, command: string, target: ConnectionTarget, options: Partial<DecideOptions> = {}) =>
  p.judgeConnection(command, target, 'main', { ...OPTIONS, ...options });

describe('a sandboxed command\'s connection, judged by the rules with domains or urls', () => {
  before(async () => {
    await initShellParser();
  });

  const NPM = { id: 'npm', tools: ['builtin.run_command'], commands: ['npm *'], domains: ['registry.npmjs.org'], decision: 'allow' };

  it('a domains allow for the command lets its host through; another host, or another command, is asked', () => {
    const p = policy([NPM, { id: 'all', tools: ['builtin.run_command'], decision: 'allow' }]);
    const allowed = judge(p, 'npm ci', { host: 'registry.npmjs.org', port: 443 });
    assert.equal(allowed.decision, 'allow');
    assert.equal(allowed.rule?.id, 'npm');
    assert.equal(allowed.url, 'https://registry.npmjs.org/');
    // The "all" rule allows the command to run; it names no host, so it decides no connection.
    const other = judge(p, 'npm ci', { host: 'evil.example', port: 443 });
    assert.equal(other.decision, 'ask');
    assert.equal(other.rule, null);
    assert.match(other.reason ?? '', /no rule with domains or urls/);
    assert.equal(judge(p, 'pip install x', { host: 'registry.npmjs.org', port: 443 }).decision, 'ask');
  });

  it('a deny refuses whatever part it matches; an allow of any part lets through (the host is what was allowed)', () => {
    const p = policy([{ id: 'paste', domains: ['*.pastebin.com'], decision: 'deny' }, NPM]);
    assert.equal(judge(p, 'npm ci && curl x', { host: 'registry.npmjs.org', port: 443 }).decision, 'allow');
    const denied = judge(p, 'npm ci && curl x', { host: 'a.pastebin.com', port: 443 });
    assert.equal(denied.decision, 'deny');
    assert.equal(denied.rule?.id, 'paste');
    // Which of the line's programs opened the connection cannot be known: the allowing part is named.
    assert.equal(judge(p, 'npm ci && curl x', { host: 'registry.npmjs.org', port: 443 }).part, 'npm ci');
  });

  it('a tunnel is judged by its host\'s root: a urls allow with a path never lets it through; a urls deny of the host refuses it', () => {
    const p = policy([
      { id: 'no-admin', urls: ['https://admin.example/**'], decision: 'deny' },
      { id: 'repos', tools: ['builtin.run_command'], urls: ['https://api.example/repos/**'], decision: 'allow' },
      { id: 'plain', tools: ['builtin.run_command'], urls: ['http://plain.example/ok/**'], decision: 'allow' },
    ]);
    assert.equal(judge(p, 'curl x', { host: 'api.example', port: 443 }).decision, 'ask');
    assert.equal(judge(p, 'curl x', { host: 'admin.example', port: 443 }).decision, 'deny');
    assert.equal(judge(p, 'curl x', { host: 'plain.example', port: 80, url: 'http://plain.example/ok/a' }).decision, 'allow');
    assert.equal(judge(p, 'curl x', { host: 'plain.example', port: 80, url: 'http://plain.example/no' }).decision, 'ask');
    assert.equal(connectionUrl({ host: 'a.example', port: 8443 }), 'https://a.example:8443/');
    assert.equal(connectionUrl({ host: '::1', port: 443 }), 'https://[::1]/');
  });

  it('an untrusted workspace\'s allow only asks; a broken layer asks', () => {
    const p = policy([NPM]);
    assert.equal(judge(p, 'npm ci', { host: 'registry.npmjs.org', port: 443 }, { trusted: false }).decision, 'ask');
  });

  it('the shipped balanced policy lets npm and pip reach their registries sandboxed, asks for other hosts, refuses paste sites', () => {
    const file = path.join(__dirname, '..', '..', 'policies', 'balanced.agentpolicy.jsonc');
    const p = new Policy({ workspace: loadPolicyText(fs.readFileSync(file, 'utf8'), file) });
    assert.equal(judge(p, 'npm ci', { host: 'registry.npmjs.org', port: 443 }).rule?.id, 'registries');
    assert.equal(judge(p, 'npm ci', { host: 'registry.npmjs.org', port: 443 }).decision, 'allow');
    assert.equal(judge(p, 'pip install -r requirements.txt', { host: 'files.pythonhosted.org', port: 443 }).decision, 'allow');
    assert.equal(judge(p, 'npm ci', { host: 'evil.example', port: 443 }).decision, 'ask');
    assert.equal(judge(p, 'git fetch', { host: 'registry.npmjs.org', port: 443 }).decision, 'ask');
    assert.equal(judge(p, 'npm ci', { host: 'pastebin.com', port: 443 }).decision, 'deny');
  });

  it('"Allow and Add Rule…" on a host\'s question offers a domains rule that decides that host next time', () => {
    const call = connectionCall('npm ci', { host: 'registry.example', port: 443 }, 'main');
    const host = ruleSuggestions(call, { workspaceFolder: os.tmpdir(), followSymlinks: false }).find((s) => s.kind === 'host');
    assert.deepEqual(host?.rule, { id: 'allow-run-command-registry-example', tools: ['builtin.run_command'], domains: ['registry.example'], decision: 'allow' });
    const p = policy([host!.rule]);
    assert.equal(judge(p, 'npm ci', { host: 'registry.example', port: 443 }).decision, 'allow');
  });

  it('lists the hosts the rules name exactly, for the proxy\'s loopback guard', () => {
    const p = policy([
      { domains: ['*.github.com', 'github.com', 'LocalHost', '!x.github.com'], decision: 'allow' },
      { urls: ['http://127.0.0.1:8080/**', 'https://*.a.com/**'], decision: 'allow' },
    ]);
    assert.deepEqual(p.namedHosts().slice().sort(), ['127.0.0.1', 'github.com', 'localhost']);
  });

  it('never allows a connection without an allow rule with domains or urls, nor past a deny that matches it (property)', () => {
    const hosts = ['a.example', 'b.example', 'api.a.example', 'evil.example', '10.0.0.2'];
    const rule = fc.record({
      decision: fc.constantFrom('allow', 'ask', 'deny'),
      domains: fc.option(fc.subarray(['a.example', '*.a.example', 'b.example', '*', 'evil.example', '10.0.0.2'], { minLength: 1 }), { nil: undefined }),
      commands: fc.option(fc.constantFrom(['curl *'], ['npm *'], ['*']), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 6 }), fc.constantFrom(...hosts), fc.constantFrom('curl -s x', 'npm ci', 'npm ci | curl y', 'git pull'), (rules, host, command) => {
        const list = rules.map((r) => ({ tools: ['builtin.run_command'], decision: r.decision, ...(r.domains ? { domains: r.domains } : {}), ...(r.commands ? { commands: r.commands } : {}) }));
        const p = policy(list);
        const d = judge(p, command, { host, port: 443 });
        const withHosts = list.filter((r) => r.domains !== undefined);
        if (!withHosts.some((r) => r.decision === 'allow')) assert.notEqual(d.decision, 'allow');
        // A deny with domains matching the host and no commands, before any other rule whose domains match it, refuses every command line.
        const matches = (pattern: string): boolean => pattern === '*' || pattern === host || (pattern.startsWith('*.') && host.endsWith(pattern.slice(1)));
        const first = list.find((r) => r.domains !== undefined && r.domains.some(matches));
        if (first?.decision === 'deny' && first.commands === undefined) assert.equal(d.decision, 'deny');
      }),
      { numRuns: 300 },
    );
  });
});
