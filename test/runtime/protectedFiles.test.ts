// The protected-files hook called directly on a temp workspace: the default entries, links made
// during the session (symbolic and hard), and commands that name a protected file however quoted.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { builtinTools } from '../../src/runtime/tools/builtins.js';
import { DEFAULT_PROTECTED_FILES, protectedFilesHook } from '../../src/runtime/calls/protected.js';
import type { ToolHook } from '../../src/runtime/tree/sessionOptions.js';
import type { RuntimeTool } from '../../src/runtime/tools/tools.js';

function builtin(name: string): RuntimeTool {
  const tool = builtinTools().find((t) => t.id === `builtin.${name}`);
  assert.ok(tool, `no builtin ${name}`);
  return tool;
}

describe('protected-files hook, fully', () => {
  let ws: string;
  let hook: ToolHook;
  const asks = (tool: string, input: unknown): string | undefined => hook.check({ tool: builtin(tool), input, agent: 'a', workspaceFolder: ws });
  const cmd = (command: string, cwd?: string): string | undefined => asks('run_command', cwd === undefined ? { command } : { command, cwd });

  before(async () => {
    await initShellParser();
  });
  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'protected-files-')));
    fs.writeFileSync(path.join(ws, '.agentpolicy.jsonc'), '{ "version": 1, "rules": [] }');
    fs.mkdirSync(path.join(ws, 'src'));
    fs.writeFileSync(path.join(ws, 'src', 'index.ts'), '');
    fs.mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.git', 'config'), '');
    hook = protectedFilesHook(DEFAULT_PROTECTED_FILES.map((f) => path.resolve(ws, f)));
  });
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }));

  const entries: [string, string][] = [
    ['.git/hooks/', '.git/hooks/pre-commit'],
    ['.git/config', '.git/config'],
    ['.claude/settings.json', '.claude/settings.json'],
    ['.claude/settings.local.json', '.claude/settings.local.json'],
    ['.gemini/settings.json', '.gemini/settings.json'],
    ['.codex/', '.codex/config.toml'],
    ['.github/hooks/', '.github/hooks/hooks.json'],
    ['.cursor/hooks.json', '.cursor/hooks.json'],
  ];
  for (const [entry, file] of entries) {
    it(`${entry} is a default entry: writing ${file} is asked`, () => {
      assert.ok(DEFAULT_PROTECTED_FILES.includes(entry));
      const reason = asks('write_file', { path: file, content: 'x' });
      assert.ok(reason, `${file} not asked`);
      assert.match(reason, /only a person can allow this, once/);
    });
  }

  it('a file beside a protected folder is not asked (.github/ISSUE_TEMPLATE beside .github/hooks and .github/workflows)', () => {
    assert.equal(asks('write_file', { path: '.github/ISSUE_TEMPLATE/bug.md', content: 'x' }), undefined);
    // A persistence folder (persistenceFiles.ts) is asked, though.
    assert.ok(asks('write_file', { path: '.github/workflows/ci.yml', content: 'x' }));
    assert.equal(asks('write_file', { path: 'src/index.ts', content: 'x' }), undefined);
  });

  it('a .vscode made a symbolic link after the hook was made is still protected, by its literal and its real path', () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'protected-elsewhere-'));
    try {
      fs.symlinkSync(elsewhere, path.join(ws, '.vscode'));
      assert.ok(asks('write_file', { path: '.vscode/settings.json', content: '{}' }));
      assert.ok(asks('write_file', { path: path.join(elsewhere, 'settings.json'), content: '{}' }));
      // and a link in the workspace to the real .git/hooks
      fs.symlinkSync(path.join(ws, '.git', 'hooks'), path.join(ws, 'h'));
      assert.ok(asks('write_file', { path: 'h/pre-commit', content: 'x' }));
      assert.ok(cmd('cp evil h/pre-push'));
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('a hard link to .agentpolicy.jsonc is asked, naming the protected file', () => {
    fs.linkSync(path.join(ws, '.agentpolicy.jsonc'), path.join(ws, 'src', 'notes.txt'));
    const reason = asks('write_file', { path: 'src/notes.txt', content: 'x' });
    assert.ok(reason);
    assert.match(reason, /\.agentpolicy\.jsonc/);
    assert.ok(asks('delete_file', { path: 'src/notes.txt' }));
    assert.ok(cmd('truncate -s 0 src/notes.txt'));
    // another file with one link is not
    assert.equal(asks('write_file', { path: 'src/index.ts', content: 'x' }), undefined);
  });

  const spellings = [
    'mv .vscode x', 'rm -rf .vscode', 'rm -rf .git', 'cat > .git/hooks/pre-commit', 'rm ".vs"\'code\'',
    'rm -rf .vs\\code', "rm -rf $'.vscode'", 'rm -rf ".g"it', 'cd src && rm -rf ../.git', 'tee .git/"hooks"/pre-commit',
    'rm -rf .codex', 'mv x .cursor/hooks.json', 'sed -i s/a/b/ .git/config', 'echo $(rm -rf .vscode',
  ];
  for (const command of spellings) {
    it(`${JSON.stringify(command)} is asked`, () => {
      assert.ok(cmd(command), `${command} not asked`);
    });
  }

  it('a command run in a protected folder is asked; with cwd "." it is not', () => {
    assert.ok(cmd('touch pre-commit', '.git/hooks'));
    assert.ok(cmd('rm -rf vscode', '.git'));
    assert.equal(cmd('ls', '.'), undefined);
    assert.equal(cmd('npm test', '.'), undefined);
  });

  it('commands that name no protected file are not asked: ls src, ls ., git status, git config', () => {
    for (const command of ['ls src', 'ls .', 'ls', 'git status', 'git config user.name', 'cat src/index.ts > out.txt', 'ls /']) {
      assert.equal(cmd(command), undefined, command);
    }
  });

  it('any quoting of .agentpolicy.jsonc in `rm X` is asked (property)', () => {
    const quote = (piece: string, how: number): string => {
      switch (how) {
        case 0: return `'${piece}'`;
        case 1: return `"${piece}"`;
        case 2: return [...piece].map((c) => `\\${c}`).join('');
        default: return piece;
      }
    };
    const name = '.agentpolicy.jsonc';
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: name.length - 1 }), { maxLength: 6 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 7, maxLength: 7 }),
        (cuts, hows) => {
          const bounds = [0, ...[...cuts].sort((a, b) => a - b), name.length];
          const word = bounds.slice(1).map((end, i) => quote(name.slice(bounds[i], end), hows[i] ?? 3)).join('');
          return cmd(`rm ${word}`) !== undefined;
        },
      ),
      { numRuns: 300 },
    );
  });
});
