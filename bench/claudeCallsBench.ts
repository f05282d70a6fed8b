// The real Claude Code, offline (test/hosts: a scripted model on 127.0.0.1), making SHORT and LONG
// shell calls in one session, timed whole, with each hook `hook install` can write for it, beside
// the same sessions with no hook at all (`--allowedTools Bash`: it runs the calls unasked). What a
// hook adds per tool call is its slope between the two lengths minus the slope without a hook:
// Claude Code's own work, its hook runner and its http client included, which no stand-in
// measures; what a session costs once (its SessionStart hook) falls out of the slope. Sessions take
// turns, each round in another order. Each setup has a home and state folder of its own; the
// service the http hook asks is started by its SessionStart hook in the first, untimed, session,
// the client's by `serve --ensure` as its SessionStart would. The hook's own cost is timed with
// AGENTPOLICY_HOOK_SANDBOX=0 (the allowed `true` is not rewritten); one more setup keeps our
// sandbox on, so what running each allowed command in it costs shows apart.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { ensureService } from '../src/hooks/service/ensureService.js';
import { binPath, HOST_DRIVERS } from '../test/hosts/hostDrivers.js';
import { createHostProject, runHostIn, type HostProject } from '../test/hosts/hostRun.js';
import { median, type BenchRow } from './table.js';

/** Shell calls in the short and the long session: the difference is what the calls cost. */
const SHORT = 5;
const LONG = 25;

interface Setup {
  metric: string;
  note: string;
  where: HostProject;
  target?: boolean;
  /** Allowed commands run in our sandbox (else AGENTPOLICY_HOOK_SANDBOX=0). */
  sandboxed?: boolean;
  /** Claude Code's own permission to run the shell (`--allowedTools Bash`): where no hook allows it. */
  hostApproves?: boolean;
}

export async function claudeCallRows(rounds: number, cli: string, say: (line: string) => void): Promise<BenchRow[]> {
  const claude = HOST_DRIVERS.find((d) => d.host === 'claude')!;
  if (!fs.existsSync(binPath(claude))) {
    say(`skipping the real Claude Code: not installed at ${binPath(claude)} (scripts/ensure-agent-clis.sh)`);
    return [];
  }
  const policy = '{ "version": 1, "rules": [ { "tools": ["builtin.run_command"], "commands": ["true"], "decision": "allow" } ], "default": "deny" }\n';
  const setups: Setup[] = [];
  const off = { AGENTPOLICY_HOOK_SANDBOX: '0' };
  let empty: { url: string; close: () => Promise<void> } | undefined;
  try {
    const bare = createHostProject(claude, { policy });
    fs.rmSync(path.join(bare.project, '.claude'), { recursive: true, force: true });
    setups.push({ metric: 'no hook', note: 'the same session with no hook (--allowedTools Bash)', where: bare, hostApproves: true });
    setups.push({ metric: 'http hook', note: 'hook install\'s default: type http to the decision service, onFailure block', where: createHostProject(claude, { policy }), target: true });
    const client = createHostProject(claude, { policy, hookVia: 'command' });
    setups.push({ metric: 'hook client', note: 'hook install --via command: the sh client, curl to the service\'s socket', where: client });
    setups.push({ metric: 'command hook', note: 'node cli.js hook, a process per call (--command)', where: createHostProject(claude, { policy, hookLauncher: `${process.execPath} ${cli}` }) });
    setups.push({ metric: 'http hook, command in our sandbox', note: 'the http hook, each allowed `true` run by agentpolicy sandbox (a Node start, bubblewrap, the proxy)', where: createHostProject(claude, { policy }), sandboxed: true });
    // Claude Code's own floor for a hook: the same entries answering `{}` at once, no judgement.
    empty = await emptyServer();
    const floorHttp = createHostProject(claude, { policy });
    writeClaudeHooks(floorHttp, { type: 'http', url: `${empty.url}/`, timeout: 120, onFailure: 'block' });
    setups.push({ metric: 'empty http hook', note: 'Claude Code\'s floor: an http hook to a server answering {} at once (--allowedTools Bash)', where: floorHttp, hostApproves: true });
    const floorAllow = createHostProject(claude, { policy });
    writeClaudeHooks(floorAllow, { type: 'http', url: `${empty.url}/allow`, timeout: 120, onFailure: 'block' });
    setups.push({ metric: 'empty http hook answering allow', note: 'Claude Code\'s floor for an allow: the same server answering a fixed allow (no --allowedTools)', where: floorAllow });
    const floorCommand = createHostProject(claude, { policy });
    writeClaudeHooks(floorCommand, { type: 'command', command: 'true', timeout: 120, onFailure: 'block' });
    setups.push({ metric: 'empty command hook', note: 'Claude Code\'s floor: a command hook running `true` (--allowedTools Bash)', where: floorCommand, hostApproves: true });
    const started = await ensureService({
      stateDir: path.join(client.home, '.local', 'state', 'agentpolicy'), cli: [process.execPath, cli], cwd: client.project,
      env: { ...process.env, HOME: client.home, XDG_STATE_HOME: path.join(client.home, '.local', 'state'), ...off },
    });
    if (started.state === 'failed') throw new Error(`the client's service did not start: ${started.why}`);
    const session = async (setup: Setup, calls: number): Promise<number> => {
      const start = performance.now();
      const r = await runHostIn(claude, setup.where, {
        command: 'true', calls, hostApproves: setup.hostApproves === true, timeoutMs: 120_000, ...(setup.sandboxed === true ? {} : { env: off }),
      });
      const ms = performance.now() - start;
      // Every call ran (`true` has no output: Claude Code reports that; a refusal says so).
      const ran = r.model.toolResults.filter((t) => !/denied|blocked|permission/i.test(t)).length;
      if (r.run.exitCode !== 0 || ran !== calls) throw new Error(`Claude Code ${setup.metric}: ${ran} of ${calls} calls ran\n${r.explain()}`);
      return ms;
    };
    say(`the real Claude Code: ${setups.length} setups, sessions of ${SHORT} and ${LONG} shell calls, ${rounds} rounds...`);
    for (const setup of setups) await session(setup, 1); // warm: the http hook's SessionStart starts its service here
    const short: number[][] = setups.map(() => []);
    const long: number[][] = setups.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < setups.length; k++) {
        const i = (round + k) % setups.length;
        short[i]!.push(await session(setups[i]!, SHORT));
        long[i]!.push(await session(setups[i]!, LONG));
      }
    }
    // Per call: the slope between the two session lengths (what a session costs once, its start and
    // its SessionStart hook, falls out); per session: what is left at no calls.
    const slope = (i: number): number => (median(long[i]!) - median(short[i]!)) / (LONG - SHORT);
    const once = (i: number): number => median(short[i]!) - SHORT * slope(i);
    const rows: BenchRow[] = [];
    setups.forEach((setup, i) => {
      const row = { subject: 'Claude Code (real)', size: rounds, unit: 'ms', digits: 1 };
      if (i === 0) {
        rows.push({ ...row, metric: `${setup.metric}, per call`, value: slope(0), note: `${setup.note}: the slope of sessions of ${SHORT} and ${LONG} calls` });
        rows.push({ ...row, metric: `${setup.metric}, per session`, value: once(0), digits: 0, note: 'the session without its calls' });
        return;
      }
      rows.push({
        ...row, metric: `${setup.metric}, added per call`, value: slope(i) - slope(0),
        ...(setup.target === true ? { target: { op: '<=' as const, value: 10 } } : {}), note: setup.note,
      });
      rows.push({ ...row, metric: `${setup.metric}, added per session`, value: once(i) - once(0), digits: 0, note: 'its SessionStart hook and the rest of a session\'s start' });
    });
    return rows;
  } finally {
    // Each project's dispose stops the service started in its state folder.
    for (const setup of setups) setup.where.dispose();
    await empty?.close();
  }
}

/** Replaces the project's Claude Code hooks by one PreToolUse handler. */
function writeClaudeHooks(where: HostProject, handler: Record<string, unknown>): void {
  const dir = path.join(where.project, '.claude');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', hooks: [handler] }] } }));
}

/** The fixed allow of the floor that allows. */
const ALLOW = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'allowed' } });

/** An http server on 127.0.0.1 that answers every POST with `{}` (a hook that says nothing), or on /allow with a fixed allow. */
async function emptyServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    const body = req.url === '/allow' ? ALLOW : '{}';
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}
