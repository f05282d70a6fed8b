// Loosening held for a person (issue 5): the decisions a change of the workspace policy makes
// more permissive, and the decision while such a change waits to be accepted.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import type { ToolCall, ToolDescriptor } from '../../src/policy/rules/call.js';
import { canonicalJson } from '../../src/policy/rules/compile.js';
import {
  contentDigest, describeChange, heldDecision, HELD_REASON, isLoosening, looseningDiff, type LooseningChange,
} from '../../src/policy/editing/loosening.js';
import { probeCalls } from '../../src/policy/editing/probeCalls.js';
import { loadPolicyText, Policy, type DecideOptions, type PolicyLayer } from '../../src/policy/policy.js';
import type { Decision } from '../../src/policy/file/schema.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

let ws = '';

function layer(rules: readonly unknown[], top: Record<string, unknown> = {}): PolicyLayer {
  const l = loadPolicyText(JSON.stringify({ version: 1, ...top, rules }, null, 2), '.agentpolicy.jsonc', 'workspace');
  assert.equal(l.valid, true, JSON.stringify(l.diagnostics));
  return l;
}

function call(id: string, input: unknown = {}, agent = 'main', tool: Partial<ToolDescriptor> = {}): ToolCall {
  return { tool: { id, ...tool }, input, agent };
}

const diff = (a: PolicyLayer | undefined, b: PolicyLayer, o: { trusted?: boolean; extra?: ToolCall[] } = {}): LooseningChange[] =>
  looseningDiff(a, b, { workspaceFolder: ws, ...o });

const inputs = (changes: LooseningChange[]): string[] => changes.map((c) => `${c.call.tool.id} ${JSON.stringify(c.call.input)}`);

const RUN = 'builtin.run_command';
const READ = 'builtin.read_file';

describe('loosening', () => {
  before(async () => {
    await initShellParser();
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loosening-')));
  });
  after(() => {
    fs.rmSync(ws, { recursive: true, force: true });
  });

  describe('probeCalls', () => {
    const probes = (rules: readonly unknown[], extra: ToolCall[] = [], top: Record<string, unknown> = {}): ToolCall[] => probeCalls([layer(rules, top)], extra);
    const has = (calls: ToolCall[], want: ToolCall): boolean => calls.some((c) => canonicalJson(c) === canonicalJson(want));

    it('tool ids: each literal, and an instance of each glob shaped like a real id', () => {
      const calls = probes([{ tools: ['client.lookup_price', 'mcp.*', 'builtin.*', '!mcp.github.*'], decision: 'allow' }]);
      assert.ok(has(calls, call('client.lookup_price')));
      assert.ok(has(calls, call('mcp.probe.probe')));
      assert.ok(has(calls, call('builtin.probe')));
      assert.ok(has(calls, call('mcp.github.probe')), 'an instance of an exclude too');
    });

    it('paths made concrete: one call with all, and one per glob', () => {
      const calls = probes([{ tools: [READ], paths: ['src/**', '**/.env', 'docs/*.md', 'README.md', '!src/secret/**'], decision: 'allow' }]);
      assert.ok(has(calls, call(READ, { paths: ['src/probe.txt', '.env', 'docs/probe.md', 'README.md'] })));
      for (const p of ['src/probe.txt', '.env', 'probe/.env', 'docs/probe.md', 'README.md', 'src/secret/probe.txt']) assert.ok(has(calls, call(READ, { path: p })), p);
      assert.ok(has(calls, call(READ, {})), 'and none');
    });

    it('commands from command patterns', () => {
      const calls = probes([{ tools: [RUN], commands: ['npm run lint *', 'git status'], decision: 'allow' }]);
      assert.ok(has(calls, call(RUN, { command: 'npm run lint probe' })));
      assert.ok(has(calls, call(RUN, { command: 'npm run lint' })));
      assert.ok(has(calls, call(RUN, { command: 'git status' })));
      assert.ok(has(calls, call(RUN, { command: 'npm run lint probe && git status' })), 'all of them at once');
    });

    it('inputs satisfying the input matchers (a regex only when it is a plain literal)', () => {
      const calls = probes([
        {
          tools: ['mcp.gmail.send_email'],
          input: { '/to': '*@acme.com', '/cc': { glob: 'x*' }, '/branch': { regex: '^feat' }, '/id': { regex: '^[a-z]{3}\\d+$' }, '/draft': { equals: false }, '/body': { exists: true }, '/bcc': { exists: false } },
          decision: 'allow',
        },
      ]);
      assert.ok(has(calls, call('mcp.gmail.send_email', { to: 'probe@acme.com', cc: 'xprobe', branch: 'feat', draft: false, body: 'probe' })));
    });

    it('agents, kinds, hints and tags of a rule', () => {
      const calls = probes([{ tools: ['mcp.github.*'], agents: ['deployer'], hints: { readOnlyHint: true }, tags: ['net'], decision: 'deny' }, { kinds: ['client'], decision: 'ask' }]);
      assert.ok(has(calls, { tool: { id: 'mcp.github.probe', annotations: { readOnlyHint: true }, tags: ['net'] }, input: {}, agent: 'deployer' }));
      assert.ok(has(calls, { tool: { id: 'mcp.github.probe', tags: ['net'] }, input: {}, agent: 'deployer' }), 'without the hints');
      assert.ok(has(calls, { tool: { id: 'mcp.github.probe', annotations: { readOnlyHint: true }, tags: ['net'] }, input: {}, agent: 'main' }), 'another agent');
      assert.ok(has(calls, { tool: { id: 'client.probe', kind: 'client' }, input: {}, agent: 'main' }));
    });

    it('the inline tests of each version and the extra calls, each call once', () => {
      const extra = call('client.recent', { q: 1 });
      const calls = probeCalls(
        [
          layer([], { tests: [{ call: { tool: 'client.a', input: { x: 1 }, agent: 'sub' }, expect: 'ask' }] }),
          layer([], { tests: [{ call: { tool: 'client.b', hints: { readOnlyHint: true } }, expect: 'ask' }] }),
        ],
        [extra, extra],
      );
      assert.ok(has(calls, call('client.a', { x: 1 }, 'sub')));
      assert.ok(has(calls, { tool: { id: 'client.b', annotations: { readOnlyHint: true } }, input: {}, agent: 'main' }));
      assert.equal(calls.filter((c) => canonicalJson(c) === canonicalJson(extra)).length, 1);
      const keys = calls.map((c) => canonicalJson(c));
      assert.equal(new Set(keys).size, keys.length);
    });
  });

  describe('looseningDiff', () => {
    const lint = { id: 'lint', tools: [RUN], commands: ['npm run lint *'], decision: 'allow' };
    const noPush = { id: 'no-push', tools: [RUN], commands: ['git push *'], decision: 'deny' };

    it('an added allow rule', () => {
      const accepted = layer([lint, noPush]);
      const next = layer([lint, noPush, { id: 'publish', tools: [RUN], commands: ['npm publish'], decision: 'allow' }]);
      const changes = diff(accepted, next);
      assert.deepEqual(changes.map(describeChange), ['builtin.run_command {"command":"npm publish"}: ask (default) → allow (rule 3 "publish")']);
      assert.equal(changes[0]!.before.decision, 'ask');
      assert.equal(changes[0]!.after.rule?.id, 'publish');
    });

    it('a widened glob', () => {
      const accepted = layer([{ id: 'read', tools: [READ], paths: ['src/**'], decision: 'allow' }]);
      const next = layer([{ id: 'read', tools: [READ], paths: ['**'], decision: 'allow' }]);
      const changes = diff(accepted, next);
      assert.ok(changes.length > 0);
      assert.ok(inputs(changes).includes('builtin.read_file {"path":"probe.txt"}'), inputs(changes).join('\n'));
      for (const c of changes) {
        assert.equal(c.call.tool.id, READ);
        assert.equal(c.after.rule?.id, 'read');
        const p = (c.call.input as { path?: string }).path;
        assert.ok(p === undefined || !p.startsWith('src/'), `src/ was allowed already: ${p}`);
      }
    });

    it('a removed deny', () => {
      const accepted = layer([{ id: 'no-github', tools: ['mcp.github.*'], decision: 'deny' }, { tools: ['mcp.*'], decision: 'ask' }]);
      const next = layer([{ tools: ['mcp.*'], decision: 'ask' }]);
      const changes = diff(accepted, next);
      assert.ok(changes.length > 0);
      for (const c of changes) {
        assert.match(c.call.tool.id, /^mcp\.github\./);
        assert.equal(c.before.decision, 'deny');
        assert.equal(c.after.decision, 'ask');
      }
      assert.ok(changes.map(describeChange).includes('mcp.github.probe {}: deny (rule 1 "no-github") → ask (rule 1)'));
    });

    it('the default changed from ask to allow', () => {
      const extra = [call('client.never_named', { q: 1 })];
      const changes = diff(layer([noPush], { default: 'ask' }), layer([noPush], { default: 'allow' }), { extra });
      assert.ok(changes.length > 0);
      for (const c of changes) {
        assert.equal(c.before.rule, null);
        assert.equal(c.after.rule, null);
        assert.equal(c.before.decision, 'ask');
        assert.equal(c.after.decision, 'allow');
      }
      assert.ok(inputs(changes).includes('client.never_named {"q":1}'), 'the extra calls are judged too');
      assert.ok(!changes.some((c) => c.call.tool.id === RUN && /git push/.test((c.call.input as { command?: string }).command ?? '')));
    });

    it('a pure tightening: nothing', () => {
      const accepted = layer([lint, { id: 'read', tools: [READ], paths: ['**'], decision: 'allow' }], { default: 'ask' });
      const next = layer(
        [noPush, { id: 'secrets', tools: [READ], paths: ['**/.env'], decision: 'deny' }, lint, { id: 'read', tools: [READ], paths: ['src/**'], decision: 'allow' }],
        { default: 'deny' },
      );
      assert.deepEqual(diff(accepted, next), []);
      assert.deepEqual(diff(accepted, accepted), [], 'no change: nothing');
    });

    it('a reordering that lets an allow win', () => {
      const secrets = { id: 'secrets', tools: [READ], paths: ['**/.env'], decision: 'deny' };
      const read = { id: 'read', tools: [READ], paths: ['**'], decision: 'allow' };
      const changes = diff(layer([secrets, read]), layer([read, secrets]));
      assert.ok(changes.length > 0);
      assert.ok(changes.map(describeChange).includes('builtin.read_file {"path":".env"}: deny (rule 1 "secrets") → allow (rule 1 "read")'), changes.map(describeChange).join('\n'));
      for (const c of changes) assert.equal(c.before.rule?.id, 'secrets');
    });

    it('from no workspace policy at all', () => {
      assert.ok(diff(undefined, layer([lint])).length > 0);
      assert.deepEqual(diff(undefined, layer([noPush, { tools: ['mcp.*'], decision: 'ask' }])), []);
      assert.deepEqual(diff(undefined, layer([], { default: 'ask' })), []);
    });

    it('in an untrusted workspace a new allow only asks, so it loosens nothing; a removed deny still does', () => {
      const accepted = layer([noPush]);
      assert.deepEqual(diff(accepted, layer([noPush, lint]), { trusted: false }), []);
      assert.ok(diff(accepted, layer([noPush, lint]), { trusted: true }).length > 0);
      const removed = diff(accepted, layer([]), { trusted: false });
      assert.ok(removed.length > 0);
      for (const c of removed) assert.equal(`${c.before.decision}→${c.after.decision}`, 'deny→ask');
    });

    it('a call no rule names is found through the extra (e.g. audited) calls', () => {
      const accepted = layer([]);
      const next = layer([{ id: 'ids', tools: ['client.x'], input: { '/q': { regex: '^[a-z]{3}\\d+$' } }, decision: 'allow' }]);
      assert.deepEqual(diff(accepted, next), [], 'the regex is not sampled');
      const changes = diff(accepted, next, { extra: [call('client.x', { q: 'abc12' })] });
      assert.deepEqual(changes.map(describeChange), ['client.x {"q":"abc12"}: ask (default) → allow (rule 1 "ids")']);
    });

    it('the inline tests of the new version are judged', () => {
      const next = layer([{ id: 'ids', tools: ['client.x'], input: { '/q': { regex: '^[a-z]{3}\\d+$' } }, decision: 'allow' }], {
        tests: [{ call: { tool: 'client.x', input: { q: 'abc1' } }, expect: 'allow' }],
      });
      assert.deepEqual(inputs(diff(layer([]), next)), ['client.x {"q":"abc1"}']);
    });

    it('sorted by tool id, each call once, with agents and hints described', () => {
      const next = layer([{ tools: ['mcp.*'], hints: { readOnlyHint: true }, decision: 'allow' }, { tools: ['client.*', 'builtin.read_file'], agents: ['helper'], decision: 'allow' }]);
      const changes = diff(layer([]), next);
      const ids = changes.map((c) => c.call.tool.id);
      assert.deepEqual(ids, [...ids].sort());
      const keys = changes.map((c) => canonicalJson(c.call));
      assert.equal(new Set(keys).size, keys.length);
      const text = changes.map(describeChange);
      assert.ok(text.includes('mcp.probe.probe {} (hints {"readOnlyHint":true}): ask (default) → allow (rule 1)'), text.join('\n'));
      assert.ok(text.includes('client.probe {} (agent "helper"): ask (default) → allow (rule 2)'), text.join('\n'));
    });

    it('an invalid new version loosens nothing (it is never put in force)', () => {
      const broken = loadPolicyText('{ "version": 1, "rules": [{ "tool": ["x"], "decision": "allow" }] }', '.agentpolicy.jsonc', 'workspace');
      assert.equal(broken.valid, false);
      assert.deepEqual(diff(layer([{ tools: ['mcp.*'], decision: 'deny' }]), broken), []);
    });

    it('isLoosening', () => {
      const all: Decision[] = ['deny', 'ask', 'allow'];
      const pairs = all.flatMap((a) => all.map((b) => [a, b] as const)).filter(([a, b]) => isLoosening(a, b));
      assert.deepEqual(pairs, [['deny', 'ask'], ['deny', 'allow'], ['ask', 'allow']]);
    });
  });

  describe('heldDecision', () => {
    const o = (): DecideOptions => ({ workspaceFolder: ws });
    const accepted = new Policy({ workspace: layer([{ id: 'read', tools: [READ], paths: ['src/**'], decision: 'allow' }, { id: 'mcp', tools: ['mcp.*'], decision: 'allow' }]) });
    const next = new Policy({
      workspace: layer([
        { id: 'read', tools: [READ], paths: ['**'], decision: 'allow', reason: 'reading is fine' },
        { id: 'no-mcp', tools: ['mcp.*'], decision: 'deny' },
        { id: 'run', tools: [RUN], decision: 'ask', remember: 'session' },
      ]),
    });

    it('a new allow asks, with a reason, and cannot be remembered for the session', () => {
      const d = heldDecision(next, accepted, call(READ, { path: 'README.md' }), o());
      assert.equal(d.decision, 'ask');
      assert.equal(d.rule?.id, 'read', 'the rule that would allow it');
      assert.equal(d.reason, `reading is fine (${HELD_REASON})`);
      assert.match(d.reason!, /changed outside the editor/);
      assert.match(d.reason!, /not accepted yet/);
      assert.deepEqual(d.ask, { onTimeout: 'deny', remember: 'never' });
      assert.equal(d.lowered, false);
      assert.ok(d.warnings.some((w) => /not accepted/.test(w)));
      const bare = heldDecision(new Policy({ workspace: layer([], { default: 'allow' }) }), new Policy({}), call('client.x'), o());
      assert.equal(bare.decision, 'ask');
      assert.equal(bare.reason, HELD_REASON);
    });

    it('an allow the accepted version gives too stays allow', () => {
      const c = call(READ, { path: 'src/a.ts' });
      assert.deepEqual(heldDecision(next, accepted, c, o()), next.decide(c, o()));
      assert.equal(heldDecision(next, accepted, c, o()).decision, 'allow');
    });

    it('a tightening applies at once', () => {
      assert.equal(heldDecision(next, accepted, call('mcp.github.push'), o()).decision, 'deny');
      const c = call(RUN, { command: 'ls' });
      assert.deepEqual(heldDecision(next, accepted, c, o()), next.decide(c, o()));
      assert.equal(heldDecision(next, accepted, c, o()).ask?.remember, 'session');
    });

    it('covers every change looseningDiff reports that allows', () => {
      const a = layer([{ id: 'read', tools: [READ], paths: ['src/**'], decision: 'allow' }]);
      const b = layer([{ id: 'read', tools: [READ], paths: ['**'], decision: 'allow' }], { default: 'allow' });
      const changes = diff(a, b);
      assert.ok(changes.length > 0);
      for (const c of changes) assert.notEqual(heldDecision(new Policy({ workspace: b }), new Policy({ workspace: a }), c.call, o()).decision, 'allow');
    });
  });

  it('contentDigest: sha256 hex of the text', () => {
    assert.equal(contentDigest(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(contentDigest('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.notEqual(contentDigest('{ "version": 1 }\n'), contentDigest('{ "version": 1 }\r\n'));
  });

  describe('properties', () => {
    const TOOLS = ['builtin.read_file', 'builtin.run_command', 'mcp.*', 'mcp.github.*', 'client.x', 'client.*', '*'] as const;
    const CALL_TOOLS = ['builtin.read_file', 'builtin.run_command', 'mcp.github.push', 'mcp.fs.read', 'client.x', 'client.y'] as const;
    const PATH_GLOBS = ['src/**', '**', '**/.env', 'docs/*.md', '/etc/**', '!**/.env', '!src/secret/**'] as const;
    const PATHS = ['src/a.ts', '.env', 'src/.env', 'docs/a.md', 'README.md', '/etc/passwd', '../out.txt', 'src/secret/k'] as const;
    const PATTERNS = ['npm test', 'npm run *', 'git *', 'git push *', 'rm *', 'ls'] as const;
    const COMMANDS = ['npm test', 'npm run lint', 'git status', 'git push origin', 'rm -rf x', 'ls', 'ls > out.txt', 'npm test && git push', 'echo "x'] as const;
    const AGENTS = ['main', 'deployer', 'sub-a'] as const;

    const decisionArb = fc.constantFrom<Decision>('allow', 'ask', 'deny');
    const ruleArb = fc
      .record(
        {
          decision: decisionArb,
          tools: fc.uniqueArray(fc.constantFrom(...TOOLS), { minLength: 1, maxLength: 2 }),
          paths: fc.uniqueArray(fc.constantFrom(...PATH_GLOBS), { minLength: 1, maxLength: 2 }),
          commands: fc.uniqueArray(fc.constantFrom(...PATTERNS), { minLength: 1, maxLength: 2 }),
          agents: fc.uniqueArray(fc.constantFrom('main', 'deployer', 'sub-*', '*'), { minLength: 1, maxLength: 2 }),
          hints: fc.record({ readOnlyHint: fc.boolean() }),
        },
        { requiredKeys: ['decision'] },
      );
    const policyArb = fc.record({ rules: fc.array(ruleArb, { maxLength: 6 }), default: fc.option(decisionArb, { nil: undefined }) });
    const callArb: fc.Arbitrary<ToolCall> = fc.record({
      id: fc.constantFrom(...CALL_TOOLS),
      input: fc.oneof(
        fc.constant({}),
        fc.record({ path: fc.constantFrom(...PATHS) }),
        fc.record({ paths: fc.uniqueArray(fc.constantFrom(...PATHS), { minLength: 1, maxLength: 3 }) }),
        fc.record({ command: fc.constantFrom(...COMMANDS) }),
      ),
      agent: fc.constantFrom(...AGENTS),
      readOnly: fc.option(fc.boolean(), { nil: undefined }),
    }).map(({ id, input, agent, readOnly }) => ({ tool: { id, ...(readOnly !== undefined ? { annotations: { readOnlyHint: readOnly } } : {}) }, input, agent }));

    const toLayer = (p: { rules: unknown[]; default: Decision | undefined }): PolicyLayer => layer(p.rules, p.default ? { default: p.default } : {});
    const RANK: Record<Decision, number> = { deny: 0, ask: 1, allow: 2 };

    it('held never allows what the accepted version does not, for any call; it is never looser than the next version', () => {
      fc.assert(
        fc.property(policyArb, policyArb, fc.array(callArb, { minLength: 1, maxLength: 12 }), fc.boolean(), (a, b, calls, trusted) => {
          const accepted = new Policy({ workspace: toLayer(a) });
          const next = new Policy({ workspace: toLayer(b) });
          const o: DecideOptions = { workspaceFolder: ws, trusted, followSymlinks: false };
          for (const c of calls) {
            const held = heldDecision(next, accepted, c, o);
            const nextD = next.decide(c, o);
            if (held.decision === 'allow') assert.equal(accepted.decide(c, o).decision, 'allow');
            assert.ok(RANK[held.decision] <= RANK[nextD.decision]);
            if (nextD.decision !== 'allow') assert.deepEqual(held, nextD, 'a tightening applies at once');
          }
        }),
        { numRuns: 300 },
      );
    });

    it('looseningDiff reports only loosenings, each held back; none for a policy with deny rules put in front', () => {
      let reported = 0;
      fc.assert(
        fc.property(policyArb, policyArb, fc.array(ruleArb.map((r) => ({ ...r, decision: 'deny' as const })), { maxLength: 2 }), (a, b, denies) => {
          const la = toLayer(a);
          const lb = toLayer(b);
          const o = { workspaceFolder: ws, followSymlinks: false };
          const accepted = new Policy({ workspace: la });
          const next = new Policy({ workspace: lb });
          for (const c of looseningDiff(la, lb, o)) {
            reported++;
            assert.ok(isLoosening(c.before.decision, c.after.decision));
            assert.deepEqual(c.before, accepted.decide(c.call, o));
            assert.deepEqual(c.after, next.decide(c.call, o));
            const held = heldDecision(next, accepted, c.call, o);
            assert.ok(RANK[held.decision] <= Math.max(RANK[c.before.decision], RANK.ask), 'what the change loosens waits (or applies only up to ask)');
          }
          assert.deepEqual(looseningDiff(la, la, o), []);
          assert.deepEqual(looseningDiff(la, toLayer({ rules: [...denies, ...a.rules], default: a.default }), o), []);
        }),
        { numRuns: 150 },
      );
      assert.ok(reported > 0, 'some generated pair of policies loosens, so the checks above ran');
    });
  });
});
