// `npm run bench:peers`: our policy engine and Gemini CLI's (`@google/gemini-cli-core`) side by
// side in one process, on the same generated rules and calls. Both give a decision for every
// call, the differences are counted by cause, then both are timed in interleaved rounds.
// scripts/bench-peers.mjs installs the peer into .cache/peers/ and passes its folder (--peer).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { forgetCompiledGlobs } from '../src/policy/globs/globs.js';
import { loadPolicyText, Policy, type PolicyDecision } from '../src/policy/policy.js';
import { initShellParser } from '../src/policy/shell/shellParser.js';
import { generate, ourPolicy, peerPolicy, toCase, type Case, type CallSpec, type Generated, type PeerCall, type Pool, type Suite, type Verdict } from './peerWorkloads.js';
import { materialise, rng } from './policyBench.js';
import { median } from './table.js';

// ---------------------------------------------------------------------------------------
// The two engines behind one shape.

interface PeerResult { decision: 'allow' | 'ask_user' | 'deny'; rule?: { source?: string } }
interface PeerEngine {
  check(call: PeerCall, serverName: string | undefined, annotations?: unknown, subagent?: string, skipHeuristics?: boolean): Promise<PeerResult>;
}
interface Peer {
  version: string;
  compile(tomlFile: string): Promise<PeerEngine>;
}

async function loadPeer(root: string, workspace: string): Promise<Peer> {
  const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(path.join(root, 'dist/src', rel)).href)) as T;
  const { PolicyEngine } = await load<{ PolicyEngine: new (config: object) => PeerEngine }>('policy/policy-engine.js');
  const { loadPoliciesFromToml } = await load<{
    loadPoliciesFromToml(paths: string[], tier: (p: string) => number): Promise<{ rules: object[]; errors: Array<{ severity?: string; message: string; details?: string }> }>;
  }>('policy/toml-loader.js');
  const { NoopSandboxManager } = await load<{ NoopSandboxManager: new (options: object) => object }>('services/sandboxManager.js');
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  // Its shell parser loads on the first command; load it now, not in the first timed batch.
  await new PolicyEngine({}).check({ name: 'run_shell_command', args: { command: 'true' } }, undefined);
  return {
    version,
    async compile(tomlFile) {
      const { rules, errors } = await loadPoliciesFromToml([tomlFile], () => 1);
      const error = errors.find((e) => e.severity !== 'warning');
      if (error) throw new Error(`peer policy: ${error.message}: ${error.details ?? ''}`);
      // Its defaults (ask, default approval mode, trusted folder); the workspace is ours.
      return new PolicyEngine({ rules, sandboxManager: new NoopSandboxManager({ workspace }) });
    },
  };
}

const peerVerdict = (r: PeerResult): Verdict => (r.decision === 'ask_user' ? 'ask' : r.decision);

// ---------------------------------------------------------------------------------------
// Where the decisions differ, and why.

const WRAPPERS = new Set(['sudo', 'env', 'nice', 'nohup', 'time', 'timeout', 'xargs', 'command', 'exec', 'stdbuf']);

/** The cause, from evidence: the peer's own result, its result without heuristics, the call's spelling. */
async function cause(c: Case, ours: PolicyDecision, peer: PeerResult, engine: PeerEngine): Promise<string> {
  if (peer.rule?.source === 'Build File Protection') return "the peer's build-file protection";
  const bare = await engine.check(c.peer, c.server, undefined, undefined, true);
  if (peerVerdict(bare) === ours.decision) return "the peer's built-in safe / dangerous command lists";
  const p = c.spec.input.path;
  if (typeof p === 'string' && /^(\.\/|\/)|\.\./.test(p)) return 'path semantics: we normalise and resolve, the peer matches the text';
  const command = c.spec.input.command;
  if (typeof command === 'string') {
    if (WRAPPERS.has(command.split(' ')[0]!)) return 'we unwrap sudo and the like, the peer sees `sudo`';
    if ((ours.parts?.length ?? 0) > 1) return 'our per-part reading of a compound command';
    if (/["']/.test(command)) return 'we match bash words, the peer a prefix of the JSON text (quotes)';
  }
  return 'other';
}

interface Differences { label: string; calls: number; byCause: Map<string, string[]> }

/** Both decisions for each call not compared yet (a sub-pool repeats its pool's calls). */
async function compare(label: string, cases: readonly Case[], seen: Set<CallSpec>, policy: Policy, engine: PeerEngine, workspace: string): Promise<Differences> {
  const byCause = new Map<string, string[]>();
  const fresh = cases.filter((c) => !seen.has(c.spec));
  for (const c of fresh) {
    seen.add(c.spec);
    const ours = policy.decide(c.ours, { workspaceFolder: workspace });
    const peer = await engine.check(c.peer, c.server);
    if (ours.decision === peerVerdict(peer)) continue;
    const why = await cause(c, ours, peer, engine);
    const what = String(c.spec.input.command ?? c.spec.input.path ?? '');
    const list = byCause.get(why) ?? [];
    byCause.set(why, [...list, `${c.spec.tool} ${JSON.stringify(what)}: ours ${ours.decision}, peer ${peerVerdict(peer)}`]);
  }
  return { label, calls: fresh.length, byCause };
}

// ---------------------------------------------------------------------------------------
// Timing: interleaved rounds (ours, peer, ours, peer…), each a batch of about BATCH_MS.

// Batches end on time, not on a count sized from a probe: a probe caught cold or preempted made
// batches of a few decisions, whose time was mostly the switch from the other engine. What is
// counted is the process's CPU time (user + system, all its threads: GC and compilers too), not
// the wall clock, unless --wall: on this shared 2-core machine other jobs kept the load at 5-12
// and took the core in most batches, which the wall clock counts and CPU time does not.
// No forced GC between batches: forced full GCs made every figure worse and noisier here.
const BATCH_MS = 5;
let wallClock = false;

function clock(): number {
  if (wallClock) return Number(process.hrtime.bigint()) / 1e3;
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** ns per item of one batch: `chunk` items at a time until BATCH_MS of wall time has passed. */
async function timeBatch(run: (n: number) => void | Promise<void>, chunk: number): Promise<number> {
  const end = process.hrtime.bigint() + BigInt(BATCH_MS * 1e6);
  const t0 = clock();
  let n = 0;
  do {
    const pending = run(chunk); // ours is synchronous: no await, no microtask per chunk
    if (pending) await pending;
    n += chunk;
  } while (process.hrtime.bigint() < end);
  return ((clock() - t0) * 1e3) / n;
}

/**
 * Median ns per item of each side over `rounds` interleaved rounds, and the median of the rounds'
 * ratios (peer ÷ ours): load from other jobs moves both sides of a round together, so the ratio
 * of a round is steadier than either figure. After as many untimed rounds, for the JIT.
 */
async function interleave(ours: (n: number) => void, peer: (n: number) => Promise<void>, chunk: number, rounds: number): Promise<[number, number, number]> {
  for (let r = 0; r < rounds; r++) {
    await timeBatch(ours, chunk);
    await timeBatch(peer, 1);
  }
  const times: [number[], number[]] = [[], []];
  for (let r = 0; r < rounds; r++) {
    times[0].push(await timeBatch(ours, chunk));
    times[1].push(await timeBatch(peer, 1));
  }
  return [median(times[0]), median(times[1]), median(times[1].map((p, r) => p / times[0][r]!))];
}

/** Runs for `n` decisions, cycling through the cases in a fixed shuffled order. */
function runners(cases: readonly Case[], policy: Policy, engine: PeerEngine, workspace: string): [(n: number) => void, (n: number) => Promise<void>] {
  const random = rng(11);
  const order = cases.map((c) => ({ c, k: random() })).sort((x, y) => x.k - y.k).map((x) => x.c);
  const options = { workspaceFolder: workspace };
  let [atOurs, atPeer] = [0, 0];
  return [
    (n) => {
      for (let k = 0; k < n; k++) policy.decide(order[(atOurs + k) % order.length]!.ours, options);
      atOurs = (atOurs + n) % order.length;
    },
    async (n) => {
      for (let k = 0; k < n; k++) {
        const c = order[(atPeer + k) % order.length]!;
        await engine.check(c.peer, c.server);
      }
      atPeer = (atPeer + n) % order.length;
    },
  ];
}

// ---------------------------------------------------------------------------------------
// The workloads of issue 12, and the run.

interface Row { workload: string; ours: number; peer: number; ratio: number; unit: 'µs' | 'ms'; target: string; met?: boolean }

function suites(workspace: string, files: Set<string>): Suite[] {
  const pools = (g: Generated, pick: (g: Generated) => Pool[]): Suite => ({ rules: g.rules, pools: pick(g) });
  const ids = (n: number, us: number): Suite => pools(generate(['id'], n, workspace, files), (g) => [
    { label: `${n.toLocaleString('en-US')} tool-id rules`, calls: g.plain, target: { us, text: `≤ ${us} µs` } }]);
  const commands = pools(generate(['command'], 100, workspace, files), (g) => [
    { label: '100 command-prefix rules, plain commands', calls: g.plain, target: { us: 1.5, text: '≤ 1.5 µs' } },
    { label: '  compound commands', calls: g.compound, target: { us: 10, text: '≤ 10 µs' } },
    { label: '  all calls', calls: [...g.plain, ...g.compound], target: { us: 3, text: '≤ 3 µs' } }]);
  const mixed = (n: number, us: number, extra: boolean): Suite => pools(generate(['path', 'command', 'id'], n, workspace, files), (g) => [
    { label: `${n.toLocaleString('en-US')} rules mixing paths, commands, ids`, calls: [...g.plain, ...g.compound.slice(0, 100)], target: { us, text: `≤ ${us} µs` } },
    ...(extra ? [
      { label: '  path call decided by a rule near the top', calls: g.nearTop, target: { us: 3, text: '≤ 3 µs, never slower than the peer' } },
      { label: '  calls spelled otherwise (no target)', calls: g.respelled },
    ] : [])]);
  return [ids(100, 0.5), ids(1_000, 0.5), commands, mixed(1_000, 3, true), mixed(10_000, 10, false)];
}

interface Built { suite: Suite; ourFile: string; peerFile: string; policy: Policy; engine: PeerEngine }

/** Both engines compiled from the suite's rules, each from its file. */
async function build(suite: Suite, s: number, peer: Peer, workspace: string): Promise<Built> {
  const ourFile = path.join(workspace, `p${s}.agentpolicy.jsonc`);
  const peerFile = path.join(workspace, `p${s}.toml`);
  fs.writeFileSync(ourFile, ourPolicy(suite.rules));
  fs.writeFileSync(peerFile, peerPolicy(suite.rules));
  const layer = loadPolicyText(fs.readFileSync(ourFile, 'utf8'), ourFile);
  if (!layer.valid) throw new Error(`our policy: ${layer.diagnostics[0]?.message}`);
  return { suite, ourFile, peerFile, policy: new Policy({ workspace: layer }), engine: await peer.compile(peerFile) };
}

/**
 * Untimed batches of every workload, in turn, for WARM_UP_MS before any timing. V8 tiers up hot
 * JavaScript and both shell parsers' WebAssembly on background threads; on the loaded machine
 * that took seconds, and without this the first workloads paid for it (ours on compound
 * commands measured 46-60 µs first, 21-27 µs once warm; the peer 830-960, then 470-520).
 */
const WARM_UP_MS = 6000;

async function warmUp(built: readonly Built[], workspace: string): Promise<void> {
  const all = built.flatMap((b) => b.suite.pools.map((p) => runners(p.calls.map(toCase), b.policy, b.engine, workspace)));
  const end = Date.now() + WARM_UP_MS;
  while (Date.now() < end) {
    for (const [ours, theirs] of all) {
      await timeBatch(ours, 16);
      await timeBatch(theirs, 1);
    }
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const root = argv[argv.indexOf('--peer') + 1];
  if (!argv.includes('--peer') || !root) throw new Error('usage: bench-peers.js --peer <folder of @google/gemini-cli-core> [--rounds N] [--wall]');
  const rounds = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : 41;
  wallClock = argv.includes('--wall');
  // The peer logs every check with console.debug; Gemini CLI's ConsolePatcher drops those
  // unless debug mode is on (packages/cli/src/ui/utils/ConsolePatcher.ts), so do the same.
  console.debug = (): void => {};
  await initShellParser();
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-peers-')));
  const cwd = process.cwd();
  // The peer resolves some paths (build-file check) against the current folder.
  process.chdir(workspace);
  const rows: Row[] = [];
  const differences: Differences[] = [];
  const loadBefore = os.loadavg().map((l) => l.toFixed(1)).join(' ');
  try {
    const peer = await loadPeer(root, workspace);
    const files = new Set<string>();
    const all = suites(workspace, files);
    materialise(workspace, [...files]);
    const built: Built[] = [];
    for (const [s, suite] of all.entries()) built.push(await build(suite, s, peer, workspace));
    await warmUp(built, workspace);
    for (const { suite, ourFile, peerFile, policy, engine } of built) {
      const seen = new Set<CallSpec>();
      for (const pool of suite.pools) {
        process.stderr.write(`${pool.label.trim()}...\n`);
        const cases = pool.calls.map(toCase);
        differences.push(await compare(pool.label.replace(/^ +/, '… '), cases, seen, policy, engine, workspace));
        const [ours, theirs] = runners(cases, policy, engine, workspace);
        const [o, p, ratio] = await interleave(ours, theirs, 16, rounds);
        const t = pool.target;
        const met = t ? o / 1e3 <= t.us && (!t.text.includes('never slower') || o <= p) : undefined;
        rows.push({ workload: pool.label, ours: o / 1e3, peer: p / 1e3, ratio, unit: 'µs', target: t?.text ?? '', ...(met === undefined ? {} : { met }) });
      }
      if (suite.rules.length === 1_000 && suite.rules.some((r) => r.kind === 'path')) {
        process.stderr.write('compile...\n');
        const [o, p, ratio] = await interleave(
          () => {
            forgetCompiledGlobs(); // each compile as the first of its globs, as npm run bench measures it
            void new Policy({ workspace: loadPolicyText(fs.readFileSync(ourFile, 'utf8'), ourFile) });
          },
          async () => void (await peer.compile(peerFile)),
          1, Math.min(rounds, 11),
        );
        rows.push({ workload: 'compile 1,000 mixed rules (file to engine)', ours: o / 1e6, peer: p / 1e6, ratio, unit: 'ms', target: '≤ 15 ms', met: o / 1e6 <= 15 });
      }
    }
    print(rows, differences, peer.version, loadBefore, rounds);
  } finally {
    process.chdir(cwd);
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

function print(rows: readonly Row[], differences: readonly Differences[], version: string, loadBefore: string, rounds: number): void {
  const out = (s = ''): void => void process.stdout.write(`${s}\n`);
  const num = (v: number): string => v.toLocaleString('en-US', { maximumFractionDigits: v < 10 ? 2 : v < 100 ? 1 : 0 });
  out(`Our policy engine and @google/gemini-cli-core ${version}'s PolicyEngine, same rules and calls, one process`);
  out(`node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown CPU'}; load average before ${loadBefore}, after ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  out(`${wallClock ? 'wall-clock' : 'CPU'} time, medians of ${rounds} interleaved rounds (ours, peer, ours, peer…) of about ${BATCH_MS} ms each (at least one decision); ratio = median of the rounds' peer ÷ ours (above 1: we are faster)`);
  out();
  out('| workload | ours µs/decision | peer µs/decision | ratio | target |');
  out('| --- | ---: | ---: | ---: | --- |');
  for (const r of rows) {
    const u = r.unit === 'ms' ? ' ms' : '';
    const verdict = r.met === undefined ? '' : r.met ? ' (met)' : ' (**missed**)';
    out(`| ${r.workload.replace(/^ +/, '… ')} | ${num(r.ours)}${u} | ${num(r.peer)}${u} | ${num(r.ratio)}× | ${r.target}${verdict} |`);
  }
  out();
  const total = differences.reduce((n, d) => n + d.calls, 0);
  const differ = differences.reduce((n, d) => n + [...d.byCause.values()].reduce((m, l) => m + l.length, 0), 0);
  out(`Decisions: ${total.toLocaleString('en-US')} calls compared, ${differ.toLocaleString('en-US')} differ.`);
  for (const d of differences.filter((x) => x.calls > 0)) {
    const n = [...d.byCause.values()].reduce((m, l) => m + l.length, 0);
    out(n === 0 ? `- ${d.label}: all ${d.calls} the same` : `- ${d.label}: ${n} of ${d.calls} differ`);
    for (const [why, examples] of [...d.byCause].sort((x, y) => y[1].length - x[1].length)) {
      out(`    ${examples.length} × ${why}; e.g. ${examples.slice(0, 2).join('; ')}`);
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
