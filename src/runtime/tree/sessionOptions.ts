// What a session is started with: the agent it runs (as the session reads it), the permission
// mode, hooks, the handlers that answer callbacks, and the other options of `startSession`.
// Types only, so that every runtime module can use them. Imports types from the policy engine
// and from the runtime's leaf modules (answers, audit, model, tools), never from a module above.
import type { Policy } from '../../policy/policy.js';
import type { ApprovalRequest, OpenCallback, OpenElicitation, ResultReviewRequest, SignInSourceRequest } from './answers.js';
import type { AuditSink } from '../audit/audit.js';
import type { Model } from '../model/model.js';
import type { RuntimeTool, ToolSource } from '../tools/tools.js';

export type PermissionMode = 'auto' | 'ask' | 'deny';

/** Decides whether a call needs a person regardless of the policy (e.g. protected files). */
export interface ToolHook {
  name: string;
  /** Return a title to ask with, or undefined to let the policy decide alone. */
  check(call: { tool: RuntimeTool; input: unknown; agent: string; workspaceFolder: string }): string | undefined;
}

export interface CallbackContext {
  session: { id: string; turnId: string; agent: string };
  callback: OpenCallback;
}

type Awaitable<T> = T | Promise<T>;
export type ApprovalHandler = (ctx: CallbackContext, request: ApprovalRequest) => Awaitable<unknown>;
export type SignInHandler = (ctx: CallbackContext, sources: readonly SignInSourceRequest[]) => Awaitable<unknown>;
export type ElicitationHandler = (ctx: CallbackContext, request: OpenElicitation['request']) => Awaitable<unknown>;
export type ResultReviewHandler = (ctx: CallbackContext, request: ResultReviewRequest) => Awaitable<unknown>;

export interface StartSessionOptions {
  onApproval?: ApprovalHandler;
  onSignIn?: SignInHandler;
  /** Answers a tool source's request for input (an MCP server's elicitation) with an ElicitationAnswer. */
  onElicitation?: ElicitationHandler;
  /** Reviews a tool's result held by a `"review": "result"` rule, with a ResultReviewAnswer (pass or withhold). */
  onResultReview?: ResultReviewHandler;
  /** Replaces the agent's policy for this session (and its subagents). A function is asked at each decision, so a reloaded policy applies to the next call. */
  policy?: Policy | (() => Policy);
  /** The folder paths resolve against and builtin tools are confined to (default: the current folder). */
  workspaceFolder?: string;
  /** VS Code workspace trust: when false, the workspace layer's allows only ask. A function is asked at each decision. */
  trusted?: boolean | (() => boolean);
  /** Where every decision is appended. */
  audit?: AuditSink;
  /** Files no tool call may write, rename or delete without a person (absolute, or relative to the workspace). Added to the defaults. */
  protectedFiles?: readonly string[];
  /** Extra hooks that can ask before any call. */
  hooks?: readonly ToolHook[];
  /** Epoch milliseconds, for when time-limited grants lapse (default `Date.now`; tests give a fake clock). */
  clock?: () => number;
}

// The agent a session runs, as the session reads it. The classes of agent.ts implement these;
// they are interfaces here so that sessions need not import the module that starts them.

/** What a session reads of an agent or a subagent. */
export interface AgentDefinition {
  readonly name: string;
  readonly instructions: string;
  readonly tools: readonly RuntimeTool[];
  readonly toolSources: readonly ToolSource[];
  readonly builtins: { readonly subagents: boolean; readonly files: boolean; readonly commands: boolean; readonly network?: boolean };
}

export interface SubagentDefinition extends AgentDefinition {
  /** Undefined: the root agent's model. */
  readonly model: Model | undefined;
}

/** The root agent of a session tree: its model, subagents and permissions apply to the whole tree. */
export interface RootAgentDefinition extends AgentDefinition {
  readonly model: Model;
  readonly subagents: readonly SubagentDefinition[];
  readonly permissionMode: PermissionMode;
  readonly permissionPolicy: Policy | undefined;
  readonly maxSteps: number;
}
