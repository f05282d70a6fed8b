// A command's network follows the rule (issue 14, network rules), through sessions and the real
// bubblewrap: curl allowed by a domains rule runs with the network on; allowed by a commands rule
// without network, or in a pipeline with a part allowed without network, it runs with it off.
// Skipped, saying why, where there is no sandbox.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shellParser.js';
import { Agent, Builtins } from '../../src/runtime/agent.js';
import { Completed, Failed, type TurnState } from '../../src/runtime/answers.js';
import type { RuntimeEvent } from '../../src/runtime/events.js';
import { probeSandbox } from '../../src/runtime/sandboxProbe.js';
import { ScriptedModel } from '../../src/runtime/scripted.js';
import type { Session } from '../../src/runtime/session.js';
import { startReplyServer, type ReplyServer } from './replyServer.js';

const probe = probeSandbox();

let ws: string;
let server: ReplyServer | undefined;
const sessions: Session[] = [];

type CommandResult = { exitCode: number; stdout: string; stderr: string; sandbox: { sandboxed: boolean; network: boolean } };

async function run(policyText: string, command: string): Promise<CommandResult> {
  const policy = new Policy({ workspace: loadPolicyText(policyText, path.join(ws, '.agentpolicy.jsonc')) });
  const agent = new Agent({
    instructions: '',
    builtins: new Builtins({ files: false, commands: true, subagents: false }),
    permissionPolicy: policy as never,
    model: new ScriptedModel({ agents: { main: [{ call: 'run_command', input: { command } }, { say: 'done' }] } }),
  });
  const session = await agent.startSession({ workspaceFolder: ws });
  sessions.push(session);
  const state: TurnState = await session.run('go');
  assert.ok(state instanceof Completed, `expected Completed, got ${state.type}${state instanceof Failed ? `: ${state.error}` : ''}`);
  const events = (session as unknown as { tree: { events: RuntimeEvent[] } }).tree.events;
  const results = events.flatMap((e) => (e.type === 'tool-result' && e.toolId === 'builtin.run_command' ? [JSON.parse(e.content) as CommandResult] : []));
  assert.equal(results.length, 1, JSON.stringify(events.filter((e) => e.type === 'tool-result')));
  return results[0]!;
}

describe('network rules and the sandbox (real bubblewrap)', function () {
  before(async function () {
    await initShellParser();
    if (!probe.available) {
      console.log(`    (network sandbox tests skipped: ${probe.reason})`);
      this.skip();
    }
    server = await startReplyServer('HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n');
  });
  after(async () => {
    await server?.close();
  });
  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'network-sandbox-')));
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.cancel();
    fs.rmSync(ws, { recursive: true, force: true });
  });

  const curl = (): string => `curl -sS --max-time 5 http://127.0.0.1:${server!.port}/`;

  it('curl allowed by a domains rule reaches the host: the network is on', async () => {
    const result = await run(`{ "version": 1, "rules": [
      { "id": "local", "tools": ["builtin.run_command"], "domains": ["127.0.0.1"], "decision": "allow" }
    ] }`, curl());
    assert.deepEqual(result.sandbox, { sandboxed: true, network: true });
    assert.equal(result.stdout, 'hello\n', result.stderr);
  });

  it('curl allowed by a commands rule without network cannot reach it', async () => {
    const result = await run(`{ "version": 1, "rules": [
      { "id": "curl", "tools": ["builtin.run_command"], "commands": ["curl *"], "decision": "allow" }
    ] }`, curl());
    assert.deepEqual(result.sandbox, { sandboxed: true, network: false });
    assert.notEqual(result.exitCode, 0);
    assert.equal(result.stdout, '');
  });

  it('a domains rule that says "network": false keeps the network off', async () => {
    const result = await run(`{ "version": 1, "rules": [
      { "id": "local", "tools": ["builtin.run_command"], "domains": ["127.0.0.1"], "decision": "allow", "sandbox": { "network": false } }
    ] }`, curl());
    assert.deepEqual(result.sandbox, { sandboxed: true, network: false });
    assert.notEqual(result.exitCode, 0);
  });

  it('a pipeline with a part allowed without network runs with the network off', async () => {
    const result = await run(`{ "version": 1, "rules": [
      { "id": "local", "tools": ["builtin.run_command"], "domains": ["127.0.0.1"], "decision": "allow" },
      { "id": "cat", "tools": ["builtin.run_command"], "commands": ["cat"], "decision": "allow" }
    ] }`, `${curl()} | cat`);
    assert.deepEqual(result.sandbox, { sandboxed: true, network: false });
    assert.equal(result.stdout, '');
  });
});
