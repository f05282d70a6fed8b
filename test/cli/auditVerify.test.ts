// `agentpolicy audit verify FILE…`: the audit log's hash chain checked from the command line, on
// lines written by the writers that share a log (the hook, a session's FileAuditLog).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';
import { FileAuditLog } from '../../src/runtime/audit/audit.js';
import { runCli } from './cliRun.js';

const repo = path.join(__dirname, '..', '..');

describe('agentpolicy audit verify', () => {
  let dir: string;
  let log: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'audit-verify-')));
    fs.writeFileSync(path.join(dir, '.agentpolicy.jsonc'), '{ "version": 1, "rules": [ { "tools": ["builtin.run_command"], "commands": ["rm *"], "decision": "deny", "reason": "no deleting" } ], "default": "allow" }');
    log = path.join(dir, 'audit.jsonl');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const input = (command: string): string => JSON.stringify({ session_id: 's', cwd: dir, tool_name: 'Bash', tool_input: { command } });
  const hook = (command: string) =>
    main(['hook', '--agent', 'claude', '--audit', log], { out: () => {}, err: () => {}, cwd: dir, readStdin: () => input(command), env: { XDG_STATE_HOME: path.join(dir, 'state') } });

  /** Lines from the hook and from a session's writer, interleaved, in one file. */
  async function mixedLog(): Promise<string[]> {
    const session = new FileAuditLog(log);
    session.write({ time: new Date().toISOString(), event: 'session-started', session: 'run-1', agent: 'main' });
    await hook('ls');
    await hook('rm -rf x');
    session.write({ time: new Date().toISOString(), event: 'session-ended', session: 'run-1', state: 'completed' });
    session.close();
    await hook('git status');
    return fs.readFileSync(log, 'utf8').split(/(?<=\n)/);
  }

  it('passes a log its writers wrote, and says how many lines and the head', async () => {
    const lines = await mixedLog();
    assert.equal(lines.length, 5);
    const result = await runCli(['audit', 'verify', 'audit.jsonl'], dir);
    assert.equal(result.code, 0, result.err.join('\n'));
    assert.deepEqual(result.out, [`audit.jsonl: 5 line(s) chained, head ${(JSON.parse(lines[4]!) as { hash: string }).hash}`]);
    // The table reads the same file as before.
    const table = await runCli(['audit', 'audit.jsonl'], dir);
    assert.equal(table.code, 0, table.err.join('\n'));
    assert.equal(table.out[0]!.split('\n').length, 7);
  });

  it('names the line changed, with exit status 1', async () => {
    const lines = await mixedLog();
    lines[2] = lines[2]!.replace('"decision":"deny"', '"decision":"allow"');
    fs.writeFileSync(log, lines.join(''));
    const result = await runCli(['audit', 'verify', 'audit.jsonl'], dir);
    assert.equal(result.code, 1);
    assert.equal(result.err.length, 1);
    assert.match(result.err[0]!, /^audit\.jsonl:3: changed: its text does not match its hash/);
  });

  it('names a line removed, and the end cut short against --head', async () => {
    const lines = await mixedLog();
    const head = (JSON.parse(lines[4]!) as { hash: string }).hash;
    fs.writeFileSync(log, [lines[0], lines[1], lines[3], lines[4]].join(''));
    const removed = await runCli(['audit', 'verify', 'audit.jsonl'], dir);
    assert.equal(removed.code, 1);
    assert.match(removed.err[0]!, /^audit\.jsonl:3: a line before it was removed/);
    fs.writeFileSync(log, lines.slice(0, 4).join(''));
    assert.equal((await runCli(['audit', 'verify', 'audit.jsonl'], dir)).code, 0);
    const cut = await runCli(['audit', 'verify', 'audit.jsonl', '--head', head], dir);
    assert.equal(cut.code, 1);
    assert.match(cut.err[0]!, /the head sha256:[0-9a-f]{64} is not in the file/);
  });

  it('reports a torn last line as a crash, not tampering, and passes', async () => {
    const lines = await mixedLog();
    fs.writeFileSync(log, lines.slice(0, 4).join('') + lines[4]!.slice(0, 30));
    const result = await runCli(['audit', 'verify', 'audit.jsonl', '--json'], dir);
    assert.equal(result.code, 0, result.err.join('\n'));
    const [report] = JSON.parse(result.out[0]!) as Array<{ ok: boolean; lines: number; notes: Array<{ line: number; message: string }> }>;
    assert.equal(report!.ok, true);
    assert.equal(report!.lines, 4);
    assert.equal(report!.notes.length, 1);
    assert.equal(report!.notes[0]!.line, 5);
    assert.match(report!.notes[0]!.message, /cut off \(a crash mid-write\)/);
  });

  it('needs a file; --head only with verify', async () => {
    assert.equal((await runCli(['audit', 'verify'], dir)).code, 2);
    assert.equal((await runCli(['audit', 'verify', 'nope.jsonl'], dir)).code, 2);
    await mixedLog();
    assert.equal((await runCli(['audit', 'audit.jsonl', '--head', 'x'], dir)).code, 2);
  });

  it('real hook processes writing at once, then the real executable verifying: the chain holds, and a reorder is named', async function () {
    this.timeout(120000);
    // From the repository, where tsx resolves; the hook finds the policy through its input's cwd.
    const cli = path.join(repo, 'src', 'cli', 'main.ts');
    const env = { ...process.env, XDG_STATE_HOME: path.join(dir, 'state') };
    const hooks = ['ls', 'rm -rf a', 'git status', 'echo hi'].map((command) => new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', cli, 'hook', '--agent', 'claude', '--audit', log], { cwd: repo, env, stdio: ['pipe', 'ignore', 'ignore'] });
      child.on('error', reject).on('close', resolve);
      child.stdin.end(input(command));
    }));
    assert.deepEqual(await Promise.all(hooks), [0, 0, 0, 0]);
    const verify = () => spawnSync(process.execPath, ['--import', 'tsx', cli, 'audit', 'verify', log], { cwd: repo, encoding: 'utf8', timeout: 60000 });
    const ok = verify();
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /4 line\(s\) chained/);
    const lines = fs.readFileSync(log, 'utf8').split(/(?<=\n)/);
    [lines[1], lines[2]] = [lines[2]!, lines[1]!];
    fs.writeFileSync(log, lines.join(''));
    const reordered = verify();
    assert.equal(reordered.status, 1);
    assert.match(reordered.stderr, /audit\.jsonl:2: out of order: it names line 3 as the line before it/);
  });
});
