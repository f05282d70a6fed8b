// The runtime's own overhead: per auto-allowed tool call (the tool does nothing), a scripted
// session of 10,000 allowed calls, and 1,000 callbacks open at once across 100 subagents
// answered from the root's turn.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { Agent, PermissionPolicy, PermissionRule, Subagent } from '../src/runtime/agents/agent.js';
import { AllowApproval, Blocked, Completed } from '../src/runtime/tree/answers.js';
import { FileAuditLog, type AuditSink } from '../src/runtime/audit/audit.js';
import { ScriptedModel, type Scenario } from '../src/runtime/model/scripted.js';
import { tool } from '../src/runtime/tools/tools.js';
import { median, type BenchRow } from './table.js';

const noop = tool({ name: 'noop', description: 'does nothing', inputSchema: z.object({ i: z.number() }) }, () => ({ ok: true }));
const asked = tool({ name: 'asked', description: 'asks first', inputSchema: z.object({ i: z.number() }) }, () => ({ ok: true }));

/** One turn of `steps` model responses with `width` parallel calls each, then a final answer. */
export function allowedCallsScenario(steps: number, width: number): Scenario {
  const moves: Scenario['agents'][string] = [];
  for (let s = 0; s < steps; s++) {
    moves.push({ parallel: Array.from({ length: width }, (_, i) => ({ call: 'noop', input: { i: s * width + i } })) });
  }
  moves.push({ say: 'done' });
  return { agents: { main: moves } };
}

/** The nanoseconds a session of `calls` allowed calls takes, `width` at a time; `audit`: a file, or a sink. */
export async function timeAllowedSession(calls: number, width: number, audit: string | AuditSink | undefined): Promise<number> {
  const steps = calls / width;
  const agent = new Agent({
    model: new ScriptedModel(allowedCallsScenario(steps, width)),
    instructions: '',
    tools: [noop],
    permissionPolicy: new PermissionPolicy({ rules: [PermissionRule({ tools: ['client.noop'], decision: 'allow' })] }),
    maxSteps: steps + 1,
  });
  const log = typeof audit === 'string' ? new FileAuditLog(audit) : audit;
  const session = await agent.startSession(log ? { audit: log } : {});
  const start = process.hrtime.bigint();
  const state = await session.run('go');
  const ns = Number(process.hrtime.bigint() - start);
  if (!(state instanceof Completed)) throw new Error(`session ended ${state.type}`);
  await session.cancel();
  log?.close();
  return ns;
}

async function timeManyCallbacks(subagents: number, perSubagent: number): Promise<{ openNs: number; answerNs: number; open: number }> {
  const researcher = Array.from({ length: perSubagent }, (_, i) => ({ call: 'asked', input: { i } }));
  const scenario: Scenario = {
    agents: {
      main: [
        { parallel: Array.from({ length: subagents }, (_, i) => ({ spawn: 'worker', task: `task ${i}` })) },
        { wait: 'all' },
        { say: 'all done' },
      ],
      worker: [{ parallel: researcher }, { say: 'ok' }],
    },
  };
  const agent = new Agent({
    model: new ScriptedModel(scenario),
    instructions: '',
    subagents: [new Subagent({ name: 'worker', tools: [asked] })],
    permissionPolicy: new PermissionPolicy({
      rules: [PermissionRule({ tools: ['agents.*'], decision: 'allow' }), PermissionRule({ tools: ['client.asked'], decision: 'ask' })],
    }),
  });
  const session = await agent.startSession();
  const t0 = process.hrtime.bigint();
  let state = await session.run('go');
  const openNs = Number(process.hrtime.bigint() - t0);
  if (!(state instanceof Blocked)) throw new Error(`expected Blocked, got ${state.type}`);
  const open = state.callbacks.length;
  const t1 = process.hrtime.bigint();
  const turn = session.turn(state.turnId);
  await Promise.all(state.callbacks.map((c) => turn.answer(c.id, new AllowApproval())));
  state = await turn.result({ after: state });
  const answerNs = Number(process.hrtime.bigint() - t1);
  if (!(state instanceof Completed)) throw new Error(`expected Completed, got ${state.type}`);
  await session.cancel();
  return { openNs, answerNs, open };
}

/** ns per line of `count` decision lines written one `write` at a time (each takes the file's lock and chains its line). */
function timeAuditWrites(file: string, count: number): number {
  const log = new FileAuditLog(file);
  const line = { time: new Date().toISOString(), event: 'decision' as const, session: 'bench', agent: 'main', tool: 'builtin.run_command', summary: 'npm test', decision: 'allow' as const, rule: null, default: 'builtin' };
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) log.write({ ...line, turn: String(i) });
  const ns = Number(process.hrtime.bigint() - start);
  log.close();
  return ns / count;
}

export async function runtimeBench(): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentpolicy-runtime-bench-'));
  const rows: BenchRow[] = [];
  try {
    await timeAllowedSession(1_000, 100, undefined); // warm up
    const calls = 10_000;
    const plain: number[] = [];
    const audited: number[] = [];
    for (let i = 0; i < 5; i++) {
      plain.push(await timeAllowedSession(calls, 100, undefined));
      audited.push(await timeAllowedSession(calls, 100, path.join(dir, `audit-${i}.jsonl`)));
    }
    const session = median(plain);
    const sessionAudited = median(audited);
    rows.push(
      { subject: 'runtime: allowed calls', size: calls, metric: 'per call (no audit)', value: session / calls / 1000, unit: 'µs', digits: 2,
        target: { op: '<=', value: 15 }, note: '100 responses x 100 parallel calls; the tool does nothing' },
      { subject: 'runtime: allowed calls', size: calls, metric: 'per call (audit file)', value: sessionAudited / calls / 1000, unit: 'µs', digits: 2,
        target: { op: '<=', value: 15 }, note: 'a response\'s lines written together before its tools run' },
      { subject: 'runtime: allowed calls', size: calls, metric: 'whole session', value: sessionAudited / 1e6, unit: 'ms', digits: 1,
        target: { op: '<', value: 1000 }, note: 'median of 5, with the audit file' },
    );
    const writes = 10_000;
    const perLine = Array.from({ length: 5 }, (_, i) => timeAuditWrites(path.join(dir, `lines-${i}.jsonl`), writes));
    rows.push({ subject: 'audit: one line written', size: writes, metric: 'per line', value: median(perLine) / 1000, unit: 'µs', digits: 1,
      note: 'write() alone: the lock taken (a symlink made), the line chained after the last, appended, the lock removed' });
    const many: Array<{ openNs: number; answerNs: number; open: number }> = [];
    for (let i = 0; i < 5; i++) many.push(await timeManyCallbacks(100, 10));
    rows.push(
      { subject: 'runtime: open callbacks', size: many[0]!.open, metric: 'open (100 subagents)', value: median(many.map((m) => m.openNs)) / 1e6, unit: 'ms', digits: 1,
        note: 'run() until Blocked lists them all' },
      { subject: 'runtime: open callbacks', size: many[0]!.open, metric: 'answer all', value: median(many.map((m) => m.answerNs)) / 1e6, unit: 'ms', digits: 1,
        target: { op: '<', value: 100 }, note: 'turn.answer each from the root turn, then result() to Completed' },
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
