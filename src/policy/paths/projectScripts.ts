// The command lines a package script or a makefile runs (docs/programs.md, "Scripts the agent may
// have written"): `npm run build`, `npm test`, `yarn lint`, `pnpm install` run lines of the
// folder's package.json (with their `pre`/`post` scripts and npm's lifecycle scripts); `make
// [TARGET…]` runs the recipes of the folder's makefile for those targets and what they depend on.
// Those lines are files the agent can change, so they are judged as commands too (policy.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SimpleCommand } from '../shell/shellCommand.js';
import { isStaticWord, programIndex } from '../shell/shellDynamic.js';

export interface ProjectScript {
  /** Where the line comes from, said to a person: `package.json script "build"`, `Makefile target "test"`. */
  origin: string;
  command: string;
}

/** At most this many lines are taken from one command's scripts. */
const MAX_LINES = 32;
/** Sub-commands that run the scripts of npm's install lifecycle. */
const INSTALLS = new Set(['install', 'i', 'ci', 'add', 'pack', 'publish', 'rebuild']);
const LIFECYCLE = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare', 'prepack', 'postpack'];
/** Package managers' own sub-commands: `yarn X` / `pnpm X` with any other X runs script X. */
const OWN_COMMANDS = new Set(['exec', 'x', 'dlx', 'add', 'remove', 'rm', 'install', 'i', 'ci', 'update', 'up', 'upgrade', 'outdated', 'list', 'ls', 'why', 'info', 'view', 'init', 'create', 'publish', 'pack', 'link', 'unlink', 'audit', 'config', 'cache', 'login', 'logout', 'whoami', 'version', 'help', 'dedupe', 'prune', 'store', 'import', 'rebuild', 'set', 'workspaces', 'workspace', 'node', 'bin', 'root', 'prefix', 'search', 'owner', 'team', 'token', 'doctor', 'fund', 'explain', 'query', 'env', 'patch', 'plugin']);

export function projectScripts(commands: readonly SimpleCommand[], folder: string): ProjectScript[] {
  const out: ProjectScript[] = [];
  for (const c of commands) {
    const at = programIndex(c.words);
    const program = c.words[at];
    if (program === undefined || !isStaticWord(c, at)) continue;
    const args = c.words.slice(at + 1);
    if (program === 'npm' || program === 'pnpm' || program === 'yarn' || program === 'bun') out.push(...packageScripts(program, args, folder));
    if (program === 'make' || program === 'gmake') out.push(...makeRecipes(args, folder));
    if (out.length >= MAX_LINES) break;
  }
  return out.slice(0, MAX_LINES);
}

function packageScripts(program: string, args: readonly string[], folder: string): ProjectScript[] {
  const operands = args.filter((w) => !w.startsWith('-'));
  const sub = operands[0] ?? (program === 'yarn' ? 'install' : undefined);
  if (sub === undefined) return [];
  let names: string[];
  if (['run', 'run-script', 'rum', 'urn'].includes(sub)) names = operands[1] === undefined ? [] : [operands[1]];
  else if (['test', 't', 'tst', 'start', 'stop', 'restart'].includes(sub)) names = [sub.startsWith('t') ? 'test' : sub];
  else if (INSTALLS.has(sub)) names = LIFECYCLE;
  else if (program !== 'npm' && !OWN_COMMANDS.has(sub)) names = [sub];
  else return [];
  const scripts = readPackageScripts(folder);
  const out: ProjectScript[] = [];
  for (const name of names) {
    for (const one of INSTALLS.has(sub) ? [name] : [`pre${name}`, name, `post${name}`]) {
      const line = scripts[one];
      if (typeof line === 'string') out.push({ origin: `package.json script "${one}"`, command: line });
    }
  }
  return out;
}

function readPackageScripts(folder: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'));
    const scripts = (parsed as { scripts?: unknown } | null)?.scripts;
    return typeof scripts === 'object' && scripts !== null ? (scripts as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

interface MakeRule {
  prerequisites: string[];
  recipes: string[];
}

/** make's recipes for the targets named (the first target when none), their prerequisites' too. */
function makeRecipes(args: readonly string[], folder: string): ProjectScript[] {
  let dir = folder;
  let file: string | undefined;
  const targets: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (w === '-C' || w === '--directory') dir = path.resolve(dir, args[++i] ?? '.');
    else if (w.startsWith('--directory=')) dir = path.resolve(dir, w.slice(12));
    else if (w === '-f' || w === '--file' || w === '--makefile') file = args[++i];
    else if (/^--(file|makefile)=/.test(w)) file = w.slice(w.indexOf('=') + 1);
    else if (!w.startsWith('-') && !w.includes('=')) targets.push(w);
  }
  const makefile = file !== undefined ? path.resolve(dir, file) : ['GNUmakefile', 'makefile', 'Makefile'].map((n) => path.join(dir, n)).find((p) => fs.existsSync(p));
  if (makefile === undefined) return [];
  let text: string;
  try {
    text = fs.readFileSync(makefile, 'utf8');
  } catch {
    return [];
  }
  const { rules, first, variables } = parseMakefile(text);
  const out: ProjectScript[] = [];
  const seen = new Set<string>();
  const visit = (target: string, depth: number): void => {
    if (seen.has(target) || depth > 8 || out.length >= MAX_LINES) return;
    seen.add(target);
    const rule = rules.get(target);
    if (rule === undefined) return;
    for (const p of rule.prerequisites) visit(p, depth + 1);
    for (const recipe of rule.recipes) out.push({ origin: `${path.basename(makefile)} target "${target}"`, command: expandMake(recipe, variables, target, rule.prerequisites) });
  };
  for (const t of targets.length > 0 ? targets : first !== undefined ? [first] : []) visit(t, 0);
  return out;
}

function parseMakefile(text: string): { rules: Map<string, MakeRule>; first: string | undefined; variables: Map<string, string> } {
  const rules = new Map<string, MakeRule>();
  const variables = new Map<string, string>();
  let first: string | undefined;
  let current: MakeRule[] = [];
  for (const raw of text.replace(/\\\n/g, ' ').split('\n')) {
    if (raw.startsWith('\t')) {
      for (const rule of current) rule.recipes.push(raw.slice(1));
      continue;
    }
    const line = raw.replace(/(^|[^\\])#.*$/, '$1');
    if (line.trim() === '') continue;
    const assignment = /^\s*(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(?::{1,3}=|\?=|\+=|=|!=)\s*(.*)$/.exec(line);
    if (assignment !== null) {
      variables.set(assignment[1]!, line.includes('+=') ? `${variables.get(assignment[1]!) ?? ''} ${assignment[2]!}`.trim() : assignment[2]!);
      current = [];
      continue;
    }
    const colon = /^([^:=]+?)\s*::?\s*([^=]*)$/.exec(line.split(';')[0]!);
    if (colon === null) {
      current = [];
      continue;
    }
    const names = colon[1]!.trim().split(/\s+/);
    const prerequisites = colon[2]!.split('|').join(' ').trim().split(/\s+/).filter((p) => p !== '');
    const inline = line.includes(';') ? line.slice(line.indexOf(';') + 1) : undefined;
    current = names.map((n) => {
      const rule = rules.get(n) ?? { prerequisites: [], recipes: [] };
      rule.prerequisites.push(...prerequisites);
      if (inline !== undefined && inline.trim() !== '') rule.recipes.push(inline);
      rules.set(n, rule);
      return rule;
    });
    if (first === undefined && !names[0]!.startsWith('.')) first = names[0];
  }
  return { rules, first, variables };
}

/**
 * A recipe line as make hands it to the shell: `@`, `-`, `+` dropped, `$(VAR)`/`${VAR}` of simple
 * assignments, `$@ $< $^`, `$$` → `$`. What make computes otherwise (`$(shell …)`, functions) is
 * left as written, which the shell reads as an expansion: judged as unknown, the strict side.
 */
function expandMake(recipe: string, variables: ReadonlyMap<string, string>, target: string, prerequisites: readonly string[]): string {
  // `$$` is a `$` for the shell: kept aside while make's own expansions are read.
  let line = recipe.replace(/^[\s@+-]+/, '').replace(/\$\$/g, '\u0000');
  for (let round = 0; round < 5; round++) {
    const next = line.replace(/\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]/g, (whole, name: string) => variables.get(name) ?? whole);
    if (next === line) break;
    line = next;
  }
  return line
    .replace(/\$@/g, target)
    .replace(/\$</g, prerequisites[0] ?? '')
    .replace(/\$\^/g, prerequisites.join(' '))
    .replace(/\u0000/g, '$');
}
