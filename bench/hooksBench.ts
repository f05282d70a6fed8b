// `npm run bench:hooks` (scripts/bench-hooks.mjs): what one tool call of another maker's agent
// costs under our hook, for each host (Claude Code, Codex, Gemini CLI, Copilot CLI) and each way
// it can be answered, as the host waits for it: a new process per call, started and waited for.
//
//   command hook    `node cli.js hook --agent HOST`, the host's input on stdin (today's hook: a
//                   Node start and a policy build per call; no service needed)
//   service, unix   `curl --unix-socket SOCK … --data-binary @- http://localhost/hook/HOST`: the
//                   resident service (`agentpolicy serve`) over its Unix socket, what a sh+curl
//                   client pays before it unwraps the answer
//   service, tcp    the same over 127.0.0.1
//   http hook       (Claude Code only) `POST /http/claude` over 127.0.0.1: what Claude Code's
//                   `type: "http"` hook costs, minus Claude Code's own HTTP client: once with curl
//                   (a process start per call), once from this process's own client (Node's
//                   fetch, the connection kept alive), which is nearer to what a host with an
//                   http client in it pays
//
// and in the same run the floors they stand on: `node -e 0`, `sh -c true`, and curl (and fetch)
// to an empty Node http server over 127.0.0.1 (curl also over a Unix socket). Every way is timed once per round, the
// rounds alternating the ways (each round starting one way further on) so the machine's load falls
// on all alike; a figure is the median (and the best) of the rounds. A figure is the whole call:
// what the host waits for, nothing subtracted. A bench, not a test: no timing is ever asserted;
// what is checked is that every way answers, and answers right (`git status` allowed, `rm -rf
// build` denied), before the timing starts.
//
// Then the real Claude Code (bench/claudeCallsBench.ts, `--claude-rounds N`, default 7, 0 skips it):
// sessions of ten shell calls with each hook `hook install` writes and with none; what a hook adds
// per call is the difference of the medians over the calls.
//
// The service and the empty server run as child processes (the timing loop blocks this one) in a
// temporary state folder; both are stopped by their pids and the folder removed at the end.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookClientPath, hookClientScript } from '../src/hooks/install/hookClient.js';
import { claudeCallRows } from './claudeCallsBench.js';
import { formatTable, median, type BenchRow, type Target } from './table.js';

type Host = 'claude' | 'codex' | 'gemini' | 'copilot';
const HOSTS: readonly Host[] = ['claude', 'codex', 'gemini', 'copilot'];

/** The targets (issue 25): added per Claude Code call with the service up, and per call of the others. */
const TARGET: Record<Host, Target> = {
  claude: { op: '<=', value: 10 },
  codex: { op: '<=', value: 30 },
  gemini: { op: '<=', value: 30 },
  copilot: { op: '<=', value: 30 },
};

/** The file the service keeps the user's secret in, in its state folder (SERVICE_SECRET in src/hooks/service/decisionService.ts). */
const SECRET_FILE = 'service-secret';

/** A small workspace policy: `git status` allowed, `rm *` denied. */
const POLICY = `{
  "version": 1,
  "rules": [
    { "id": "no-rm", "tools": ["builtin.run_command"], "commands": ["rm *"], "decision": "deny", "reason": "no deleting" },
    { "id": "status", "tools": ["builtin.run_command"], "commands": ["git status"], "decision": "allow" }
  ],
  "default": "deny"
}
`;

/** A shell call's hook input in the host's own shape, as the host sends it (docs/hook-hosts.md, "stdin"). */
function hostInput(host: Host, command: string, cwd: string): string {
  const session = '9b2f4c1e-5a7d-4e0b-8c3a-1f6d2e9a7b40';
  switch (host) {
    case 'claude':
      return JSON.stringify({
        session_id: session, transcript_path: path.join(os.homedir(), '.claude', 'projects', 'p', `${session}.jsonl`), cwd,
        permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'Bash',
        tool_input: { command, description: 'Show the working tree status' }, tool_use_id: 'toolu_01AbCdEfGhIjKlMnOpQrStUv',
      });
    case 'codex':
      return JSON.stringify({
        session_id: session, turn_id: session, transcript_path: null, cwd, hook_event_name: 'PreToolUse', model: 'gpt-5-codex',
        permission_mode: 'default', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'call_AbCdEfGhIjKlMnOp',
      });
    case 'gemini':
      return JSON.stringify({
        session_id: session, transcript_path: path.join(os.homedir(), '.gemini', 'tmp', 'p', 'chats', `session-${session}.jsonl`), cwd,
        hook_event_name: 'BeforeTool', timestamp: new Date().toISOString(), tool_name: 'run_shell_command', tool_input: { command },
      });
    case 'copilot':
      return JSON.stringify({ sessionId: session, timestamp: Date.now(), cwd, toolName: 'bash', toolArgs: { command, description: 'Show the working tree status' } });
  }
}

interface Way {
  subject: string;
  metric: string;
  note: string;
  target?: Target;
  /** Runs one call; returns its output (stdout, or the response's body) for the checks. */
  run: (input: string) => Timed | Promise<Timed>;
  /** The input of an allowed call, timed; and of a denied one, checked once. */
  allowed: string;
  denied?: string;
}

interface Timed {
  ms: number;
  out: string;
}

function timed(file: string, args: readonly string[], input: string, options: { cwd: string; env: NodeJS.ProcessEnv; okStatus?: readonly number[] }): Timed {
  const start = process.hrtime.bigint();
  const r = spawnSync(file, args, { input, cwd: options.cwd, env: options.env, encoding: 'utf8', maxBuffer: 1 << 20 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.error) throw r.error;
  if (!(options.okStatus ?? [0]).includes(r.status ?? -1)) throw new Error(`${file} ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr}${r.stdout}`);
  return { ms, out: r.stdout };
}

/** One POST from this process's own HTTP client (Node's fetch, its connection kept alive between calls), as a host with an http hook sends it. */
async function fetched(url: string, secret: string, input: string): Promise<Timed> {
  const start = process.hrtime.bigint();
  const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: input });
  const out = await response.text();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${out}`);
  return { ms, out };
}

/** Starts a child and waits for the first stdout line that matches; rejects when it ends first or takes too long. */
function startChild(file: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`${args.join(' ')}: no ready line within 20 s (${err.trim()})`)), 20_000);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      child.kill('SIGTERM');
      reject(error);
    };
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = out.match(ready);
      if (match) {
        clearTimeout(timer);
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ child, match });
      }
    });
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`${args.join(' ')} ended (${code ?? signal}) before it was ready: ${err.trim()}`)));
  });
}

/** Stops a child this bench started, by its pid, and waits for it to end. */
async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => child.pid !== undefined && child.exitCode === null && process.kill(child.pid, 'SIGKILL'), 5_000);
  await ended;
  clearTimeout(timer);
}

/** The empty server: answers every request 200 with an empty body once the body is read, on 127.0.0.1 and on a Unix socket. */
const EMPTY_SERVER = `
const http = require('node:http');
const handle = (req, res) => { req.resume(); req.on('end', () => res.end()); };
const tcp = http.createServer(handle);
const unix = http.createServer(handle);
const socket = process.argv[1];
tcp.listen(0, '127.0.0.1', () => {
  const done = () => process.stdout.write('empty: http://127.0.0.1:' + tcp.address().port + (socket ? ' unix:' + socket : '') + '\\n');
  if (socket) unix.listen(socket, done); else done();
});
process.on('SIGTERM', () => { tcp.close(); unix.close(); tcp.closeAllConnections(); unix.closeAllConnections(); });
`;

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const rounds = Number(argValue('--rounds') ?? 100);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds takes a whole number of rounds (default 100)');
  // Sessions of the real Claude Code (claudeCallsBench.ts): a few seconds each, so fewer rounds; 0 skips them.
  const claudeRounds = Number(argValue('--claude-rounds') ?? 7);
  if (!Number.isInteger(claudeRounds) || claudeRounds < 0) throw new Error('--claude-rounds takes a whole number of rounds (default 7; 0: none)');
  const cliDir = argValue('--cli') ?? '.cache/bench-hooks-cli';
  const cli = path.resolve(cliDir, 'cli.js');
  if (!fs.existsSync(cli)) throw new Error(`no ${cli}: build it first (scripts/bench-hooks.mjs does)`);
  const curl = spawnSync('curl', ['--version'], { encoding: 'utf8' });
  if (curl.status !== 0) throw new Error('curl is needed (the service paths and the empty server are timed with it)');
  const curlVersion = curl.stdout.split('\n')[0]!.split(' ').slice(0, 2).join(' ');
  const unixSockets = process.platform !== 'win32';

  const load = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' ');
  const loadBefore = load();
  const started = Date.now();
  // A short folder: the Unix sockets' paths must fit the system's limit.
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'aphb-')));
  const children: ChildProcess[] = [];
  const rows: BenchRow[] = [];
  try {
    const workspace = path.join(root, 'proj');
    const xdg = path.join(root, 'xdg');
    const stateDir = path.join(xdg, 'agentpolicy');
    fs.mkdirSync(workspace);
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(workspace, '.agentpolicy.jsonc'), POLICY);
    // The hook and the service read their state from here; no host's variables from this shell.
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: xdg };
    for (const name of ['CLAUDE_PROJECT_DIR', 'GEMINI_PROJECT_DIR', 'COPILOT_PROJECT_DIR', 'COPILOT_CLI', 'AGENTPOLICY_AUDIT']) delete env[name];
    const run = { cwd: workspace, env };

    process.stderr.write('starting agentpolicy serve and an empty http server...\n');
    const serve = await startChild(process.execPath, [cli, 'serve', '--workspace', workspace, '--state-dir', stateDir], run, /agentpolicy: serving (http:\/\/127\.0\.0\.1:\d+)(?: unix:(\S+))?\n/);
    children.push(serve.child);
    const serviceUrl = serve.match[1]!;
    const serviceSocket = serve.match[2];
    const empty = await startChild(process.execPath, ['-e', EMPTY_SERVER, unixSockets ? path.join(root, 'empty.sock') : ''], run, /empty: (http:\/\/127\.0\.0\.1:\d+)(?: unix:(\S+))?\n/);
    children.push(empty.child);
    const emptyUrl = empty.match[1]!;
    const emptySocket = empty.match[2];

    // The secret as a client reads it: from the state folder, into a header file of the same
    // privacy, so it is never on a command line.
    const secret = fs.readFileSync(path.join(stateDir, SECRET_FILE), 'utf8').trim();
    const headers = path.join(stateDir, 'bench-headers');
    fs.writeFileSync(headers, `Authorization: Bearer ${secret}\nContent-Type: application/json\n`, { mode: 0o600 });
    const curlArgs = (url: string, socket?: string): string[] => ['-sS', '--fail', ...(socket ? ['--unix-socket', socket] : []), '-H', `@${headers}`, '--data-binary', '@-', url];

    const ways: Way[] = [];
    const none = '';
    ways.push({ subject: 'baseline', metric: 'node -e 0', note: 'a bare Node start: the floor of any command hook in Node', run: () => timed(process.execPath, ['-e', '0'], none, run), allowed: none });
    ways.push({ subject: 'baseline', metric: 'sh -c true', note: 'a bare shell start: the floor of a sh client', run: () => timed('/bin/sh', ['-c', 'true'], none, run), allowed: none });
    const emptyBody = hostInput('claude', 'git status', workspace);
    ways.push({ subject: 'baseline', metric: 'curl, empty server, tcp', note: `${curlVersion} POSTs a Claude input to an empty Node http server on 127.0.0.1`, run: (i) => timed('curl', curlArgs(`${emptyUrl}/`), i, run), allowed: emptyBody });
    ways.push({ subject: 'baseline', metric: 'fetch, empty server, tcp', note: 'the same from a client already running (Node fetch, connection kept alive): no process start', run: (i) => fetched(`${emptyUrl}/`, secret, i), allowed: emptyBody });
    if (emptySocket) ways.push({ subject: 'baseline', metric: 'curl, empty server, unix', note: 'the same over a Unix socket', run: (i) => timed('curl', curlArgs('http://localhost/', emptySocket), i, run), allowed: emptyBody });

    // The hook client `hook install --via command` writes, in the state folder the service uses.
    const clientText = hookClientScript({ node: process.execPath, cli });
    const client = hookClientPath(stateDir, clientText);
    fs.writeFileSync(client, clientText, { mode: 0o700 });

    for (const host of HOSTS) {
      const allowed = hostInput(host, 'git status', workspace);
      const denied = hostInput(host, 'rm -rf build', workspace);
      // A deny exits 0 with the host's JSON, or 2 where the host reads a deny that way.
      ways.push({ subject: host, metric: 'command hook', note: 'node cli.js hook: a Node start and a policy build per call', run: (i) => timed(process.execPath, [cli, 'hook', '--agent', host], i, { ...run, okStatus: [0, 2] }), allowed, denied });
      if (serviceSocket) ways.push({ subject: host, metric: 'hook client', note: 'the sh client hook install writes: curl to the service\'s socket, the answer replayed', target: TARGET[host], run: (i) => timed(client, ['hook', '--agent', host], i, { ...run, okStatus: [0, 2] }), allowed, denied });
      if (serviceSocket) ways.push({ subject: host, metric: 'service, unix', note: `curl --unix-socket, POST /hook/${host}`, target: TARGET[host], run: (i) => timed('curl', curlArgs(`http://localhost/hook/${host}`, serviceSocket), i, run), allowed, denied });
      ways.push({ subject: host, metric: 'service, tcp', note: `curl to 127.0.0.1, POST /hook/${host}`, target: TARGET[host], run: (i) => timed('curl', curlArgs(`${serviceUrl}/hook/${host}`), i, run), allowed, denied });
      if (host === 'claude') {
        ways.push({ subject: host, metric: 'http hook, curl', note: 'curl to 127.0.0.1, POST /http/claude: Claude Code\'s http hook with a curl start for its client', target: TARGET[host], run: (i) => timed('curl', curlArgs(`${serviceUrl}/http/claude`), i, run), allowed, denied });
        ways.push({ subject: host, metric: 'http hook, fetch', note: 'POST /http/claude from a running client (Node fetch, kept alive), as Claude Code\'s http hook sends it', target: TARGET[host], run: (i) => fetched(`${serviceUrl}/http/claude`, secret, i), allowed, denied });
      }
    }

    // Every way answers, and answers right, before anything is timed (the first calls also warm
    // the hook's kept policy and the service's compiled one).
    process.stderr.write('checking every way answers (git status allowed, rm -rf build denied)...\n');
    for (const way of ways) {
      for (let i = 0; i < 3; i++) await way.run(way.allowed);
      if (way.denied === undefined) continue;
      const yes = (await way.run(way.allowed)).out;
      const no = (await way.run(way.denied)).out;
      // The service's /hook/ answer wraps the hook's output: {"exitCode","stdout","stderr"}.
      const unwrap = (out: string): string => (way.metric.startsWith('service') ? String((JSON.parse(out) as { stdout: string; stderr: string }).stdout) + (JSON.parse(out) as { stderr: string }).stderr : out);
      if (/deny/i.test(unwrap(yes))) throw new Error(`${way.subject} ${way.metric}: git status was not allowed: ${yes}`);
      if (!/deny|no deleting/i.test(unwrap(no))) throw new Error(`${way.subject} ${way.metric}: rm -rf build was not denied: ${no}`);
    }

    process.stderr.write(`timing ${ways.length} ways, ${rounds} rounds in turn...\n`);
    const times: number[][] = ways.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < ways.length; k++) {
        const i = (round + k) % ways.length;
        times[i]!.push((await ways[i]!.run(ways[i]!.allowed)).ms);
      }
      if ((round + 1) % 10 === 0) process.stderr.write(`  ${round + 1}/${rounds}\n`);
    }

    const node = median(times[0]!);
    ways.forEach((way, i) => {
      const m = median(times[i]!);
      const best = Math.min(...times[i]!);
      const vsNode = way.metric === 'node -e 0' ? '' : `; ${(m / node).toFixed(2)} x node -e 0`;
      rows.push({ subject: way.subject, size: times[i]!.length, metric: `${way.metric}, median`, value: m, unit: 'ms', digits: 1, ...(way.target ? { target: way.target } : {}), note: `${way.note}${vsNode}` });
      rows.push({ subject: way.subject, size: times[i]!.length, metric: `${way.metric}, best`, value: best, unit: 'ms', digits: 1 });
    });
  } finally {
    for (const child of children.reverse()) await stopChild(child);
    fs.rmSync(root, { recursive: true, force: true });
  }
  if (claudeRounds > 0) rows.push(...(await claudeCallRows(claudeRounds, cli, (line) => process.stderr.write(`${line}\n`))));

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  process.stdout.write(`Hook calls of other agents, per call as the host waits for it (node ${process.version}, ${os.cpus().length} x ${cpu})\n`);
  // Times are wall clock: other processes on the machine inflate them.
  process.stdout.write(`load average before ${loadBefore}, after ${load()}; the size column: calls timed\n\n`);
  process.stdout.write(`${formatTable(rows)}\n\n`);
  process.stdout.write(`total ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
