// Policy engine benchmark: compile time, time per decision and heap of generated policies.
// `benchPolicy` measures one generated policy and returns table rows; `run.ts` calls it for
// each size and kind, and other benchmarks can call it (or `measure*`) for rows of their own.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ToolCall } from '../src/policy/rules/call.js';
import { forgetCompiledGlobs } from '../src/policy/globs/globs.js';
import { PathResolver } from '../src/policy/paths/paths.js';
import { loadPolicyText, Policy, type DecideOptions } from '../src/policy/policy.js';
import { splitCommand } from '../src/policy/shell/shellSplit.js';
import { listFilesTool, readFileTool } from '../src/runtime/tools/fileReadTools.js';
import { median, type BenchRow, type Target } from './table.js';

export type PolicyKind = 'id-only' | 'matchers';

export interface GeneratedPolicy {
  kind: PolicyKind;
  rules: number;
  text: string;
  /** Varied calls that reach rules across the whole list (and some that reach no rule). */
  calls: ToolCall[];
  /** Workspace-relative files the calls read, which should exist for a realistic run. */
  files: string[];
}

// ---------------------------------------------------------------------------------------
// Generation: deterministic (seeded), so runs compare.

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DECISIONS = ['allow', 'ask', 'deny'] as const;
const FAMILIES = ['mcp', 'connector', 'plugin', 'client', 'builtin'] as const;
const POOL_SIZE = 600;
/** Share of pool calls that target no rule (they fall to the default after every candidate). */
const UNMATCHED = 0.15;

/** The rule a pool call aims at: spread evenly over the list, so early and late rules decide. */
function targetRule(j: number, rules: number, random: () => number): number {
  return Math.min(rules - 1, Math.floor(((j + random()) / POOL_SIZE) * rules));
}

/**
 * (a) Rules with only `tools`: a mix of exact ids and `prefix.*` globs (some with `!` excludes),
 * decisions mixed, over five id families.
 */
export function generateIdOnly(rules: number, seed = 1): GeneratedPolicy {
  const random = rng(seed);
  const list: object[] = [];
  for (let i = 0; i < rules; i++) {
    const fam = FAMILIES[i % FAMILIES.length]!;
    const decision = DECISIONS[Math.floor(random() * 3)]!;
    let tools: string[];
    switch (i % 4) {
      case 0: tools = [`${fam}.g${i}.*`]; break;
      case 1: tools = [`${fam}.s${i}.op`]; break;
      case 2: tools = [`${fam}.s${i}.read`, `${fam}.s${i}.write`]; break;
      default: tools = [`${fam}.h${i}.*`, `!${fam}.h${i}.admin_*`]; break;
    }
    list.push({ id: `r${i}`, tools, decision });
  }
  const calls: ToolCall[] = [];
  for (let j = 0; j < POOL_SIZE; j++) {
    const input = { query: `query ${j}`, limit: j % 50 };
    if (random() < UNMATCHED) {
      calls.push({ tool: { id: `mcp.unlisted${j}.tool` }, input, agent: 'main' });
      continue;
    }
    const i = targetRule(j, rules, random);
    const fam = FAMILIES[i % FAMILIES.length]!;
    let id: string;
    switch (i % 4) {
      case 0: id = `${fam}.g${i}.tool${j}`; break;
      case 1: id = `${fam}.s${i}.op`; break;
      case 2: id = `${fam}.s${i}.${j % 2 ? 'read' : 'write'}`; break;
      default: id = `${fam}.h${i}.${j % 5 === 0 ? 'admin_' : ''}tool${j}`; break;
    }
    calls.push({ tool: { id }, input, agent: 'main' });
  }
  return { kind: 'id-only', rules, text: policyText(list), calls, files: [] };
}

const READ_TOOLS = ['builtin.read_file', 'builtin.list_files'];

/** A builtin tool as the runtime describes it to the engine: its id, and the read tools' annotations. */
export function builtinTool(id: string): ToolCall['tool'] {
  const tool = id === 'builtin.read_file' ? readFileTool() : id === 'builtin.list_files' ? listFilesTool() : undefined;
  return tool ? { id, annotations: tool.annotations } : { id };
}
const WRITE_TOOLS = ['builtin.write_file', 'builtin.edit_file'];

/**
 * (b) Rules with `paths` (on the builtin file tools), `commands` (on builtin.run_command) and
 * `input` matchers (on MCP tools), a third each, decisions mixed. The path and command rules
 * share a few tool ids, as in a real policy, so the tool index narrows them little.
 */
export function generateMatchers(rules: number, seed = 2): GeneratedPolicy {
  const random = rng(seed);
  const list: object[] = [];
  for (let i = 0; i < rules; i++) {
    const decision = DECISIONS[Math.floor(random() * 3)]!;
    const variant = Math.floor(i / 3) % 3;
    switch (i % 3) {
      case 0: {
        const tools = (Math.floor(i / 3) % 2 === 0) ? READ_TOOLS : WRITE_TOOLS;
        const paths = [
          [`area${i}/**`, `!area${i}/**/*.key`],
          [`area${i}/src/**/*.ts`],
          [`area${i}/docs/*.md`, `area${i}/README.md`],
        ][variant]!;
        list.push({ id: `r${i}`, tools, paths, decision });
        break;
      }
      case 1: {
        const commands = [[`tool${i} build *`, `tool${i} test`], [`npm run task${i} *`], [`git -C repo${i} *`]][variant]!;
        list.push({ id: `r${i}`, tools: ['builtin.run_command'], commands, decision });
        break;
      }
      default: {
        const input = [
          { '/to': `*@d${i}.example.com` },
          { '/level': { equals: i % 5 }, '/dry_run': { exists: false } },
          { '/channel': { regex: `^team-${i}-[a-z]+$` } },
        ][variant]!;
        list.push({ id: `r${i}`, tools: [variant === 0 ? `mcp.svc${i}.*` : `mcp.svc${i}.send`], input, decision });
      }
    }
  }
  const calls: ToolCall[] = [];
  const files = new Set<string>();
  for (let j = 0; j < POOL_SIZE; j++) {
    const hit = random() >= UNMATCHED;
    const i = targetRule(j, rules, random);
    const variant = Math.floor(i / 3) % 3;
    const area = hit ? i : rules + j;
    switch (i % 3) {
      case 0: {
        const read = Math.floor(i / 3) % 2 === 0;
        const tool = (read ? READ_TOOLS : WRITE_TOOLS)[j % 2]!;
        const one = [`area${area}/lib/m${j}.js`, `area${area}/src/deep/m${j}.ts`, `area${area}/docs/p${j}.md`][variant]!;
        // Every fourth call names two paths (every part must match an allow).
        const paths = j % 4 === 0 ? [one, `area${area}/src/m${j}b.ts`] : [one];
        if (read || tool === 'builtin.edit_file') for (const p of paths) files.add(p);
        calls.push({ tool: builtinTool(tool), input: paths.length === 1 ? { path: paths[0] } : { paths }, agent: 'main' });
        break;
      }
      case 1: {
        const first = [`tool${area} build --target t${j}`, `npm run task${area} -- --shard ${j}`, `git -C repo${area} log -n ${j}`][variant]!;
        // Some chains and substitutions: every simple command counts.
        const command = j % 5 === 0 ? `${first} && echo done-${j}` : j % 7 === 0 ? `${first} --since "$(date +%s)"` : first;
        calls.push({ tool: { id: 'builtin.run_command' }, input: { command }, agent: 'main' });
        break;
      }
      default: {
        const input = [
          { to: `user${j}@d${area}.example.com`, subject: `report ${j}` },
          { level: hit ? area % 5 : 9, message: `m${j}` },
          { channel: `team-${area}-ops`, text: `hello ${j}` },
        ][variant]!;
        calls.push({ tool: { id: variant === 0 ? `mcp.svc${area}.op${j % 3}` : `mcp.svc${area}.send` }, input, agent: 'main' });
      }
    }
  }
  return { kind: 'matchers', rules, text: policyText(list), calls, files: [...files] };
}

function policyText(rules: object[]): string {
  return `// generated for the benchmark\n{\n  "version": 1,\n  "default": "ask",\n  "rules": [\n${rules
    .map((r) => `    ${JSON.stringify(r)}`)
    .join(',\n')}\n  ]\n}\n`;
}

export function generate(kind: PolicyKind, rules: number): GeneratedPolicy {
  return kind === 'id-only' ? generateIdOnly(rules) : generateMatchers(rules);
}

/** Creates the files a generated policy's calls read, under the workspace folder. */
export function materialise(workspace: string, files: readonly string[]): void {
  for (const f of files) {
    const full = path.join(workspace, f);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, '');
  }
}

// ---------------------------------------------------------------------------------------
// Measurement

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const gc = (): void => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with node --expose-gc (npm run bench does)');
  g();
  g();
};

export interface CompileStats {
  medianMs: number;
  minMs: number;
}

/** Wall time, in ms, of `reps` compiles (parse, validate, compile, index) of `text`: median and best. */
export function measureCompile(text: string, reps: number): CompileStats {
  const times: number[] = [];
  loadPolicyText(text, 'bench.agentpolicy.jsonc'); // warm the code paths once
  for (let r = 0; r < reps; r++) {
    forgetCompiledGlobs(); // each compile as the first of its globs in the process
    gc();
    const t0 = process.hrtime.bigint();
    const layer = loadPolicyText(text, 'bench.agentpolicy.jsonc');
    const t1 = process.hrtime.bigint();
    if (!layer.valid) throw new Error(`generated policy is invalid: ${layer.diagnostics[0]?.message}`);
    times.push(Number(t1 - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { medianMs: median(times), minMs: times[0]! };
}

let keep: unknown;

/** Compiles into `keep`, so that no frame of the caller holds the policy (see measureHeap). */
function compileIntoKeep(text: string): void {
  keep = new Policy({ workspace: loadPolicyText(text, 'bench.agentpolicy.jsonc') });
}

/**
 * Heap used by a compiled policy (layer and Policy), in MB: heap used after full GCs, with and
 * without it; the median of three. The policy is built in a function of its own: a value that
 * passed through this loop's frame could stay reachable from it until overwritten, and the
 * next round would then count the old policy as already there.
 */
export function measureHeap(text: string): number {
  const deltas: number[] = [];
  for (let r = 0; r < 3; r++) {
    keep = undefined;
    forgetCompiledGlobs(); // the policy's globs are counted as its own, not as already compiled
    gc();
    const before = process.memoryUsage().heapUsed;
    compileIntoKeep(text);
    gc();
    deltas.push((process.memoryUsage().heapUsed - before) / (1024 * 1024));
  }
  keep = undefined;
  return median(deltas.sort((a, b) => a - b));
}

export interface BatchStats {
  /** Median and p99 of the per-batch averages, in ns per item. */
  medianNs: number;
  p99Ns: number;
  batches: number;
  batchSize: number;
}

/**
 * ns per item of `run`: up to `batches` batches of `batchSize` items drawn from `items` in a
 * seeded random order; the average of each batch, then the median and p99 of those averages.
 * After a warm-up pass over every item (JIT, memos). `budgetMs` caps the measuring time: a
 * slow `run` gets fewer batches (never fewer than 20) and, if need be, smaller ones.
 */
export function measureBatches<T>(
  items: readonly T[],
  run: (item: T) => void,
  { batches = 200, batchSize = 1000, budgetMs = 8000 } = {},
): BatchStats {
  // Warm up: every item twice; the second pass also estimates the cost of one.
  for (const item of items) run(item);
  const t0 = process.hrtime.bigint();
  for (const item of items) run(item);
  const perItemMs = Number(process.hrtime.bigint() - t0) / 1e6 / items.length;
  const MIN_BATCHES = 20;
  const size = Math.max(10, Math.min(batchSize, Math.floor(budgetMs / (MIN_BATCHES * perItemMs))));
  const planned = Math.max(MIN_BATCHES, Math.min(batches, Math.floor(budgetMs / (size * perItemMs))));
  const random = rng(7);
  const order = new Uint32Array(size * planned);
  for (let k = 0; k < order.length; k++) order[k] = Math.floor(random() * items.length);
  const averages: number[] = [];
  for (let b = 0; b < planned; b++) {
    const base = b * size;
    const start = process.hrtime.bigint();
    for (let k = 0; k < size; k++) run(items[order[base + k]!]!);
    averages.push(Number(process.hrtime.bigint() - start) / size);
  }
  averages.sort((a, b) => a - b);
  return { medianNs: median(averages), p99Ns: percentile(averages, 99), batches: planned, batchSize: size };
}

/** ns per `policy.decide` over a pool of calls (see `measureBatches`). */
export function measureDecide(
  policy: Policy,
  calls: readonly ToolCall[],
  options: DecideOptions,
  batching: { batches?: number; batchSize?: number; budgetMs?: number } = {},
): BatchStats {
  let sink = 0;
  const stats = measureBatches(calls, (call) => {
    if (policy.decide(call, options).rule !== null) sink++;
  }, batching);
  if (sink < 0) throw new Error('unreachable'); // keeps the decisions observable
  return stats;
}

/** What the pool's calls come to, once each: the share of each decision and of those a rule made. */
export function decisionMix(policy: Policy, calls: readonly ToolCall[], options: DecideOptions): string {
  const counts = { allow: 0, ask: 0, deny: 0 };
  let byRule = 0;
  for (const call of calls) {
    const d = policy.decide(call, options);
    counts[d.decision]++;
    if (d.rule !== null) byRule++;
  }
  const pct = (n: number): string => `${Math.round((100 * n) / calls.length)}%`;
  return `pool: allow ${pct(counts.allow)} ask ${pct(counts.ask)} deny ${pct(counts.deny)}; by a rule ${pct(byRule)}`;
}

export interface BenchPolicyOptions {
  workspaceFolder: string;
  /** Targets for the rows, when this size has any. */
  targets?: { compileMs?: Target; decideNs?: Target };
  compileReps?: number;
  budgetMs?: number;
  /**
   * Also time each kind of call on its own (path, command, input calls), the path calls
   * without symbolic-link resolution, and the two costs no rule count changes (resolving the
   * paths, splitting the commands): where a decision's time goes.
   */
  breakdown?: boolean;
}

/** What a matchers-policy call exercises, by its tool. */
function callClass(call: ToolCall): 'path calls' | 'command calls' | 'input calls' {
  const id = call.tool.id;
  return id === 'builtin.run_command' ? 'command calls' : id.startsWith('builtin.') ? 'path calls' : 'input calls';
}

/** Generates, compiles and measures one policy; returns its rows. */
export function benchPolicy(kind: PolicyKind, rules: number, options: BenchPolicyOptions): BenchRow[] {
  const generated = generate(kind, rules);
  materialise(options.workspaceFolder, generated.files);
  const compileReps = options.compileReps ?? (rules >= 10_000 ? 5 : 15);
  const compile = measureCompile(generated.text, compileReps);
  const heapMb = measureHeap(generated.text);
  const layer = loadPolicyText(generated.text, 'bench.agentpolicy.jsonc');
  const policy = new Policy({ workspace: layer });
  const decideOptions: DecideOptions = { workspaceFolder: options.workspaceFolder };
  const budgetMs = options.budgetMs ?? 4000;
  const stats = measureDecide(policy, generated.calls, decideOptions, { budgetMs });
  const ids = new Set(generated.calls.map((c) => c.tool.id)).size;
  const subject = kind === 'id-only' ? 'id-only' : 'paths+commands+input';
  const t = options.targets ?? {};
  const row = (metric: string, value: number, unit: string, extra: Partial<BenchRow> = {}): BenchRow => ({ subject, size: rules, metric, value, unit, ...extra });
  const rows: BenchRow[] = [
    row('compile (median)', compile.medianMs, 'ms', { digits: 2, note: `best of ${compileReps}: ${compile.minMs.toFixed(2)} ms`, ...(t.compileMs ? { target: t.compileMs } : {}) }),
    row('decide (median)', stats.medianNs, 'ns/call', {
      note: `${stats.batches}x${stats.batchSize} calls over ${generated.calls.length} (${ids} tool ids)`, ...(t.decideNs ? { target: t.decideNs } : {}),
    }),
    row('decide (p99 batch)', stats.p99Ns, 'ns/call', {
      note: decisionMix(policy, generated.calls, decideOptions),
    }),
  ];
  if (options.breakdown) {
    const batching = { batches: 60, budgetMs: budgetMs / 5 };
    const classes = new Map<string, ToolCall[]>();
    for (const c of generated.calls) {
      const k = callClass(c);
      let list = classes.get(k);
      if (!list) classes.set(k, (list = []));
      list.push(c);
    }
    for (const [k, calls] of [...classes].sort()) {
      const s = measureDecide(policy, calls, decideOptions, batching);
      // The rules a decision tests (the explanation's trace walks the same indexed lists), against the tool's candidates.
      const tested = calls.reduce((sum, c) => sum + policy.explain(c, decideOptions).trace.length, 0) / calls.length;
      const candidates = calls.reduce((sum, c) => sum + layer.candidates(c.tool.id).length, 0) / calls.length;
      rows.push(row(`  ${k} only`, s.medianNs, 'ns/call', { note: `~${tested < 10 ? tested.toFixed(1) : Math.round(tested)} rules tested/call of ~${Math.round(candidates)} for its tool; ${s.batches}x${s.batchSize} over ${calls.length}` }));
    }
    const pathCalls = classes.get('path calls') ?? [];
    const commandCalls = classes.get('command calls') ?? [];
    if (pathCalls.length > 0) {
      const s = measureDecide(policy, pathCalls, { ...decideOptions, followSymlinks: false }, batching);
      rows.push(row('  path calls, no realpath', s.medianNs, 'ns/call', { note: 'followSymlinks: false: the rules and path normalising, no file system' }));
      const resolver = new PathResolver(options.workspaceFolder);
      const r = measureBatches(pathCalls, (c) => resolver.collect(c.input, c.tool.pathArgs), batching);
      rows.push(row('  resolving the paths alone', r.medianNs, 'ns/call', { note: 'realpath of the longest existing prefix; no rules' }));
    }
    if (commandCalls.length > 0) {
      const r = measureBatches(commandCalls, (c) => splitCommand(String((c.input as { command: string }).command)), batching);
      rows.push(row('  splitting the commands alone', r.medianNs, 'ns/call', { note: 'shell split (plain fast path or tree-sitter); no rules' }));
    }
  }
  rows.push(row('heap (compiled)', heapMb, 'MB', { digits: 2 }));
  return rows;
}
