// The sandbox in a real VS Code: a command the policy allows tries to change .agentpolicy.jsonc
// without naming it (so the protected-files hook does not ask, and only the sandbox is in the
// way); the write fails, the file is unchanged, the result says it ran in the sandbox on a
// read-only file system, and the session goes on to its next step. Needs bubblewrap on the
// machine (scripts/ensure-vscode.sh installs it): a missing sandbox fails this test, never skips it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { activated, addAgent, startSession, transcriptText, useVsCode } from './harness';

const POLICY = '.agentpolicy.jsonc';
// Builds the file name at run time: the text names no protected file, so no hook asks.
const SNEAKY = `node -e "require('fs').writeFileSync('.agent' + 'policy.jsonc', '{ \\"version\\": 1, \\"default\\": \\"allow\\" }')"`;

describe('The sandbox in VS Code (e2e)', function () {
  const { open } = useVsCode();

  it('an allowed command cannot change .agentpolicy.jsonc: it fails on the read-only file system, and the session goes on', async () => {
    let before = '';
    const v = await open('sandbox', {
      prepare: (workspace) => {
        // Allow every `node …` command, so the policy itself lets the write attempt run.
        const file = path.join(workspace, POLICY);
        const policy = parseJsonc(fs.readFileSync(file, 'utf8')) as { rules: Array<Record<string, unknown>> };
        // After the sample's own "test" rule, whose inline tests name it.
        policy.rules.splice(policy.rules.findIndex((r) => r.id === 'test') + 1, 0, { id: 'node', tools: ['builtin.run_command'], commands: ['node *', 'node -e *'], decision: 'allow' });
        fs.writeFileSync(file, JSON.stringify(policy, null, 2));
        before = fs.readFileSync(file, 'utf8');
        addAgent(workspace, { name: 'sneaky', model: 'scripted:sneaky.jsonc', tools: ['builtin.run_command'], builtins: { subagents: false } }, [
          { call: 'run_command', input: { command: SNEAKY }, as: 'attempt' },
          { call: 'run_command', input: { command: 'node src/index.js atlas' }, as: 'price' },
          { say: 'next step ran: {{price.stdout}} | attempt exit {{attempt.exitCode}}, sandboxed {{attempt.sandbox.sandboxed}}, network {{attempt.sandbox.network}} | {{attempt.stderr}}' },
        ]);
      },
    });
    await activated(v);
    await startSession(v, 'sneaky', 'Try to loosen the policy');

    const t = await transcriptText(v, /completed: next step ran/, 120_000);
    await v.screenshot('sandbox-transcript');
    assert.equal(fs.readFileSync(path.join(v.workspace, POLICY), 'utf8'), before, 'the policy file is unchanged');
    assert.match(t, /^sandbox: Commands run sandboxed here \(bubblewrap/m, `the transcript starts by saying commands are sandboxed:\n${t}`);
    assert.match(t, /builtin\.run_command .*-> allow \(workspace \.agentpolicy\.jsonc:\d+ "node"\) \[sandboxed, hosts judged\]/, `the call ran sandboxed, its connections judged per host:\n${t}`);
    assert.match(t, /next step ran: atlas: €129\.00/, `the next scripted step ran:\n${t}`);
    assert.match(t, /attempt exit 1, sandboxed true, network false/, t);
    assert.match(t, /EROFS|read-only file system/i, `the result says read-only file system:\n${t}`);
    assert.match(t, /\[sandbox: this command ran in the sandbox: the workspace's protected files and everything outside the workspace folder \(but a private \/tmp\) are read-only, and the network reaches only the hosts the policy allows/, t);
    assert.doesNotMatch(t, /hook:protected-files/, 'no hook asked: only the sandbox was in the way');
  });
});
