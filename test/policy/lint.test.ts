// The lint warnings of policy-format.md's diagnostics table: `shadowed` (an earlier rule matches
// every call a later one could match) and `spawn-denied` (agents declare subagents but the
// policy denies agents.spawn).
import * as assert from 'node:assert/strict';
import { parseAgentsFile, spawnInfo } from '../../src/agents/agentsFile.js';
import { checkPolicyLayer } from '../../src/policy/checking/check.js';
import { toJson, type DiagnosticJson } from '../../src/policy/file/diagnostics.js';
import { lintShadowed, lintSpawnDenied, type AgentSpawnInfo } from '../../src/policy/checking/lint.js';
import { loadPolicyText, Policy, type PolicyLayer } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

const FILE = '.agentpolicy.jsonc';

/** One rule per line: rule i (0-based) is on line i + 4. */
function policyText(rules: readonly unknown[], top: Record<string, unknown> = {}): string {
  const head = Object.entries({ version: 1, ...top }).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},`);
  return ['{', ...head, '  "rules": [', rules.map((r) => `    ${JSON.stringify(r)}`).join(',\n'), '  ]', '}', ''].join('\n');
}

function load(rules: readonly unknown[], top: Record<string, unknown> = {}): PolicyLayer {
  const layer = loadPolicyText(policyText(rules, top), FILE, 'workspace');
  assert.equal(layer.valid, true, JSON.stringify(layer.diagnostics));
  return layer;
}

const json = (layer: PolicyLayer, ds: ReturnType<typeof lintShadowed>): DiagnosticJson[] => ds.map((d) => toJson(d, layer.parsed.lines));

function shadowed(rules: readonly unknown[]): DiagnosticJson[] {
  const layer = load(rules);
  return json(layer, lintShadowed(layer));
}

/** Rule i is on line i + 4 of `policyText` (with no extra top-level fields). */
const ruleLine = (index: number): number => index + 4;

function assertShadowed(rules: readonly unknown[], later: number, earlier: number): void {
  const ds = shadowed(rules);
  assert.equal(ds.length, 1, JSON.stringify(ds));
  const d = ds[0]!;
  assert.equal(d.code, 'shadowed');
  assert.equal(d.severity, 'warning');
  assert.equal(d.file, FILE);
  assert.equal(d.line, ruleLine(later), 'reported at the rule that never decides');
  assert.equal(d.column, 5);
  assert.match(d.message, new RegExp(`rule ${later + 1}\\b`));
  assert.match(d.message, new RegExp(`rule ${earlier + 1}\\b`), 'names the earlier rule');
}

function assertNotShadowed(rules: readonly unknown[]): void {
  assert.deepEqual(shadowed(rules), []);
}

describe('policy lint', () => {
  before(async () => {
    await initShellParser();
  });

  describe('lint: shadowed', () => {
    describe('warns when an earlier rule matches every call the later one could match', () => {
      it('an identical rule', () => {
        const rule = { tools: ['builtin.read_file'], paths: ['src/**'], decision: 'allow' };
        assertShadowed([rule, { ...rule }], 1, 0);
      });

      it('an identical rule with a different decision (the later one never decides)', () => {
        assertShadowed([{ tools: ['mcp.github.*'], decision: 'deny' }, { tools: ['mcp.github.*'], decision: 'allow' }], 1, 0);
      });

      it('a broader tools glob first: mcp.* before mcp.github.*', () => {
        assertShadowed([{ tools: ['mcp.*'], decision: 'ask' }, { tools: ['mcp.github.*'], decision: 'deny' }], 1, 0);
      });

      it('a broader tools glob before a literal id', () => {
        assertShadowed([{ tools: ['mcp.*'], decision: 'ask' }, { tools: ['mcp.github.push', 'mcp.gmail.send'], decision: 'deny' }], 1, 0);
      });

      it('a rule with no matchers before anything', () => {
        assertShadowed([{ decision: 'ask' }, { tools: ['client.x'], agents: ['main'], paths: ['src/**'], commands: ['ls'], decision: 'allow' }], 1, 0);
        assertShadowed([{ decision: 'deny' }, { decision: 'allow' }], 1, 0);
      });

      it('deny with paths before allow with the same paths (any part covers every part)', () => {
        assertShadowed([
          { tools: ['builtin.read_file'], paths: ['secrets/**'], decision: 'deny' },
          { tools: ['builtin.read_file'], paths: ['secrets/**'], decision: 'allow' },
        ], 1, 0);
      });

      it('ask with commands before allow with the same commands', () => {
        assertShadowed([
          { tools: ['builtin.run_command'], commands: ['git push *'], decision: 'ask' },
          { tools: ['builtin.run_command'], commands: ['git push *'], decision: 'allow' },
        ], 1, 0);
      });

      it('an open command pattern before a longer one', () => {
        assertShadowed([{ commands: ['npm *'], decision: 'deny' }, { commands: ['npm test', 'npm run lint *'], decision: 'deny' }], 1, 0);
      });

      it('`**` before a narrower path glob of the same kind of rule', () => {
        assertShadowed([{ paths: ['**'], decision: 'deny' }, { paths: ['src/**', 'docs/*.md'], decision: 'deny' }], 1, 0);
      });

      it('the same input matchers', () => {
        const input = { '/recipient_email': '*@acme.com' };
        assertShadowed([{ tools: ['mcp.gmail.*'], input, decision: 'ask' }, { tools: ['mcp.gmail.send_email'], input, decision: 'allow' }], 1, 0);
      });

      it('fewer agents, kinds, hints and tags constraints first', () => {
        assertShadowed([{ agents: ['*'], decision: 'deny' }, { agents: ['deployer'], decision: 'allow' }], 1, 0);
        assertShadowed([{ kinds: ['mcp', 'client'], decision: 'deny' }, { kinds: ['mcp'], decision: 'allow' }], 1, 0);
        assertShadowed([{ hints: { readOnlyHint: true }, decision: 'allow' }, { hints: { readOnlyHint: true, openWorldHint: false }, decision: 'ask' }], 1, 0);
        assertShadowed([{ tags: ['createHint', 'updateHint'], decision: 'ask' }, { tags: ['updateHint'], decision: 'deny' }], 1, 0);
      });

      it('names the rules by id when they have one', () => {
        const ds = shadowed([{ id: 'broad', tools: ['mcp.*'], decision: 'ask' }, { id: 'narrow', tools: ['mcp.a.*'], decision: 'deny' }]);
        assert.equal(ds.length, 1);
        assert.match(ds[0]!.message, /"broad"/);
        assert.match(ds[0]!.message, /"narrow"/);
      });

      it('names the first earlier rule that covers, once per shadowed rule', () => {
        const ds = shadowed([{ tools: ['mcp.*'], decision: 'ask' }, { tools: ['mcp.*'], decision: 'ask' }, { tools: ['mcp.a.b'], decision: 'deny' }]);
        assert.deepEqual(ds.map((d) => d.line), [ruleLine(1), ruleLine(2)]);
        assert.match(ds[1]!.message, /rule 1\b/);
      });
    });

    describe('does not warn when some call reaches the later rule', () => {
      it('a narrower earlier rule', () => {
        assertNotShadowed([{ tools: ['mcp.github.*'], decision: 'deny' }, { tools: ['mcp.*'], decision: 'ask' }]);
        assertNotShadowed([{ tools: ['mcp.github.push'], decision: 'deny' }, { tools: ['mcp.github.*'], decision: 'ask' }]);
        assertNotShadowed([{ paths: ['src/**'], decision: 'deny' }, { paths: ['**'], decision: 'deny' }]);
        assertNotShadowed([{ commands: ['npm test'], decision: 'deny' }, { commands: ['npm *'], decision: 'deny' }]);
      });

      it('an earlier allow with paths before a later deny with the same paths (every part vs any part)', () => {
        // {src/a, secrets/b}: the allow does not match (not every path), the deny does (a path matches).
        assertNotShadowed([
          { tools: ['builtin.read_file'], paths: ['src/**'], decision: 'allow' },
          { tools: ['builtin.read_file'], paths: ['src/**'], decision: 'deny' },
        ]);
      });

      it('an earlier allow with commands before a later ask with the same commands', () => {
        assertNotShadowed([{ commands: ['git *'], decision: 'allow' }, { commands: ['git *'], decision: 'ask' }]);
      });

      it('different agents', () => {
        assertNotShadowed([{ tools: ['mcp.github.*'], agents: ['deployer'], decision: 'deny' }, { tools: ['mcp.github.*'], agents: ['reviewer'], decision: 'ask' }]);
        assertNotShadowed([{ tools: ['mcp.github.*'], agents: ['deployer'], decision: 'deny' }, { tools: ['mcp.github.*'], decision: 'ask' }]);
      });

      it('an earlier rule with excludes the later rule lacks', () => {
        assertNotShadowed([{ tools: ['mcp.*', '!mcp.github.*'], decision: 'allow' }, { tools: ['mcp.*'], decision: 'deny' }]);
        assertNotShadowed([{ tools: ['mcp.*', '!mcp.github.push'], decision: 'allow' }, { tools: ['mcp.github.*'], decision: 'ask' }]);
        assertNotShadowed([{ paths: ['**', '!**/.env'], decision: 'deny' }, { paths: ['src/**'], decision: 'deny' }]);
        assertNotShadowed([{ agents: ['*', '!main'], decision: 'deny' }, { agents: ['*'], decision: 'ask' }]);
      });

      it('an earlier exclude that the literal later tool avoids still shadows (the literal is tested)', () => {
        assertShadowed([{ tools: ['mcp.*', '!mcp.github.*'], decision: 'allow' }, { tools: ['mcp.gmail.send'], decision: 'deny' }], 1, 0);
        assertNotShadowed([{ tools: ['mcp.*', '!mcp.github.*'], decision: 'allow' }, { tools: ['mcp.github.push'], decision: 'deny' }]);
      });

      it('input matchers differing', () => {
        assertNotShadowed([
          { tools: ['mcp.gmail.send'], input: { '/to': '*@acme.com' }, decision: 'allow' },
          { tools: ['mcp.gmail.send'], input: { '/to': '*@evil.com' }, decision: 'deny' },
        ]);
        assertNotShadowed([
          { tools: ['mcp.gmail.send'], input: { '/to': '*@acme.com' }, decision: 'allow' },
          { tools: ['mcp.gmail.send'], decision: 'deny' },
        ]);
        assertNotShadowed([
          { input: { '/force': { equals: true } }, decision: 'deny' },
          { input: { '/force': { equals: false } }, decision: 'deny' },
        ]);
      });

      it('an earlier rule with matchers the later lacks (kinds, hints, tags, paths, commands)', () => {
        assertNotShadowed([{ tools: ['mcp.*'], kinds: ['mcp'], decision: 'deny' }, { tools: ['mcp.*'], decision: 'ask' }]);
        assertNotShadowed([{ hints: { readOnlyHint: true }, decision: 'allow' }, { decision: 'ask' }]);
        assertNotShadowed([{ tags: ['createHint'], decision: 'ask' }, { tags: ['updateHint'], decision: 'deny' }]);
        assertNotShadowed([{ paths: ['**'], decision: 'deny' }, { decision: 'ask' }]);
        assertNotShadowed([{ commands: ['*'], decision: 'deny' }, { decision: 'ask' }]);
      });

      it('differing hints values', () => {
        assertNotShadowed([{ hints: { destructiveHint: false }, decision: 'allow' }, { hints: { destructiveHint: true }, decision: 'deny' }]);
      });

      it('rules that do not overlap at all', () => {
        assertNotShadowed([{ tools: ['client.a'], decision: 'allow' }, { tools: ['client.b'], decision: 'allow' }]);
      });
    });

    it('only warns about rules that really never decide (checked against evaluation)', () => {
      // For each negative case above the later rule must decide some call: prove one such call.
      const layer = load([
        { id: 'early', tools: ['builtin.read_file'], paths: ['src/**'], decision: 'allow' },
        { id: 'late', tools: ['builtin.read_file'], paths: ['src/**'], decision: 'deny' },
      ]);
      assert.deepEqual(lintShadowed(layer), []);
      const d = new Policy({ workspace: layer }).decide(
        // Each path is a part; a path argument that is not a string is one no allow rule takes, so 'late' decides it.
        { tool: { id: 'builtin.read_file' }, input: { paths: ['src/a', 42] }, agent: 'main' },
        { workspaceFolder: '/nonexistent-workspace', followSymlinks: false },
      );
      assert.equal(d.rule?.id, 'late');
    });
  });

  describe('lint: spawn-denied', () => {
    const AGENTS_WITH_SUBAGENTS = JSON.stringify({
      agents: [{ name: 'main', model: 'scripted:x.json', subagents: [{ name: 'reviewer' }, { name: 'tester' }] }],
    });
    const AGENTS_WITHOUT_SUBAGENTS = JSON.stringify({ agents: [{ name: 'main', model: 'scripted:x.json' }, { name: 'solo', subagents: [] }] });

    function agentsFrom(text: string): AgentSpawnInfo[] {
      const parsed = parseAgentsFile(text, '.agents.jsonc');
      assert.deepEqual(parsed.diagnostics, []);
      return spawnInfo(parsed.value);
    }

    function spawnDenied(text: string, agentsText: string): DiagnosticJson[] {
      const layer = loadPolicyText(text, FILE, 'workspace');
      assert.equal(layer.valid, true, JSON.stringify(layer.diagnostics));
      const all = checkPolicyLayer(layer, { workspaceFolder: '/nonexistent-workspace', agents: agentsFrom(agentsText) });
      return all.filter((d) => d.code === 'spawn-denied').map((d) => toJson(d, layer.parsed.lines));
    }

    it('warns when the default is deny, no rule allows agents.spawn, and an agent declares subagents', () => {
      const text = '{\n  "version": 1,\n  "default": "deny",\n  "rules": [ { "tools": ["mcp.*"], "decision": "allow" } ]\n}';
      const ds = spawnDenied(text, AGENTS_WITH_SUBAGENTS);
      assert.equal(ds.length, 1, JSON.stringify(ds));
      const d = ds[0]!;
      assert.equal(d.severity, 'warning');
      assert.equal(d.file, FILE);
      assert.match(d.message, /agents\.spawn/);
      assert.match(d.message, /"main"/);
      assert.equal(d.line, 3, 'at the default');
    });

    it('a rule allowing agents.spawn removes the warning', () => {
      assert.deepEqual(spawnDenied(policyText([{ tools: ['agents.spawn'], decision: 'allow' }], { default: 'deny' }), AGENTS_WITH_SUBAGENTS), []);
      assert.deepEqual(spawnDenied(policyText([{ tools: ['agents.*'], decision: 'ask' }], { default: 'deny' }), AGENTS_WITH_SUBAGENTS), []);
    });

    it('agents without subagents: no warning', () => {
      assert.deepEqual(spawnDenied(policyText([], { default: 'deny' }), AGENTS_WITHOUT_SUBAGENTS), []);
    });

    it('a default that is not deny: no warning', () => {
      assert.deepEqual(spawnDenied(policyText([], { default: 'ask' }), AGENTS_WITH_SUBAGENTS), []);
      assert.deepEqual(spawnDenied(policyText([], { default: 'allow' }), AGENTS_WITH_SUBAGENTS), []);
    });

    it('a deny rule for agents.spawn warns at that rule\'s line', () => {
      const text = policyText([{ tools: ['mcp.*'], decision: 'allow' }, { id: 'no-spawn', tools: ['agents.spawn'], decision: 'deny' }], { default: 'ask' });
      const ds = spawnDenied(text, AGENTS_WITH_SUBAGENTS);
      assert.equal(ds.length, 1, JSON.stringify(ds));
      assert.equal(ds[0]!.line, 6, 'rule 2 is on line 6');
      assert.match(ds[0]!.message, /agents\.spawn/);
      assert.match(ds[0]!.message, /no-spawn/);
    });

    it('a deny rule for every agents.* tool warns too', () => {
      const ds = spawnDenied(policyText([{ tools: ['agents.*'], decision: 'deny' }]), AGENTS_WITH_SUBAGENTS);
      assert.equal(ds.length, 1);
      assert.equal(ds[0]!.line, 4);
    });

    it('a deny rule for other agents only does not warn for this one', () => {
      const text = policyText([{ tools: ['agents.spawn'], agents: ['deployer'], decision: 'deny' }]);
      assert.deepEqual(spawnDenied(text, AGENTS_WITH_SUBAGENTS), []);
    });

    it('warns once per agent that declares subagents', () => {
      const agents = JSON.stringify({ agents: [{ name: 'a', subagents: [{ name: 's' }] }, { name: 'b', subagents: [{ name: 't' }] }, { name: 'c' }] });
      const ds = spawnDenied(policyText([], { default: 'deny' }), agents);
      assert.equal(ds.length, 2);
      assert.match(ds[0]!.message, /"a"/);
      assert.match(ds[1]!.message, /"b"/);
    });

    it('with no default in the policy, an agent whose permissionMode is deny is warned about', () => {
      const agents = JSON.stringify({ agents: [{ name: 'strict', permissionMode: 'deny', subagents: [{ name: 's' }] }, { name: 'easy', permissionMode: 'auto', subagents: [{ name: 't' }] }] });
      const ds = spawnDenied(policyText([{ tools: ['mcp.*'], decision: 'ask' }]), agents);
      assert.equal(ds.length, 1);
      assert.match(ds[0]!.message, /"strict"/);
    });

    it('lintSpawnDenied alone gives the same warning', () => {
      const layer = load([], { default: 'deny' });
      const ds = lintSpawnDenied(layer, [{ name: 'main', subagents: ['reviewer'] }], '/nonexistent-workspace');
      assert.equal(ds.length, 1);
      assert.equal(ds[0]!.code, 'spawn-denied');
      assert.equal(ds[0]!.severity, 'warning');
    });
  });
});
