// Asks of other agents' hooks answered in the editor: the window's server (src/hooks/editor/editorServer.ts)
// and the hook's client (src/hooks/editor/editorBridge.ts) in one process and across processes, on a
// private folder made for each test. Only a person's answer (through the SessionHost, as the
// window's notification, tree and palette give it) ever reaches the hook as an allow.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { askEditor, findEditor, MAX_ASK_BYTES, type EditorAsk, type EditorEndpoint } from '../../src/hooks/editor/editorBridge.js';
import { discoveryFile, ensurePrivateDirectory, privateDirectoryProblem, readAcceptedPolicy, realFolder, writeDiscovery } from '../../src/hooks/state/editorDiscovery.js';
import { EditorServer } from '../../src/hooks/editor/editorServer.js';
import { AllowApproval, DenyApproval, SdkError, type OpenApproval } from '../../src/runtime/tree/answers.js';
import { FileAuditLog, type AuditEntry } from '../../src/runtime/audit/audit.js';
import { readAuditLog } from '../../src/runtime/audit/auditRead.js';
import { SessionHost } from '../../src/runtime/host/sessionHost.js';
import { askMessage, describeAsker } from '../../src/vscode/basics/describe.js';

const CHILD = path.join(__dirname, 'askEditorChild.ts');

function until<T>(check: () => T | undefined | false, what: string, ms = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = (): void => {
      const value = check();
      if (value !== undefined && value !== false) resolve(value);
      else if (Date.now() - started > ms) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(poll, 5);
    };
    poll();
  });
}

function ask(overrides: Partial<EditorAsk> = {}): EditorAsk {
  return {
    host: 'claude', hostLabel: 'Claude Code', hostSession: 'sess-1', toolId: 'builtin.run_command', toolName: 'Bash',
    input: { command: 'rm -rf build' }, summary: 'rm -rf build', reason: 'deletes files',
    rule: { layer: 'workspace', id: 'ask-rm', index: 2, file: '/w/.agentpolicy.jsonc', line: 9 },
    remember: 'session', onTimeout: 'deny', ...overrides,
  };
}

/** Sends raw bytes on a new connection and resolves with everything the window sent back before closing. */
function exchange(socket: string, data: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const c = net.createConnection({ path: socket });
    let got = '';
    c.setEncoding('utf8');
    c.on('data', (d: string) => (got += d));
    // The window may close while a large write is still going: what it said is what counts.
    c.on('error', () => undefined);
    c.on('close', () => resolve(got));
    c.on('connect', () => c.write(data));
  });
}

describe('asks of other agents answered in the editor (editor bridge)', () => {
  let base: string;
  let dir: string;
  let workspace: string;
  let auditFile: string;
  let host: SessionHost;
  let audit: FileAuditLog;
  let server: EditorServer | undefined;
  let editor: EditorEndpoint;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-'));
    dir = path.join(base, 'agentpolicy');
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-ws-'));
    auditFile = path.join(base, 'audit.jsonl');
    audit = new FileAuditLog(auditFile);
    host = new SessionHost({ audit: { sink: audit, file: auditFile } });
    server = await EditorServer.start({ workspaceFolder: workspace, host, directory: dir, facts: () => ({ auditFile, trusted: true, userPolicyFile: '/home/u/user.agentpolicy.jsonc' }) });
    editor = findEditor(workspace, { directories: [dir] })!;
  });

  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await server?.dispose();
    await host.dispose();
    audit.close();
    fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  const approvals = (): OpenApproval[] => host.openCallbacks().map((o) => o.callback).filter((c): c is OpenApproval => c.type === 'approval');
  const auditLines = (): AuditEntry[] => readAuditLog(auditFile).entries;

  it('finds the window through its discovery file, from the folder or one below it, with what the hook needs of it', () => {
    assert.ok(editor, 'the window is found');
    assert.equal(editor.workspaceFolder, realFolder(workspace));
    assert.equal(editor.auditFile, auditFile);
    assert.equal(editor.trusted, true);
    assert.equal(editor.userPolicyFile, '/home/u/user.agentpolicy.jsonc');
    assert.equal(editor.managedPolicyFile, undefined);
    const below = path.join(workspace, 'src', 'deep');
    fs.mkdirSync(below, { recursive: true });
    assert.equal(findEditor(below, { directories: [dir] })?.socket, editor.socket);
    assert.equal((fs.statSync(discoveryFile(dir, realFolder(workspace))).mode & 0o777).toString(8), '600');
    assert.equal((fs.statSync(dir).mode & 0o777).toString(8), '700');
    assert.equal(findEditor(os.tmpdir(), { directories: [dir] }), undefined, 'a folder above the window is not its');
  });

  it('tells the hook the accepted workspace policy while the window holds a change, in a private file beside the discovery file', async () => {
    assert.equal(editor.held, undefined);
    let held: string | undefined = '{ "version": 1 }';
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-held-'));
    const second = await EditorServer.start({ workspaceFolder: other, host, directory: dir, facts: () => ({ auditFile, trusted: true, ...(held !== undefined ? { heldAcceptedText: held } : {}) }) });
    try {
      const found = findEditor(other, { directories: [dir] })!;
      const file = found.held!.acceptedFile;
      assert.equal(path.dirname(file), dir);
      assert.equal((fs.statSync(file).mode & 0o777).toString(8), '600');
      assert.equal(readAcceptedPolicy(found), '{ "version": 1 }');
      // A discovery file pointing elsewhere (another folder, a file open to others) is not read.
      assert.equal(readAcceptedPolicy({ ...found, held: { acceptedFile: path.join(base, 'elsewhere.jsonc') } }), undefined);
      fs.chmodSync(file, 0o644);
      assert.equal(readAcceptedPolicy(found), undefined);
      // Accepted: the next rewrite names none and the file goes.
      held = undefined;
      second.refresh();
      assert.equal(findEditor(other, { directories: [dir] })!.held, undefined);
      assert.equal(fs.existsSync(file), false);
    } finally {
      await second.dispose();
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('shows the ask as a callback of the host session and delivers a person\'s Allow; the audit log has both lines', async () => {
    const answer = askEditor(editor, ask({ agent: 'Explore' }), Date.now() + 60_000);
    const [c] = await until(() => approvals().length === 1 && approvals(), 'the callback');
    assert.equal(c!.sessionId, 'claude:sess-1');
    assert.equal(c!.agent, 'claude:Explore', 'the agent name the hook judged with');
    assert.equal(describeAsker(host.get(c!.sessionId)!, c!), 'Claude Code › Explore');
    assert.match(askMessage(host.get(c!.sessionId)!, c!), /^Agent Policy: Claude Code › Explore wants to run builtin\.run_command: rm -rf build — asked by workspace rule "ask-rm" \(\.agentpolicy\.jsonc:9\): deletes files\.$/);
    assert.equal(c!.request.tool.id, 'builtin.run_command');
    assert.equal(c!.request.tool.name, 'Bash');
    assert.deepEqual(c!.request.input, { command: 'rm -rf build' });
    assert.equal(c!.request.decision?.rule?.id, 'ask-rm');
    assert.equal(c!.request.sessionAllowed, true);
    const listed = host.get('claude:sess-1')!;
    assert.deepEqual(listed.external, { host: 'claude', hostLabel: 'Claude Code', hostSession: 'sess-1' });
    assert.equal(listed.agent, 'Claude Code');

    assert.equal((await host.answer(c!.id, new AllowApproval()))?.type, 'answered');
    assert.deepEqual(await answer, { answer: 'allow-once', by: 'person' });
    const lines = auditLines().filter((e) => e.callback === c!.id);
    assert.deepEqual(lines.map((e) => [e.event, e.session, e.decision ?? e.answer]), [
      ['callback-opened', 'claude:sess-1', 'ask'],
      ['callback-settled', 'claude:sess-1', 'allow-once'],
    ]);
    assert.equal(lines[0]!.tool, 'builtin.run_command');
    assert.equal(lines[0]!.summary, 'rm -rf build');
    assert.equal(lines[1]!.answeredBy, 'person');

    const byDefault = askEditor(editor, ask({ rule: null, defaultFrom: 'workspace', reason: undefined, input: { command: 'npm install' } }), Date.now() + 60_000);
    const [d] = await until(() => approvals().length === 1 && approvals(), 'the second callback');
    assert.match(askMessage(listed, d!), /wants to run builtin\.run_command: npm install — asked by the workspace policy's default\.$/);
    await host.answer(d!.id, new DenyApproval());
    assert.equal((await byDefault)?.answer, 'deny');
    assert.equal(approvals().length, 0);
  });

  it('refuses a wrong token, malformed lines and an oversized ask, and opens nothing for them', async () => {
    assert.equal(await askEditor({ ...editor, token: 'f'.repeat(64) }, ask(), Date.now() + 10_000), undefined);
    assert.match(await exchange(editor.socket, `${JSON.stringify({ v: 1, token: 'f'.repeat(64), ask: ask() })}\n`), /"error":"refused: wrong token"/);
    assert.match(await exchange(editor.socket, 'not json\n'), /"error":"malformed: not JSON"/);
    assert.match(await exchange(editor.socket, `${JSON.stringify({ v: 2, token: editor.token, ask: ask() })}\n`), /malformed: not a version 1 ask/);
    assert.match(await exchange(editor.socket, `${JSON.stringify({ v: 1, token: editor.token, ask: ask({ toolId: 'a b' }) })}\n`), /malformed: toolId/);
    assert.match(await exchange(editor.socket, `${JSON.stringify({ v: 1, token: editor.token, ask: { ...ask(), host: 'evil' } })}\n`), /malformed: host/);
    let deep: unknown = 'x';
    for (let i = 0; i < 300; i++) deep = [deep];
    assert.match(await exchange(editor.socket, `${JSON.stringify({ v: 1, token: editor.token, ask: ask({ input: deep }) })}\n`), /malformed: input/);
    assert.match(await exchange(editor.socket, Buffer.alloc(MAX_ASK_BYTES + 10, 0x61)), /"error":"too large/);
    assert.equal(await askEditor(editor, ask({ input: { command: 'x'.repeat(MAX_ASK_BYTES) } }), Date.now() + 10_000), undefined, 'the client does not send an oversized ask');
    assert.equal(host.openCallbacks().length, 0);
    assert.equal(auditLines().length, 0, 'nothing refused is audited as an ask');
  });

  it('never answers an allow to a line nobody answered (any bytes, any JSON, any ask without the token)', async () => {
    const line = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json({ maxDepth: 3 }),
      fc.record({ v: fc.constant(1), token: fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }), ask: fc.constant(ask()) }).map((m) => JSON.stringify(m)),
      fc.record({ v: fc.constant(1), ask: fc.anything({ maxDepth: 2 }) }).map((m) => JSON.stringify({ ...m, token: editor.token })),
    );
    await fc.assert(fc.asyncProperty(line, async (text) => {
      const reply = await exchange(editor.socket, `${text.replace(/\n/g, ' ')}\n`);
      assert.ok(reply.endsWith('\n'), `one line in reply to ${text}: ${reply}`);
      assert.deepEqual(Object.keys(JSON.parse(reply) as object), ['error'], `reply to ${text}: ${reply}`);
      assert.equal(host.openCallbacks().length, 0);
    }), { numRuns: 60 });
  });

  it('closes the callback when the hook goes away, and gives undefined when the hook\'s deadline passes', async () => {
    const c = net.createConnection({ path: editor.socket });
    c.on('error', () => undefined);
    c.write(`${JSON.stringify({ v: 1, token: editor.token, ask: ask() })}\n`);
    const [open] = await until(() => approvals().length === 1 && approvals(), 'the callback');
    c.destroy();
    await until(() => approvals().length === 0, 'the callback to close');
    const settled = auditLines().find((e) => e.event === 'callback-settled' && e.callback === open!.id);
    assert.equal(settled?.answer, 'closed');
    assert.equal(settled?.answeredBy, 'cancel');
    assert.equal((await host.answer(open!.id, new AllowApproval()))?.type === 'answered', false, 'a closed ask cannot be answered');

    assert.equal(await askEditor(editor, ask({ input: { command: 'make clean' } }), Date.now() + 300), undefined);
    await until(() => approvals().length === 0, 'the timed-out ask to close');
    assert.equal(auditLines().filter((e) => e.event === 'callback-settled' && e.answer === 'closed').length, 2);
  });

  it('answers two parallel asks separately', async () => {
    const first = askEditor(editor, ask({ input: { command: 'rm a' } }), Date.now() + 60_000);
    const second = askEditor(editor, ask({ input: { command: 'rm b' } }), Date.now() + 60_000);
    const open = await until(() => approvals().length === 2 && approvals(), 'two callbacks');
    const byCommand = (cmd: string) => open.find((c) => (c.request.input as { command: string }).command === cmd)!;
    await host.answer(byCommand('rm b').id, new DenyApproval({ reason: 'not b' }));
    assert.deepEqual(await second, { answer: 'deny', by: 'person', reason: 'not b' });
    assert.equal(approvals().length, 1, 'the other ask stays open');
    await host.answer(byCommand('rm a').id, new AllowApproval());
    assert.deepEqual(await first, { answer: 'allow-once', by: 'person' });
  });

  it('remembers Allow for Session per host session and the same call only, never for remember: never', async () => {
    const asked = askEditor(editor, ask(), Date.now() + 60_000);
    const [c] = await until(() => approvals().length === 1 && approvals(), 'the callback');
    await host.answer(c!.id, new AllowApproval({ scope: 'session' }));
    assert.deepEqual(await asked, { answer: 'allow-session', by: 'person' });

    assert.deepEqual(await askEditor(editor, ask(), Date.now() + 60_000), { answer: 'allow-session', by: 'session' }, 'the same call in the same host session');
    assert.equal(approvals().length, 0);
    const remembered = auditLines().filter((e) => e.event === 'decision');
    assert.deepEqual(remembered.map((e) => [e.session, e.decision, e.answeredBy, e.answer]), [['claude:sess-1', 'allow', 'session', 'allow-session']]);

    for (const other of [ask({ hostSession: 'sess-2' }), ask({ host: 'codex' }), ask({ input: { command: 'rm -rf dist' } }), ask({ remember: 'never' }), ask({ lowered: true })]) {
      const pending = askEditor(editor, other, Date.now() + 60_000);
      const [open] = await until(() => approvals().length === 1 && approvals(), `a callback for ${JSON.stringify(other)}`);
      if (other.remember === 'never' || other.lowered) {
        assert.equal(open!.request.sessionAllowed, false);
        await assert.rejects(host.answer(open!.id, new AllowApproval({ scope: 'session' })), SdkError);
      }
      await host.answer(open!.id, new DenyApproval());
      assert.equal((await pending)?.answer, 'deny');
    }
  });

  it('applies the rule\'s own timeout in the window: onTimeout deny answers deny by timeout', async () => {
    const answer = await askEditor(editor, ask({ timeoutSeconds: 0.05, onTimeout: 'deny' }), Date.now() + 60_000);
    assert.equal(answer?.answer, 'deny');
    assert.equal(answer?.by, 'timeout');
  });

  it('works across processes: a hook process is answered, and one killed mid-ask closes its callback', async () => {
    const run = (a: EditorAsk): { child: ChildProcess; out: Promise<string>; asking: Promise<void> } => {
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, workspace, dir, JSON.stringify(a), '60000'], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      let out = '';
      let asked: () => void;
      const asking = new Promise<void>((r) => (asked = r));
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString('utf8');
        if (out.includes('asking')) asked();
      });
      return { child, asking, out: new Promise((resolve) => child.on('close', () => resolve(out))) };
    };
    const answered = run(ask());
    const [c] = await until(() => approvals().length === 1 && approvals(), 'the child\'s callback', 30_000);
    await host.answer(c!.id, new AllowApproval());
    assert.match(await answered.out, /\{"answer":"allow-once","by":"person"\}/);

    const killed = run(ask({ input: { command: 'rm -rf /' } }));
    const [k] = await until(() => approvals().length === 1 && approvals(), 'the second child\'s callback', 30_000);
    killed.child.kill('SIGKILL');
    await until(() => approvals().length === 0, 'the callback to close');
    assert.equal(auditLines().find((e) => e.event === 'callback-settled' && e.callback === k!.id)?.answer, 'closed');
  });

  it('closes its asks, its socket and its discovery file when disposed; a stale discovery file is then ignored', async () => {
    const pending = askEditor(editor, ask(), Date.now() + 60_000);
    await until(() => approvals().length === 1, 'the callback');
    const file = discoveryFile(dir, realFolder(workspace));
    await server!.dispose();
    await host.dispose();
    assert.equal(await pending, undefined);
    assert.equal(fs.existsSync(file), false);
    assert.equal(fs.existsSync(editor.socket), false);
    assert.equal(findEditor(workspace, { directories: [dir] }), undefined);

    // A window that crashed: its file is still there, its process is gone.
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => dead.on('close', r));
    writeDiscovery(dir, { ...editor, version: 1, pid: dead.pid! });
    assert.equal(findEditor(workspace, { directories: [dir] }), undefined, 'a dead process');
    writeDiscovery(dir, { ...editor, version: 1, pid: process.pid });
    assert.equal(findEditor(workspace, { directories: [dir] }), undefined, 'no socket');
  });

  it('a window starting tidies up after windows that ended without closing; a live window\'s files stay', async () => {
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => dead.on('close', r));
    const crashedSocket = path.join(dir, '0123456789abcdef-01234567.sock');
    fs.writeFileSync(crashedSocket, '');
    const crashed = writeDiscovery(dir, { ...editor, version: 1, workspaceFolder: '/gone/folder', socket: crashedSocket, pid: dead.pid! });
    const orphan = path.join(dir, 'fedcba9876543210-89abcdef.sock');
    fs.writeFileSync(orphan, '');
    const young = path.join(dir, 'fedcba9876543210-00000000.sock');
    fs.writeFileSync(young, '');
    const old = new Date(Date.now() - 120_000);
    fs.utimesSync(orphan, old, old);
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-other-'));
    const second = await EditorServer.start({ workspaceFolder: other, host, directory: dir, facts: () => ({ auditFile, trusted: true }) });
    try {
      assert.equal(fs.existsSync(crashed), false, 'the dead window\'s discovery file');
      assert.equal(fs.existsSync(crashedSocket), false, 'the dead window\'s socket');
      assert.equal(fs.existsSync(orphan), false, 'a socket no discovery file names');
      assert.equal(fs.existsSync(young), true, 'a socket just made (its window may be about to write its file)');
      assert.equal(findEditor(workspace, { directories: [dir] })?.socket, editor.socket, 'the live window is untouched');
      assert.equal(findEditor(other, { directories: [dir] })?.socket, second.socket);
    } finally {
      await second.dispose();
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('ignores a discovery file that other users could have written or read, or that names another folder', async () => {
    const file = discoveryFile(dir, realFolder(workspace));
    fs.chmodSync(file, 0o644);
    assert.equal(findEditor(workspace, { directories: [dir] }), undefined, 'mode 644');
    fs.chmodSync(file, 0o600);
    assert.ok(findEditor(workspace, { directories: [dir] }));
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-other-'));
    try {
      fs.copyFileSync(file, discoveryFile(dir, realFolder(other)));
      assert.equal(findEditor(other, { directories: [dir] }), undefined, 'a copy naming another folder');
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
    fs.writeFileSync(file, '{"version":1}', { mode: 0o600 });
    assert.equal(findEditor(workspace, { directories: [dir] }), undefined, 'not a discovery file');
  });

  it('refuses a folder that is a link, open to others, or another user\'s, and a window will not start in one', async () => {
    const linked = path.join(base, 'linked');
    fs.symlinkSync(dir, linked);
    assert.match(privateDirectoryProblem(linked)!, /symbolic link/);
    assert.equal(findEditor(workspace, { directories: [linked] }), undefined);
    await assert.rejects(EditorServer.start({ workspaceFolder: workspace, host, directory: linked, facts: () => ({ auditFile, trusted: true }) }), /symbolic link/);

    fs.chmodSync(dir, 0o770);
    assert.match(privateDirectoryProblem(dir)!, /can be opened by other users/);
    assert.equal(findEditor(workspace, { directories: [dir] }), undefined, 'a group-writable folder');
    assert.throws(() => ensurePrivateDirectory(dir), /will not use it/);
    fs.chmodSync(dir, 0o700);
    assert.ok(findEditor(workspace, { directories: [dir] }));

    const shared = path.join(base, 'shared');
    fs.mkdirSync(shared, { mode: 0o777 });
    fs.chmodSync(shared, 0o777);
    const inShared = path.join(shared, 'agentpolicy');
    fs.mkdirSync(inShared, { mode: 0o700 });
    assert.match(privateDirectoryProblem(inShared)!, /lets other users replace/);

    if (process.getuid?.() === 0) {
      const theirs = path.join(base, 'theirs');
      fs.mkdirSync(theirs, { mode: 0o700 });
      fs.chownSync(theirs, 65534, 65534);
      assert.match(privateDirectoryProblem(theirs)!, /belongs to another user/);
    }
  });
});
