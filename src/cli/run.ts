// `agentpolicy run`: a headless run of one agent from `.agents.jsonc` against the workspace's
// policy. A team runs it in CI to prove a scenario needs no unexpected asks: with no
// `--answer`, every ask stays open and the run ends Blocked (exit 1), listing them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LayerName } from '../policy/rules/compile.js';
import { formatDiagnostic, LineMap, toJson } from '../policy/file/diagnostics.js';
import { loadPolicyText, Policy, type PolicyLayer } from '../policy/policy.js';
import { AllowApproval, DenyApproval, ElicitationAnswer, KeepCallbackOpen, ResultReviewAnswer, SignInAnswer, type OpenCallback } from '../runtime/tree/answers.js';
import { FileAuditLog, type AuditSink } from '../runtime/audit/audit.js';
import { shutdownTelemetry, TelemetryAuditSink } from '../runtime/telemetry/auditTelemetry.js';
import { telemetrySettings } from '../runtime/telemetry/telemetrySettings.js';
import type { RuntimeEvent } from '../runtime/tree/events.js';
import { compact, describeEvent } from '../runtime/host/transcript.js';
import { openAICompatibleFromEnv, providerModelFactory } from '../runtime/providers/index.js';
import { loadWorkspaceAgents } from '../runtime/agents/workspaceAgents.js';
import { loadMcpConfig, type McpInputs } from '../mcp/mcpConfig.js';
import { cliManagedPolicy } from './cliManagedPolicy.js';
import { mcpToolSources } from '../mcp/mcpToolSource.js';
import { describeDefinitionChange } from '../mcp/mcpToolDefinition.js';
import { McpToolPins } from '../mcp/mcpToolPins.js';
import { defaultStateDir } from '../hooks/state/stateDir.js';

export interface RunIo {
  /** Where the state folder is (XDG_STATE_HOME; default: the process's environment). */
  env?: NodeJS.ProcessEnv;
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
}

export interface RunArgs {
  prompt: string;
  workspace?: string;
  agents?: string;
  agent?: string;
  answer?: 'allow' | 'deny' | 'keep';
  policy?: string;
  managed?: string;
  user?: string;
  untrusted?: boolean;
  audit?: string;
  json?: boolean;
}

export class RunUsageError extends Error {}

export async function runCommand(args: RunArgs, io: RunIo): Promise<number> {
  const workspaceFolder = path.resolve(io.cwd, args.workspace ?? '.');
  if (!fs.existsSync(workspaceFolder)) throw new RunUsageError(`--workspace ${args.workspace}: no such folder`);
  const named = (file: string | undefined, flag: string): string | undefined => {
    if (file === undefined) return undefined;
    const full = path.resolve(io.cwd, file);
    if (!fs.existsSync(full)) throw new RunUsageError(`${flag} ${file}: no such file`);
    return full;
  };
  const layers: Partial<Record<LayerName, PolicyLayer>> = {};
  const load = (file: string | undefined, layer: LayerName): void => {
    if (file) layers[layer] = loadPolicyText(fs.readFileSync(file, 'utf8'), path.relative(io.cwd, file) || file, layer);
  };
  // The system managed policy when it counts; --managed only without one.
  const managed = cliManagedPolicy(args.managed !== undefined ? { file: named(args.managed, '--managed')!, from: '--managed' } : undefined, io);
  load(managed.file, 'managed');
  const defaultPolicy = path.join(workspaceFolder, '.agentpolicy.jsonc');
  load(named(args.policy, '--policy') ?? (fs.existsSync(defaultPolicy) ? defaultPolicy : undefined), 'workspace');
  load(named(args.user, '--user'), 'user');

  let invalid = false;
  for (const layer of Object.values(layers)) {
    if (layer.valid) continue;
    invalid = true;
    const lines = new LineMap(layer.parsed.text);
    for (const d of layer.diagnostics) io.err(formatDiagnostic(toJson(d, lines)));
  }

  const models = providerModelFactory({ openaiCompatible: openAICompatibleFromEnv() });
  const mcp = await loadMcpConfig(workspaceFolder);
  if (mcp.diagnostics.length > 0) {
    const lines = new LineMap(mcp.text);
    for (const d of mcp.diagnostics) io.err(formatDiagnostic(toJson(d, lines)));
  }
  // Running the CLI in a repository is consent to its servers, except with --untrusted (a fork's pull request in CI).
  // The tools' definitions pinned for the workspace (docs/mcp.md, "MCP tools pinned"), shared with the extension.
  const pins = new McpToolPins(workspaceFolder, { stateDir: defaultStateDir(io.env ?? process.env) });
  pins.onChanged((changes) => {
    for (const c of changes) io.err(`warning: ${describeDefinitionChange(c.toolId, c.before, c.after)}\n(its calls ask until accepted; \`agentpolicy mcp pins reset ${c.server}/${c.tool}\` pins it as it is now)`);
  });
  const toolSources = mcpToolSources(mcp, {
    workspaceFolder, inputs: mcpInputsFromEnv(), log: (line) => io.err(line), pins,
    confirmStart: async (server) => {
      if (args.untrusted === true) io.err(`warning: the MCP server ${server.name} was not started: --untrusted never starts the servers of .vscode/mcp.json`);
      return args.untrusted !== true;
    },
  });
  // AGENTPOLICY_MODEL: the model of agents that name none (e.g. openai-compatible:mistral-small-latest).
  const loaded = loadWorkspaceAgents({ workspaceFolder, models, toolSources, defaultModel: process.env.AGENTPOLICY_MODEL, ...(args.agents ? { agentsFile: named(args.agents, '--agents')! } : {}) });
  if (loaded.diagnostics.some((d) => d.severity === 'error')) {
    const lines = new LineMap(loaded.parsed?.text ?? '');
    for (const d of loaded.diagnostics) io.err(formatDiagnostic(toJson(d, lines)));
    return 1;
  }
  const agent = args.agent ? loaded.agents.find((a) => a.name === args.agent) : loaded.agents[0];
  if (!agent) throw new RunUsageError(`--agent ${args.agent}: no such agent (${loaded.agents.map((a) => a.name).join(', ')})`);

  const answer = args.answer ?? 'keep';
  const transcript: RuntimeEvent[] = [];
  const policy = Object.keys(layers).length > 0 ? new Policy(layers) : undefined;
  const audit = telemetryAudit(args.audit ? new FileAuditLog(path.resolve(io.cwd, args.audit)) : undefined, policy);
  const session = await agent.startSession({
    workspaceFolder,
    trusted: args.untrusted !== true,
    ...(policy ? { policy } : {}),
    ...(audit ? { audit } : {}),
    onApproval: () => {
      if (answer === 'allow') return new AllowApproval();
      if (answer === 'deny') return new DenyApproval({ reason: 'denied by agentpolicy run --answer deny' });
      return new KeepCallbackOpen();
    },
    onSignIn: (_ctx, sources) =>
      answer === 'keep' ? new KeepCallbackOpen() : new SignInAnswer({ denied: sources.map((s) => s.id) }),
    // A form cannot be filled in headless: a server's request for input is declined, or kept open.
    onElicitation: () => (answer === 'keep' ? new KeepCallbackOpen() : new ElicitationAnswer({ action: 'decline' })),
    // A result held for review: --answer allow passes it, --answer deny withholds it, else it stays open.
    onResultReview: () => (answer === 'keep' ? new KeepCallbackOpen() : new ResultReviewAnswer({ action: answer === 'allow' ? 'pass' : 'withhold' })),
  });
  for (const w of session.warnings) io.err(`warning: ${w}`);
  const collecting = (async () => {
    for await (const e of session.events()) {
      transcript.push(e);
      if (!args.json) for (const line of describeEvent(e, session.id)) io.out(line);
    }
  })();

  const state = await session.run(args.prompt);
  await session.cancel();
  await collecting;
  audit?.close();
  // Decisions in OpenTelemetry: what still waits gets a moment to reach the collector.
  await shutdownTelemetry(TELEMETRY_SHUTDOWN_MS);

  if (args.json) {
    io.out(JSON.stringify({
      agent: agent.name,
      state: state.type,
      ...(state.type === 'completed' ? { text: state.text } : {}),
      ...(state.type === 'failed' ? { error: state.error } : {}),
      ...(state.type === 'blocked' ? { callbacks: state.callbacks.map(describeCallbackJson) } : {}),
      warnings: session.warnings,
      transcript,
    }, null, 2));
  } else if (state.type === 'completed') {
    io.out(`completed: ${state.text}`);
  } else if (state.type === 'failed') {
    io.out(`failed: ${state.error}`);
  } else {
    io.out(`blocked: ${state.callbacks.length} open callback${state.callbacks.length === 1 ? '' : 's'} (run with --answer allow|deny to answer asks; allow passes a result held for review, deny withholds it)`);
    for (const c of state.callbacks) io.out(`  ${describeCallback(c)}`);
  }
  if (invalid) return 1;
  return state.type === 'completed' ? 0 : 1;
}

/** Headless, `${input:id}` values of .vscode/mcp.json come from AGENTPOLICY_MCP_<ID> (upper case, other characters as `_`). */
export function mcpInputsFromEnv(env: NodeJS.ProcessEnv = process.env): McpInputs {
  return { get: async (id) => env[`AGENTPOLICY_MCP_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`] };
}

function describeCallbackJson(c: OpenCallback): Record<string, unknown> {
  const base = { id: c.id, type: c.type, sessionId: c.sessionId, turnId: c.turnId, agent: c.agent };
  if (c.type === 'approval') return { ...base, tool: c.request.tool.id, input: c.request.input, rule: c.request.decision?.rule ?? null, hook: c.request.hook ?? null };
  if (c.type === 'sign-in') return { ...base, sources: c.sources };
  // A held result is untrusted and may be long: its digest and size, never its text.
  if (c.type === 'result-review') return { ...base, tool: c.request.tool.id, input: c.request.input, rule: c.request.decision?.rule ?? null, resultDigest: c.request.digest, resultChars: c.request.chars };
  return { ...base, source: c.request.source.id, tool: c.request.toolId ?? null, message: c.request.message, requestedSchema: c.request.requestedSchema };
}

function describeCallback(c: OpenCallback): string {
  if (c.type === 'sign-in') return `[${c.agent}] sign-in to ${c.sources.map((s) => s.name).join(', ')}`;
  if (c.type === 'elicitation') return `[${c.agent}] ${c.request.source.name} asks: ${compact(c.request.message)}`;
  if (c.type === 'result-review') return `[${c.agent}] the result of ${c.request.tool.id} ${compact(c.request.input)} waits for review (${c.request.chars} characters)`;
  const rule = c.request.decision?.rule;
  const by = c.request.hook ? `hook ${c.request.hook}` : rule ? `${rule.file}:${rule.line}${rule.id ? ` "${rule.id}"` : ''}` : 'the default';
  return `[${c.agent}] ${c.request.tool.id} ${compact(c.request.input)} (asked by ${by})`;
}


/** How long a run's end gives the telemetry still waiting to reach the collector. */
const TELEMETRY_SHUTDOWN_MS = 2000;

/**
 * The run's audit sink, exporting its lines too when telemetry is on (docs/teams.md, "Decisions in
 * OpenTelemetry"): without --audit, a sink that keeps nothing but hands the lines to the export.
 */
function telemetryAudit(file: AuditSink | undefined, policy: Policy | undefined): AuditSink | undefined {
  const controls = (): Policy['controls'] | undefined => policy?.controls;
  if (file === undefined && telemetrySettings(process.env, controls()) === undefined) return undefined;
  return new TelemetryAuditSink(file ?? { write: () => {}, close: () => {} }, { controls });
}
