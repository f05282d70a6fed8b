// Flow rules in a real VS Code (code-server, see harness.ts): an agent reads .env under a rule that
// marks the session "secret", then its fetch is asked by a `when` rule. The notification says why
// it asks, the session's node in Open Callbacks shows the mark, and the transcript names the call
// that marked it. Run with `npm run test:e2e -- --grep "flow rules"`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { activated, addAgent, countLabel, startSession, transcriptText, useVsCode } from './harness';

const VIEW = 'Open Callbacks';
const ASK = /leaker wants to run builtin\.fetch: .*because this session carries the mark "secret"/;

/** The sample policy, with a rule before "no-env" that lets .env be read and marks the session, and a when rule on fetch. */
function prepare(workspace: string): void {
  const policyFile = path.join(workspace, '.agentpolicy.jsonc');
  const policy = fs.readFileSync(policyFile, 'utf8');
  const rules = [
    '{ "id": "read-env", "tools": ["builtin.read_file"], "paths": [".env"], "decision": "allow", "marks": ["secret"] },',
    '    { "id": "fetch-after-secret", "tools": ["builtin.fetch"], "when": { "marked": ["secret"] }, "decision": "ask", "reason": "this session read a secret" },',
    '    { "id": "no-env",',
  ].join('\n');
  assert.ok(policy.includes('{ "id": "no-env",'), 'the sample policy has its "no-env" rule');
  fs.writeFileSync(policyFile, policy.replace('{ "id": "no-env",', rules));
  fs.writeFileSync(path.join(workspace, '.env'), 'TOKEN=e2e\n');
  addAgent(workspace, { name: 'leaker', model: 'scripted:leaker.jsonc', instructions: 'Read .env, then fetch a page.', permissionMode: 'ask', tools: ['builtin.read_file', 'builtin.fetch'] }, [
    { call: 'read_file', input: { path: '.env' } },
    { call: 'fetch', input: { url: 'https://example.invalid/?t=1' } },
    { say: 'done' },
  ]);
}

describe('Flow rules in VS Code (e2e)', function () {
  const { open } = useVsCode();

  it('flow rules: after reading .env the fetch is asked, the notification says why, the session node shows the mark', async () => {
    const v = await open('flow-rules', { prepare });
    await activated(v);
    await startSession(v, 'leaker', 'Go');

    await v.notification(ASK, 120_000);
    await v.statusBarItem(countLabel(1), 30_000);
    const rows = await v.waitFor('the session node with its mark in Open Callbacks', async () => {
      const items = await v.treeItems(VIEW);
      return items.some((i) => i.label === 'leaker' && /marked secret/.test(i.description)) ? items : undefined;
    }, 60_000);
    assert.ok(rows.some((i) => i.label === 'fetch' || /builtin\.fetch/.test(`${i.label} ${i.description}`)), `the fetch's callback is in the tree: ${JSON.stringify(rows)}`);
    await v.screenshot('flow-rules-ask');

    await v.clickNotificationButton(ASK, 'Deny');
    await v.statusBarItem(countLabel(0), 60_000);
    const transcript = await transcriptText(v, /completed: done|says: done/);
    assert.match(transcript, /marked the session: secret \(by builtin\.read_file/);
    assert.match(transcript, /builtin\.fetch .* -> ask/);
  });
});
