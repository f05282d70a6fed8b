// The layered policy a hook judges with: the workspace's `.agentpolicy.jsonc` (found at or above
// the host's folder), the system managed policy (or, without one, the managed file the editor or
// the command line names: managedInForce.ts), and the user file they name. An
// invalid file is replaced by its last valid version, kept per file in the user's state folder
// (the editor keeps its own in memory; a hook is a new process each call); with none, the hook
// blocks. A text validated before is not validated again (see compileLayer). Loading never
// throws: every failure is a reason the hook gives when it blocks.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LayerName } from '../../policy/rules/compile.js';
import { HeldPolicy } from '../../policy/editing/heldPolicy.js';
import { nextLayerState, Policy, loadPolicyText, type LayerState, type PolicyLayer } from '../../policy/policy.js';
import type { Span } from '../../policy/file/jsoncFast.js';
import type { PolicyFile } from '../../policy/file/schema.js';
import { managedPolicyInForce, type ManagedInForce } from '../../policy/system/managedInForce.js';
import type { SystemPolicyOptions } from '../../policy/system/systemPolicy.js';
import { writePrivateFile } from '../state/privateFile.js';
import { defaultStateDir } from '../state/stateDir.js';

export const WORKSPACE_POLICY = '.agentpolicy.jsonc';

export interface HookPolicySources {
  /** The host's folder (project dir or cwd): the workspace is the nearest folder at or above it with a policy. */
  folder: string;
  /** `--policy`: the workspace policy file, instead of searching. */
  policyFile?: string;
  /** `--workspace`: the folder paths resolve against, instead of the policy's folder. */
  workspace?: string;
  /** A managed policy named for trying one out: in force only without a system managed policy (managedInForce.ts). */
  managedFile?: string;
  /** What named `managedFile`, for the warning when the system's is in force (default `--managed`). */
  managedFrom?: string;
  /** How the system managed policy is found (default: this process's platform and environment). */
  system?: SystemPolicyOptions;
  userFile?: string;
  /** Where last valid versions are kept (default: the user's state folder). */
  stateDir?: string;
}

export type HookPolicy =
  | { ok: true; policy: Policy; workspaceFolder: string; files: string[]; warnings: string[]; managed: ManagedInForce; workspace?: { text: string; shown: string } }
  | { ok: false; reason: string; workspaceFolder: string; managed: ManagedInForce };

export { defaultStateDir };

/** The nearest folder at or above `folder` holding the workspace policy; undefined when none does. */
export function findWorkspacePolicy(folder: string): string | undefined {
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, WORKSPACE_POLICY);
    try {
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here: look one folder up.
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

function lastValidFile(stateDir: string, file: string): string {
  return path.join(stateDir, 'last-valid', `${createHash('sha256').update(path.resolve(file)).digest('hex').slice(0, 32)}.jsonc`);
}

/** Keeps a valid file's text as its last valid version (only when it changed; a failure to keep it is only a warning). */
function keepLastValid(stateDir: string, file: string, text: string, warnings: string[]): void {
  const kept = lastValidFile(stateDir, file);
  try {
    if (fs.readFileSync(kept, 'utf8') === text) return;
  } catch {
    // Not kept yet.
  }
  try {
    writePrivateFile(kept, text, { makeFolder: true });
  } catch (error) {
    warnings.push(`the last valid version of ${file} could not be kept (${(error as Error).message})`);
  }
}

function readLastValid(stateDir: string, file: string, shown: string, layer: LayerName): PolicyLayer | undefined {
  try {
    const loaded = compileLayer(fs.readFileSync(lastValidFile(stateDir, file), 'utf8'), shown, layer, stateDir);
    return loaded.valid ? loaded : undefined;
  } catch {
    return undefined;
  }
}

type LayerLoad = { state: LayerState; text: string; warning?: string } | { error: string };

/**
 * What this program's build is: a validated value is reused only by the build that validated it
 * (a later version may read the same text differently).
 */
const BUILD = (() => {
  try {
    const stat = fs.statSync(__filename);
    return `${__filename}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return `${process.pid}:${Date.now()}`;
  }
})();

function validatedFile(stateDir: string, text: string): string {
  return path.join(stateDir, 'validated', `${createHash('sha256').update(BUILD).update('\0').update(text).digest('hex').slice(0, 40)}.json`);
}

/**
 * The layer from its text. A text validated before (by this build) is compiled from its kept
 * reading, without reading the text again or building the schema: a hook starts for every call,
 * and in a new process those are most of its cost.
 */
function compileLayer(text: string, shown: string, layer: LayerName, stateDir: string): PolicyLayer {
  const known = validatedFile(stateDir, text);
  try {
    const kept = JSON.parse(fs.readFileSync(known, 'utf8')) as KeptReading;
    const loaded = loadPolicyText(text, shown, layer, { value: kept.value, topLevelArrays: new Map(kept.topLevelArrays) });
    if (loaded.valid) return loaded;
  } catch {
    // Not validated before (or unreadable): validate now.
  }
  const loaded = loadPolicyText(text, shown, layer);
  const arrays = loaded.parsed.topLevelArrays;
  if (loaded.valid && loaded.policy && arrays) {
    try {
      const kept: KeptReading = { value: loaded.policy, topLevelArrays: [...arrays].map(([key, spans]) => [key, [...spans]]) };
      writePrivateFile(known, JSON.stringify(kept), { makeFolder: true });
      forgetOldReadings(path.dirname(known));
    } catch {
      // Only the next call's speed depends on it.
    }
  }
  return loaded;
}

/** Readings kept at most: one per policy text (and build) seen; the oldest go first. */
const KEPT_READINGS = 32;

function forgetOldReadings(dir: string): void {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => ({ f, t: fs.statSync(path.join(dir, f)).mtimeMs }));
  if (files.length <= KEPT_READINGS) return;
  files.sort((a, b) => b.t - a.t);
  for (const { f } of files.slice(KEPT_READINGS)) fs.rmSync(path.join(dir, f), { force: true });
}

/** A valid text's reading as kept on disk: its validated value and where its rules are. */
interface KeptReading {
  value: PolicyFile;
  topLevelArrays: Array<[string, Span[]]>;
}

function loadLayer(file: string, shown: string, layer: LayerName, stateDir: string, warnings: string[]): LayerLoad {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    return { error: `the ${layer} policy ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  const loaded = compileLayer(text, shown, layer, stateDir);
  if (loaded.valid) {
    keepLastValid(stateDir, file, text, warnings);
    return { state: nextLayerState(undefined, loaded), text };
  }
  const first = loaded.diagnostics.find((d) => d.severity === 'error');
  const why = first ? `${first.code}: ${first.message}` : 'invalid';
  const previous = readLastValid(stateDir, file, shown, layer);
  if (!previous) return { error: `the ${layer} policy ${file} is invalid (${why}) and there is no last valid version of it` };
  return { state: nextLayerState({ kind: 'ok', layer: previous }, loaded), text, warning: `${file} is invalid (${why}): its last valid version applies` };
}

/** The policy in force for a host's call. Never throws. */
export function loadHookPolicy(sources: HookPolicySources): HookPolicy {
  const stateDir = sources.stateDir ?? defaultStateDir();
  const workspaceFile = sources.policyFile !== undefined ? path.resolve(sources.folder, sources.policyFile) : findWorkspacePolicy(sources.folder);
  const workspaceFolder = path.resolve(sources.workspace ?? (workspaceFile !== undefined ? path.dirname(workspaceFile) : sources.folder));
  // The system managed policy when it counts; a trial file only without one.
  const trial = sources.managedFile !== undefined ? { file: path.resolve(sources.folder, sources.managedFile), from: sources.managedFrom ?? '--managed' } : undefined;
  const managed = managedPolicyInForce(trial, sources.system);
  const warnings: string[] = [...managed.warnings];
  const layers: Partial<Record<LayerName, LayerState>> = {};
  const files: string[] = [];
  let workspace: { text: string; shown: string } | undefined;
  const named: Array<[LayerName, string | undefined]> = [['managed', managed.file], ['workspace', workspaceFile], ['user', sources.userFile]];
  for (const [layer, file] of named) {
    if (file === undefined) continue;
    const full = path.resolve(sources.folder, file);
    // As the editor names them: the workspace file relative to the workspace, the others in full.
    const inside = path.relative(workspaceFolder, full);
    const shown = layer === 'workspace' && !inside.startsWith('..') && !path.isAbsolute(inside) ? inside : full;
    const loaded = loadLayer(full, shown, layer, stateDir, warnings);
    if ('error' in loaded) return { ok: false, reason: loaded.error, workspaceFolder, managed };
    layers[layer] = loaded.state;
    if (layer === 'workspace') workspace = { text: loaded.text, shown };
    files.push(path.resolve(sources.folder, file));
    if (loaded.warning) warnings.push(loaded.warning);
  }
  return { ok: true, policy: new Policy(layers), workspaceFolder, files, warnings, managed, ...(workspace ? { workspace } : {}) };
}

/**
 * The policy while the editor holds a change to the workspace file made outside it (its accepted
 * version's text): the new version decides, and what it allows that the accepted one did not is
 * asked, as in the editor. The same text as accepted, or an accepted text that is not a valid
 * policy, changes nothing and lowers the workspace layer respectively (`lower`).
 */
export function withHeldChange(loaded: Extract<HookPolicy, { ok: true }>, acceptedText: string, stateDir: string): { policy: Policy; lower?: boolean } {
  if (!loaded.workspace || loaded.workspace.text === acceptedText) return { policy: loaded.policy };
  const accepted = compileLayer(acceptedText, loaded.workspace.shown, 'workspace', stateDir);
  if (!accepted.valid) return { policy: loaded.policy, lower: true };
  const states = Object.fromEntries(loaded.policy.layers.map(({ name, state }) => [name, state]));
  return { policy: new HeldPolicy(loaded.policy, new Policy({ ...states, workspace: nextLayerState(undefined, accepted) })) };
}
