// Checks a tool's input against the inputSchema its MCP server listed, before the call is sent.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

/**
 * Checks inputs against the tool's inputSchema with the ajv the SDK ships. A schema ajv cannot
 * compile is not checked here (the server still checks), so a tool never becomes unusable.
 */
export class ToolInputValidator {
  private ajv: AjvJsonSchemaValidator | undefined;
  /** By schema object: a listing after a restart brings new schemas, compiled again. */
  private readonly compiled = new WeakMap<object, ((input: unknown) => { valid: boolean; errorMessage?: string }) | null>();

  check(id: string, schema: Record<string, unknown>, input: unknown, log: (line: string) => void): string | undefined {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      try {
        this.ajv ??= new AjvJsonSchemaValidator();
        // A server's `$id` must not collide with another tool's, and ajv's default draft reads 2020-12 schemas well enough.
        const { $id: _id, $schema: _schema, ...rest } = schema;
        validate = this.ajv.getValidator(rest as never) as (input: unknown) => { valid: boolean; errorMessage?: string };
      } catch (error) {
        log(`the input schema of ${id} is not checked here (ajv: ${(error as Error).message}); the server checks it`);
        validate = null;
      }
      this.compiled.set(schema, validate);
    }
    if (validate === null) return undefined;
    try {
      const result = validate(input);
      return result.valid ? undefined : (result.errorMessage ?? 'invalid input');
    } catch {
      return undefined;
    }
  }
}
