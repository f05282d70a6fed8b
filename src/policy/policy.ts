// The policy: up to three layers (managed, workspace, user), judged in that order, first
// matching rule wins. This is the engine's main entry point for the CLI, runtime and extension.
import * as os from 'node:os';
import { MAX_SCRIPT_DEPTH, tightenByCommandReach } from './rules/commandReach.js';
import { findNodeAtLocation } from 'jsonc-parser';
import type { ToolCall } from './rules/call.js';
import { compileRules, type CompiledRule, type LayerName, type RuleRef } from './rules/compile.js';
import type { DecideOptions, Explanation, PolicyDecision, TraceEntry } from './rules/decision.js';
import { NO_MARKS } from './rules/flowMarks.js';
import { judgeCall, judgeConnectionParts, sandboxAvailability, type JudgeContext, type JudgedLayer } from './rules/judgement.js';
import { combineConnection, connectionCall, connectionUrl, type ConnectionDecision, type ConnectionTarget } from './rules/connection.js';
import { hasErrors, type Diagnostic } from './file/diagnostics.js';
import { parseJsoncWithSchema, type KnownReading, type ParsedJsonc } from './file/parse.js';
import { PathResolver } from './paths/paths.js';
import { policyFileFastCheck } from './file/policyFileFastCheck.js';
import { PreparedCall } from './rules/preparedCall.js';
import { NO_TOOL_RULES, ToolIndex, type ToolRules } from './rules/toolIndex.js';
import { hintNames } from './file/policyNames.js';
import { compileGlobSet, GlobError } from './globs/globs.js';
import { brokenControls, capRemember, controlsDiagnostics, controlsOf, NO_CONTROLS, type ManagedControls } from './rules/managedControls.js';
import type { Decision, PolicyFile, SandboxMode } from './file/schema.js';

export const LAYER_ORDER: readonly LayerName[] = ['managed', 'workspace', 'user'];

const KNOWN_KEYS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['', ['$schema', 'version', 'default', 'sandbox', 'sandboxServers', 'controls', 'persistenceFiles', 'rules', 'tests']],
  ['rules.#', ['id', 'decision', 'reason', 'tools', 'kinds', 'agents', 'hints', 'tags', 'paths', 'commands', 'domains', 'urls', 'input', 'timeout', 'onTimeout', 'remember', 'sandbox', 'marks', 'when', 'review']],
  ['rules.#.when', ['marked', 'unmarked']],
  ['rules.#.sandbox', ['network', 'env']],
  ['rules.#.hints', hintNames],
  ['controls', ['allowForSession', 'addRule', 'longestGrant', 'mcpServers', 'telemetry']],
  ['controls.mcpServers', ['allow', 'deny']],
  ['controls.telemetry', ['enabled', 'content', 'endpoint']],
  ['tests.#', ['name', 'call', 'expect', 'rule', 'sandbox', 'review', 'hidden']],
  ['tests.#.call', ['tool', 'input', 'kind', 'agent', 'hints', 'tags', 'marks']],
  ['tests.#.call.hints', hintNames],
]);

/** The matchers that make a deny rule on paths conditional: the sandbox hides only what such rules deny unconditionally. */
const CONDITIONAL_MATCHERS = ['kinds', 'agents', 'hints', 'tags', 'commands', 'domains', 'urls', 'input', 'when'] as const;

/** One policy file, parsed and compiled. `valid` is false on any syntax, schema, glob or id error. */
export class PolicyLayer {
  readonly valid: boolean;
  readonly rules: readonly CompiledRule[];
  readonly default: Decision | undefined;
  /** Structural diagnostics: syntax, schema, bad-glob, duplicate-id. Lint and tests add their own. */
  readonly diagnostics: readonly Diagnostic[];
  private readonly index: ToolIndex;

  constructor(
    readonly layer: LayerName,
    readonly file: string,
    readonly parsed: ParsedJsonc<PolicyFile>,
  ) {
    const diagnostics = [...parsed.diagnostics];
    let rules: CompiledRule[] = [];
    if (parsed.value) {
      // A reading validated before compiles its matchers as calls need them: a hook process judges one call.
      const compiled = compileRules(parsed.value.rules, parsed, parsed.lines, file, layer, parsed.fromKnownReading === true);
      rules = compiled.rules;
      diagnostics.push(...compiled.diagnostics);
      if (parsed.value.sandbox === 'off' && layer === 'workspace') {
        // A reviewed workspace file may tighten the sandbox, never turn it off for everyone who opens it.
        const node = parsed.root ? findNodeAtLocation(parsed.root, ['sandbox']) : undefined;
        diagnostics.push({
          file, severity: 'error', code: 'schema', offset: node?.offset ?? 0, length: node?.length ?? 1,
          message: '"sandbox": "off" is allowed only in the managed or user policy; a workspace policy may say "required" or "auto"',
        });
      }
      diagnostics.push(...controlsDiagnostics(parsed.value, () => parsed.root, file, layer));
      parsed.value.sandboxServers?.forEach((glob, i) => {
        try {
          compileGlobSet([glob], 'name');
        } catch (error) {
          if (!(error instanceof GlobError)) throw error;
          const node = parsed.root ? findNodeAtLocation(parsed.root, ['sandboxServers', i]) : undefined;
          diagnostics.push({ file, severity: 'error', code: 'bad-glob', offset: node?.offset ?? 0, length: node?.length ?? 1, message: error.message });
        }
      });
    }
    this.valid = parsed.value !== undefined && !hasErrors(diagnostics);
    // An invalid file contributes no rules and no default: it is never consulted as if it were good.
    this.rules = this.valid ? rules : [];
    this.default = this.valid ? parsed.value?.default : undefined;
    this.diagnostics = diagnostics;
    this.index = new ToolIndex(this.rules);
  }

  get policy(): PolicyFile | undefined {
    return this.valid ? this.parsed.value : undefined;
  }

  /** The rules whose `tools` match this id (or that have no `tools`), in file order. */
  candidates(toolId: string): readonly CompiledRule[] {
    return this.index.forTool(toolId).candidates;
  }

  /** Those candidates, with their indexes by leading literal words and path segments. */
  forTool(toolId: string): ToolRules {
    return this.index.forTool(toolId);
  }
}

/**
 * Reads and compiles one policy file. `known`: how this exact text was read and validated before
 * (`agentpolicy hook` keeps it by the text's digest), used without reading or validating again.
 */
export function loadPolicyText(text: string, file: string, layer: LayerName = 'workspace', known?: KnownReading): PolicyLayer {
  return new PolicyLayer(layer, file, parseJsoncWithSchema(text, file, policyFileSchema, { what: 'the policy file', knownKeys: KNOWN_KEYS, fastValidate: policyFileFastCheck, ...(known ? { known } : {}) }));
}

/**
 * The schema, built at its first use: its zod objects cost tens of milliseconds, which a hook
 * that finds its policy already validated never pays. (The bundler keeps a required module lazy.)
 */
function policyFileSchema(): typeof import('./file/schema.js').PolicyFileSchema {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./file/schema.js') as typeof import('./file/schema.js')).PolicyFileSchema;
}

/**
 * A layer as it is in force. `stale` means the file is invalid now and its last valid version
 * still applies; a layer whose file never was valid is `broken`: every call that reaches it is asked.
 */
export type LayerState =
  | { kind: 'ok'; layer: PolicyLayer; stale?: { current: PolicyLayer } }
  | { kind: 'broken'; current: PolicyLayer };

/** The state after loading a new version of a layer's file: a broken file never replaces a good one. */
export function nextLayerState(previous: LayerState | undefined, loaded: PolicyLayer): LayerState {
  if (loaded.valid) return { kind: 'ok', layer: loaded };
  if (previous?.kind === 'ok') return { kind: 'ok', layer: previous.layer, stale: { current: loaded } };
  return { kind: 'broken', current: loaded };
}

export type { AskSettings, DecideOptions, Explanation, PartDecision, PolicyDecision, SandboxRun, TraceEntry } from './rules/decision.js';

/** Up to three layers in force, judged together. */
export class Policy {
  private readonly states: ReadonlyArray<{ name: LayerName; state: LayerState }>;
  private readonly resolvers = new Map<string, PathResolver>();
  private readonly judgedLayers: readonly JudgedLayer[];
  /** Some rule in force has `domains` or `urls`: only then is a call split by its URLs. */
  private readonly readsUrls: boolean;
  /** The layers never change: what every decision reads of them is worked out once. */
  private readonly sandboxModeInForce: { mode: SandboxMode; from: LayerName | null };
  /** The warning each stale layer puts on every decision. */
  private readonly staleWarnings: readonly string[];

  constructor(layers: Partial<Record<LayerName, LayerState | PolicyLayer>>) {
    this.states = LAYER_ORDER.flatMap((name) => {
      const given = layers[name];
      if (given === undefined) return [];
      const state = given instanceof PolicyLayer ? nextLayerState(undefined, given) : given;
      return [{ name, state }];
    });
    this.judgedLayers = this.states.map(({ name, state }): JudgedLayer =>
      state.kind === 'broken'
        ? { name, broken: state.current.file, forTool: () => NO_TOOL_RULES }
        : { name, forTool: (toolId) => state.layer.forTool(toolId) });
    this.readsUrls = this.states.some(({ state }) => state.kind === 'ok' && state.layer.rules.some((r) => r.rule.domains !== undefined || r.rule.urls !== undefined));
    this.sandboxModeInForce = sandboxModeOf(this.states);
    this.staleWarnings = this.states.flatMap(({ state }) =>
      state.kind === 'ok' && state.stale ? [`${state.stale.current.file} is invalid; its last valid version is in force`] : []);
  }

  /** Every layer's file as it is now, valid or not. */
  get layers(): ReadonlyArray<{ name: LayerName; state: LayerState }> {
    return this.states;
  }

  /**
   * The managed controls in force (managedControls.ts): the managed layer's valid version (also
   * when stale), the strictest when it never was valid, none without a managed layer. Only the
   * managed layer is read: any other layer's `controls` made that file invalid.
   */
  get controls(): ManagedControls {
    return (this.managedControls ??= controlsIn(this.states));
  }

  private managedControls: ManagedControls | undefined;

  /** True when some layer is invalid (stale or broken). */
  get degraded(): boolean {
    return this.states.some(({ state }) => state.kind === 'broken' || state.stale !== undefined);
  }

  /** The default, from the first valid layer that sets one. */
  defaultDecision(fallback: Decision = 'ask'): { decision: Decision; from: LayerName | null } {
    for (const { name, state } of this.states) {
      if (state.kind === 'ok' && state.layer.default !== undefined) return { decision: state.layer.default, from: name };
    }
    return { decision: fallback, from: null };
  }

  /**
   * The top-level `sandbox` setting, from the first valid layer that sets one (default `auto`).
   * A workspace file cannot say `off` (that is a schema error), so only managed and user layers turn it off.
   */
  sandboxMode(): { mode: SandboxMode; from: LayerName | null } {
    return this.sandboxModeInForce;
  }

  /**
   * The persistence files the policy adds (the top-level `persistenceFiles` of every valid layer,
   * in layer order, each once): protected like the built-in ones (docs/sandbox.md).
   */
  persistenceFiles(): string[] {
    const out = new Set<string>();
    for (const { state } of this.states) {
      if (state.kind === 'ok') for (const f of state.layer.policy?.persistenceFiles ?? []) out.add(f);
    }
    return [...out];
  }

  /**
   * Whether the stdio process of the MCP server `name` must run in the sandbox (docs/mcp.md,
   * "Sandboxed servers"): the layers whose top-level `sandboxServers` names it, in layer order,
   * or undefined when none does. Every layer counts (a union): a layer adds servers to the list
   * and never takes one out of another layer's, so a workspace cannot unsandbox what the managed
   * or user policy sandboxes (its `!` globs narrow its own list only). A stale layer counts with
   * its last valid version; a broken one (invalid, never valid in this window) names every
   * server: a broken policy never runs more outside the sandbox than the last good one. Workspace
   * trust does not matter: the list only ever tightens.
   */
  sandboxedServer(name: string): { layers: LayerName[]; reason: string } | undefined {
    const layers: LayerName[] = [];
    const why: string[] = [];
    for (const { name: layer, state } of this.states) {
      if (state.kind === 'broken') {
        layers.push(layer);
        why.push(`the ${layer} policy ${state.current.file} is invalid (and has no valid version in force), so every server runs sandboxed`);
        continue;
      }
      const globs = state.layer.policy?.sandboxServers;
      if (globs !== undefined && compileGlobSet(globs, 'name').test(name)) {
        layers.push(layer);
        why.push(`the ${layer} policy ${state.layer.file} names it in "sandboxServers"`);
      }
    }
    return layers.length === 0 ? undefined : { layers, reason: why.join('; ') };
  }

  /**
   * The `deny` rules that make paths unreadable inside the sandbox too (policy-format.md,
   * "Sandboxed commands", Reads), each with its `paths` as written (`!` excludes included), in
   * layer order: those whose only matcher is `paths`, or `paths` with `tools` whose every
   * positive glob names one of `readTools` (the runtime's read tools; `!` globs only narrow it).
   * Any other matcher (agents, commands, input, when…) makes the rule conditional, and the
   * sandbox cannot tell: such a rule judges the tools as before and hides nothing. Rule order is
   * not weighed: an earlier allow of the same path does not show it to commands.
   */
  unreadablePathRules(readTools: ReadonlySet<string>): Array<{ layer: LayerName; rule: RuleRef; paths: readonly string[] }> {
    const out: Array<{ layer: LayerName; rule: RuleRef; paths: readonly string[] }> = [];
    for (const { name, state } of this.states) {
      if (state.kind !== 'ok') continue;
      for (const { rule, ref } of state.layer.rules) {
        if (rule.decision !== 'deny' || rule.paths === undefined) continue;
        if (CONDITIONAL_MATCHERS.some((key) => rule[key] !== undefined)) continue;
        const tools = rule.tools;
        if (tools !== undefined && !(tools.some((t) => !t.startsWith('!')) && tools.every((t) => t.startsWith('!') || readTools.has(t)))) continue;
        out.push({ layer: name, rule: ref, paths: rule.paths });
      }
    }
    return out;
  }

  decide(call: ToolCall, options: DecideOptions): PolicyDecision {
    return this.evaluate(call, options, undefined);
  }

  explain(call: ToolCall, options: DecideOptions): Explanation {
    const trace: TraceEntry[] = [];
    return { ...this.evaluate(call, options, trace), trace };
  }

  /**
   * One connection a sandboxed command opens (connection.ts): what the rules with `domains` or
   * `urls` say about its host for that command, for the agent whose command it is.
   */
  judgeConnection(command: string, target: ConnectionTarget, agent: string, options: DecideOptions): ConnectionDecision {
    const call = connectionCall(command, target, agent);
    const prepared = new PreparedCall(call, this.resolver(options), false, false);
    const parts = judgeConnectionParts(prepared, this.judgeContext(call, options));
    return combineConnection(parts, connectionUrl(target));
  }

  /**
   * The hosts the rules name exactly (a `domains` entry without `*`, the host of a `urls` entry
   * without one): a name that resolves to loopback, link-local or this machine is refused by the
   * sandbox's proxy unless it is one of these.
   */
  namedHosts(): readonly string[] {
    // A policy does not change once made: the list is made at the first sandboxed run and kept.
    this.namedHostList ??= this.findNamedHosts();
    return this.namedHostList;
  }

  private namedHostList: readonly string[] | undefined;

  private findNamedHosts(): string[] {
    const hosts = new Set<string>();
    for (const { state } of this.states) {
      if (state.kind !== 'ok') continue;
      for (const { rule } of state.layer.rules) {
        for (const d of rule.domains ?? []) if (!d.startsWith('!') && !d.includes('*')) hosts.add(d.toLowerCase());
        for (const u of rule.urls ?? []) {
          const host = /^[a-z][a-z0-9+.-]*:\/\/([^/:?#*]+)(?=[/:?#]|$)/i.exec(u)?.[1];
          if (host !== undefined) hosts.add(host.toLowerCase());
        }
      }
    }
    return [...hosts];
  }

  private judgeContext(call: ToolCall, options: DecideOptions): JudgeContext {
    const sandboxMode = this.sandboxMode();
    return {
      layers: this.judgedLayers,
      trusted: options.trusted ?? true,
      fallback: this.fallbackFor(options.fallbackDefault),
      sandboxMode,
      sandbox: sandboxAvailability(call.tool.id, sandboxMode, options),
      marks: options.marks ?? NO_MARKS,
    };
  }

  private resolver(options: DecideOptions): PathResolver {
    // A session decides every call for one folder: the last resolver answers without building a key.
    const follow = options.followSymlinks !== false;
    const last = this.lastResolver;
    if (last && last.folder === options.workspaceFolder && last.follow === follow) return last.resolver;
    const key = `${follow ? 'y' : 'n'}:${options.workspaceFolder}`;
    let r = this.resolvers.get(key);
    if (!r) this.resolvers.set(key, (r = new PathResolver(options.workspaceFolder, { followSymlinks: follow })));
    this.lastResolver = { folder: options.workspaceFolder, follow, resolver: r };
    return r;
  }

  private lastResolver: { folder: string; follow: boolean; resolver: PathResolver } | undefined;

  /** The default for each fallback a caller passes (the policy never changes: worked out once each). */
  private fallbackFor(fallback: Decision | undefined): { decision: Decision; from: LayerName | null } {
    const key = fallback ?? 'ask';
    return (this.fallbacks[key] ??= this.defaultDecision(key));
  }

  private readonly fallbacks: Partial<Record<Decision, { decision: Decision; from: LayerName | null }>> = {};

  /**
   * A command's decision, tightened by the rules on `paths` for the files its words name
   * (commandPaths.ts): each is judged as the read tool reading it, and each file it is known to
   * write as the write tool writing it; a rule with `paths` that denies that read or write denies
   * the command, one that asks makes an allowed command ask. Only tightens.
   */
  /** Whether the rule a decision names has a `paths` matcher. */
  private ruleNamesPaths(ref: RuleRef): boolean {
    const state = this.states.find((s) => s.name === ref.layer)?.state;
    return state?.kind === 'ok' && state.layer.rules[ref.index]?.rule.paths !== undefined;
  }

  private evaluate(call: ToolCall, options: DecideOptions, trace: TraceEntry[] | undefined, depth = 0): PolicyDecision {
    const prepared = new PreparedCall(call, this.resolver(options), this.readsUrls);
    const context = this.judgeContext(call, options);
    const warnings: string[] = this.staleWarnings.length === 0 ? [] : [...this.staleWarnings];
    let decision = judgeCall(prepared, context, warnings, trace);
    if (call.tool.id === 'builtin.run_command' && decision.decision !== 'deny' && options.commandPaths !== false && prepared.command.present) {
      const before = decision;
      decision = tightenByCommandReach(decision, prepared.command.commands, {
        workspace: options.workspaceFolder,
        home: options.home ?? os.homedir(),
        judgeFile: (tool, file) => {
          const fileCall: ToolCall = { tool, input: { path: file }, agent: call.agent };
          const judged = judgeCall(new PreparedCall(fileCall, this.resolver(options), false), this.judgeContext(fileCall, options), [], undefined);
          return judged.rule !== null && this.ruleNamesPaths(judged.rule) ? judged : undefined;
        },
        rules: () => this.states.flatMap(({ state }) => (state.kind === 'ok' ? state.layer.rules : [])),
        judgeCommand: (command) => (depth >= MAX_SCRIPT_DEPTH ? undefined : this.evaluate({ ...call, input: { ...(call.input as object), command } }, options, undefined, depth + 1)),
      });
      // The trace ends at the rule that decided: one the command's reach made decide is its last entry.
      if (trace !== undefined && decision !== before && decision.rule !== null) trace.push({ rule: decision.rule, decision: decision.decision, failed: null, reach: true, ...(decision.reason !== undefined ? { why: decision.reason } : {}) });
    }
    addCallWarnings(decision.warnings, prepared);
    if (decision.ask !== undefined) {
      // The managed controls cap every grant a person may give; the ask settings may be shared, so a new object.
      const capped = capRemember(decision.ask.remember, this.controls);
      if (capped.cappedBy !== undefined) decision.ask = { ...decision.ask, remember: capped.remember, cappedBy: capped.cappedBy };
    }
    return decision;
  }
}


function sandboxModeOf(states: ReadonlyArray<{ name: LayerName; state: LayerState }>): { mode: SandboxMode; from: LayerName | null } {
  for (const { name, state } of states) {
    const mode = state.kind === 'ok' ? state.layer.policy?.sandbox : undefined;
    if (mode !== undefined) return { mode, from: name };
  }
  return { mode: 'auto', from: null };
}

function controlsIn(states: ReadonlyArray<{ name: LayerName; state: LayerState }>): ManagedControls {
  const managed = states.find((s) => s.name === 'managed')?.state;
  if (managed === undefined) return NO_CONTROLS;
  if (managed.kind === 'broken') return brokenControls(managed.current.file);
  return controlsOf(managed.layer.file, managed.layer.policy?.controls);
}

/**
 * Warnings about the call itself, from what every judgement works out anyway (its path values
 * and command) and never from what only some rules make the engine compute: rules after the
 * deciding one must not change a decision, its warnings included. So a path is named outside
 * the folder as written; where a symbolic link really takes it shows in the parts and the trace.
 */
function addCallWarnings(warnings: string[], call: PreparedCall): void {
  for (const value of call.pathsOutsideAsWritten()) warnings.push(`path ${value} is outside the workspace folder`);
  if (call.pathValues.opaque) warnings.push('a path argument is not a string');
  const command = call.command;
  if (command.present && !command.parsed) warnings.push('the command could not be parsed as shell');
}
