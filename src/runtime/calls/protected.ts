// Protected files: a call that would write, rename or delete the policy files, the agents file
// or the editor files that widen what agents may do is always asked, whatever the rules say,
// and can never be allowed for the session. Nothing an agent does may approve the agent.
// Imports the policy engine and session options' types only.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandOf, effectiveHints, type ToolDescriptor } from '../../policy/rules/call.js';
import { CONVENTIONAL_PATH_FIELDS, realpathOfExistingPrefix } from '../../policy/paths/paths.js';
import { splitCommand } from '../../policy/shell/shellSplit.js';
import { homeStartupPaths, WORKSPACE_PERSISTENCE_FILES } from '../sandbox/persistenceFiles.js';
import type { ToolHook } from '../tree/sessionOptions.js';

/**
 * The files that say what agents may do: the policy and agents files, the VS Code files that
 * could widen it, other agents' settings and hooks. An entry ending in `/` is a folder; any
 * protected path protects everything under it. Workspace-relative.
 */
export const AGENT_CONTROL_FILES: readonly string[] = [
  '.agentpolicy.jsonc', '.agents.jsonc', '.vscode/settings.json', '.vscode/mcp.json',
  '.git/hooks/', '.git/config',
  '.claude/settings.json', '.claude/settings.local.json', '.gemini/settings.json', '.codex/',
  '.github/hooks/', '.cursor/hooks.json',
];

/**
 * Default protected files, workspace-relative: the agent control files and the persistence files
 * (persistenceFiles.ts: what runs code later). Some of the first lie in folders of the second
 * (`.vscode/settings.json` in `.vscode/`): kept, so each list says all it means on its own.
 */
export const DEFAULT_PROTECTED_FILES: readonly string[] = [...new Set([...AGENT_CONTROL_FILES, ...WORKSPACE_PERSISTENCE_FILES])];

/**
 * A session's protected paths, absolute: the defaults in `workspaceFolder`, the home folder's
 * shell start-up files, and `configured` (the policy files, the policy's `persistenceFiles`;
 * relative ones against the workspace). A folder keeps its trailing `/`.
 */
export function protectedPathsOf(workspaceFolder: string, configured: readonly string[] = [], home: string = os.homedir()): string[] {
  const resolve = (f: string): string => path.resolve(workspaceFolder, f) + (f.endsWith('/') && f.length > 1 ? '/' : '');
  return [...DEFAULT_PROTECTED_FILES.map(resolve), ...homeStartupPaths(home), ...configured.map(resolve)];
}

export const PROTECTED_FILES_HOOK = 'protected-files';

const ONCE = 'only a person can allow this, once';

/** `files` may change while the session runs (the policy's `persistenceFiles`): a function is asked at each call. */
export function protectedFilesHook(files: readonly string[] | (() => readonly string[])): ToolHook {
  if (typeof files !== 'function') return { name: PROTECTED_FILES_HOOK, check: protectedFilesCheck(files) };
  let last: { files: readonly string[]; check: ReturnType<typeof protectedFilesCheck> } | undefined;
  return {
    name: PROTECTED_FILES_HOOK,
    check: (call) => {
      const now = files();
      if (last?.files !== now) last = { files: now, check: protectedFilesCheck(now) };
      return last.check(call);
    },
  };
}

/**
 * Why a call would change a protected file (the title to ask with), or undefined. Reads only the
 * tool's descriptor: `agentpolicy hook` checks other agents' calls with it too.
 */
export function protectedFilesCheck(files: readonly string[]): (call: { tool: ToolDescriptor; input: unknown; workspaceFolder: string }) => string | undefined {
  const perFolder = new Map<string, ProtectedName[]>();
  // The literal paths, normalised once; where they really lead is resolved again on every call,
  // so that a `.vscode` made (or replaced) by a symbolic link during the session stays protected.
  const literal = files.map((f) => path.resolve(f));
  return ({ tool, input, workspaceFolder }) => {
    // Builtins' annotations are ours and honest; anyone else's read-only claim is not trusted here.
    if (tool.kind === 'builtin' && effectiveHints(tool.annotations).readOnlyHint) return undefined;
    const workspace = path.resolve(workspaceFolder);
    let shown = perFolder.get(workspace);
    if (!shown) perFolder.set(workspace, (shown = literal.map((f) => nameIn(workspace, f))));
    const { command } = commandOf({ tool, input, agent: '' });
    const values = pathValues(input, tool.pathArgs);
    const foreign = tool.kind !== 'builtin' && tool.kind !== 'client';
    // Resolving the protected paths costs file-system calls: only for a call that could reach one.
    if (values.length === 0 && command === undefined && !foreign) return undefined;
    const targets = protectedTargets(literal);
    const roots = [workspace, realpathOfExistingPrefix(workspace)];
    for (const value of values) {
      const forms = pathForms(workspace, value);
      // Where a command runs is no target: the workspace folder (and above) there is no ask.
      const hit = matchProtected(forms, targets, command !== undefined ? roots : []);
      if (hit) return `${tool.id} would change the protected file ${shownOf(workspace, hit)}: ${ONCE}`;
      const linked = hardLinkTo(forms[1], targets);
      if (linked) return `${tool.id} would change ${value}, a hard link to the protected file ${shownOf(workspace, linked)}: ${ONCE}`;
    }
    if (command !== undefined) {
      const named = commandNaming(command, commandCwd(input, workspace), workspace, roots, targets, shown);
      if (named) return named;
    }
    // A tool that is not ours may take its paths in any field, nested or not (file_path, edits[].path…),
    // and resolve them its own way: any string that names a protected file asks.
    if (foreign) {
      const named = stringNaming(input, workspace, shown, targets);
      if (named !== undefined) return `${tool.id} names the protected file ${shownOf(workspace, named)}: ${ONCE}`;
    }
    return undefined;
  };
}

interface Target {
  /** As configured, normalised. */
  literal: string;
  /** Through symbolic links, as of this call. */
  resolved: string;
}

function protectedTargets(literal: readonly string[]): Target[] {
  return literal.map((f) => ({ literal: f, resolved: realpathOfExistingPrefix(f) }));
}

function shownOf(workspace: string, file: string): string {
  return path.relative(workspace, file) || file;
}

/** `child` strictly under `parent`. */
function isUnder(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/** The literal (normalised, no links followed) and resolved (through links) forms of a path value. */
function pathForms(base: string, value: string): [string, string] {
  let raw = value;
  if (raw.startsWith('file:')) {
    try {
      raw = fileURLToPath(raw);
    } catch {
      // not a file URI: a relative path
    }
  }
  const lit = path.resolve(base, raw);
  return [lit, realpathOfExistingPrefix(lit)];
}

/**
 * The protected path that one of `forms` names: equal to it, under it (a protected folder), or a
 * folder holding it, except the folders in `roots` and their ancestors.
 */
function matchProtected(forms: readonly string[], targets: readonly Target[], roots: readonly string[]): string | undefined {
  for (const form of forms) {
    const excluded = roots.some((r) => r === form || isUnder(r, form));
    for (const t of targets) {
      for (const p of [t.literal, t.resolved]) {
        if (form === p || isUnder(form, p) || (!excluded && isUnder(p, form))) return t.literal;
      }
    }
  }
  return undefined;
}

/** The protected file that `resolved`, an existing file with more than one link, is a hard link to. */
function hardLinkTo(resolved: string, targets: readonly Target[]): string | undefined {
  const st = statQuietly(resolved);
  if (!st || !st.isFile() || st.nlink < 2) return undefined;
  for (const t of targets) {
    const pst = statQuietly(t.resolved);
    if (pst && pst.isFile() && pst.dev === st.dev && pst.ino === st.ino) return t.literal;
  }
  return undefined;
}

function statQuietly(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The string values of a call's path fields (the declared ones, else the conventional ones). */
function pathValues(input: unknown, declared: readonly string[] | undefined): string[] {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return [];
  const record = input as Record<string, unknown>;
  const out: string[] = [];
  for (const field of declared ?? CONVENTIONAL_PATH_FIELDS) {
    if (!Object.prototype.hasOwnProperty.call(record, field)) continue;
    const value = record[field];
    if (typeof value === 'string') out.push(value);
    else if (Array.isArray(value)) for (const item of value) if (typeof item === 'string') out.push(item);
  }
  return out;
}

function commandCwd(input: unknown, workspace: string): string {
  const cwd = input !== null && typeof input === 'object' ? (input as Record<string, unknown>).cwd : undefined;
  return typeof cwd === 'string' ? path.resolve(workspace, cwd) : workspace;
}

/** The text a shell would most likely read, quotes and escapes taken out: `".vs"'code'` → `.vscode`. */
function unquoted(text: string): string {
  return text.replace(/\\\n/g, '').replace(/["'\\$]/g, '');
}

/**
 * Why a command that names a protected file, or a folder holding one, is asked: by a word of its
 * simple commands (after quote removal), by its raw text, or, when it does not split cleanly, by
 * any piece of a protected name.
 */
function commandNaming(
  command: string, cwd: string, workspace: string, roots: readonly string[], targets: readonly Target[], shown: readonly ProtectedName[],
): string | undefined {
  const texts = [command, unquoted(command)];
  for (const { names } of shown) {
    for (const name of names) {
      if (texts.some((t) => t.includes(name))) return `the command mentions the protected file ${name}: ${ONCE}`;
    }
  }
  let split: ReturnType<typeof splitCommand> | undefined;
  try {
    split = splitCommand(command);
  } catch {
    split = undefined; // no parser: judged by its text alone, below
  }
  // Words are read against the cwd and against every folder a `cd` or `pushd` of the line goes to
  // (in whatever order they run): `cd src && rm -rf ../.git`.
  const bases = [cwd];
  for (const simple of split?.commands ?? []) {
    const [first, to] = simple.words;
    if ((first === 'cd' || first === 'pushd') && to !== undefined && !to.startsWith('-') && !to.startsWith('~')) {
      for (const base of [...bases]) if (bases.length < 16) bases.push(path.resolve(base, to));
    }
  }
  for (const simple of split?.commands ?? []) {
    for (const word of simple.words) {
      for (const [candidate, forms] of wordPaths(word).flatMap((w) => bases.map((b) => [w, pathForms(b, w)] as const))) {
        const hit = matchProtected(forms, targets, roots);
        if (hit) return `the command names ${candidate}, which is, holds or lies in the protected file ${shownOf(workspace, hit)}: ${ONCE}`;
        const linked = hardLinkTo(forms[1], targets);
        if (linked) return `the command names ${candidate}, a hard link to the protected file ${shownOf(workspace, linked)}: ${ONCE}`;
      }
    }
  }
  if (!split || !split.ok) {
    const flat = unquoted(command);
    for (const { pieces } of shown) {
      const piece = pieces.find((p) => flat.includes(p));
      if (piece) return `the command could not be analysed and mentions ${piece}, part of a protected file's name: ${ONCE}`;
    }
  }
  return undefined;
}

/** The paths a word may name: itself, its unquoted text, and what follows `=` (`of=.git/config`). */
function wordPaths(word: string): string[] {
  const out = new Set<string>();
  for (const w of [word, unquoted(word)]) {
    if (w === '' || w.startsWith('-') && !w.includes('=')) continue;
    out.add(w);
    const eq = w.indexOf('=');
    if (eq >= 0 && eq < w.length - 1) out.add(w.slice(eq + 1));
  }
  return [...out].filter((w) => w !== '' && !w.startsWith('~'));
}

interface ProtectedName {
  file: string;
  /** How a string would name it: relative to the workspace (`.vscode/mcp.json`), else absolute. */
  shown: string;
  /** Substrings of a command's text that name it: its shown path, and its own name when that is distinctive (`mcp.json`, not `config`). */
  names: string[];
  /** The pieces of its shown path (`vscode`, `mcp.json`), for commands that cannot be analysed. */
  pieces: string[];
}

function nameIn(workspaceFolder: string, file: string): ProtectedName {
  const relative = path.relative(workspaceFolder, file);
  const shown = relative.startsWith('..') || path.isAbsolute(relative) ? file : relative.split(path.sep).join('/');
  const base = path.basename(file);
  const names = [shown];
  if (base.includes('.') && base !== shown) names.push(base);
  // The last two segments: a managed policy file far outside the workspace is not judged by `home`.
  const pieces = shown.split('/').slice(-2).map((s) => s.replace(/^\.+/, '')).filter((s) => s.length > 0);
  return { file, shown, names, pieces };
}

/**
 * The protected file that a string anywhere in the input names (depth-limited): by its path
 * relative to the workspace (`.vscode/mcp.json` in `"edit .vscode/mcp.json"`), or resolved as a path.
 */
function stringNaming(value: unknown, workspaceFolder: string, names: readonly ProtectedName[], targets: readonly Target[], depth = 0): string | undefined {
  if (typeof value === 'string') {
    for (const { file, shown } of names) {
      if (value.includes(shown)) return file;
    }
    const forms = pathForms(workspaceFolder, value);
    return targets.find((t) => forms.includes(t.literal) || forms.includes(t.resolved))?.literal;
  }
  if (depth > 64 || typeof value !== 'object' || value === null) return undefined;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    const hit = stringNaming(item, workspaceFolder, names, targets, depth + 1);
    if (hit !== undefined) return hit;
  }
  return undefined;
}
