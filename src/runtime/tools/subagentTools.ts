// The subagent tools: agents.spawn, agents.message, agents.wait, agents.interrupt.
import { z } from 'zod';
import { SUBAGENT_TOOL_ANNOTATIONS } from '../../policy/file/policyNames.js';
import { zodTool, type RuntimeTool, type SubagentHandle, type SubagentHost, type ToolRunContext } from './tools.js';

function host(context: ToolRunContext): SubagentHost {
  if (!context.subagents) throw new Error('this agent cannot start subagents');
  return context.subagents;
}

function childOf(context: ToolRunContext, id: string): SubagentHandle {
  const child = host(context).find(id);
  if (!child) throw new Error(`no subagent with id "${id}" was started by this agent`);
  return child;
}

// Shared with the policy engine, so that spawn-denied judges agents.spawn with these hints.
const annotations = SUBAGENT_TOOL_ANNOTATIONS;

export function subagentTools(): RuntimeTool[] {
  return [
    zodTool(
      {
        id: 'agents.spawn', kind: 'builtin', name: 'spawn_agent', annotations,
        description: 'Start a subagent with a task. It runs on its own; use wait_agents for its answer.',
        inputSchema: z.strictObject({ agent: z.string().describe('the subagent name'), task: z.string().describe('what it should do') }),
      },
      (input, context) => {
        const child = host(context).spawn(input.agent, input.task);
        return { id: child.id, agent: child.agentName };
      },
    ),
    zodTool(
      {
        id: 'agents.message', kind: 'builtin', name: 'message_agent', annotations,
        description: 'Send a follow-up message to a subagent; it starts a new turn once its current one ends.',
        inputSchema: z.strictObject({ id: z.string(), message: z.string() }),
      },
      async (input, context) => {
        const child = childOf(context, input.id);
        const turn = await host(context).waiting(child.deliver(input.message));
        return { id: child.id, turn };
      },
    ),
    zodTool(
      {
        id: 'agents.wait', kind: 'builtin', name: 'wait_agents', annotations: { ...annotations, readOnlyHint: true, destructiveHint: false },
        description: 'Wait until subagents finish their current turn (all of them by default) and get their answers.',
        inputSchema: z.strictObject({ ids: z.array(z.string()).optional() }),
      },
      async (input, context) => {
        const self = host(context);
        const children = input.ids ? input.ids.map((id) => childOf(context, id)) : [...self.children()];
        const outcomes = await self.waiting(Promise.all(children.map((c) => c.settledTurn())));
        return { results: children.map((c, i) => ({ id: c.id, agent: c.agentName, ...outcomes[i] })) };
      },
    ),
    zodTool(
      {
        id: 'agents.interrupt', kind: 'builtin', name: 'interrupt_agent', annotations,
        description: "Stop a subagent's current turn; its open approvals close.",
        inputSchema: z.strictObject({ id: z.string() }),
      },
      (input, context) => {
        childOf(context, input.id).interrupt();
        return { id: input.id, interrupted: true };
      },
    ),
  ];
}
