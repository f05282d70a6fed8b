// Whether a process exports its decisions to OpenTelemetry, and what may go out (docs/teams.md,
// "Decisions in OpenTelemetry"). Off unless AGENTPOLICY_ENABLE_TELEMETRY=1 or the managed policy's
// `controls.telemetry.enabled` says so, as Claude Code's CLAUDE_CODE_ENABLE_TELEMETRY. Where it goes
// is the OpenTelemetry SDK's to read from the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, …); only the protocol is chosen here, since the exporters do not read it.
// What a call was about (command text, inputs, paths, summaries, reasons) goes out only when the
// managed policy allows it (`controls.telemetry.content`): no variable of a person's can.
import type { ManagedControls } from '../../policy/rules/managedControls.js';

/** The switch, as CLAUDE_CODE_ENABLE_TELEMETRY is Claude Code's. */
export const TELEMETRY_ENV = 'AGENTPOLICY_ENABLE_TELEMETRY';

/** The OTLP encodings the exporters speak; grpc is not one of them (an http/protobuf export then). */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TelemetrySettings {
  /** Who switched it on: the variable, or the managed policy. */
  readonly from: 'env' | 'managed';
  /** Whether command text, inputs, paths, summaries and reasons are exported (managed policy only). */
  readonly content: boolean;
  /** The logs' and the metrics' encodings: OTEL_EXPORTER_OTLP_{LOGS,METRICS}_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (the specification's default). */
  readonly logsProtocol: OtlpProtocol;
  readonly metricsProtocol: OtlpProtocol;
  /** The managed policy's collector (`controls.telemetry.endpoint`): an OTLP/HTTP base URL that wins over the variables. */
  readonly endpoint?: string;
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes', 'on'].includes(value.trim().toLowerCase());
}

function protocolOf(value: string | undefined): OtlpProtocol | undefined {
  const v = value?.trim().toLowerCase();
  if (v === 'http/json') return 'http/json';
  if (v === 'http/protobuf' || v === 'grpc') return 'http/protobuf';
  return undefined;
}

/**
 * The settings in force, or undefined when nothing is exported. The managed policy may switch it
 * on (`enabled: true`) or off (`enabled: false`, whatever the variable says); when it says
 * nothing, the variable decides.
 */
export function telemetrySettings(env: NodeJS.ProcessEnv, controls?: Pick<ManagedControls, 'telemetry'>): TelemetrySettings | undefined {
  const managed = controls?.telemetry;
  // OTEL_SDK_DISABLED (the specification's switch for every signal) turns off what the variable
  // turned on; it cannot turn off what the managed policy turned on.
  const on = managed?.enabled ?? (truthy(env[TELEMETRY_ENV]) && !truthy(env.OTEL_SDK_DISABLED));
  if (!on) return undefined;
  const general = protocolOf(env.OTEL_EXPORTER_OTLP_PROTOCOL);
  return {
    from: managed?.enabled === true ? 'managed' : 'env',
    content: managed?.content === true,
    logsProtocol: protocolOf(env.OTEL_EXPORTER_OTLP_LOGS_PROTOCOL) ?? general ?? 'http/protobuf',
    metricsProtocol: protocolOf(env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL) ?? general ?? 'http/protobuf',
    ...(managed?.endpoint !== undefined ? { endpoint: managed.endpoint } : {}),
  };
}
