// The OpenTelemetry SDK, wired: a LoggerProvider whose batch processor hands the records to an
// OTLP/HTTP log exporter, and a MeterProvider read every OTEL_METRIC_EXPORT_INTERVAL (60 s) by an
// OTLP/HTTP metric exporter. The only file that imports @opentelemetry/*: bundled on its own
// (dist/telemetryExport.js, scripts/bundles.mjs) and loaded by auditTelemetry.ts only in a process
// where telemetry is on, so no other bundle carries the SDK.
//
// Where the records go, the headers, timeouts, compression and the resource are the SDK's to read
// from the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, …) in the process's
// environment. A record the collector did not take is lost and counted, never retried beyond what
// the exporter itself does: export runs beside the decisions, never before them.
import { SeverityNumber, ValueType, type Counter, type Histogram, type Logger } from '@opentelemetry/api';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { version as PACKAGE_VERSION } from '../../../package.json';
import type { TelemetryRecord } from './telemetryRecords.js';
import type { TelemetrySettings } from './telemetrySettings.js';

/** The instrumentation scope of every record and instrument. */
export const SCOPE = 'agentpolicy';

/** What an export has done so far (`agentpolicy.telemetry.dropped` counts the last two). */
export interface TelemetryStatus {
  /** Records handed to the SDK. */
  emitted: number;
  /** Records the collector took. */
  exported: number;
  /** Records lost: the collector failed or was not there (`export_failed`), or too many waited (`queue_full`). */
  dropped: { export_failed: number; queue_full: number };
  /** Failed exports of records, and of metrics. */
  exportFailures: number;
  metricExportFailures: number;
}

export interface OtelExport {
  emit(record: TelemetryRecord): void;
  /** Sends what waits, within `ms` (what is not sent by then stays queued, or is lost at exit). */
  flush(ms: number): Promise<void>;
  /** Flushes within `ms` and stops. */
  shutdown(ms: number): Promise<void>;
  status(): TelemetryStatus;
}

/** An export result's code for success (ExportResultCode.SUCCESS of @opentelemetry/core). */
const SUCCESS = 0;

function numberFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const n = Number(env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** Resolves after `ms` or with `work`, whichever comes first; never rejects. */
function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([work.then(() => undefined, () => undefined), late]).finally(() => clearTimeout(timer));
}

/** Starts the SDK for these settings. `env`: the variables read here (the SDK reads the process's own). */
export function startOtelExport(settings: TelemetrySettings, env: NodeJS.ProcessEnv = process.env, version: string = PACKAGE_VERSION): OtelExport {
  const status: TelemetryStatus = { emitted: 0, exported: 0, dropped: { export_failed: 0, queue_full: 0 }, exportFailures: 0, metricExportFailures: 0 };
  const base = settings.endpoint?.replace(/\/+$/, '');
  const resource = resourceFromAttributes({ 'service.name': 'agentpolicy', 'service.version': version })
    .merge(detectResources({ detectors: [envDetector] }));

  // Logs: the batch processor queues and sends in the background; the counting wrapper sees each result.
  const logOptions = base !== undefined ? { url: `${base}/v1/logs` } : {};
  const logExporter: LogRecordExporter = settings.logsProtocol === 'http/json' ? new JsonLogExporter(logOptions) : new ProtoLogExporter(logOptions);
  const exportLogs = logExporter.export.bind(logExporter);
  logExporter.export = (records, done) => exportLogs(records, (result) => {
    if (result.code === SUCCESS) status.exported += records.length;
    else {
      status.dropped.export_failed += records.length;
      status.exportFailures++;
    }
    done(result);
  });
  const maxQueue = numberFrom(env, 'OTEL_BLRP_MAX_QUEUE_SIZE', 2048);
  const loggerProvider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({
    exporter: logExporter, maxQueueSize: maxQueue,
    // The SDK's own defaults; the variables as the specification names them (the processor no longer reads them itself).
    maxExportBatchSize: Math.min(maxQueue, numberFrom(env, 'OTEL_BLRP_MAX_EXPORT_BATCH_SIZE', 512)),
    scheduledDelayMillis: numberFrom(env, 'OTEL_BLRP_SCHEDULE_DELAY', 1000),
    exportTimeoutMillis: numberFrom(env, 'OTEL_BLRP_EXPORT_TIMEOUT', 30_000),
  })] });
  const logger: Logger = loggerProvider.getLogger(SCOPE, version);

  // Metrics: decisions by outcome, the time asks took, what was lost.
  const metricOptions = base !== undefined ? { url: `${base}/v1/metrics` } : {};
  const metricExporter: PushMetricExporter = settings.metricsProtocol === 'http/json' ? new JsonMetricExporter(metricOptions) : new ProtoMetricExporter(metricOptions);
  const exportMetrics = metricExporter.export.bind(metricExporter);
  metricExporter.export = (data, done) => exportMetrics(data, (result) => {
    if (result.code !== SUCCESS) status.metricExportFailures++;
    done(result);
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({
      exporter: metricExporter,
      exportIntervalMillis: numberFrom(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000),
      exportTimeoutMillis: Math.min(numberFrom(env, 'OTEL_METRIC_EXPORT_TIMEOUT', 30_000), numberFrom(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000)),
    })],
  });
  const meter = meterProvider.getMeter(SCOPE, version);
  const decisions: Counter = meter.createCounter('agentpolicy.decisions', { description: 'Tool calls decided, by outcome (allow, ask, deny)', unit: '{decision}', valueType: ValueType.INT });
  const answers: Counter = meter.createCounter('agentpolicy.answers', { description: 'Asks answered, by answer and by whom', unit: '{answer}', valueType: ValueType.INT });
  const askLatency: Histogram = meter.createHistogram('agentpolicy.ask.latency', {
    description: 'How long an ask waited for its answer', unit: 'ms', valueType: ValueType.DOUBLE,
    advice: { explicitBucketBoundaries: [100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 120_000, 300_000, 900_000, 3_600_000] },
  });
  meter.createObservableCounter('agentpolicy.telemetry.dropped', { description: 'Telemetry records lost (the collector failed or was not there, or too many waited); decisions are never lost', unit: '{record}', valueType: ValueType.INT })
    .addCallback((result) => {
      result.observe(status.dropped.export_failed, { 'agentpolicy.drop.reason': 'export_failed' });
      result.observe(status.dropped.queue_full, { 'agentpolicy.drop.reason': 'queue_full' });
    });

  // The providers stay ours, never registered globally: another library's in the same process (the extension host) is not ours to replace.
  return {
    emit(record) {
      const a = record.attributes;
      if (record.eventName === 'agentpolicy.decision' && typeof a['agentpolicy.decision'] === 'string') {
        decisions.add(1, pick(a, ['agentpolicy.decision', 'agentpolicy.tool.id', 'agentpolicy.source', 'agentpolicy.host', 'agentpolicy.answered_by']));
      }
      if (record.eventName === 'agentpolicy.answer') {
        const attrs = pick(a, ['agentpolicy.answer', 'agentpolicy.answered_by', 'agentpolicy.source', 'agentpolicy.host']);
        answers.add(1, attrs);
        if (typeof a['agentpolicy.ask.latency_ms'] === 'number') askLatency.record(a['agentpolicy.ask.latency_ms'], attrs);
      }
      // Waiting in the processor or in an export: beyond its queue, a record is counted lost here rather than silently there.
      if (status.emitted - status.exported - status.dropped.export_failed >= maxQueue) {
        status.dropped.queue_full++;
        return;
      }
      status.emitted++;
      logger.emit({
        eventName: record.eventName,
        timestamp: record.timeMs,
        severityNumber: record.severity === 'WARN' ? SeverityNumber.WARN : SeverityNumber.INFO,
        severityText: record.severity,
        body: record.body,
        attributes: record.attributes,
      });
    },
    flush: (ms) => bounded(Promise.all([loggerProvider.forceFlush(), meterProvider.forceFlush()]), ms),
    shutdown: (ms) => bounded(Promise.all([loggerProvider.shutdown(), meterProvider.shutdown()]), ms),
    status: () => ({ ...status, dropped: { ...status.dropped } }),
  };
}

function pick(attributes: TelemetryRecord['attributes'], keys: readonly string[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const key of keys) {
    const v = attributes[key];
    if (v !== undefined && !Array.isArray(v)) out[key] = v;
  }
  return out;
}
