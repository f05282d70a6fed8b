// The JSON Schema editors validate the policy file with, generated from the zod schema so the two
// can never disagree. (The agents file's is agentsJsonSchema, in agents/agentsFile.ts.)
import { z } from 'zod';
import { PolicyFileSchema } from './schema.js';

export function policyJsonSchema(): Record<string, unknown> {
  return { ...z.toJSONSchema(PolicyFileSchema, { io: 'input', unrepresentable: 'any' }), title: 'Agent Policy (.agentpolicy.jsonc)' };
}
