// Decisions in OpenTelemetry (docs/teams.md): an audit sink that writes each line to the audit log
// first and then hands it to the process's export, so every line that reaches the audit reaches
// telemetry, and nothing reaches telemetry that the audit did not take. Handing over is a few
// object copies: the SDK's batch processor sends in the background, so export never delays a
// decision, and a dead collector loses records (counted) but never a decision.
//
// One export per process, started with the first line seen while telemetry is on (from the
// variables or the managed policy; its settings then hold for the process). The SDK is loaded on
// the next turn of the event loop from a bundle of its own (otelExport.ts): the line that started
// it waits in a small queue meanwhile, and no process where telemetry is off ever loads it.
import type { AuditEntry, AuditSink } from '../audit/audit.js';
import type { ManagedControls } from '../../policy/rules/managedControls.js';
import type { OtelExport, TelemetryStatus } from './otelExport.js';
import { AskClock, telemetryRecord, type TelemetryRecord } from './telemetryRecords.js';
import { telemetrySettings, type TelemetrySettings } from './telemetrySettings.js';

export interface TelemetryOptions {
  /** The variables that switch it on (default: the process's). */
  env?: NodeJS.ProcessEnv;
  /** The managed controls in force (their `telemetry`), read at every line: a policy reload can switch it. */
  controls?: () => Pick<ManagedControls, 'telemetry'> | undefined;
}

/** Lines kept while the SDK loads; beyond them a line is counted lost. */
const WAITING_MAX = 2048;

interface ProcessExport {
  settings: TelemetrySettings;
  export?: OtelExport;
  waiting: TelemetryRecord[];
  lostWaiting: number;
  failed?: string;
}

let current: ProcessExport | undefined;

/** The SDK's module, required at run time: in a bundle, dist/telemetryExport.js beside it (scripts/bundles.mjs). */
function loadSdk(): typeof import('./otelExport.js') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./otelExport.js') as typeof import('./otelExport.js');
}

function started(p: ProcessExport): OtelExport | undefined {
  if (p.export !== undefined || p.failed !== undefined) return p.export;
  try {
    p.export = loadSdk().startOtelExport(p.settings);
  } catch (error) {
    // No SDK (a bundle missing beside this one): telemetry is lost, decisions go on.
    p.failed = error instanceof Error ? error.message : String(error);
    p.lostWaiting += p.waiting.length;
    p.waiting = [];
    return undefined;
  }
  for (const record of p.waiting.splice(0)) p.export.emit(record);
  return p.export;
}

function emit(settings: TelemetrySettings, record: TelemetryRecord): void {
  if (current === undefined) {
    current = { settings, waiting: [], lostWaiting: 0 };
    const p = current;
    setImmediate(() => started(p)).unref();
  }
  if (current.export !== undefined) current.export.emit(record);
  else if (current.failed !== undefined || current.waiting.length >= WAITING_MAX) current.lostWaiting++;
  else current.waiting.push(record);
}

/**
 * An audit sink that also exports its lines when telemetry is on. Whatever the export does, the
 * inner sink's behaviour is unchanged: its errors still throw (a decision unrecorded must not run),
 * and nothing of the export's ever does.
 */
export class TelemetryAuditSink implements AuditSink {
  private readonly clock = new AskClock();
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    readonly inner: AuditSink,
    private readonly options: TelemetryOptions = {},
  ) {
    this.env = options.env ?? process.env;
  }

  write(entry: AuditEntry): void {
    this.inner.write(entry);
    this.observe(entry, this.auditHead());
  }

  writeAll(entries: readonly AuditEntry[]): void {
    if (this.inner.writeAll) this.inner.writeAll(entries);
    else for (const entry of entries) this.inner.write(entry);
    // The chain's head after the batch goes with its last record.
    entries.forEach((entry, i) => this.observe(entry, i === entries.length - 1 ? this.auditHead() : undefined));
  }

  private auditHead(): string | undefined {
    return this.inner.head;
  }

  close(): void {
    this.inner.close();
  }

  private observe(entry: AuditEntry, auditHead: string | undefined): void {
    try {
      const settings = telemetrySettings(this.env, this.options.controls?.());
      if (settings === undefined) return;
      emit(settings, telemetryRecord(entry, settings.content, this.clock.see(entry), auditHead));
    } catch {
      // Telemetry never stands in a decision's way.
    }
  }
}

/** What this process's export has done, or undefined when telemetry never was on here. */
export function telemetryStatus(): (TelemetryStatus & { waiting: number; lostWaiting: number; failed?: string }) | undefined {
  if (current === undefined) return undefined;
  const base: TelemetryStatus = current.export?.status() ?? { emitted: 0, exported: 0, dropped: { export_failed: 0, queue_full: 0 }, exportFailures: 0, metricExportFailures: 0 };
  return { ...base, waiting: current.waiting.length, lostWaiting: current.lostWaiting, ...(current.failed !== undefined ? { failed: current.failed } : {}) };
}

/**
 * Sends what waits, within `ms`: the SDK loaded now if it was not yet. The short-lived `agentpolicy
 * hook` calls it after its answer is written, with a small bound; what is not sent by then is lost.
 */
export async function flushTelemetry(ms: number): Promise<void> {
  if (current === undefined) return;
  await started(current)?.flush(ms);
}

/** Flushes within `ms` and stops this process's export (a window closing, the decision service stopping). */
export async function shutdownTelemetry(ms: number): Promise<void> {
  const p = current;
  if (p === undefined) return;
  current = undefined;
  await started(p)?.shutdown(ms);
}
