// The policy: up to three layers (managed, workspace, user), judged in that order, first
// matching rule wins. This is the engine's main entry point for the CLI, runtime and extension.
import type { ToolCall } from './call.js';
import { compileRules, mismatch, PreparedCall, type CompiledRule, type LayerName, type MatcherName, type RuleRef } from './compile.js';
import { hasErrors, type Diagnostic } from './diagnostics.js';
import { literalPrefix } from './globs.js';
import { parseJsoncWithSchema, type ParsedJsonc } from './parse.js';
import { PathResolver } from './paths.js';
import { hintNames, PolicyFileSchema, type Decision, type PolicyFile } from './schema.js';

export const LAYER_ORDER: readonly LayerName[] = ['managed', 'workspace', 'user'];

const KNOWN_KEYS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['', ['$schema', 'version', 'default', 'rules', 'tests']],
  ['rules.#', ['id', 'decision', 'reason', 'tools', 'kinds', 'agents', 'hints', 'tags', 'paths', 'commands', 'input', 'timeout', 'onTimeout', 'remember']],
  ['rules.#.hints', hintNames],
  ['tests.#', ['name', 'call', 'expect', 'rule']],
  ['tests.#.call', ['tool', 'input', 'kind', 'agent', 'hints', 'tags']],
  ['tests.#.call.hints', hintNames],
]);

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
      const compiled = compileRules(parsed.value.rules, parsed.root, parsed.lines, file, layer);
      rules = compiled.rules;
      diagnostics.push(...compiled.diagnostics);
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
    return this.index.candidates(toolId);
  }
}

export function loadPolicyText(text: string, file: string, layer: LayerName = 'workspace'): PolicyLayer {
  return new PolicyLayer(layer, file, parseJsoncWithSchema(text, file, PolicyFileSchema, { what: 'the policy file', knownKeys: KNOWN_KEYS }));
}

/**
 * Rules indexed by the literal prefix of their tool globs, with the answer per tool id
 * remembered: a session calls few distinct tools many times.
 */
class ToolIndex {
  private readonly byPrefix = new Map<string, number[]>();
  private readonly memo = new Map<string, readonly CompiledRule[]>();
  private static readonly MEMO_LIMIT = 4096;

  constructor(private readonly rules: readonly CompiledRule[]) {
    rules.forEach((rule, i) => {
      const prefixes = rule.tools ? new Set(rule.tools.positives.map(literalPrefix)) : new Set(['']);
      for (const prefix of prefixes) {
        let list = this.byPrefix.get(prefix);
        if (!list) this.byPrefix.set(prefix, (list = []));
        list.push(i);
      }
    });
  }

  candidates(toolId: string): readonly CompiledRule[] {
    const known = this.memo.get(toolId);
    if (known) return known;
    const hits = new Set<number>();
    for (let len = 0; len <= toolId.length; len++) {
      const list = this.byPrefix.get(toolId.slice(0, len));
      if (list) for (const i of list) hits.add(i);
    }
    const result = [...hits].sort((a, b) => a - b).map((i) => this.rules[i]!).filter((r) => !r.tools || r.tools.test(toolId));
    if (this.memo.size >= ToolIndex.MEMO_LIMIT) this.memo.clear();
    this.memo.set(toolId, result);
    return result;
  }
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

export interface DecideOptions {
  /** The folder paths resolve against. */
  workspaceFolder: string;
  /** VS Code workspace trust (CLI --untrusted): when false the workspace layer can only tighten. */
  trusted?: boolean;
  /** The decision when no rule decides and no layer sets `default` (the runtime's permissionMode). */
  fallbackDefault?: Decision;
  /** Resolve symbolic links (default true). */
  followSymlinks?: boolean;
}

export interface AskSettings {
  timeout?: number;
  onTimeout: 'deny' | 'keep';
  remember: 'session' | 'never';
}

/** The decision object of policy-format.md, with a few additions (`defaultFrom`, `ask`). */
export interface PolicyDecision {
  decision: Decision;
  rule: RuleRef | null;
  reason?: string;
  lowered: boolean;
  warnings: string[];
  /** When no rule decided: the layer whose `default` applied, or null for the built-in default. */
  defaultFrom?: LayerName | null;
  /** For `ask`: how the question behaves. */
  ask?: AskSettings;
}

export interface TraceEntry {
  rule: RuleRef;
  decision: Decision;
  /** null: it matched (and so decided). */
  failed: MatcherName | null;
}

export interface Explanation extends PolicyDecision {
  /** Every rule that was tested, in order, and the first matcher that failed for it. */
  trace: TraceEntry[];
}

const LOWERED_REASON = 'the workspace is not trusted, so its allow rules and default only ask';

/** Up to three layers in force, judged together. */
export class Policy {
  private readonly states: ReadonlyArray<{ name: LayerName; state: LayerState }>;
  private readonly resolvers = new Map<string, PathResolver>();

  constructor(layers: Partial<Record<LayerName, LayerState | PolicyLayer>>) {
    this.states = LAYER_ORDER.flatMap((name) => {
      const given = layers[name];
      if (given === undefined) return [];
      const state = given instanceof PolicyLayer ? nextLayerState(undefined, given) : given;
      return [{ name, state }];
    });
  }

  /** Every layer's file as it is now, valid or not. */
  get layers(): ReadonlyArray<{ name: LayerName; state: LayerState }> {
    return this.states;
  }

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

  decide(call: ToolCall, options: DecideOptions): PolicyDecision {
    return this.evaluate(call, options, undefined);
  }

  explain(call: ToolCall, options: DecideOptions): Explanation {
    const trace: TraceEntry[] = [];
    return { ...this.evaluate(call, options, trace), trace };
  }

  private resolver(options: DecideOptions): PathResolver {
    const key = `${options.followSymlinks === false ? 'n' : 'y'}:${options.workspaceFolder}`;
    let r = this.resolvers.get(key);
    if (!r) this.resolvers.set(key, (r = new PathResolver(options.workspaceFolder, { followSymlinks: options.followSymlinks ?? true })));
    return r;
  }

  private evaluate(call: ToolCall, options: DecideOptions, trace: TraceEntry[] | undefined): PolicyDecision {
    const prepared = new PreparedCall(call, this.resolver(options));
    const trusted = options.trusted ?? true;
    const warnings: string[] = [];
    for (const { name, state } of this.states) {
      if (state.kind === 'broken') {
        return {
          decision: 'ask', rule: null, lowered: false, defaultFrom: null,
          reason: `the ${name} policy ${state.current.file} is invalid and has no valid version in force, so every call it could decide is asked`,
          warnings: [`${state.current.file} is invalid`],
          ask: { onTimeout: 'deny', remember: 'never' },
        };
      }
      if (state.stale) warnings.push(`${state.stale.current.file} is invalid; its last valid version is in force`);
      for (const rule of state.layer.candidates(call.tool.id)) {
        const failed = mismatch(rule, prepared, true);
        trace?.push({ rule: rule.ref, decision: rule.decision, failed });
        if (failed !== null) continue;
        const lowered = rule.decision === 'allow' && name === 'workspace' && !trusted;
        const decision: Decision = lowered ? 'ask' : rule.decision;
        const result: PolicyDecision = { decision, rule: rule.ref, lowered, warnings: addCallWarnings(warnings, prepared) };
        const reason = lowered ? joinReasons(rule.rule.reason, LOWERED_REASON) : rule.rule.reason;
        if (reason !== undefined) result.reason = reason;
        if (decision === 'ask') {
          result.ask = {
            onTimeout: rule.rule.onTimeout ?? 'deny',
            remember: rule.rule.remember ?? 'session',
            ...(rule.rule.timeout !== undefined ? { timeout: rule.rule.timeout } : {}),
          };
        }
        return result;
      }
    }
    const fallback = this.defaultDecision(options.fallbackDefault);
    const lowered = fallback.decision === 'allow' && fallback.from === 'workspace' && !trusted;
    const result: PolicyDecision = {
      decision: lowered ? 'ask' : fallback.decision,
      rule: null,
      lowered,
      warnings: addCallWarnings(warnings, prepared),
      defaultFrom: fallback.from,
    };
    if (lowered) result.reason = LOWERED_REASON;
    if (result.decision === 'ask') result.ask = { onTimeout: 'deny', remember: 'session' };
    return result;
  }
}

function joinReasons(a: string | undefined, b: string): string {
  return a ? `${a} (${b})` : b;
}

/** Warnings about what was worked out for the call anyway; nothing is computed just to warn. */
function addCallWarnings(warnings: string[], call: PreparedCall): string[] {
  const p = call.peek();
  if (p.paths) {
    for (const path of p.paths.paths) if (path.relative === null) warnings.push(`path ${path.absolute} is outside the workspace folder`);
    if (p.paths.opaque) warnings.push('a path argument is not a string');
  }
  if (p.command && p.command.present && !p.command.parsed) warnings.push('the command could not be parsed as shell');
  return warnings;
}
