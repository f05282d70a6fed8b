// Representative calls for a policy's rules (probe calls): for each rule a call that satisfies all
// its matchers, and variations of it one matcher at a time; the explanation of a held loosening
// (loosening.ts) judges them with both versions of the policy. Built from the rules' globs, paths,
// commands, URLs and input matchers; deduplicated, in a stable order.
import { braceExpand } from 'minimatch';
import type { ToolAnnotations, ToolCall, ToolDescriptor } from '../rules/call.js';
import { canonicalJson, parsePointer, type CompiledRule } from '../rules/compile.js';
import { compileNameGlob, compilePathGlob } from '../globs/globs.js';
import { compileDomainSet, compileUrlSet } from '../network/urlMatchers.js';
import { readUrl } from '../network/urls.js';
import type { PolicyLayer } from '../policy.js';
import type { InlineTest, InputMatcher, ToolKind } from '../file/schema.js';

const PROBE = 'probe';
const PROBE_FILE = 'probe.txt';

const KIND_PROBE_IDS: Record<ToolKind, string[]> = {
  builtin: ['builtin.probe'],
  client: ['client.probe'],
  mcp: ['mcp.probe.probe'],
  connector: ['connector.probe.probe'],
  plugin: ['plugin.probe.probe'],
};

/**
 * Representative calls for the rules of these layers: for each rule, one call that satisfies
 * all its matchers, and variations of it one matcher at a time (each tool id or instance of a
 * tool glob, each agent, each path and command alone, without the hints, tags or input it asks
 * for, and instances of its `!` excludes); then the inline tests' calls and `extra`.
 * Deduplicated, in a stable order.
 */
export function probeCalls(layers: readonly PolicyLayer[], extra: readonly ToolCall[] = []): ToolCall[] {
  const out = new Map<string, ToolCall>();
  const add = (call: ToolCall): void => {
    const key = callKey(call);
    if (!out.has(key)) out.set(key, call);
  };
  const rules = layers.flatMap((l) => l.rules);
  // Tools for rules that name none: every literal id the policies name, and one of each kind.
  const pool = new Set<string>();
  for (const rule of rules) for (const g of [...(rule.tools?.positives ?? []), ...(rule.tools?.negatives ?? [])]) if (isPlain(g)) pool.add(g);
  for (const l of layers) for (const t of l.policy?.tests ?? []) pool.add(t.call.tool);
  for (const ids of Object.values(KIND_PROBE_IDS)) for (const id of ids) pool.add(id);

  for (const id of [...pool].sort()) add({ tool: { id }, input: {}, agent: 'main' });
  for (const rule of rules) for (const call of ruleProbes(rule, pool)) add(call);
  for (const l of layers) for (const t of l.policy?.tests ?? []) add(testCall(t));
  for (const call of extra) add(call);
  return [...out.values()];
}

/** A call's identity among probes: its tool, input and agent. */
export function callKey(call: ToolCall): string {
  return canonicalJson({ tool: call.tool, input: call.input ?? null, agent: call.agent });
}

function isPlain(glob: string): boolean {
  return !/[*?[\]{}()!+@\\]/.test(glob);
}

function testCall(test: InlineTest): ToolCall {
  const { tool, input, kind, agent, hints, tags } = test.call;
  return {
    tool: { id: tool, ...(kind ? { kind } : {}), ...(hints ? { annotations: hints } : {}), ...(tags ? { tags } : {}) },
    input: input ?? {},
    agent: agent ?? 'main',
  };
}

function ruleProbes(rule: CompiledRule, pool: ReadonlySet<string>): ToolCall[] {
  const r = rule.rule;
  const kinds = (r.kinds ?? []) as ToolKind[];
  let ids: string[];
  if (r.tools) {
    const positives = rule.tools!.positives.flatMap((g) => toolInstances(g));
    const negatives = rule.tools!.negatives.flatMap((g) => toolInstances(g));
    ids = unique([...positives.filter((id) => rule.tools!.test(id)), ...positives, ...negatives]);
  } else if (kinds.length > 0) {
    ids = kinds.flatMap((k) => KIND_PROBE_IDS[k]);
  } else {
    ids = [...pool];
  }
  if (ids.length === 0) return [];
  const agentNames = (globs: readonly string[]): string[] => globs.flatMap((g) => nameInstances(g, [PROBE]));
  const agents = r.agents
    ? unique([
        ...agentNames(rule.agents!.positives).filter((a) => rule.agents!.test(a)),
        ...agentNames(rule.agents!.positives),
        ...agentNames(rule.agents!.negatives),
        'main',
      ])
    : ['main'];
  if (agents.length === 0) agents.push('main');
  const annotations: ToolAnnotations | undefined = r.hints ? { ...r.hints } : undefined;
  const tags = r.tags ? [...r.tags] : undefined;

  const inputBase = r.input ? inputFor(r.input) : {};
  const pathsPositive = (r.paths ?? []).filter((p) => !p.startsWith('!'));
  const pathsNegative = (r.paths ?? []).filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  const positivePaths = pathsPositive.map((g) => pathInstances(g)).filter((xs) => xs.length > 0);
  const allPaths = positivePaths.map((xs) => xs[0]!);
  const singlePaths = unique([...positivePaths.flat(), ...pathsNegative.flatMap((g) => pathInstances(g))]);
  const commandSets = (r.commands ?? []).map(commandInstances).filter((xs) => xs.length > 0);
  const allCommands = commandSets.map((xs) => xs[0]!);
  const singleCommands = unique(commandSets.flat());

  const makeInput = (o: { paths?: string[]; command?: string; withMatchers?: boolean }): unknown => {
    const base = o.withMatchers === false ? {} : inputBase;
    if (base === null || typeof base !== 'object' || Array.isArray(base)) return base;
    const input: Record<string, unknown> = { ...(base as Record<string, unknown>) };
    if (o.paths && o.paths.length > 0 && !('path' in input) && !('paths' in input)) {
      if (o.paths.length === 1) input.path = o.paths[0];
      else input.paths = o.paths;
    }
    if (o.command !== undefined && !('command' in input)) input.command = o.command;
    return input;
  };
  const fullPaths = allPaths.length > 0 ? allPaths : undefined;
  const fullCommand = allCommands.length > 0 ? allCommands.join(' && ') : undefined;
  const base = {
    id: ids[0]!,
    agent: agents[0]!,
    kind: kinds[0] as ToolKind | undefined,
    annotations,
    tags,
    input: makeInput({ ...(fullPaths ? { paths: fullPaths } : {}), ...(fullCommand !== undefined ? { command: fullCommand } : {}) }),
  };
  const make = (o: Partial<typeof base>): ToolCall => {
    const v = { ...base, ...o };
    const tool: ToolDescriptor = { id: v.id };
    if (v.kind !== undefined) tool.kind = v.kind;
    if (v.annotations !== undefined) tool.annotations = v.annotations;
    if (v.tags !== undefined) tool.tags = v.tags;
    return { tool, input: v.input, agent: v.agent };
  };

  const calls: ToolCall[] = [make({})];
  for (const id of ids.slice(1)) calls.push(make({ id }));
  for (const agent of agents.slice(1)) calls.push(make({ agent }));
  for (const kind of kinds.slice(1)) calls.push(make({ kind }));
  if (annotations) calls.push(make({ annotations: undefined }));
  if (tags) calls.push(make({ tags: undefined }));
  if (r.input) calls.push(make({ input: makeInput({ ...(fullPaths ? { paths: fullPaths } : {}), ...(fullCommand !== undefined ? { command: fullCommand } : {}), withMatchers: false }) }));
  for (const p of singlePaths) calls.push(make({ input: makeInput({ paths: [p], ...(fullCommand !== undefined ? { command: fullCommand } : {}) }) }));
  if (r.paths) calls.push(make({ input: makeInput({ ...(fullCommand !== undefined ? { command: fullCommand } : {}) }) }));
  for (const c of singleCommands) calls.push(make({ input: makeInput({ ...(fullPaths ? { paths: fullPaths } : {}), command: c }) }));
  // Network rules: a URL each of their patterns matches, as a URL argument and, for a command
  // tool, as `curl URL` (the probe call's input is its only view of the rule's hosts).
  const urlInput = makeInput({ ...(fullPaths ? { paths: fullPaths } : {}) }) as Record<string, unknown>;
  for (const url of urlProbes(rule)) {
    for (const id of ids) {
      const command = id === 'builtin.run_command' || r.commands !== undefined;
      calls.push(make({ id, input: command ? { ...urlInput, command: `${allCommands[0] ?? 'curl'} ${url}` } : { ...urlInput, url } }));
    }
  }
  return calls;
}

/** URLs a rule's `domains` and `urls` patterns match (each pattern with `*` as `probe`), those the rule matches first. */
function urlProbes(rule: CompiledRule): string[] {
  const hosts = (rule.rule.domains ?? []).map((p) => (p.startsWith('!') ? p.slice(1) : p)).map((p) => (p === '*' ? 'probe.example' : p.replaceAll('*', PROBE)));
  const urls = (rule.rule.urls ?? []).map((p) => (p.startsWith('!') ? p.slice(1) : p)).map((p) => p.replace(/^\*:\/\//, 'https://').replaceAll('**', PROBE).replaceAll('*', PROBE));
  const candidates = unique([...hosts.map((h) => `https://${h}/${PROBE}`), ...urls]).filter((u) => readUrl(u).known);
  const matched = (u: string): boolean => {
    const read = readUrl(u);
    if (!read.known) return false;
    const domains = safeCompile(() => (rule.rule.domains ? compileDomainSet(rule.rule.domains) : undefined));
    const globs = safeCompile(() => (rule.rule.urls ? compileUrlSet(rule.rule.urls) : undefined));
    return (domains === undefined || domains.test(read)) && (globs === undefined || globs.test(read));
  };
  return [...candidates.filter(matched), ...candidates.filter((u) => !matched(u))];
}

function unique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

/** Up to this many alternatives of a brace glob are instantiated. */
const MAX_ALTERNATIVES = 8;

function alternatives(glob: string): string[] {
  try {
    return braceExpand(glob).slice(0, MAX_ALTERNATIVES);
  } catch {
    return [glob];
  }
}

/**
 * Concrete names a name glob matches (tool ids, agents, command words, input strings):
 * `*` → `probe` (and, for a tool id, `probe.probe` too: `mcp.*` → `mcp.probe.probe`).
 */
function nameInstances(glob: string, stars: readonly string[] = [PROBE, `${PROBE}.${PROBE}`]): string[] {
  const test = safeCompile(() => compileNameGlob(glob));
  if (!test) return [];
  const out: string[] = [];
  for (const alt of alternatives(glob)) {
    for (const star of stars) {
      const candidate = instantiate(alt, star);
      if (candidate !== undefined && candidate.length > 0 && test(candidate) && !out.includes(candidate)) out.push(candidate);
    }
  }
  return out;
}

/** Dot-separated parts of a stable id by family: `mcp.<server>.<tool>`, `builtin.<name>`. */
const ID_PARTS: ReadonlyArray<readonly [string, number]> = [['mcp.', 3], ['connector.', 3], ['plugin.', 3], ['builtin.', 2], ['client.', 2], ['agents.', 2]];

/** Instances of a tool glob, those shaped like a real id of their family first: `mcp.*` → `mcp.probe.probe`, `builtin.*` → `builtin.probe`. */
function toolInstances(glob: string): string[] {
  const instances = nameInstances(glob);
  const shaped = (id: string): boolean => {
    const family = ID_PARTS.find(([prefix]) => id.startsWith(prefix));
    return family === undefined || id.split('.').length === family[1];
  };
  return [...instances.filter(shaped), ...instances.filter((id) => !shaped(id))];
}

/** Concrete paths a path glob matches: `src/**` → `src/probe.txt`, `**\/.env` → `.env` and `probe/.env`. */
function pathInstances(glob: string): string[] {
  const absolute = glob.startsWith('/');
  const test = safeCompile(() => compilePathGlob(glob));
  if (!test) return [];
  const out: string[] = [];
  for (const alt of alternatives(glob)) {
    const segments = alt.split('/');
    for (const globstar of ['', PROBE]) {
      const parts: string[] = [];
      let ok = true;
      segments.forEach((seg, i) => {
        const last = i === segments.length - 1;
        if (seg === '**') {
          if (last) parts.push(...(globstar ? [globstar, PROBE_FILE] : [PROBE_FILE]));
          else if (globstar) parts.push(globstar);
          return;
        }
        if (seg === '*' && last) {
          parts.push(PROBE_FILE);
          return;
        }
        const s = instantiate(seg, PROBE);
        if (s === undefined) ok = false;
        else parts.push(s);
      });
      if (!ok) continue;
      const candidate = parts.join('/');
      if (candidate === '' || candidate === '/') continue;
      if (test(candidate) && !out.includes(candidate)) out.push(candidate);
    }
  }
  return out.filter((p) => absolute || !p.startsWith('/'));
}

/** Concrete commands a command pattern matches: `npm run lint *` → `npm run lint probe` and `npm run lint`. */
function commandInstances(pattern: string): string[] {
  const words = pattern.trim().split(/\s+/).filter((w) => w.length > 0);
  const open = words[words.length - 1] === '*';
  const fixed = open ? words.slice(0, -1) : words;
  const concrete: string[] = [];
  for (const w of fixed) {
    const instance = nameInstances(w, [PROBE])[0];
    if (instance === undefined) return [];
    concrete.push(shellQuote(instance));
  }
  if (concrete.length === 0) return open ? [PROBE] : [];
  const line = concrete.join(' ');
  return open ? [`${line} ${PROBE}`, line] : [line];
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function safeCompile<T>(build: () => T): T | undefined {
  try {
    return build();
  } catch {
    return undefined;
  }
}

/**
 * One concrete string for a brace-free glob: `*` → star, `?` → `p`, a class → a character in
 * it, an extglob → its first alternative (or nothing). Undefined when there is no simple answer.
 */
function instantiate(glob: string, star: string): string | undefined {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    const next = glob[i + 1];
    if (c === '\\') {
      if (next !== undefined) out += next;
      i++;
    } else if ('?*+@!'.includes(c) && next === '(') {
      const close = matchingParen(glob, i + 1);
      if (close === -1) return undefined;
      const body = glob.slice(i + 2, close);
      const first = body.split('|')[0] ?? '';
      if (c === '+' || c === '@') out += instantiate(first, star) ?? '';
      else if (c === '!') out += star;
      i = close;
    } else if (c === '*') {
      while (glob[i + 1] === '*') i++;
      out += star;
    } else if (c === '?') {
      out += 'p';
    } else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close === -1) return undefined;
      const body = glob.slice(i + 1, close);
      if (body.startsWith('!') || body.startsWith('^')) {
        const excluded = body.slice(1);
        const pick = ['p', 'q', 'x', 'z', '0'].find((ch) => !excluded.includes(ch));
        if (pick === undefined) return undefined;
        out += pick;
      } else if (body.startsWith('[:')) {
        out += body.includes('digit') ? '0' : 'p';
      } else {
        out += body[0] === '\\' ? (body[1] ?? '') : body[0]!;
      }
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

function matchingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

/** An input that satisfies the rule's input matchers (a regex only when it is a plain literal). */
function inputFor(matchers: Record<string, InputMatcher>): unknown {
  let root: unknown = {};
  const entries = Object.entries(matchers).sort(([a], [b]) => a.length - b.length);
  for (const [pointer, matcher] of entries) {
    const tokens = parsePointer(pointer);
    if (tokens === undefined) continue;
    const value = sampleFor(matcher);
    if (value === undefined) continue;
    if (tokens.length === 0) {
      root = structuredClone(value);
      continue;
    }
    if (root === null || typeof root !== 'object') continue;
    let container = root as Record<string, unknown> | unknown[];
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      const last = i === tokens.length - 1;
      const index = Array.isArray(container) && /^(0|[1-9][0-9]{0,2})$/.test(token) ? Number(token) : undefined;
      if (Array.isArray(container) && index === undefined) break;
      const existing = Array.isArray(container) ? container[index!] : (container as Record<string, unknown>)[token];
      if (last) {
        if (Array.isArray(container)) {
          while (container.length < index!) container.push(PROBE);
          container[index!] = value;
        } else (container as Record<string, unknown>)[token] = value;
        break;
      }
      let child = existing;
      if (child === null || typeof child !== 'object') {
        child = /^(0|[1-9][0-9]{0,2})$/.test(tokens[i + 1]!) ? [] : {};
        if (Array.isArray(container)) {
          while (container.length < index!) container.push(PROBE);
          container[index!] = child;
        } else (container as Record<string, unknown>)[token] = child;
      }
      container = child as Record<string, unknown> | unknown[];
    }
  }
  return root;
}

function sampleFor(matcher: InputMatcher): unknown {
  if (typeof matcher === 'string') return nameInstances(matcher, [PROBE])[0];
  if ('glob' in matcher) return nameInstances(matcher.glob, [PROBE])[0];
  if ('equals' in matcher) return matcher.equals;
  if ('exists' in matcher) return matcher.exists ? PROBE : undefined;
  return literalOfRegex(matcher.regex);
}

/** `^feat` → `feat`, `acme\.com$` → `acme.com`; undefined for anything with real regex syntax. */
function literalOfRegex(source: string): string | undefined {
  const body = source.replace(/^\^/, '').replace(/(?<!\\)\$$/, '');
  if (/(?<!\\)[.*+?()[\]{}|^$]/.test(body.replace(/\\\\/g, ''))) return undefined;
  if (/\\[^.*+?()[\]{}|^$\\/@#-]/.test(body)) return undefined;
  const literal = body.replace(/\\(.)/g, '$1');
  try {
    return new RegExp(source, 'u').test(literal) ? literal : undefined;
  } catch {
    return undefined;
  }
}
