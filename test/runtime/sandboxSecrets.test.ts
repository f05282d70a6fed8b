// Masked secrets (src/runtime/sandbox/sandboxSecrets.ts; docs/sandbox.md, "Masked secrets") against the
// real bubblewrap, socat, curl and a real host in a network namespace the test makes
// (test/netHost.ts), serving HTTP and HTTPS with a certificate of the test's own CA: the command
// sees a stand-in, never the value; the proxy makes it the real value in an HTTPS request to the
// host the mask names (in a header, never in a body, which the host might show back), and leaves
// it a stand-in to another host and over plain HTTP.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateCa, type GeneratedCa } from '@anthropic-ai/sandbox-runtime/dist/sandbox/mitm-ca.js';
import type { ToolDescriptor } from '../../src/policy/rules/call.js';
import type { ConnectionTarget } from '../../src/policy/rules/connection.js';
import { policyFileFastCheck } from '../../src/policy/file/policyFileFastCheck.js';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { PolicyFileSchema } from '../../src/policy/file/schema.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { DEFAULT_PROTECTED_FILES } from '../../src/runtime/calls/protected.js';
import { runCommandTool, type RunCommandResult } from '../../src/runtime/tools/runCommandTool.js';
import type { ConnectionAnswer } from '../../src/runtime/sandbox/sandboxNetwork.js';
import { probeSandbox } from '../../src/runtime/sandbox/sandboxProbe.js';
import { maskSecrets, processCa, SANDBOX_TRUST_BUNDLE, trustUpstreamCaForTests } from '../../src/runtime/sandbox/sandboxSecrets.js';
import type { ToolRunContext } from '../../src/runtime/tools/tools.js';
import type { ToolSandbox } from '../../src/runtime/sandbox/toolSandbox.js';
import { requireTestHost, startTestHost, type TestHost } from '../netHost.js';

// node-forge (the engine's) has no types here; only what a leaf certificate needs is used.
const forge: any = createRequire(__filename)('node-forge');

const probe = probeSandbox();
const tool = runCommandTool();
const VARIABLE = 'APTEST_MASKED_TOKEN';
const REAL = `real-${crypto.randomBytes(16).toString('hex')}`;
const HTTPS_PORT = 8443;

/** A certificate for both of the test host's names, signed by the test's CA. */
function leafFor(ca: GeneratedCa, names: string[]): { key: string; cert: string } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }));
  cert.serialNumber = `01${crypto.randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 86400_000);
  cert.setSubject([{ name: 'commonName', value: names[0] }]);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2, value })) },
  ]);
  cert.sign(ca.key, forge.md.sha256.create());
  return { key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, cert: forge.pki.certificateToPem(cert) };
}

const RUN_COMMAND: ToolDescriptor = {
  id: 'builtin.run_command', kind: 'builtin',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true }, commandArg: 'command',
};

describe('masked secrets in the policy: "sandbox": { "mask": { NAME: [hosts] } }', () => {
  before(async () => {
    await initShellParser();
  });
  const decide = (command: string) => {
    const policy = new Policy({
      workspace: loadPolicyText(`{ "version": 1, "rules": [
        { "tools": ["builtin.run_command"], "commands": ["gh *"], "decision": "allow", "sandbox": { "mask": { "GITHUB_TOKEN": ["api.github.com", "*.githubusercontent.com"], "GH_TOKEN": ["api.github.com"] } } },
        { "tools": ["builtin.run_command"], "commands": ["git push *"], "decision": "allow", "sandbox": { "env": ["GITHUB_TOKEN", "NPM_TOKEN"], "mask": { "GITHUB_TOKEN": ["API.github.com", "github.com"] } } },
        { "tools": ["builtin.run_command"], "commands": ["npm *"], "decision": "allow", "sandbox": { "env": ["NPM_TOKEN", "GITHUB_TOKEN"] } },
        { "tools": ["builtin.run_command"], "commands": ["echo *"], "decision": "allow" }
      ] }`, '/ws/.agentpolicy.jsonc'),
    });
    const run = policy.decide({ tool: RUN_COMMAND, input: { command }, agent: 'a' }, { workspaceFolder: '/ws', sandbox: true }).sandbox;
    return { env: run?.env, mask: run?.mask };
  };

  it('one part: its rule\'s masks; several: the names every part masks, for the hosts they all name', () => {
    assert.deepEqual(decide('gh pr list'), { env: undefined, mask: { GH_TOKEN: ['api.github.com'], GITHUB_TOKEN: ['*.githubusercontent.com', 'api.github.com'] } });
    assert.deepEqual(decide('gh pr list && git push origin'), { env: undefined, mask: { GITHUB_TOKEN: ['api.github.com'] } });
    assert.deepEqual(decide('gh pr list && echo hi'), { env: undefined, mask: undefined });
  });

  it('a variable both passed and masked is masked: never passed in the clear, not even by another part that passes it', () => {
    assert.deepEqual(decide('git push origin'), { env: ['NPM_TOKEN'], mask: { GITHUB_TOKEN: ['api.github.com', 'github.com'] } });
    assert.deepEqual(decide('git push origin && npm ci'), { env: ['NPM_TOKEN'], mask: undefined });
  });

  it('the schema takes variable names and host patterns only, and the fast check agrees with it', () => {
    const load = (sandbox: string) => loadPolicyText(`{ "version": 1, "rules": [ { "commands": ["x"], "decision": "allow", "sandbox": ${sandbox} } ] }`, '/p.jsonc');
    for (const bad of [
      '{ "mask": {} }', '{ "mask": { "A": [] } }', '{ "mask": { "NOT-A-NAME": ["a.com"] } }', '{ "mask": { "A": ["a.com:443"] } }',
      '{ "mask": { "A": ["https://a.com"] } }', '{ "mask": { "A": ["*"] } }', '{ "mask": { "A": ["a.*.com"] } }', '{ "mask": { "A": ["a..com"] } }',
      '{ "mask": { "A": ["-a.com"] } }', '{ "mask": { "A": ["a.com/x"] } }', '{ "mask": ["A"] }',
    ]) {
      assert.equal(load(bad).valid, false, bad);
      assert.equal(policyFileFastCheck(JSON.parse(`{ "version": 1, "rules": [ { "commands": ["x"], "decision": "allow", "sandbox": ${bad} } ] }`)), undefined, bad);
    }
    for (const good of ['{ "mask": { "GITHUB_TOKEN": ["api.github.com"] } }', '{ "env": ["A"], "mask": { "B": ["*.Example.com", "10.0.0.1"], "C": ["localhost"] }, "network": false }']) {
      assert.equal(load(good).valid, true, good);
      const value = JSON.parse(`{ "version": 1, "rules": [ { "commands": ["x"], "decision": "allow", "sandbox": ${good} } ] }`);
      const fast = policyFileFastCheck(value);
      assert.notEqual(fast, undefined, good);
      assert.deepStrictEqual(fast, PolicyFileSchema.parse(value));
      assert.equal(JSON.stringify(fast), JSON.stringify(PolicyFileSchema.parse(value)));
    }
  });
});

describe('masked secrets: a stand-in in the sandbox, the real value only on the way to the host named', function () {
  this.timeout(60_000);
  let host: TestHost;
  let ws: string;
  let testCa: GeneratedCa;
  const saved = process.env[VARIABLE];

  before(async function () {
    if (!probe.available) {
      console.log(`    (masked secret tests skipped: ${probe.reason})`);
      this.skip();
    }
    requireTestHost(this);
    testCa = generateCa({ cn: 'agent-policy test host CA', validityDays: 1 });
    host = await startTestHost({ tls: { ports: [HTTPS_PORT], certificate: (names) => leafFor(testCa, [names.allowed, names.other]) } });
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-secrets-')));
    // For the host that is not terminated: the command's curl verifies it itself, against the test's CA.
    fs.writeFileSync(path.join(ws, 'test-ca.pem'), testCa.certPem);
    trustUpstreamCaForTests(testCa.certPem);
    process.env[VARIABLE] = REAL;
  });

  after(async () => {
    trustUpstreamCaForTests(undefined);
    if (saved === undefined) delete process.env[VARIABLE];
    else process.env[VARIABLE] = saved;
    await host?.stop();
    if (ws) fs.rmSync(ws, { recursive: true, force: true });
  });

  /** Runs a command sandboxed, connections judged (both test hosts allowed), the variable masked for the allowed name. */
  async function run(command: string): Promise<{ result: RunCommandResult; asked: ConnectionTarget[] }> {
    const asked: ConnectionTarget[] = [];
    const judge = (t: ConnectionTarget): ConnectionAnswer =>
      t.host === host.names.allowed || t.host === host.names.other ? { allow: true } : { allow: false, reason: `${t.host} is not allowed` };
    const sandbox: ToolSandbox = {
      network: false, judgesHosts: true, protectedWritable: false,
      protectedFiles: DEFAULT_PROTECTED_FILES.map((f) => path.resolve(ws, f)),
      connections: { judge: async (t) => (asked.push(t), judge(t)), namedHosts: [] },
      mask: { [VARIABLE]: [host.names.allowed] },
    };
    const context: ToolRunContext = { sessionId: 's', turnId: 't', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal, sandbox };
    const checked = tool.check({ command, timeoutMs: 20_000 });
    if (!checked.ok) throw new Error(checked.error);
    return { result: (await tool.run(checked.value, context)) as RunCommandResult, asked };
  }

  /** The first line the command printed (its stand-in), and the JSON lines the test host answered. */
  function answers(stdout: string): { standIn: string; answers: Array<{ authorization?: string; body?: string; path: string }> } {
    const [first, ...rest] = stdout.trim().split('\n');
    return { standIn: first ?? '', answers: rest.map((line) => JSON.parse(line)) };
  }

  it('gives the command a random stand-in, never the value', async () => {
    const { result } = await run(`printenv ${VARIABLE}; echo "$${VARIABLE}" | grep -c ${REAL} || true; cat /proc/self/environ | tr '\\0' '\\n' | grep -c ${REAL} || true`);
    assert.equal(result.exitCode, 0, result.stderr);
    const [standIn, inVariable, inEnviron] = result.stdout.trim().split('\n');
    assert.match(standIn ?? '', /^fake_value_[0-9a-f-]{36}/);
    assert.ok(!standIn!.includes(REAL));
    assert.equal(inVariable, '0');
    assert.equal(inEnviron, '0');
    // Another run, another stand-in.
    const again = await run(`printenv ${VARIABLE}`);
    assert.notEqual(again.result.stdout.trim(), standIn);
  });

  it('substitutes the real value in an HTTPS request\'s header to the host the mask names, never in its body', async () => {
    const { result, asked } = await run(
      `printenv ${VARIABLE}; ` +
      `curl -sSf -H "Authorization: Bearer $${VARIABLE}" https://${host.names.allowed}:${HTTPS_PORT}/a; echo; ` +
      `curl -sSf --data "token=$${VARIABLE}" https://${host.names.allowed}:${HTTPS_PORT}/b; echo`,
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const { standIn, answers: got } = answers(result.stdout);
    assert.equal(got[0]?.path, '/a');
    assert.equal(got[0]?.authorization, `Bearer ${REAL}`);
    // A body the host could store and show back keeps the stand-in.
    assert.equal(got[1]?.body, `token=${standIn}`);
    assert.ok(!result.stdout.includes(`Bearer ${standIn}`));
    assert.deepEqual(asked, [{ host: host.names.allowed, port: HTTPS_PORT }, { host: host.names.allowed, port: HTTPS_PORT }]);
  });

  it('sends the stand-in unchanged to another allowed host', async () => {
    const { result, asked } = await run(
      `printenv ${VARIABLE}; curl -sSf --cacert test-ca.pem -H "Authorization: Bearer $${VARIABLE}" https://${host.names.other}:${HTTPS_PORT}/o; echo`,
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const { standIn, answers: got } = answers(result.stdout);
    assert.equal(got[0]?.authorization, `Bearer ${standIn}`);
    assert.ok(!result.stdout.includes(REAL));
    assert.deepEqual(asked, [{ host: host.names.other, port: HTTPS_PORT }]);
  });

  it('sends the stand-in over plain HTTP, even to the host the mask names', async () => {
    const { result } = await run(`printenv ${VARIABLE}; curl -sSf -H "Authorization: Bearer $${VARIABLE}" http://${host.names.allowed}/p; echo`);
    assert.equal(result.exitCode, 0, result.stderr);
    const { standIn, answers: got } = answers(result.stdout);
    assert.equal(got[0]?.authorization, `Bearer ${standIn}`);
    assert.ok(!result.stdout.includes(REAL));
  });

  it('still judges every connection: a refused host is refused, stand-in or not', async () => {
    const sandboxed = await run(`curl -sSf -H "Authorization: Bearer $${VARIABLE}" https://${host.addresses.allowed}:${HTTPS_PORT}/x`);
    assert.notEqual(sandboxed.result.exitCode, 0);
    assert.deepEqual(sandboxed.asked.map((t) => t.host), [host.addresses.allowed]);
  });

  it('keeps the CA private: the trust bundle is the user\'s alone, and the sandbox reads it at its own path', async () => {
    const ca = processCa();
    assert.equal(fs.statSync(ca.trustBundlePath).mode & 0o077, 0);
    assert.equal(fs.statSync(path.dirname(ca.trustBundlePath)).mode & 0o077, 0);
    assert.ok(!fs.readFileSync(ca.trustBundlePath, 'utf8').includes('PRIVATE KEY'));
    const { result } = await run(`printf '%s\\n' "$CURL_CA_BUNDLE" "$SSL_CERT_FILE" "$NODE_EXTRA_CA_CERTS"; head -c 27 ${SANDBOX_TRUST_BUNDLE}; echo; touch ${SANDBOX_TRUST_BUNDLE} 2>/dev/null && echo writable || echo read-only`);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(result.stdout.trim().split('\n'), [SANDBOX_TRUST_BUNDLE, SANDBOX_TRUST_BUNDLE, SANDBOX_TRUST_BUNDLE, '-----BEGIN CERTIFICATE-----', 'read-only']);
  });

  it('makes no stand-in for a masked variable the environment lacks, and withholds every masked name', () => {
    const secrets = maskSecrets({ APTEST_ABSENT: ['example.com'], [VARIABLE]: [] }, { [VARIABLE]: 'x' });
    assert.deepEqual(secrets.withheld, ['APTEST_ABSENT', VARIABLE]);
    assert.equal(secrets.envArgs.length, 3);
    assert.equal(secrets.envArgs[1], VARIABLE);
    assert.equal(secrets.substitutes, false);
  });
});
