// builtin.run_command runs commands with bash (the grammar the policy's splitter reads), never
// /bin/sh; it does not source BASH_ENV; and where there is no bash, every command is asked.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { commandEnvironment, commandShell, findBash, locateBash } from '../../src/runtime/sandbox/commandProcess.js';
import { NO_BASH_HOOK, NO_BASH_REASON, noBashHook } from '../../src/runtime/calls/noBashHook.js';
import { NO_BASH_STDERR_NOTE, runCommandTool, type RunCommandResult } from '../../src/runtime/tools/runCommandTool.js';
import { readFileTool } from '../../src/runtime/tools/fileReadTools.js';
import type { RuntimeTool, ToolRunContext } from '../../src/runtime/tools/tools.js';

let ws: string;

function context(): ToolRunContext {
  return { sessionId: 's1', turnId: 't1', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal };
}

/** As the runtime does it: check (validate and normalise) the input, then run. */
async function run(command: string, tool: RuntimeTool = runCommandTool()): Promise<RunCommandResult> {
  const checked = tool.check({ command });
  if (!checked.ok) throw new Error(`input rejected: ${checked.error}`);
  return (await tool.run(checked.value, context())) as RunCommandResult;
}

beforeEach(() => {
  ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'run-bash-')));
});

afterEach(() => {
  fs.rmSync(ws, { recursive: true, force: true });
});

describe('builtin.run_command runs with bash', function () {
  before(function () {
    // These tests are about bash; a machine without it is covered by the no-bash tests below.
    if (findBash() === undefined) this.skip();
  });

  it('finds bash, and the tool says it runs with bash', () => {
    const bash = findBash();
    assert.ok(bash !== undefined && path.isAbsolute(bash), String(bash));
    assert.equal(findBash(), bash, 'looked for once');
    const tool = runCommandTool();
    assert.match(tool.description, /bash/);
    assert.doesNotMatch(tool.description, /\/bin\/sh/);
    assert.deepEqual(commandShell(bash), { path: bash, args: ['--noprofile', '--norc', '-c', '--'], isBash: true });
    assert.deepEqual(commandShell(undefined), { path: '/bin/sh', args: ['-c', '--'], isBash: false });
  });

  // Without `--` bash takes a line starting with `-` or `+` for its own options and runs nothing.
  it('runs a line that starts with - or + as a command line, not as the shell\'s options', async () => {
    const bin = path.join(ws, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, '-'), '#!/bin/sh\necho "dash ran: $*"\n', { mode: 0o755 });
    const viaPath = await run(`PATH=${bin}:"$PATH"; - a=b`);
    assert.equal(viaPath.stdout, 'dash ran: a=b\n', viaPath.stderr);
    const dashFirst = await run('- a=b');
    assert.match(dashFirst.stderr, /-: command not found/);
    assert.doesNotMatch(dashFirst.stderr, /invalid option|option requires an argument/);
    const plusFirst = await run('+x');
    assert.match(plusFirst.stderr, /\+x: command not found/);
    const bashZero = await run('echo "$0"');
    assert.match(bashZero.stdout, /bash\n$/, 'the -- is not taken for $0');
  });

  it("reads $'…' as bash does: a tab", async () => {
    const result = await run("echo $'a\\tb'");
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout, 'a\tb\n');
    assert.equal(result.stderr, '');
  });

  it('reads &> as bash does: both streams to the file, nothing printed', async () => {
    const result = await run('echo hi &> out.txt');
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr, '');
    assert.equal(fs.readFileSync(path.join(ws, 'out.txt'), 'utf8'), 'hi\n');
  });

  it('knows [[ … ]]', async () => {
    const result = await run('[[ 1 == 1 ]] && echo yes');
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout, 'yes\n');
    assert.equal(result.stderr, '');
  });

  it('is bash, not sh in bash clothes (no POSIX mode)', async () => {
    const result = await run('echo "$BASH_VERSION"; shopt -qo posix && echo posix || echo not-posix');
    assert.match(result.stdout, /^\d+\.\d+.*\nnot-posix\n$/);
  });

  it('does not source BASH_ENV (or ENV) from the parent environment', async () => {
    const marker = path.join(ws, 'sourced.txt');
    const startup = path.join(ws, 'startup.sh');
    fs.writeFileSync(startup, `touch ${JSON.stringify(marker)}\n`);
    const saved = { BASH_ENV: process.env.BASH_ENV, ENV: process.env.ENV };
    process.env.BASH_ENV = startup;
    process.env.ENV = startup;
    try {
      // Sanity: bash started with the parent's environment does source it, so the test can fail.
      spawnSync(findBash() as string, ['-c', 'true'], { cwd: ws });
      assert.equal(fs.existsSync(marker), true, 'plain bash -c sources BASH_ENV');
      fs.rmSync(marker);
      const result = await run('echo "[${BASH_ENV-unset}] [${ENV-unset}]"');
      assert.equal(result.exitCode, 0);
      assert.equal(result.stdout, '[unset] [unset]\n');
      assert.equal(fs.existsSync(marker), false, 'BASH_ENV was sourced');
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('does not import exported bash functions that would redefine a judged name', async () => {
    const saved = process.env['BASH_FUNC_ls%%'];
    process.env['BASH_FUNC_ls%%'] = '() {  echo hijacked; }';
    try {
      // Sanity: bash started with the parent's environment does import it, so the test can fail.
      const plain = spawnSync(findBash() as string, ['-c', 'ls /'], { cwd: ws, encoding: 'utf8' });
      assert.equal(plain.stdout, 'hijacked\n');
      const result = await run('ls /');
      assert.doesNotMatch(result.stdout, /hijacked/);
    } finally {
      if (saved === undefined) delete process.env['BASH_FUNC_ls%%'];
      else process.env['BASH_FUNC_ls%%'] = saved;
    }
  });

  it('keeps the rest of the environment', () => {
    const env = commandEnvironment({ PATH: '/bin', HOME: '/h', BASH_ENV: '/x', ENV: '/y' });
    assert.deepEqual(env, { PATH: '/bin', HOME: '/h' });
  });
});

describe('run_command where there is no bash', () => {
  const noBash = (): undefined => undefined;
  const withBash = (): string => '/bin/bash';

  it('locateBash looks in /bin, /usr/bin, then PATH, and may find nothing', () => {
    const found = locateBash({ PATH: '' });
    if (fs.existsSync('/bin/bash') || fs.existsSync('/usr/bin/bash')) assert.ok(found === '/bin/bash' || found === '/usr/bin/bash', String(found));
    else assert.equal(found, undefined);
  });

  it('the no-bash hook asks for every run_command call, and nothing else', () => {
    const hook = noBashHook({ findBash: noBash });
    assert.equal(hook.name, NO_BASH_HOOK);
    assert.equal(hook.name, 'no-bash');
    const call = (tool: RuntimeTool, input: unknown): string | undefined => hook.check({ tool, input, agent: 'main', workspaceFolder: ws });
    const tool = runCommandTool({ findBash: noBash });
    assert.equal(
      NO_BASH_REASON,
      'bash is not installed on this machine, so commands cannot be read by the grammar they run with; every command is asked',
    );
    for (const command of ['true', 'ls', 'echo hi &> out.txt', "echo $'a'"]) assert.equal(call(tool, { command }), NO_BASH_REASON);
    assert.equal(call(readFileTool(), { path: 'a.txt' }), undefined);
  });

  it('the no-bash hook stays quiet where there is bash', () => {
    const hook = noBashHook({ findBash: withBash });
    assert.equal(hook.check({ tool: runCommandTool(), input: { command: 'ls' }, agent: 'main', workspaceFolder: ws }), undefined);
  });

  it('the tool says so, and an allowed command runs with /bin/sh, saying so in stderr', async () => {
    const tool = runCommandTool({ findBash: noBash });
    assert.match(tool.description, /Bash is not installed on this machine/);
    assert.match(tool.description, /every command is asked/);
    assert.match(tool.description, /\/bin\/sh -c/);
    const result = await run('echo out; echo err >&2; [ -z "$BASH_VERSION" ] && echo not-bash', tool);
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout, 'out\nnot-bash\n');
    assert.equal(result.stderr, `${NO_BASH_STDERR_NOTE}err\n`);
    assert.ok(result.stderr.startsWith('[run_command: bash is not installed on this machine'));
  });
});
