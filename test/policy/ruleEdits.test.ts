// Editing the policy from the editor (issue 5): "Allow and Add Rule" suggestions and where they go,
// and the quick fixes of the diagnostics. Pure text in, text edits out: the assertions read the
// resulting text exactly, and load it again to check what it now decides.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { applyEdits, createScanner } from 'jsonc-parser';
import type { ToolCall, ToolDescriptor } from '../../src/policy/rules/call.js';
import { lintShadowed, lintSpawnDenied, type AgentSpawnInfo } from '../../src/policy/checking/lint.js';
import { probeCalls } from '../../src/policy/editing/probeCalls.js';
import { loadPolicyText, Policy, type DecideOptions, type PolicyDecision, type PolicyLayer } from '../../src/policy/policy.js';
import { PolicyEditError, type TextEdit } from '../../src/policy/editing/policyEdit.js';
import { FRIENDLY_ID } from '../../src/policy/editing/ruleIds.js';
import { addSpawnAllowEdit, renameFieldEdit, shadowingRuleIndex, spawnAllowIndex, suggestedFieldName } from '../../src/policy/editing/ruleQuickFixes.js';
import { canAllowByWorkspaceRule, insertionIndex, ruleSuggestions, type RuleSuggestion } from '../../src/policy/editing/ruleSuggestions.js';
import { deleteRuleEdit, detectFormatting, insertRuleEdit, moveRuleEdit, ruleIndexAt } from '../../src/policy/editing/ruleTextEdits.js';
import type { Rule } from '../../src/policy/file/schema.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

const FILE = '.agentpolicy.jsonc';
const BALANCED = fs.readFileSync(path.join(__dirname, '../../policies/balanced.agentpolicy.jsonc'), 'utf8');

let ws = '';
const opts = (): DecideOptions => ({ workspaceFolder: ws });

function load(text: string): PolicyLayer {
  const layer = loadPolicyText(text, FILE, 'workspace');
  assert.equal(layer.valid, true, `invalid policy: ${JSON.stringify(layer.diagnostics)}\n${text}`);
  return layer;
}

function decide(layer: PolicyLayer, call: ToolCall): PolicyDecision {
  return new Policy({ workspace: layer }).decide(call, opts());
}

function call(id: string, input: unknown = {}, agent = 'main', tool: Partial<ToolDescriptor> = {}): ToolCall {
  return { tool: { id, ...tool }, input, agent };
}

/** The edits, applied to the original text, give the new text. */
function assertEditsApply(text: string, result: { edits: TextEdit[]; newText: string }): void {
  assert.equal(applyEdits(text, result.edits), result.newText);
}

/** Other calls to check that nothing but the calls the new rule matches changes. */
const OTHER_CALLS: ToolCall[] = [
  call('builtin.read_file', { path: 'src/index.ts' }),
  call('builtin.read_file', { path: '.env' }),
  call('builtin.write_file', { path: 'src/server.ts' }),
  call('builtin.write_file', { path: 'README.md' }),
  call('builtin.write_file', { path: '/home/someone/.bashrc' }),
  call('builtin.write_file', { path: '.agentpolicy.jsonc' }),
  call('builtin.run_command', { command: 'npm test' }),
  call('builtin.run_command', { command: 'npm install left-pad' }),
  call('builtin.run_command', { command: 'npm install lodash' }),
  call('builtin.run_command', { command: 'git push origin main' }),
  call('builtin.run_command', { command: 'rm -rf node_modules' }),
  call('agents.spawn', { name: 'researcher' }),
  call('mcp.github.create_issue', { title: 'x' }),
  call('mcp.github.create_issue', { title: 'y' }, 'deployer'),
];

/**
 * Inserts the suggestion where `insertionIndex` says, and checks: the file stays valid, the call
 * is now allowed by the new rule, and every other call is decided as before unless the new rule
 * matches it (then it is that rule that allows it).
 */
function applySuggestion(text: string, target: ToolCall, suggestion: RuleSuggestion): { newText: string; layer: PolicyLayer; index: number } {
  const before = load(text);
  const index = insertionIndex(before, target, opts());
  const result = insertRuleEdit(text, suggestion.rule, index);
  assertEditsApply(text, result);
  assert.equal(result.insertedAt, index);
  const after = load(result.newText);
  const d = decide(after, target);
  assert.equal(d.decision, 'allow', `${suggestion.kind}: ${JSON.stringify(d)}`);
  assert.equal(d.rule?.id, result.rule.id);
  assert.equal(d.rule?.index, index);
  const alone = load(JSON.stringify({ version: 1, rules: [suggestion.rule] }));
  for (const other of [...OTHER_CALLS, ...probeCalls([before])]) {
    const was = decide(before, other);
    const now = decide(after, other);
    if (now.rule?.id === result.rule.id) {
      assert.equal(now.decision, 'allow');
      assert.equal(decide(alone, other).decision, 'allow', 'only a call the new rule matches changes');
    } else {
      assert.equal(now.decision, was.decision, `${suggestion.kind} changed ${JSON.stringify(other)}`);
      assert.equal(now.rule?.id ?? null, was.rule?.id ?? null);
    }
  }
  return { newText: result.newText, layer: after, index };
}

function suggestion(s: RuleSuggestion[], kind: RuleSuggestion['kind']): RuleSuggestion {
  const found = s.find((x) => x.kind === kind);
  assert.ok(found, `no ${kind} suggestion in ${JSON.stringify(s)}`);
  return found;
}

describe('rule edits', () => {
  before(async () => {
    await initShellParser();
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ruleedits-')));
    fs.mkdirSync(path.join(ws, 'src', 'lib'), { recursive: true });
  });
  after(() => {
    fs.rmSync(ws, { recursive: true, force: true });
  });

  describe('insertionIndex', () => {
    const rules = [
      { id: 'mcp', tools: ['mcp.*'], decision: 'deny' },
      { id: 'src-writes', tools: ['builtin.write_file'], paths: ['src/**'], decision: 'ask' },
      { id: 'builtins', tools: ['builtin.*'], decision: 'ask' },
    ];
    const layer = (): PolicyLayer => load(JSON.stringify({ version: 1, rules }, null, 2));

    it('is the index of the first rule of the file that matches the call', () => {
      assert.equal(insertionIndex(layer(), call('builtin.write_file', { path: 'src/a.ts' }), opts()), 1);
      assert.equal(insertionIndex(layer(), call('builtin.write_file', { path: 'docs/a.md' }), opts()), 2);
      assert.equal(insertionIndex(layer(), call('mcp.x.y'), opts()), 0);
    });

    it('is rules.length when no rule matches (the default decides)', () => {
      assert.equal(insertionIndex(layer(), call('client.lookup_price'), opts()), 3);
      assert.equal(insertionIndex(load('{ "version": 1 }'), call('client.x'), opts()), 0);
    });

    it('the inserted rule then decides the call, before the rule that asked', () => {
      const text = JSON.stringify({ version: 1, rules }, null, 2);
      const target = call('builtin.write_file', { path: 'src/lib/a.ts' });
      const suggestions = ruleSuggestions(target, { workspaceFolder: ws });
      assert.deepEqual(suggestions.map((s) => s.kind), ['exact', 'folder', 'tool']);
      for (const s of suggestions) {
        const { index } = applySuggestion(text, target, s);
        assert.equal(index, 1);
      }
    });

    it('canAllowByWorkspaceRule: not for a managed rule, a lowered allow, or an untrusted workspace', () => {
      const ref = (layer: string) => ({ rule: { layer }, lowered: false });
      assert.equal(canAllowByWorkspaceRule(ref('workspace')), true);
      assert.equal(canAllowByWorkspaceRule(ref('user')), true);
      assert.equal(canAllowByWorkspaceRule({ rule: null, lowered: false }), true);
      assert.equal(canAllowByWorkspaceRule(ref('managed')), false);
      assert.equal(canAllowByWorkspaceRule({ rule: { layer: 'workspace' }, lowered: true }), false);
      assert.equal(canAllowByWorkspaceRule(ref('workspace'), false), false);
    });
  });

  describe('insertRuleEdit keeps comments and formatting', () => {
    const rule: Rule = { id: 'allow-new', tools: ['client.x'], decision: 'allow' };
    // Tabs, line and block comments, a trailing comment, trailing commas, a one-line rule and a
    // multi-line one, a section comment set off by blank lines.
    const TABS = [
      '// The policy.',
      '{',
      '\t"version": 1, /* v1 */',
      '\t"rules": [ // tried in order',
      '\t\t// first: MCP is denied',
      '\t\t{ "id": "mcp", "tools": ["mcp.*"], "decision": "deny" }, // trailing',
      '\t\t/* block */ { "id": "ask-builtins", "tools": ["builtin.*"], "decision": "ask" },',
      '',
      '\t\t// ---- section ----',
      '',
      '\t\t{',
      '\t\t\t"id": "last",',
      '\t\t\t"decision": "ask", // inner',
      '\t\t},',
      '\t],',
      '}',
      '',
    ].join('\n');

    it('at the top: a one-line rule like its neighbour, before the comments above the first rule', () => {
      const r = insertRuleEdit(TABS, rule, 0);
      assertEditsApply(TABS, r);
      assert.deepEqual(r.edits, [{ offset: TABS.indexOf('// first'), length: 0, content: '{ "id": "allow-new", "tools": ["client.x"], "decision": "allow" },\n\t\t' }]);
      assert.equal(r.newText, TABS.replace('\t\t// first', '\t\t{ "id": "allow-new", "tools": ["client.x"], "decision": "allow" },\n\t\t// first'));
      assert.equal(r.insertedAt, 0);
    });

    it('in the middle: after the previous rule and its trailing comment, before the next one and its block comment', () => {
      const r = insertRuleEdit(TABS, rule, 1);
      assert.equal(r.newText, TABS.replace('\t\t/* block */', '\t\t{ "id": "allow-new", "tools": ["client.x"], "decision": "allow" },\n\t\t/* block */'));
    });

    it('before a multi-line rule: written one field a line, after the section comment', () => {
      const r = insertRuleEdit(TABS, rule, 2);
      const expected = TABS.replace(
        '\t\t{\n\t\t\t"id": "last"',
        '\t\t{\n\t\t\t"id": "allow-new",\n\t\t\t"tools": ["client.x"],\n\t\t\t"decision": "allow"\n\t\t},\n\t\t{\n\t\t\t"id": "last"',
      );
      assert.equal(r.newText, expected);
    });

    it('at the end: after the last rule, keeping the trailing comma style', () => {
      const r = insertRuleEdit(TABS, rule, 'end');
      assert.equal(r.insertedAt, 3);
      assert.equal(r.newText, TABS.replace('\t\t},\n\t],', '\t\t},\n\t\t{\n\t\t\t"id": "allow-new",\n\t\t\t"tools": ["client.x"],\n\t\t\t"decision": "allow"\n\t\t},\n\t],'));
      assert.equal(insertRuleEdit(TABS, rule, 99).newText, r.newText, 'an index past the end appends');
    });

    it('at the end of a list without a trailing comma: a comma after the old last rule, not after its comment', () => {
      const text = '{\n  "version": 1,\n  "rules": [\n    { "decision": "ask" } // catch-all\n  ]\n}\n';
      const r = insertRuleEdit(text, rule, 'end');
      assert.equal(
        r.newText,
        '{\n  "version": 1,\n  "rules": [\n    { "decision": "ask" }, // catch-all\n    { "id": "allow-new", "tools": ["client.x"], "decision": "allow" }\n  ]\n}\n',
      );
      assertEditsApply(text, r);
    });

    it('into an empty rules array, with its comment kept', () => {
      assert.equal(
        insertRuleEdit('{\n  "version": 1,\n  "rules": []\n}\n', rule, 0).newText,
        '{\n  "version": 1,\n  "rules": [\n    {\n      "id": "allow-new",\n      "tools": ["client.x"],\n      "decision": "allow"\n    }\n  ]\n}\n',
      );
      assert.equal(
        insertRuleEdit('{\n  "version": 1,\n  "rules": [\n    // none yet\n  ],\n}\n', rule, 0).newText,
        '{\n  "version": 1,\n  "rules": [\n    // none yet\n    {\n      "id": "allow-new",\n      "tools": ["client.x"],\n      "decision": "allow"\n    }\n  ],\n}\n',
      );
    });

    it('creates rules when missing, after the last field and its trailing comment', () => {
      const r = insertRuleEdit('// top\n{\n  "version": 1, // v\n  "default": "ask" // d\n}\n', rule, 0);
      assert.equal(
        r.newText,
        '// top\n{\n  "version": 1, // v\n  "default": "ask", // d\n  "rules": [\n    {\n      "id": "allow-new",\n      "tools": ["client.x"],\n      "decision": "allow"\n    }\n  ]\n}\n',
      );
      assert.equal(r.insertedAt, 0);
      assert.equal(load(r.newText).rules.length, 1);
      assert.equal(
        insertRuleEdit('{}', rule, 'end').newText,
        '{\n  "rules": [\n    {\n      "id": "allow-new",\n      "tools": ["client.x"],\n      "decision": "allow"\n    }\n  ]\n}',
      );
    });

    it('detects CRLF and four-space indentation', () => {
      const text = '{\r\n    "version": 1,\r\n    "rules": [\r\n        {\r\n            "decision": "ask"\r\n        }\r\n    ]\r\n}\r\n';
      assert.deepEqual(detectFormatting(text), { insertSpaces: true, tabSize: 4, eol: '\r\n' });
      assert.deepEqual(detectFormatting(TABS), { insertSpaces: false, tabSize: 4, eol: '\n' });
      const r = insertRuleEdit(text, rule, 0);
      assert.equal(
        r.newText,
        '{\r\n    "version": 1,\r\n    "rules": [\r\n        {\r\n            "id": "allow-new",\r\n            "tools": ["client.x"],\r\n            "decision": "allow"\r\n        },\r\n        {\r\n            "decision": "ask"\r\n        }\r\n    ]\r\n}\r\n',
      );
    });

    it('inline arrays stay inline', () => {
      const text = '{ "version": 1, "rules": [{ "decision": "deny" }, { "decision": "ask" }] }';
      assert.equal(insertRuleEdit(text, rule, 1).newText, '{ "version": 1, "rules": [{ "decision": "deny" }, { "id": "allow-new", "tools": ["client.x"], "decision": "allow" }, { "decision": "ask" }] }');
      assert.equal(insertRuleEdit(text, rule, 'end').newText, '{ "version": 1, "rules": [{ "decision": "deny" }, { "decision": "ask" }, { "id": "allow-new", "tools": ["client.x"], "decision": "allow" }] }');
    });

    it('a used id gets a suffix', () => {
      const text = '{ "version": 1, "rules": [{ "id": "allow-new", "decision": "deny" }, { "id": "allow-new-2", "decision": "ask" }] }';
      const r = insertRuleEdit(text, rule, 0);
      assert.equal(r.rule.id, 'allow-new-3');
      assert.equal(load(r.newText).rules[0]!.ref.id, 'allow-new-3');
    });

    it('in the balanced template: a pure insertion of the rendered rule, nothing else touched', () => {
      const r = insertRuleEdit(BALANCED, rule, 9);
      assert.equal(r.edits.length, 1);
      assert.equal(r.edits[0]!.length, 0);
      assert.equal(r.edits[0]!.content, '{\n      "id": "allow-new",\n      "tools": ["client.x"],\n      "decision": "allow"\n    },\n    ');
      assert.equal(r.newText.replace(r.edits[0]!.content, ''), BALANCED);
      assert.equal(load(r.newText).rules[9]!.ref.id, 'allow-new');
    });

    it('refuses a file that does not parse, or whose rules is not an array', () => {
      assert.throws(() => insertRuleEdit('{ "version": 1, "rules": [', rule, 0), PolicyEditError);
      assert.throws(() => insertRuleEdit('{ "version": 1, "rules": {} }', rule, 0), PolicyEditError);
      assert.throws(() => insertRuleEdit('[]', rule, 0), PolicyEditError);
    });
  });

  describe('ruleSuggestions', () => {
    it('narrowest first: exact input, command prefix, tool', () => {
      const s = ruleSuggestions(call('builtin.run_command', { command: 'npm run lint --fix' }), { workspaceFolder: ws });
      assert.deepEqual(s.map((x) => x.kind), ['exact', 'command', 'tool']);
      assert.deepEqual(s.map((x) => x.rule), [
        { id: 'allow-run-command-exact', tools: ['builtin.run_command'], input: { '': { equals: { command: 'npm run lint --fix' } } }, decision: 'allow' },
        { id: 'allow-run-command-npm-run-lint', tools: ['builtin.run_command'], commands: ['npm run lint *'], decision: 'allow' },
        { id: 'allow-run-command', tools: ['builtin.run_command'], decision: 'allow' },
      ]);
      assert.deepEqual(s.map((x) => x.label), ['This exact input', 'This command prefix', 'This tool']);
      assert.equal(s[0]!.description, 'builtin.run_command {"command":"npm run lint --fix"}');
      assert.equal(s[1]!.description, 'npm run lint * (builtin.run_command)');
    });

    it('this exact input: the whole input, so a call with one more field is not allowed', () => {
      const target = call('mcp.gmail.send_email', { to: 'a@acme.com', body: 'hi' });
      const exact = suggestion(ruleSuggestions(target, { workspaceFolder: ws }), 'exact');
      const layer = load(JSON.stringify({ version: 1, rules: [exact.rule] }));
      assert.equal(decide(layer, target).decision, 'allow');
      assert.equal(decide(layer, call('mcp.gmail.send_email', { body: 'hi', to: 'a@acme.com' })).decision, 'allow', 'key order does not matter');
      assert.equal(decide(layer, call('mcp.gmail.send_email', { to: 'a@acme.com', body: 'hi', bcc: 'x@evil.com' })).decision, 'ask');
      assert.equal(decide(layer, call('mcp.gmail.send_email', { to: 'b@acme.com', body: 'hi' })).decision, 'ask');
      assert.equal(decide(layer, call('mcp.gmail.send_draft', { to: 'a@acme.com', body: 'hi' })).decision, 'ask');
      for (const input of [undefined, 'text', [1, 2], null]) {
        const only = suggestion(ruleSuggestions(call('client.x', input), { workspaceFolder: ws }), 'exact');
        const l = load(JSON.stringify({ version: 1, rules: [only.rule] }));
        assert.equal(decide(l, call('client.x', input)).decision, 'allow', JSON.stringify(input));
        assert.equal(decide(l, call('client.x', { other: 1 })).decision, 'ask');
      }
    });

    it('this command prefix: words up to the first argument-looking word, one pattern per simple command', () => {
      const prefix = (command: string): string[] | undefined =>
        ruleSuggestions(call('builtin.run_command', { command }), { workspaceFolder: ws }).find((x) => x.kind === 'command')?.rule.commands;
      assert.deepEqual(prefix('npm test'), ['npm test *']);
      assert.deepEqual(prefix('git status'), ['git status *']);
      assert.deepEqual(prefix('git commit -m "a message"'), ['git commit *']);
      assert.deepEqual(prefix('cat src/a.ts'), ['cat *']);
      assert.deepEqual(prefix('ls -la'), ['ls *']);
      assert.deepEqual(prefix('sleep 5'), ['sleep *']);
      assert.deepEqual(prefix('git push origin main'), ['git push origin *'], 'at most three words');
      assert.deepEqual(prefix('FOO=1 npm test'), ['FOO=1 npm test *', 'npm test *'], 'the command without its assignments is a part too');
      assert.deepEqual(prefix('./gradlew build --info'), ['./gradlew build *']);
      assert.deepEqual(prefix('npm run lint && npm test'), ['npm run lint *', 'npm test *'], 'an allow needs every part');
      assert.deepEqual(prefix('npm test; npm test'), ['npm test *']);
      assert.equal(prefix('npm test > out.txt'), undefined, 'a redirect to a file never matches an allow pattern');
      assert.equal(prefix('cat <(ls)'), undefined);
      assert.equal(prefix('echo "unterminated'), undefined, 'unparseable');
      assert.equal(prefix('$(evil) x'), undefined);
      for (const anything of ['bash -c "rm -rf /"', 'sudo rm -rf x', 'env FOO=1 make', '/usr/bin/python3 -c "x"', 'xargs rm', 'find . -delete', 'npm test && sh x.sh']) {
        assert.equal(prefix(anything), undefined, `${anything}: a prefix of it would allow any command`);
      }
      assert.equal(ruleSuggestions(call('builtin.read_file', { path: 'src/a.ts' }), { workspaceFolder: ws }).find((x) => x.kind === 'command'), undefined);
    });

    it('a call of several parts: the suggestions cover the parts that asked, placed before the rule that decided them', () => {
      const text = JSON.stringify({
        version: 1,
        rules: [
          { id: 'status', tools: ['builtin.run_command'], commands: ['git status'], decision: 'allow' },
          { id: 'net', tools: ['builtin.run_command'], commands: ['curl *'], decision: 'ask' },
          { id: 'docs', tools: ['builtin.read_file'], paths: ['docs/**'], decision: 'allow' },
        ],
      });
      const before = load(text);
      const target = call('builtin.run_command', { command: 'git status && curl -s x && git status' });
      const asked = decide(before, target);
      assert.equal(asked.decision, 'ask');
      const s = ruleSuggestions(target, { workspaceFolder: ws, asked });
      assert.deepEqual(suggestion(s, 'command').rule.commands, ['curl *'], 'only the part that asked');
      const at = insertionIndex(before, target, opts(), asked);
      assert.equal(at, 1, 'before the ask rule that decided curl');
      const after = load(insertRuleEdit(text, suggestion(s, 'command').rule, at).newText);
      assert.equal(decide(after, target).decision, 'allow');
      assert.equal(decide(after, call('builtin.run_command', { command: 'curl -s y && rm x' })).decision, 'ask', 'the rule covers curl, not what it was chained with');
      // Paths: only the path that asked makes the folder rule.
      const read = call('builtin.read_file', { paths: ['docs/a.md', 'src/lib/b.ts'] });
      const folder = suggestion(ruleSuggestions(read, { workspaceFolder: ws, asked: decide(before, read) }), 'folder');
      assert.deepEqual(folder.rule.paths, ['src/lib/**']);
    });

    it('this folder of paths: the folder of each path, with its subfolders', () => {
      const folders = (input: unknown, tool: Partial<ToolDescriptor> = {}): string[] | undefined =>
        ruleSuggestions(call('builtin.read_file', input, 'main', tool), { workspaceFolder: ws }).find((x) => x.kind === 'folder')?.rule.paths;
      assert.deepEqual(folders({ path: 'src/lib/a.ts' }), ['src/lib/**']);
      assert.deepEqual(folders({ path: `${ws}/src/lib/a.ts` }), ['src/lib/**'], 'an absolute path inside the workspace');
      assert.deepEqual(folders({ paths: ['src/lib/a.ts', 'test/b.ts'] }), ['src/lib/**', 'test/**']);
      assert.deepEqual(folders({ paths: ['src/lib/a.ts', 'src/b.ts'] }), ['src/**'], 'a nested folder folds into its parent');
      assert.deepEqual(folders({ path: 'README.md' }), ['**'], 'a file at the top: the workspace folder');
      assert.deepEqual(folders({ path: 'we[ird]/(x)/a.txt' }), ['we\\[ird\\]/\\(x\\)/**'], 'glob characters escaped');
      assert.equal(folders({ other: 'x' }), undefined, 'no path arguments');
      assert.deepEqual(folders({ path: 'src/lib' }), ['src/lib', 'src/lib/**'], 'a directory is its own folder');
      assert.deepEqual(folders({ paths: ['src', 'src/lib/a.ts'] }), ['src', 'src/**']);
      assert.deepEqual(folders({ path: '.' }), ['**']);
      const withCwd = ruleSuggestions(call('builtin.run_command', { command: 'make build', cwd: 'src' }, 'main', { pathArgs: ['cwd'], commandArg: 'command' }), { workspaceFolder: ws });
      assert.deepEqual(withCwd.map((x) => x.kind), ['exact', 'command', 'tool'], 'no folder rule for a command: the folder says nothing of what it runs');
      const s = ruleSuggestions(call('builtin.read_file', { path: 'src/lib/a.ts' }), { workspaceFolder: ws });
      assert.deepEqual(s.map((x) => x.kind), ['exact', 'folder', 'tool']);
      assert.deepEqual(suggestion(s, 'folder').rule, { id: 'allow-read-file-src-lib', tools: ['builtin.read_file'], paths: ['src/lib/**'], decision: 'allow' });
      assert.equal(suggestion(s, 'folder').description, 'src/lib/** (builtin.read_file)');
    });

    it('a path outside the workspace: only the exact input, never a folder, command or tool rule', () => {
      for (const target of [
        call('builtin.read_file', { path: '/etc/passwd' }),
        call('builtin.read_file', { path: '../elsewhere/a.txt' }),
        call('builtin.read_file', { paths: ['src/a.ts', '/etc/passwd'] }),
        call('builtin.read_file', { path: 'file:///etc/hosts' }),
        call('builtin.run_command', { command: 'ls', cwd: '/' }, 'main', { pathArgs: ['cwd'], commandArg: 'command' }),
        call('builtin.read_file', { path: { not: 'a string' } }),
      ]) {
        const s = ruleSuggestions(target, { workspaceFolder: ws });
        assert.deepEqual(s.map((x) => x.kind), ['exact'], JSON.stringify(target.input));
      }
    });

    it('ids: friendly, unique among the suggestions and against the file', () => {
      const targets = [
        call('builtin.read_file', { path: 'src/lib/a.ts' }),
        call('builtin.run_command', { command: 'npm run lint --fix' }),
        call('mcp.My_Server.Do[It]!', { paths: ['a/(x)/b.txt'] }),
        call('client.ＬＯＯＫ', { path: 'x.txt' }),
        call(`client.${'very_long_name_'.repeat(8)}`, { command: 'make all' }),
      ];
      for (const target of targets) {
        const s = ruleSuggestions(target, { workspaceFolder: ws });
        const ids = s.map((x) => x.rule.id!);
        assert.equal(new Set(ids).size, ids.length);
        for (const id of ids) {
          assert.match(id, FRIENDLY_ID);
          assert.ok(id.length <= 48, id);
        }
        for (const x of s) applySuggestion('{ "version": 1, "rules": [{ "decision": "ask" }] }', target, x);
      }
      const s = ruleSuggestions(call('builtin.read_file', { path: 'src/a.ts' }), { workspaceFolder: ws, existingIds: ['allow-read-file', 'allow-read-file-src'] });
      assert.deepEqual(s.map((x) => x.rule.id), ['allow-read-file-exact', 'allow-read-file-src-2', 'allow-read-file-2']);
    });

    it('each suggestion, inserted into the balanced template, decides its call and changes nothing else it does not match', () => {
      for (const target of [
        call('builtin.write_file', { path: 'src/app.ts' }),
        call('builtin.write_file', { path: 'docs/guide.md' }),
        call('builtin.run_command', { command: 'npm install left-pad' }),
        call('builtin.run_command', { command: 'npm run typecheck && npm test' }),
        call('mcp.github.create_issue', { title: 'x' }),
      ]) {
        assert.equal(decide(load(BALANCED), target).decision, 'ask');
        const s = ruleSuggestions(target, { workspaceFolder: ws, existingIds: load(BALANCED).rules.flatMap((r) => (r.ref.id ? [r.ref.id] : [])) });
        assert.ok(s.length >= 2);
        for (const x of s) applySuggestion(BALANCED, target, x);
      }
    });

    it('the exact-input rule changes no call with another input', () => {
      const target = call('builtin.run_command', { command: 'npm install left-pad' });
      const { layer } = applySuggestion(BALANCED, target, suggestion(ruleSuggestions(target, { workspaceFolder: ws }), 'exact'));
      const before = load(BALANCED);
      for (const other of OTHER_CALLS.filter((c) => JSON.stringify(c.input) !== JSON.stringify(target.input))) {
        assert.deepEqual(decide(layer, other).decision, decide(before, other).decision);
      }
    });
  });

  describe('quick fixes', () => {
    const SHADOWED = [
      '{',
      '  "version": 1,',
      '  "rules": [',
      '    // everything under src asks',
      '    { "id": "src", "tools": ["builtin.read_file"], "paths": ["src/**"], "decision": "ask" },',
      '    { "id": "mcp", "tools": ["mcp.*"], "decision": "deny" },',
      '    /* meant to let the generated code be read */',
      '    { "id": "generated", "tools": ["builtin.read_file"], "paths": ["src/gen/index.ts"], "decision": "allow" } // added later',
      '  ]',
      '}',
      '',
    ].join('\n');

    it('move a shadowed rule above the rule that shadows it: comments travel with it, the warning goes', () => {
      const layer = load(SHADOWED);
      const [d] = lintShadowed(layer);
      assert.ok(d);
      const from = ruleIndexAt(SHADOWED, d.offset)!;
      assert.equal(from, 2);
      const to = shadowingRuleIndex(layer, from)!;
      assert.equal(to, 0);
      const r = moveRuleEdit(SHADOWED, from, to);
      assertEditsApply(SHADOWED, r);
      assert.equal(
        r.newText,
        [
          '{',
          '  "version": 1,',
          '  "rules": [',
          '    /* meant to let the generated code be read */',
          '    { "id": "generated", "tools": ["builtin.read_file"], "paths": ["src/gen/index.ts"], "decision": "allow" }, // added later',
          '    // everything under src asks',
          '    { "id": "src", "tools": ["builtin.read_file"], "paths": ["src/**"], "decision": "ask" },',
          '    { "id": "mcp", "tools": ["mcp.*"], "decision": "deny" }',
          '  ]',
          '}',
          '',
        ].join('\n'),
      );
      const moved = load(r.newText);
      assert.deepEqual(lintShadowed(moved), []);
      assert.equal(decide(moved, call('builtin.read_file', { path: 'src/gen/index.ts' })).rule?.id, 'generated');
      assert.equal(decide(moved, call('builtin.read_file', { path: 'src/a.ts' })).rule?.id, 'src');
    });

    it('move down, and within the tabbed file with trailing commas', () => {
      const text = '{\n\t"version": 1,\n\t"rules": [\n\t\t{ "id": "a", "decision": "ask" },\n\t\t{ "id": "b", "decision": "deny" },\n\t\t{ "id": "c", "decision": "allow" },\n\t],\n}\n';
      assert.equal(moveRuleEdit(text, 0, 2).newText, '{\n\t"version": 1,\n\t"rules": [\n\t\t{ "id": "b", "decision": "deny" },\n\t\t{ "id": "c", "decision": "allow" },\n\t\t{ "id": "a", "decision": "ask" },\n\t],\n}\n');
      assert.equal(moveRuleEdit(text, 2, 1).newText, '{\n\t"version": 1,\n\t"rules": [\n\t\t{ "id": "a", "decision": "ask" },\n\t\t{ "id": "c", "decision": "allow" },\n\t\t{ "id": "b", "decision": "deny" },\n\t],\n}\n');
      assert.deepEqual(moveRuleEdit(text, 1, 1).edits, []);
      assert.throws(() => moveRuleEdit(text, 3, 0), PolicyEditError);
    });

    it('move in the balanced template keeps every other line', () => {
      const layer = load(BALANCED);
      const read = layer.rules.findIndex((r) => r.ref.id === 'read');
      const r = moveRuleEdit(BALANCED, read, 0);
      const moved = load(r.newText);
      assert.equal(moved.rules[0]!.ref.id, 'read');
      assert.deepEqual([...r.newText.split('\n')].sort(), [...BALANCED.split('\n')].sort(), 'the same lines, in another order');
    });

    it('delete a shadowed rule: with its comments, and no decision changes', () => {
      const r = deleteRuleEdit(SHADOWED, 2);
      assertEditsApply(SHADOWED, r);
      assert.equal(
        r.newText,
        [
          '{',
          '  "version": 1,',
          '  "rules": [',
          '    // everything under src asks',
          '    { "id": "src", "tools": ["builtin.read_file"], "paths": ["src/**"], "decision": "ask" },',
          '    { "id": "mcp", "tools": ["mcp.*"], "decision": "deny" }',
          '  ]',
          '}',
          '',
        ].join('\n'),
      );
      const before = load(SHADOWED);
      const after = load(r.newText);
      for (const c of probeCalls([before])) assert.deepEqual(decide(after, c).decision, decide(before, c).decision);
      assert.equal(deleteRuleEdit(SHADOWED, 0).newText.includes('everything under src'), false, 'the comment above a rule goes with it');
      assert.equal(deleteRuleEdit('{ "rules": [{ "decision": "ask" }] }', 0).newText, '{ "rules": [] }');
      assert.equal(deleteRuleEdit('{ "rules": [{ "decision": "ask" }, { "decision": "deny" }] }', 0).newText, '{ "rules": [{ "decision": "deny" }] }');
      assert.equal(deleteRuleEdit('{ "rules": [{ "decision": "ask" }, { "decision": "deny" }] }', 1).newText, '{ "rules": [{ "decision": "ask" }] }');
    });

    it('delete keeps a section comment that belongs to the next rule', () => {
      const text = '{\n  "rules": [\n    { "id": "a", "decision": "ask" },\n    { "id": "b", "decision": "ask" },\n\n    // ---- section ----\n\n    { "id": "c", "decision": "deny" }\n  ]\n}\n';
      assert.equal(deleteRuleEdit(text, 1).newText, '{\n  "rules": [\n    { "id": "a", "decision": "ask" },\n\n    // ---- section ----\n\n    { "id": "c", "decision": "deny" }\n  ]\n}\n');
    });

    describe('add an agents.spawn allow for spawn-denied', () => {
      const agents: AgentSpawnInfo[] = [{ name: 'main', subagents: ['researcher'] }];

      it('denied by a rule: the allow goes right before it', () => {
        const text = JSON.stringify(
          { version: 1, rules: [{ id: 'read', tools: ['builtin.read_file'], decision: 'allow' }, { id: 'no-agents', tools: ['agents.*'], decision: 'deny' }, { decision: 'ask' }] },
          null, 2,
        );
        const layer = load(text);
        assert.equal(lintSpawnDenied(layer, agents, ws).length, 1);
        const at = spawnAllowIndex(layer, agents, ws);
        assert.equal(at, 1);
        const r = addSpawnAllowEdit(text, at);
        assertEditsApply(text, r);
        const fixed = load(r.newText);
        assert.deepEqual(lintSpawnDenied(fixed, agents, ws), []);
        assert.equal(fixed.rules[1]!.ref.id, 'allow-spawn');
        assert.deepEqual(fixed.rules[1]!.rule, { id: 'allow-spawn', tools: ['agents.spawn'], decision: 'allow' });
        assert.equal(decide(fixed, call('agents.message', {})).decision, 'deny', 'the rest of the deny still stands');
      });

      it('denied by the default: after every rule, so no rule loses its say', () => {
        const text = '{\n  "version": 1,\n  "default": "deny",\n  "rules": [\n    { "id": "no-deployer-agents", "tools": ["agents.spawn"], "agents": ["deployer"], "decision": "deny" }\n  ]\n}\n';
        const layer = load(text);
        assert.equal(lintSpawnDenied(layer, agents, ws).length, 1);
        const at = spawnAllowIndex(layer, agents, ws);
        assert.equal(at, 1);
        const r = addSpawnAllowEdit(text, at);
        assert.equal(
          r.newText,
          '{\n  "version": 1,\n  "default": "deny",\n  "rules": [\n    { "id": "no-deployer-agents", "tools": ["agents.spawn"], "agents": ["deployer"], "decision": "deny" },\n    { "id": "allow-spawn", "tools": ["agents.spawn"], "decision": "allow" }\n  ]\n}\n',
        );
        const fixed = load(r.newText);
        assert.deepEqual(lintSpawnDenied(fixed, agents, ws), []);
        assert.equal(decide(fixed, call('agents.spawn', {}, 'deployer')).decision, 'deny');
      });

      it('at the top, and into a file with no rules', () => {
        const r = addSpawnAllowEdit('{ "version": 1, "default": "deny" }', 0);
        const fixed = load(r.newText);
        assert.deepEqual(lintSpawnDenied(fixed, agents, ws), []);
        const again = addSpawnAllowEdit(r.newText, 0);
        assert.equal(again.rule.id, 'allow-spawn-2', 'ids stay unique');
      });
    });

    it('rename a misspelt field to the one the diagnostic suggests', () => {
      const text = '{\n  "version": 1,\n  "rules": [\n    { "tool": ["mcp.github.*"], "decision": "deny" } // no GitHub\n  ]\n}\n';
      const layer = loadPolicyText(text, FILE, 'workspace');
      assert.equal(layer.valid, false);
      const d = layer.diagnostics.find((x) => x.code === 'schema')!;
      assert.equal(suggestedFieldName(d.message), 'tools');
      const r = renameFieldEdit(text, d.offset, d.length, suggestedFieldName(d.message)!);
      assert.deepEqual(r.edits, [{ offset: text.indexOf('"tool"'), length: 6, content: '"tools"' }]);
      assert.equal(r.newText, text.replace('"tool"', '"tools"'));
      const fixed = load(r.newText);
      assert.equal(decide(fixed, call('mcp.github.push')).decision, 'deny');
      assert.equal(decide(fixed, call('mcp.slack.post')).decision, 'ask');
    });

    it('suggestedFieldName and renameFieldEdit on other messages and ranges', () => {
      assert.equal(suggestedFieldName('unknown field "decison" at rules[0]; did you mean "decision"?'), 'decision');
      assert.equal(suggestedFieldName('unknown field "zzz" at rules[0]'), undefined);
      assert.equal(suggestedFieldName('expected "allow" or "ask" or "deny" at rules[0].decision'), undefined);
      assert.throws(() => renameFieldEdit('{ "a": 1 }', 0, 1, 'b'), PolicyEditError);
    });

    it('ruleIndexAt', () => {
      const at = (needle: string): number | undefined => ruleIndexAt(SHADOWED, SHADOWED.indexOf(needle));
      assert.equal(at('{ "id": "src"'), 0);
      assert.equal(at('"mcp.*"'), 1);
      assert.equal(at('{ "id": "generated"'), 2);
      assert.equal(at('"version"'), undefined);
    });
  });
  describe('properties over random layouts', () => {
    interface Layout {
      unit: string;
      eol: string;
      trailingComma: boolean;
      bracketComment: boolean;
      rules: Array<{ multiline: boolean; above: '' | 'line' | 'block' | 'blank' | 'section'; trailing: boolean; tools: boolean }>;
    }
    const layoutArb: fc.Arbitrary<Layout> = fc.record({
      unit: fc.constantFrom('\t', '  ', '    '),
      eol: fc.constantFrom('\n', '\r\n'),
      trailingComma: fc.boolean(),
      bracketComment: fc.boolean(),
      rules: fc.array(
        fc.record({ multiline: fc.boolean(), above: fc.constantFrom('' as const, 'line' as const, 'block' as const, 'blank' as const, 'section' as const), trailing: fc.boolean(), tools: fc.boolean() }),
        { maxLength: 5 },
      ),
    });

    function render(l: Layout): string {
      const i1 = l.unit;
      const i2 = l.unit + l.unit;
      const lines = ['// a policy', '{', `${i1}"version": 1,`, `${i1}"rules": [${l.bracketComment ? ' // in order' : ''}`];
      l.rules.forEach((r, k) => {
        const last = k === l.rules.length - 1;
        if (r.above === 'line') lines.push(`${i2}// about r${k}`);
        if (r.above === 'block') lines.push(`${i2}/* about r${k} */`);
        if (r.above === 'blank') lines.push('');
        if (r.above === 'section') lines.push('', `${i2}// ---- section ${k} ----`, '');
        const fields = [`"id": "r${k}"`, ...(r.tools ? ['"tools": ["client.x", "mcp.*"]'] : []), '"decision": "ask"'];
        const comma = !last || l.trailingComma ? ',' : '';
        const trailing = r.trailing ? ` // after r${k}` : '';
        if (r.multiline) lines.push(`${i2}{`, ...fields.map((f, j) => `${i2}${i1}${f}${j < fields.length - 1 ? ',' : ''}`), `${i2}}${comma}${trailing}`);
        else lines.push(`${i2}{ ${fields.join(', ')} }${comma}${trailing}`);
      });
      lines.push(`${i1}],`, '}', '');
      return lines.join(l.eol);
    }

    function comments(text: string): string[] {
      const scanner = createScanner(text, false);
      const out: string[] = [];
      for (let kind = scanner.scan(); kind !== 17; kind = scanner.scan()) if (kind === 12 || kind === 13) out.push(scanner.getTokenValue());
      return out.sort();
    }

    const ids = (text: string): (string | null)[] => load(text).rules.map((r) => r.ref.id);

    it('insert then delete gives back the text; a move keeps every comment; results are valid and in the intended order', () => {
      fc.assert(
        fc.property(layoutArb, fc.nat(), fc.nat(), (l, x, y) => {
          const text = render(l);
          const n = l.rules.length;
          const before = ids(text);
          const at = x % (n + 1);
          const inserted = insertRuleEdit(text, { id: 'new', tools: ['client.y'], decision: 'allow' }, at);
          assertEditsApply(text, inserted);
          const expected = [...before];
          expected.splice(at, 0, 'new');
          assert.deepEqual(ids(inserted.newText), expected);
          assert.deepEqual(comments(inserted.newText), comments(text));
          if (l.eol === '\n') assert.ok(!inserted.newText.includes('\r'));
          else assert.ok(!/[^\r]\n/.test(inserted.newText), 'CRLF throughout');
          // An emptied list is written `[]` (the spaces that were inside it are not known any more).
          assert.equal(deleteRuleEdit(inserted.newText, at).newText, n === 0 ? text.replace(/\[\s*\]/, '[]') : text);
          if (n === 0) return;
          const from = x % n;
          const to = y % n;
          const moved = moveRuleEdit(text, from, to);
          assertEditsApply(text, moved);
          const order = [...before];
          const [m] = order.splice(from, 1);
          order.splice(to, 0, m!);
          assert.deepEqual(ids(moved.newText), order);
          assert.deepEqual(comments(moved.newText), comments(text));
          const deleted = deleteRuleEdit(text, from);
          assert.deepEqual(ids(deleted.newText), before.filter((_, k) => k !== from));
          for (const c of comments(deleted.newText)) assert.ok(comments(text).includes(c));
        }),
        { numRuns: 400 },
      );
    });
  });
});
