// The resident decision service (`agentpolicy serve`): a real service on a Unix socket and
// 127.0.0.1, in a temporary state folder, answering hook calls of four hosts as runHook answers
// them; refusing what it must without deciding or auditing anything; picking up a policy changed
// on disk; keeping its files private; holding its memory over 10⁴ calls.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MAX_BODY_BYTES, startDecisionService, type DecisionService } from '../../src/hooks/service/decisionService.js';
import { readServiceDiscovery } from '../../src/hooks/state/serviceFiles.js';
import { ensureService } from '../../src/hooks/service/ensureService.js';
import { runHook } from '../../src/hooks/judge/hookCommand.js';
import type { HostAgent } from '../../src/hooks/hosts/hostAgents.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { runCli } from '../cli/cliRun.js';
import { until } from '../liveProcesses.js';

const POLICY = `{
  "version": 1,
  "rules": [
    { "id": "no-rm", "tools": ["builtin.run_command"], "commands": ["rm *"], "decision": "deny", "reason": "no deleting" },
    { "id": "safe", "tools": ["builtin.run_command"], "commands": ["touch *", "echo *"], "decision": "allow" },
    { "id": "secrets", "tools": ["builtin.*"], "paths": ["secrets/**"], "decision": "deny", "reason": "secrets stay" },
    { "id": "src", "tools": ["builtin.write_file", "builtin.read_file"], "paths": ["src/**"], "decision": "allow" }
  ],
  "default": "ask"
}`;

const CLI_CHILD = path.join(__dirname, '..', 'cli', 'children', 'sandboxCli.ts');
const TSX = pathToFileURL(require.resolve('tsx')).href;

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Call {
  path: string;
  body?: string | Buffer;
  method?: string;
  secret?: string | null;
  authorization?: string;
  socket?: string;
  agent?: http.Agent;
}

let root: string;
let workspace: string;
let state: string;
let service: DecisionService;
let secret: string;

function send(target: DecisionService, call: Call): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = call.body ?? '';
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const given = call.secret === undefined ? secret : call.secret;
    if (call.authorization !== undefined) headers.authorization = call.authorization;
    else if (given !== null) headers.authorization = `Bearer ${given}`;
    const req = http.request({
      ...(call.socket !== undefined ? { socketPath: call.socket } : { host: '127.0.0.1', port: target.port }),
      path: call.path, method: call.method ?? 'POST', headers, ...(call.agent ? { agent: call.agent } : {}),
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function auditFile(dir = state): string {
  return path.join(dir, 'audit.jsonl');
}

function auditLines(dir = state): Array<Record<string, unknown>> {
  return fs.existsSync(auditFile(dir)) ? fs.readFileSync(auditFile(dir), 'utf8').trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
}

/** One host's hook input for a shell command, in that host's own format (as test/hooks/hookCommand.test.ts sends them). */
function shellInput(agent: HostAgent, command: string, session: string, cwd = workspace): string {
  switch (agent) {
    case 'claude':
    case 'codex':
      return JSON.stringify({ session_id: session, cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
    case 'gemini':
      return JSON.stringify({ session_id: session, cwd, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command } });
    case 'copilot':
      return JSON.stringify({ sessionId: session, cwd, toolName: 'bash', toolArgs: { command } });
    default:
      throw new Error(`no sample input for ${agent}`);
  }
}

function readInput(agent: HostAgent, file: string, session: string): string {
  if (agent === 'gemini') return JSON.stringify({ session_id: session, cwd: workspace, hook_event_name: 'BeforeTool', tool_name: 'read_file', tool_input: { file_path: file } });
  if (agent === 'copilot') return JSON.stringify({ sessionId: session, cwd: workspace, toolName: 'view', toolArgs: { path: path.join(workspace, file) } });
  return JSON.stringify({ session_id: session, cwd: workspace, hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: path.join(workspace, file) } });
}

/** What `agentpolicy hook --agent <agent>` prints and exits with for this input, decided in-process by runHook in its own state folder. */
async function direct(agent: HostAgent, stdin: string, stateDir: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const result = await runHook({ agent, stateDir }, { stdin, env: { HOME: root }, cwd: workspace, findEditor: () => undefined, loadShellParser: () => initShellParser() });
  return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr !== undefined ? `${result.stderr}\n` : '' };
}

async function start(): Promise<DecisionService> {
  const started = await startDecisionService({ stateDir: state, workspace, env: { HOME: root, PATH: process.env.PATH }, findEditor: () => undefined });
  secret = fs.readFileSync(path.join(state, 'service-secret'), 'utf8').trim();
  return started;
}

describe('the decision service (agentpolicy serve)', function () {
  this.timeout(120_000);

  beforeEach(async () => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-')));
    workspace = path.join(root, 'proj');
    state = path.join(root, 'state');
    fs.mkdirSync(path.join(workspace, 'src'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), POLICY);
    service = await start();
  });

  afterEach(async () => {
    await service?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('decides 100 parallel calls from Claude Code, Codex, Gemini CLI and Copilot CLI exactly as runHook does, on both the socket and 127.0.0.1', async () => {
    const agents: HostAgent[] = ['claude', 'codex', 'gemini', 'copilot'];
    const commands = ['rm -rf build', 'touch a && echo b', 'curl example.com', 'touch a; rm b', 'echo $(cat /etc/passwd)'];
    const calls = Array.from({ length: 100 }, (_, i) => {
      const agent = agents[i % 4]!;
      const session = `s-${i % 7}`;
      const stdin = i % 10 === 9 ? readInput(agent, i % 20 === 9 ? 'secrets/key' : 'src/a.ts', session) : shellInput(agent, commands[i % commands.length]!, session);
      return { agent, stdin, socket: i % 2 === 0 ? service.socket : undefined };
    });
    const replies = await Promise.all(calls.map((c) => send(service, { path: `/hook/${c.agent}`, body: c.stdin, ...(c.socket ? { socket: c.socket } : {}) })));
    const expectedState = path.join(root, 'direct-state');
    for (const [i, c] of calls.entries()) {
      assert.equal(replies[i]!.status, 200, replies[i]!.body);
      assert.deepEqual(JSON.parse(replies[i]!.body), await direct(c.agent, c.stdin, expectedState), `call ${i} (${c.agent}: ${c.stdin})`);
    }
    // Decided right, not merely alike: a deny, an allow and an ask each in its host's words.
    const byCommand = (agent: HostAgent, command: string) => JSON.parse(replies[calls.findIndex((c) => c.agent === agent && c.stdin.includes(command))]!.body) as { stdout: string };
    assert.equal(JSON.parse(byCommand('claude', 'rm -rf').stdout).hookSpecificOutput.permissionDecision, 'deny');
    assert.equal(JSON.parse(byCommand('claude', 'touch a && echo').stdout).hookSpecificOutput.permissionDecision, 'allow');
    assert.equal(byCommand('codex', 'touch a && echo').stdout, '');
    assert.equal(JSON.parse(byCommand('gemini', 'curl').stdout).decision, 'deny');
    assert.equal(JSON.parse(byCommand('copilot', 'curl').stdout).permissionDecision, 'ask');
    // Each call audited once, with the same decisions as the in-process hook's.
    const served = auditLines();
    const decided = auditLines(expectedState);
    assert.equal(served.length, 100);
    const summary = (lines: Array<Record<string, unknown>>) => lines.map((l) => `${l.session} ${l.tool} ${l.decision} ${l.inputDigest}`).sort();
    assert.deepEqual(summary(served), summary(decided));
    // The policy was compiled once for all of them.
    assert.equal(service.policies.loads, 1);
    assert.equal(service.policies.hits, 99);
  });

  it('the http hook\'s token (written in Claude Code\'s settings) opens POST /http/<agent> only', async () => {
    const token = fs.readFileSync(path.join(state, 'http-hook-token'), 'utf8').trim();
    assert.notEqual(token, secret);
    const stdin = shellInput('claude', 'touch a', 'tok');
    assert.equal((await send(service, { path: '/http/claude', body: stdin, secret: token })).status, 200);
    for (const p of ['/hook/claude', '/raw/claude']) {
      const refused = await send(service, { path: p, body: stdin, secret: token });
      assert.equal(refused.status, 401, p);
      assert.match(JSON.parse(refused.body).error, /opens POST \/http\/<agent> only/);
    }
    assert.equal(auditLines().length, 1, 'only the http call was decided');
    assert.equal(typeof auditLines()[0]!.hookMs, 'number', 'the line says what the decision took');
  });

  it('keeps its port across restarts (the http hook names it); a port another program holds is a clear error', async () => {
    const kept = Number(fs.readFileSync(path.join(state, 'service-port'), 'utf8').trim());
    assert.equal(service.port, kept);
    await service.close();
    service = await start();
    assert.equal(service.port, kept, 'the same port again');
    await service.close();
    const squatter = http.createServer();
    await new Promise<void>((resolve) => squatter.listen(kept, '127.0.0.1', resolve));
    try {
      await assert.rejects(start(), new RegExp(`127\\.0\\.0\\.1:${kept} is taken by another program .*service-port`));
    } finally {
      squatter.close();
    }
    service = await start();
    assert.equal(service.port, kept);
  });

  it('answers Claude Code\'s http hook with its own JSON, status 200', async () => {
    const stdin = shellInput('claude', 'rm -rf build', 'h');
    const reply = await send(service, { path: '/http/claude', body: stdin });
    assert.equal(reply.status, 200);
    assert.match(String(reply.headers['content-type']), /application\/json/);
    assert.deepEqual(JSON.parse(reply.body), JSON.parse((await direct('claude', stdin, path.join(root, 'direct-state'))).stdout));
    assert.equal(JSON.parse(reply.body).hookSpecificOutput.permissionDecision, 'deny');
    // Hosts whose http hook format is not checked have none here.
    assert.equal((await send(service, { path: '/http/codex', body: stdin })).status, 404);
  });

  it('takes the hook\'s flags as query parameters: timeout, workspace, untrusted, cwd, audit, the host\'s environment', async () => {
    const other = path.join(root, 'other.jsonl');
    const noCwd = JSON.stringify({ session_id: 'q', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'touch x' } });
    const reply = await send(service, { path: `/hook/claude?timeout=30&untrusted=1&cwd=${encodeURIComponent(workspace)}&audit=${encodeURIComponent(other)}`, body: noCwd });
    assert.equal(reply.status, 200, reply.body);
    // Untrusted: the workspace's allow is lowered to an ask.
    assert.equal(JSON.parse(JSON.parse(reply.body).stdout).hookSpecificOutput.permissionDecision, 'ask');
    assert.equal(auditLines().length, 0);
    assert.equal(fs.readFileSync(other, 'utf8').trim().split('\n').length, 1);
    // Copilot CLI running Claude Code's entry says so in its environment (COPILOT_CLI=1): judged as Copilot CLI.
    const copilot = await send(service, { path: '/hook/claude?COPILOT_CLI=1', body: shellInput('claude', 'rm x', 'c') });
    assert.equal(auditLines().at(-1)!.session, 'copilot:c');
    assert.equal(JSON.parse(JSON.parse(copilot.body).stdout).hookSpecificOutput.permissionDecision, 'deny');
  });

  it('refuses without deciding or auditing: no secret, a wrong one, another method, an unknown path or agent, an oversized or malformed body, a bad parameter', async () => {
    const good = shellInput('claude', 'touch a', 'r');
    const wrong = randomBytes(32).toString('hex');
    const refused: Array<[number, Call]> = [
      [401, { path: '/hook/claude', body: good, secret: null }],
      [401, { path: '/hook/claude', body: good, secret: wrong }],
      [401, { path: '/hook/claude', body: good, secret: secret.slice(0, 63) }],
      [401, { path: '/hook/claude', body: good, authorization: `Basic ${secret}` }],
      [401, { path: '/hook/claude', body: good, secret: null, socket: service.socket! }],
      [405, { path: '/hook/claude', method: 'GET' }],
      [405, { path: '/hook/claude', method: 'PUT', body: good }],
      [404, { path: '/hook/nobody', body: good }],
      [404, { path: '/hook/Claude', body: good }],
      [404, { path: '/hook/%63laude', body: good }],
      [404, { path: '/decide/claude', body: good }],
      [404, { path: '/hook/claude/x', body: good }],
      [413, { path: '/hook/claude', body: `{"x":"${'a'.repeat(MAX_BODY_BYTES)}"}` }],
      [400, { path: '/hook/claude', body: '{"session_id": ' }],
      [400, { path: '/hook/claude', body: '[1,2]' }],
      [400, { path: '/hook/claude', body: '' }],
      [400, { path: '/hook/claude?timeout=-1', body: good }],
      [400, { path: '/hook/claude?policy=relative.jsonc', body: good }],
      [400, { path: '/hook/claude?bogus=1', body: good }],
      [400, { path: '/hook/claude?timeout=1&timeout=2', body: good }],
    ];
    for (const [status, call] of refused) {
      const reply = await send(service, call);
      assert.equal(reply.status, status, `${call.method ?? 'POST'} ${call.path} ${reply.body}`);
      assert.equal(typeof (JSON.parse(reply.body) as { error: string }).error, 'string');
    }
    // Far over the limit: refused before it is all read (the connection then ends).
    const huge = await send(service, { path: '/hook/claude', body: Buffer.alloc(MAX_BODY_BYTES * 5, 0x20) }).catch((error: NodeJS.ErrnoException) => ({ status: error.code, body: '' }));
    assert.ok(huge.status === 413 || huge.status === 'ECONNRESET' || huge.status === 'EPIPE', String(huge.status));
    assert.equal(fs.existsSync(auditFile()), false);
    assert.equal(fs.existsSync(path.join(state, 'marks')), false);
    assert.deepEqual([service.policies.loads, service.policies.hits], [0, 0]);
    // And the service still answers a good request.
    assert.equal((await send(service, { path: '/hook/claude', body: good })).status, 200);
    assert.equal(auditLines().length, 1);
  });

  it('picks up a policy changed on disk at the next call, a change of the same size at once too', async () => {
    const call = async (command: string) => JSON.parse(JSON.parse((await send(service, { path: '/hook/claude', body: shellInput('claude', command, 'p') })).body).stdout).hookSpecificOutput.permissionDecision as string;
    assert.equal(await call('touch a'), 'allow');
    const policyFile = path.join(workspace, '.agentpolicy.jsonc');
    fs.writeFileSync(policyFile, POLICY.replace('"touch *", "echo *"], "decision": "allow"', '"touch *", "echo *"], "decision": "deny", "reason": "changed"'));
    assert.equal(await call('touch a'), 'deny');
    // The same size, written within the same timestamp tick: the content decides.
    const denying = fs.readFileSync(policyFile, 'utf8');
    const allowing = denying.replace('"decision": "deny", "reason": "changed"', '"decision": "allow", "reason": "change"');
    assert.equal(Buffer.byteLength(allowing), Buffer.byteLength(denying));
    fs.writeFileSync(policyFile, allowing);
    assert.equal(await call('touch a'), 'allow');
    fs.writeFileSync(policyFile, denying);
    assert.equal(await call('touch a'), 'deny');
    // A new policy closer to the call's folder judges the calls made there.
    fs.mkdirSync(path.join(workspace, 'sub'));
    fs.writeFileSync(path.join(workspace, 'sub', '.agentpolicy.jsonc'), '{ "version": 1, "rules": [], "default": "allow" }');
    const sub = JSON.parse(JSON.parse((await send(service, { path: '/hook/claude', body: shellInput('claude', 'rm x', 'p', path.join(workspace, 'sub')) })).body).stdout);
    assert.equal(sub.hookSpecificOutput.permissionDecision, 'allow');
    fs.writeFileSync(policyFile, '{ "version": 1, "rules": [ { "tools": ["builtin.run_command"], "decision": "nope" } ] }');
    // Invalid now: its last valid version applies (kept by the load before), as in the hook.
    assert.equal(await call('touch a'), 'deny');
  });

  it('keeps its socket, secret and discovery file private, and removes the socket and discovery file when it closes', async () => {
    const mode = (file: string) => fs.lstatSync(file).mode & 0o777;
    assert.equal(mode(state), 0o700);
    assert.ok(fs.lstatSync(service.socket!).isSocket());
    assert.equal(mode(service.socket!), 0o600);
    assert.equal(mode(path.join(state, 'service-secret')), 0o600);
    assert.match(secret, /^[0-9a-f]{64}$/);
    assert.equal(mode(service.discoveryFile), 0o600);
    assert.deepEqual(readServiceDiscovery(state), { ...readServiceDiscovery(state), version: 1, pid: process.pid, url: service.url, socket: service.socket });
    // One service per user: a second one for the same state folder does not start.
    await assert.rejects(startDecisionService({ stateDir: state, findEditor: () => undefined }), /already runs/);
    // …unless the first is gone: the secret stays the same, made once.
    await service.close();
    assert.equal(fs.existsSync(service.discoveryFile), false);
    assert.equal(fs.existsSync(service.socket!), false);
    const again = await start();
    try {
      assert.equal(fs.readFileSync(path.join(state, 'service-secret'), 'utf8').trim(), secret);
      assert.equal((await send(again, { path: '/hook/claude', body: shellInput('claude', 'touch a', 'x'), socket: again.socket! })).status, 200);
    } finally {
      await again.close();
    }
    // A secret another user could read is worth nothing: a new one is made.
    fs.chmodSync(path.join(state, 'service-secret'), 0o644);
    const burned = secret;
    service = await start();
    assert.notEqual(secret, burned);
    assert.equal(mode(path.join(state, 'service-secret')), 0o600);
  });

  it('refuses another local user: no secret to read, no way to the socket, 401 over 127.0.0.1', async function () {
    const uid = process.getuid?.();
    if (uid !== 0 || spawnSync('useradd', ['--help']).status !== 0 || spawnSync('runuser', ['--help']).status !== 0) this.skip();
    const name = `apsvc${randomBytes(3).toString('hex')}`;
    assert.equal(spawnSync('useradd', ['--no-create-home', '--system', '--shell', '/usr/sbin/nologin', name]).status, 0);
    try {
      // Only the state folder's own modes stand in the way: the folders above it are open to everyone.
      fs.chmodSync(root, 0o755);
      const script = `
        const fs = require('fs'), http = require('http');
        const out = {};
        try { fs.readFileSync(${JSON.stringify(path.join(state, 'service-secret'))}); out.secret = 'read'; } catch (e) { out.secret = e.code; }
        const post = (o) => new Promise((resolve) => {
          const req = http.request({ ...o, method: 'POST', path: '/hook/claude', headers: { authorization: 'Bearer ' + '0'.repeat(64), 'content-type': 'application/json' } }, (res) => { res.resume(); resolve(res.statusCode); });
          req.on('error', (e) => resolve(e.code));
          req.end(${JSON.stringify(shellInput('claude', 'touch a', 'other'))});
        });
        (async () => {
          out.socket = await post({ socketPath: ${JSON.stringify(service.socket)} });
          out.tcp = await post({ host: '127.0.0.1', port: ${service.port} });
          process.stdout.write(JSON.stringify(out));
        })();`;
      // Not spawnSync: the service answers from this very process.
      const child = spawn('runuser', ['-u', name, '--', process.execPath, '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
      const ran = { status: await new Promise<number | null>((resolve) => child.once('close', resolve)), stdout, stderr };
      assert.equal(ran.status, 0, ran.stderr);
      assert.deepEqual(JSON.parse(ran.stdout), { secret: 'EACCES', socket: 'EACCES', tcp: 401 });
      assert.equal(fs.existsSync(auditFile()), false);
    } finally {
      spawnSync('userdel', [name]);
    }
  });

  it('holds its memory over 10,000 calls', async function () {
    // The gc, reached without --expose-gc on the command line.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const inputs = (['claude', 'codex', 'gemini', 'copilot'] as const).map((a, i) => [a, shellInput(a, ['touch a', 'rm x', 'curl y', 'echo z'][i]!, 'm')] as const);
    const batch = async (count: number) => {
      for (let done = 0; done < count; done += 100) {
        const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => {
          const [a, stdin] = inputs[i % 4]!;
          return send(service, { path: `/hook/${a}`, body: stdin, agent, ...(i % 2 === 0 ? { socket: service.socket! } : {}) });
        }));
        for (const r of replies) assert.equal(r.status, 200);
      }
    };
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    await batch(1000); // warm-up: code compiled, caches filled
    const before = heap();
    await batch(10_000);
    const after = heap();
    agent.destroy();
    const grownMb = (after - before) / 1024 / 1024;
    // 10⁴ calls each leaving even 500 bytes behind would be ~5 MB: 2 MB is well under a leak of any size per call.
    assert.ok(grownMb < 2, `the heap grew by ${grownMb.toFixed(2)} MB over 10,000 calls`);
    assert.equal(auditLines().length, 11_000);
    assert.equal(service.policies.loads, 1);
  });

  it('serve --ensure (Claude Code\'s SessionStart hook): starts a service of its own in the background when none answers, and none when one does', async () => {
    const ensureOptions = { stateDir: state, cli: [process.execPath, '--import', TSX, CLI_CHILD], cwd: workspace, env: { ...process.env, HOME: root } };
    assert.deepEqual(await ensureService(ensureOptions), { state: 'running', pid: process.pid }, 'this process\'s service answers');
    const port = service.port;
    await service.close();
    const started = await ensureService(ensureOptions);
    assert.equal(started.state, 'started');
    const pid = (started as { pid: number }).pid;
    try {
      assert.notEqual(pid, process.pid);
      const found = readServiceDiscovery(state)!;
      assert.equal(found.pid, pid);
      assert.equal(new URL(found.url).port, String(port), 'on the kept port');
      assert.equal(JSON.parse((await send({ port } as DecisionService, { path: '/http/claude', body: shellInput('claude', 'rm -rf x', 'e') })).body).hookSpecificOutput.permissionDecision, 'deny');
      assert.deepEqual(await ensureService(ensureOptions), { state: 'running', pid });
    } finally {
      process.kill(pid, 'SIGTERM');
      await until(() => readServiceDiscovery(state) === undefined, 10_000);
    }
    // It cannot start (the kept port taken): it says why.
    const squatter = http.createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const failed = await ensureService(ensureOptions);
      assert.equal(failed.state, 'failed');
      assert.match((failed as { why: string }).why, /exited with 1: .*is taken by another program/);
    } finally {
      squatter.close();
    }
    service = await start();
  });

  it('runs as `agentpolicy serve`: one ready line, answers, ends on SIGTERM removing its files', async () => {
    await service.close();
    // A wrong command line is a usage error (exit 2), before anything starts.
    for (const args of [['--port', 'x'], ['--port', '70000'], ['--workspace', path.join(root, 'none')], ['--bogus']]) {
      const ran = await runCli(['serve', ...args], root);
      assert.equal(ran.code, 2, args.join(' '));
      assert.deepEqual(ran.out, []);
    }
    assert.equal((await runCli(['serve', '--help'], root)).code, 0);
    const stateDir = path.join(root, 'cli-state');
    const child = spawn(process.execPath, ['--import', TSX, CLI_CHILD, 'serve', '--state-dir', stateDir, '--workspace', workspace], {
      cwd: root, env: { ...process.env, HOME: root }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    try {
      const line = await until(() => /\n/.test(stdout) && stdout, 30_000);
      assert.ok(line, `no ready line; stderr: ${stderr}`);
      const ready = /^agentpolicy: serving (http:\/\/127\.0\.0\.1:(\d+)) unix:(\/\S+)\n$/.exec(line);
      assert.ok(ready, JSON.stringify(line));
      const discovery = readServiceDiscovery(stateDir)!;
      assert.deepEqual([discovery.url, discovery.socket, discovery.pid], [ready[1], ready[3], child.pid]);
      secret = fs.readFileSync(path.join(stateDir, 'service-secret'), 'utf8').trim();
      const fake = { port: Number(ready[2]) } as DecisionService;
      const reply = await send(fake, { path: '/hook/gemini', body: shellInput('gemini', 'rm -rf x', 'cli'), socket: ready[3]! });
      assert.equal(JSON.parse(JSON.parse(reply.body).stdout).decision, 'deny');
      assert.equal((await send(fake, { path: '/hook/gemini', body: shellInput('gemini', 'touch x', 'cli') })).status, 200);
      // A second one for the same user says why it does not start.
      const second = spawnSync(process.execPath, ['--import', TSX, CLI_CHILD, 'serve', '--state-dir', stateDir], { cwd: root, encoding: 'utf8', timeout: 30_000 });
      assert.equal(second.status, 1);
      assert.match(second.stderr, /already runs/);
      assert.equal(second.stdout, '');
      child.kill('SIGTERM');
      assert.equal(await closed, 0, stderr);
      assert.equal(stdout, line);
      assert.equal(fs.existsSync(path.join(stateDir, 'service.json')), false);
      assert.equal(fs.existsSync(ready[3]!), false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
