// Decisions in OpenTelemetry (docs/teams.md): real OTLP/HTTP exchanges with a receiver in the test
// that decodes the bodies by the official .proto files (otlpReceiver.ts). A runtime session's
// decisions, asks and answers and a hook's decisions arrive as log records with the documented
// attributes, and as counters; nothing of what a call was about goes out unless the managed policy
// allows it; a dead collector loses records (counted) but never a decision.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { Agent, PermissionPolicy, PermissionRule } from '../../src/runtime/agents/agent.js';
import { AllowApproval, Completed } from '../../src/runtime/tree/answers.js';
import { MemoryAuditLog } from '../../src/runtime/audit/audit.js';
import { ScriptedModel } from '../../src/runtime/model/scripted.js';
import { tool } from '../../src/runtime/tools/tools.js';
import { flushTelemetry, shutdownTelemetry, TelemetryAuditSink, telemetryStatus } from '../../src/runtime/telemetry/auditTelemetry.js';
import { CONTENT_ATTRIBUTES } from '../../src/runtime/telemetry/telemetryRecords.js';
import { telemetrySettings } from '../../src/runtime/telemetry/telemetrySettings.js';
import { runHook } from '../../src/hooks/judge/hookCommand.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlpReceiver.js';

/** What a call is about: never exported by default. */
const SECRET_COMMAND = 'cat /home/alice/plans/acquisition-target.txt';
const SECRET_PATH = '/home/alice/plans';

/** The OTEL_* variables the SDK reads from the process's environment, set for one test. */
function withOtelEnv(vars: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/** One response with a call the policy allows, one it asks (answered after a moment), one it denies; then done. */
function agentOf() {
  const run = () => ({ ok: true });
  const tools = (['allow', 'ask', 'deny'] as const).map((d) => tool({ name: d, description: d, inputSchema: z.object({ command: z.string() }) }, run));
  return new Agent({
    model: new ScriptedModel({ agents: { main: [{ parallel: (['allow', 'ask', 'deny'] as const).map((d) => ({ call: d, input: { command: SECRET_COMMAND } })) }, { say: 'done' }] } }),
    instructions: '',
    tools,
    permissionPolicy: new PermissionPolicy({ rules: (['allow', 'ask', 'deny'] as const).map((d) => PermissionRule({ id: `rule-${d}`, tools: [`client.${d}`], decision: d })) }),
  });
}

async function runSession(sink: TelemetryAuditSink): Promise<void> {
  const session = await agentOf().startSession({
    audit: sink,
    onApproval: async () => {
      await new Promise((r) => setTimeout(r, 30));
      return new AllowApproval({ scope: 'session' });
    },
  });
  const state = await session.run('go');
  assert.ok(state instanceof Completed, state.type);
}

describe('decisions in OpenTelemetry', function () {
  this.timeout(40_000);
  let receiver: OtlpReceiver;
  let restore: () => void = () => {};
  let dir: string;
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'otel-')));
  });
  afterEach(async () => {
    await shutdownTelemetry(2000);
    restore();
    restore = () => {};
    await receiver.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is off unless AGENTPOLICY_ENABLE_TELEMETRY or the managed policy switches it on; content only from the managed policy', () => {
    assert.equal(telemetrySettings({}), undefined);
    assert.equal(telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x' }), undefined, 'an endpoint alone switches nothing on');
    assert.deepEqual(telemetrySettings({ AGENTPOLICY_ENABLE_TELEMETRY: '1' }), { from: 'env', content: false, logsProtocol: 'http/protobuf', metricsProtocol: 'http/protobuf' });
    assert.equal(telemetrySettings({ AGENTPOLICY_ENABLE_TELEMETRY: '1' }, { telemetry: { enabled: false } }), undefined, 'the managed policy can switch it off');
    assert.equal(telemetrySettings({ AGENTPOLICY_ENABLE_TELEMETRY: '1', OTEL_SDK_DISABLED: 'true' }), undefined, 'OTEL_SDK_DISABLED turns off what the variable turned on');
    assert.equal(telemetrySettings({ OTEL_SDK_DISABLED: 'true' }, { telemetry: { enabled: true } })?.from, 'managed', 'but not what the managed policy turned on');
    assert.equal(telemetrySettings({}, { telemetry: { enabled: true, content: true } })?.content, true);
    assert.equal(telemetrySettings({ AGENTPOLICY_ENABLE_TELEMETRY: '1', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc' })?.logsProtocol, 'http/json');
    assert.equal(telemetrySettings({ AGENTPOLICY_ENABLE_TELEMETRY: '1', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc' })?.metricsProtocol, 'http/protobuf');
  });

  it('sends a session\'s decisions, ask and answer over OTLP/HTTP protobuf, with the documented attributes, and none of the call\'s content', async () => {
    restore = withOtelEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: 'x-team=blue', OTEL_SERVICE_NAME: 'agentpolicy-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=ci,team=blue', OTEL_EXPORTER_OTLP_PROTOCOL: '', OTEL_METRIC_EXPORT_INTERVAL: '600000',
    });
    const memory = new MemoryAuditLog();
    await runSession(new TelemetryAuditSink(memory, { env: { AGENTPOLICY_ENABLE_TELEMETRY: '1' } }));
    await flushTelemetry(10_000);
    await receiver.until(() => receiver.logs().length >= memory.entries.length && receiver.points('agentpolicy.decisions').length > 0);

    const logsRequest = receiver.requests.find((r) => r.path === '/v1/logs')!;
    assert.equal(logsRequest.contentType, 'application/x-protobuf');
    assert.equal(logsRequest.headers['x-team'], 'blue', 'OTEL_EXPORTER_OTLP_HEADERS as the SDK reads it');
    const logs = receiver.logs();
    assert.deepEqual(logs.map((l) => l.eventName), memory.entries.map((e) => ({ decision: 'agentpolicy.decision', 'callback-opened': 'agentpolicy.ask', 'callback-settled': 'agentpolicy.answer' } as Record<string, string>)[e.event] ?? `agentpolicy.${e.event.replace(/-/g, '_')}`), 'every audit line, in order');
    for (const log of logs) {
      assert.equal(log.resource['service.name'], 'agentpolicy-test');
      assert.equal(log.resource['deployment.environment'], 'ci');
      assert.equal(typeof log.resource['service.version'], 'string');
      assert.equal(log.scope, 'agentpolicy');
      assert.equal(log.attributes['agentpolicy.source'], 'runtime');
    }
    const decisions = logs.filter((l) => l.eventName === 'agentpolicy.decision');
    assert.deepEqual(decisions.map((d) => [d.attributes['agentpolicy.tool.id'], d.attributes['agentpolicy.decision'], d.attributes['agentpolicy.rule.id']]).sort(), [
      ['client.allow', 'allow', 'rule-allow'], ['client.deny', 'deny', 'rule-deny'],
    ]);
    const denied = decisions.find((d) => d.attributes['agentpolicy.decision'] === 'deny')!;
    assert.equal(denied.severityText, 'WARN');
    assert.equal(denied.attributes['agentpolicy.agent'], 'main');
    assert.equal(typeof denied.attributes['agentpolicy.session.id'], 'string');
    const ask = logs.find((l) => l.eventName === 'agentpolicy.ask')!;
    assert.equal(ask.attributes['agentpolicy.decision'], 'ask');
    assert.equal(ask.attributes['agentpolicy.tool.id'], 'client.ask');
    const answer = logs.find((l) => l.eventName === 'agentpolicy.answer')!;
    assert.equal(answer.attributes['agentpolicy.callback.id'], ask.attributes['agentpolicy.callback.id']);
    assert.equal(answer.attributes['agentpolicy.answer'], 'allow-session');
    assert.equal(answer.attributes['agentpolicy.answered_by'], 'handler');
    assert.ok(typeof answer.attributes['agentpolicy.ask.latency_ms'] === 'number' && answer.attributes['agentpolicy.ask.latency_ms'] >= 0);

    // Private by default: no summary, reason, digest or path, anywhere in what was sent.
    for (const log of logs) for (const key of CONTENT_ATTRIBUTES) assert.equal(log.attributes[key], undefined, key);
    for (const r of receiver.requests) {
      assert.ok(!r.raw.includes(SECRET_COMMAND) && !r.raw.includes(SECRET_PATH), `${r.path} carries the command`);
    }

    // Counters: decisions by outcome, the time the ask took.
    const byOutcome = Object.fromEntries(receiver.points('agentpolicy.decisions').map((p) => [p.attributes['agentpolicy.decision'], p.value]));
    assert.deepEqual(byOutcome, { allow: 1, deny: 1 });
    const latency = receiver.points('agentpolicy.ask.latency');
    assert.equal(latency.length, 1);
    assert.equal(latency[0]!.count, 1);
    assert.equal(latency[0]!.attributes['agentpolicy.answered_by'], 'handler');
    assert.deepEqual(receiver.points('agentpolicy.telemetry.dropped').map((p) => p.value), [0, 0]);
  });

  it('sends over OTLP/HTTP JSON when OTEL_EXPORTER_OTLP_PROTOCOL says http/json', async () => {
    restore = withOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRIC_EXPORT_INTERVAL: '600000' });
    const memory = new MemoryAuditLog();
    await runSession(new TelemetryAuditSink(memory, { env: { AGENTPOLICY_ENABLE_TELEMETRY: '1', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } }));
    await flushTelemetry(10_000);
    await receiver.until(() => receiver.logs().length >= memory.entries.length);
    assert.ok(receiver.requests.every((r) => r.contentType.startsWith('application/json')));
    const decision = receiver.logs().find((l) => l.eventName === 'agentpolicy.decision' && l.attributes['agentpolicy.decision'] === 'deny')!;
    assert.equal(decision.attributes['agentpolicy.rule.id'], 'rule-deny');
    assert.ok(receiver.requests.every((r) => !r.raw.includes(SECRET_COMMAND)));
  });

  describe('a hook\'s decisions', () => {
    const hookInput = (command: string): string => JSON.stringify({ session_id: 'abc', cwd: dir, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
    const policy = '{ "version": 1, "rules": [ { "id": "no-reading-plans", "tools": ["builtin.run_command"], "commands": ["cat *"], "decision": "deny", "reason": "plans are private" } ], "default": "allow" }';
    const hook = (command: string, env: NodeJS.ProcessEnv, managedFile?: string) => runHook(
      { agent: 'claude', stateDir: path.join(dir, 'state'), auditFile: path.join(dir, 'audit.jsonl'), ...(managedFile ? { managedFile } : {}) },
      { stdin: hookInput(command), env, cwd: dir, sandboxAvailable: () => ({ available: false, reason: 'test' }) },
    );
    beforeEach(() => fs.writeFileSync(path.join(dir, '.agentpolicy.jsonc'), policy));

    it('exports them as host decisions, and the content only when the managed policy allows it (controls.telemetry)', async () => {
      restore = withOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: '', OTEL_METRIC_EXPORT_INTERVAL: '600000' });
      // The variable alone: ids and decisions, no content.
      const denied = await hook(SECRET_COMMAND, { AGENTPOLICY_ENABLE_TELEMETRY: '1' });
      assert.equal(JSON.parse(denied.stdout).hookSpecificOutput.permissionDecision, 'deny');
      await flushTelemetry(10_000);
      await receiver.until(() => receiver.logs().length >= 1);
      const plain = receiver.logs()[0]!;
      assert.equal(plain.eventName, 'agentpolicy.decision');
      assert.deepEqual(
        [plain.attributes['agentpolicy.decision'], plain.attributes['agentpolicy.rule.id'], plain.attributes['agentpolicy.host'], plain.attributes['agentpolicy.source'], plain.attributes['agentpolicy.session.id'], plain.attributes['agentpolicy.tool.id']],
        ['deny', 'no-reading-plans', 'claude', 'hook', 'claude:abc', 'builtin.run_command'],
      );
      assert.equal(typeof plain.attributes['agentpolicy.decision_ms'], 'number');
      // The audit chain's head goes with the record: the hash of the line the hook wrote.
      const auditLine = JSON.parse(fs.readFileSync(path.join(dir, 'audit.jsonl'), 'utf8').trim().split('\n').at(-1)!) as { hash: string };
      assert.equal(plain.attributes['agentpolicy.audit.hash'], auditLine.hash);
      assert.equal(plain.attributes['agentpolicy.summary'], undefined);
      assert.ok(!receiver.requests.some((r) => r.raw.includes(SECRET_COMMAND) || r.raw.includes('plans are private') || r.raw.includes(dir)));

      // A managed policy that switches telemetry on with content: no variable needed.
      await shutdownTelemetry(5000);
      const managed = path.join(dir, 'managed.agentpolicy.jsonc');
      fs.writeFileSync(managed, '{ "version": 1, "controls": { "telemetry": { "enabled": true, "content": true } } }');
      const before = receiver.logs().length;
      await hook(SECRET_COMMAND, {}, managed);
      await flushTelemetry(10_000);
      await receiver.until(() => receiver.logs().length > before);
      const full = receiver.logs()[before]!;
      assert.equal(full.attributes['agentpolicy.summary'], SECRET_COMMAND);
      assert.equal(full.attributes['agentpolicy.reason'], 'plans are private');
      assert.equal(full.attributes['agentpolicy.rule.file'], '.agentpolicy.jsonc');
      assert.match(String(full.attributes['agentpolicy.input.digest']), /^sha256:/);
    });

    it('a dead collector changes no decision and loses no audit line: the records lost are counted', async () => {
      const dead = await startOtlpReceiver();
      const deadUrl = dead.url;
      await dead.close();
      restore = withOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: deadUrl, OTEL_EXPORTER_OTLP_PROTOCOL: '', OTEL_METRIC_EXPORT_INTERVAL: '600000', OTEL_EXPORTER_OTLP_TIMEOUT: '2000' });
      const on = { AGENTPOLICY_ENABLE_TELEMETRY: '1' };
      const answers = [];
      for (const command of ['ls', SECRET_COMMAND, 'git status']) answers.push(JSON.parse((await hook(command, on)).stdout).hookSpecificOutput.permissionDecision);
      assert.deepEqual(answers, ['allow', 'deny', 'allow']);
      assert.equal(fs.readFileSync(path.join(dir, 'audit.jsonl'), 'utf8').trim().split('\n').length, 3);
      await flushTelemetry(10_000);
      for (let i = 0; i < 100 && (telemetryStatus()?.dropped.export_failed ?? 0) < 3; i++) await new Promise((r) => setTimeout(r, 100));
      const status = telemetryStatus()!;
      assert.equal(status.emitted, 3);
      assert.equal(status.exported, 0);
      assert.equal(status.dropped.export_failed, 3);
      assert.ok(status.exportFailures >= 1);
    });
  });
});
