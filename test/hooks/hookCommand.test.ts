// `agentpolicy hook`: one host call judged and answered, in a temporary workspace with its own
// state folder. The answers are read as each host reads them (docs/hook-hosts.md §1).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { runHook, type HookAsk, type HookEditor, type HookEditorAnswer, type HookOptions } from '../../src/hooks/judge/hookCommand.js';
import { HOST_AGENTS, type HostAgent } from '../../src/hooks/hosts/hostAgents.js';
import { hostAnswer } from '../../src/hooks/hosts/hostAnswers.js';
import { readHostCall } from '../../src/hooks/hosts/hostCalls.js';
import { loadHookPolicy } from '../../src/hooks/judge/hookPolicy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { generateMatchers } from '../../bench/policyBench.js';

const POLICY = `{
  // what the tests rely on
  "version": 1,
  "rules": [
    { "id": "no-rm", "tools": ["builtin.run_command"], "commands": ["rm *"], "decision": "deny", "reason": "no deleting" },
    { "id": "safe", "tools": ["builtin.run_command"], "commands": ["touch *", "echo *"], "decision": "allow" },
    { "id": "secrets", "tools": ["builtin.*"], "paths": ["secrets/**"], "decision": "deny", "reason": "secrets stay" },
    { "id": "src", "tools": ["builtin.write_file", "builtin.read_file"], "paths": ["src/**"], "decision": "allow" },
    { "id": "slow", "tools": ["builtin.run_command"], "commands": ["deploy *"], "decision": "ask", "onTimeout": "keep" }
  ],
  "default": "ask"
}`;

let root: string;
let workspace: string;
let state: string;

function options(agent: HostAgent, more: Partial<HookOptions> = {}): HookOptions {
  return { agent, stateDir: state, ...more };
}

function claudeInput(tool: string, input: unknown, cwd = workspace): string {
  return JSON.stringify({ session_id: 's-1', cwd, hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input });
}

async function hook(agent: HostAgent, stdin: string, more: Partial<HookOptions> = {}, editor?: HookEditor) {
  return runHook(options(agent, more), { stdin, env: {}, cwd: workspace, ...(editor ? { findEditor: () => editor } : {}) });
}

/** The decision as Claude Code reads the answer. */
function claudeDecision(stdout: string): string {
  return (JSON.parse(stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision;
}

function auditLines(): Array<Record<string, unknown>> {
  const file = path.join(state, 'audit.jsonl');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
}

function fakeEditor(answer: HookEditorAnswer | undefined, more: Partial<HookEditor> = {}): HookEditor & { asked: HookAsk[] } {
  const asked: HookAsk[] = [];
  return { ...more, asked, ask: async (ask) => (asked.push(ask), answer) };
}

describe('agentpolicy hook: judging a host\'s call', function () {
  before(async () => {
    await initShellParser();
  });

  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-')));
    workspace = path.join(root, 'proj');
    state = path.join(root, 'state');
    fs.mkdirSync(path.join(workspace, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), POLICY);
  });

  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('denies, allows and asks as the policy says, in Claude Code\'s format, and audits each', async () => {
    const deny = await hook('claude', claudeInput('Bash', { command: 'rm -rf build' }));
    assert.equal(claudeDecision(deny.stdout), 'deny');
    assert.match(deny.stdout, /no deleting/);
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'touch a && echo b' }))).stdout), 'allow');
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'touch a && curl x' }))).stdout), 'ask');
    const lines = auditLines();
    assert.deepEqual(lines.map((l) => [l.event, l.session, l.agent, l.tool, l.decision]), [
      ['decision', 'claude:s-1', 'claude', 'builtin.run_command', 'deny'],
      ['decision', 'claude:s-1', 'claude', 'builtin.run_command', 'allow'],
      ['decision', 'claude:s-1', 'claude', 'builtin.run_command', 'ask'],
    ]);
    assert.equal((lines[0]!.rule as { id: string }).id, 'no-rm');
    assert.equal((lines[0]!.rule as { file: string }).file, '.agentpolicy.jsonc');
    assert.equal((lines[2]!.parts as unknown[]).length, 2);
  });

  it('judges what another host\'s command reaches by the same table: files it names, reads under a folder, scripts it runs', async () => {
    fs.mkdirSync(path.join(workspace, 'secrets'));
    fs.writeFileSync(path.join(workspace, 'secrets', 'token'), 'x\n');
    fs.writeFileSync(path.join(workspace, 'package.json'), JSON.stringify({ scripts: { leak: 'rm -rf secrets' } }));
    const claude = async (command: string) => claudeDecision((await hook('claude', claudeInput('Bash', { command }))).stdout);
    // `echo` is allowed by its first word; what it reads or writes is judged by the paths rules.
    assert.equal(await claude('echo x > secrets/token'), 'deny');
    assert.equal(await claude('touch secrets/new'), 'deny');
    assert.equal(await claude('cd secrets && touch token'), 'deny');
    assert.equal(await claude('touch secre?s/token'), 'deny');
    // A package script runs a command the deny on rm takes.
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), POLICY.replace('"touch *", "echo *"', '"touch *", "echo *", "npm *"'));
    assert.equal(await claude('npm run leak'), 'deny');
  });

  it('gives Codex silence for allow and a deny with a reason for ask (it runs anything else)', async () => {
    const codex = (command: string) => hook('codex', claudeInput('Bash', { command }));
    assert.equal((await codex('touch a')).stdout, '');
    for (const command of ['curl example.com', 'rm -rf /']) {
      const out = JSON.parse((await codex(command)).stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
      assert.equal(out.hookSpecificOutput.permissionDecision, 'deny');
      assert.notEqual(out.hookSpecificOutput.permissionDecisionReason.trim(), '');
    }
    assert.match((await codex('curl example.com')).stdout, /Codex cannot ask/);
  });

  it('gives Gemini CLI a deny for an ask (an ask ends a headless run), and Cursor\'s read no ask', async () => {
    const gemini = JSON.parse((await hook('gemini', claudeInput('run_shell_command', { command: 'curl x' }))).stdout) as { decision: string };
    assert.equal(gemini.decision, 'deny');
    const read = JSON.stringify({ hook_event_name: 'beforeReadFile', conversation_id: 'c', workspace_roots: [workspace], file_path: path.join(workspace, 'README') });
    assert.equal((JSON.parse((await hook('cursor', read)).stdout) as { permission: string }).permission, 'deny');
    const shell = JSON.stringify({ hook_event_name: 'beforeShellExecution', conversation_id: 'c', workspace_roots: [workspace], command: 'curl x', cwd: workspace });
    assert.equal((JSON.parse((await hook('cursor', shell)).stdout) as { permission: string }).permission, 'ask');
  });

  it('answers Copilot CLI in the shape it asked in', async () => {
    const camel = JSON.stringify({ sessionId: 'c', cwd: workspace, toolName: 'bash', toolArgs: { command: 'rm x' } });
    assert.deepEqual(Object.keys(JSON.parse((await hook('copilot', camel)).stdout) as object), ['permissionDecision', 'permissionDecisionReason']);
    assert.equal(claudeDecision((await hook('copilot', claudeInput('Bash', { command: 'rm x' }))).stdout), 'deny');
  });

  it('judges the Claude Code entry as the host that really runs it, and steps aside where that host has its own', async () => {
    // Copilot CLI runs .claude/settings.json's entry with Copilot's own fields.
    const copilotInClaudeShape = claudeInput('Bash', { command: 'rm x', description: 'd' });
    const viaClaudeEntry = await runHook(options('claude'), { stdin: copilotInClaudeShape, env: { COPILOT_CLI: '1' }, cwd: workspace });
    assert.equal(claudeDecision(viaClaudeEntry.stdout), 'deny');
    // VS Code sends camelCase common fields and its own tool names.
    const vscodeInput = JSON.stringify({ hookEventName: 'PreToolUse', sessionId: 'v', cwd: workspace, tool_name: 'run_in_terminal', tool_input: { command: 'rm x' } });
    const vscode = await runHook(options('claude'), { stdin: vscodeInput, env: {}, cwd: workspace });
    assert.match(vscode.stdout, /no deleting/);
    assert.equal(auditLines().at(-1)!.session, 'vscode:v');
    // With the shared .github/hooks entry in place, that entry judges: the Claude one says nothing.
    fs.mkdirSync(path.join(workspace, '.github', 'hooks'), { recursive: true });
    const { applyHookInstall, planHookInstall } = await import('../../src/hooks/install/hookInstall.js');
    applyHookInstall(planHookInstall({ workspaceFolder: workspace, agents: ['copilot'], remove: false }));
    const lines = auditLines().length;
    const aside = await runHook(options('claude'), { stdin: copilotInClaudeShape, env: { COPILOT_CLI: '1' }, cwd: workspace });
    assert.equal(aside.stdout, '');
    assert.equal(auditLines().length, lines);
  });

  it('reads a host\'s relative paths from where the host works, so a deny on a folder holds from a subfolder', async () => {
    const sub = path.join(workspace, 'sub');
    const gemini = JSON.stringify({ session_id: 'g', cwd: sub, hook_event_name: 'BeforeTool', tool_name: 'read_file', tool_input: { file_path: '../secrets/key' } });
    const out = JSON.parse((await hook('gemini', gemini)).stdout) as { decision: string; reason: string };
    assert.deepEqual([out.decision, out.reason], ['deny', 'secrets stay']);
    // The workspace is found above the host's folder.
    const inSrc = JSON.stringify({ session_id: 'g', cwd: sub, hook_event_name: 'BeforeTool', tool_name: 'write_file', tool_input: { file_path: '../src/a.ts', content: '' } });
    assert.equal((JSON.parse((await hook('gemini', inSrc)).stdout) as { decision: string }).decision, 'allow');
  });

  it('judges every path a Codex patch writes: one denied path denies the patch', async () => {
    const patch = '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** Add File: secrets/x\n+k\n*** End Patch';
    const out = JSON.parse((await hook('codex', claudeInput('apply_patch', { command: patch }))).stdout) as { hookSpecificOutput: { permissionDecisionReason: string } };
    assert.equal(out.hookSpecificOutput.permissionDecisionReason, 'secrets stay');
    assert.equal((await hook('codex', claudeInput('apply_patch', { command: patch.replace('secrets/x', 'src/b.ts') }))).stdout, '');
  });

  it('asks (never for the session) before a write to a protected file, whatever the rules say', async () => {
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), POLICY.replace('"default": "ask"', '"default": "allow"'));
    const editor = fakeEditor({ answer: 'deny', by: 'person' });
    const out = await hook('claude', claudeInput('Write', { file_path: path.join(workspace, '.claude/settings.json'), content: '{}' }), {}, editor);
    assert.equal(claudeDecision(out.stdout), 'deny');
    assert.equal(editor.asked.length, 1);
    assert.equal(editor.asked[0]!.remember, 'never');
    assert.match(editor.asked[0]!.reason ?? '', /protected file \.claude\/settings\.json/);
    // A command that edits the policy file, allowed by a rule, is asked too; Codex gets a deny.
    const sed = JSON.parse((await hook('codex', claudeInput('Bash', { command: 'echo x > .agentpolicy.jsonc' }))).stdout) as { hookSpecificOutput: { permissionDecision: string } };
    assert.equal(sed.hookSpecificOutput.permissionDecision, 'deny');
    // The hook's own state (last valid policies, its audit log) is protected too.
    const ownState = await hook('claude', claudeInput('Bash', { command: `touch ${state}/validated/x.json` }));
    assert.equal(claudeDecision(ownState.stdout), 'ask');
    // And the editor bridge's folder: a discovery file written there would point the hook at a fake window.
    const bridge = path.join(root, 'run');
    const fake = await runHook(options('claude'), { stdin: claudeInput('Write', { file_path: path.join(bridge, 'agentpolicy', 'x.json'), content: '{}' }), env: { XDG_RUNTIME_DIR: bridge }, cwd: workspace });
    assert.equal(claudeDecision(fake.stdout), 'ask');
  });

  it('puts an ask to the editor and answers with the person\'s answer', async () => {
    const allowing = fakeEditor({ answer: 'allow-once', by: 'person' });
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'curl x' }), {}, allowing)).stdout), 'allow');
    const ask = allowing.asked[0]!;
    assert.deepEqual([ask.host, ask.hostLabel, ask.hostSession, ask.toolId, ask.summary, ask.remember, ask.onTimeout], ['claude', 'Claude Code', 's-1', 'builtin.run_command', 'curl x', 'session', 'deny']);
    // Codex cannot ask, but the editor can: a person's allow is silence, which Codex runs.
    assert.equal((await hook('codex', claudeInput('Bash', { command: 'curl x' }), {}, allowing)).stdout, '');
    const denying = fakeEditor({ answer: 'deny', by: 'person' });
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'curl x' }), {}, denying)).stdout), 'deny');
  });

  it('answers with the rule\'s onTimeout when the editor gives no answer before the hook\'s deadline', async () => {
    const silent = fakeEditor(undefined);
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'curl x' }), { timeoutSeconds: 10 }, silent)).stdout), 'deny');
    // onTimeout keep: the host's own ask where it has one, a deny where it has none.
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'deploy prod' }), {}, silent)).stdout), 'ask');
    assert.equal((JSON.parse((await hook('gemini', claudeInput('run_shell_command', { command: 'deploy prod' }), {}, silent)).stdout) as { decision: string }).decision, 'deny');
  });

  it('sets the ask\'s deadline below the host\'s timeout', async () => {
    let deadline = 0;
    const editor: HookEditor = { ask: async (_ask, d) => ((deadline = d), undefined) };
    const now = 1_000_000;
    await runHook(options('claude', { timeoutSeconds: 30 }), { stdin: claudeInput('Bash', { command: 'curl x' }), env: {}, cwd: workspace, findEditor: () => editor, now: () => now });
    assert.ok(deadline > now && deadline < now + 30_000, `deadline ${deadline - now} ms`);
  });

  it('lowers the workspace\'s allows when the editor does not trust the folder, and with --untrusted', async () => {
    const untrusting = fakeEditor({ answer: 'deny', by: 'person' }, { trusted: false });
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'touch a' }), {}, untrusting)).stdout), 'deny');
    assert.equal(untrusting.asked.length, 1, 'the lowered allow is put to a person');
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'touch a' }), { untrusted: true })).stdout), 'ask');
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'rm a' }), { untrusted: true })).stdout), 'deny');
  });

  it('judges as the editor while it holds a change to the policy made outside it: the change\'s new allows ask', async () => {
    // The accepted version allows no touch; the file on disk (changed outside the editor) does.
    const accepted = POLICY.replace('"touch *", ', '');
    const holding = fakeEditor({ answer: 'deny', by: 'person' }, { heldAcceptedPolicy: () => accepted });
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'touch a' }), {}, holding)).stdout), 'deny');
    assert.equal(holding.asked.length, 1);
    assert.equal(holding.asked[0]!.remember, 'never');
    // What both versions allow, and what neither does, are as before.
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'echo a' }), {}, holding)).stdout), 'allow');
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'rm a' }), {}, holding)).stdout), 'deny');
    // Held but unreadable: the workspace layer is lowered (its allows ask).
    const unreadable = fakeEditor({ answer: 'deny', by: 'person' }, { heldAcceptedPolicy: () => null });
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'echo a' }), {}, unreadable)).stdout), 'deny');
    assert.equal(unreadable.asked.length, 1);
    // Nothing held, or the same text: the file decides.
    const same = fakeEditor(undefined, { heldAcceptedPolicy: () => POLICY });
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'touch a' }), {}, same)).stdout), 'allow');
  });

  it('judges with the editor\'s managed and user policies, and writes to the editor\'s audit log', async () => {
    const managed = path.join(root, 'managed.jsonc');
    fs.writeFileSync(managed, '{ "version": 1, "rules": [ { "tools": ["builtin.run_command"], "commands": ["touch *"], "decision": "deny", "reason": "managed says no" } ] }');
    const audit = path.join(root, 'editor-audit.jsonl');
    const editor = fakeEditor(undefined, { managedPolicyFile: managed, auditFile: audit });
    const out = await hook('claude', claudeInput('Bash', { command: 'touch a' }), {}, editor);
    assert.match(out.stdout, /managed says no/);
    assert.equal(fs.readFileSync(audit, 'utf8').trim().split('\n').length, 1);
  });

  it('blocks when the policy is invalid and there is no last valid version, else applies the last valid one', async () => {
    const file = path.join(workspace, '.agentpolicy.jsonc');
    fs.writeFileSync(file, '{ "version": 1, "rules": [ { "tool": ["builtin.*"], "decision": "allow" } ] }');
    const broken = await hook('claude', claudeInput('Bash', { command: 'touch a' }));
    assert.equal(claudeDecision(broken.stdout), 'deny');
    assert.match(broken.stdout, /invalid .*no last valid version/);
    assert.match(broken.stderr ?? '', /invalid/);
    // A valid version seen once is kept; breaking the file again leaves it in force (never more).
    fs.writeFileSync(file, POLICY);
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'touch a' }))).stdout), 'allow');
    fs.writeFileSync(file, `${POLICY.slice(0, -3)} ,, }`);
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'touch a' }))).stdout), 'allow');
    assert.equal(claudeDecision((await hook('claude', claudeInput('Bash', { command: 'rm a' }))).stdout), 'deny');
    const loaded = loadHookPolicy({ folder: workspace, stateDir: state });
    assert.ok(loaded.ok && loaded.warnings.some((w) => /invalid .* last valid version applies/.test(w)));
  });

  it('judges a text validated before from its kept value exactly as from the text', async () => {
    const first = loadHookPolicy({ folder: workspace, stateDir: state });
    assert.ok(fs.readdirSync(path.join(state, 'validated')).length === 1);
    const second = loadHookPolicy({ folder: workspace, stateDir: state });
    assert.ok(first.ok && second.ok);
    for (const command of ['rm x', 'touch y', 'deploy z', 'ls']) {
      const call = { tool: { id: 'builtin.run_command', kind: 'builtin' as const }, input: { command }, agent: 'claude' };
      assert.deepEqual(second.policy.decide(call, { workspaceFolder: workspace }), first.policy.decide(call, { workspaceFolder: workspace }));
    }
  });

  it('decides every call of a large generated policy alike from its kept reading (matchers compiled lazily) and from its text', () => {
    const generated = generateMatchers(600);
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), generated.text);
    const fresh = loadHookPolicy({ folder: workspace, stateDir: state });
    const kept = loadHookPolicy({ folder: workspace, stateDir: state });
    assert.ok(fresh.ok && kept.ok);
    assert.ok(kept.policy.layers[0]!.state.kind === 'ok' && kept.policy.layers[0]!.state.layer.parsed.fromKnownReading, 'the second load used the kept reading');
    for (const call of generated.calls) {
      assert.deepEqual(kept.policy.decide(call, { workspaceFolder: workspace }), fresh.policy.decide(call, { workspaceFolder: workspace }), JSON.stringify(call));
    }
  });

  it('keeps a bounded number of validated readings', () => {
    for (let i = 0; i < 40; i++) {
      fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), POLICY.replace('"default": "ask"', `"default": "ask" // ${i}`));
      assert.ok(loadHookPolicy({ folder: workspace, stateDir: state }).ok);
    }
    assert.equal(fs.readdirSync(path.join(state, 'validated')).length, 32);
  });

  it('blocks when the audit line cannot be written, and on input it cannot read', async () => {
    fs.mkdirSync(path.join(root, 'a-folder'));
    const out = await hook('claude', claudeInput('Bash', { command: 'touch a' }), { auditFile: path.join(root, 'a-folder') });
    assert.equal(claudeDecision(out.stdout), 'deny');
    for (const stdin of ['', 'garbage', '{"tool_name":"Bash","tool_input":{"command":7}}']) {
      const bad = await hook('claude', stdin);
      assert.equal(claudeDecision(bad.stdout), 'deny');
      assert.match(bad.stdout, /Agent Policy blocked this call/);
    }
  });

  it('never answers allow unless the policy allows the call it reads, whatever a host sends (property)', async () => {
    const commands = fc.constantFrom('rm -rf x', 'touch a', 'echo hi > .agentpolicy.jsonc', 'curl x', 'touch a; rm b', 'deploy x', `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: secrets/k\n+x\n*** End Patch\nEOF`);
    const tools = fc.constantFrom('Bash', 'Read', 'Write', 'Edit', 'apply_patch', 'run_shell_command', 'read_file', 'write_file', 'mcp__x__y', 'bash', 'view', 'create');
    const inputs = fc.record({ command: fc.oneof(commands, fc.anything()), file_path: fc.oneof(fc.constantFrom('src/a.ts', 'secrets/k', '../out', '.agentpolicy.jsonc'), fc.anything()), path: fc.anything() }, { requiredKeys: [] });
    const bodies = fc.oneof(
      fc.record({ session_id: fc.string(), cwd: fc.constantFrom(undefined, '.', 'sub'), hook_event_name: fc.constantFrom('PreToolUse', 'BeforeTool'), tool_name: tools, tool_input: fc.oneof(inputs, fc.anything()) }, { requiredKeys: [] }),
      fc.record({ sessionId: fc.string(), toolName: tools, toolArgs: fc.oneof(inputs, fc.string()) }, { requiredKeys: [] }),
      fc.anything(),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...HOST_AGENTS), bodies, async (host, body) => {
        const stdin = JSON.stringify(body) ?? 'null';
        const result = await runHook(options(host), { stdin, env: {}, cwd: workspace });
        if (result.verdict.decision !== 'allow') return;
        const call = readHostCall(host, stdin, {}, workspace);
        const loaded = loadHookPolicy({ folder: call.folder, stateDir: state });
        assert.ok(loaded.ok);
        assert.equal(loaded.policy.decide(call.call, { workspaceFolder: loaded.workspaceFolder }).decision, 'allow', stdin);
      }),
      { numRuns: 150 },
    );
  });
});

describe('agentpolicy hook: answers as each host reads them', () => {
  it('a deny blocks in every host\'s own format, with a non-empty reason', () => {
    for (const host of HOST_AGENTS) {
      const { stdout, exitCode } = hostAnswer(host, host === 'cursor' ? 'beforeShellExecution' : 'PreToolUse', { decision: 'deny', reason: '' });
      assert.equal(exitCode, 0);
      const out = JSON.parse(stdout) as Record<string, Record<string, string> | string>;
      const fields = host === 'gemini' ? [out.decision, out.reason]
        : host === 'cursor' ? [out.permission, out.user_message]
        : [(out.hookSpecificOutput as Record<string, string>).permissionDecision, (out.hookSpecificOutput as Record<string, string>).permissionDecisionReason];
      assert.equal(fields[0], 'deny', host);
      assert.ok(typeof fields[1] === 'string' && fields[1].trim() !== '', host);
    }
  });
});

describe('agentpolicy hook: an allowed shell command of another host runs in our sandbox (its changed input)', function () {
  const LAUNCHER = { node: '/opt/node dir/bin/node', cli: "/opt/it's/dist/cli.js" };
  const available = () => ({ available: true as const });

  before(async () => {
    await initShellParser();
  });

  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-sbx-')));
    workspace = path.join(root, 'proj');
    state = path.join(root, 'state');
    fs.mkdirSync(workspace, { recursive: true });
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), POLICY);
  });

  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  type Out = { permissionDecision: string; permissionDecisionReason: string; updatedInput?: Record<string, unknown> };
  async function sandboxHook(input: unknown, env: NodeJS.ProcessEnv = {}, more: { launcher?: unknown; available?: unknown; editor?: HookEditor } = {}): Promise<Out> {
    const result = await runHook(options('claude'), {
      stdin: claudeInput('Bash', input), env, cwd: workspace,
      sandboxAvailable: (more.available ?? available) as never,
      sandboxLauncher: () => (more.launcher ?? LAUNCHER) as never,
      ...(more.editor ? { findEditor: () => more.editor } : {}),
    });
    assert.equal(result.exitCode, 0);
    return (JSON.parse(result.stdout) as { hookSpecificOutput: Out }).hookSpecificOutput;
  }

  it('replaces the allowed command by the sandboxed line, each part quoted, the rest of the input kept', async () => {
    const line = `touch "a b" 'it'\\''s' $HOME/x`;
    const out = await sandboxHook({ command: line, description: 'make files', timeout: 5000 });
    assert.equal(out.permissionDecision, 'allow');
    assert.deepEqual(out.updatedInput, {
      command: `'/opt/node dir/bin/node' '/opt/it'\\''s/dist/cli.js' 'sandbox' '--workspace' '${workspace}' '--shell' 'touch "a b" '\\''it'\\''\\'\\'''\\''s'\\'' $HOME/x'`,
      description: 'make files', timeout: 5000,
    });
    assert.match(out.permissionDecisionReason, /runs in Agent Policy's sandbox/);
  });

  it('the line gives the sandbox the original command exactly (run through sh with a stand-in cli.js)', async () => {
    const echoArgs = path.join(root, 'cli.js');
    fs.writeFileSync(echoArgs, 'process.stdout.write(JSON.stringify(process.argv.slice(2)))');
    const line = `echo "it's \${HOME}" '$x' \`pwd\` "a\\"b"`;
    const out = await sandboxHook({ command: line }, {}, { launcher: { node: process.execPath, cli: echoArgs }, editor: fakeEditor({ answer: 'allow-once', by: 'person' }) });
    assert.equal(out.permissionDecision, 'allow');
    const { spawnSync } = await import('node:child_process');
    const ran = spawnSync('/bin/sh', ['-c', String(out.updatedInput?.command)], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(ran.stdout), ['sandbox', '--workspace', workspace, '--shell', line]);
  });

  it('rewrites an ask a person allowed in the editor too; never a deny, nor an unanswered ask', async () => {
    const allowed = await sandboxHook({ command: 'mkdir $HOME/new' }, {}, { editor: fakeEditor({ answer: 'allow-once', by: 'person' }) });
    assert.equal(allowed.permissionDecision, 'allow');
    assert.match(String(allowed.updatedInput?.command), / '--shell' 'mkdir \$HOME\/new'$/);
    const denied = await sandboxHook({ command: 'rm -rf build' });
    assert.equal(denied.permissionDecision, 'deny');
    assert.equal(denied.updatedInput, undefined);
    const asked = await sandboxHook({ command: 'mkdir x' });
    assert.equal(asked.permissionDecision, 'ask');
    assert.equal(asked.updatedInput, undefined);
  });

  it('does not rewrite, and says why: AGENTPOLICY_HOOK_SANDBOX=0, no sandbox here, no cli.js, "sandbox": "off"', async () => {
    const off = await sandboxHook({ command: 'touch a' }, { AGENTPOLICY_HOOK_SANDBOX: '0' });
    assert.equal(off.permissionDecision, 'allow');
    assert.equal(off.updatedInput, undefined);
    assert.match(off.permissionDecisionReason, /not run in Agent Policy's sandbox: AGENTPOLICY_HOOK_SANDBOX=0/);
    const none = await sandboxHook({ command: 'touch a' }, {}, { available: () => ({ available: false, reason: 'no bwrap' }) });
    assert.equal(none.updatedInput, undefined);
    assert.match(none.permissionDecisionReason, /no sandbox here \(no bwrap\)/);
    const noCli = await sandboxHook({ command: 'touch a' }, {}, { launcher: { problem: 'the agentpolicy CLI\'s own script (dist/cli.js) was not found' } });
    assert.equal(noCli.permissionDecision, 'allow');
    assert.equal(noCli.updatedInput, undefined);
    assert.match(noCli.permissionDecisionReason, /not run in Agent Policy's sandbox: .*cli\.js\) was not found/);
    const userPolicy = path.join(root, 'user.jsonc');
    fs.writeFileSync(userPolicy, '{ "version": 1, "sandbox": "off", "rules": [] }');
    const result = await runHook(options('claude', { userFile: userPolicy }), {
      stdin: claudeInput('Bash', { command: 'touch a' }), env: {}, cwd: workspace, sandboxAvailable: available, sandboxLauncher: () => LAUNCHER,
    });
    const policyOff = (JSON.parse(result.stdout) as { hookSpecificOutput: Out }).hookSpecificOutput;
    assert.equal(policyOff.permissionDecision, 'allow');
    assert.equal(policyOff.updatedInput, undefined);
    assert.match(policyOff.permissionDecisionReason, /"sandbox": "off"/);
  });

  it('each host that takes a changed input gets it in its own field: Codex updatedInput (only when it runs the command unsandboxed itself), Gemini CLI tool_input, Copilot CLI modifiedArgs', async () => {
    const run = async (agent: 'codex' | 'gemini' | 'copilot', stdin: string): Promise<Record<string, unknown>> => {
      const result = await runHook(options(agent), { stdin, env: {}, cwd: workspace, sandboxAvailable: available, sandboxLauncher: () => LAUNCHER });
      assert.equal(result.exitCode, 0);
      return JSON.parse(result.stdout || '{}') as Record<string, unknown>;
    };
    const sandboxed = (line: string) => new RegExp(`^'/opt/node dir/bin/node' .* 'sandbox' '--workspace' '${workspace}' '--shell' '${line}'$`);
    const codexInput = (mode: string) => JSON.stringify({ session_id: 's', cwd: workspace, hook_event_name: 'PreToolUse', permission_mode: mode, tool_name: 'Bash', tool_input: { command: 'touch a' } });
    const codex = (await run('codex', codexInput('bypassPermissions'))).hookSpecificOutput as Out;
    assert.equal(codex.permissionDecision, 'allow');
    assert.match(String(codex.updatedInput!.command), sandboxed('touch a'));
    // Codex's own sandbox on: nothing nested, a plain allow (silence, as before).
    const result = await runHook(options('codex'), { stdin: codexInput('default'), env: {}, cwd: workspace, sandboxAvailable: available, sandboxLauncher: () => LAUNCHER });
    assert.equal(result.stdout, '');
    const gemini = await run('gemini', JSON.stringify({ session_id: 's', cwd: workspace, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command: 'touch a', dir_path: '.' } }));
    assert.equal(gemini.decision, 'allow');
    const toolInput = (gemini.hookSpecificOutput as { tool_input: Record<string, unknown> }).tool_input;
    assert.match(String(toolInput.command), sandboxed('touch a'));
    assert.equal(toolInput.dir_path, '.', 'the rest of the input kept');
    const copilot = await run('copilot', JSON.stringify({ sessionId: 's', cwd: workspace, toolName: 'bash', toolArgs: { command: 'touch a', description: 'd' } }));
    assert.equal(copilot.permissionDecision, 'allow');
    assert.match(String((copilot.modifiedArgs as Record<string, unknown>).command), sandboxed('touch a'));
    assert.equal((copilot.modifiedArgs as Record<string, unknown>).description, 'd');
  });

  it('a "sandbox": true allow holds when the command will run in our sandbox, and asks when it will not', async () => {
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), '{ "version": 1, "rules": [ { "tools": ["builtin.run_command"], "commands": ["make *"], "decision": "allow", "sandbox": true } ], "default": "deny" }');
    const inSandbox = await sandboxHook({ command: 'make all' });
    assert.equal(inSandbox.permissionDecision, 'allow');
    assert.match(String(inSandbox.updatedInput!.command), /'sandbox' '--workspace'/);
    const off = await sandboxHook({ command: 'make all' }, { AGENTPOLICY_HOOK_SANDBOX: '0' });
    assert.equal(off.permissionDecision, 'ask');
    assert.equal(off.updatedInput, undefined);
    const none = await sandboxHook({ command: 'make all' }, {}, { available: () => ({ available: false, reason: 'no bwrap' }) });
    assert.equal(none.permissionDecision, 'ask');
  });

  it('gives no changed input with a deny, or to a host that takes none', () => {
    assert.doesNotMatch(hostAnswer('codex', 'PreToolUse', { decision: 'deny', reason: 'r' }, false, { command: 'x' }).stdout, /updatedInput/);
    assert.doesNotMatch(hostAnswer('gemini', 'BeforeTool', { decision: 'deny', reason: 'r' }, false, { command: 'x' }).stdout, /tool_input/);
    assert.doesNotMatch(hostAnswer('claude', 'PreToolUse', { decision: 'deny', reason: 'r' }, false, { command: 'x' }).stdout, /updatedInput/);
    assert.doesNotMatch(hostAnswer('copilot', 'preToolUse', { decision: 'deny', reason: 'r' }, true, { command: 'x' }).stdout, /modifiedArgs/);
    assert.doesNotMatch(hostAnswer('cursor', 'beforeShellExecution', { decision: 'allow', reason: 'r' }, false, { command: 'x' }).stdout, /command/);
  });
});
