// Managed controls (issue 14): a top-level `controls` object that only the managed policy may set.
// It limits what a person is offered (Allow for Session, Allow and Add Rule…, how long a grant may
// last) and which MCP servers of `.vscode/mcp.json` may start at all. A workspace or user policy
// that sets `controls` is invalid (a `schema` error), so neither can loosen them: an invalid file
// contributes nothing and its last valid version stays in force.
//
// The controls in force come from the managed layer as it is in force: its valid version (also
// when the file is stale), none when there is no managed layer, and the strictest of all when the
// managed file never was valid in this window (a broken policy never allows more than a good one).
import { findNodeAtLocation, type Node } from 'jsonc-parser';
import type { LayerName } from './compile.js';
import type { Diagnostic } from '../file/diagnostics.js';
import { compileGlobSet, GlobError, type GlobSet } from '../globs/globs.js';
import { durationLabel, rememberSeconds, type Remember } from '../file/grantLength.js';
import type { Controls, PolicyFile } from '../file/schema.js';

/** What `allowForSession: false` leaves when no `longestGrant` is given: the longest grant the editor offers besides the session. */
export const LONGEST_WITHOUT_SESSION: Remember = '1h';

export interface ManagedControls {
  /** `none`: no managed policy or it sets no controls; `managed`: its `controls`; `broken`: it never was valid, so the strictest. */
  readonly from: 'none' | 'managed' | 'broken';
  /** The managed policy file, when there is one. */
  readonly file?: string;
  /** Whether a person may answer Allow for Session (`longestGrant` is "session"). */
  readonly allowForSession: boolean;
  /** Whether Allow and Add Rule… and the quick fixes that write allow rules are offered. */
  readonly addRule: boolean;
  /** The longest grant any ask may be given; every rule's `remember` is capped by it. */
  readonly longestGrant: Remember;
  /** Which MCP servers may start: deny wins; a non-empty allow list lets only its servers start. */
  readonly mcpServers: { readonly allow?: readonly string[]; readonly deny?: readonly string[] };
  /** Decisions in OpenTelemetry (src/runtime/telemetry): switched on or off, content allowed, the collector. Not a limit on what a person is offered. */
  readonly telemetry?: { readonly enabled?: boolean; readonly content?: boolean; readonly endpoint?: string };
}

/** No managed controls: everything the rules allow is offered, every server may start (after a person's consent). */
export const NO_CONTROLS: ManagedControls = Object.freeze({ from: 'none', allowForSession: true, addRule: true, longestGrant: 'session', mcpServers: Object.freeze({}) });

/** The controls a managed policy's valid version sets (NO_CONTROLS' values for what it leaves out). */
export function controlsOf(file: string, controls: Controls | undefined): ManagedControls {
  if (controls === undefined) return { ...NO_CONTROLS, file };
  const longestGrant = controls.longestGrant ?? (controls.allowForSession === false ? LONGEST_WITHOUT_SESSION : 'session');
  return {
    from: 'managed', file,
    allowForSession: longestGrant === 'session',
    addRule: controls.addRule ?? true,
    longestGrant,
    mcpServers: { ...(controls.mcpServers?.allow ? { allow: controls.mcpServers.allow } : {}), ...(controls.mcpServers?.deny ? { deny: controls.mcpServers.deny } : {}) },
    ...(controls.telemetry !== undefined ? { telemetry: { ...controls.telemetry } } : {}),
  };
}

/** A managed policy that never was valid: nothing beyond a single Allow is offered and no server starts. */
export function brokenControls(file: string): ManagedControls {
  return { from: 'broken', file, allowForSession: false, addRule: false, longestGrant: 'never', mcpServers: { deny: ['*'] } };
}

/** Whether these controls limit anything at all. */
export function controlsLimit(controls: ManagedControls): boolean {
  return !controls.allowForSession || !controls.addRule || controls.longestGrant !== 'session'
    || controls.mcpServers.allow !== undefined || controls.mcpServers.deny !== undefined;
}

/**
 * A rule's `remember` as the controls cap it, and why when they narrowed it (for the notification,
 * explain and a refused answer).
 */
export function capRemember(remember: Remember, controls: ManagedControls): { remember: Remember; cappedBy?: string } {
  if (rememberSeconds(controls.longestGrant) >= rememberSeconds(remember)) return { remember };
  return { remember: controls.longestGrant, cappedBy: grantCapReason(controls) };
}

/** "the managed policy /etc/agentpolicy.jsonc allows grants of at most 15 minutes (controls)". */
export function grantCapReason(controls: ManagedControls): string {
  const policy = managedPolicyName(controls);
  if (controls.from === 'broken') return `${policy} is invalid and has no valid version in force, so every ask can only be allowed once`;
  const seconds = rememberSeconds(controls.longestGrant);
  if (seconds === 0) return `${policy} allows every ask only once (controls: longestGrant "never")`;
  return `${policy} allows grants of at most ${durationLabel(seconds).toLowerCase()} (controls: ${controls.allowForSession ? '' : 'allowForSession false, '}longestGrant "${controls.longestGrant}")`;
}

/** Why Allow and Add Rule… is not offered, or undefined when it is. */
export function addRuleRefusal(controls: ManagedControls): string | undefined {
  if (controls.addRule) return undefined;
  return controls.from === 'broken'
    ? `${managedPolicyName(controls)} is invalid and has no valid version in force, so no rule is added from an answer`
    : `${managedPolicyName(controls)} does not let answers add rules (controls: addRule false)`;
}

/**
 * Why the MCP server `name` may not start under these controls, or undefined when it may (a
 * person's consent is still asked for). Deny wins; with an allow list, only its servers start.
 */
export function mcpServerRefusal(name: string, controls: ManagedControls): string | undefined {
  const { allow, deny } = controls.mcpServers;
  const policy = managedPolicyName(controls);
  if (controls.from === 'broken') return `the MCP server "${name}" may not start: ${policy} is invalid and has no valid version in force, so no server starts`;
  if (deny !== undefined && serverSet(deny).test(name)) return `the MCP server "${name}" may not start: ${policy} denies it (controls.mcpServers.deny)`;
  if (allow !== undefined && !serverSet(allow).test(name)) return `the MCP server "${name}" may not start: ${policy} allows only ${allow.map((g) => `"${g}"`).join(', ')} (controls.mcpServers.allow)`;
  return undefined;
}

/** The MCP server of a tool id `mcp.<server>.<tool>` (a server name holds no dot: mcpConfig.ts), or undefined for any other tool. */
export function mcpServerOf(toolId: string): string | undefined {
  return /^mcp\.([A-Za-z0-9_-]+)\./.exec(toolId)?.[1];
}

/** Lines for `agentpolicy explain` and the Explain view: the controls in force, when they limit anything. */
export function describeControls(controls: ManagedControls): string[] {
  if (!controlsLimit(controls)) return [];
  const lines = [`managed controls (${controls.file ?? 'the managed policy'}${controls.from === 'broken' ? ', invalid: the strictest' : ''}):`];
  lines.push(`  Allow for Session: ${controls.allowForSession ? 'offered' : 'never'}`);
  lines.push(`  longest grant: ${controls.longestGrant === 'session' ? 'the session' : controls.longestGrant === 'never' ? 'none (allow once only)' : durationLabel(rememberSeconds(controls.longestGrant)).toLowerCase()}`);
  lines.push(`  Allow and Add Rule…: ${controls.addRule ? 'offered' : 'never'}`);
  const { allow, deny } = controls.mcpServers;
  if (allow !== undefined) lines.push(`  MCP servers that may start: ${allow.join(', ')}`);
  if (deny !== undefined) lines.push(`  MCP servers that never start: ${deny.join(', ')}`);
  return lines;
}

/**
 * Diagnostics of a file's `controls`: a `schema` error in any layer but the managed one (so that
 * file is invalid and cannot loosen anything), a `bad-glob` for a server glob that does not compile.
 */
export function controlsDiagnostics(value: PolicyFile, root: () => Node | undefined, file: string, layer: LayerName): Diagnostic[] {
  const controls = value.controls;
  if (controls === undefined) return [];
  const at = (path: Array<string | number>): { offset: number; length: number } => {
    const tree = root();
    const node = tree ? findNodeAtLocation(tree, path) : undefined;
    // The key and its value: the whole property reads as the mistake.
    const property = node?.parent?.type === 'property' ? node.parent : node;
    return { offset: property?.offset ?? 0, length: property?.length ?? 1 };
  };
  if (layer !== 'managed') {
    return [{
      file, severity: 'error', code: 'schema', ...at(['controls']),
      message: `"controls" is honoured only in the managed policy (the machine setting agentPolicy.managedPolicyFile, or --managed); a ${layer} policy cannot set or loosen them`,
    }];
  }
  const diagnostics: Diagnostic[] = [];
  for (const list of ['allow', 'deny'] as const) {
    controls.mcpServers?.[list]?.forEach((glob, i) => {
      try {
        compileGlobSet([glob], 'name');
      } catch (error) {
        if (!(error instanceof GlobError)) throw error;
        diagnostics.push({ file, severity: 'error', code: 'bad-glob', ...at(['controls', 'mcpServers', list, i]), message: error.message });
      }
    });
  }
  return diagnostics;
}

function managedPolicyName(controls: ManagedControls): string {
  return controls.file !== undefined ? `the managed policy ${controls.file}` : 'the managed policy';
}

const serverSets = new WeakMap<readonly string[], GlobSet>();

function serverSet(globs: readonly string[]): GlobSet {
  let set = serverSets.get(globs);
  if (!set) serverSets.set(globs, (set = compileGlobSet(globs, 'name')));
  return set;
}
