// What the runtime adds to an MCP tool call beyond the server's own time: the same
// read_text_file calls to the real filesystem server, once straight through the SDK's client
// and once through a session (model move, input check, policy decision with hints and paths,
// protected-files hook, audit line, events, the tool source's wrapper).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpToolSource } from '../src/mcp/mcpToolSource.js';
import { Agent, Builtins, PermissionPolicy, PermissionRule } from '../src/runtime/agents/agent.js';
import { Completed } from '../src/runtime/tree/answers.js';
import { FileAuditLog } from '../src/runtime/audit/audit.js';
import type { Model } from '../src/runtime/model/model.js';
import { ScriptedModel, type Scenario } from '../src/runtime/model/scripted.js';
import { median, type BenchRow } from './table.js';

const CALLS = 500;
const ROUNDS = 5;

function serverArgs(dir: string): string[] {
  return [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), dir];
}

async function timeDirect(dir: string, file: string): Promise<number> {
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: serverArgs(dir), stderr: 'ignore' }));
  try {
    for (let i = 0; i < 20; i++) await client.callTool({ name: 'read_text_file', arguments: { path: file } });
    const start = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) await client.callTool({ name: 'read_text_file', arguments: { path: file } });
    return Number(process.hrtime.bigint() - start) / CALLS;
  } finally {
    await client.close();
  }
}

/** Per call: the whole turn, and the part of it the (scripted) model took, which is not the runtime's. */
async function timeThroughSession(dir: string, file: string, audit: string): Promise<{ turn: number; model: number }> {
  const calls = (n: number): Scenario['agents'][string] => [
    ...Array.from({ length: n }, () => ({ call: 'files_read_text_file', input: { path: file } })),
    { say: 'done' },
  ];
  const scripted = new ScriptedModel({ agents: { main: [...calls(20), ...calls(CALLS)] } });
  let modelNs = 0;
  const model: Model = {
    id: scripted.id,
    async respond(request) {
      const start = process.hrtime.bigint();
      try {
        return await scripted.respond(request);
      } finally {
        modelNs += Number(process.hrtime.bigint() - start);
      }
    },
  };
  const agent = new Agent({
    model,
    instructions: '',
    toolSources: [new McpToolSource({ name: 'files', type: 'stdio', command: process.execPath, args: serverArgs(dir), env: {} }, { workspaceFolder: dir })],
    builtins: new Builtins({ subagents: false }),
    permissionPolicy: new PermissionPolicy({ default: 'ask', rules: [PermissionRule({ tools: ['mcp.files.*'], hints: { readOnlyHint: true }, paths: ['**'], decision: 'allow' })] }),
    maxSteps: CALLS + 2,
  });
  const log = new FileAuditLog(audit);
  const session = await agent.startSession({ workspaceFolder: dir, audit: log });
  try {
    // The first turn starts the server and lists its tools; the second is timed.
    if (!((await session.run('warm up')) instanceof Completed)) throw new Error('the warm-up turn did not complete');
    modelNs = 0;
    const start = process.hrtime.bigint();
    const state = await session.run('go');
    const ns = Number(process.hrtime.bigint() - start) / CALLS;
    if (!(state instanceof Completed)) throw new Error(`the timed turn ended ${state.type}`);
    return { turn: ns, model: modelNs / CALLS };
  } finally {
    await session.cancel();
    log.close();
  }
}

export async function mcpBench(): Promise<BenchRow[]> {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-mcp-bench-')));
  try {
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'a line of notes\n'.repeat(20));
    const direct: number[] = [];
    const session: number[] = [];
    const model: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      direct.push(await timeDirect(dir, 'notes.txt'));
      const timed = await timeThroughSession(dir, 'notes.txt', path.join(dir, `audit-${i}.jsonl`));
      session.push(timed.turn - timed.model);
      model.push(timed.model);
    }
    const d = median(direct);
    const s = median(session);
    return [
      { subject: 'mcp: read_text_file', size: CALLS, metric: 'per call, SDK client alone', value: d / 1e3, unit: 'µs', digits: 0,
        note: 'the real filesystem server over stdio: the server\'s own time and the transport' },
      { subject: 'mcp: read_text_file', size: CALLS, metric: 'per call, through a session', value: s / 1e3, unit: 'µs', digits: 0,
        note: 'policy with hints and paths, audit file; the model\'s time taken out' },
      { subject: 'mcp: read_text_file', size: CALLS, metric: 'scripted model per move', value: median(model) / 1e3, unit: 'µs', digits: 0,
        note: 'left out of the overhead: a real model takes far longer' },
      { subject: 'mcp: read_text_file', size: CALLS, metric: 'runtime overhead per call', value: (s - d) / 1e3, unit: 'µs', digits: 0,
        target: { op: '<', value: 1000 }, note: `difference of the medians of ${ROUNDS} rounds` },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
