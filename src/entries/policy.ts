// The package's `./policy` entry: the engine for other programs (CI scripts, other extensions).
export { loadPolicyText, nextLayerState, Policy, PolicyLayer, LAYER_ORDER } from '../policy/policy.js';
export type { DecideOptions, Explanation, LayerState, PolicyDecision, TraceEntry, AskSettings } from '../policy/policy.js';
export { checkPolicyLayer } from '../policy/check.js';
export { runInlineTests } from '../policy/inlineTests.js';
export { effectiveHints, kindFromId } from '../policy/call.js';
export type { ToolCall, ToolDescriptor, ToolAnnotations } from '../policy/call.js';
export { toJson, formatDiagnostic, LineMap } from '../policy/diagnostics.js';
export type { Diagnostic, DiagnosticJson } from '../policy/diagnostics.js';
export { initShellParser } from '../policy/shellParser.js';
export { splitCommand } from '../policy/shellSplit.js';
export { policyJsonSchema } from '../policy/jsonSchema.js';
export { agentsJsonSchema, parseAgentsFile, spawnInfo } from '../agents/agentsFile.js';
