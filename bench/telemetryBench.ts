// Decisions in OpenTelemetry (docs/teams.md): what exporting costs a decision. A scripted session
// of allowed calls with its audit file, telemetry off, on with a collector that takes every
// request (a local HTTP server answering 200), and on with no collector at all (nothing listens).
// Export runs beside the decisions (the SDK's batch processor): a decision pays for a record's
// mapping and queueing, never for a request to the collector.
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileAuditLog } from '../src/runtime/audit/audit.js';
import { flushTelemetry, shutdownTelemetry, TelemetryAuditSink, telemetryStatus } from '../src/runtime/telemetry/auditTelemetry.js';
import { timeAllowedSession } from './runtimeBench.js';
import { median, type BenchRow } from './table.js';

const CALLS = 10_000;
const WIDTH = 100;
const RUNS = 5;

/** A collector that takes everything and answers 200 with an empty body. */
async function sink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

async function perCall(dir: string, label: string, env: NodeJS.ProcessEnv): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const audit = new TelemetryAuditSink(new FileAuditLog(path.join(dir, `${label}-${i}.jsonl`)), { env });
    times.push(await timeAllowedSession(CALLS, WIDTH, audit));
  }
  return median(times) / CALLS / 1000;
}

export async function telemetryBench(): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-telemetry-bench-'));
  const collector = await sink();
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const on = { AGENTPOLICY_ENABLE_TELEMETRY: '1' };
  try {
    await timeAllowedSession(1_000, WIDTH, new TelemetryAuditSink(new FileAuditLog(path.join(dir, 'warm.jsonl')), { env: {} })); // warm up
    const off = await perCall(dir, 'off', {});
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
    const live = await perCall(dir, 'live', on);
    await flushTelemetry(5000);
    const sent = telemetryStatus();
    await shutdownTelemetry(5000);
    // Nothing listens there any more: every export fails.
    const deadUrl = collector.url;
    await collector.close();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = deadUrl;
    const dead = await perCall(dir, 'dead', on);
    await flushTelemetry(5000);
    const lost = telemetryStatus();
    await shutdownTelemetry(2000);
    // A burst: 50,000 lines within a second or two, far beyond the batch queue (OTEL_BLRP_MAX_QUEUE_SIZE, 2048): the rest are lost, and counted.
    const note = (s: typeof sent): string => (s
      ? `of ${CALLS * RUNS} lines: ${s.exported} exported, ${s.dropped.export_failed} failed, ${s.emitted - s.exported - s.dropped.export_failed} in flight, ${s.dropped.queue_full + s.lostWaiting} beyond the queue`
      : '');
    return [
      { subject: 'telemetry: allowed calls', size: CALLS, metric: 'per call (export off)', value: off, unit: 'µs', digits: 2, note: 'the audit file; AGENTPOLICY_ENABLE_TELEMETRY unset' },
      { subject: 'telemetry: allowed calls', size: CALLS, metric: 'per call (export on)', value: live, unit: 'µs', digits: 2, note: `OTLP/HTTP protobuf to a local collector; ${note(sent)}` },
      { subject: 'telemetry: allowed calls', size: CALLS, metric: 'per call (collector dead)', value: dead, unit: 'µs', digits: 2, note: `nothing listens; ${note(lost)}` },
    ];
  } finally {
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    await collector.close().catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
