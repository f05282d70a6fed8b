// Sign-in to an MCP server: the inputs (`${input:id}` values, such as tokens) its config uses,
// reading their values, and the errors that send a person to enter them (missing, or refused
// with a 401).
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { SignInSource } from '../runtime/tools/tools.js';
import type { McpInputDeclaration, McpInputs, McpServerConfig } from './mcpConfig.js';
import { inputIdsOf } from './mcpVariables.js';

/** An input a server needs before it can start (what a sign-in asks for). */
export interface McpInputInfo {
  id: string;
  description: string;
  password: boolean;
}

/** The listing or a call cannot go on until a person signs in (enters the server's inputs again). */
export class McpSignInRequired extends Error {
  override name = 'McpSignInRequired';
}

/** What signing in to one source's server reads and remembers. */
export interface McpSignInState {
  readonly id: string;
  readonly name: string;
  /** The inputs the server's config references, in order of use. */
  readonly inputs: readonly McpInputInfo[];
  readonly options: { readonly inputs?: McpInputs };
  /** The input values the server answered 401 to, shared by all connections (JSON of the values). */
  rejectedInputs: string | undefined;
}

/** The input values read from the store: those there, the ids missing, and the values' JSON (`undefined` without inputs). */
export interface McpInputValues {
  values: Map<string, string>;
  missing: string[];
  key: string | undefined;
}

/** The inputs `server` references, described by the file's declarations where it has them. */
export function inputInfosOf(server: McpServerConfig, declarations: readonly McpInputDeclaration[] | undefined): McpInputInfo[] {
  return inputIdsOf(server).map((id) => {
    const declared = declarations?.find((d) => d.id === id);
    return { id, description: declared?.description ?? id, password: declared?.password ?? false };
  });
}

export async function readInputValues(state: McpSignInState): Promise<McpInputValues> {
  const values = new Map<string, string>();
  const missing: string[] = [];
  for (const input of state.inputs) {
    const value = await state.options.inputs?.get(input.id);
    if (value === undefined || value === '') missing.push(input.id);
    else values.set(input.id, value);
  }
  const key = state.inputs.length > 0 ? JSON.stringify([...values.entries()]) : undefined;
  return { values, missing, key };
}

/** What a session asks a person to sign in to; only a server whose config uses inputs has one. */
export function mcpSignInSource(state: McpSignInState): SignInSource | undefined {
  if (state.inputs.length === 0) return undefined;
  return {
    source: 'mcp',
    id: state.id,
    name: state.name,
    isConnected: async () => {
      const values = await readInputValues(state);
      return values.missing.length === 0 && values.key !== state.rejectedInputs;
    },
    wasConnected: () => state.rejectedInputs !== undefined,
  };
}

/** Why the server cannot start with these values (some are missing, or it refused them before), if it cannot. */
export function signInNeeded(state: McpSignInState, values: McpInputValues): McpSignInRequired | undefined {
  if (values.missing.length > 0) {
    const describe = (id: string): string => state.inputs.find((i) => i.id === id)?.description ?? id;
    return new McpSignInRequired(
      `MCP server ${state.name} needs a sign-in: enter ${values.missing.map((id) => `"${describe(id)}"`).join(', ')} first`);
  }
  if (values.key !== undefined && values.key === state.rejectedInputs) {
    return new McpSignInRequired(`MCP server ${state.name} needs a sign-in: it refused the current credentials (401); enter new ones`);
  }
  return undefined;
}

/** The error of a 401 `when` (completes "answered 401 Unauthorized …"): a sign-in when the server uses inputs. */
export function unauthorizedError(serverName: string, inputsKey: string | undefined, when: string): Error {
  if (inputsKey === undefined) {
    // Nothing a person can enter here would change the answer.
    return new Error(`MCP server ${serverName} answered 401 Unauthorized ${when}: it needs an authorization this extension does not do (OAuth); `
      + 'give it a token in "headers" with an ${input:…} variable instead');
  }
  return new McpSignInRequired(`MCP server ${serverName} needs a sign-in: it answered 401 Unauthorized ${when}`);
}

export function isUnauthorized(error: unknown): boolean {
  if (error instanceof UnauthorizedError) return true;
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 401;
}
