// A policy file's inline tests: each call is judged by the file alone, as the workspace layer
// of a trusted workspace whose folder is the file's own, on a machine whose commands run
// sandboxed unless the test says `"sandbox": false`.
import * as path from 'node:path';
import { findNodeAtLocation } from 'jsonc-parser';
import type { Diagnostic } from '../file/diagnostics.js';
import type { LayerName, RuleRef } from '../rules/compile.js';
import { outrightDenial } from '../hiddenTools.js';
import { Policy, type PolicyDecision, type PolicyLayer } from '../policy.js';
import type { Decision, InlineTest } from '../file/schema.js';

export interface InlineTestResult {
  index: number;
  name: string;
  passed: boolean;
  expected: { decision: Decision; rule?: string; review?: 'result' | 'none'; hidden?: boolean };
  actual: PolicyDecision;
  /** When the test says `hidden`: whether the tool is hidden from the calling agent's model (denied outright). */
  hidden?: boolean;
  line: number;
}

export function runInlineTests(layer: PolicyLayer, workspaceFolder = path.dirname(path.resolve(layer.file))): InlineTestResult[] {
  const tests = layer.policy?.tests ?? [];
  const policy = new Policy({ workspace: layer });
  const root = layer.parsed.root;
  return tests.map((test, index) => {
    const node = root ? findNodeAtLocation(root, ['tests', index]) : undefined;
    const actual = policy.decide(testCall(test), {
      workspaceFolder, sandbox: test.sandbox ?? true, sandboxUnavailable: 'the test says "sandbox": false',
      // Flow rules: the test's call is made by a session that already carries these marks.
      marks: new Set(test.call.marks ?? []),
    });
    // Hidden tools: whether every call of the tool by this agent is denied, whatever its input (hiddenTools.ts).
    const call = testCall(test);
    const hidden = test.hidden === undefined ? undefined : outrightDenial(policy, call.tool, call.agent) !== undefined;
    const passed = actual.decision === test.expect && (test.rule === undefined || actual.rule?.id === test.rule)
      && (test.review === undefined || (actual.review ?? 'none') === test.review)
      && (test.hidden === undefined || hidden === test.hidden);
    return {
      index,
      name: test.name ?? `${test.call.tool} ${JSON.stringify(test.call.input ?? {})}`,
      passed,
      expected: { decision: test.expect, ...(test.rule !== undefined ? { rule: test.rule } : {}), ...(test.review !== undefined ? { review: test.review } : {}), ...(test.hidden !== undefined ? { hidden: test.hidden } : {}) },
      actual,
      ...(hidden !== undefined ? { hidden } : {}),
      line: node ? layer.parsed.lines.position(node.offset).line : 1,
    };
  });
}

function testCall(test: InlineTest) {
  const { tool, input, kind, agent, hints, tags } = test.call;
  return {
    tool: { id: tool, ...(kind ? { kind } : {}), ...(hints ? { annotations: hints } : {}), ...(tags ? { tags } : {}) },
    input: input ?? {},
    agent: agent ?? 'main',
  };
}

/** What decided: `rule 4 "id" (file:line)`, or the default and whose it was. */
export function describeSource(d: { rule: RuleRef | null; defaultFrom?: LayerName | null }): string {
  if (d.rule === null) return d.defaultFrom ? `the default of the ${d.defaultFrom} policy` : 'the built-in default';
  const id = d.rule.id !== null ? ` "${d.rule.id}"` : '';
  return `${d.rule.layer} rule ${d.rule.index + 1}${id} (${d.rule.file}:${d.rule.line})`;
}

/** `deny by workspace rule 2 "no-rm" (…)`, and which part it was when the call has several. */
export function describeDecision(d: PolicyDecision): string {
  const strictest = d.parts ? d.parts.findIndex((p) => p.decision === d.decision) : -1;
  const part = d.parts && strictest >= 0 ? ` for part ${strictest + 1} of ${d.parts.length} (${d.parts[strictest]!.part})` : '';
  return `${d.decision} by ${describeSource(d)}${part}`;
}

/** One line per part: `ask  curl x  by the built-in default (it writes to a file)`. */
export function describeParts(d: PolicyDecision): string[] {
  return (d.parts ?? []).map((p, i) => {
    const by = describeSource(p);
    return `${i + 1}. ${p.decision} ${p.part} by ${by}${p.note ? ` (${p.note})` : ''}${p.reason ? `: ${p.reason}` : ''}`;
  });
}

export function testDiagnostics(layer: PolicyLayer, results: readonly InlineTestResult[]): Diagnostic[] {
  const root = layer.parsed.root;
  return results
    .filter((r) => !r.passed)
    .map((r) => {
      const node = root ? findNodeAtLocation(root, ['tests', r.index]) : undefined;
      const want = describeExpected(r);
      return {
        file: layer.file, severity: 'error' as const, code: 'test-failed' as const,
        offset: node?.offset ?? 0, length: node?.length ?? 1,
        message: `test "${r.name}" expected ${want}, got ${describeActual(r)}${r.actual.parts ? `; parts: ${describeParts(r.actual).join('; ')}` : ''}`,
      };
    });
}

/** What a test expected: `allow by rule "x" with its result reviewed`. */
export function describeExpected(r: InlineTestResult): string {
  return `${r.expected.decision}${r.expected.rule !== undefined ? ` by rule "${r.expected.rule}"` : ''}${reviewText(r.expected.review)}${hiddenText(r.expected.hidden)}`;
}

/** What a test got, saying whether the result is reviewed when the test expected either. */
export function describeActual(r: InlineTestResult): string {
  return `${describeDecision(r.actual)}${r.expected.review !== undefined ? reviewText(r.actual.review ?? 'none') : ''}${hiddenText(r.hidden)}`;
}

/** Hidden tools in a test's message: ` and hidden from the agent's model` or ` and offered to the agent's model`. */
function hiddenText(hidden: boolean | undefined): string {
  if (hidden === undefined) return '';
  return hidden ? " and hidden from the agent's model" : " and offered to the agent's model";
}

/** Result review in a test's message: ` with its result reviewed` or ` with no result review`. */
function reviewText(review: 'result' | 'none' | undefined): string {
  if (review === undefined) return '';
  return review === 'result' ? ' with its result reviewed' : ' with no result review';
}
