// `agentpolicy hook install`: what it prints, what it writes (nothing with --dry-run or when a
// file cannot be changed), and its exit codes (0 done, 1 a file could not be changed, 2 usage).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookInstallCommand } from '../../src/cli/hookInstallCommand.js';

describe('agentpolicy hook install', () => {
  let ws: string;
  let out: string[];
  let err: string[];
  const run = (...argv: string[]): Promise<number> => hookInstallCommand(argv, { out: (l) => out.push(l), err: (l) => err.push(l), cwd: ws });
  const files = (): string[] => (fs.readdirSync(ws, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(ws, f)).isFile()).sort();

  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-install-cli-')));
    out = [];
    err = [];
  });
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }));

  it('installs for the agents named, one line per file and what each host still needs; exit 0', async () => {
    assert.equal(await run('--agent', 'claude,codex'), 0);
    assert.deepEqual(files(), [path.join('.claude', 'settings.json'), path.join('.codex', 'hooks.json')]);
    assert.deepEqual(out.slice(0, 2), ['created .claude/settings.json (Claude Code)', 'created .codex/hooks.json (Codex)']);
    assert.ok(out.some((l) => l.includes('Codex:') && l.includes('trusted project') && l.includes('/hooks')), out.join('\n'));
    out = [];
    assert.equal(await run('--agent', 'codex,claude'), 0);
    assert.deepEqual(out.slice(0, 2), ['already in place: .claude/settings.json (Claude Code)', 'already in place: .codex/hooks.json (Codex)']);
  });

  it('--agent all, --workspace, --command and --timeout', async () => {
    const sub = path.join(ws, 'project');
    fs.mkdirSync(sub);
    ws = path.dirname(sub);
    assert.equal(await run('--agent', 'all', '--workspace', 'project', '--command', 'npx agentpolicy', '--timeout', '45'), 0);
    assert.equal(out.filter((l) => l.startsWith('created ')).length, 5);
    const claude = JSON.parse(fs.readFileSync(path.join(sub, '.claude', 'settings.json'), 'utf8'));
    assert.equal(claude.hooks.PreToolUse[0].hooks[0].command, 'npx agentpolicy hook --agent claude --timeout 45');
    assert.ok(out.some((l) => l.includes('Copilot CLI and VS Code agent mode')));
    assert.ok(!err.some((l) => l.includes('not on this PATH')), 'no PATH warning for a command of your own');
  });

  it('--remove takes our entries out and deletes files that held only ours', async () => {
    await run('--agent', 'gemini,copilot');
    out = [];
    assert.equal(await run('--agent', 'gemini,vscode', '--remove'), 0);
    assert.deepEqual(out, ['deleted .gemini/settings.json (Gemini CLI)', 'deleted .github/hooks/agentpolicy.json (Copilot CLI and VS Code agent mode)']);
    assert.deepEqual(files(), []);
  });

  it('--dry-run says what it would do and writes nothing', async () => {
    fs.mkdirSync(path.join(ws, '.claude'));
    fs.writeFileSync(path.join(ws, '.claude', 'settings.json'), '{ "model": "opus" }');
    assert.equal(await run('--agent', 'claude,cursor', '--dry-run'), 0);
    assert.deepEqual(out.slice(0, 2), ['would update .claude/settings.json (Claude Code)', 'would create .cursor/hooks.json (Cursor)']);
    assert.deepEqual(files(), [path.join('.claude', 'settings.json')]);
    assert.equal(fs.readFileSync(path.join(ws, '.claude', 'settings.json'), 'utf8'), '{ "model": "opus" }');
  });

  it('exit 1 and nothing written when a file is not JSONC', async () => {
    fs.mkdirSync(path.join(ws, '.gemini'));
    fs.writeFileSync(path.join(ws, '.gemini', 'settings.json'), '{ "hooks": ');
    assert.equal(await run('--agent', 'claude,gemini'), 1);
    assert.match(err.join('\n'), /\.gemini\/settings\.json: not valid JSON with comments .*nothing was changed/);
    assert.deepEqual(files(), [path.join('.gemini', 'settings.json')]);
  });

  for (const [argv, message] of [
    [[], /--agent is required/],
    [['--agent', 'claude,aider'], /--agent aider: not a host/],
    [['--agent', 'claude', '--timeout', '0'], /--timeout 0: a whole number of seconds/],
    [['--agent', 'claude', '--timeout', '1.5'], /--timeout 1.5/],
    [['--agent', 'claude', '--workspace', 'nowhere'], /--workspace nowhere: no such folder/],
    [['--agent', 'claude', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['--agent', 'claude', 'extra'], /Unexpected argument 'extra'/],
  ] as const) {
    it(`exit 2 for ${argv.join(' ') || 'no arguments'}, writing nothing`, async () => {
      assert.equal(await run(...argv), 2);
      assert.match(err[0]!, message);
      assert.match(err.join('\n'), /usage:/);
      assert.deepEqual(files(), []);
    });
  }
});
