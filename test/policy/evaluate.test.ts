// Decisions (policy-format.md): every matcher of "A rule", path arguments, commands, "loosening
// needs every part, tightening needs any part", the decision object, layers, untrusted
// workspaces and invalid files.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ToolAnnotations, ToolCall, ToolDescriptor } from '../../src/policy/rules/call.js';
import { PathResolver, realpathByWalk, resolvesThroughDescriptors } from '../../src/policy/paths/paths.js';
import { loadPolicyText, nextLayerState, Policy, type DecideOptions, type LayerState, type PolicyDecision, type PolicyLayer } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import type { LayerName } from '../../src/policy/rules/compile.js';

type Layers = Partial<Record<LayerName, PolicyLayer | LayerState>>;

const FILES: Record<LayerName, string> = { managed: 'managed.jsonc', workspace: '.agentpolicy.jsonc', user: 'user.jsonc' };

/** A valid layer from rules (and top-level fields such as `default`). */
function layer(rules: readonly unknown[], top: Record<string, unknown> = {}, name: LayerName = 'workspace'): PolicyLayer {
  const text = JSON.stringify({ version: 1, ...top, rules }, null, 2);
  const l = loadPolicyText(text, FILES[name], name);
  assert.equal(l.valid, true, `test policy is invalid: ${JSON.stringify(l.diagnostics)}`);
  return l;
}

function invalidLayer(text: string, name: LayerName = 'workspace'): PolicyLayer {
  const l = loadPolicyText(text, FILES[name], name);
  assert.equal(l.valid, false, 'this layer should be invalid');
  return l;
}

function policy(rules: readonly unknown[], top: Record<string, unknown> = {}): Policy {
  return new Policy({ workspace: layer(rules, top) });
}

interface CallOptions {
  agent?: string;
  kind?: ToolDescriptor['kind'];
  annotations?: ToolAnnotations;
  tags?: string[];
  pathArgs?: string[];
  commandArg?: string;
}

function call(id: string, input: unknown = {}, o: CallOptions = {}): ToolCall {
  const tool: ToolDescriptor = { id };
  if (o.kind) tool.kind = o.kind;
  if (o.annotations) tool.annotations = o.annotations;
  if (o.tags) tool.tags = o.tags;
  if (o.pathArgs) tool.pathArgs = o.pathArgs;
  if (o.commandArg) tool.commandArg = o.commandArg;
  return { tool, input, agent: o.agent ?? 'main' };
}

let root = '';
let ws = '';
let outside = '';

function decide(p: Policy, c: ToolCall, o: Partial<DecideOptions> = {}): PolicyDecision {
  return p.decide(c, { workspaceFolder: ws, ...o });
}

/** The id of the deciding rule, or "default:<decision>" when none did. */
function by(p: Policy, c: ToolCall, o: Partial<DecideOptions> = {}): string {
  const d = decide(p, c, o);
  return d.rule ? `${d.rule.id ?? d.rule.index}:${d.decision}` : `default:${d.decision}`;
}

describe('policy evaluation', () => {
  before(async () => {
    await initShellParser();
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-eval-')));
    ws = path.join(root, 'ws');
    outside = path.join(root, 'outside');
    for (const dir of ['src/lib', 'secrets', 'docs']) fs.mkdirSync(path.join(ws, dir), { recursive: true });
    fs.mkdirSync(outside);
    for (const file of ['src/a.ts', 'src/lib/b.ts', 'src/.env', 'secrets/.key', 'secrets/db.txt', '.env', 'docs/readme.md']) {
      fs.writeFileSync(path.join(ws, file), 'x');
    }
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'x');
    fs.symlinkSync(outside, path.join(ws, 'out-dir'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'out-file'));
    fs.symlinkSync(path.join(outside, 'not-yet.txt'), path.join(ws, 'dangling'));
    fs.symlinkSync('../outside/new-dir', path.join(ws, 'dangling-dir'));
    fs.symlinkSync('secrets', path.join(ws, 'innocent'));
  });

  after(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  describe('evaluate: rule order', () => {
    it('the first rule whose matchers all match decides', () => {
      const c = call('builtin.read_file');
      assert.equal(by(policy([{ id: 'a', tools: ['builtin.*'], decision: 'allow' }, { id: 'd', tools: ['builtin.read_file'], decision: 'deny' }]), c), 'a:allow');
      assert.equal(by(policy([{ id: 'd', tools: ['builtin.read_file'], decision: 'deny' }, { id: 'a', tools: ['builtin.*'], decision: 'allow' }]), c), 'd:deny');
    });

    it('a rule that does not match passes the call on to the next', () => {
      const p = policy([{ id: 'x', tools: ['mcp.*'], decision: 'deny' }, { id: 'y', tools: ['builtin.*'], decision: 'ask' }]);
      assert.equal(by(p, call('builtin.read_file')), 'y:ask');
    });

    it('a rule with no matchers matches every call', () => {
      const p = policy([{ id: 'all', decision: 'deny' }]);
      for (const id of ['builtin.read_file', 'mcp.x.y', 'client.z', 'agents.spawn', 'weird']) assert.equal(by(p, call(id)), 'all:deny');
    });

    it('every matcher given must match: one failing matcher is enough to skip the rule', () => {
      const p = policy([{ id: 'r', tools: ['mcp.*'], agents: ['deployer'], decision: 'deny' }]);
      assert.equal(by(p, call('mcp.github.push', {}, { agent: 'deployer' })), 'r:deny');
      assert.equal(by(p, call('mcp.github.push', {}, { agent: 'main' })), 'default:ask');
      assert.equal(by(p, call('builtin.x', {}, { agent: 'deployer' })), 'default:ask');
    });
  });

  describe('evaluate: tools', () => {
    it('`*` matches any run of characters, dots included', () => {
      const p = policy([{ id: 'r', tools: ['mcp.*'], decision: 'deny' }]);
      assert.equal(by(p, call('mcp.github.create_issue')), 'r:deny');
      assert.equal(by(p, call('mcp.a.b.c.d')), 'r:deny');
      assert.equal(by(p, call('mcpx.github.create_issue')), 'default:ask');
      assert.equal(by(p, call('client.mcp.x')), 'default:ask');
    });

    it('`*` in the middle spans dots too', () => {
      const p = policy([{ id: 'r', tools: ['mcp.*.delete_*'], decision: 'deny' }]);
      assert.equal(by(p, call('mcp.github.delete_repo')), 'r:deny');
      assert.equal(by(p, call('mcp.a.b.delete_x')), 'r:deny');
      assert.equal(by(p, call('mcp.github.create_repo')), 'default:ask');
    });

    it('a literal id matches only itself', () => {
      const p = policy([{ id: 'r', tools: ['builtin.read_file'], decision: 'allow' }]);
      assert.equal(by(p, call('builtin.read_file')), 'r:allow');
      assert.equal(by(p, call('builtin.read_file2')), 'default:ask');
      assert.equal(by(p, call('builtin.read')), 'default:ask');
      assert.equal(by(p, call('x.builtin.read_file')), 'default:ask');
    });

    it('globs are minimatch globs (braces, ?)', () => {
      const p = policy([{ id: 'r', tools: ['mcp.{github,gitlab}.push', 'client.v?'], decision: 'deny' }]);
      assert.equal(by(p, call('mcp.github.push')), 'r:deny');
      assert.equal(by(p, call('mcp.gitlab.push')), 'r:deny');
      assert.equal(by(p, call('client.v1')), 'r:deny');
      assert.equal(by(p, call('mcp.bitbucket.push')), 'default:ask');
      assert.equal(by(p, call('client.v10')), 'default:ask');
    });

    it('a glob starting with `!` excludes', () => {
      const p = policy([{ id: 'r', tools: ['mcp.*', '!mcp.github.*'], decision: 'allow' }]);
      assert.equal(by(p, call('mcp.gmail.read')), 'r:allow');
      assert.equal(by(p, call('mcp.github.push')), 'default:ask');
    });

    it('an exclude wins whatever its place in the list', () => {
      const p = policy([{ id: 'r', tools: ['!mcp.github.push', 'mcp.*'], decision: 'allow' }]);
      assert.equal(by(p, call('mcp.github.push')), 'default:ask');
      assert.equal(by(p, call('mcp.github.pull')), 'r:allow');
    });

    it('a list of only `!` globs matches nothing', () => {
      const p = policy([{ id: 'r', tools: ['!mcp.github.*'], decision: 'deny' }, { id: 'next', decision: 'ask' }]);
      for (const id of ['builtin.read_file', 'mcp.gmail.read', 'mcp.github.push']) assert.equal(by(p, call(id)), 'next:ask');
    });

    it('matches the stable id, never the display name', () => {
      const p = policy([{ id: 'r', tools: ['builtin.read_file'], decision: 'allow' }]);
      const impostor = call('mcp.evil.read_file', {}, { annotations: { title: 'builtin.read_file' } });
      assert.equal(by(p, impostor), 'default:ask');
      const p2 = policy([{ id: 'r', tools: ['mcp.evil.*'], decision: 'deny' }]);
      assert.equal(by(p2, call('mcp.evil.x', {}, { annotations: { title: 'Read file' } })), 'r:deny');
    });

    it('omitted: any tool', () => {
      const p = policy([{ id: 'r', agents: ['deployer'], decision: 'deny' }]);
      assert.equal(by(p, call('anything.at.all', {}, { agent: 'deployer' })), 'r:deny');
    });
  });

  describe('evaluate: kinds', () => {
    it("matches the tool's declared kind", () => {
      const p = policy([{ id: 'r', kinds: ['mcp', 'connector'], decision: 'deny' }]);
      assert.equal(by(p, call('x.y', {}, { kind: 'mcp' })), 'r:deny');
      assert.equal(by(p, call('x.y', {}, { kind: 'connector' })), 'r:deny');
      assert.equal(by(p, call('x.y', {}, { kind: 'client' })), 'default:ask');
    });

    const implied: Array<[string, string]> = [
      ['builtin.read_file', 'builtin'],
      ['agents.spawn', 'builtin'],
      ['client.lookup_price', 'client'],
      ['mcp.github.push', 'mcp'],
      ['connector.drive.list', 'connector'],
      ['plugin.acme.run', 'plugin'],
    ];
    for (const [id, kind] of implied) {
      it(`a tool ${id} with no declared kind has the kind its prefix implies: ${kind}`, () => {
        const p = policy([{ id: 'r', kinds: [kind], decision: 'deny' }]);
        assert.equal(by(p, call(id)), 'r:deny');
        const others = ['builtin', 'client', 'mcp', 'connector', 'plugin'].filter((k) => k !== kind);
        assert.equal(by(policy([{ id: 'r', kinds: others, decision: 'deny' }]), call(id)), 'default:ask');
      });
    }

    it('a tool of no known kind matches no rule with kinds', () => {
      const p = policy([{ id: 'r', kinds: ['builtin', 'client', 'mcp', 'connector', 'plugin'], decision: 'allow' }]);
      assert.equal(by(p, call('mystery.tool')), 'default:ask');
    });
  });

  describe('evaluate: agents', () => {
    it('globs over the name of the calling agent or subagent', () => {
      const p = policy([{ id: 'r', agents: ['deployer', 'sub-*'], decision: 'deny' }]);
      assert.equal(by(p, call('mcp.a.b', {}, { agent: 'deployer' })), 'r:deny');
      assert.equal(by(p, call('mcp.a.b', {}, { agent: 'sub-reviewer' })), 'r:deny');
      assert.equal(by(p, call('mcp.a.b', {}, { agent: 'main' })), 'default:ask');
      assert.equal(by(p, call('mcp.a.b', {}, { agent: 'deployer2' })), 'default:ask');
    });

    it('`!` excludes an agent', () => {
      const p = policy([{ id: 'r', agents: ['*', '!main'], decision: 'deny' }]);
      assert.equal(by(p, call('mcp.a.b', {}, { agent: 'helper' })), 'r:deny');
      assert.equal(by(p, call('mcp.a.b', {}, { agent: 'main' })), 'default:ask');
    });
  });

  describe('evaluate: hints', () => {
    const ruleFor = (hints: Record<string, boolean>): Policy => policy([{ id: 'r', hints, decision: 'allow' }]);

    it('match declared annotations', () => {
      assert.equal(by(ruleFor({ readOnlyHint: true }), call('mcp.a.read', {}, { annotations: { readOnlyHint: true } })), 'r:allow');
      assert.equal(by(ruleFor({ readOnlyHint: true }), call('mcp.a.write', {}, { annotations: { readOnlyHint: false } })), 'default:ask');
      assert.equal(by(ruleFor({ openWorldHint: false }), call('mcp.a.b', {}, { annotations: { openWorldHint: false } })), 'r:allow');
      assert.equal(by(ruleFor({ idempotentHint: true }), call('mcp.a.b', {}, { annotations: { idempotentHint: true } })), 'r:allow');
    });

    it("an undeclared hint takes MCP's worst-case default", () => {
      const bare = call('mcp.a.b');
      assert.equal(by(ruleFor({ readOnlyHint: true }), bare), 'default:ask', 'readOnlyHint defaults to false');
      assert.equal(by(ruleFor({ readOnlyHint: false }), bare), 'r:allow');
      assert.equal(by(ruleFor({ destructiveHint: false }), bare), 'default:ask', 'destructiveHint defaults to true');
      assert.equal(by(ruleFor({ destructiveHint: true }), bare), 'r:allow');
      assert.equal(by(ruleFor({ idempotentHint: true }), bare), 'default:ask', 'idempotentHint defaults to false');
      assert.equal(by(ruleFor({ idempotentHint: false }), bare), 'r:allow');
      assert.equal(by(ruleFor({ openWorldHint: false }), bare), 'default:ask', 'openWorldHint defaults to true');
      assert.equal(by(ruleFor({ openWorldHint: true }), bare), 'r:allow');
    });

    it('destructiveHint is effectively false when readOnlyHint is true, whatever is declared', () => {
      const readOnlyButClaimsDestructive = call('mcp.a.b', {}, { annotations: { readOnlyHint: true, destructiveHint: true } });
      assert.equal(by(ruleFor({ destructiveHint: false }), readOnlyButClaimsDestructive), 'r:allow');
      assert.equal(by(ruleFor({ destructiveHint: true }), readOnlyButClaimsDestructive), 'default:ask');
      const readOnlyOnly = call('mcp.a.b', {}, { annotations: { readOnlyHint: true } });
      assert.equal(by(ruleFor({ destructiveHint: false }), readOnlyOnly), 'r:allow');
    });

    it('an annotation that is not a boolean counts as undeclared (worst case)', () => {
      const c = call('mcp.a.b', {}, { annotations: { readOnlyHint: 'true' as unknown as boolean, destructiveHint: 0 as unknown as boolean } });
      assert.equal(by(ruleFor({ readOnlyHint: true }), c), 'default:ask');
      assert.equal(by(ruleFor({ destructiveHint: true }), c), 'r:allow');
    });

    it('all hints given must hold', () => {
      const p = ruleFor({ readOnlyHint: true, openWorldHint: false });
      assert.equal(by(p, call('mcp.a.b', {}, { annotations: { readOnlyHint: true, openWorldHint: false } })), 'r:allow');
      assert.equal(by(p, call('mcp.a.b', {}, { annotations: { readOnlyHint: true } })), 'default:ask');
    });
  });

  describe('evaluate: tags', () => {
    const p = (): Policy => policy([{ id: 'r', tags: ['createHint', 'updateHint'], decision: 'ask' }, { id: 'rest', decision: 'allow' }]);

    it('match when the tool carries at least one of them', () => {
      assert.equal(by(p(), call('mcp.a.b', {}, { tags: ['updateHint'] })), 'r:ask');
      assert.equal(by(p(), call('mcp.a.b', {}, { tags: ['other', 'createHint'] })), 'r:ask');
    });

    it('do not match a tool with none of them, or with no tags', () => {
      assert.equal(by(p(), call('mcp.a.b', {}, { tags: ['deleteHint'] })), 'rest:allow');
      assert.equal(by(p(), call('mcp.a.b')), 'rest:allow');
      assert.equal(by(p(), call('mcp.a.b', {}, { tags: [] })), 'rest:allow');
    });
  });

  describe('evaluate: input', () => {
    const one = (matcher: unknown, pointer = '/v'): Policy => policy([{ id: 'r', input: { [pointer]: matcher }, decision: 'deny' }]);
    const hit = (p: Policy, input: unknown): boolean => decide(p, call('mcp.a.b', input)).rule?.id === 'r';

    it('a glob string matches string values', () => {
      const p = policy([{ id: 'r', input: { '/recipient_email': '*@acme.com' }, decision: 'ask' }]);
      assert.equal(hit(p, { recipient_email: 'bob@acme.com' }), true);
      assert.equal(hit(p, { recipient_email: 'bob@evil.com' }), false);
      assert.equal(hit(p, { recipient_email: 'bob@acme.com.evil.org' }), false);
    });

    it('a glob string never matches a value that is not a string', () => {
      assert.equal(hit(one('*'), { v: 5 }), false);
      assert.equal(hit(one('*'), { v: ['a'] }), false);
      assert.equal(hit(one('*'), { v: null }), false);
      assert.equal(hit(one('5'), { v: 5 }), false);
      assert.equal(hit(one('*'), {}), false, 'nor a missing value');
      assert.equal(hit(one('*'), { v: 'anything' }), true);
    });

    it('{ equals } is deep JSON equality, any type', () => {
      assert.equal(hit(one({ equals: { a: [1, 2], b: 'x' } }), { v: { b: 'x', a: [1, 2] } }), true, 'key order does not matter');
      assert.equal(hit(one({ equals: { a: [1, 2] } }), { v: { a: [2, 1] } }), false, 'array order does');
      assert.equal(hit(one({ equals: { a: 1 } }), { v: { a: 1, b: 2 } }), false);
      assert.equal(hit(one({ equals: 5 }), { v: 5 }), true);
      assert.equal(hit(one({ equals: 5 }), { v: '5' }), false);
      assert.equal(hit(one({ equals: null }), { v: null }), true);
      assert.equal(hit(one({ equals: null }), {}), false, 'a missing value is not null');
      assert.equal(hit(one({ equals: true }), { v: true }), true);
      assert.equal(hit(one({ equals: '*' }), { v: 'x' }), false, 'equals is no glob');
    });

    it('{ regex } is a regular expression over string values', () => {
      const p = one({ regex: '^prod-[a-z]+$' });
      assert.equal(hit(p, { v: 'prod-db' }), true);
      assert.equal(hit(p, { v: 'dev-prod-db' }), false);
      assert.equal(hit(p, { v: 'prod-DB' }), false);
      assert.equal(hit(one({ regex: '.*' }), { v: 1 }), false, 'not over numbers');
      assert.equal(hit(one({ regex: 'prod' }), { v: 'my-prod-x' }), true, 'unanchored finds a substring');
    });

    it('{ glob } is a glob over string values', () => {
      const p = one({ glob: '*.md' });
      assert.equal(hit(p, { v: 'README.md' }), true);
      assert.equal(hit(p, { v: 'README.txt' }), false);
      assert.equal(hit(p, { v: 3 }), false);
    });

    it('{ exists } tests whether the pointer resolves to a value', () => {
      assert.equal(hit(one({ exists: true }), { v: null }), true);
      assert.equal(hit(one({ exists: true }), { v: false }), true);
      assert.equal(hit(one({ exists: true }), {}), false);
      assert.equal(hit(one({ exists: false }), {}), true);
      assert.equal(hit(one({ exists: false }), { v: 0 }), false);
      assert.equal(hit(one({ exists: false }, '/a/b'), { a: 'string' }), true, 'a pointer through a non-object resolves to nothing');
    });

    it('JSON Pointers reach nested fields', () => {
      const p = one({ equals: true }, '/options/force');
      assert.equal(hit(p, { options: { force: true } }), true);
      assert.equal(hit(p, { options: { force: false } }), false);
      assert.equal(hit(p, { force: true }), false);
    });

    it('JSON Pointers unescape ~1 to / and ~0 to ~', () => {
      assert.equal(hit(one('x', '/a~1b'), { 'a/b': 'x' }), true);
      assert.equal(hit(one('x', '/a~1b'), { a: { b: 'x' } }), false);
      assert.equal(hit(one('x', '/a~0b'), { 'a~b': 'x' }), true);
      assert.equal(hit(one('x', '/~01'), { '~1': 'x' }), true, '~01 is ~1, not /');
    });

    it('JSON Pointers index arrays', () => {
      assert.equal(hit(one('*@evil.com', '/to/0'), { to: ['a@evil.com', 'b@acme.com'] }), true);
      assert.equal(hit(one('*@evil.com', '/to/1'), { to: ['a@evil.com', 'b@acme.com'] }), false);
      assert.equal(hit(one({ exists: true }, '/to/2'), { to: ['a', 'b'] }), false, 'out of range');
      assert.equal(hit(one({ exists: true }, '/to/01'), { to: ['a', 'b'] }), false, 'leading zeros are no index');
      assert.equal(hit(one({ exists: true }, '/to/-'), { to: ['a'] }), false);
      assert.equal(hit(one({ equals: 'b' }, '/to/1/name'), { to: ['a', { name: 'b' }] }), true);
    });

    it('the empty pointer is the whole input', () => {
      assert.equal(hit(one({ equals: { v: 1 } }, ''), { v: 1 }), true);
      assert.equal(hit(one({ equals: { v: 1 } }, ''), { v: 2 }), false);
    });

    it('all pointers must match', () => {
      const p = policy([{ id: 'r', input: { '/a': 'x', '/b': { equals: 1 } }, decision: 'deny' }]);
      assert.equal(hit(p, { a: 'x', b: 1 }), true);
      assert.equal(hit(p, { a: 'x', b: 2 }), false);
      assert.equal(hit(p, { a: 'y', b: 1 }), false);
    });
  });

  describe('evaluate: paths', () => {
    const read = (input: unknown): ToolCall => call('builtin.read_file', input, { pathArgs: ['path'] });
    const mcp = (input: unknown): ToolCall => call('mcp.fs.op', input);

    it('are resolved against the workspace folder', () => {
      const p = policy([{ id: 'src', paths: ['src/**'], decision: 'allow' }]);
      assert.equal(by(p, read({ path: 'src/a.ts' })), 'src:allow');
      assert.equal(by(p, read({ path: './src/./lib/b.ts' })), 'src:allow');
      assert.equal(by(p, read({ path: path.join(ws, 'src', 'a.ts') })), 'src:allow', 'an absolute path inside the folder');
      assert.equal(by(p, read({ path: 'docs/readme.md' })), 'default:ask');
    });

    it('resolving a path the quick ways (a read, a write) gives the same answer as the walk, whatever is there', () => {
      const names = ['src/a.ts', 'src', 'src/new.ts', 'src/new/deeper.ts', 'src/a.ts/x', 'out-dir/secret.txt', 'out-dir/new.txt', 'out-file',
        'dangling', 'dangling-dir/x', 'dangling-dir', 'innocent/db.txt', 'innocent/new', 'innocent', '../outside/secret.txt', '/etc/passwd',
        '/no/such/dir/f', '', '/', 'out-dir', 'out-dir/../src/a.ts', './src//a.ts', 'src/a.ts/', 'innocent/../src', 'fifo', 'fifo/x',
        // Deep enough for the descriptor way (deep paths resolve through an O_PATH descriptor), through links too.
        'deep/1/2/3/4/5/6/f.txt', 'deep/1/2/3/4/5/6/new.txt', 'deep/1/2/3/4/5/6/7/8/new', 'deep/1/2/3/out/4/secret.txt', 'deep/1/2/3/out/4/new.txt',
        'deep/1/2/3/4/5/6/fifo', 'deep/1/2/3/4/5/6/gone', 'deep/1/2/3/4/5/6/back/src/a.ts'];
      // A FIFO: resolving it must neither block nor differ (the descriptor way opens with O_PATH).
      const deep = path.join(ws, 'deep/1/2/3/4/5/6');
      if (!fs.existsSync(deep)) {
        fs.mkdirSync(deep, { recursive: true });
        fs.mkdirSync(path.join(outside, '4'), { recursive: true });
        fs.writeFileSync(path.join(outside, '4', 'secret.txt'), 'x');
        fs.writeFileSync(path.join(deep, 'f.txt'), 'x');
        fs.symlinkSync(outside, path.join(ws, 'deep/1/2/3/out'));
        fs.symlinkSync(path.join(outside, 'gone'), path.join(deep, 'gone'));
        fs.symlinkSync(ws, path.join(deep, 'back'));
        for (const fifo of [path.join(ws, 'fifo'), path.join(deep, 'fifo')]) spawnSync('mkfifo', [fifo]);
      }
      const resolver = new PathResolver(ws);
      for (const name of names) {
        const walked = realpathByWalk(path.resolve(resolver.workspace, name));
        assert.equal(resolver.resolve(name, true).absolute, walked, `${name} (read)`);
        assert.equal(resolver.resolve(name, false).absolute, walked, `${name} (write)`);
        assert.deepEqual(resolver.resolve(name, true), resolver.resolve(name, false), name);
      }
      if (process.platform === 'linux' && process.arch === 'x64') assert.equal(resolvesThroughDescriptors(), true, 'the descriptor way was checked and taken');
    });

    it('a call naming one path twice resolves it once, and judges both the same', () => {
      const p = policy([{ id: 'src', paths: ['src/**'], decision: 'allow' }]);
      const d = p.decide(call('builtin.read_file', { paths: ['src/a.ts', 'src/a.ts', 'out-file'] }, { pathArgs: ['paths'] }), { workspaceFolder: ws });
      assert.deepEqual(d.parts?.map((x) => `${x.part}:${x.rule?.id ?? 'default'}:${x.decision}`), ['src/a.ts:src:allow', 'src/a.ts:src:allow', 'out-file:default:ask']);
    });

    it('a path that does not exist yet is still judged by where it would be', () => {
      const p = policy([{ id: 'src', paths: ['src/**'], decision: 'allow' }]);
      assert.equal(by(p, read({ path: 'src/new/file.ts' })), 'src:allow');
    });

    it('a glob with `..` in it means what minimatch folds it to, indexed or not', () => {
      const p = policy([{ id: 'x', paths: ['src/../secrets/**'], decision: 'deny' }, { id: 'src', paths: ['src/**', 'secrets/**'], decision: 'allow' }]);
      assert.equal(by(p, read({ path: 'secrets/db.txt' })), 'x:deny');
      assert.equal(by(p, read({ path: 'src/a.ts' })), 'src:allow');
    });

    it('`..` is normalised away before matching', () => {
      const p = policy([{ id: 'secrets', paths: ['secrets/**'], decision: 'deny' }, { id: 'src', paths: ['src/**'], decision: 'allow' }]);
      assert.equal(by(p, read({ path: 'src/../secrets/db.txt' })), 'secrets:deny');
      assert.equal(by(p, read({ path: 'src/lib/../../secrets/db.txt' })), 'secrets:deny');
      const allowOnly = policy([{ id: 'src', paths: ['src/**'], decision: 'allow' }]);
      assert.equal(by(allowOnly, read({ path: 'src/../secrets/db.txt' })), 'default:ask');
      assert.equal(by(allowOnly, read({ path: 'src/../../outside/secret.txt' })), 'default:ask');
    });

    it('`*` stays within one path segment; `**` spans segments', () => {
      const p = policy([{ id: 'one', paths: ['src/*'], decision: 'allow' }, { id: 'deep', paths: ['docs/**'], decision: 'allow' }]);
      assert.equal(by(p, read({ path: 'src/a.ts' })), 'one:allow');
      assert.equal(by(p, read({ path: 'src/lib/b.ts' })), 'default:ask');
      assert.equal(by(p, read({ path: 'docs/x/y/z.md' })), 'deep:allow');
    });

    it('`*` and `**` match names that begin with a dot', () => {
      const p = (glob: string): Policy => policy([{ id: 'r', paths: [glob], decision: 'deny' }]);
      assert.equal(by(p('secrets/**'), read({ path: 'secrets/.key' })), 'r:deny');
      assert.equal(by(p('**'), read({ path: '.env' })), 'r:deny');
      assert.equal(by(p('**'), read({ path: 'src/.env' })), 'r:deny');
      assert.equal(by(p('*'), read({ path: '.env' })), 'r:deny');
      assert.equal(by(p('src/*'), read({ path: 'src/.env' })), 'r:deny');
      assert.equal(by(p('**/.git/**'), read({ path: '.git/config' })), 'r:deny');
    });

    it('brace alternatives are globs in paths too', () => {
      const p = policy([{ id: 'r', paths: ['secrets/{db,api}.txt'], decision: 'deny' }]);
      assert.equal(by(p, read({ path: 'secrets/db.txt' })), 'r:deny');
      assert.equal(by(p, read({ path: 'secrets/.key' })), 'default:ask');
    });

    it('`!` excludes a path (the spec example: src/** but not .env)', () => {
      const p = policy([{ id: 'r', paths: ['src/**', '!**/.env'], decision: 'allow' }]);
      assert.equal(by(p, read({ path: 'src/a.ts' })), 'r:allow');
      assert.equal(by(p, read({ path: 'src/.env' })), 'default:ask');
    });

    it('a path outside the folder is never matched by relative globs, `**` included', () => {
      const p = policy([
        { id: 'all', paths: ['**'], decision: 'allow' },
        { id: 'up', paths: ['../**', '../outside/*'], decision: 'allow' },
        { id: 'deny-all', paths: ['**', '*'], decision: 'deny' },
      ]);
      assert.equal(by(p, read({ path: '../outside/secret.txt' })), 'default:ask');
      assert.equal(by(p, read({ path: path.join(outside, 'secret.txt') })), 'default:ask');
      assert.equal(by(p, read({ path: '/etc/passwd' })), 'default:ask');
    });

    it('a name inside the folder that merely starts with `..` is inside, so `**` covers it', () => {
      const p = policy([{ id: 'deny-all', paths: ['**'], decision: 'deny' }]);
      assert.equal(by(p, read({ path: '..cache/token' })), 'deny-all:deny');
      assert.equal(by(p, read({ path: '...' })), 'deny-all:deny');
      const named = policy([{ id: 'r', paths: ['..cache/**'], decision: 'deny' }]);
      assert.equal(by(named, read({ path: '..cache/token' })), 'r:deny');
    });

    it('a path outside the folder is matched by absolute globs against its absolute path', () => {
      const p = policy([
        { id: 'file', paths: [`${outside}/secret.txt`], decision: 'deny' },
        { id: 'out', paths: [`${outside}/**`], decision: 'ask' },
      ]);
      assert.equal(by(p, read({ path: path.join(outside, 'secret.txt') })), 'file:deny');
      assert.equal(by(p, read({ path: '../outside/secret.txt' })), 'file:deny');
      assert.equal(by(p, read({ path: '../outside/sub/new.txt' })), 'out:ask');
      assert.equal(by(p, read({ path: path.join(outside, 'other.txt') })), 'out:ask');
    });

    it('an absolute exclude removes an outside path', () => {
      const p = policy([{ id: 'r', paths: [`${outside}/**`, `!${outside}/secret.txt`], decision: 'allow' }]);
      assert.equal(by(p, read({ path: path.join(outside, 'other.txt') })), 'r:allow');
      assert.equal(by(p, read({ path: path.join(outside, 'secret.txt') })), 'default:ask');
    });

    it('a symbolic link to a folder outside is judged where it points', () => {
      const p = policy([{ id: 'all', paths: ['**'], decision: 'allow' }, { id: 'link', paths: ['out-dir/**'], decision: 'allow' }]);
      assert.equal(by(p, read({ path: 'out-dir/secret.txt' })), 'default:ask');
      assert.equal(by(p, read({ path: 'out-dir/new.txt' })), 'default:ask', 'a file to be created under it too');
      const abs = policy([{ id: 'out', paths: [`${outside}/**`], decision: 'deny' }]);
      assert.equal(by(abs, read({ path: 'out-dir/secret.txt' })), 'out:deny');
    });

    it('a symbolic link to a file outside is judged where it points', () => {
      const p = policy([{ id: 'all', paths: ['**'], decision: 'allow' }]);
      assert.equal(by(p, read({ path: 'out-file' })), 'default:ask');
      const abs = policy([{ id: 'out', paths: [`${outside}/secret.txt`], decision: 'deny' }]);
      assert.equal(by(abs, read({ path: 'out-file' })), 'out:deny');
    });

    it('a dangling symbolic link to outside is judged where it points (a write would land there)', () => {
      assert.throws(() => fs.statSync(path.join(ws, 'dangling')), 'the link is dangling');
      const p = policy([{ id: 'all', paths: ['**'], decision: 'allow' }]);
      assert.equal(by(p, call('builtin.write_file', { path: 'dangling' }, { pathArgs: ['path'] })), 'default:ask');
      assert.equal(by(p, call('builtin.write_file', { path: 'dangling-dir/new.txt' }, { pathArgs: ['path'] })), 'default:ask');
      const abs = policy([{ id: 'out', paths: [`${outside}/**`], decision: 'deny' }]);
      assert.equal(by(abs, call('builtin.write_file', { path: 'dangling' }, { pathArgs: ['path'] })), 'out:deny');
      assert.equal(by(abs, call('builtin.write_file', { path: 'dangling-dir/new.txt' }, { pathArgs: ['path'] })), 'out:deny');
    });

    it('a symbolic link inside the folder is judged by its target', () => {
      const p = policy([{ id: 'secrets', paths: ['secrets/**'], decision: 'deny' }, { id: 'all', paths: ['**'], decision: 'allow' }]);
      assert.equal(by(p, read({ path: 'innocent/.key' })), 'secrets:deny');
    });

    it('absolute globs that name the workspace folder match paths inside it', () => {
      const p = policy([{ id: 'r', paths: [`${ws}/secrets/**`], decision: 'deny' }]);
      assert.equal(by(p, read({ path: 'secrets/db.txt' })), 'r:deny');
      assert.equal(by(p, read({ path: 'src/a.ts' })), 'default:ask');
    });

    it('a tool that takes paths but gives none matches no rule that has paths', () => {
      const p = policy([
        { id: 'allow-all', paths: ['**'], decision: 'allow' },
        { id: 'deny-all', paths: ['**'], decision: 'deny' },
        { id: 'ask-abs', paths: ['/**'], decision: 'ask' },
        { id: 'no-paths', decision: 'deny' },
      ]);
      assert.equal(by(p, read({})), 'no-paths:deny');
      assert.equal(by(p, read({ path: null })), 'no-paths:deny');
      assert.equal(by(p, read({ paths: [] })), 'no-paths:deny');
      assert.equal(by(p, mcp({ query: 'x' })), 'no-paths:deny');
      assert.equal(by(p, mcp('not an object')), 'no-paths:deny');
    });

    it("a tool's declared path arguments replace the conventional fields", () => {
      const p = policy([{ id: 'secrets', paths: ['secrets/**'], decision: 'deny' }, { id: 'src', paths: ['src/**'], decision: 'allow' }]);
      const declared = (input: unknown): ToolCall => call('mcp.fs.copy', input, { pathArgs: ['target'] });
      assert.equal(by(p, declared({ target: 'secrets/db.txt', path: 'src/a.ts' })), 'secrets:deny');
      assert.equal(by(p, declared({ target: 'src/a.ts', path: 'secrets/db.txt' })), 'src:allow');
      assert.equal(by(p, mcp({ target: 'secrets/db.txt' })), 'default:ask', 'target is no conventional field');
    });

    const conventional = ['path', 'paths', 'file', 'files', 'source', 'destination', 'from', 'to', 'directory', 'dir', 'cwd', 'uri'];
    for (const field of conventional) {
      it(`with no declared path arguments, the top-level field "${field}" holds paths (string or list of strings)`, () => {
        const p = policy([{ id: 'secrets', paths: ['secrets/**'], decision: 'deny' }, { id: 'src', paths: ['src/**'], decision: 'allow' }]);
        assert.equal(by(p, mcp({ [field]: 'secrets/db.txt' })), 'secrets:deny');
        assert.equal(by(p, mcp({ [field]: 'src/a.ts' })), 'src:allow');
        assert.equal(by(p, mcp({ [field]: ['src/a.ts', 'src/lib/b.ts'] })), 'src:allow');
        assert.equal(by(p, mcp({ [field]: ['src/a.ts', 'secrets/db.txt'] })), 'secrets:deny');
      });
    }

    it('a file: URI is a path', () => {
      const p = policy([{ id: 'secrets', paths: ['secrets/**'], decision: 'deny' }]);
      assert.equal(by(p, mcp({ uri: pathToFileURL(path.join(ws, 'secrets', 'db.txt')).href })), 'secrets:deny');
    });

    it('a path value that is not a string never matches allow and always matches ask/deny', () => {
      const p = policy([{ id: 'allow-all', paths: ['**'], decision: 'allow' }, { id: 'deny', paths: ['secrets/**'], decision: 'deny' }]);
      assert.equal(by(p, read({ path: 42 })), 'deny:deny');
      assert.equal(by(p, read({ path: { nested: 'src/a.ts' } })), 'deny:deny');
      assert.equal(by(p, mcp({ paths: ['src/a.ts', 7] })), 'deny:deny');
      const allowOnly = policy([{ id: 'allow-all', paths: ['**'], decision: 'allow' }]);
      assert.equal(by(allowOnly, mcp({ files: ['src/a.ts', null] })), 'default:ask');
    });
  });

  describe('evaluate: loosening needs every part, tightening needs any part (paths)', () => {
    const copy = (source: string, destination: string): ToolCall => call('mcp.fs.copy', { source, destination });

    it('allow matches only when every path matches', () => {
      const p = policy([{ id: 'src', paths: ['src/**'], decision: 'allow' }]);
      assert.equal(by(p, copy('src/a.ts', 'src/lib/c.ts')), 'src:allow');
      assert.equal(by(p, copy('src/a.ts', 'secrets/db.txt')), 'default:ask');
      assert.equal(by(p, copy('src/a.ts', '../outside/x')), 'default:ask');
    });

    for (const decision of ['ask', 'deny']) {
      it(`${decision} matches when any path matches`, () => {
        const p = policy([{ id: 'r', paths: ['secrets/**'], decision }, { id: 'rest', decision: 'allow' }]);
        assert.equal(by(p, copy('src/a.ts', 'secrets/db.txt')), `r:${decision}`);
        assert.equal(by(p, copy('secrets/db.txt', 'src/a.ts')), `r:${decision}`);
        assert.equal(by(p, copy('src/a.ts', 'docs/readme.md')), 'rest:allow');
      });
    }
  });

  describe('evaluate: commands', () => {
    const run = (command: unknown): ToolCall => call('builtin.run_command', { command });
    const allow = (...patterns: string[]): Policy => policy([{ id: 'ok', commands: patterns, decision: 'allow' }]);
    const deny = (...patterns: string[]): Policy => policy([{ id: 'no', commands: patterns, decision: 'deny' }, { id: 'rest', decision: 'allow' }]);

    it('a pattern of words matches exactly those words', () => {
      const p = allow('npm test');
      assert.equal(by(p, run('npm test')), 'ok:allow');
      assert.equal(by(p, run('  npm   test  ')), 'ok:allow');
      assert.equal(by(p, run('npm test --watch')), 'default:ask');
      assert.equal(by(p, run('npm')), 'default:ask');
      assert.equal(by(p, run('npm testing')), 'default:ask');
      assert.equal(by(p, run('npx test')), 'default:ask');
    });

    it('a final `*` matches zero or more remaining words', () => {
      const p = allow('npm test *');
      assert.equal(by(p, run('npm test')), 'ok:allow');
      assert.equal(by(p, run('npm test --grep "a b" -x')), 'ok:allow');
      assert.equal(by(p, run('npm run test')), 'default:ask');
    });

    it('each word is a glob over one word', () => {
      const p = allow('cat *.md', 'git log --oneline');
      assert.equal(by(p, run('cat README.md')), 'ok:allow');
      assert.equal(by(p, run('cat README.md other.md')), 'default:ask');
      assert.equal(by(p, run('cat a.txt')), 'default:ask');
      const middle = allow('git * --version');
      assert.equal(by(middle, run('git status --version')), 'ok:allow');
      assert.equal(by(middle, run('git --version')), 'default:ask', 'a `*` that is not last matches exactly one word');
    });

    const separators: Array<[string, string]> = [
      [';', 'npm test; git status'],
      ['&&', 'npm test && git status'],
      ['||', 'npm test || git status'],
      ['|', 'npm test | git status'],
      ['&', 'npm test & git status'],
      ['newline', 'npm test\ngit status'],
    ];
    for (const [name, command] of separators) {
      it(`splits on ${name} into simple commands, each judged`, () => {
        assert.equal(by(allow('npm test', 'git status'), run(command)), 'ok:allow');
        assert.equal(by(allow('npm test'), run(command)), 'default:ask', 'one part not allowed: no allow');
        assert.equal(by(deny('git *'), run(command)), 'no:deny', 'one part denied: deny');
        assert.equal(by(allow(command.replace(/[;&|\n]+/g, ' ').replace(/\s+/g, ' ')), run(command)), 'default:ask', 'the operator is no word');
      });
    }

    it('honours quotes: operators inside them are text', () => {
      assert.equal(by(allow('echo *'), run('echo "a; rm -rf /"')), 'ok:allow');
      assert.equal(by(allow('echo *'), run("echo 'x && rm -rf /'")), 'ok:allow');
      assert.equal(by(deny('rm *'), run('echo "a; rm -rf /"')), 'rest:allow');
      assert.equal(by(allow('npm test'), run('"npm" \'test\'')), 'ok:allow', 'quote removal');
      assert.equal(by(allow('echo a b'), run('echo "a b"')), 'default:ask', 'a quoted space does not split a word');
    });

    for (const [name, command] of [['$(...)', 'echo $(rm -rf /)'], ['backticks', 'echo `rm -rf /`'], ['( ... )', '(rm -rf /)']]) {
      it(`the body of ${name} is a simple command too`, () => {
        assert.equal(by(deny('rm *'), run(command!)), 'no:deny');
        assert.equal(by(allow('echo *', '(rm -rf /)'), run(command!)), 'default:ask');
      });
    }

    it('a subshell whose every command is allowed is allowed', () => {
      assert.equal(by(allow('cd src', 'make'), run('(cd src && make)')), 'ok:allow');
      assert.equal(by(allow('echo *', 'date'), run('echo $(date)')), 'ok:allow');
    });

    it('leading NAME=value assignments are words of the command', () => {
      assert.equal(by(allow('npm test'), run('CI=1 npm test')), 'default:ask');
      assert.equal(by(allow('npm test'), run('LD_PRELOAD=/tmp/x.so npm test')), 'default:ask');
      // The command without its assignments is a further part, which an allow must match too.
      assert.equal(by(allow('CI=1 npm test'), run('CI=1 npm test')), 'default:ask');
      assert.equal(by(allow('CI=1 npm test', 'npm test'), run('CI=1 npm test')), 'ok:allow');
      assert.equal(by(allow('CI=* npm test', 'npm test'), run('CI=true npm test')), 'ok:allow');
    });

    for (const op of ['>', '>>', '&>', '>|']) {
      it(`a command that redirects output to a file with ${op} never matches allow, but still matches deny`, () => {
        assert.equal(by(allow('echo *', 'npm test *'), run(`echo hi ${op} out.txt`)), 'default:ask');
        assert.equal(by(allow('npm test *'), run(`npm test ${op} out.txt`)), 'default:ask');
        assert.equal(by(allow('npm test', 'git status'), run(`npm test && git status ${op} out.txt`)), 'default:ask');
        assert.equal(by(deny('echo *'), run(`echo hi ${op} out.txt`)), 'no:deny');
      });
    }

    it('a command without redirection next to a redirecting one keeps its meaning for deny', () => {
      assert.equal(by(deny('rm *'), run('rm -rf x > log.txt')), 'no:deny');
    });

    for (const command of ['diff <(cat a) <(cat b)', 'cat x > >(tee y)', 'tee >(cat)']) {
      it(`process substitution never matches allow: ${command}`, () => {
        assert.equal(by(allow('diff *', 'cat *', 'tee *'), run(command)), 'default:ask');
      });
    }

    it('process substitution bodies are judged by deny', () => {
      assert.equal(by(deny('rm *'), run('diff <(rm -rf /) b')), 'no:deny');
    });

    for (const command of ['echo "unterminated', 'if then fi', 'echo $(', 'npm test &&']) {
      it(`text that cannot be parsed never matches allow: ${JSON.stringify(command)}`, () => {
        assert.equal(by(allow('*'), run(command)), 'default:ask');
        assert.equal(by(allow('echo *', 'npm test', 'if *', 'then *'), run(command)), 'default:ask');
      });
    }

    it('text that cannot be parsed is taken by a deny rule with commands (it could hide anything)', () => {
      assert.equal(by(deny('rm *'), run('echo "unterminated; rm -rf /')), 'no:deny');
    });

    it('a call with no command matches no rule that has commands', () => {
      const p = policy([
        { id: 'allow', commands: ['*'], decision: 'allow' },
        { id: 'deny', commands: ['*'], decision: 'deny' },
        { id: 'rest', decision: 'ask' },
      ]);
      assert.equal(by(p, call('builtin.run_command', {})), 'rest:ask');
      assert.equal(by(p, call('mcp.a.b', { query: 'rm -rf /' })), 'rest:ask');
      assert.equal(by(p, call('builtin.run_command', { command: null })), 'rest:ask');
    });

    it('with no declared command argument, `command` or `cmd` holds the command', () => {
      assert.equal(by(deny('rm *'), call('mcp.shell.exec', { cmd: 'rm -rf /' })), 'no:deny');
      assert.equal(by(deny('rm *'), call('mcp.shell.exec', { command: 'rm -rf /' })), 'no:deny');
      assert.equal(by(allow('ls'), call('mcp.shell.exec', { cmd: 'ls' })), 'ok:allow');
    });

    it("a tool's declared command argument replaces the conventional fields", () => {
      const script = (input: unknown): ToolCall => call('mcp.shell.exec', input, { commandArg: 'script' });
      assert.equal(by(deny('rm *'), script({ script: 'rm -rf /', command: 'ls' })), 'no:deny');
      assert.equal(by(deny('rm *'), script({ command: 'rm -rf /' })), 'rest:allow');
      assert.equal(by(allow('ls'), script({ script: 'ls', command: 'rm -rf /' })), 'ok:allow');
    });

    it('a command value that is not a string never matches allow and matches deny', () => {
      assert.equal(by(allow('*'), run(['rm', '-rf', '/'])), 'default:ask');
      assert.equal(by(deny('rm *'), run(['rm', '-rf', '/'])), 'no:deny');
      assert.equal(by(deny('rm *'), run(42)), 'no:deny');
    });
  });

  describe('evaluate: loosening needs every part, tightening needs any part (commands)', () => {
    const run = (command: string): ToolCall => call('builtin.run_command', { command });

    it('allow matches only when every simple command matches', () => {
      const p = policy([{ id: 'r', commands: ['npm test', 'git status'], decision: 'allow' }]);
      assert.equal(by(p, run('npm test && git status; npm test | git status')), 'r:allow');
      assert.equal(by(p, run('npm test && git push')), 'default:ask');
    });

    for (const decision of ['ask', 'deny']) {
      it(`${decision} matches when any simple command matches`, () => {
        const p = policy([{ id: 'r', commands: ['git push *'], decision }, { id: 'rest', decision: 'allow' }]);
        assert.equal(by(p, run('npm test && git push origin main')), `r:${decision}`);
        assert.equal(by(p, run('git push --force; npm test')), `r:${decision}`);
        assert.equal(by(p, run('npm test && git status')), 'rest:allow');
      });
    }
  });

  describe('the decision object', () => {
    const SPEC_EXAMPLE = `{
    "version": 1,
    "default": "ask",                    // "allow" | "ask" | "deny"; optional
    "rules": [                           // ordered; the first rule whose matchers all match decides
      { "id": "spawn", "tools": ["agents.spawn"], "decision": "allow" },
      { "tools": ["client.lookup_price"], "decision": "allow" },
      { "tools": ["builtin.read_file", "builtin.list_files"], "paths": ["src/**", "!**/.env"], "decision": "allow" },
      { "tools": ["builtin.run_command"], "commands": ["npm test", "npm run lint *", "git status"], "decision": "allow" },
      { "tools": ["mcp.*"], "hints": { "readOnlyHint": true }, "decision": "allow" },
      { "tools": ["mcp.github.*"], "agents": ["deployer"], "decision": "deny", "reason": "no pushes from the deployer" },
      { "tools": ["mcp.gmail.send_email"], "input": { "/recipient_email": "*@acme.com" }, "decision": "ask", "timeout": 300, "onTimeout": "deny" }
    ]
  }`;
    const example = (): Policy => new Policy({ workspace: loadPolicyText(SPEC_EXAMPLE, '.agentpolicy.jsonc', 'workspace') });

    it('names the deciding rule by id, index, layer, file and line (the spec example: line 5)', () => {
      const d = decide(example(), call('agents.spawn'));
      assert.equal(d.decision, 'allow');
      assert.deepEqual(d.rule, { id: 'spawn', index: 0, layer: 'workspace', file: '.agentpolicy.jsonc', line: 5 });
      assert.equal(d.lowered, false);
      assert.deepEqual(d.warnings, []);
    });

    it('has id null for a rule without an id, and the rule\'s own line', () => {
      const d = decide(example(), call('mcp.github.push', {}, { agent: 'deployer' }));
      assert.equal(d.decision, 'deny');
      assert.deepEqual(d.rule, { id: null, index: 5, layer: 'workspace', file: '.agentpolicy.jsonc', line: 10 });
      assert.equal(d.reason, 'no pushes from the deployer');
    });

    it('has exactly the fields of the spec (and serialises to JSON as such)', () => {
      const d = JSON.parse(JSON.stringify(decide(example(), call('mcp.github.push', {}, { agent: 'deployer' })))) as Record<string, unknown>;
      for (const field of ['decision', 'rule', 'reason', 'lowered', 'warnings']) assert.ok(field in d, `missing ${field}`);
      assert.deepEqual(Object.keys(d.rule as object).sort(), ['file', 'id', 'index', 'layer', 'line']);
      assert.equal(typeof d.lowered, 'boolean');
      assert.ok(Array.isArray(d.warnings));
    });

    it('has rule null when the default decided', () => {
      const d = decide(example(), call('builtin.read_file', { path: 'src/.env' }));
      assert.equal(d.decision, 'ask');
      assert.equal(d.rule, null);
      assert.equal(d.lowered, false);
      assert.deepEqual(d.warnings, []);
    });

    it('warns of a path outside the folder as written, whatever rules the engine had to resolve it for', () => {
      const read = (input: unknown): ToolCall => call('builtin.read_file', input, { pathArgs: ['path'] });
      const toolOnly = policy([{ id: 't', tools: ['builtin.read_file'], decision: 'allow' }]);
      const withPaths = policy([{ id: 't', tools: ['builtin.read_file'], decision: 'allow' }, { id: 'p', paths: ['src/**'], decision: 'allow' }]);
      for (const p of [toolOnly, withPaths]) {
        assert.deepEqual(decide(p, read({ path: '/etc/passwd' })).warnings, ['path /etc/passwd is outside the workspace folder']);
        assert.deepEqual(decide(p, read({ path: '../outside/secret.txt' })).warnings, ['path ../outside/secret.txt is outside the workspace folder']);
        assert.deepEqual(decide(p, read({ path: 'src/a.ts' })).warnings, []);
      }
      // The folder named through a symbolic link to it is still the folder.
      const alias = path.join(root, 'ws-alias');
      if (!fs.existsSync(alias)) fs.symlinkSync(ws, alias);
      assert.deepEqual(toolOnly.decide(read({ path: path.join(alias, 'src/a.ts') }), { workspaceFolder: alias }).warnings, []);
    });

    it('carries the reason of the deciding rule', () => {
      const p = policy([{ id: 'r', decision: 'ask', reason: 'sending mail needs a person' }]);
      assert.equal(decide(p, call('mcp.gmail.send')).reason, 'sending mail needs a person');
    });

    it('for ask, carries how the question behaves: onTimeout defaults to deny, remember to session', () => {
      const p = policy([
        { id: 'plain', tools: ['x.plain'], decision: 'ask' },
        { id: 'set', tools: ['x.set'], decision: 'ask', timeout: 300, onTimeout: 'keep', remember: 'never' },
      ]);
      assert.deepEqual(decide(p, call('x.plain')).ask, { onTimeout: 'deny', remember: 'session' });
      assert.deepEqual(decide(p, call('x.set')).ask, { timeout: 300, onTimeout: 'keep', remember: 'never' });
    });

    it('gives the line of each rule in a multi-line file', () => {
      const text = '{\n  "version": 1,\n  "rules": [\n    {\n      "id": "first",\n      "decision": "deny",\n      "tools": ["a.b"]\n    },\n\n    { "id": "second", "decision": "allow" }\n  ]\n}';
      const p = new Policy({ workspace: loadPolicyText(text, 'x.jsonc', 'workspace') });
      assert.equal(decide(p, call('a.b')).rule?.line, 4);
      assert.equal(decide(p, call('c.d')).rule?.line, 10);
      assert.equal(decide(p, call('c.d')).rule?.index, 1);
      assert.equal(decide(p, call('c.d')).rule?.file, 'x.jsonc');
    });
  });

  describe('layers', () => {
    const L = (name: LayerName, rules: readonly unknown[], top: Record<string, unknown> = {}): PolicyLayer => layer(rules, top, name);

    it('are judged managed, then workspace, then user: the first matching rule across them wins', () => {
      const layers: Layers = {
        user: L('user', [{ id: 'u', tools: ['mcp.*'], decision: 'allow' }]),
        workspace: L('workspace', [{ id: 'w', tools: ['mcp.*'], decision: 'ask' }]),
        managed: L('managed', [{ id: 'm', tools: ['mcp.github.*'], decision: 'deny' }]),
      };
      const p = new Policy(layers);
      const d = decide(p, call('mcp.github.push'));
      assert.equal(d.decision, 'deny');
      assert.deepEqual(d.rule, { id: 'm', index: 0, layer: 'managed', file: 'managed.jsonc', line: 4 });
      assert.equal(decide(p, call('mcp.gmail.read')).rule?.layer, 'workspace');
      const noWorkspace = new Policy({ managed: layers.managed, user: layers.user });
      const u = decide(noWorkspace, call('mcp.gmail.read'));
      assert.deepEqual([u.decision, u.rule?.layer, u.rule?.id, u.rule?.index, u.rule?.file], ['allow', 'user', 'u', 0, 'user.jsonc']);
    });

    it('a later layer\'s rule beats an earlier layer\'s default', () => {
      const p = new Policy({ managed: L('managed', [], { default: 'deny' }), user: L('user', [{ id: 'u', tools: ['client.x'], decision: 'allow' }]) });
      assert.equal(by(p, call('client.x')), 'u:allow');
      assert.equal(by(p, call('client.y')), 'default:deny');
    });

    it('`default` comes from the first layer that sets it', () => {
      const cases: Array<[Layers, string, LayerName | null]> = [
        [{ managed: L('managed', [], { default: 'allow' }), workspace: L('workspace', [], { default: 'deny' }), user: L('user', [], { default: 'ask' }) }, 'allow', 'managed'],
        [{ managed: L('managed', []), workspace: L('workspace', [], { default: 'deny' }), user: L('user', [], { default: 'allow' }) }, 'deny', 'workspace'],
        [{ managed: L('managed', []), workspace: L('workspace', []), user: L('user', [], { default: 'allow' }) }, 'allow', 'user'],
        [{ user: L('user', [], { default: 'deny' }) }, 'deny', 'user'],
      ];
      for (const [layers, expected, from] of cases) {
        const d = decide(new Policy(layers), call('mcp.a.b'));
        assert.equal(d.decision, expected);
        assert.equal(d.rule, null);
        assert.equal(d.defaultFrom, from);
      }
    });

    it('with no layer setting `default`, the built-in default is ask', () => {
      for (const layers of [{}, { managed: L('managed', []), workspace: L('workspace', []), user: L('user', []) }] as Layers[]) {
        const d = decide(new Policy(layers), call('mcp.a.b'));
        assert.equal(d.decision, 'ask');
        assert.equal(d.rule, null);
      }
    });
  });

  describe('untrusted workspace', () => {
    const untrusted = { trusted: false };

    it("lowers the workspace's allow rules to ask, with lowered:true and an explanation", () => {
      const p = new Policy({ workspace: layer([{ id: 'w', tools: ['mcp.*'], decision: 'allow', reason: 'read-only servers' }]) });
      const d = decide(p, call('mcp.a.b'), untrusted);
      assert.equal(d.decision, 'ask');
      assert.equal(d.lowered, true);
      assert.equal(d.rule?.id, 'w');
      assert.match(d.reason ?? '', /trust/);
      const trusted = decide(p, call('mcp.a.b'));
      assert.deepEqual([trusted.decision, trusted.lowered], ['allow', false]);
    });

    it("lowers the workspace's default allow to ask", () => {
      const p = new Policy({ workspace: layer([], { default: 'allow' }) });
      const d = decide(p, call('mcp.a.b'), untrusted);
      assert.deepEqual([d.decision, d.lowered, d.rule], ['ask', true, null]);
      assert.match(d.reason ?? '', /trust/);
      assert.equal(decide(p, call('mcp.a.b')).decision, 'allow');
    });

    it("leaves the workspace's ask and deny rules and defaults standing", () => {
      const p = new Policy({ workspace: layer([{ id: 'a', tools: ['x.a'], decision: 'ask' }, { id: 'd', tools: ['x.d'], decision: 'deny' }], { default: 'deny' }) });
      for (const [id, expected] of [['x.a', 'ask'], ['x.d', 'deny'], ['x.other', 'deny']] as const) {
        const d = decide(p, call(id), untrusted);
        assert.deepEqual([d.decision, d.lowered], [expected, false]);
      }
    });

    it('does not lower managed or user allows', () => {
      const p = new Policy({
        managed: layer([{ id: 'm', tools: ['x.m'], decision: 'allow' }], {}, 'managed'),
        workspace: layer([{ id: 'w', tools: ['x.w'], decision: 'allow' }]),
        user: layer([{ id: 'u', tools: ['x.u'], decision: 'allow' }], { default: 'allow' }, 'user'),
      });
      assert.deepEqual([decide(p, call('x.m'), untrusted).decision, decide(p, call('x.m'), untrusted).lowered], ['allow', false]);
      assert.deepEqual([decide(p, call('x.u'), untrusted).decision, decide(p, call('x.u'), untrusted).lowered], ['allow', false]);
      assert.deepEqual([decide(p, call('x.w'), untrusted).decision, decide(p, call('x.w'), untrusted).lowered], ['ask', true]);
      const byDefault = decide(p, call('x.none'), untrusted);
      assert.deepEqual([byDefault.decision, byDefault.lowered, byDefault.defaultFrom], ['allow', false, 'user']);
    });

    it("does not lower a managed default allow even when the workspace's rules are lowered", () => {
      const p = new Policy({ managed: layer([], { default: 'allow' }, 'managed'), workspace: layer([], { default: 'deny' }) });
      const d = decide(p, call('x.y'), untrusted);
      assert.deepEqual([d.decision, d.lowered], ['allow', false]);
    });
  });

  describe('invalid files (nextLayerState)', () => {
    const good = (): PolicyLayer => layer([{ id: 'ok', tools: ['client.lookup'], decision: 'allow' }, { id: 'no', tools: ['mcp.*'], decision: 'deny' }], { default: 'deny' });
    // A broken file whose intent (if it were read leniently) would allow everything.
    const BROKEN_TYPO = '{ "version": 1, "default": "allow", "rules": [ { "tool": ["mcp.*"], "decision": "allow" } ] }';
    const BROKEN_SYNTAX = '{ "version": 1, "default": "allow", "rules": [ { "decision": "allow" } ';

    it('a valid file is in force', () => {
      const s = nextLayerState(undefined, good());
      assert.equal(s.kind, 'ok');
      assert.equal(by(new Policy({ workspace: s }), call('client.lookup')), 'ok:allow');
    });

    for (const [name, text] of [['schema error', BROKEN_TYPO], ['syntax error', BROKEN_SYNTAX]] as const) {
      it(`after a ${name}, the last valid version stays in force, with a warning`, () => {
        const previous = nextLayerState(undefined, good());
        const s = nextLayerState(previous, invalidLayer(text));
        assert.equal(s.kind, 'ok');
        assert.ok(s.kind === 'ok' && s.stale !== undefined, 'marked stale');
        const p = new Policy({ workspace: s });
        assert.equal(p.degraded, true);
        assert.equal(by(p, call('client.lookup')), 'ok:allow');
        assert.equal(by(p, call('mcp.github.push')), 'no:deny', 'the broken file does not replace the good one');
        const d = decide(p, call('other.tool'));
        assert.deepEqual([d.decision, d.rule], ['deny', null], 'the last valid default applies');
        assert.ok(d.warnings.length > 0, 'the decision warns that the layer is stale');
      });
    }

    it('a second invalid version keeps the last valid one, not the first invalid one', () => {
      let s = nextLayerState(undefined, good());
      s = nextLayerState(s, invalidLayer(BROKEN_TYPO));
      s = nextLayerState(s, invalidLayer(BROKEN_SYNTAX));
      assert.equal(by(new Policy({ workspace: s }), call('client.lookup')), 'ok:allow');
    });

    it('a valid version replaces a stale one', () => {
      let s = nextLayerState(undefined, good());
      s = nextLayerState(s, invalidLayer(BROKEN_TYPO));
      s = nextLayerState(s, layer([{ id: 'new', decision: 'deny' }]));
      assert.ok(s.kind === 'ok' && s.stale === undefined);
      assert.equal(by(new Policy({ workspace: s }), call('client.lookup')), 'new:deny');
    });

    it('a broken layer with no valid version asks every call that reaches it, never allows', () => {
      const s = nextLayerState(undefined, invalidLayer(BROKEN_TYPO));
      assert.equal(s.kind, 'broken');
      const p = new Policy({ workspace: s });
      for (const id of ['mcp.github.push', 'client.lookup', 'builtin.read_file']) {
        const d = decide(p, call(id));
        assert.equal(d.decision, 'ask', id);
        assert.equal(d.rule, null);
        assert.ok(d.reason && d.reason.length > 0, 'says why');
      }
    });

    it('a broken layer is never made to allow by a later layer or any default', () => {
      const p = new Policy({
        managed: layer([], { default: 'allow' }, 'managed'),
        workspace: nextLayerState(undefined, invalidLayer(BROKEN_SYNTAX)),
        user: layer([{ id: 'u', decision: 'allow' }], { default: 'allow' }, 'user'),
      });
      assert.equal(decide(p, call('mcp.x.y')).decision, 'ask');
      assert.equal(decide(p, call('mcp.x.y'), { trusted: false }).decision, 'ask');
    });

    it('a call an earlier layer decides is not in the broken layer\'s reach', () => {
      const p = new Policy({
        managed: layer([{ id: 'm', tools: ['mcp.*'], decision: 'deny' }], {}, 'managed'),
        workspace: nextLayerState(undefined, invalidLayer(BROKEN_TYPO)),
      });
      assert.equal(by(p, call('mcp.x.y')), 'm:deny');
      assert.equal(by(p, call('client.x')), 'default:ask');
    });

    it('a broken layer then a valid one: the valid one is in force', () => {
      let s = nextLayerState(undefined, invalidLayer(BROKEN_TYPO));
      s = nextLayerState(s, good());
      assert.equal(s.kind, 'ok');
      assert.equal(by(new Policy({ workspace: s }), call('client.lookup')), 'ok:allow');
    });

    it('an invalid layer handed to Policy directly counts as broken', () => {
      const p = new Policy({ workspace: invalidLayer(BROKEN_TYPO) });
      assert.equal(decide(p, call('mcp.github.push')).decision, 'ask');
      assert.equal(p.degraded, true);
    });
  });
});
