// The JSON schema a builtin tool shows the model: the input side of its zod schema.
import { z } from 'zod';
import { withoutSchemaUri } from '../model/model.js';
import type { RuntimeTool } from './tools.js';

/**
 * zodTool describes the schema's output, where a field with a default is required. The model
 * must see the input side (such a field is optional); `check` still applies the default, so the
 * policy sees the path the tool will really use.
 */
export function withInputSchema(tool: RuntimeTool, schema: z.ZodType): RuntimeTool {
  tool.inputJsonSchema = withoutSchemaUri(z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>);
  return tool;
}
