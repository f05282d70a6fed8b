// `agentpolicy hook` as a host runs it: the command line, and the built executable with stdin.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/agentpolicy.js';

const repo = path.join(__dirname, '..', '..');

function run(argv: string[], stdin: string, cwd: string, env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  return main(['hook', ...argv], { out: (l) => out.push(l), err: (l) => err.push(l), cwd, readStdin: () => stdin, env }).then((code) => ({ code, out: out.join('\n'), err: err.join('\n') }));
}

describe('agentpolicy hook (command line)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-cli-')));
    fs.writeFileSync(path.join(dir, '.agentpolicy.jsonc'), '{ "version": 1, "rules": [ { "tools": ["builtin.run_command"], "commands": ["rm *"], "decision": "deny", "reason": "no deleting" } ], "default": "allow" }');
    env = { XDG_STATE_HOME: path.join(dir, 'state') };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const input = (command: string): string => JSON.stringify({ session_id: 's', cwd: dir, tool_name: 'Bash', tool_input: { command } });

  it('answers the host on stdout and audits to the user\'s state folder by default', async () => {
    const denied = await run(['--agent', 'claude'], input('rm -rf x'), dir, env);
    assert.equal(denied.code, 0);
    assert.equal(JSON.parse(denied.out).hookSpecificOutput.permissionDecision, 'deny');
    const allowed = await run(['--agent', 'claude', '--timeout', '30'], input('ls'), dir, env);
    assert.equal(JSON.parse(allowed.out).hookSpecificOutput.permissionDecision, 'allow');
    assert.equal(fs.readFileSync(path.join(dir, 'state', 'agentpolicy', 'audit.jsonl'), 'utf8').trim().split('\n').length, 2);
  });

  it('still blocks on a wrong command line: in the host\'s format when it names the host, else with exit 2', async () => {
    const unknownFlag = await run(['--agent', 'claude', '--bogus'], input('ls'), dir, env);
    assert.equal(JSON.parse(unknownFlag.out).hookSpecificOutput.permissionDecision, 'deny');
    assert.match(unknownFlag.err, /bogus/);
    const badTimeout = await run(['--agent', 'gemini', '--timeout', '-1'], input('ls'), dir, env);
    assert.equal(JSON.parse(badTimeout.out).decision, 'deny');
    const noAgent = await run([], input('ls'), dir, env);
    assert.equal(noAgent.code, 2);
    assert.equal(noAgent.out, '');
    assert.equal((await run(['--agent', 'claude', '--audit', path.join(dir, 'a.jsonl'), '--policy', 'nope.jsonc'], input('ls'), dir, env)).out.includes('"deny"'), true);
  });

  it('runs from the built executable, which loads only the hook\'s bundle', function () {
    if (!fs.existsSync(path.join(repo, 'dist', 'hook.js'))) this.skip();
    const result = spawnSync(process.execPath, [path.join(repo, 'dist', 'cli.js'), 'hook', '--agent', 'codex'], { input: input('rm -rf x'), cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).hookSpecificOutput.permissionDecision, 'deny');
    // Which files the process required: the dispatcher, not every command's bundle, nor the schema (validated before).
    const tracer = path.join(dir, 'trace.cjs');
    fs.writeFileSync(tracer, "process.on('exit', () => process.stderr.write('\\nLOADED ' + JSON.stringify(Object.keys(require.cache))))");
    const traced = spawnSync(process.execPath, ['--require', tracer, path.join(repo, 'dist', 'cli.js'), 'hook', '--agent', 'codex'], { input: input('ls'), cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8' });
    const loaded = (JSON.parse(traced.stderr.split('LOADED ')[1]!) as string[]).map((f) => path.relative(repo, f));
    // hook.js is compiled through V8's code cache (not require), so the dispatcher is the one required bundle.
    assert.deepEqual(loaded.filter((f) => f.startsWith('dist')).sort(), ['dist/cli.js']);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'state', 'agentpolicy', 'code-cache')).filter((f) => f.startsWith('hook.js-')).length, 1);
  });
});
