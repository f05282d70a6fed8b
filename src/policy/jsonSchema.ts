// JSON Schemas for editors, generated from the zod schemas so the two can never disagree.
import { z } from 'zod';
import { AgentsFileSchema } from '../agents/agentsFile.js';
import { PolicyFileSchema } from './schema.js';

export function policyJsonSchema(): Record<string, unknown> {
  return { ...z.toJSONSchema(PolicyFileSchema, { io: 'input', unrepresentable: 'any' }), title: 'Agent Policy (.agentpolicy.jsonc)' };
}

export function agentsJsonSchema(): Record<string, unknown> {
  return { ...z.toJSONSchema(AgentsFileSchema, { io: 'input', unrepresentable: 'any' }), title: 'Agent Policy agents (.agents.jsonc)' };
}
