// The sandbox's network, per connection, against the real bubblewrap, socat, curl and a real
// host in a network namespace the test makes (test/netHost.ts; never loopback, never an address
// outside this machine): every connection a sandboxed command opens is judged by the command's
// own proxy, including the ones its text does not show (a redirect curl follows, a bare address,
// SOCKS), a name that resolves to loopback is refused unless named, nothing gets past the proxy,
// and Unix-domain sockets stay refused.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ConnectionTarget } from '../../src/policy/rules/connection.js';
import { DEFAULT_PROTECTED_FILES } from '../../src/runtime/calls/protected.js';
import { runCommandTool, type RunCommandResult } from '../../src/runtime/tools/runCommandTool.js';
import type { ConnectionAnswer } from '../../src/runtime/sandbox/sandboxNetwork.js';
import { probeSandbox } from '../../src/runtime/sandbox/sandboxProbe.js';
import type { ToolRunContext } from '../../src/runtime/tools/tools.js';
import type { ToolSandbox } from '../../src/runtime/sandbox/toolSandbox.js';
import { requireTestHost, startTestHost, type TestHost } from '../netHost.js';

const probe = probeSandbox();
const tool = runCommandTool();

describe('the sandbox network: each connection judged by the command\'s own proxy', function () {
  this.timeout(60_000);
  let host: TestHost;
  let ws: string;

  before(async function () {
    if (!probe.available) {
      console.log(`    (sandbox network tests skipped: ${probe.reason})`);
      this.skip();
    }
    requireTestHost(this);
    host = await startTestHost();
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-net-')));
  });

  after(async () => {
    await host?.stop();
    if (ws) fs.rmSync(ws, { recursive: true, force: true });
  });

  /** Runs a command sandboxed with connections judged by `judge`; returns the result and what was asked. */
  async function run(command: string, judge: (t: ConnectionTarget) => ConnectionAnswer, namedHosts: string[] = []): Promise<{ result: RunCommandResult; asked: ConnectionTarget[] }> {
    const asked: ConnectionTarget[] = [];
    const sandbox: ToolSandbox = {
      network: false, judgesHosts: true, protectedWritable: false,
      protectedFiles: DEFAULT_PROTECTED_FILES.map((f) => path.resolve(ws, f)),
      connections: { judge: async (t) => (asked.push(t), judge(t)), namedHosts },
    };
    const context: ToolRunContext = { sessionId: 's', turnId: 't', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal, sandbox };
    const checked = tool.check({ command, timeoutMs: 20_000 });
    if (!checked.ok) throw new Error(checked.error);
    return { result: (await tool.run(checked.value, context)) as RunCommandResult, asked };
  }

  const onlyAllowed = (t: ConnectionTarget): ConnectionAnswer => (t.host === host.names.allowed ? { allow: true } : { allow: false, reason: `${t.host} is not allowed` });

  it('lets a connection to an allowed host through, and says the hosts were judged', async () => {
    const { result, asked } = await run(`curl -sSf http://${host.names.allowed}/hello`, onlyAllowed);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout).path, '/hello');
    assert.deepEqual(asked, [{ host: host.names.allowed, port: 80 }]);
    assert.equal(result.sandbox.hostsJudged, true);
    assert.equal(result.sandbox.network, false);
  });

  it('refuses a host the judge refuses, with the sandbox note', async () => {
    const { result, asked } = await run(`curl -sSf http://${host.names.other}/`, onlyAllowed);
    assert.notEqual(result.exitCode, 0);
    assert.equal(result.stdout, '');
    assert.deepEqual(asked, [{ host: host.names.other, port: 80 }]);
    assert.match(result.stderr, /\[sandbox: .*reaches only the hosts the policy allows/);
  });

  it('judges where a redirect leads, though the command line names only the first host', async () => {
    const { result, asked } = await run(`curl -sSfL http://${host.names.allowed}/redirect?to=http://${host.names.other}/secret`, onlyAllowed);
    assert.notEqual(result.exitCode, 0);
    assert.ok(!result.stdout.includes('/secret'), result.stdout);
    assert.deepEqual(asked.map((t) => t.host), [host.names.allowed, host.names.other]);
  });

  it('judges a bare address as itself, and through SOCKS (on the same port) as through HTTP', async () => {
    const bare = await run(`curl -sSf http://${host.addresses.other}/`, onlyAllowed);
    assert.notEqual(bare.result.exitCode, 0);
    assert.deepEqual(bare.asked.map((t) => t.host), [host.addresses.other]);
    const socks = await run(`curl -sSf --proxy socks5h://127.0.0.1:3128 http://${host.names.allowed}/s && curl -sSf --proxy socks5h://127.0.0.1:3128 http://${host.names.other}/`, onlyAllowed);
    assert.match(socks.result.stdout, /"path":"\/s"/);
    assert.notEqual(socks.result.exitCode, 0);
    assert.deepEqual(socks.asked.map((t) => t.host), [host.names.allowed, host.names.other]);
  });

  it('has no way around the proxy: a direct connection finds no network', async () => {
    const { result, asked } = await run(`curl -sSf --noproxy '*' --connect-timeout 3 http://${host.addresses.allowed}/`, () => ({ allow: true }));
    assert.notEqual(result.exitCode, 0);
    assert.deepEqual(asked, []);
  });

  it('refuses a name that resolves to loopback unless the policy names it, even when the judge allows it', async () => {
    const { result, asked } = await run(`curl -sSf --noproxy '' -x http://127.0.0.1:3128 http://localhost:9/`, () => ({ allow: true }));
    assert.notEqual(result.exitCode, 0);
    assert.deepEqual(asked.map((t) => t.host), ['localhost']);
  });

  it('keeps Unix-domain sockets refused while the network goes through the proxy', async function () {
    if (!fs.existsSync('/usr/bin/python3')) this.skip();
    const { result } = await run(`/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX)'`, () => ({ allow: true }));
    assert.notEqual(result.exitCode, 0);
    assert.match(result.stderr, /Operation not permitted/);
  });

  it('leaves no proxy socket folder and no bridge process behind', async () => {
    const before = fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('agentpolicy-net-'));
    await run(`curl -sSf http://${host.names.allowed}/`, onlyAllowed);
    const after = fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('agentpolicy-net-'));
    assert.deepEqual(after, before);
  });
});
