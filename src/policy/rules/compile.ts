// Rules compiled once: every glob and regex is built when the file is loaded, so judging a
// call is only tests against prepared matchers.
import type { Node } from 'jsonc-parser';
import { findNodeAtLocation } from 'jsonc-parser';
import type { HintName } from './call.js';
import type { Diagnostic } from '../file/diagnostics.js';
import { compileGlobSet, compileNameGlob, GlobError, type GlobSet, type GlobTest } from '../globs/globs.js';
import type { LineMap } from '../file/diagnostics.js';
import type { Span } from '../file/jsoncFast.js';
import { equalsTooDeepMessage, MAX_EQUALS_DEPTH } from '../file/parse.js';
import { commandsMatch, compileCommandPattern, type CommandPattern } from './commandPatterns.js';
import type { CallPaths, ResolvedPath } from '../paths/paths.js';
import type { CallView, CommandView } from './preparedCall.js';
import type { Decision, InputMatcher, Rule, ToolKind } from '../file/schema.js';
import { compileDomainSet, compileUrlSet, type UrlMatcher } from '../network/urlMatchers.js';
import type { UrlReading } from '../network/urls.js';

export type LayerName = 'managed' | 'workspace' | 'user';

/** Where a rule sits: what explanations, audit lines and diagnostics name. */
export interface RuleRef {
  id: string | null;
  index: number;
  layer: LayerName;
  file: string;
  line: number;
}

/** Positive globs and `!` excludes, each set matching when any of its globs does. */
interface IncludeExclude {
  include: GlobSet;
  exclude: GlobSet;
}

export interface PathMatcher {
  /** Globs over workspace-relative paths. */
  relative: IncludeExclude;
  /** Globs starting with `/`, over absolute paths (the only ones that can match outside the folder). */
  absolute: IncludeExclude;
  /** The rule's own list, as written. */
  source: readonly string[];
}


interface InputCheck {
  pointer: string;
  tokens: string[];
  test: (present: boolean, value: unknown) => boolean;
}

export interface CompiledRule {
  ref: RuleRef;
  rule: Rule;
  decision: Decision;
  /** Offset and length of the rule object in its file. */
  offset: number;
  length: number;
  tools?: GlobSet;
  kinds?: ReadonlySet<ToolKind>;
  agents?: GlobSet;
  hints?: ReadonlyArray<readonly [HintName, boolean]>;
  tags?: ReadonlySet<string>;
  paths?: PathMatcher;
  commands?: CommandPattern[];
  input?: InputCheck[];
  domains?: UrlMatcher;
  urls?: UrlMatcher;
}

/** Why a rule did or did not match; the first matcher that failed. */
export type MatcherName = 'tools' | 'kinds' | 'agents' | 'hints' | 'tags' | 'paths' | 'commands' | 'input' | 'when' | 'domains' | 'urls';

/** Where a file's rules are: its syntax tree, or the fast reader's spans of the rules. */
export interface RuleSource {
  readonly root: Node | undefined;
  readonly topLevelArrays?: ReadonlyMap<string, readonly Span[]>;
}

/** Compiles one file's rules. Glob and pointer problems become diagnostics at the offending string. */
export function compileRules(
  rules: readonly Rule[],
  source: RuleSource,
  lines: LineMap,
  file: string,
  layer: LayerName,
  /**
   * Compile each rule's matchers (tools, agents, paths, commands, input) at their first use. Only for rules
   * validated before (a hook's kept reading): a bad glob would otherwise go unreported.
   */
  lazy = false,
): { rules: CompiledRule[]; diagnostics: Diagnostic[] } {
  const out = new RuleCompiler(source, file);
  const compiled: CompiledRule[] = [];
  const ids = new Map<string, number>();
  // Where each rule is: from the fast reader's spans when it took the file; the syntax tree is
  // read (and so built) only to place a diagnostic, or when there are no spans.
  const spans = source.topLevelArrays?.get('rules');
  // One loop, no closures per rule unless lazy: a large file's garbage was most of its compile time.
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index]!;
    const span = spans?.[index];
    const where = span ?? out.nodeAt(index);
    if (rule.id !== undefined) {
      const first = ids.get(rule.id);
      if (first !== undefined) out.report(where, out.nodeAt(index, 'id'), 'duplicate-id', `rule id "${rule.id}" is already used by rule ${first + 1}`);
      else ids.set(rule.id, index);
    }
    const c: CompiledRule = {
      ref: { id: rule.id ?? null, index, layer, file, line: where ? lines.lineOf(where.offset) : 1 },
      rule,
      decision: rule.decision,
      offset: where?.offset ?? 0,
      length: where?.length ?? 1,
    };
    if (rule.kinds) c.kinds = new Set(rule.kinds);
    if (rule.hints) c.hints = Object.entries(rule.hints).filter((e): e is [HintName, boolean] => typeof e[1] === 'boolean');
    if (rule.tags) c.tags = new Set(rule.tags);
    const at = { index, where, inputFromTree: span === undefined };
    if (lazy) {
      for (const key of MATCHER_KEYS) {
        if (!rule[key]) continue;
        let built: CompiledRule[typeof key] | undefined;
        Object.defineProperty(c, key, { get: () => (built ??= out.matcher(key, rule, at)), enumerable: true, configurable: true });
      }
    } else {
      if (rule.tools) c.tools = out.matcher('tools', rule, at);
      if (rule.agents) c.agents = out.matcher('agents', rule, at);
      if (rule.paths) c.paths = out.matcher('paths', rule, at);
      if (rule.domains) c.domains = out.matcher('domains', rule, at);
      if (rule.urls) c.urls = out.matcher('urls', rule, at);
      if (rule.commands) c.commands = out.matcher('commands', rule, at);
      if (rule.input) c.input = out.matcher('input', rule, at);
    }
    compiled.push(c);
  }
  return { rules: compiled, diagnostics: out.diagnostics };
}

/** The matchers built from globs, patterns and pointers, in the order they are compiled. */
const MATCHER_KEYS = ['tools', 'agents', 'paths', 'domains', 'urls', 'commands', 'input'] as const;
type MatcherKey = (typeof MATCHER_KEYS)[number];

/** A rule's place, for its diagnostics. `inputFromTree`: the fast reader did not take the file. */
interface RuleAt {
  index: number;
  where: Span | Node | undefined;
  inputFromTree: boolean;
}

/** Builds one file's matchers and collects their diagnostics, each placed at the offending string. */
class RuleCompiler {
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    private readonly source: RuleSource,
    private readonly file: string,
  ) {}

  nodeAt(index: number, ...path: (string | number)[]): Node | undefined {
    return this.source.root ? findNodeAtLocation(this.source.root, ['rules', index, ...path]) : undefined;
  }

  /** A diagnostic at `at`, else at the rule (`where`). */
  report(where: Span | Node | undefined, at: Node | undefined, code: Diagnostic['code'], message: string): void {
    const target = at ?? where;
    this.diagnostics.push({ file: this.file, severity: 'error', code, message, offset: target?.offset ?? 0, length: target?.length ?? 1 });
  }

  /** `build(arg)`, or undefined with a diagnostic at the rule's `key` (and `sub`) when it is a glob or pointer problem. */
  guard<A, T>(rule: RuleAt, build: (arg: A) => T, arg: A, key: string, sub?: string | number): T | undefined {
    try {
      return build(arg);
    } catch (error) {
      const at = (): Node | undefined => (sub === undefined ? this.nodeAt(rule.index, key) : this.nodeAt(rule.index, key, sub));
      if (error instanceof GlobError || error instanceof SyntaxError) {
        this.report(rule.where, at(), 'bad-glob', error.message);
        return undefined;
      }
      if (error instanceof MatcherSchemaError) {
        this.report(rule.where, at(), 'schema', error.message);
        return undefined;
      }
      throw error;
    }
  }

  matcher<K extends MatcherKey>(key: K, rule: Rule, at: RuleAt): CompiledRule[K];
  matcher(key: MatcherKey, rule: Rule, at: RuleAt): CompiledRule[MatcherKey] {
    switch (key) {
      case 'tools':
        return this.guard(at, compileNameGlobSet, rule.tools!, 'tools');
      case 'agents':
        return this.guard(at, compileNameGlobSet, rule.agents!, 'agents');
      case 'paths':
        return this.guard(at, compilePaths, rule.paths!, 'paths');
      case 'domains':
        return this.urlList(at, rule.domains!, 'domains', compileDomainSet);
      case 'urls':
        return this.urlList(at, rule.urls!, 'urls', compileUrlSet);
      case 'commands': {
        // Each pattern checked on its own, so a diagnostic points at the one that is wrong.
        const commands: CommandPattern[] = [];
        const given = rule.commands!;
        for (let i = 0; i < given.length; i++) {
          const p = this.guard(at, compileCommandPattern, given[i]!, 'commands', i);
          if (p) commands.push(p);
        }
        return commands;
      }
      case 'input':
        return this.input(at, rule.input!);
    }
  }

  // Each pattern checked on its own first, so a diagnostic points at the one that is wrong.
  private urlList(at: RuleAt, list: readonly string[], key: 'domains' | 'urls', build: (patterns: readonly string[]) => UrlMatcher): UrlMatcher | undefined {
    let ok = true;
    for (let i = 0; i < list.length; i++) if (this.guard(at, build, [list[i]!], key, i) === undefined) ok = false;
    return ok ? build(list) : undefined;
  }

  private input(at: RuleAt, given: NonNullable<Rule['input']>): InputCheck[] {
    const input: InputCheck[] = [];
    // The keys as written: a parsed record loses "__proto__" (it sets the prototype instead),
    // which would drop that matcher and widen the rule. (The fast reader takes no file with such
    // a key, nor one whose keys V8 would reorder: with spans, the record's own keys are the keys.)
    const inputNode = at.inputFromTree ? this.nodeAt(at.index, 'input') : undefined;
    const written = inputNode?.type === 'object' ? (inputNode.children ?? []).map((p) => p.children?.[0]?.value).filter((k): k is string => typeof k === 'string') : undefined;
    for (const pointer of written ?? Object.keys(given)) {
      const keyAt = (): Node | undefined => this.nodeAt(at.index, 'input', pointer)?.parent?.children?.[0];
      const tokens = parsePointer(pointer);
      if (tokens === undefined) {
        this.report(at.where, keyAt(), 'schema', `"${pointer}" is not a JSON Pointer: it must be empty or start with "/"`);
        continue;
      }
      const matcher = Object.prototype.hasOwnProperty.call(given, pointer) ? given[pointer] : undefined;
      if (matcher === undefined) {
        this.report(at.where, keyAt(), 'schema', `input ${JSON.stringify(pointer)} has no matcher`);
        continue;
      }
      const test = this.guard(at, compileInputMatcherAt, { matcher, pointer }, 'input', pointer);
      if (test) input.push({ pointer, tokens, test });
    }
    return input;
  }
}

const compileNameGlobSet = (patterns: readonly string[]): GlobSet => compileGlobSet(patterns, 'name');
const compileInputMatcherAt = ({ matcher, pointer }: { matcher: InputMatcher; pointer: string }): InputCheck['test'] => compileInputMatcher(matcher, pointer);

function compilePaths(patterns: readonly string[]): PathMatcher {
  // One pass into the four lists (relative or absolute, include or `!` exclude).
  const relativeIn: string[] = [];
  const relativeOut: string[] = [];
  const absoluteIn: string[] = [];
  const absoluteOut: string[] = [];
  for (const p of patterns) {
    if (p.startsWith('!')) {
      const glob = p.slice(1);
      (glob.startsWith('/') ? absoluteOut : relativeOut).push(glob);
    } else (p.startsWith('/') ? absoluteIn : relativeIn).push(p);
  }
  return {
    relative: { include: compileGlobSet(relativeIn, 'path'), exclude: compileGlobSet(relativeOut, 'path') },
    absolute: { include: compileGlobSet(absoluteIn, 'path'), exclude: compileGlobSet(absoluteOut, 'path') },
    source: patterns,
  };
}

/** A matcher the schema lets through but that cannot be used (an `equals` value nested too deeply). */
class MatcherSchemaError extends Error {}

function compileInputMatcher(matcher: InputMatcher, pointer: string): (present: boolean, value: unknown) => boolean {
  if (typeof matcher === 'string') {
    const glob = compileNameGlob(matcher);
    return (present, value) => present && typeof value === 'string' && glob(value);
  }
  if ('glob' in matcher) {
    const glob = compileNameGlob(matcher.glob);
    return (present, value) => present && typeof value === 'string' && glob(value);
  }
  if ('regex' in matcher) {
    let re: RegExp;
    try {
      re = new RegExp(matcher.regex, 'u');
    } catch (error) {
      throw new GlobError(`regex ${JSON.stringify(matcher.regex)} does not compile: ${(error as Error).message}`);
    }
    return (present, value) => present && typeof value === 'string' && re.test(value);
  }
  if ('exists' in matcher) {
    const want = matcher.exists;
    return (present) => present === want;
  }
  let expected: string;
  try {
    expected = canonicalJson(matcher.equals);
  } catch (error) {
    if (error instanceof InputTooDeepError) throw new MatcherSchemaError(equalsTooDeepMessage(pointer));
    throw error;
  }
  return (present, value) => present && canonicalJson(value) === expected;
}

/** RFC 6901: '' is the whole input; otherwise '/'-separated tokens with ~1 and ~0 escapes. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens = pointer.slice(1).split('/');
  // Most pointers have no escape: their tokens are the split as it is.
  return pointer.includes('~') ? tokens.map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~')) : tokens;
}

function resolvePointer(input: unknown, tokens: readonly string[]): { present: boolean; value: unknown } {
  let current: unknown = input;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return { present: false, value: undefined };
      const i = Number(token);
      if (i >= current.length) return { present: false, value: undefined };
      current = current[i];
    } else if (current !== null && typeof current === 'object') {
      if (!Object.prototype.hasOwnProperty.call(current, token)) return { present: false, value: undefined };
      current = (current as Record<string, unknown>)[token];
    } else return { present: false, value: undefined };
  }
  return { present: current !== undefined, value: current };
}

/** JSON with sorted keys: equal values give equal text. */
export function canonicalJson(value: unknown, depth = 0): string {
  // Inputs come from models: a value nested deeper than any real tool input is refused, not recursed into.
  if (depth > MAX_INPUT_DEPTH) throw new InputTooDeepError();
  if (value === undefined) return 'undefined';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], depth + 1)}`).join(',')}}`;
}

export const MAX_INPUT_DEPTH = MAX_EQUALS_DEPTH;

export class InputTooDeepError extends RangeError {
  constructor() {
    super(`the input is nested more than ${MAX_INPUT_DEPTH} levels deep`);
  }
}

/** What a rule's input-independent matchers read: the tool, its kind and hints, and the calling agent. */
export type ToolView = Pick<CallView, 'kind' | 'hints'> & { readonly call: Pick<CallView['call'], 'tool' | 'agent'> };

/**
 * The first of the matchers that read only the tool and the agent (kinds, agents, hints, tags)
 * that does not match, or null. The same for every input: hidden tools (hiddenTools.ts) use it alone.
 */
export function toolMismatch(rule: CompiledRule, call: ToolView): MatcherName | null {
  if (rule.kinds && (call.kind === undefined || !rule.kinds.has(call.kind))) return 'kinds';
  if (rule.agents && !rule.agents.test(call.call.agent)) return 'agents';
  if (rule.hints) {
    const hints = call.hints;
    for (const [name, want] of rule.hints) if (hints[name] !== want) return 'hints';
  }
  if (rule.tags) {
    const tags = call.call.tool.tags;
    if (!tags || !tags.some((t) => rule.tags!.has(t))) return 'tags';
  }
  return null;
}

/** Does the rule match? Returns null when it does, else the first matcher that did not. */
export function mismatch(rule: CompiledRule, call: CallView, toolsAlreadyMatched = false): MatcherName | null {
  if (!toolsAlreadyMatched && rule.tools && !rule.tools.test(call.call.tool.id)) return 'tools';
  const byTool = toolMismatch(rule, call);
  if (byTool !== null) return byTool;
  // Loosening needs every part; tightening needs any part.
  const loosening = rule.decision === 'allow';
  if (rule.input) {
    for (const check of rule.input) {
      const { present, value } = resolvePointer(call.call.input, check.tokens);
      let ok: boolean;
      try {
        ok = check.test(present, value);
      } catch (error) {
        // An input too deep to compare is unknown: tightening rules take it, loosening ones never do.
        if (!(error instanceof InputTooDeepError)) throw error;
        ok = !loosening;
      }
      if (!ok) return 'input';
    }
  }
  if (rule.paths && !pathsMatch(rule.paths, call.paths, loosening)) return 'paths';
  if (rule.commands && !commandsMatch(rule.commands, call.command, loosening)) return 'commands';
  if (rule.domains && !urlsMatch(rule.domains, call.urls, loosening)) return 'domains';
  if (rule.urls && !urlsMatch(rule.urls, call.urls, loosening)) return 'urls';
  return null;
}

/**
 * A view with no URL matches no rule with `domains` or `urls`. Loosening needs every URL known
 * and matched; tightening takes any matched URL, and any unknown one (it could be anywhere).
 */
function urlsMatch(m: UrlMatcher, urls: readonly UrlReading[], loosening: boolean): boolean {
  if (urls.length === 0) return false;
  if (loosening) {
    for (const u of urls) if (!u.known || !m.test(u)) return false;
    return true;
  }
  for (const u of urls) if (!u.known || m.test(u)) return true;
  return false;
}

/** Whether a rule's `paths` take one resolved path (its globs and `!` excludes). */
export function pathMatches(m: PathMatcher, p: ResolvedPath): boolean {
  const rel = p.relative;
  const positive = (rel !== null && m.relative.include.test(rel)) || m.absolute.include.test(p.absolute);
  if (!positive) return false;
  return !((rel !== null && m.relative.exclude.test(rel)) || m.absolute.exclude.test(p.absolute));
}

function pathsMatch(m: PathMatcher, paths: CallPaths, loosening: boolean): boolean {
  if (loosening) {
    if (paths.opaque || paths.paths.length === 0) return false;
    for (const p of paths.paths) if (!pathMatches(m, p)) return false;
    return true;
  }
  if (paths.opaque) return true;
  for (const p of paths.paths) if (pathMatches(m, p)) return true;
  return false;
}
