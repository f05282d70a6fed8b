// Pure text edits of a policy file, for the editor: "Allow and Add Rule" (suggestions for an
// asked call and where to insert them) and the quick fixes of the diagnostics (move a shadowed
// rule, delete it, add an agents.spawn allow, rename a misspelt field). No `vscode` here: the
// extension turns the returned edits into a WorkspaceEdit.
//
// Every edit keeps the rest of the file as it was, byte for byte: comments, blank lines,
// trailing commas, tabs or spaces, EOLs (only a list emptied by a delete becomes `[]`). The rules array is cut into its elements, each with the
// comments attached to it (the comment lines directly above it, with no blank line between, and a
// comment after it on its line), and edits rearrange those pieces; only the new rule is
// rendered, in the style of its neighbours and with the indentation detected from the text.
// (jsonc-parser's `modify` is not used: with formatting options it reformats every line it
// touches, expanding a one-line neighbour and moving its trailing comment to the new element.
// The pieces come from jsonc-parser's tree and scanner; edits are its `Edit`s and `applyEdits`.)
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  applyEdits, createScanner, findNodeAtLocation, getNodeValue, parseTree,
  type FormattingOptions, type Node, type ParseError,
} from 'jsonc-parser';
import { commandOf, type ToolCall } from './call.js';
import { canonicalJson, mismatch, PreparedCall } from './compile.js';
import { covers } from './lint.js';
import { PathResolver } from './paths.js';
import { loadPolicyText, Policy, type DecideOptions, type PolicyLayer } from './policy.js';
import type { Rule } from './schema.js';
import { splitCommand } from './shell.js';

/** jsonc-parser's `Edit`: replace `length` characters at `offset` (of the original text) with `content`. */
export interface TextEdit {
  offset: number;
  length: number;
  content: string;
}

export interface RuleEditResult {
  /** Non-overlapping edits against the original text. */
  edits: TextEdit[];
  /** The text with the edits applied. */
  newText: string;
}

export interface InsertRuleResult extends RuleEditResult {
  /** The index the new rule has in `rules` of the new text. */
  insertedAt: number;
  /** The rule as inserted: its `id` gets a `-2`, `-3`, … suffix when the file already uses it. */
  rule: Rule;
}

/** The text cannot be edited safely (it does not parse, or `rules` is not an array). */
export class PolicyEditError extends Error {}

// ---------------------------------------------------------------------------------------------
// Suggestions for an asked call

export type SuggestionKind = 'exact' | 'command' | 'folder' | 'tool';

export interface RuleSuggestion {
  kind: SuggestionKind;
  label: string;
  description: string;
  rule: Rule;
}

export interface SuggestionOptions {
  workspaceFolder: string;
  /** Ids already used in the file: generated ids avoid them. */
  existingIds?: Iterable<string>;
  /** Resolve symbolic links when deciding whether a path is inside the workspace (default true). */
  followSymlinks?: boolean;
}

/** What a generated rule id looks like: lowercase words joined by `-`, starting with a letter. */
export const FRIENDLY_ID = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const MAX_ID_LENGTH = 48;
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
  const callPaths = resolver.collect(call.input, call.tool.pathArgs);
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

  if (pathsInside) {
    const prefixes = commandPrefixes(call);
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
  return out.flatMap((s) => {
    s.rule.id = uniqueId(friendlyId(s.rule.id!), used);
    if (!allowsAlone(s.rule, call, decideOptions)) return [];
    used.add(s.rule.id);
    return [s];
  });
}

/** The rule, alone in a policy, is valid and allows the call by itself. */
function allowsAlone(rule: Rule, call: ToolCall, options: DecideOptions): boolean {
  const layer = loadPolicyText(JSON.stringify({ version: 1, rules: [rule] }), '.agentpolicy.jsonc', 'workspace');
  if (!layer.valid) return false;
  const d = new Policy({ workspace: layer }).decide(call, options);
  return d.decision === 'allow' && d.rule?.index === 0;
}

const FAMILIES = ['builtin.', 'client.', 'mcp.', 'connector.', 'plugin.'];

function stripFamily(id: string): string {
  const family = FAMILIES.find((f) => id.startsWith(f));
  return family ? id.slice(family.length) : id;
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

/** Shortened at a word boundary, and always of the friendly shape. */
function friendlyId(id: string): string {
  let s = slug(id);
  if (!/^[a-z]/.test(s)) s = `allow-${s}`.replace(/-+$/, '');
  if (s.length > MAX_ID_LENGTH) {
    s = s.slice(0, MAX_ID_LENGTH);
    const cut = s.lastIndexOf('-');
    if (cut > 0) s = s.slice(0, cut);
  }
  return s;
}

function uniqueId(base: string, used: ReadonlySet<string>): string {
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
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
function commandPrefixes(call: ToolCall): { patterns: string[]; words: string[] } | undefined {
  const { command, opaque } = commandOf(call);
  if (opaque || command === undefined) return undefined;
  const split = splitCommand(command);
  if (!split.ok || split.commands.length === 0) return undefined;
  const patterns: string[] = [];
  let firstWords: string[] | undefined;
  for (const c of split.commands) {
    if (c.writesToFile || c.usesProcessSubstitution) return undefined;
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

// ---------------------------------------------------------------------------------------------
// Where a new rule goes

/**
 * The index of the first rule of this file that matches the call, so that a rule inserted there
 * decides it; `rules.length` when none does. (An invalid layer has no rules in force: 0.)
 */
export function insertionIndex(layer: PolicyLayer, call: ToolCall, options: DecideOptions): number {
  const prepared = new PreparedCall(call, new PathResolver(options.workspaceFolder, { followSymlinks: options.followSymlinks ?? true }));
  const i = layer.rules.findIndex((rule) => mismatch(rule, prepared) === null);
  return i === -1 ? layer.rules.length : i;
}

/**
 * Whether a workspace allow rule can change this decision at all: not when a managed rule
 * decided (it comes first), nor in an untrusted workspace (its allows only ask).
 */
export function canAllowByWorkspaceRule(decision: { rule: { layer: string } | null; lowered: boolean }, trusted = true): boolean {
  return trusted && !decision.lowered && decision.rule?.layer !== 'managed';
}

/** The first earlier rule that matches every call `index` could match (lint `shadowed`'s answer), if any. */
export function shadowingRuleIndex(layer: PolicyLayer, index: number): number | undefined {
  const later = layer.rules[index];
  if (!later) return undefined;
  for (let i = 0; i < index; i++) if (covers(layer.rules[i]!, later)) return i;
  return undefined;
}

/**
 * Where an `agents.spawn` allow belongs for `spawn-denied`: before the first rule that denies
 * spawning for one of the agents, else (the default denies) after every rule, so that no rule
 * of the file loses its say.
 */
export function spawnAllowIndex(
  layer: PolicyLayer,
  agents: readonly { name: string; subagents: readonly string[]; permissionMode?: 'auto' | 'ask' | 'deny' }[],
  workspaceFolder: string,
): number {
  const policy = new Policy({ [layer.layer]: layer });
  let best = layer.rules.length;
  for (const agent of agents) {
    if (agent.subagents.length === 0) continue;
    const fallbackDefault = agent.permissionMode === 'auto' ? 'allow' : agent.permissionMode === 'deny' ? 'deny' : 'ask';
    const d = policy.decide({ tool: { id: 'agents.spawn', kind: 'builtin' }, input: {}, agent: agent.name }, { workspaceFolder, fallbackDefault, followSymlinks: false });
    if (d.decision === 'deny' && d.rule) best = Math.min(best, d.rule.index);
  }
  return best;
}

/** The index of the rule whose text contains `offset` (e.g. a diagnostic's), if any. */
export function ruleIndexAt(text: string, offset: number): number | undefined {
  const rules = parseForEdit(text).rules;
  if (!rules?.children) return undefined;
  const i = rules.children.findIndex((c) => offset >= c.offset && offset < c.offset + c.length);
  return i === -1 ? undefined : i;
}

// ---------------------------------------------------------------------------------------------
// Edits

/** Indentation and EOL as the text uses them (tabs when any structural line starts with a tab). */
export function detectFormatting(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  let tabs = false;
  let smallest = Infinity;
  for (const line of text.split(/\r?\n/)) {
    const m = /^([ \t]+)["{}[\]]/.exec(line);
    if (!m) continue;
    if (m[1]!.includes('\t')) tabs = true;
    else smallest = Math.min(smallest, m[1]!.length);
  }
  if (tabs) return { insertSpaces: false, tabSize: 4, eol };
  return { insertSpaces: true, tabSize: Number.isFinite(smallest) ? Math.min(smallest, 8) : 2, eol };
}

const unitOf = (f: FormattingOptions): string => (f.insertSpaces ? ' '.repeat(f.tabSize ?? 2) : '\t');

/** Inserts `rule` at index `before` of `rules` ('end', or any index past the end, appends), creating `rules` when missing. */
export function insertRuleEdit(text: string, rule: Rule, before: number | 'end'): InsertRuleResult {
  const formatting = detectFormatting(text);
  let { root, rules } = parseForEdit(text);
  let base = text;
  if (!rules) {
    // No `rules` yet: an empty one after the last field, the way the file writes its fields.
    const object = ListModel.read(text, root, formatting);
    object.insertBody(object.length, '"rules": []', false);
    base = object.applyTo(text);
    ({ rules } = parseForEdit(base));
    if (!rules) throw new PolicyEditError('could not add "rules" to the policy file');
  }
  const used = new Set(ruleIds(rules));
  const inserted: Rule = rule.id !== undefined && used.has(rule.id) ? { ...rule, id: uniqueId(rule.id, used) } : rule;
  const model = ListModel.read(base, rules, formatting);
  const at = before === 'end' ? model.length : Math.max(0, Math.min(before, model.length));
  const expected = rulesValues(base);
  expected.splice(at, 0, JSON.parse(JSON.stringify(inserted)) as unknown);
  model.insertNew(at, inserted);
  const result = finish(text, model.applyTo(base));
  check(result.newText, (after) => canonicalJson(after) === canonicalJson(expected), 'the inserted rule is not where it should be');
  return { ...result, insertedAt: at, rule: inserted };
}

/** Moves rule `from` so that it ends up at index `to` (e.g. a shadowed rule above the rule that shadows it), with its comments and text as they are. */
export function moveRuleEdit(text: string, from: number, to: number): RuleEditResult {
  const { rules } = parseForEdit(text);
  const before = rulesValues(text);
  const n = rules?.children?.length ?? 0;
  if (!rules || from < 0 || from >= n || to < 0 || to >= n) throw new PolicyEditError(`there is no rule ${Math.max(from, to) + 1} to move`);
  if (from === to) return { edits: [], newText: text };
  const model = ListModel.read(text, rules, detectFormatting(text));
  model.move(from, to);
  const result = finish(text, model.applyTo(text));
  const expected = [...before];
  const [moved] = expected.splice(from, 1);
  expected.splice(to, 0, moved);
  check(result.newText, (after) => canonicalJson(after) === canonicalJson(expected), 'the rules are not in the intended order');
  return result;
}

/** Deletes rule `index` with the comments attached to it. */
export function deleteRuleEdit(text: string, index: number): RuleEditResult {
  const { rules } = parseForEdit(text);
  const before = rulesValues(text);
  if (!rules || index < 0 || index >= (rules.children?.length ?? 0)) throw new PolicyEditError(`there is no rule ${index + 1} to delete`);
  const model = ListModel.read(text, rules, detectFormatting(text));
  model.delete(index);
  const result = finish(text, model.applyTo(text));
  const expected = before.filter((_, i) => i !== index);
  check(result.newText, (after) => canonicalJson(after) === canonicalJson(expected), 'the rule was not deleted cleanly');
  return result;
}

export const SPAWN_ALLOW_RULE: Rule = { id: 'allow-spawn', tools: ['agents.spawn'], decision: 'allow' };

/** The `spawn-denied` fix: `{ "id": "allow-spawn", "tools": ["agents.spawn"], "decision": "allow" }` before rule `beforeIndex`. */
export function addSpawnAllowEdit(text: string, beforeIndex: number | 'end'): InsertRuleResult {
  return insertRuleEdit(text, { ...SPAWN_ALLOW_RULE, tools: [...SPAWN_ALLOW_RULE.tools!] }, beforeIndex);
}

/** Replaces the field name (a JSON string, quotes included) at `offset`/`length`, e.g. `"tool"` → `"tools"`. */
export function renameFieldEdit(text: string, offset: number, length: number, newName: string): RuleEditResult {
  const old = text.slice(offset, offset + length);
  let name: unknown;
  try {
    name = JSON.parse(old);
  } catch {
    name = undefined;
  }
  if (typeof name !== 'string' || !old.startsWith('"')) throw new PolicyEditError(`there is no field name at offset ${offset}`);
  const edit: TextEdit = { offset, length, content: JSON.stringify(newName) };
  return { edits: [edit], newText: applyEdits(text, [edit]) };
}

/** The name a `schema` diagnostic suggests (`…; did you mean "tools"?`), if it suggests one. */
export function suggestedFieldName(message: string): string | undefined {
  return /did you mean "((?:[^"\\]|\\.)+)"\?/.exec(message)?.[1];
}

// ---------------------------------------------------------------------------------------------
// Plumbing

function parseForEdit(text: string): { root: Node; rules: Node | undefined } {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || !root) throw new PolicyEditError('the policy file has syntax errors; fix them before editing its rules');
  if (root.type !== 'object') throw new PolicyEditError('the policy file is not a JSON object');
  const rules = findNodeAtLocation(root, ['rules']);
  if (rules && rules.type !== 'array') throw new PolicyEditError('"rules" is not an array');
  return { root, rules };
}

function ruleIds(rules: Node): string[] {
  return (rules.children ?? []).flatMap((c) => {
    const id = c.type === 'object' ? findNodeAtLocation(c, ['id']) : undefined;
    return id && typeof id.value === 'string' ? [id.value] : [];
  });
}

function rulesValues(text: string): unknown[] {
  const { rules } = parseForEdit(text);
  return rules ? (getNodeValue(rules) as unknown[]) : [];
}

/** One edit covering what differs between the texts (their common prefix and suffix kept). */
function finish(original: string, changed: string): RuleEditResult {
  if (original === changed) return { edits: [], newText: original };
  let start = 0;
  const max = Math.min(original.length, changed.length);
  while (start < max && original.charCodeAt(start) === changed.charCodeAt(start)) start++;
  let end = 0;
  while (end < max - start && original.charCodeAt(original.length - 1 - end) === changed.charCodeAt(changed.length - 1 - end)) end++;
  const edit: TextEdit = { offset: start, length: original.length - end - start, content: changed.slice(start, changed.length - end) };
  const newText = applyEdits(original, [edit]);
  return { edits: [edit], newText };
}

/** A guard against a bug here ever writing a file that means something else. */
function check(newText: string, ok: (rules: unknown[]) => boolean, what: string): void {
  let after: unknown[];
  try {
    after = rulesValues(newText);
  } catch (error) {
    throw new PolicyEditError(`internal error: the edited policy does not parse (${(error as Error).message})`);
  }
  if (!ok(after)) throw new PolicyEditError(`internal error: ${what}`);
}

// jsonc-parser's SyntaxKind is a const enum; its values are fixed by the library.
const COMMA = 5;
const LINE_COMMENT = 12;
const BLOCK_COMMENT = 13;
const LINE_BREAK = 14;
const EOF = 17;

interface Token {
  kind: number;
  offset: number;
  end: number;
}

function tokensBetween(text: string, from: number, to: number): Token[] {
  const scanner = createScanner(text, false);
  scanner.setPosition(from);
  const out: Token[] = [];
  for (;;) {
    const kind = scanner.scan();
    const offset = scanner.getTokenOffset();
    if (kind === EOF || offset >= to) break;
    out.push({ kind, offset, end: offset + scanner.getTokenLength() });
  }
  return out;
}

const isComment = (t: Token): boolean => t.kind === LINE_COMMENT || t.kind === BLOCK_COMMENT;

/** One element of the array as text: `body` (attached comments and the value), `mid` (before its comma), `post` (after it, on its line). */
interface Entry {
  body: string;
  mid: string;
  post: string;
  /** A value spanning several lines: new rules next to it are written the same way. */
  multiline: boolean;
}

/**
 * An array (or object: its elements are then properties) as pieces that serialise back to the
 * same text: `[` head (entry sep)* entry tail `]`, the comma after each entry but the last (and
 * after the last too when the file had a trailing comma).
 */
class ListModel {
  private constructor(
    private readonly open: number,
    private readonly close: number,
    private head: string,
    private readonly entries: Entry[],
    private readonly seps: string[],
    private tail: string,
    private readonly trailingComma: boolean,
    private readonly formatting: FormattingOptions,
    private readonly outerIndent: string,
  ) {}

  static read(text: string, list: Node, formatting: FormattingOptions): ListModel {
    const open = list.offset;
    const close = list.offset + list.length - 1;
    const values = list.children ?? [];
    const lineStart = Math.max(text.lastIndexOf('\n', open), text.lastIndexOf('\r', open)) + 1;
    const outerIndent = /^[ \t]*/.exec(text.slice(lineStart, open))![0];
    if (values.length === 0) return new ListModel(open, close, text.slice(open + 1, close), [], [], '', false, formatting, outerIndent);

    const leadStarts: number[] = [];
    const postEnds: number[] = [];
    const commas: (number | undefined)[] = [];
    values.forEach((v, k) => {
      const gapStart = k === 0 ? open + 1 : postEnds[k - 1]!;
      leadStarts.push(leadStart(tokensBetween(text, gapStart, v.offset), v.offset));
      const valueEnd = v.offset + v.length;
      const after = tokensBetween(text, valueEnd, k + 1 < values.length ? values[k + 1]!.offset : close);
      const comma = after.find((t) => t.kind === COMMA);
      commas.push(comma?.offset);
      const firstBreak = after.findIndex((t) => t.kind === LINE_BREAK);
      let postEnd = comma ? comma.end : valueEnd;
      if (firstBreak !== -1) {
        // Comments after the value on its own line are its own.
        for (const t of after.slice(0, firstBreak)) if (isComment(t) || t.kind === COMMA) postEnd = Math.max(postEnd, t.end);
      }
      postEnds.push(postEnd);
    });
    const entries: Entry[] = values.map((v, k) => {
      const valueEnd = v.offset + v.length;
      const comma = commas[k];
      const valueText = text.slice(v.offset, valueEnd);
      return {
        body: text.slice(leadStarts[k]!, valueEnd),
        mid: comma === undefined ? '' : text.slice(valueEnd, comma),
        post: comma === undefined ? text.slice(valueEnd, postEnds[k]!) : text.slice(comma + 1, postEnds[k]!),
        multiline: /[\r\n]/.test(valueText),
      };
    });
    const seps = values.slice(1).map((_, k) => text.slice(postEnds[k]!, leadStarts[k + 1]!));
    const n = values.length;
    const model = new ListModel(
      open, close, text.slice(open + 1, leadStarts[0]!), entries, seps, text.slice(postEnds[n - 1]!, close),
      commas[n - 1] !== undefined, formatting, outerIndent,
    );
    if (model.serialise() !== text.slice(open + 1, close)) throw new PolicyEditError('internal error: the rules array could not be taken apart');
    return model;
  }

  get length(): number {
    return this.entries.length;
  }

  /** The text before entry k (head or separator). */
  private before(k: number): string {
    return k === 0 ? this.head : this.seps[k - 1]!;
  }

  /** Entry k starts a line: the separator in front of a new element is a line break and its indentation. */
  private separatorFor(k: number): string {
    const prefix = this.before(k);
    const lastBreak = Math.max(prefix.lastIndexOf('\n'), prefix.lastIndexOf('\r'));
    if (lastBreak === -1) return ' ';
    const indent = prefix.slice(lastBreak + 1);
    return this.formatting.eol + (/^[ \t]*$/.test(indent) ? indent : this.outerIndent + unitOf(this.formatting));
  }

  private indentFor(k: number): string {
    const sep = this.separatorFor(k);
    return sep === ' ' ? '' : sep.slice(this.formatting.eol!.length);
  }

  /** A new rule, written like its neighbour (one line, or one field a line; the latter in an empty array). */
  insertNew(at: number, rule: Rule): void {
    const unit = unitOf(this.formatting);
    const eol = this.formatting.eol!;
    const ref = Math.min(at, this.entries.length - 1);
    const multiline = ref < 0 || (this.entries[ref]!.multiline && this.separatorFor(ref) !== ' ');
    const indent = ref < 0 ? this.outerIndent + unit : this.indentFor(ref);
    this.insertBody(at, renderRule(rule, multiline, indent, unit, eol), multiline);
  }

  /** Text of a new element at index `at`, on its own line when its neighbours are (in an empty list: always). */
  insertBody(at: number, body: string, multiline: boolean): void {
    const eol = this.formatting.eol!;
    if (this.entries.length === 0) {
      const kept = this.head.trim() === '' ? '' : this.head.trimEnd();
      this.head = `${kept}${eol}${this.outerIndent}${unitOf(this.formatting)}`;
      this.tail = `${eol}${this.outerIndent}`;
      this.entries.push({ body, mid: '', post: '', multiline });
      return;
    }
    this.place(at, { body, mid: '', post: '', multiline }, this.separatorFor(Math.min(at, this.entries.length - 1)));
  }

  private place(at: number, entry: Entry, sep: string): void {
    if (at >= this.entries.length) {
      this.seps.push(sep);
      this.entries.push(entry);
    } else {
      this.entries.splice(at, 0, entry);
      this.seps.splice(at, 0, sep);
    }
  }

  delete(k: number): Entry {
    const n = this.entries.length;
    const left = this.before(k);
    const right = k === n - 1 ? this.tail : this.seps[k]!;
    const merged = mergeAround(left, right, k === 0);
    const [removed] = this.entries.splice(k, 1);
    if (n === 1) {
      this.head = merged.trim() === '' ? '' : merged;
      this.tail = '';
    } else if (k === 0) {
      this.head = merged;
      this.seps.splice(0, 1);
    } else if (k === n - 1) {
      this.tail = merged;
      this.seps.splice(k - 1, 1);
    } else {
      this.seps[k - 1] = merged;
      this.seps.splice(k, 1);
    }
    return removed!;
  }

  move(from: number, to: number): void {
    const entry = this.delete(from);
    const ref = Math.min(to, this.entries.length - 1);
    this.place(to, entry, this.separatorFor(ref));
  }

  serialise(): string {
    const n = this.entries.length;
    let out = this.head;
    this.entries.forEach((e, k) => {
      const comma = k < n - 1 || this.trailingComma ? ',' : '';
      out += e.body + e.mid + comma + e.post;
      if (k < n - 1) out += this.seps[k]!;
    });
    return out + this.tail;
  }

  applyTo(text: string): string {
    return text.slice(0, this.open + 1) + this.serialise() + text.slice(this.close);
  }
}

/**
 * The text left around a removed element: what was on its left up to the line break before it
 * (so its own line goes, and blank lines or comments above it stay), then what was on its right.
 * In an inline array, the separator on its left goes (or the spaces on its right, for the first).
 */
function mergeAround(left: string, right: string, first: boolean): string {
  const lastBreak = /(?:\r\n|\r|\n)[ \t]*$/.exec(left);
  if (lastBreak) return left.slice(0, lastBreak.index) + right;
  return first ? left + right.trimStart() : right;
}

/**
 * Where an element's text begins: the run of comments right above it (no blank line between),
 * on lines after the previous element's (or the `[`'s) line. Inline arrays: comments before it.
 */
function leadStart(gap: Token[], valueStart: number): number {
  const firstBreak = gap.findIndex((t) => t.kind === LINE_BREAK);
  const considered = firstBreak === -1 ? gap : gap.slice(firstBreak + 1);
  let candidate: number | undefined;
  let breaks = 0;
  for (const t of considered) {
    if (t.kind === LINE_BREAK) {
      if (++breaks >= 2) candidate = undefined;
    } else if (isComment(t)) {
      candidate ??= t.offset;
      breaks = 0;
    }
  }
  return candidate ?? valueStart;
}

const KEY_ORDER = ['id', 'tools', 'kinds', 'agents', 'hints', 'tags', 'paths', 'commands', 'input', 'decision', 'reason', 'timeout', 'onTimeout', 'remember'];

/** A rule as the policies of this project write them: one field a line, or all on one line. */
function renderRule(rule: Rule, multiline: boolean, indent: string, unit: string, eol: string): string {
  const record = rule as Record<string, unknown>;
  const keys = [...KEY_ORDER.filter((k) => record[k] !== undefined), ...Object.keys(record).filter((k) => !KEY_ORDER.includes(k) && record[k] !== undefined)];
  const fields = keys.map((k) => `${JSON.stringify(k)}: ${inlineJson(record[k])}`);
  if (!multiline) return `{ ${fields.join(', ')} }`;
  return `{${eol}${fields.map((f) => indent + unit + f).join(`,${eol}`)}${eol}${indent}}`;
}

/** JSON on one line with a space after `,` and `:` and inside braces: `{ "a": ["x", "y"] }`. */
function inlineJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inlineJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    return `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${inlineJson(v)}`).join(', ')} }`;
  }
  return JSON.stringify(value) ?? 'null';
}
