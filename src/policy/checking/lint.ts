// Lints over a valid policy file: `shadowed` and `spawn-denied`.
//
// `shadowed` must be sound: it may miss a shadowed rule, but it never names one that some
// call can reach (ruleCoverage.ts proves inclusion by construction, never by sampling).
import { findNodeAtLocation } from 'jsonc-parser';
import type { CompiledRule } from '../rules/compile.js';
import type { Diagnostic } from '../file/diagnostics.js';
import { outrightDenial, SPAWN_TOOL } from '../hiddenTools.js';
import { Policy, type PolicyLayer } from '../policy.js';
import { covers } from '../rules/ruleCoverage.js';
import type { Decision } from '../file/schema.js';

export function describeRule(rule: CompiledRule): string {
  return `rule ${rule.ref.index + 1}${rule.ref.id !== null ? ` "${rule.ref.id}"` : ''}`;
}

export function lintShadowed(layer: PolicyLayer): Diagnostic[] {
  const out: Diagnostic[] = [];
  const rules = layer.rules;
  for (let j = 1; j < rules.length; j++) {
    const later = rules[j]!;
    for (let i = 0; i < j; i++) {
      const earlier = rules[i]!;
      if (!covers(earlier, later)) continue;
      out.push({
        file: layer.file, severity: 'warning', code: 'shadowed', offset: later.offset, length: later.length,
        message: `${describeRule(later)} never decides: ${describeRule(earlier)} (line ${earlier.ref.line}) matches every call it could match`,
      });
      break;
    }
  }
  return out;
}

/** An agent as the agents file declares it, as far as `spawn-denied` needs. */
export interface AgentSpawnInfo {
  name: string;
  subagents: readonly string[];
  permissionMode?: 'auto' | 'ask' | 'deny';
}

const PERMISSION_MODE_DEFAULT: Record<NonNullable<AgentSpawnInfo['permissionMode']>, Decision> = { auto: 'allow', ask: 'ask', deny: 'deny' };

export function permissionModeDecision(mode: AgentSpawnInfo['permissionMode']): Decision {
  return PERMISSION_MODE_DEFAULT[mode ?? 'ask'];
}

/**
 * `spawn-denied`: an agent declares subagents but the policy denies `agents.spawn` for it,
 * by a rule or by the default, so every start is denied. Reported on the rule or the default.
 */
export function lintSpawnDenied(layer: PolicyLayer, agents: readonly AgentSpawnInfo[], _workspaceFolder?: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const policy = new Policy({ [layer.layer]: layer });
  for (const agent of agents) {
    if (agent.subagents.length === 0) continue;
    // Every start denied, whatever its input: the same proof that hides the spawn tool from the agent's model.
    const d = outrightDenial(policy, SPAWN_TOOL, agent.name, { fallbackDefault: permissionModeDecision(agent.permissionMode) });
    if (d === undefined) continue;
    const root = layer.parsed.root;
    const ruleRange = d.rule ? layer.rules[d.rule.index] : undefined;
    const defaultNode = root ? findNodeAtLocation(root, ['default'])?.parent : undefined;
    const by = d.rule ? `${describeRule(layer.rules[d.rule.index]!)}` : d.defaultFrom ? 'the default' : `permissionMode "${agent.permissionMode}"`;
    out.push({
      file: layer.file, severity: 'warning', code: 'spawn-denied',
      offset: ruleRange?.offset ?? defaultNode?.offset ?? 0,
      length: ruleRange?.length ?? defaultNode?.length ?? 1,
      message: `agent "${agent.name}" declares subagents (${agent.subagents.join(', ')}), but ${by} denies agents.spawn, so every start is denied (and the spawn tool is not offered to its model); add { "tools": ["agents.spawn"], "decision": "allow" } (or "ask") before it`,
    });
  }
  return out;
}
