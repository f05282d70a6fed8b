// The package's `./policy` entry: the engine for other programs (CI scripts, other extensions).
export { loadPolicyText, nextLayerState, Policy, PolicyLayer, LAYER_ORDER } from '../policy/policy.js';
export type { DecideOptions, Explanation, LayerState, PolicyDecision, TraceEntry, AskSettings } from '../policy/policy.js';
export { checkPolicyLayer } from '../policy/checking/check.js';
export { runInlineTests } from '../policy/checking/inlineTests.js';
export { effectiveHints, kindFromId } from '../policy/rules/call.js';
export type { ToolCall, ToolDescriptor, ToolAnnotations } from '../policy/rules/call.js';
export { toJson, formatDiagnostic, LineMap } from '../policy/file/diagnostics.js';
export type { Diagnostic, DiagnosticJson } from '../policy/file/diagnostics.js';
export { initShellParser } from '../policy/shell/shellParser.js';
export { splitCommand } from '../policy/shell/shellSplit.js';
export { policyJsonSchema } from '../policy/file/jsonSchema.js';
export { agentsJsonSchema, parseAgentsFile, spawnInfo } from '../agents/agentsFile.js';
