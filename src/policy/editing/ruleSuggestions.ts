// "Allow and Add Rule": the rules that would allow an asked call from now on (this exact input,
// the exact commands that asked,
// these hosts, this command prefix, this folder of paths, this tool), where in the file such a rule must go to
// decide the call, and whether a workspace rule can change the decision at all. The editor
// inserts the chosen rule with insertRuleEdit (ruleTextEdits.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commandOf, type ToolCall } from '../rules/call.js';
import { mismatch } from '../rules/compile.js';
import { PreparedCall, type CallPart, type CallView } from '../rules/preparedCall.js';
import { PathResolver } from '../paths/paths.js';
import { loadPolicyText, Policy, type DecideOptions, type PolicyDecision, type PolicyLayer } from '../policy.js';
import { friendlyId, slug, uniqueId } from './ruleIds.js';
import type { Rule } from '../file/schema.js';
import { splitCommand } from '../shell/shellSplit.js';
import type { SimpleCommand } from '../shell/shellWalker.js';

export type SuggestionKind = 'exact' | 'commands' | 'host' | 'command' | 'folder' | 'tool';

export interface RuleSuggestion {
  kind: SuggestionKind;
  label: string;
  description: string;
  rule: Rule;
}

export interface SuggestionOptions {
  workspaceFolder: string;
  /**
   * The decision that asked. When the call has several parts, the suggestions cover the parts
   * that did not allow (a command prefix of those commands only), not the whole chain.
   */
  asked?: PolicyDecision;
  /** Ids already used in the file: generated ids avoid them. */
  existingIds?: Iterable<string>;
  /** Resolve symbolic links when deciding whether a path is inside the workspace (default true). */
  followSymlinks?: boolean;
}

/** At most this many leading words of a command make its prefix. */
const MAX_PREFIX_WORDS = 3;

/**
 * The ways to allow an asked call from now on, narrowest first: this exact input, this command
 * prefix, this folder of paths, this tool. Each rule alone allows the call (checked here; a
 * suggestion that would not is dropped). When the call names a path outside the workspace
 * folder (or a path field that is not a string), only the exact-input rule is offered.
 */
export function ruleSuggestions(call: ToolCall, options: SuggestionOptions): RuleSuggestion[] {
  const resolver = new PathResolver(options.workspaceFolder, { followSymlinks: options.followSymlinks ?? true });
  // The decision split the call by its URLs only if its policy reads URLs: take the split that fits.
  const asked = askedParts(new PreparedCall(call, resolver), options.asked) ?? askedParts(new PreparedCall(call, resolver, false), options.asked);
  const callPaths = asked ? { paths: asked.flatMap((p) => p.paths.paths), opaque: asked.some((p) => p.paths.opaque) } : resolver.collect(call.input, call.tool.pathArgs);
  const pathsInside = !callPaths.opaque && callPaths.paths.every((p) => p.relative !== null);
  const toolSlug = slug(stripFamily(call.tool.id)) || 'tool';
  const toolGlob = escapeGlob(call.tool.id);
  const out: RuleSuggestion[] = [];

  out.push({
    kind: 'exact',
    label: 'This exact input',
    description: `${call.tool.id} ${truncate(compactJson(call.input), 100)}`,
    rule: {
      id: `allow-${toolSlug}-exact`,
      tools: [toolGlob],
      // The whole input: a rule over some fields only would also allow the same fields with others added.
      input: { '': call.input === undefined ? { exists: false } : { equals: call.input } },
      decision: 'allow',
    },
  });

  // The hosts of the URLs that asked, as VS Code's URL approvals offer: only when every one was read.
  const urls = (asked ?? [new PreparedCall(call, resolver)]).flatMap((v) => v.urls);
  if (pathsInside && urls.length > 0 && urls.every((u) => u.known)) {
    const hosts = [...new Set(urls.map((u) => (u.known ? u.host : '')))];
    out.push({
      kind: 'host',
      label: hosts.length === 1 ? 'This host' : 'These hosts',
      description: `${hosts.join(', ')} (${call.tool.id})`,
      rule: { id: `allow-${toolSlug}-${slug(hosts[0]!)}`, tools: [toolGlob], domains: hosts, decision: 'allow' },
    });
  }

  // The commands that asked, word for word: the chain's other parts need no rule, and the same
  // commands in another chain (or alone) are allowed, as a part grant of the session allows them.
  const exactCommands = pathsInside ? askedCommandsExactly(call, asked) : undefined;
  if (exactCommands) {
    out.push({
      kind: 'commands',
      label: exactCommands.length === 1 ? 'This exact command' : 'These exact commands',
      description: `${exactCommands.join(', ')} (${call.tool.id})`,
      rule: { id: `allow-${toolSlug}-${slug(exactCommands[0]!)}`, tools: [toolGlob], commands: exactCommands, decision: 'allow' },
    });
  }

  if (pathsInside) {
    const prefixes = commandPrefixes(call, asked);
    if (prefixes) {
      out.push({
        kind: 'command',
        label: 'This command prefix',
        description: `${prefixes.patterns.join(', ')} (${call.tool.id})`,
        rule: { id: `allow-${toolSlug}-${slug(prefixes.words.join(' '))}`, tools: [toolGlob], commands: prefixes.patterns, decision: 'allow' },
      });
    }
    // A folder rule says nothing of what a command does in that folder (`cwd`): none for commands.
    const command = commandOf(call);
    if (callPaths.paths.length > 0 && command.command === undefined && !command.opaque) {
      const { globs: folders, names } = folderGlobs(callPaths.paths.map((p) => ({ relative: p.relative!, directory: isDirectory(p.absolute) })));
      out.push({
        kind: 'folder',
        label: 'This folder of paths',
        description: `${folders.join(', ')} (${call.tool.id})`,
        rule: { id: `allow-${toolSlug}-${slug(names.join(' ')) || 'folder'}`, tools: [toolGlob], paths: folders, decision: 'allow' },
      });
    }
    out.push({
      kind: 'tool',
      label: 'This tool',
      description: `every call of ${call.tool.id}, whatever its input`,
      rule: { id: `allow-${toolSlug}`, tools: [toolGlob], decision: 'allow' },
    });
  }

  const used = new Set(options.existingIds ?? []);
  const decideOptions: DecideOptions = { workspaceFolder: options.workspaceFolder, followSymlinks: options.followSymlinks ?? true };
  const askedIndexes = asked?.map((p) => p.index);
  return out.flatMap((s) => {
    s.rule.id = uniqueId(friendlyId(s.rule.id!), used);
    if (!allowsAlone(s.rule, call, decideOptions, askedIndexes)) return [];
    used.add(s.rule.id);
    return [s];
  });
}

/** The parts of a call of several parts that the asked decision did not allow, each with its place; undefined for a call judged whole. */
function askedParts(prepared: PreparedCall, decision: PolicyDecision | undefined): Array<CallPart & { index: number }> | undefined {
  const parts = decision?.parts ? prepared.parts() : undefined;
  if (!parts || parts.length !== decision!.parts!.length) return undefined;
  return parts.flatMap((part, index) => (decision!.parts![index]!.decision === 'allow' ? [] : [Object.assign(part, { index })]));
}

/**
 * The rule, alone in a policy, is valid and allows the call by itself, or (for a call of several
 * parts) allows each of the parts that asked.
 */
function allowsAlone(rule: Rule, call: ToolCall, options: DecideOptions, askedIndexes: readonly number[] | undefined): boolean {
  const layer = loadPolicyText(JSON.stringify({ version: 1, rules: [rule] }), '.agentpolicy.jsonc', 'workspace');
  if (!layer.valid) return false;
  const d = new Policy({ workspace: layer }).decide(call, options);
  if (askedIndexes && d.parts) return askedIndexes.every((i) => d.parts![i]?.decision === 'allow' && d.parts![i]?.rule?.index === 0);
  return d.decision === 'allow' && d.rule?.index === 0;
}

const FAMILIES = ['builtin.', 'client.', 'mcp.', 'connector.', 'plugin.'];

function stripFamily(id: string): string {
  const family = FAMILIES.find((f) => id.startsWith(f));
  return family ? id.slice(family.length) : id;
}

/** Characters that are magic in a glob (policy globs.ts), plus the `!` that excludes. */
const GLOB_SPECIAL = /[*?[\]{}()!+@\\]/g;

/** A glob that matches exactly this text. */
export function escapeGlob(text: string): string {
  return text.replace(GLOB_SPECIAL, (c) => `\\${c}`);
}

function compactJson(value: unknown): string {
  return value === undefined ? '(no input)' : (JSON.stringify(value) ?? String(value));
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A word that names a program or subcommand, not an argument: no options, paths, values or expansions. */
const COMMAND_WORD = /^[A-Za-z_][A-Za-z0-9_:-]*$/;
const PROGRAM_WORD = /^[A-Za-z0-9_./][A-Za-z0-9_./:-]*$/;
const ASSIGNMENT_WORD = /^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_./:,-]*$/;

/** Programs whose arguments are another command or code: a prefix of them allows anything. */
const RUNS_ANYTHING = new Set([
  'sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh', 'pwsh', 'powershell', 'cmd',
  'eval', 'exec', 'source', '.', 'command', 'builtin', 'env', 'sudo', 'doas', 'su', 'runuser', 'xargs', 'nohup', 'nice',
  'timeout', 'time', 'watch', 'strace', 'setsid', 'chroot', 'ssh', 'find',
  'python', 'python2', 'python3', 'node', 'deno', 'bun', 'perl', 'ruby', 'php', 'lua', 'osascript',
]);

/**
 * One pattern per distinct simple command: its leading assignments, program and up to two
 * subcommand-like words, then `*`. Undefined when some simple command has no such prefix, or can
 * never be allowed (a redirect to a file, process substitution, unparseable text): a rule from
 * the first command alone would not allow the whole line.
 */
function commandPrefixes(call: ToolCall, asked: readonly CallPart[] | undefined): { patterns: string[]; words: string[] } | undefined {
  const { command, opaque } = commandOf(call);
  if (opaque || command === undefined) return undefined;
  let commands: readonly SimpleCommand[];
  if (asked) {
    // Only the parts that asked; one that cannot be seen into gets no prefix.
    if (asked.some((p) => !p.command.parsed || p.command.commands.length !== 1 || p.tightenOnly)) return undefined;
    commands = asked.map((p) => p.command.commands[0]!);
  } else {
    const split = splitCommand(command);
    if (!split.ok) return undefined;
    // A part only ask and deny rules judge needs no allow.
    commands = split.commands.filter((c) => c.tightenOnly !== true);
  }
  if (commands.length === 0) return undefined;
  const patterns: string[] = [];
  let firstWords: string[] | undefined;
  for (const c of commands) {
    if (c.writesToFile || c.usesProcessSubstitution || c.dynamic === true) return undefined;
    const words: string[] = [];
    let i = 0;
    while (i < c.words.length && ASSIGNMENT_WORD.test(c.words[i]!)) words.push(c.words[i++]!);
    const program = c.words[i];
    if (program === undefined || !PROGRAM_WORD.test(program) || program.startsWith('-')) return undefined;
    // `bash *`, `sudo *`, `python3 *` would allow any command at all: no prefix for those.
    if (RUNS_ANYTHING.has(path.posix.basename(program))) return undefined;
    words.push(program);
    let taken = 1;
    for (i++; i < c.words.length && taken < MAX_PREFIX_WORDS && COMMAND_WORD.test(c.words[i]!); i++, taken++) words.push(c.words[i]!);
    const pattern = `${words.join(' ')} *`;
    if (!patterns.includes(pattern)) patterns.push(pattern);
    firstWords ??= words.filter((w) => !ASSIGNMENT_WORD.test(w));
  }
  return { patterns, words: firstWords ?? [] };
}

/** A word a command pattern matches only as itself: no glob or extglob character. */
const EXACT_WORD = /^[A-Za-z0-9_%=:,./-]+$/;

/**
 * The simple commands of a compound command that asked, each as a pattern of its exact words;
 * undefined when one cannot be written so (a glob character in a word, a write to a file, a
 * program that runs anything it is given: `bash` alone reads its script from its input), or the
 * call was judged whole.
 */
function askedCommandsExactly(call: ToolCall, asked: readonly CallPart[] | undefined): string[] | undefined {
  const { command, opaque } = commandOf(call);
  if (opaque || command === undefined) return undefined;
  // A call of one command has "This exact input" already.
  if (!asked || asked.some((p) => !p.command.parsed || p.command.commands.length !== 1 || p.tightenOnly)) return undefined;
  const commands = asked.map((p) => p.command.commands[0]!);
  const patterns: string[] = [];
  for (const c of commands) {
    if (c.writesToFile || c.usesProcessSubstitution || c.dynamic === true || c.words.length === 0) return undefined;
    const program = c.words.find((w) => !ASSIGNMENT_WORD.test(w));
    if (program === undefined || program.startsWith('-') || RUNS_ANYTHING.has(path.posix.basename(program))) return undefined;
    if (!c.words.every((w) => EXACT_WORD.test(w))) return undefined;
    const pattern = c.words.join(' ');
    if (!patterns.includes(pattern)) patterns.push(pattern);
  }
  return patterns.length > 0 ? patterns : undefined;
}

/**
 * `<dir>/**` for the folder of each path (`**` for the workspace folder itself), nested folders
 * folded into their parents. A path that is a directory is its own folder (`src` and `src/**`).
 */
function folderGlobs(paths: readonly { relative: string; directory: boolean }[]): { globs: string[]; names: string[] } {
  const dirs: { dir: string; itself: boolean }[] = [];
  for (const p of paths) {
    const parent = path.posix.dirname(p.relative);
    const dir = p.directory ? p.relative : parent === '.' ? '' : parent;
    const known = dirs.find((d) => d.dir === dir);
    if (known) known.itself ||= p.directory;
    else dirs.push({ dir, itself: p.directory });
  }
  if (dirs.some((d) => d.dir === '')) return { globs: ['**'], names: ['workspace'] };
  const kept = dirs.filter((d) => !dirs.some((o) => o.dir !== d.dir && d.dir.startsWith(`${o.dir}/`)));
  return {
    globs: kept.flatMap((d) => (d.itself ? [escapeGlob(d.dir), `${escapeGlob(d.dir)}/**`] : [`${escapeGlob(d.dir)}/**`])),
    names: kept.map((d) => d.dir),
  };
}

function isDirectory(absolute: string): boolean {
  try {
    return fs.statSync(absolute).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The index of the first rule of this file that matches the call, so that a rule inserted there
 * decides it; `rules.length` when none does. (An invalid layer has no rules in force: 0.)
 */
export function insertionIndex(layer: PolicyLayer, call: ToolCall, options: DecideOptions, asked?: PolicyDecision): number {
  const prepared = new PreparedCall(call, new PathResolver(options.workspaceFolder, { followSymlinks: options.followSymlinks ?? true }));
  // A call of several parts: before the first rule that decides any part that asked.
  const views: CallView[] = askedParts(prepared, asked) ?? [prepared];
  let first = layer.rules.length;
  for (const view of views) {
    const i = layer.rules.findIndex((rule) => mismatch(rule, view) === null);
    if (i !== -1 && i < first) first = i;
  }
  return first;
}

/**
 * Whether a workspace allow rule can change this decision at all: not when a managed rule
 * decided (it comes first), nor in an untrusted workspace (its allows only ask).
 */
export function canAllowByWorkspaceRule(decision: { rule: { layer: string } | null; lowered: boolean }, trusted = true): boolean {
  return trusted && !decision.lowered && decision.rule?.layer !== 'managed';
}
