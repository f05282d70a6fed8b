// The fixed names of the policy format that code needs at run time without the schema (whose
// zod objects cost tens of milliseconds to build: `agentpolicy hook` starts for every call).
export const toolKinds = ['builtin', 'client', 'mcp', 'connector', 'plugin'] as const;
export const hintNames = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
