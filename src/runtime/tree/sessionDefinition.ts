// An agent or subagent as a session runs it: its model, its instructions, and its tools by the
// name the model calls them (its own, the builtins it asked for, and the subagent tools).
// Imports answers.ts, the builtin and subagent tools, and types only (session options, model, tools).
import { SdkError } from './answers.js';
import { builtinFileTools, fetchTool, runCommandTool } from '../tools/builtins.js';
import type { Model } from '../model/model.js';
import type { RootAgentDefinition, SubagentDefinition } from './sessionOptions.js';
import { subagentTools } from '../tools/subagentTools.js';
import type { RuntimeTool, ToolSource } from '../tools/tools.js';

export interface SessionDefinition {
  name: string;
  model: Model;
  instructions: string;
  /** Grows as tool sources are listed. */
  tools: Map<string, RuntimeTool>;
  toolSources: readonly ToolSource[];
  canSpawn: boolean;
  maxSteps: number;
}

export function definitionOf(def: RootAgentDefinition | SubagentDefinition, root: RootAgentDefinition): SessionDefinition {
  const isRoot = def === root;
  const builtins = def.builtins;
  const tools: RuntimeTool[] = [...def.tools];
  if (builtins.files) tools.push(...builtinFileTools());
  if (builtins.commands) tools.push(runCommandTool());
  if (builtins.network === true) tools.push(fetchTool());
  const canSpawn = builtins.subagents && root.subagents.length > 0;
  if (canSpawn) tools.push(...subagentTools());
  const byName = new Map<string, RuntimeTool>();
  for (const t of tools) {
    if (byName.has(t.name)) throw new SdkError(`two tools of ${def.name} are named "${t.name}" (${byName.get(t.name)!.id} and ${t.id})`);
    byName.set(t.name, t);
  }
  return {
    name: def.name,
    model: (isRoot ? root.model : (def as SubagentDefinition).model ?? root.model),
    instructions: def.instructions,
    tools: byName,
    toolSources: def.toolSources,
    canSpawn,
    maxSteps: root.maxSteps,
  };
}
