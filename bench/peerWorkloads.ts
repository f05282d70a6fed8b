// The workloads of `npm run bench:peers` (bench/peersBench.ts), written once and rendered for
// both engines: our JSONC policy and Gemini CLI's TOML policy, our tool calls and its. The
// mapping of tools: builtin.run_command is run_shell_command, builtin.read_file read_file and
// builtin.write_file write_file (their path in `file_path`), mcp.<server>.<tool> is
// mcp_<server>_<tool> of that server, client.<name> the plain tool name <name>.
import * as path from 'node:path';
import type { ToolCall } from '../src/policy/rules/call.js';
import { builtinTool, rng } from './policyBench.js';

export type Verdict = 'allow' | 'ask' | 'deny';
const DECISIONS: readonly Verdict[] = ['allow', 'ask', 'deny'];

export type RuleSpec =
  | { kind: 'id'; tools: string[]; decision: Verdict }
  | { kind: 'command'; prefix: string; decision: Verdict }
  | { kind: 'path'; tool: string; glob: string; exclude?: string; decision: Verdict };
type Kind = RuleSpec['kind'];
export interface CallSpec { tool: string; input: Record<string, unknown> }
export interface Pool { label: string; calls: CallSpec[]; target?: { us: number; text: string } }
export interface Suite { rules: RuleSpec[]; pools: Pool[] }

/** Our builtin tools and Gemini CLI's (name, and the argument its file tools take a path in). */
const PEER_BUILTIN: Record<string, { name: string; pathArg?: string }> = {
  'builtin.run_command': { name: 'run_shell_command' },
  'builtin.read_file': { name: 'read_file', pathArg: 'file_path' },
  'builtin.write_file': { name: 'write_file', pathArg: 'file_path' },
};

/** `mcp.<server>.<tool>` is `mcp_<server>_<tool>` with that server; `client.<name>` a plain tool name. */
function peerName(id: string): { name: string; tool: string; server?: string } {
  const builtin = PEER_BUILTIN[id];
  if (builtin) return { name: builtin.name, tool: builtin.name };
  const [family, server, tool] = id.split('.');
  if (family === 'mcp' && server && tool) return { name: `mcp_${server}_${tool}`, tool, server };
  const name = id.slice(id.indexOf('.') + 1);
  return { name, tool: name };
}

const POOL_SIZE = 600;
const UNMATCHED = 0.15;

/** Rule `i`: `slot` counts the rules of its kind, so variants cycle within each kind. */
function ruleAt(kind: Kind, i: number, slot: number, decision: Verdict): RuleSpec {
  if (kind === 'id') {
    const tools = [[`mcp.g${i}.*`], [`mcp.s${i}.read`, `mcp.s${i}.write`], [`client.lookup${i}`]][slot % 3]!;
    return { kind, tools, decision };
  }
  if (kind === 'command') return { kind, prefix: [`tool${i} build`, `npm run task${i}`, `git -C repo${i}`][slot % 3]!, decision };
  const tool = slot % 2 === 0 ? 'builtin.read_file' : 'builtin.write_file';
  const variant = Math.floor(slot / 2) % 3;
  if (variant === 0) return { kind, tool, glob: `area${i}/**`, exclude: `area${i}/**/*.key`, decision };
  return { kind, tool, glob: variant === 1 ? `area${i}/src/**/*.ts` : `area${i}/docs/*.md`, decision };
}

/** A plain call aimed at rule `i`'s variant, in area `a` (`i` to hit it, a number past the list to miss). */
function callAt(kind: Kind, slot: number, a: number, j: number, files: Set<string>): CallSpec {
  const input = { query: `q${j}`, limit: j % 50 };
  if (kind === 'id') {
    return { tool: [`mcp.g${a}.tool${j}`, `mcp.s${a}.${j % 2 ? 'read' : 'write'}`, `client.lookup${a}`][slot % 3]!, input };
  }
  if (kind === 'command') {
    const command = [`tool${a} build --target t${j}`, `npm run task${a} -- --shard ${j}`, `git -C repo${a} log -n ${j}`][slot % 3]!;
    return { tool: 'builtin.run_command', input: { command } };
  }
  const p = [
    `area${a}/lib/m${j}.${j % 8 === 0 ? 'key' : 'js'}`,
    j % 2 ? `area${a}/src/deep/m${j}.ts` : `area${a}/src/m${j}.ts`,
    `area${a}/docs/p${j}.md`,
  ][Math.floor(slot / 2) % 3]!;
  files.add(p);
  return slot % 2 === 0
    ? { tool: 'builtin.read_file', input: { path: p } }
    : { tool: 'builtin.write_file', input: { path: p, content: 'x' } };
}

/** Rules of one kind, or of all three in turn; the kind and slot of rule `i`. */
function layout(kinds: readonly Kind[], i: number): { kind: Kind; slot: number } {
  return { kind: kinds[i % kinds.length]!, slot: Math.floor(i / kinds.length) };
}

export interface Generated { rules: RuleSpec[]; plain: CallSpec[]; compound: CallSpec[]; nearTop: CallSpec[]; respelled: CallSpec[] }

/**
 * `rules` rules of the given kinds, decisions mixed, and calls aimed evenly over the list (15%
 * miss every rule). Commands: a plain pool and a compound one (`&&`, `;`, `|` with a second
 * command aimed at another rule, or a `$(...)`). Also path calls decided near the top, and calls
 * spelled otherwise (`./`, absolute and `..` paths; `sudo`, quoted words, `ls`) for the comparison.
 */
export function generate(kinds: readonly Kind[], rules: number, workspace: string, files: Set<string>, seed = 3): Generated {
  const random = rng(seed);
  const list = Array.from({ length: rules }, (_, i) => {
    const { kind, slot } = layout(kinds, i);
    return ruleAt(kind, i, slot, DECISIONS[Math.floor(random() * 3)]!);
  });
  const aimed = (j: number, hit: boolean): { kind: Kind; slot: number; i: number; a: number } => {
    const i = Math.min(rules - 1, Math.floor(((j + random()) / POOL_SIZE) * rules));
    return { ...layout(kinds, i), i, a: hit ? i : rules + j };
  };
  const g: Generated = { rules: list, plain: [], compound: [], nearTop: [], respelled: [] };
  for (let j = 0; j < POOL_SIZE; j++) {
    const { kind, slot, a } = aimed(j, random() >= UNMATCHED);
    g.plain.push(callAt(kind, slot, a, j, files));
  }
  const commandRules = list.flatMap((r, i) => (r.kind === 'command' ? [i] : []));
  for (let j = 0; commandRules.length > 0 && j < POOL_SIZE; j++) {
    const pick = (): number => commandRules[Math.floor(random() * commandRules.length)]!;
    const [i, k] = [pick(), pick()];
    const first = String(callAt('command', layout(kinds, i).slot, random() < UNMATCHED ? rules + j : i, j, files).input.command);
    const second = String(callAt('command', layout(kinds, k).slot, k, j + 1, files).input.command);
    const command = [`${first} && ${second}`, `${first}; ${second}`, `${first} | ${second}`, `${first} --since "$(date +%s)"`][j % 4]!;
    g.compound.push({ tool: 'builtin.run_command', input: { command } });
  }
  const topPaths = list.slice(0, 30).flatMap((r, i) => (r.kind === 'path' ? [i] : []));
  for (let j = 0; topPaths.length > 0 && j < POOL_SIZE; j++) {
    const i = topPaths[j % topPaths.length]!;
    g.nearTop.push(callAt('path', layout(kinds, i).slot, i, 2 * j + 1, files)); // odd: never a .key file
  }
  for (const [j, c] of g.plain.entries()) {
    const p = c.input.path;
    const cmd = c.input.command;
    if (typeof p === 'string') {
      const spelled = [`./${p}`, path.join(workspace, p), `area${j}x/../${p}`][j % 3]!;
      g.respelled.push({ tool: c.tool, input: { ...c.input, path: spelled } });
    } else if (typeof cmd === 'string') {
      const [program, first, ...rest] = cmd.split(' ');
      const spelled = [`sudo ${cmd}`, [program, `"${first}"`, ...rest].join(' '), `ls -la docs${j}`][j % 3]!;
      g.respelled.push({ tool: c.tool, input: { command: spelled } });
    }
  }
  return g;
}

// ---------------------------------------------------------------------------------------
// Rendering: our JSONC policy and the peer's TOML policy file.

export interface PeerCall { name: string; args: Record<string, unknown> }
export interface Case { spec: CallSpec; ours: ToolCall; peer: PeerCall; server: string | undefined }

export function toCase(spec: CallSpec): Case {
  const { name, server } = peerName(spec.tool);
  const pathArg = PEER_BUILTIN[spec.tool]?.pathArg;
  const { path: p, ...rest } = spec.input;
  const args = pathArg ? { ...rest, [pathArg]: p } : spec.input;
  const tool = pathArg ? { ...builtinTool(spec.tool), pathArgs: ['path'] } : { id: spec.tool };
  return { spec, ours: { tool, input: spec.input, agent: 'main' }, peer: { name, args }, server };
}

export function ourPolicy(rules: readonly RuleSpec[]): string {
  const json = rules.map((r, i) => {
    const base = { id: `r${i}`, decision: r.decision };
    if (r.kind === 'id') return { ...base, tools: r.tools };
    if (r.kind === 'command') return { ...base, tools: ['builtin.run_command'], commands: [`${r.prefix} *`] };
    return { ...base, tools: [r.tool], paths: r.exclude ? [r.glob, `!${r.exclude}`] : [r.glob] };
  });
  return JSON.stringify({ version: 1, default: 'ask', rules: json }, null, 1);
}

/** A glob of ours as a regex over JSON text: `**` crosses folders, `*` does not, nothing crosses a quote. */
function globRegex(glob: string): string {
  return glob
    .split(/(\*\*\/?|\*)/)
    .map((t) => (t.startsWith('**') ? '[^"]*' : t === '*' ? '[^"/]*' : t.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
}

/**
 * One `[[rule]]` per rule, all at one priority: the peer sorts by priority with a stable sort,
 * so equal priorities keep the file's order and the first match wins, as in ours. Paths become
 * an `argsPattern` on the tool's path argument (anchored by the NUL bytes the peer's
 * stableStringify puts around top-level fields), an exclude a negative lookahead.
 */
export function peerPolicy(rules: readonly RuleSpec[]): string {
  return rules.map((r) => {
    const fields: Array<[string, unknown]> = [];
    if (r.kind === 'id') {
      const names = r.tools.map(peerName);
      if (names[0]!.server) fields.push(['mcpName', names[0]!.server]);
      fields.push(['toolName', names.length === 1 ? names[0]!.tool : names.map((n) => n.tool)]);
    } else if (r.kind === 'command') {
      fields.push(['toolName', 'run_shell_command'], ['commandPrefix', r.prefix]);
    } else {
      const { name, pathArg } = PEER_BUILTIN[r.tool]!;
      const not = r.exclude ? `(?!${globRegex(r.exclude)}")` : '';
      fields.push(['toolName', name], ['argsPattern', `\\0"${pathArg}":"${not}${globRegex(r.glob)}"\\0`]);
    }
    fields.push(['decision', r.decision === 'ask' ? 'ask_user' : r.decision], ['priority', 0]);
    return ['[[rule]]', ...fields.map(([k, v]) => `${k} = ${JSON.stringify(v)}`)].join('\n');
  }).join('\n\n');
}
