// A child process for sandboxKill.test.ts: runs a sandboxed command that starts background and
// foreground processes carrying MARKER (digits) in their command lines (`sleep 300.MARKER`),
// writes up.txt once they are started, and waits to be killed (SIGKILL) by the test.
// argv: workspace, marker, "net" | "nonet".
import * as path from 'node:path';
import { runCommandTool } from '../../../src/runtime/tools/runCommandTool.js';

const [ws, marker, mode] = process.argv.slice(2) as [string, string, string];
const tool = runCommandTool();
const checked = tool.check({ command: `sleep 300.${marker} & nohup sleep 301.${marker} >/dev/null 2>&1 & echo up > up.txt; sleep 302.${marker}`, timeoutMs: 600_000 });
if (!checked.ok) throw new Error(checked.error);
void tool.run(checked.value, {
  sessionId: 's', turnId: 't', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal,
  sandbox: {
    network: false, protectedWritable: false, protectedFiles: [path.join(ws, '.agentpolicy.jsonc')],
    ...(mode === 'net' ? { judgesHosts: true as const, connections: { judge: async () => ({ allow: true as const }), namedHosts: [] } } : {}),
  },
});
