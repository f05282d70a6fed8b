// "Allow and Add Rule…" on a compound command: the exact commands that asked, as one rule that
// allows those parts (in this chain, another, or alone) and nothing the rest of the chain adds.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import type { ToolCall } from '../../src/policy/rules/call.js';
import { loadPolicyText, Policy, type PolicyDecision } from '../../src/policy/policy.js';
import { ruleSuggestions } from '../../src/policy/editing/ruleSuggestions.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

const OPTIONS = { workspaceFolder: os.tmpdir(), followSymlinks: false };

function shell(command: string): ToolCall {
  return { tool: { id: 'builtin.run_command' }, input: { command }, agent: 'main' };
}

function policyOf(rules: readonly object[]): Policy {
  return new Policy({ workspace: loadPolicyText(JSON.stringify({ version: 1, rules }), '.agentpolicy.jsonc', 'workspace') });
}

describe('Allow and Add Rule: the exact commands that asked', () => {
  before(async () => {
    await initShellParser();
  });
  const policy = policyOf([{ id: 'status', tools: ['builtin.run_command'], commands: ['git status'], decision: 'allow' }]);
  const exactFor = (command: string): string[] | undefined => {
    const asked: PolicyDecision = policy.decide(shell(command), OPTIONS);
    return ruleSuggestions(shell(command), { ...OPTIONS, asked }).find((s) => s.kind === 'commands')?.rule.commands;
  };

  it('suggests the asking parts word for word, and the rule allows them in any chain', () => {
    assert.deepEqual(exactFor('npm test && git push'), ['npm test', 'git push']);
    assert.deepEqual(exactFor('git status && npm test'), ['npm test'], 'a part a rule allows needs none');
    assert.deepEqual(exactFor("npm run 'lint' -- --fix && git status"), ['npm run lint -- --fix']);
    assert.equal(exactFor('npm test'), undefined, 'a call of one command has "This exact input"');
    const rule = { tools: ['builtin.run_command'], commands: exactFor('npm test && git push'), decision: 'allow' };
    const withRule = policyOf([rule]);
    for (const later of ['git push && npm test', 'npm test', 'git push; npm test']) assert.equal(withRule.decide(shell(later), OPTIONS).decision, 'allow', later);
    for (const later of ['git push --force && npm test', 'npm test && rm -rf x', 'git push origin']) assert.equal(withRule.decide(shell(later), OPTIONS).decision, 'ask', later);
  });

  it('is not offered where the words cannot be written exactly or say less than the command does', () => {
    for (const command of ['ls *.txt && npm test', 'npm test && echo x > f', 'bash && npm test', 'npm test && $X', 'sudo npm test']) {
      assert.equal(exactFor(command), undefined, command);
    }
  });
});
