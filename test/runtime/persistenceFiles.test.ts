// Persistence files (persistenceFiles.ts): a sandboxed command cannot create or change them,
// existing or missing (a missing one it made is removed afterwards), the protected-files hook asks
// for builtin.write_file to them, and the policy's `persistenceFiles` adds to the list.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { builtinTools } from '../../src/runtime/tools/builtins.js';
import { HOME_STARTUP_FILES, WORKSPACE_PERSISTENCE_FILES } from '../../src/runtime/sandbox/persistenceFiles.js';
import { AGENT_CONTROL_FILES, DEFAULT_PROTECTED_FILES, protectedFilesHook, protectedPathsOf } from '../../src/runtime/calls/protected.js';
import { runCommandTool, type RunCommandResult } from '../../src/runtime/tools/runCommandTool.js';
import { probeSandbox } from '../../src/runtime/sandbox/sandboxProbe.js';
import type { RuntimeTool, ToolRunContext } from '../../src/runtime/tools/tools.js';

const FILES = ['.vscode/tasks.json', '.envrc', '.github/workflows/ci.yml', '.gitmodules', '.husky/pre-commit', '.mcp.json', '.devcontainer/devcontainer.json'];

function builtin(name: string): RuntimeTool {
  const tool = builtinTools().find((t) => t.id === `builtin.${name}`);
  assert.ok(tool, `no builtin ${name}`);
  return tool;
}

describe('persistence files', () => {
  let ws: string;
  beforeEach(() => {
    ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'persistence-')));
  });
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }));

  it('are protected by default, beside the agent control files, which stay as they were', () => {
    for (const f of [...AGENT_CONTROL_FILES, ...WORKSPACE_PERSISTENCE_FILES]) assert.ok(DEFAULT_PROTECTED_FILES.includes(f), f);
    for (const f of ['.vscode/', '.idea/', '.devcontainer/', '.envrc', '.husky/', '.github/workflows/', '.claude/', '.codex/', '.gemini/', '.cursor/', '.mcp.json', '.gitmodules', '.git/hooks/', '.git/config']) {
      assert.ok(WORKSPACE_PERSISTENCE_FILES.includes(f), f);
    }
    assert.ok(HOME_STARTUP_FILES.includes('.bashrc') && HOME_STARTUP_FILES.includes('.zshenv') && HOME_STARTUP_FILES.includes('.config/fish/config.fish'));
  });

  it('the protected-files hook asks for builtin.write_file to each, and to a home start-up file when the workspace is the home folder', () => {
    const hook = protectedFilesHook(protectedPathsOf(ws, [], '/nonexistent-home'));
    for (const file of FILES) {
      const title = hook.check({ tool: builtin('write_file'), input: { path: file, content: 'x' }, agent: 'a', workspaceFolder: ws });
      assert.match(title ?? '', /protected file/, file);
    }
    assert.equal(hook.check({ tool: builtin('write_file'), input: { path: 'src/a.ts', content: 'x' }, agent: 'a', workspaceFolder: ws }), undefined);
    const asHome = protectedFilesHook(protectedPathsOf(ws, [], ws));
    assert.match(asHome.check({ tool: builtin('write_file'), input: { path: '.bashrc', content: 'x' }, agent: 'a', workspaceFolder: ws }) ?? '', /protected file \.bashrc/);
  });

  it('the policy adds its own ("persistenceFiles"), validated', () => {
    const policy = new Policy({ workspace: loadPolicyText('{ "version": 1, "persistenceFiles": ["tools/run.sh", "scripts/"] }', path.join(ws, '.agentpolicy.jsonc')) });
    assert.deepEqual(policy.persistenceFiles(), ['tools/run.sh', 'scripts/']);
    const hook = protectedFilesHook(protectedPathsOf(ws, policy.persistenceFiles(), '/nonexistent-home'));
    assert.match(hook.check({ tool: builtin('write_file'), input: { path: 'scripts/x.sh', content: 'x' }, agent: 'a', workspaceFolder: ws }) ?? '', /protected file/);
    for (const bad of ['/etc/passwd', '../x', 'a/./b', '~/.bashrc', '', 'a//b']) {
      const layer = loadPolicyText(JSON.stringify({ version: 1, persistenceFiles: [bad] }), '/p.jsonc');
      assert.equal(layer.valid, false, bad);
      assert.ok(layer.diagnostics.some((d) => d.code === 'schema'), bad);
    }
  });

  describe('in the real bubblewrap', function () {
    const probe = probeSandbox();
    before(function () {
      if (!probe.available) {
        console.log(`    (sandbox tests skipped: ${probe.reason})`);
        this.skip();
      }
    });

    async function run(command: string): Promise<{ result: RunCommandResult; undone: string[] }> {
      const undone: string[] = [];
      const context: ToolRunContext = {
        sessionId: 's', turnId: 't', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal,
        sandbox: { network: false, protectedWritable: false, protectedFiles: protectedPathsOf(ws, [], '/nonexistent-home'), onUndone: (u, l) => undone.push(...u, ...l) },
      };
      const tool = runCommandTool();
      const checked = tool.check({ command });
      if (!checked.ok) throw new Error(checked.error);
      return { result: (await tool.run(checked.value, context)) as RunCommandResult, undone };
    }

    const writeAll = FILES.map((f) => `mkdir -p "$(dirname ${f})"; echo evil >> ${f}`).join('; ');

    it('a command cannot change an existing one', async () => {
      for (const f of FILES) {
        fs.mkdirSync(path.dirname(path.join(ws, f)), { recursive: true });
        fs.writeFileSync(path.join(ws, f), 'good\n');
      }
      const { result } = await run(`${writeAll}; for f in ${FILES.join(' ')}; do mv $f $f.x; rm -f $f; done; echo done`);
      assert.match(result.stdout, /done/);
      for (const f of FILES) assert.equal(fs.readFileSync(path.join(ws, f), 'utf8'), 'good\n', f);
    });

    it('a command cannot create a missing one: what it made is removed after it, and said', async () => {
      const { result, undone } = await run(`${writeAll}; echo ok > plain.txt`);
      assert.equal(fs.readFileSync(path.join(ws, 'plain.txt'), 'utf8'), 'ok\n');
      for (const f of FILES) assert.ok(!fs.existsSync(path.join(ws, f)), f);
      assert.ok(undone.length > 0 && result.sandbox.undone !== undefined);
    });
  });
});
