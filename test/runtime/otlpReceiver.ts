// A small OTLP/HTTP receiver for tests (no Collector binary can be installed here): it takes
// POST /v1/logs and /v1/metrics on 127.0.0.1, and decodes each body by the official protocol
// definitions, the opentelemetry-proto .proto files in test/fixtures/otlp-proto (protobuf, the
// specification's default), or as OTLP/JSON (Content-Type application/json).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import protobuf from 'protobufjs';

const PROTO_DIR = path.join(__dirname, '..', 'fixtures', 'otlp-proto');

let root: protobuf.Root | undefined;
function protoRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
  r.loadSync(['opentelemetry/proto/collector/logs/v1/logs_service.proto', 'opentelemetry/proto/collector/metrics/v1/metrics_service.proto']);
  return (root = r);
}

export type Attr = string | number | boolean | Attr[] | undefined;

/** An OTLP KeyValue list as a plain object (AnyValue unwrapped; int64 as a number). */
export function attrs(list: unknown): Record<string, Attr> {
  const out: Record<string, Attr> = {};
  for (const kv of (list as Array<{ key: string; value?: Record<string, unknown> }>) ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

function anyValue(v: Record<string, unknown> | undefined): Attr {
  if (v === undefined) return undefined;
  if ('stringValue' in v) return v.stringValue as string;
  if ('boolValue' in v) return v.boolValue as boolean;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(anyValue);
  return undefined;
}

export interface ReceivedLog {
  eventName: string;
  severityText: string;
  body: Attr;
  attributes: Record<string, Attr>;
  resource: Record<string, Attr>;
  scope: string;
}

export interface Received {
  path: string;
  contentType: string;
  headers: http.IncomingHttpHeaders;
  /** The decoded request, as an object (protobufjs' toObject, or the JSON as sent). */
  body: Record<string, unknown>;
  /** The body as received, for looking for text that must not be there. */
  raw: Buffer;
}

export interface OtlpReceiver {
  url: string;
  requests: Received[];
  logs(): ReceivedLog[];
  /** Every data point of the metric `name`, with its attributes and value (a sum's, or a histogram's count and sum). */
  points(name: string): Array<{ attributes: Record<string, Attr>; value?: number; count?: number; sum?: number }>;
  /** Resolves once `test` holds of what was received (checked at each request), or rejects after `ms`. */
  until(test: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** `hang`: take requests and never answer them (a collector that stalls). */
export async function startOtlpReceiver(options: { hang?: boolean } = {}): Promise<OtlpReceiver> {
  const requests: Received[] = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (options.hang) return;
      const raw = Buffer.concat(chunks);
      const contentType = String(req.headers['content-type'] ?? '');
      const kind = req.url === '/v1/logs' ? 'logs' : req.url === '/v1/metrics' ? 'metrics' : undefined;
      if (req.method !== 'POST' || kind === undefined) {
        res.writeHead(404).end();
        return;
      }
      const json = contentType.startsWith('application/json');
      const type = protoRoot().lookupType(kind === 'logs' ? 'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest' : 'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');
      const body = json
        ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>)
        : (type.toObject(type.decode(raw), { longs: String, enums: String, bytes: String }) as Record<string, unknown>);
      requests.push({ path: req.url!, contentType, headers: req.headers, body, raw });
      // An empty Export*ServiceResponse: full success.
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : Buffer.alloc(0));
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const logs = (): ReceivedLog[] =>
    requests.filter((r) => r.path === '/v1/logs').flatMap((r) =>
      ((r.body.resourceLogs as Array<Record<string, unknown>>) ?? []).flatMap((rl) =>
        ((rl.scopeLogs as Array<Record<string, unknown>>) ?? []).flatMap((sl) =>
          ((sl.logRecords as Array<Record<string, unknown>>) ?? []).map((lr) => ({
            eventName: lr.eventName as string,
            severityText: lr.severityText as string,
            body: anyValue(lr.body as Record<string, unknown>),
            attributes: attrs(lr.attributes),
            resource: attrs((rl.resource as { attributes?: unknown } | undefined)?.attributes),
            scope: (sl.scope as { name: string }).name,
          })))));
  const points = (name: string) =>
    requests.filter((r) => r.path === '/v1/metrics').flatMap((r) =>
      ((r.body.resourceMetrics as Array<Record<string, unknown>>) ?? []).flatMap((rm) =>
        ((rm.scopeMetrics as Array<Record<string, unknown>>) ?? []).flatMap((sm) =>
          ((sm.metrics as Array<Record<string, unknown>>) ?? []).filter((m) => m.name === name).flatMap((m) => {
            const data = (m.sum ?? m.histogram ?? m.gauge) as { dataPoints?: Array<Record<string, unknown>> };
            return (data.dataPoints ?? []).map((p) => ({
              attributes: attrs(p.attributes),
              ...(p.asInt !== undefined ? { value: Number(p.asInt) } : p.asDouble !== undefined ? { value: Number(p.asDouble) } : {}),
              ...(p.count !== undefined ? { count: Number(p.count) } : {}),
              ...(p.sum !== undefined ? { sum: Number(p.sum) } : {}),
            }));
          }))));
  return {
    url, requests, logs, points,
    until: (test, ms = 15_000) => new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not received within ${ms} ms: ${JSON.stringify(logs().map((l) => l.eventName))}`)), ms);
      const check = (): void => {
        if (test()) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    }),
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
