// The policy file's structure (policy-format.md, "The file", "A rule" and "Diagnostics"):
// every field's type, unknown and duplicate fields, ask-only fields, version, syntax errors,
// globs and regexes that do not compile, and duplicate ids, each with its code and position.
import * as assert from 'node:assert/strict';
import { toJson, type DiagnosticJson } from '../../src/policy/file/diagnostics.js';
import { loadPolicyText, Policy, type PolicyLayer } from '../../src/policy/policy.js';

const FILE = '.agentpolicy.jsonc';

function load(text: string): { layer: PolicyLayer; diagnostics: DiagnosticJson[] } {
  const layer = loadPolicyText(text, FILE, 'workspace');
  return { layer, diagnostics: layer.diagnostics.map((d) => toJson(d, layer.parsed.lines)) };
}

/** A policy file with one rule per line, so a diagnostic's line names its rule. */
function policyText(rules: readonly unknown[], top: Record<string, unknown> = {}): string {
  const head = Object.entries({ version: 1, ...top }).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},`);
  return ['{', ...head, '  "rules": [', rules.map((r) => `    ${JSON.stringify(r)}`).join(',\n'), '  ]', '}', ''].join('\n');
}

/** 1-based line and column of the `occurrence`-th (0-based) appearance of `needle` in `text`. */
function positionOf(text: string, needle: string, occurrence = 0): { line: number; column: number } {
  let at = -1;
  for (let i = 0; i <= occurrence; i++) {
    at = text.indexOf(needle, at + 1);
    assert.notEqual(at, -1, `${needle} (occurrence ${occurrence}) not in the text`);
  }
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return { line, column: at - (before.lastIndexOf('\n') + 1) + 1 };
}

function only(diagnostics: DiagnosticJson[], code: string): DiagnosticJson {
  const found = diagnostics.filter((d) => d.code === code);
  assert.equal(found.length, 1, `expected one ${code} diagnostic, got ${JSON.stringify(diagnostics)}`);
  return found[0]!;
}

/** The file is invalid with exactly this code among its diagnostics, at the given text. */
function expectError(text: string, code: string, at?: { needle: string; occurrence?: number }): DiagnosticJson {
  const { layer, diagnostics } = load(text);
  assert.equal(layer.valid, false, 'the file must be invalid');
  assert.equal(layer.rules.length, 0, 'an invalid file contributes no rules');
  assert.equal(layer.default, undefined, 'an invalid file contributes no default');
  const d = only(diagnostics, code);
  assert.equal(d.severity, 'error');
  assert.equal(d.file, FILE);
  if (at) {
    const p = positionOf(text, at.needle, at.occurrence ?? 0);
    assert.deepEqual({ line: d.line, column: d.column }, p, `${code} should point at ${at.needle}: ${JSON.stringify(d)}`);
  }
  return d;
}

function expectValid(text: string): PolicyLayer {
  const { layer, diagnostics } = load(text);
  assert.deepEqual(diagnostics, [], 'the file must have no diagnostics');
  assert.equal(layer.valid, true);
  return layer;
}

describe('policy file schema', () => {
  describe('a valid file', () => {
    it('accepts the example of the spec, with comments and trailing commas (JSONC)', () => {
      const layer = expectValid(`{
  "version": 1,
  "default": "ask",                    // "allow" | "ask" | "deny"; optional
  "rules": [                           // ordered; the first rule whose matchers all match decides
    { "id": "spawn", "tools": ["agents.spawn"], "decision": "allow" },
    { "tools": ["client.lookup_price"], "decision": "allow" },
    { "tools": ["builtin.read_file", "builtin.list_files"], "paths": ["src/**", "!**/.env"], "decision": "allow" },
    { "tools": ["builtin.run_command"], "commands": ["npm test", "npm run lint *", "git status"], "decision": "allow" },
    { "tools": ["mcp.*"], "hints": { "readOnlyHint": true }, "decision": "allow" },
    { "tools": ["mcp.github.*"], "agents": ["deployer"], "decision": "deny", "reason": "no pushes from the deployer" },
    /* block comment */
    { "tools": ["mcp.gmail.send_email"], "input": { "/recipient_email": "*@acme.com" }, "decision": "ask", "timeout": 300, "onTimeout": "deny" },
  ],
  "tests": [
    { "name": "prices are free", "call": { "tool": "client.lookup_price", "input": { "product": "atlas" } }, "expect": "allow" },
    { "call": { "tool": "builtin.read_file", "input": { "path": "src/.env" } }, "expect": "ask" },
  ],
}`);
      assert.equal(layer.rules.length, 7);
      assert.equal(layer.default, 'ask');
      assert.deepEqual(layer.rules.map((r) => r.decision), ['allow', 'allow', 'allow', 'allow', 'allow', 'deny', 'ask']);
    });

    it('accepts a file with only a version: no rules, no default', () => {
      const layer = expectValid('{ "version": 1 }');
      assert.equal(layer.rules.length, 0);
      assert.equal(layer.default, undefined);
    });

    it('accepts every rule field with a value of the right type', () => {
      expectValid(policyText([
        {
          id: 'all', decision: 'ask', reason: 'because', tools: ['mcp.*', '!mcp.x.*'], kinds: ['builtin', 'client', 'mcp', 'connector', 'plugin'],
          agents: ['main', 'sub-*'], hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
          tags: ['createHint'], paths: ['src/**', '!**/.env', '/etc/**'], commands: ['npm test', 'git log *'],
          input: { '/a': '*.md', '/b': { equals: { x: [1, null] } }, '/c': { regex: '^p' }, '/d': { glob: 'x*' }, '/e': { exists: false } },
          timeout: 300, onTimeout: 'keep', remember: 'never',
        },
        { decision: 'ask', onTimeout: 'deny', remember: 'session', timeout: 0.5 },
      ], { default: 'deny' }));
    });

    it('accepts each default value', () => {
      for (const d of ['allow', 'ask', 'deny']) assert.equal(expectValid(policyText([], { default: d })).default, d);
    });
  });

  describe('syntax', () => {
    it('reports text that is not JSONC as `syntax` at the offending position', () => {
      const text = '{\n  "version": 1\n  "rules": []\n}\n';
      const d = expectError(text, 'syntax', { needle: '"rules"' });
      assert.match(d.message, /expected/);
    });

    it('reports an unterminated document as `syntax`', () => {
      const { layer, diagnostics } = load('{ "version": 1, "rules": [ { "decision": "allow" }');
      assert.equal(layer.valid, false);
      assert.ok(diagnostics.length > 0 && diagnostics.every((d) => d.code === 'syntax' && d.severity === 'error'));
    });

    it('reports an empty file as `syntax` at line 1, column 1', () => {
      const d = expectError('', 'syntax');
      assert.deepEqual([d.line, d.column], [1, 1]);
    });

    it('reports an unknown character on a later line with its line and column', () => {
      const text = '{\n  "version": 1,\n  "rules": [ @ ]\n}';
      const d = expectError(text, 'syntax', { needle: '@' });
      assert.equal(d.line, 3);
    });
  });

  describe('top level', () => {
    it('requires version', () => {
      const d = expectError('{ "rules": [] }', 'schema');
      assert.match(d.message, /missing required field "version"/);
    });

    for (const bad of [2, 0, '1', true]) {
      it(`rejects version ${JSON.stringify(bad)}: it must be the number 1`, () => {
        const text = `{\n  "version": ${JSON.stringify(bad)},\n  "rules": []\n}`;
        const d = expectError(text, 'schema', { needle: '"version"' });
        assert.match(d.message, /version/);
      });
    }

    it('rejects a default that is not allow, ask or deny', () => {
      const text = policyText([], { default: 'maybe' });
      const d = expectError(text, 'schema', { needle: '"default"' });
      assert.match(d.message, /allow|ask|deny/);
    });

    it('rejects rules that are not an array', () => {
      expectError('{\n  "version": 1,\n  "rules": { "decision": "allow" }\n}', 'schema', { needle: '"rules"' });
    });

    it('rejects a root that is not an object', () => {
      expectError('[ { "version": 1 } ]', 'schema');
    });

    it('rejects an unknown top-level field, with a "did you mean" hint', () => {
      const text = '{\n  "version": 1,\n  "rule": []\n}';
      const d = expectError(text, 'schema', { needle: '"rule"' });
      assert.match(d.message, /unknown field "rule"/);
      assert.match(d.message, /did you mean "rules"/);
    });
  });

  describe('a rule', () => {
    it('requires decision: a `schema` error at the rule, saying the field is missing', () => {
      const text = policyText([{ decision: 'allow' }, { tools: ['x'] }]);
      const d = expectError(text, 'schema', { needle: '{"tools"' });
      assert.match(d.message, /missing required field "decision"/);
    });

    it('rejects a decision that is not allow, ask or deny', () => {
      const text = policyText([{ decision: 'permit' }]);
      expectError(text, 'schema', { needle: '"decision"' });
    });

    // Each field with a value of the wrong type: a `schema` error pointing at the offending key or
    // list item, its message naming the path.
    const wrongTypes: Array<[field: string, value: unknown, at: string]> = [
      ['id', 7, '"id"'],
      ['reason', ['no'], '"reason"'],
      ['tools', 'mcp.*', '"tools"'],
      ['tools', [1], '1]'],
      ['kinds', 'mcp', '"kinds"'],
      ['kinds', ['local'], '"local"'],
      ['agents', 'main', '"agents"'],
      ['agents', [true], 'true'],
      ['hints', true, '"hints"'],
      ['hints', { readOnlyHint: 'yes' }, '"readOnlyHint"'],
      ['tags', 'createHint', '"tags"'],
      ['tags', [{}], '{}'],
      ['paths', 'src/**', '"paths"'],
      ['paths', [null], 'null'],
      ['commands', 'npm test', '"commands"'],
      ['commands', [['npm', 'test']], '["npm"'],
      ['input', ['/a'], '"input"'],
      ['input', { '/a': 5 }, '"/a"'],
      ['input', { '/a': { equal: 5 } }, '"/a"'],
      ['input', { '/a': { regex: 5 } }, '"/a"'],
      ['input', { '/a': { exists: 'yes' } }, '"/a"'],
      ['input', { '/a': { glob: '*', regex: 'x' } }, '"/a"'],
      ['timeout', '300', '"timeout"'],
      ['timeout', -1, '"timeout"'],
      ['onTimeout', 'allow', '"onTimeout"'],
      ['remember', 'forever', '"remember"'],
    ];
    for (const [field, value, needle] of wrongTypes) {
      it(`rejects ${field}: ${JSON.stringify(value)} as \`schema\` at ${needle}`, () => {
        const rule = { decision: 'ask', [field]: value };
        const text = policyText([rule]);
        const d = expectError(text, 'schema', { needle });
        assert.match(d.message, new RegExp(`rules\\[0\\]\\.${field}`), d.message);
      });
    }

    it('rejects an input key that is not a JSON Pointer', () => {
      const text = policyText([{ decision: 'deny', input: { recipient: '*@acme.com' } }]);
      const d = expectError(text, 'schema', { needle: '"recipient"' });
      assert.match(d.message, /JSON Pointer/);
    });

    for (const field of ['timeout', 'onTimeout', 'remember'] as const) {
      const value = { timeout: 30, onTimeout: 'keep', remember: 'never' }[field];
      for (const decision of ['allow', 'deny']) {
        it(`rejects ${field} on a rule whose decision is ${decision} (ask only)`, () => {
          const text = policyText([{ decision, [field]: value }]);
          const d = expectError(text, 'schema', { needle: `"${field}"` });
          assert.match(d.message, /ask/);
        });
      }
      it(`accepts ${field} on a rule whose decision is ask`, () => {
        expectValid(policyText([{ decision: 'ask', [field]: value }]));
      });
    }

    it('rejects an unknown field such as "tool" for "tools", at the key, with a "did you mean" hint', () => {
      const text = policyText([{ decision: 'allow' }, { tool: ['builtin.read_file'], decision: 'allow' }]);
      const d = expectError(text, 'schema', { needle: '"tool"' });
      assert.equal(d.line, 5, 'the second rule is on line 5');
      assert.match(d.message, /unknown field "tool"/);
      assert.match(d.message, /did you mean "tools"\?/);
      assert.equal(d.endColumn - d.column, '"tool"'.length, 'the range covers the key');
    });

    it('never turns a typo into a rule that matches every call: the file yields no rules and decides nothing', () => {
      const text = policyText([{ tool: ['builtin.read_file'], decision: 'allow' }]);
      const { layer } = load(text);
      assert.equal(layer.valid, false);
      const d = new Policy({ workspace: layer }).decide(
        { tool: { id: 'builtin.run_command' }, input: { command: 'rm -rf /' }, agent: 'main' },
        { workspaceFolder: process.cwd() },
      );
      assert.notEqual(d.decision, 'allow');
    });

    const typos: Array<[string, string]> = [
      ['decison', 'decision'],
      ['agent', 'agents'],
      ['kind', 'kinds'],
      ['path', 'paths'],
      ['command', 'commands'],
      ['tag', 'tags'],
      ['hint', 'hints'],
      ['inputs', 'input'],
      ['ontimeout', 'onTimeout'],
    ];
    for (const [typo, meant] of typos) {
      it(`suggests "${meant}" for the unknown field "${typo}"`, () => {
        const rule: Record<string, unknown> = { decision: 'ask', [typo]: ['x'] };
        if (typo === 'decison') delete rule.decision;
        const text = policyText([rule]);
        const ds = load(text).diagnostics.filter((d) => d.message.includes(`unknown field "${typo}"`));
        assert.equal(ds.length, 1, JSON.stringify(load(text).diagnostics));
        assert.equal(ds[0]!.code, 'schema');
        assert.deepEqual({ line: ds[0]!.line, column: ds[0]!.column }, positionOf(text, `"${typo}"`));
        assert.match(ds[0]!.message, new RegExp(`did you mean "${meant}"`));
      });
    }

    it('reports an unknown field with no close name without a hint, still as an error', () => {
      const d = expectError(policyText([{ decision: 'allow', frobnicate: 1 }]), 'schema', { needle: '"frobnicate"' });
      assert.doesNotMatch(d.message, /did you mean/);
    });

    it('rejects an unknown hint name, with a hint', () => {
      const text = policyText([{ decision: 'allow', hints: { readOnly: true } }]);
      const d = expectError(text, 'schema', { needle: '"readOnly"' });
      assert.match(d.message, /did you mean "readOnlyHint"/);
    });

    it('rejects a key that repeats in an object (JSON would silently keep the last one)', () => {
      const text = '{\n  "version": 1,\n  "rules": [\n    { "tools": ["mcp.github.*"], "decision": "deny", "decision": "allow" }\n  ]\n}';
      const d = expectError(text, 'schema', { needle: '"decision"', occurrence: 1 });
      assert.match(d.message, /duplicate field "decision"/);
    });

    it('rejects a repeated top-level key', () => {
      const text = '{\n  "version": 1,\n  "default": "deny",\n  "default": "allow"\n}';
      expectError(text, 'schema', { needle: '"default"', occurrence: 1 });
    });
  });

  describe('bad-glob', () => {
    it('reports a regex that does not compile as `bad-glob` at the matcher', () => {
      const text = policyText([{ decision: 'deny', input: { '/name': { regex: '(unclosed' } } }]);
      const d = expectError(text, 'bad-glob', { needle: '{"regex"' });
      assert.match(d.message, /unclosed/);
    });

    it('reports a glob that does not compile as `bad-glob`', () => {
      const glob = '@(a)'.repeat(2000); // more extglobs than minimatch compiles
      const text = policyText([{ decision: 'deny', paths: [glob] }]);
      const d = expectError(text, 'bad-glob');
      assert.equal(d.line, 4, 'on the line of the rule');
    });

    it('reports an empty command pattern as `bad-glob`', () => {
      const text = policyText([{ decision: 'deny', commands: ['   '] }]);
      expectError(text, 'bad-glob', { needle: '"   "' });
    });

    it('does not report a regex that compiles', () => {
      expectValid(policyText([{ decision: 'deny', input: { '/name': { regex: '^(prod|staging)-[a-z]+$' } } }]));
    });
  });

  describe('duplicate-id', () => {
    it('reports a second rule with the same id as `duplicate-id` at the second id', () => {
      const text = policyText([{ id: 'a', decision: 'allow' }, { id: 'b', decision: 'ask' }, { id: 'a', decision: 'deny' }]);
      const d = expectError(text, 'duplicate-id', { needle: '"a"', occurrence: 1 });
      assert.match(d.message, /"a"/);
    });

    it('allows rules without ids, and distinct ids', () => {
      expectValid(policyText([{ decision: 'allow' }, { decision: 'ask' }, { id: 'a', decision: 'deny' }, { id: 'b', decision: 'deny' }]));
    });
  });

  describe('inline tests', () => {
    it('accepts a test with every field of the spec', () => {
      expectValid(policyText([{ id: 'r', decision: 'allow' }], {
        tests: [{ name: 'n', call: { tool: 'mcp.a.b', input: { x: 1 }, kind: 'mcp', agent: 'main', hints: { readOnlyHint: true }, tags: ['t'] }, expect: 'allow', rule: 'r' }],
      }));
    });

    it('rejects an unknown field in a test call, with a hint', () => {
      const text = policyText([], { tests: [{ call: { tools: 'mcp.a.b' }, expect: 'allow' }] });
      const { diagnostics } = load(text);
      const d = diagnostics.find((x) => x.message.includes('unknown field "tools"'));
      assert.ok(d, JSON.stringify(diagnostics));
      assert.equal(d.code, 'schema');
      assert.match(d.message, /did you mean "tool"/);
    });

    it('rejects an expectation that is not a decision', () => {
      const text = policyText([], { tests: [{ call: { tool: 'mcp.a.b' }, expect: 'allowed' }] });
      expectError(text, 'schema', { needle: '"expect"' });
    });
  });

  describe('diagnostic ranges', () => {
    it('are 1-based lines and columns with an end after the start', () => {
      const text = policyText([{ decision: 'allow', tool: ['x'] }]);
      const d = expectError(text, 'schema');
      assert.ok(d.line >= 1 && d.column >= 1);
      assert.ok(d.endLine > d.line || (d.endLine === d.line && d.endColumn > d.column));
      assert.deepEqual(Object.keys(d).sort(), ['code', 'column', 'endColumn', 'endLine', 'file', 'line', 'message', 'severity']);
    });
  });
});
