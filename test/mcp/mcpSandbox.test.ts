// A stdio MCP server the policy's `sandboxServers` names runs in the sandbox a command runs in
// (docs/mcp.md, "Sandboxed servers"), through real agent sessions, the real bubblewrap and a real
// SDK server (fixtures/files.ts): it cannot write the policy file but writes ordinary workspace
// files, cannot read the home folder's keys, gets no credential variables but those its config
// sets, and a host no rule decides is asked as an open callback naming the server. A server the
// list does not name runs as before; where there is no sandbox the named one is not started, and
// the session says why. The audit and the transcript say how it runs.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { McpToolSource } from '../../src/mcp/mcpToolSource.js';
import { serverCommandLine } from '../../src/mcp/mcpServerLaunch.js';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { policyFileFastCheck } from '../../src/policy/file/policyFileFastCheck.js';
import { PolicyFileSchema } from '../../src/policy/file/schema.js';
import { Agent, Builtins } from '../../src/runtime/agents/agent.js';
import { AllowApproval, Completed, DenyApproval, Failed, OpenApproval, type TurnState } from '../../src/runtime/tree/answers.js';
import { MemoryAuditLog } from '../../src/runtime/audit/audit.js';
import { summarizeInput } from '../../src/runtime/audit/auditSummary.js';
import type { RuntimeEvent } from '../../src/runtime/tree/events.js';
import { probeSandbox, sandboxTesting } from '../../src/runtime/sandbox/sandboxProbe.js';
import { bridgeMissing, bridgeTools } from '../../src/runtime/sandbox/sandboxNetwork.js';
import { locateProgram } from '../../src/runtime/sandbox/commandProcess.js';
import { ScriptedModel } from '../../src/runtime/model/scripted.js';
import type { Session } from '../../src/runtime/session.js';
import type { StartSessionOptions } from '../../src/runtime/tree/sessionOptions.js';
import { describeEvent } from '../../src/runtime/host/transcript.js';
import { build } from 'esbuild';
import { closeAll, FIXTURES, tempDir } from './helpers.js';

const probe = probeSandbox();
const FILES = path.join(FIXTURES, 'files.ts');

type Step = { call: string; input?: object; as?: string } | { say: string };

function outsideTmp(prefix: string): string {
  // The sandbox has a private /tmp: a fake home there would be hidden anyway, proving nothing.
  const base = fs.existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir();
  return fs.realpathSync(fs.mkdtempSync(path.join(base, prefix)));
}

/**
 * The sandbox replaces /tmp with a private one, so a server whose files lie in the host's /tmp
 * (this checkout may: CI clones where it likes) could not start in it. The fixture is bundled into
 * one file outside /tmp, and run with a Node outside /tmp (a copy of this one if none is there).
 */
async function serverOutsideTmp(): Promise<{ node: string; script: string; dir: string }> {
  const dir = outsideTmp('mcp-sandbox-server-');
  const script = path.join(dir, 'files.cjs');
  await build({ entryPoints: [FILES], bundle: true, platform: 'node', format: 'cjs', outfile: script, logLevel: 'error' });
  const underTmp = (p: string): boolean => !path.relative(fs.realpathSync(os.tmpdir()), p).startsWith('..');
  const candidates = [fs.realpathSync(process.execPath), '/usr/bin/node', '/usr/local/bin/node'];
  let node = candidates.find((p) => fs.existsSync(p) && !underTmp(fs.realpathSync(p)));
  if (node === undefined) {
    node = path.join(dir, 'node');
    fs.copyFileSync(process.execPath, node);
    fs.chmodSync(node, 0o755);
  }
  return { node, script, dir };
}

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

describe('sandboxed MCP servers: the policy\'s sandboxServers (real bubblewrap, a real SDK server)', function () {
  this.timeout(60_000);
  let ws: string;
  let home: string;
  let marks: string;
  let savedHome: string | undefined;
  let sources: McpToolSource[];
  let sessions: Session[];
  const policyText = JSON.stringify({ version: 1, sandboxServers: ['fil*', '!files-out'], rules: [{ id: 'mcp', tools: ['mcp.*'], decision: 'allow' }] }, null, 2);

  /** The fixture server, bundled into one file, and a Node to run it, both where the sandbox sees them. */
  let server: { node: string; script: string; dir: string } | undefined;

  before(async function () {
    if (!probe.available) {
      console.log(`    (sandboxed MCP server tests skipped: ${probe.reason})`);
      this.skip();
    }
    server = await serverOutsideTmp();
  });
  beforeEach(() => {
    ws = tempDir('mcp-sandbox-');
    home = outsideTmp('mcp-sandbox-home-');
    marks = path.join(ws, 'marks');
    fs.mkdirSync(marks);
    write(path.join(ws, '.agentpolicy.jsonc'), policyText);
    write(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY\n');
    write(path.join(home, 'notes.txt'), 'ordinary\n');
    savedHome = process.env.HOME;
    // The home whose credential stores the sandbox hides is os.homedir(), read when a server starts.
    process.env.HOME = home;
    sources = [];
    sessions = [];
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.cancel();
    await closeAll(sources);
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    delete sandboxTesting.availability;
    for (const dir of [ws, home]) fs.rmSync(dir, { recursive: true, force: true });
  });

  after(() => {
    if (server) fs.rmSync(server.dir, { recursive: true, force: true });
  });

  function source(name: string, env: Record<string, string | null> = {}): McpToolSource {
    const config = { name, type: 'stdio' as const, command: server!.node, args: [server!.script, marks], env };
    const s = new McpToolSource(config, { workspaceFolder: ws });
    sources.push(s);
    return s;
  }

  async function run(toolSources: McpToolSource[], script: Step[], options: StartSessionOptions = {}): Promise<{ session: Session; state: TurnState; results: Map<string, { ok: boolean; content: string }>; events: RuntimeEvent[] }> {
    const policy = new Policy({ workspace: loadPolicyText(policyText, path.join(ws, '.agentpolicy.jsonc')) });
    const agent = new Agent({
      name: 'main', instructions: '', toolSources,
      builtins: new Builtins({ files: false, commands: false, subagents: false }),
      permissionPolicy: policy as never,
      model: new ScriptedModel({ agents: { main: script as never } }),
    });
    const session = await agent.startSession({ workspaceFolder: ws, ...options });
    sessions.push(session);
    const state = await session.run('go');
    const events = (session as unknown as { tree: { events: RuntimeEvent[] } }).tree.events;
    const results = new Map<string, { ok: boolean; content: string }>();
    const names = new Map<string, string>();
    for (const e of events) {
      if (e.type === 'tool-call') names.set(e.callId, e.name);
      if (e.type === 'tool-result') results.set(`${names.get(e.callId)}#${[...results.keys()].filter((k) => k.startsWith(`${names.get(e.callId)}#`)).length}`, { ok: e.ok, content: e.content });
    }
    return { session, state, results, events };
  }

  function completed(state: TurnState): void {
    assert.ok(state instanceof Completed, `expected Completed, got ${state.type}${state instanceof Failed ? `: ${state.error}` : ''}`);
  }

  it('the policy file stays read-only and the home folder\'s keys unreadable; ordinary workspace files are written; the audit and the transcript say it runs sandboxed', async () => {
    const audit = new MemoryAuditLog();
    const { state, results, events, session } = await run([source('files', { MY_API_TOKEN: 'from-the-config' })], [
      { call: 'files_write', input: { path: path.join(ws, '.agentpolicy.jsonc'), text: '{"version":1,"default":"allow"}' } },
      { call: 'files_write', input: { path: path.join(ws, 'notes.txt'), text: 'written in the sandbox' } },
      { call: 'files_read', input: { path: path.join(home, '.ssh', 'id_rsa') } },
      { call: 'files_read', input: { path: path.join(home, 'notes.txt') } },
      { call: 'files_environment' },
      { say: 'done' },
    ], {
      audit,
      // The protected-files hook asks about the policy file; a person allowing that call does not open the sandbox.
      onApproval: () => new AllowApproval(),
    });
    completed(state);
    const policyWrite = results.get('files_write#0')!;
    assert.equal(policyWrite.ok, false, policyWrite.content);
    assert.match(policyWrite.content, /write failed: .*(EROFS|read-only|EBUSY|EACCES|EPERM)/i);
    assert.equal(fs.readFileSync(path.join(ws, '.agentpolicy.jsonc'), 'utf8'), policyText);
    assert.equal(results.get('files_write#1')!.ok, true, results.get('files_write#1')!.content);
    assert.equal(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'written in the sandbox');
    const key = results.get('files_read#0')!;
    assert.ok(!key.content.includes('PRIVATE KEY'), key.content);
    // Control: the home folder itself is there, only its credential stores are hidden.
    assert.match(results.get('files_read#1')!.content, /content: ordinary/);
    // The config's own variables pass (a person wrote them for this server), even a credential-looking one.
    const env = JSON.parse(results.get('files_environment#0')!.content) as Record<string, string>;
    assert.equal(env.MY_API_TOKEN, 'from-the-config');
    // The transcript and the audit say so.
    const said = events.filter((e): e is Extract<RuntimeEvent, { type: 'sandbox' }> => e.type === 'sandbox' && e.message.includes('MCP server files'));
    assert.equal(said.length, 1, JSON.stringify(events.filter((e) => e.type === 'sandbox' || e.type === 'warning')));
    assert.match(said[0]!.message, /runs sandboxed: .*read-only.*network/);
    assert.match(said[0]!.message, /names it in "sandboxServers"/);
    assert.ok(events.flatMap((e) => describeEvent(e, session.id)).some((line) => /^sandbox: the MCP server files runs sandboxed/.test(line)));
    const started = audit.entries.filter((e) => e.event === 'server-started');
    assert.equal(started.length, 1);
    assert.equal(started[0]!.tool, 'mcp.files');
    // The summary is the command line, cut like every summary (the path to node may be long).
    assert.equal(started[0]!.summary, summarizeInput(serverCommandLine(sources[0]!.server)));
    assert.equal(started[0]!.sandbox?.sandboxed, true);
    assert.equal(started[0]!.sandbox?.network, false);
    assert.match(started[0]!.reason ?? '', /workspace policy .* names it in "sandboxServers"/);
  });

  it('its environment: what an unsandboxed server gets, no credential variable, and the sandbox\'s proxy when hosts are judged', async () => {
    const { state, results } = await run([source('files')], [{ call: 'files_environment' }, { say: 'done' }]);
    completed(state);
    const env = JSON.parse(results.get('files_environment#0')!.content) as Record<string, string>;
    assert.equal(env.HOME, home);
    for (const name of Object.keys(env)) assert.ok(!/TOKEN|SECRET|PASSWORD|SSH_AUTH_SOCK/i.test(name), name);
    if (bridgeMissing(bridgeTools(locateProgram)) === undefined) assert.equal(env.HTTP_PROXY, 'http://127.0.0.1:3128');
  });

  it('a host no rule decides is asked as an open callback naming the server and the host; Deny refuses it', async function () {
    const missing = bridgeMissing(bridgeTools(locateProgram));
    if (missing !== undefined) {
      console.log(`      (skipped: ${missing})`);
      this.skip();
    }
    const audit = new MemoryAuditLog();
    const asked: OpenApproval[] = [];
    const { state, results } = await run([source('files')], [{ call: 'files_tunnel', input: { host: 'example.com', port: 443 } }, { say: 'done' }], {
      audit,
      onApproval: (ctx) => {
        asked.push(ctx.callback as OpenApproval);
        return new DenyApproval();
      },
    });
    completed(state);
    assert.equal(asked.length, 1, asked.map((a) => a.request.title).join('\n'));
    const request = asked[0]!.request;
    assert.equal(request.tool.id, 'mcp.files');
    assert.equal(request.connection?.host, 'example.com');
    assert.equal(request.connection?.port, 443);
    assert.equal(request.connection?.command, serverCommandLine(sources[0]!.server));
    assert.match(request.title, /MCP server files \(sandboxed\) wants to reach example\.com:443/);
    assert.doesNotMatch(results.get('files_tunnel#0')!.content, / 200 /);
    const opened = audit.entries.filter((e) => e.event === 'callback-opened' && e.host === 'example.com');
    assert.equal(opened.length, 1);
    assert.equal(opened[0]!.tool, 'mcp.files');
  });

  it('a server the list does not name (or excludes) runs as before: unsandboxed, no server-started line', async () => {
    const audit = new MemoryAuditLog();
    const { state, results, events } = await run([source('other'), source('files-out')], [
      { call: 'other_read', input: { path: path.join(home, '.ssh', 'id_rsa') } },
      { call: 'files-out_write', input: { path: path.join(ws, '.agentpolicy.jsonc'), text: policyText.replace('"mcp"', '"mcp2"') } },
      { say: 'done' },
    ], { audit, onApproval: () => new AllowApproval() });
    completed(state);
    assert.match(results.get('other_read#0')!.content, /PRIVATE KEY/);
    assert.equal(results.get('files-out_write#0')!.ok, true, results.get('files-out_write#0')!.content);
    assert.deepEqual(audit.entries.filter((e) => e.event === 'server-started'), []);
    assert.deepEqual(events.filter((e) => e.type === 'sandbox'), []);
  });

  it('where there is no sandbox, the named server is not started, the session says why, and the other still runs', async () => {
    sandboxTesting.availability = { available: false, reason: 'testing: no bubblewrap here' };
    const { state, session, results } = await run([source('files'), source('other')], [
      { call: 'other_write', input: { path: path.join(ws, 'plain.txt'), text: 'x' } },
      { say: 'done' },
    ]);
    completed(state);
    assert.equal(results.get('other_write#0')!.ok, true);
    const warning = session.warnings.find((w) => w.includes('files'));
    assert.ok(warning, session.warnings.join('\n'));
    assert.match(warning, /MCP server files was not started: it must run sandboxed \(the workspace policy .* names it in "sandboxServers"\), and there is no sandbox here: testing: no bubblewrap here/);
    // It never ran: one start mark, the other server's.
    assert.equal(fs.readdirSync(marks).length, 1);
    assert.equal(sources[0]!.connections[0]?.pid, undefined);
  });
});

describe('the policy field sandboxServers', () => {
  const layer = (text: string, name: 'managed' | 'workspace' | 'user' = 'workspace') => loadPolicyText(text, `/p/${name}.jsonc`, name);

  it('is a list of server-name globs, checked alike by the fast check and zod', () => {
    for (const value of [
      { version: 1, sandboxServers: ['github', 'fs-*', '!fs-local'] },
      { version: 1, sandboxServers: [] },
      { version: 1, sandboxServers: [''] },
      { version: 1, sandboxServers: 'github' },
    ]) {
      const zod = PolicyFileSchema.safeParse(value);
      const fast = policyFileFastCheck(JSON.parse(JSON.stringify(value)));
      if (fast !== undefined) assert.deepEqual(fast, zod.data);
      else if (zod.success) assert.fail(`the fast check refused what zod accepts: ${JSON.stringify(value)}`);
    }
    assert.equal(layer('{ "version": 1, "sandboxServers": ["github"] }').valid, true);
    assert.equal(layer('{ "version": 1, "sandboxServers": [] }').valid, false);
    const bad = layer('{ "version": 1, "sandboxServers": ["{a,{b,{c,{d,{e,{f,{g,{h,{i,{j,{k,x}}}}}}}}}}}"] }');
    assert.equal(bad.valid, false);
    assert.ok(bad.diagnostics.some((d) => d.code === 'bad-glob'), JSON.stringify(bad.diagnostics));
  });

  it('every layer counts: a workspace cannot take out what the managed policy names; a broken layer names every server', () => {
    const policy = new Policy({
      managed: layer('{ "version": 1, "sandboxServers": ["github"] }', 'managed'),
      workspace: layer('{ "version": 1, "sandboxServers": ["fs", "!github"] }'),
    });
    assert.deepEqual(policy.sandboxedServer('github')?.layers, ['managed']);
    assert.deepEqual(policy.sandboxedServer('fs')?.layers, ['workspace']);
    assert.equal(policy.sandboxedServer('other'), undefined);
    const broken = new Policy({ workspace: layer('{ "version": 1, "sandboxServers": 3 }') });
    assert.deepEqual(broken.sandboxedServer('anything')?.layers, ['workspace']);
    assert.match(broken.sandboxedServer('anything')!.reason, /invalid/);
  });
});
