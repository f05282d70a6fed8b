// A sandboxed command's connection asked in a real VS Code (code-server, see harness.ts): the
// policy lets the agent run curl but names no host, so each host curl reaches through the
// sandbox's proxy is asked in a notification naming the command and the host. Allow lets that
// connection through; Deny refuses the next one; the transcript and the window's audit log say
// which hosts were asked and how they were answered. The host is real: a server in a network
// namespace the test makes (test/netHost.ts), never loopback. Run with
// `npm run test:e2e -- --grep "sandboxed command's connection"`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { findEditor } from '../../src/hooks/editor/editorBridge';
import { readAuditLog } from '../../src/runtime/audit/auditRead';
import { requireTestHost, startTestHost, type TestHost } from '../netHost';
import { activated, addAgent, countLabel, escapeRe, startSession, transcriptText, useVsCode } from './harness';

describe("A sandboxed command's connection in VS Code (e2e)", function () {
  const { open } = useVsCode();
  let host: TestHost;
  before(async function () {
    requireTestHost(this);
    host = await startTestHost();
  });
  after(async () => {
    await host?.stop();
  });

  it("a sandboxed command's connection to a host no rule names is asked: Allow lets it through, Deny refuses it; the transcript and audit name the host", async () => {
    const v = await open('network-asks', {
      prepare: (workspace) => {
        const file = path.join(workspace, '.agentpolicy.jsonc');
        const policy = parseJsonc(fs.readFileSync(file, 'utf8')) as { rules: Array<Record<string, unknown>> };
        // curl may run; no rule names a host, so each connection is asked.
        policy.rules.splice(policy.rules.findIndex((r) => r.id === 'test') + 1, 0, { id: 'curl', tools: ['builtin.run_command'], commands: ['curl *'], decision: 'allow' });
        fs.writeFileSync(file, JSON.stringify(policy, null, 2));
        addAgent(workspace, { name: 'fetcher', model: 'scripted:fetcher.jsonc', tools: ['builtin.run_command'], builtins: { subagents: false } }, [
          { call: 'run_command', input: { command: `curl -sSf --max-time 60 http://${host.names.allowed}/first` }, as: 'first' },
          { call: 'run_command', input: { command: `curl -sSf --max-time 60 http://${host.names.other}/second` }, as: 'second' },
          { say: 'fetched: first exit {{first.exitCode}} {{first.stdout}} | second exit {{second.exitCode}}, hosts judged {{second.sandbox.hostsJudged}}' },
        ]);
      },
    });
    await activated(v);
    const editor = await v.waitFor("the window's discovery file", () => findEditor(v.workspace), 60_000);
    await startSession(v, 'fetcher', 'Fetch two pages');

    const first = new RegExp(`a sandboxed command of fetcher wants to reach ${escapeRe(host.names.allowed)}:80: curl .*no rule with domains or urls`);
    await v.notification(first, 120_000);
    await v.statusBarItem(countLabel(1), 30_000);
    await v.screenshot('network-ask');
    await v.clickNotificationButton(first, 'Allow');

    const second = new RegExp(`a sandboxed command of fetcher wants to reach ${escapeRe(host.names.other)}:80`);
    await v.notification(second, 120_000);
    await v.clickNotificationButton(second, 'Deny');

    const t = await transcriptText(v, /completed: fetched|says: fetched/, 120_000);
    assert.match(t, /fetched: first exit 0 \{"host":"[^"]*","path":"\/first"/, t);
    assert.match(t, /second exit 22, hosts judged true/, t);
    assert.match(t, /\[sandboxed, hosts judged\]/, t);

    const entries = readAuditLog(editor.auditFile).entries;
    const asked = entries.filter((e) => e.event === 'callback-opened' && e.host !== undefined).map((e) => `${e.host}:${e.port}`);
    assert.deepEqual(asked, [`${host.names.allowed}:80`, `${host.names.other}:80`], JSON.stringify(entries, null, 1));
    const answers = entries.filter((e) => e.event === 'callback-settled' && e.tool === 'builtin.run_command').map((e) => e.answer);
    assert.deepEqual(answers.slice(-2), ['allow-once', 'deny']);
  });
});
