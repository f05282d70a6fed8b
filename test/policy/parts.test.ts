// Each part is judged on its own; the call takes the strictest (policy-format.md, "A rule"),
// and the sandbox conditions of "Sandboxed commands" as the engine sees them.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import fc from 'fast-check';
import type { ToolCall } from '../../src/policy/rules/call.js';
import type { DecideOptions, PolicyDecision } from '../../src/policy/rules/decision.js';
import { loadPolicyText, Policy, type PolicyLayer } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { splitCommand } from '../../src/policy/shell/shellSplit.js';

function layer(policy: object, name: 'managed' | 'workspace' | 'user' = 'workspace'): PolicyLayer {
  const l = loadPolicyText(JSON.stringify({ version: 1, ...policy }), `${name}.jsonc`, name);
  assert.equal(l.valid, true, JSON.stringify(l.diagnostics));
  return l;
}

const OPTIONS: DecideOptions = { workspaceFolder: os.tmpdir(), followSymlinks: false };

function run(command: string, tool = 'builtin.run_command'): ToolCall {
  return { tool: { id: tool }, input: { command }, agent: 'main' };
}

function decide(policy: object, call: ToolCall, options: Partial<DecideOptions> = {}): PolicyDecision {
  return new Policy({ workspace: layer(policy) }).decide(call, { ...OPTIONS, ...options });
}

const partsOf = (d: PolicyDecision): Array<[string, string, string | null]> => (d.parts ?? []).map((p) => [p.part, p.decision, p.rule?.id ?? null]);

describe('per-part decisions', () => {
  before(async () => {
    await initShellParser();
  });

  it('allows a chain whose every command some rule allows (the spec example)', () => {
    const policy = {
      rules: [
        { id: 'status', tools: ['builtin.run_command'], commands: ['git status'], decision: 'allow' },
        { id: 'build', tools: ['builtin.run_command'], commands: ['npm run build'], decision: 'allow' },
      ],
    };
    const d = decide(policy, run('git status && npm run build'));
    assert.equal(d.decision, 'allow');
    assert.equal(d.rule?.id, 'status', 'the first part names its rule when all tie');
    assert.deepEqual(partsOf(d), [['git status', 'allow', 'status'], ['npm run build', 'allow', 'build']]);
  });

  it('denies `npm test && rm -rf /` by a later deny on rm * even when an earlier rule asks for npm *', () => {
    const policy = {
      rules: [
        { id: 'npm', tools: ['builtin.run_command'], commands: ['npm *'], decision: 'ask' },
        { id: 'no-rm', tools: ['builtin.run_command'], commands: ['rm *'], decision: 'deny', reason: 'never rm' },
      ],
    };
    const d = decide(policy, run('npm test && rm -rf /'));
    assert.equal(d.decision, 'deny');
    assert.equal(d.rule?.id, 'no-rm');
    assert.equal(d.reason, 'never rm');
    assert.deepEqual(partsOf(d), [['npm test', 'ask', 'npm'], ['rm -rf /', 'deny', 'no-rm']]);
    assert.equal(d.ask, undefined, 'a denied call carries no ask settings');
  });

  it('a part no rule matches takes the default, and a default ask is the strictest part', () => {
    const policy = { default: 'ask', rules: [{ id: 'ls', commands: ['ls *'], decision: 'allow' }] };
    const d = decide(policy, run('ls -la; curl x'));
    assert.equal(d.decision, 'ask');
    assert.equal(d.rule, null);
    assert.equal(d.defaultFrom, 'workspace');
    assert.deepEqual(partsOf(d), [['ls -la', 'allow', 'ls'], ['curl x', 'ask', null]]);
  });

  it('a single simple command lists no parts', () => {
    const d = decide({ rules: [{ commands: ['ls'], decision: 'allow' }] }, run('ls'));
    assert.equal(d.decision, 'allow');
    assert.equal(d.parts, undefined);
  });

  it('parts show the words as the shell reads them, with quotes where a word needs them, and redirects', () => {
    const d = decide({ rules: [{ commands: ['*'], decision: 'allow' }] }, run(`echo 'a b' "c" > out.txt; ls`));
    assert.equal(d.decision, 'ask', 'a command that writes to a file never matches an allow pattern');
    assert.deepEqual(d.parts?.map((p) => [p.part, p.decision, p.note ?? null]), [
      ["echo 'a b' c >…", 'ask', 'never allowed: it writes to a file'],
      ['ls', 'allow', null],
    ]);
  });

  it('each path of a call is a part', () => {
    const policy = {
      rules: [
        { id: 'env', paths: ['**/.env'], decision: 'deny' },
        { id: 'src', tools: ['builtin.read_file'], paths: ['src/**'], decision: 'allow' },
      ],
    };
    const call: ToolCall = { tool: { id: 'builtin.read_file' }, input: { paths: ['src/a.ts', 'src/.env', 'docs/x'] }, agent: 'main' };
    const d = decide(policy, call);
    assert.equal(d.decision, 'deny');
    assert.equal(d.rule?.id, 'env');
    assert.deepEqual(partsOf(d), [['src/a.ts', 'allow', 'src'], ['src/.env', 'deny', 'env'], ['docs/x', 'ask', null]]);
  });

  it('a path argument that is not a string is a part no allow rule takes', () => {
    const policy = { rules: [{ id: 'all', paths: ['**'], decision: 'allow' }] };
    const d = decide(policy, { tool: { id: 'mcp.fs.read' }, input: { paths: ['a', 7] }, agent: 'main' });
    assert.equal(d.decision, 'ask');
    assert.deepEqual(d.parts?.map((p) => [p.decision, p.note ?? null]), [['allow', null], ['ask', 'never allowed: a path argument is not a string']]);
  });

  it('a rule reading both cwd and command sees each command with the cwd', () => {
    const policy = {
      rules: [{ id: 'tests-in-src', tools: ['builtin.run_command'], paths: ['src', 'src/**'], commands: ['npm test', 'ls'], decision: 'allow' }],
    };
    const call: ToolCall = { tool: { id: 'builtin.run_command', pathArgs: ['cwd'] }, input: { command: 'npm test && ls', cwd: 'src' }, agent: 'main' };
    const d = decide(policy, call);
    assert.equal(d.decision, 'allow');
    assert.deepEqual(partsOf(d), [['npm test', 'allow', 'tests-in-src'], ['ls', 'allow', 'tests-in-src']]);
  });

  it('an unparseable command: recovered commands are judged (a deny still sees rm) and the text itself is never allowed', () => {
    const policy = {
      rules: [
        { id: 'npm', commands: ['npm *'], decision: 'ask' },
        { id: 'no-rm', commands: ['rm *'], decision: 'deny' },
        { id: 'all', commands: ['*'], decision: 'allow' },
      ],
    };
    const source = 'rm -rf / ; if then';
    assert.equal(splitCommand(source).ok, false);
    const d = decide(policy, run(source));
    assert.equal(d.decision, 'deny');
    assert.equal(d.rule?.id, 'no-rm');
    const last = d.parts?.at(-1);
    assert.equal(last?.note, 'never allowed: the command could not be parsed');
    assert.equal(last?.decision, 'ask', 'the first tightening rule takes the text that could not be parsed');
  });

  it('several asking parts ask once, with the strictest of their settings', () => {
    const policy = {
      rules: [
        { id: 'a', commands: ['a *'], decision: 'ask', timeout: 60, onTimeout: 'keep' },
        { id: 'b', commands: ['b *'], decision: 'ask', timeout: 30, remember: 'never', onTimeout: 'keep' },
      ],
    };
    const d = decide(policy, run('a x; b y'));
    assert.equal(d.decision, 'ask');
    assert.equal(d.rule?.id, 'a');
    assert.deepEqual(d.ask, { onTimeout: 'keep', remember: 'never', timeout: 30 });
    const withDeny = decide({ rules: [...policy.rules, { id: 'c', commands: ['c *'], decision: 'ask' }] }, run('a x; c z'));
    assert.deepEqual(withDeny.ask, { onTimeout: 'deny', remember: 'session', timeout: 60 });
  });

  it('trust lowers each part: an untrusted workspace allow is an ask, other layers stand', () => {
    const policy = new Policy({
      managed: layer({ rules: [{ id: 'm', commands: ['git status'], decision: 'allow' }] }, 'managed'),
      workspace: layer({ rules: [{ id: 'w', commands: ['npm test'], decision: 'allow' }] }),
    });
    const d = policy.decide(run('git status; npm test'), { ...OPTIONS, trusted: false });
    assert.equal(d.decision, 'ask');
    assert.equal(d.lowered, true);
    assert.equal(d.rule?.id, 'w');
    assert.deepEqual(partsOf(d), [['git status', 'allow', 'm'], ['npm test', 'ask', 'w']]);
  });

  it('explain traces each part by its place', () => {
    const policy = new Policy({ workspace: layer({ rules: [{ id: 'ls', commands: ['ls'], decision: 'allow' }, { id: 'pwd', commands: ['pwd'], decision: 'allow' }] }) });
    const e = policy.explain(run('ls; pwd'), OPTIONS);
    // The rule on `ls` cannot match `pwd` (its first word rules it out), so it is not tested for part 2.
    assert.deepEqual(e.trace.map((t) => [t.partIndex, t.part, t.rule.id, t.failed]), [
      [0, 'ls', 'ls', null],
      [1, 'pwd', 'pwd', null],
    ]);
    const glob = new Policy({ workspace: layer({ rules: [{ id: 'l', commands: ['l? *'], decision: 'allow' }, { id: 'pwd', commands: ['pwd'], decision: 'allow' }] }) });
    assert.deepEqual(glob.explain(run('ls; pwd'), OPTIONS).trace.map((t) => [t.partIndex, t.rule.id, t.failed]), [[0, 'l', null], [1, 'l', 'commands'], [1, 'pwd', null]], 'a pattern starting with a glob is tested');
  });

  it('a decision tests only the rules on its words\' path through the index, at every depth', () => {
    // Explain's trace lists the rules a decision tested (it walks the same lists).
    const commands = new Policy({ workspace: layer({ rules: [
      { id: 'test', commands: ['npm test'], decision: 'allow' },
      { id: 'lint', commands: ['npm run lint'], decision: 'allow' },
      { id: 'run', commands: ['npm run *'], decision: 'ask' },
      { id: 'any', commands: ['* x'], decision: 'deny' },
    ] }) });
    assert.deepEqual(commands.explain(run('npm run build'), OPTIONS).trace.map((t) => [t.rule.id, t.failed]), [['run', null]]);
    assert.deepEqual(commands.explain(run('npm run lint'), OPTIONS).trace.map((t) => [t.rule.id, t.failed]), [['lint', null]]);
    assert.deepEqual(commands.explain(run('npm x'), OPTIONS).trace.map((t) => [t.rule.id, t.failed]), [['any', null]], 'a pattern starting with a glob is tested');
    const paths = new Policy({ workspace: layer({ rules: [
      { id: 'lib', paths: ['src/lib/**'], decision: 'allow' },
      { id: 'app', paths: ['src/app/**'], decision: 'deny' },
      { id: 'src', paths: ['src/**'], decision: 'ask' },
    ] }) });
    const read = (path: string): ToolCall => ({ tool: { id: 'builtin.read_file' }, input: { path }, agent: 'main' });
    assert.deepEqual(paths.explain(read('src/app/a.ts'), OPTIONS).trace.map((t) => [t.rule.id, t.failed]), [['app', null]]);
    assert.deepEqual(paths.explain(read('src/other/a.ts'), OPTIONS).trace.map((t) => [t.rule.id, t.failed]), [['src', null]]);
  });

  it('a program named by its path is also judged by its name, but only by ask and deny rules', () => {
    const policy = {
      default: 'ask',
      rules: [
        { id: 'no-rm', commands: ['rm *'], decision: 'deny' },
        { id: 'gradle', commands: ['./gradlew build'], decision: 'allow' },
        { id: 'bin-ls', commands: ['/bin/ls *'], decision: 'allow' },
      ],
    };
    const rm = decide(policy, run('/bin/rm -rf x'));
    assert.equal(rm.decision, 'deny');
    assert.equal(rm.rule?.id, 'no-rm');
    const gradle = decide(policy, run('./gradlew build'));
    assert.equal(gradle.decision, 'allow', 'no rule for a gradlew on the PATH is needed, and the default does not judge it');
    assert.equal(gradle.rule?.id, 'gradle', 'the part that did not count never names the rule');
    assert.deepEqual(gradle.parts?.map((p) => [p.part, p.decision, p.rule?.id ?? null, p.note ?? null]), [
      ['./gradlew build', 'allow', 'gradle', null],
      ['gradlew build', 'allow', null, 'judged only by ask and deny rules: the program named by its path, by its name alone'],
    ]);
    assert.equal(decide(policy, run('/bin/ls -la && ./gradlew build')).decision, 'allow');
    const envRm = decide({ rules: [{ commands: ['/usr/bin/env *'], decision: 'allow' }] }, run('/usr/bin/env rm x'));
    assert.equal(envRm.decision, 'ask', 'what a wrapper named by its path runs is a part like any other');
  });

  it('property: a call is never allowed when some part alone is not, and denied when some part alone is denied', () => {
    const words = ['ls', 'rm', 'npm', 'git', 'cat'];
    // No argument that makes one of these a wrapper (`npm x CMD` runs CMD: a further part of its own).
    const args = ['-la', 'file', 'test', 'status', '/'];
    const commandArb = fc.tuple(fc.constantFrom(...words), fc.array(fc.constantFrom(...args), { maxLength: 2 })).map(([w, a]) => [w, ...a].join(' '));
    const ruleArb = fc.record({
      commands: fc.array(fc.oneof(fc.constantFrom(...words).map((w) => `${w} *`), commandArb), { minLength: 1, maxLength: 2 }),
      decision: fc.constantFrom('allow', 'ask', 'deny'),
    });
    const chainArb = fc.array(commandArb, { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 6 }), fc.constantFrom('allow', 'ask', 'deny'), chainArb, fc.constantFrom(' && ', '; ', ' | ', ' || '), (rules, dflt, chain, joiner) => {
        const policy = new Policy({ workspace: layer({ default: dflt, rules }) });
        const whole = policy.decide(run(chain.join(joiner)), OPTIONS);
        const alone = chain.map((c) => policy.decide(run(c), OPTIONS).decision);
        if (alone.includes('deny')) assert.equal(whole.decision, 'deny', `${chain.join(joiner)}: a part alone is denied`);
        else if (alone.includes('ask')) assert.equal(whole.decision, 'ask', `${chain.join(joiner)}: a part alone asks`);
        else assert.equal(whole.decision, 'allow');
        if (chain.length > 1) assert.deepEqual(whole.parts?.map((p) => p.decision), alone);
      }),
      { numRuns: 500 },
    );
  });
});

describe('sandbox conditions in the engine', () => {
  before(async () => {
    await initShellParser();
  });

  const SANDBOXED = { rules: [{ id: 'tests', commands: ['npm test'], decision: 'allow', sandbox: true }, { id: 'install', commands: ['npm install'], decision: 'allow', sandbox: { network: true } }, { id: 'ls', commands: ['ls'], decision: 'allow' }] };

  it('a sandbox rule allows where the command runs sandboxed, without network unless the rule says so', () => {
    const d = decide(SANDBOXED, run('npm test'), { sandbox: true });
    assert.equal(d.decision, 'allow');
    assert.deepEqual(d.sandbox, { sandboxed: true, network: false });
    assert.deepEqual(decide(SANDBOXED, run('npm install'), { sandbox: true }).sandbox, { sandboxed: true, network: true });
    assert.deepEqual(decide(SANDBOXED, run('npm install && ls'), { sandbox: true }).sandbox, { sandboxed: true, network: false }, 'every part must allow the network');
  });

  it('without a sandbox, a sandbox rule asks and says why; other allows stand', () => {
    const d = decide(SANDBOXED, run('npm test'), { sandbox: false, sandboxUnavailable: 'bubblewrap is not installed' });
    assert.equal(d.decision, 'ask');
    assert.equal(d.rule?.id, 'tests');
    assert.match(d.reason ?? '', /only inside the sandbox, and bubblewrap is not installed/);
    assert.deepEqual(d.sandbox, { sandboxed: false, network: false });
    assert.equal(decide(SANDBOXED, run('ls'), { sandbox: false }).decision, 'allow');
  });

  it('only builtin.run_command is sandboxed: another tool\'s command under a sandbox rule asks', () => {
    const d = decide({ rules: [{ commands: ['npm test'], decision: 'allow', sandbox: true }] }, run('npm test', 'mcp.shell.exec'), { sandbox: true });
    assert.equal(d.decision, 'ask');
    assert.match(d.reason ?? '', /mcp\.shell\.exec does not run its commands in Agent Policy's sandbox/);
    assert.equal(d.sandbox, undefined);
  });

  it('"sandbox": "required" asks for every command that cannot run sandboxed, and the first layer that sets it wins', () => {
    const required = { sandbox: 'required', default: 'allow', rules: [{ commands: ['ls'], decision: 'allow' }] };
    assert.equal(decide(required, run('ls'), { sandbox: true }).decision, 'allow');
    const d = decide(required, run('ls'), { sandbox: false });
    assert.equal(d.decision, 'ask');
    assert.match(d.reason ?? '', /requires every command to run sandboxed/);
    assert.equal(decide(required, run('pwd'), { sandbox: false }).decision, 'ask', 'the default allow too');
    assert.equal(decide(required, { tool: { id: 'builtin.read_file' }, input: { path: 'a' }, agent: 'main' }, { sandbox: false }).decision, 'allow', 'calls without a command are not affected');
    const userOff = new Policy({ workspace: layer({ sandbox: 'required' }), user: layer({ sandbox: 'off' }, 'user') });
    assert.deepEqual(userOff.sandboxMode(), { mode: 'required', from: 'workspace' });
  });

  it('"sandbox": "off" only in the managed or user layer; there it turns sandbox rules into asks', () => {
    const ws = loadPolicyText(JSON.stringify({ version: 1, sandbox: 'off' }), '.agentpolicy.jsonc', 'workspace');
    assert.equal(ws.valid, false);
    assert.match(ws.diagnostics.map((d) => d.message).join('\n'), /"sandbox": "off" is allowed only in the managed or user policy/);
    assert.equal(ws.diagnostics[0]?.code, 'schema');
    const policy = new Policy({ managed: layer({ sandbox: 'off' }, 'managed'), workspace: layer(SANDBOXED) });
    const d = policy.decide(run('npm test'), { ...OPTIONS, sandbox: true });
    assert.equal(d.decision, 'ask');
    assert.match(d.reason ?? '', /the sandbox is off \(the managed policy says "sandbox": "off"\)/);
    assert.deepEqual(d.sandbox, { sandboxed: false, network: false });
  });

  it('"sandbox" on a rule is for allow rules only', () => {
    const l = loadPolicyText(JSON.stringify({ version: 1, rules: [{ commands: ['x'], decision: 'ask', sandbox: true }] }), 'p.jsonc');
    assert.equal(l.valid, false);
    assert.match(l.diagnostics[0]?.message ?? '', /"sandbox" applies only to rules whose decision is "allow"/);
    const bad = loadPolicyText(JSON.stringify({ version: 1, rules: [{ commands: ['x'], decision: 'allow', sandbox: { net: true } }] }), 'p.jsonc');
    assert.equal(bad.valid, false);
  });

  it('a denied command carries no sandbox', () => {
    assert.equal(decide({ rules: [{ commands: ['rm *'], decision: 'deny' }] }, run('rm x'), { sandbox: true }).sandbox, undefined);
  });
});
