// Hidden tools (issue 14): the tools a session offers its model are its tools less those the
// policy in force now denies outright for its agent (src/policy/hiddenTools.ts). Worked out before
// every model request, so a policy reloaded while the session runs applies to the next request.
// A hidden tool stays callable by its name: a call of it (the model remembered it, a prompt named
// it) is judged, denied and audited like any other.
// Imports the policy engine, and tree.ts and tools.ts for types only.
import type { ToolDescriptor } from '../../policy/rules/call.js';
import { outrightDenial, type HiddenToolOptions, type OutrightDenial } from '../../policy/hiddenTools.js';
import { permissionModeDecision } from '../../policy/checking/lint.js';
import type { Policy } from '../../policy/policy.js';
import type { Tree } from '../tree/tree.js';
import type { RuntimeTool } from '../tools/tools.js';

/** A tool not offered to the agent's model, and the rule or default that denies every call of it. */
export interface HiddenTool {
  tool: RuntimeTool;
  denial: OutrightDenial;
}

function judgedWith(tree: Tree): { policy: Policy | undefined; options: HiddenToolOptions } {
  return { policy: tree.currentPolicy(), options: { fallbackDefault: permissionModeDecision(tree.permissionMode) } };
}

/** Whether the policy in force denies every call of this tool by this agent, and by what. */
export function toolDenial(tree: Tree, agent: string, tool: ToolDescriptor): OutrightDenial | undefined {
  const { policy, options } = judgedWith(tree);
  return outrightDenial(policy, tool, agent, options);
}

/** The tools to offer the agent's model now, and those hidden from it. */
export function offeredTools(tree: Tree, agent: string, tools: Iterable<RuntimeTool>): { offered: RuntimeTool[]; hidden: HiddenTool[] } {
  const { policy, options } = judgedWith(tree);
  const offered: RuntimeTool[] = [];
  const hidden: HiddenTool[] = [];
  for (const tool of tools) {
    const denial = outrightDenial(policy, tool, agent, options);
    if (denial === undefined) offered.push(tool);
    else hidden.push({ tool, denial });
  }
  return { offered, hidden };
}
