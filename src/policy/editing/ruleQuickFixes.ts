// The quick fixes of the policy diagnostics: which rule shadows a rule (to move it above),
// where an `agents.spawn` allow belongs for `spawn-denied` and the edit adding it, and renaming
// a misspelt field.
import { applyEdits } from 'jsonc-parser';
import { outrightDenial, SPAWN_TOOL } from '../hiddenTools.js';
import { permissionModeDecision } from '../checking/lint.js';
import { covers } from '../rules/ruleCoverage.js';
import { Policy, type PolicyLayer } from '../policy.js';
import { PolicyEditError, type InsertRuleResult, type RuleEditResult, type TextEdit } from './policyEdit.js';
import { insertRuleEdit } from './ruleTextEdits.js';
import type { Rule } from '../file/schema.js';

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
  _workspaceFolder?: string,
): number {
  const policy = new Policy({ [layer.layer]: layer });
  let best = layer.rules.length;
  for (const agent of agents) {
    if (agent.subagents.length === 0) continue;
    // The rule that spawn-denied names: the one that denies every start.
    const d = outrightDenial(policy, SPAWN_TOOL, agent.name, { fallbackDefault: permissionModeDecision(agent.permissionMode) });
    if (d?.rule) best = Math.min(best, d.rule.index);
  }
  return best;
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
