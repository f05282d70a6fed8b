// Managed controls (issue 14): `controls` is honoured only in the managed policy (a schema error
// anywhere else, with its place), what the controls in force are (also for a stale or broken
// managed file), how they cap every ask's `remember`, and which MCP servers may start.
import assert from 'node:assert/strict';
import { addRuleRefusal, describeControls, mcpServerRefusal, NO_CONTROLS } from '../../src/policy/rules/managedControls.js';
import { loadPolicyText, nextLayerState, Policy } from '../../src/policy/policy.js';
import type { LayerName } from '../../src/policy/rules/compile.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

const FILES: Record<LayerName, string> = { managed: '/etc/agentpolicy/managed.jsonc', workspace: '.agentpolicy.jsonc', user: 'user.jsonc' };

function text(top: Record<string, unknown>, rules: readonly unknown[] = []): string {
  return JSON.stringify({ version: 1, ...top, rules }, null, 2);
}

function layer(name: LayerName, top: Record<string, unknown>, rules: readonly unknown[] = []) {
  return loadPolicyText(text(top, rules), FILES[name], name);
}

const ASK_ALL = [{ id: 'ask-all', decision: 'ask' }];
const call = (id = 'client.x') => ({ tool: { id, kind: 'client' as const, annotations: {} }, input: {}, agent: 'main' });
const options = { workspaceFolder: '/tmp' };

describe('managed controls', () => {
  before(() => initShellParser());

  it('are a schema error in a workspace or user policy, placed on the field, and that file is invalid', () => {
    for (const name of ['workspace', 'user'] as const) {
      const l = layer(name, { controls: { allowForSession: true } }, ASK_ALL);
      assert.equal(l.valid, false);
      const d = l.diagnostics.find((x) => x.code === 'schema');
      assert.ok(d, name);
      assert.match(d.message, /"controls" is honoured only in the managed policy/);
      assert.equal(l.parsed.text.slice(d.offset, d.offset + '"controls"'.length), '"controls"');
    }
    assert.equal(layer('managed', { controls: { allowForSession: false } }).valid, true);
  });

  it('reject unknown fields and contradictions between allowForSession and longestGrant', () => {
    const unknown = layer('managed', { controls: { allowForSesion: false } });
    assert.equal(unknown.valid, false);
    assert.ok(unknown.diagnostics.some((d) => d.code === 'schema' && /allowForSesion/.test(d.message)));
    assert.equal(layer('managed', { controls: { allowForSession: false, longestGrant: 'session' } }).valid, false);
    assert.equal(layer('managed', { controls: { allowForSession: true, longestGrant: '15m' } }).valid, false);
    assert.equal(layer('managed', { controls: { longestGrant: '25h' } }).valid, false);
    assert.equal(layer('managed', { controls: { mcpServers: { deny: [] } } }).valid, false);
    assert.equal(layer('managed', { controls: { allowForSession: false, longestGrant: 'never', addRule: false, mcpServers: { allow: ['files', 'git*'], deny: ['git-push'] } } }).valid, true);
  });

  it('report a server glob that does not compile as bad-glob', () => {
    const l = layer('managed', { controls: { mcpServers: { deny: ['{a,{b,{c,{d,{e,{f,{g,{h,{i,{j,{k,x}}}}}}}}}}}'] } } });
    assert.equal(l.valid, false);
    assert.ok(l.diagnostics.some((d) => d.code === 'bad-glob'), JSON.stringify(l.diagnostics));
  });

  it('are none without a managed layer, or when it sets none', () => {
    assert.deepEqual(new Policy({ workspace: layer('workspace', {}, ASK_ALL) }).controls, NO_CONTROLS);
    const c = new Policy({ managed: layer('managed', {}) }).controls;
    assert.equal(c.allowForSession, true);
    assert.equal(c.longestGrant, 'session');
    assert.equal(c.addRule, true);
  });

  it('allowForSession false alone caps grants at 1 hour; longestGrant sets the cap', () => {
    const p = new Policy({ managed: layer('managed', { controls: { allowForSession: false } }), workspace: layer('workspace', {}, ASK_ALL) });
    assert.equal(p.controls.allowForSession, false);
    const d = p.decide(call(), options);
    assert.equal(d.ask?.remember, '1h');
    assert.match(d.ask?.cappedBy ?? '', /the managed policy \/etc\/agentpolicy\/managed\.jsonc allows grants of at most 1 hour/);
    const q = new Policy({ managed: layer('managed', { controls: { longestGrant: '15m' } }), workspace: layer('workspace', {}, ASK_ALL) });
    assert.equal(q.decide(call(), options).ask?.remember, '15m');
  });

  it('never widen a rule that remembers less, and leave no cappedBy then', () => {
    const p = new Policy({
      managed: layer('managed', { controls: { longestGrant: '1h' } }),
      workspace: layer('workspace', {}, [{ tools: ['client.a'], decision: 'ask', remember: '5m' }, { tools: ['client.b'], decision: 'ask', remember: 'never' }, { decision: 'ask' }]),
    });
    assert.deepEqual(p.decide(call('client.a'), options).ask, { onTimeout: 'deny', remember: '5m' });
    assert.equal(p.decide(call('client.b'), options).ask?.remember, 'never');
    assert.equal(p.decide(call('client.c'), options).ask?.remember, '1h');
  });

  it('cap the default ask and a managed rule alike, and never change allow or deny', () => {
    const p = new Policy({
      managed: layer('managed', { controls: { longestGrant: 'never' } }, [{ tools: ['client.ok'], decision: 'allow' }, { tools: ['client.no'], decision: 'deny' }]),
    });
    assert.equal(p.decide(call('client.other'), options).ask?.remember, 'never');
    assert.equal(p.decide(call('client.ok'), options).decision, 'allow');
    assert.equal(p.decide(call('client.no'), options).decision, 'deny');
  });

  it('stay those of the last valid version while the managed file is stale, and are the strictest when it never was valid', () => {
    const good = layer('managed', { controls: { longestGrant: '15m', mcpServers: { deny: ['x'] } } });
    const bad = loadPolicyText('{ "version": 1, "rules": [', FILES.managed, 'managed');
    const stale = new Policy({ managed: nextLayerState(nextLayerState(undefined, good), bad) });
    assert.equal(stale.controls.longestGrant, '15m');
    const broken = new Policy({ managed: nextLayerState(undefined, bad), workspace: layer('workspace', {}, [{ decision: 'allow' }]) });
    const c = broken.controls;
    assert.deepEqual([c.from, c.allowForSession, c.addRule, c.longestGrant], ['broken', false, false, 'never']);
    assert.match(mcpServerRefusal('files', c) ?? '', /is invalid and has no valid version in force/);
    assert.match(addRuleRefusal(c) ?? '', /is invalid/);
  });

  it('let an MCP server start unless denied or left out of a non-empty allow list, naming the managed policy', () => {
    const c = new Policy({ managed: layer('managed', { controls: { mcpServers: { allow: ['files', 'git*'], deny: ['git-push'] } } }) }).controls;
    assert.equal(mcpServerRefusal('files', c), undefined);
    assert.equal(mcpServerRefusal('github', c), undefined);
    assert.match(mcpServerRefusal('git-push', c) ?? '', /"git-push" may not start: the managed policy \/etc\/agentpolicy\/managed\.jsonc denies it \(controls\.mcpServers\.deny\)/);
    assert.match(mcpServerRefusal('everything', c) ?? '', /allows only "files", "git\*" \(controls\.mcpServers\.allow\)/);
    assert.equal(mcpServerRefusal('anything', NO_CONTROLS), undefined);
  });

  it('are described for explain only when they limit something', () => {
    assert.deepEqual(describeControls(NO_CONTROLS), []);
    const c = new Policy({ managed: layer('managed', { controls: { allowForSession: false, addRule: false, mcpServers: { deny: ['x*'] } } }) }).controls;
    assert.deepEqual(describeControls(c), [
      'managed controls (/etc/agentpolicy/managed.jsonc):',
      '  Allow for Session: never',
      '  longest grant: 1 hour',
      '  Allow and Add Rule…: never',
      '  MCP servers that never start: x*',
    ]);
  });
});
