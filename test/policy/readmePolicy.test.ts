// The ten-line policy the README shows is a valid policy that says what the README says of it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';

describe("the README's policy", () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const text = /```jsonc\n([\s\S]*?)```/.exec(readme)?.[1];

  it('is at most ten lines, valid, and judges as its rules say', async () => {
    assert.ok(text !== undefined, 'the README shows a jsonc policy');
    assert.ok(text.trim().split('\n').length <= 10, 'ten lines or fewer');
    await initShellParser();
    const layer = loadPolicyText(text, '/ws/.agentpolicy.jsonc');
    assert.deepEqual(layer.diagnostics.filter((d) => d.severity === 'error'), []);
    const policy = new Policy({ workspace: layer });
    const run = (command: string): string => policy.decide({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command }, agent: 'main' } as never, { workspaceFolder: '/ws', trusted: true, sandbox: true, commandPaths: false }).decision;
    assert.equal(run('git push --force origin main'), 'deny');
    assert.equal(run('npm test'), 'allow');
    assert.equal(run('curl https://example.com'), 'ask');
    assert.equal(policy.decide({ tool: { id: 'builtin.read_file', kind: 'builtin', pathArgs: ['path'] }, input: { path: '/ws/.env' }, agent: 'main' } as never, { workspaceFolder: '/ws', trusted: true }).decision, 'deny');
  });
});
