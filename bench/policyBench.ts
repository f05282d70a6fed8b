// Policy engine benchmark: compile time, time per decision and heap of generated policies.
// `benchPolicy` measures one generated policy and returns table rows; `run.ts` calls it for
// each size and kind, and other benchmarks can call it (or `measure*`) for rows of their own.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ToolCall } from '../src/policy/call.js';
import { loadPolicyText, Policy, type DecideOptions } from '../src/policy/policy.js';
import type { BenchRow, Target } from './table.js';

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
        calls.push({ tool: { id: tool }, input: paths.length === 1 ? { path: paths[0] } : { paths }, agent: 'main' });
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

export function median(sorted: readonly number[]): number {
  const n = sorted.length;
  return n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
}

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

/** Median wall time, in ms, of `reps` compiles (parse, validate, compile, index) of `text`. */
export function measureCompile(text: string, reps: number): number {
  const times: number[] = [];
  loadPolicyText(text, 'bench.agentpolicy.jsonc'); // warm the code paths once
  for (let r = 0; r < reps; r++) {
    gc();
    const t0 = process.hrtime.bigint();
    const layer = loadPolicyText(text, 'bench.agentpolicy.jsonc');
    const t1 = process.hrtime.bigint();
    if (!layer.valid) throw new Error(`generated policy is invalid: ${layer.diagnostics[0]?.message}`);
    times.push(Number(t1 - t0) / 1e6);
  }
  return median(times.sort((a, b) => a - b));
}

let keep: unknown;

/** Heap used by a compiled policy (layer and Policy), in MB, measured after full GCs. */
export function measureHeap(text: string): number {
  keep = undefined;
  gc();
  const before = process.memoryUsage().heapUsed;
  keep = new Policy({ workspace: loadPolicyText(text, 'bench.agentpolicy.jsonc') });
  gc();
  const after = process.memoryUsage().heapUsed;
  keep = undefined;
  return (after - before) / (1024 * 1024);
}

export interface DecideStats {
  medianNs: number;
  p99Ns: number;
  batches: number;
  batchSize: number;
  decisions: Record<'allow' | 'ask' | 'deny', number>;
  byRule: number;
}

/**
 * ns per decision: up to `batches` batches of `batchSize` calls drawn from the pool in a seeded
 * random order; the average of each batch, then the median and p99 of those averages.
 * After a warm-up pass (JIT, the per-tool-id index memo). `budgetMs` caps the measuring time:
 * a slow policy gets fewer batches (never fewer than 20) and, if need be, smaller ones.
 */
export function measureDecide(
  policy: Policy,
  calls: readonly ToolCall[],
  options: DecideOptions,
  { batches = 200, batchSize = 1000, budgetMs = 8000 } = {},
): DecideStats {
  const decisions = { allow: 0, ask: 0, deny: 0 };
  let byRule = 0;
  // Warm up: every pool call twice; the second pass also estimates the cost of a call.
  for (const c of calls) policy.decide(c, options);
  const t0 = process.hrtime.bigint();
  for (const c of calls) policy.decide(c, options);
  const perCallMs = Number(process.hrtime.bigint() - t0) / 1e6 / calls.length;
  const MIN_BATCHES = 20;
  const size = Math.max(10, Math.min(batchSize, Math.floor(budgetMs / (MIN_BATCHES * perCallMs))));
  const planned = Math.max(MIN_BATCHES, Math.min(batches, Math.floor(budgetMs / (size * perCallMs))));
  const random = rng(7);
  const order = new Uint32Array(size * planned);
  for (let k = 0; k < order.length; k++) order[k] = Math.floor(random() * calls.length);
  const averages: number[] = [];
  for (let b = 0; b < planned; b++) {
    const base = b * size;
    const start = process.hrtime.bigint();
    for (let k = 0; k < size; k++) {
      const d = policy.decide(calls[order[base + k]!]!, options);
      decisions[d.decision]++;
      if (d.rule !== null) byRule++;
    }
    averages.push(Number(process.hrtime.bigint() - start) / size);
  }
  averages.sort((a, b) => a - b);
  return { medianNs: median(averages), p99Ns: percentile(averages, 99), batches: planned, batchSize: size, decisions, byRule };
}

export interface BenchPolicyOptions {
  workspaceFolder: string;
  /** Targets for the rows, when this size has any. */
  targets?: { compileMs?: Target; decideNs?: Target };
  compileReps?: number;
  budgetMs?: number;
  /**
   * Also time each kind of call on its own (path, command, input calls), and the path calls
   * without symbolic-link resolution: where a decision's time goes.
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
  const compileMs = measureCompile(generated.text, options.compileReps ?? (rules >= 10_000 ? 5 : 15));
  const heapMb = measureHeap(generated.text);
  const policy = new Policy({ workspace: loadPolicyText(generated.text, 'bench.agentpolicy.jsonc') });
  const decideOptions: DecideOptions = { workspaceFolder: options.workspaceFolder };
  const budgetMs = options.budgetMs ?? 4000;
  const stats = measureDecide(policy, generated.calls, decideOptions, { budgetMs });
  const ids = new Set(generated.calls.map((c) => c.tool.id)).size;
  const total = stats.batches * stats.batchSize;
  const share = (n: number): string => `${Math.round((100 * n) / total)}%`;
  const subject = kind === 'id-only' ? 'id-only' : 'paths+commands+input';
  const t = options.targets ?? {};
  const rows: BenchRow[] = [
    { subject, size: rules, metric: 'compile (median)', value: compileMs, unit: 'ms', digits: 2, ...(t.compileMs ? { target: t.compileMs } : {}) },
    {
      subject, size: rules, metric: 'decide (median)', value: stats.medianNs, unit: 'ns/call', ...(t.decideNs ? { target: t.decideNs } : {}),
      note: `${stats.batches}x${stats.batchSize} calls over ${generated.calls.length} (${ids} tool ids)`,
    },
    {
      subject, size: rules, metric: 'decide (p99 batch)', value: stats.p99Ns, unit: 'ns/call',
      note: `allow ${share(stats.decisions.allow)} ask ${share(stats.decisions.ask)} deny ${share(stats.decisions.deny)}; by a rule ${share(stats.byRule)}`,
    },
  ];
  if (options.breakdown) {
    const part = (metric: string, calls: ToolCall[], o: DecideOptions, note: string): void => {
      const s = measureDecide(policy, calls, o, { batches: 60, budgetMs: budgetMs / 4 });
      rows.push({ subject, size: rules, metric, value: s.medianNs, unit: 'ns/call', note: `${note}${note ? '; ' : ''}${s.batches}x${s.batchSize} over ${calls.length}` });
    };
    const classes = new Map<string, ToolCall[]>();
    for (const c of generated.calls) {
      const k = callClass(c);
      let list = classes.get(k);
      if (!list) classes.set(k, (list = []));
      list.push(c);
    }
    const candidates = (calls: ToolCall[]): string => {
      const layer = loadPolicyText(generated.text, 'bench.agentpolicy.jsonc');
      const n = calls.reduce((sum, c) => sum + layer.candidates(c.tool.id).length, 0) / calls.length;
      return `~${Math.round(n)} candidate rules/call`;
    };
    for (const [k, calls] of [...classes].sort()) part(`  ${k} only`, calls, decideOptions, candidates(calls));
    const pathCalls = classes.get('path calls');
    if (pathCalls) part('  path calls, no realpath', pathCalls, { ...decideOptions, followSymlinks: false }, 'followSymlinks: false');
  }
  rows.push({ subject, size: rules, metric: 'heap (compiled)', value: heapMb, unit: 'MB', digits: 2 });
  return rows;
}
