// Flow rules for other makers' agents: each hook process judges one call, so a host session's
// marks are kept in the state folder between them: a call the hook allows marks the session
// (known), one the host asks its own person about marks it perhaps (no `when` allow trusts that),
// a denied one marks nothing, and a session the host does not name has unknown marks.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PROTOCOL_VERSION } from '../../src/hooks/editor/editorBridge.js';
import { readAskLine } from '../../src/hooks/editor/editorAskMessage.js';
import { runHook, type HookAsk, type HookEditor, type HookEditorAnswer } from '../../src/hooks/judge/hookCommand.js';
import { addHookMarks, hookMarksFile, readHookMarks } from '../../src/hooks/judge/hookMarks.js';
import type { HostAgent } from '../../src/hooks/hosts/hostAgents.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { ExternalSession } from '../../src/runtime/host/externalSession.js';

const POLICY = JSON.stringify({
  version: 1,
  default: 'deny',
  rules: [
    { id: 'read-env', tools: ['builtin.read_file'], paths: ['**/.env'], decision: 'allow', marks: ['secret'] },
    { id: 'read-key', tools: ['builtin.read_file'], paths: ['**/*.key'], decision: 'ask', marks: ['secret'] },
    { id: 'fetch-after-secret', tools: ['builtin.fetch'], when: { marked: ['secret'] }, decision: 'ask', reason: 'this session read a secret' },
    { id: 'fetch', tools: ['builtin.fetch'], decision: 'allow', marks: ['web'] },
    { id: 'push-clean', tools: ['builtin.run_command'], commands: ['git push *'], when: { unmarked: ['secret'] }, decision: 'allow' },
    { id: 'read', tools: ['builtin.read_file'], paths: ['**'], decision: 'allow' },
  ],
});

let root: string;
let workspace: string;
let state: string;

function claude(tool: string, input: unknown, session = 's-1'): string {
  return JSON.stringify({ session_id: session, cwd: workspace, hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input });
}

async function decision(agent: HostAgent, stdin: string, editor?: HookEditor): Promise<string> {
  const result = await runHook({ agent, stateDir: state }, { stdin, env: {}, cwd: workspace, ...(editor ? { findEditor: () => editor } : {}) });
  if (result.stdout === '') return 'silence';
  const body = JSON.parse(result.stdout) as { hookSpecificOutput?: { permissionDecision: string } };
  return body.hookSpecificOutput?.permissionDecision ?? 'other';
}

function editorAnswering(answer: HookEditorAnswer): HookEditor {
  return { ask: async () => answer };
}

describe('agentpolicy hook: flow rules (marks kept per host session)', () => {
  before(async () => {
    await initShellParser();
  });
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-marks-')));
    workspace = path.join(root, 'proj');
    state = path.join(root, 'state');
    fs.mkdirSync(workspace, { recursive: true });
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), POLICY);
    fs.writeFileSync(path.join(workspace, '.env'), 'TOKEN=1\n');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('an allowed read of .env marks the Claude Code session: its next fetch asks, another session\'s does not', async () => {
    assert.equal(await decision('claude', claude('WebFetch', { url: 'https://example.com/', prompt: 'p' })), 'allow');
    assert.equal(await decision('claude', claude('Read', { file_path: path.join(workspace, '.env') })), 'allow');
    assert.equal(await decision('claude', claude('WebFetch', { url: 'https://example.com/', prompt: 'p' })), 'ask');
    assert.equal(await decision('claude', claude('WebFetch', { url: 'https://example.com/', prompt: 'p' }, 's-2')), 'allow');
    assert.deepEqual(readHookMarks(state, 'claude', 's-1'), { known: new Set(['web', 'secret']), maybe: new Set() });
    // The audit line of the allowed read lists the mark it added.
    const lines = fs.readFileSync(path.join(state, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { tool: string; marks?: string[] });
    assert.deepEqual(lines.filter((l) => l.marks).map((l) => `${l.tool} ${l.marks!.join(',')}`), ['builtin.fetch web', 'builtin.read_file secret', 'builtin.fetch web']);
  });

  it('an ask the host puts to its own person marks the session only perhaps: an unmarked allow no longer holds, a marked ask does', async () => {
    assert.equal(await decision('claude', claude('Bash', { command: 'git push origin main' })), 'allow');
    assert.equal(await decision('claude', claude('Read', { file_path: path.join(workspace, 'id.key') })), 'ask');
    assert.deepEqual(readHookMarks(state, 'claude', 's-1'), { known: new Set(), maybe: new Set(['secret']) });
    assert.equal(await decision('claude', claude('Bash', { command: 'git push origin main' })), 'deny');
    assert.equal(await decision('claude', claude('WebFetch', { url: 'https://example.com/', prompt: 'p' })), 'ask');
  });

  it('an ask a person allowed in the editor marks the session (known); one denied marks nothing', async () => {
    assert.equal(await decision('claude', claude('Read', { file_path: path.join(workspace, 'id.key') }), editorAnswering({ answer: 'deny', by: 'person' })), 'deny');
    assert.equal(fs.existsSync(hookMarksFile(state, 'claude', 's-1')), false);
    assert.equal(await decision('claude', claude('Read', { file_path: path.join(workspace, 'id.key') }), editorAnswering({ answer: 'allow-once', by: 'person' })), 'allow');
    assert.deepEqual(readHookMarks(state, 'claude', 's-1'), { known: new Set(['secret']), maybe: new Set() });
  });

  it('Codex cannot ask: an ask becomes a deny and marks nothing', async () => {
    const codex = JSON.stringify({ session_id: 'c-1', cwd: workspace, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'cat x.key' } });
    await decision('codex', codex);
    assert.equal(fs.existsSync(hookMarksFile(state, 'codex', 'c-1')), false);
  });

  it('a session the host does not name, or a damaged marks file, has unknown marks: no when allow holds, every when ask does', async () => {
    assert.equal(readHookMarks(state, 'claude', ''), 'unknown');
    assert.equal(await decision('claude', claude('Bash', { command: 'git push origin main' }, '')), 'deny');
    assert.equal(await decision('claude', claude('WebFetch', { url: 'https://example.com/', prompt: 'p' }, '')), 'ask');
    addHookMarks(state, 'claude', 's-3', ['web'], true);
    fs.appendFileSync(hookMarksFile(state, 'claude', 's-3'), '{"known": ["x"\n');
    assert.equal(readHookMarks(state, 'claude', 's-3'), 'unknown');
    assert.equal(await decision('claude', claude('Bash', { command: 'git push origin main' }, 's-3')), 'deny');
  });

  it('the marks file is private to the user', () => {
    addHookMarks(state, 'claude', 's-4', ['secret'], false);
    const file = hookMarksFile(state, 'claude', 's-4');
    assert.equal(fs.statSync(file).mode & 0o077, 0);
    assert.equal(fs.statSync(path.dirname(file)).mode & 0o077, 0);
  });

  it('an ask put to the editor carries the session\'s marks, known and perhaps; the window reads them and its tree shows them', async () => {
    const asked: HookAsk[] = [];
    const editor: HookEditor = { ask: async (ask) => (asked.push(ask), { answer: 'deny', by: 'person' }) };
    addHookMarks(state, 'claude', 's-1', ['secret'], true);
    addHookMarks(state, 'claude', 's-1', ['pii', 'secret'], false);
    await decision('claude', claude('WebFetch', { url: 'https://example.com/', prompt: 'p' }), editor);
    assert.deepEqual({ marks: asked[0]!.marks, maybe: asked[0]!.maybeMarks }, { marks: ['secret'], maybe: ['pii'] });
    const line = JSON.stringify({ v: PROTOCOL_VERSION, token: 't', ask: asked[0] });
    const read = readAskLine(line, 't');
    assert.ok('ask' in read, JSON.stringify(read));
    const session = new ExternalSession({ host: 'claude', hostLabel: 'Claude Code', hostSession: 's-1' }, { opened: () => undefined, changed: () => undefined });
    const pending = session.ask(read.ask);
    assert.deepEqual([session.marks, session.maybeMarks], [['secret'], ['pii']]);
    session.close(pending.callbackId!, 'test over');
    // A label the policy format does not allow is refused with the ask.
    const bad = readAskLine(JSON.stringify({ v: PROTOCOL_VERSION, token: 't', ask: { ...asked[0], marks: ['a b'] } }), 't');
    assert.ok('refused' in bad);
  });
});
