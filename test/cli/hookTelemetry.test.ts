// The short-lived `agentpolicy hook` with telemetry on (docs/teams.md, "Decisions in
// OpenTelemetry"): the built executable writes its answer first, gives its records a bounded
// moment to reach the collector (AGENTPOLICY_TELEMETRY_HOOK_FLUSH_MS), and then ends, even when
// the collector takes the request and never answers. Reads the built dist/ (skipped before a build).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOtlpReceiver } from '../runtime/otlpReceiver.js';

const repo = path.join(__dirname, '..', '..');

/** Runs the built hook; resolves with its stdout and exit code. */
function hook(cwd: string, env: NodeJS.ProcessEnv, command: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repo, 'dist', 'cli.js'), 'hook', '--agent', 'claude'], { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
    child.stdin.end(JSON.stringify({ session_id: 's1', cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } }));
  });
}

describe('agentpolicy hook with telemetry on (built executable)', function () {
  this.timeout(30_000);
  let dir: string;
  before(function () {
    if (!fs.existsSync(path.join(repo, 'dist', 'telemetryExport.js'))) this.skip();
  });
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-otel-')));
    fs.writeFileSync(path.join(dir, '.agentpolicy.jsonc'), '{ "version": 1, "rules": [ { "id": "no-rm", "tools": ["builtin.run_command"], "commands": ["rm *"], "decision": "deny" } ], "default": "allow" }');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const envFor = (endpoint: string, flushMs: string): NodeJS.ProcessEnv => ({
    XDG_STATE_HOME: path.join(dir, 'state'), AGENTPOLICY_HOOK_SANDBOX: '0', AGENTPOLICY_ENABLE_TELEMETRY: '1',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TIMEOUT: '60000',
    AGENTPOLICY_TELEMETRY_HOOK_FLUSH_MS: flushMs,
  });

  it('sends its decision and its counter from the process before it ends', async () => {
    const receiver = await startOtlpReceiver();
    try {
      // A generous bound: the machine running the tests may be busy.
      const result = await hook(dir, envFor(receiver.url, '2000'), 'rm -rf build');
      assert.equal(result.code, 0);
      assert.equal(JSON.parse(result.out).hookSpecificOutput.permissionDecision, 'deny');
      const decision = receiver.logs().find((l) => l.eventName === 'agentpolicy.decision');
      assert.ok(decision, 'the record arrived before the process ended');
      assert.equal(decision.attributes['agentpolicy.rule.id'], 'no-rm');
      assert.equal(decision.attributes['agentpolicy.host'], 'claude');
      assert.deepEqual(receiver.points('agentpolicy.decisions').map((p) => [p.attributes['agentpolicy.decision'], p.value]), [['deny', 1]]);
    } finally {
      await receiver.close();
    }
  });

  it('answers and ends even when the collector never answers (the flush is bounded, the export cut)', async () => {
    const stalled = await startOtlpReceiver({ hang: true });
    try {
      // The exporter's own timeout is 60 s: only the hook's bound (100 ms) ends the process within the test's 30 s.
      const result = await hook(dir, envFor(stalled.url, '100'), 'ls');
      assert.equal(result.code, 0);
      assert.equal(JSON.parse(result.out).hookSpecificOutput.permissionDecision, 'allow');
      assert.equal(fs.readFileSync(path.join(dir, 'state', 'agentpolicy', 'audit.jsonl'), 'utf8').trim().split('\n').length, 1);
    } finally {
      await stalled.close();
    }
  });
});
