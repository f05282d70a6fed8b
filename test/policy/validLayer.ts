// A workspace layer from rules that must be valid (the test fails at once, with the diagnostics,
// when they are not), and a bare call of a tool: what the rule-field tests build their cases from.
import * as assert from 'node:assert/strict';
import type { ToolCall } from '../../src/policy/rules/call.js';
import { loadPolicyText, type PolicyLayer } from '../../src/policy/policy.js';

export function validLayer(rules: readonly unknown[], extra: Record<string, unknown> = {}): PolicyLayer {
  const l = loadPolicyText(JSON.stringify({ version: 1, rules, ...extra }, null, 2), '.agentpolicy.jsonc', 'workspace');
  assert.equal(l.valid, true, JSON.stringify(l.diagnostics));
  return l;
}

export function bareCall(id: string, input: unknown = {}): ToolCall {
  return { tool: { id }, input, agent: 'main' };
}
