// The package's `./runtime` entry (runtime.md): the agent runtime for programs, the CLI and
// other extensions. Plain TypeScript, no `vscode`.
export { Agent, Builtins, PermissionPolicy, PermissionRule, Subagent } from '../runtime/agents/agent.js';
export type { AgentOptions, SubagentOptions } from '../runtime/agents/agent.js';
export type { PermissionMode, ToolHook } from '../runtime/tree/sessionOptions.js';
export {
  AllowApproval, AlreadySettled, Answered, Blocked, Completed, DenyApproval, ElicitationAnswer, Failed, KeepCallbackOpen, NotFound,
  OpenApproval, OpenElicitation, OpenResultReview, OpenSignIn, ResultReviewAnswer, SdkError, SignInAnswer,
} from '../runtime/tree/answers.js';
export type { ApprovalRequest, ApprovalTool, OpenCallback, ResultReviewRequest, SignInSourceRequest, TurnState, AnswerResult } from '../runtime/tree/answers.js';
export { Session, startSession } from '../runtime/session.js';
export { Turn } from '../runtime/tree/turn.js';
export { DEFAULT_PROTECTED_FILES } from '../runtime/calls/protected.js';
export type { ApprovalHandler, CallbackContext, ElicitationHandler, ResultReviewHandler, SignInHandler, StartSessionOptions } from '../runtime/tree/sessionOptions.js';
export type { RuntimeEvent } from '../runtime/tree/events.js';
export { tool } from '../runtime/tools/tools.js';
export type { ElicitationRequest, ElicitationResult, ElicitationSchema, RuntimeTool, SignInSource, ToolConnection, ToolRunContext, ToolSource } from '../runtime/tools/tools.js';
export { ScriptedModel } from '../runtime/model/scripted.js';
export { ModelError } from '../runtime/model/model.js';
export type { Model, ModelRequest, ModelResponse, Message } from '../runtime/model/model.js';
export { builtinTools } from '../runtime/tools/builtins.js';
export { FileAuditLog, MemoryAuditLog } from '../runtime/audit/audit.js';
export { readAuditLog, auditTable } from '../runtime/audit/auditRead.js';
export { Policy, loadPolicyText } from '../policy/policy.js';
export { initShellParser } from '../policy/shell/shellParser.js';
export { OpenAICompatibleModel } from '../runtime/providers/openaiCompatible.js';
export type { OpenAICompatibleOptions } from '../runtime/providers/openaiCompatible.js';
export { providerModelFactory, openAICompatibleFromEnv } from '../runtime/providers/index.js';
