// What each host's tool becomes for the policy (docs/hooks.md's table), and the paths a Codex
// patch writes. The host inputs are the shapes seen from the real CLIs (docs/hook-hosts.md).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { heredocPatch, patchPaths } from '../../src/hooks/hosts/applyPatch.js';
import { HostInputError, readHostCall } from '../../src/hooks/hosts/hostCalls.js';
import type { HostAgent } from '../../src/hooks/hosts/hostAgents.js';

const CWD = '/work/proj';

function read(host: HostAgent, body: unknown, env: NodeJS.ProcessEnv = {}) {
  return readHostCall(host, JSON.stringify(body), env, '/elsewhere');
}

function claudeStyle(tool: string, input: unknown, extra: Record<string, unknown> = {}) {
  return { session_id: 's-1', cwd: CWD, hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input, ...extra };
}

describe('hook: what a host\'s tool becomes', () => {
  const table: Array<[HostAgent, unknown, string, unknown]> = [
    ['claude', claudeStyle('Bash', { command: 'rm -rf build' }), 'builtin.run_command', { command: 'rm -rf build' }],
    ['claude', claudeStyle('Read', { file_path: '/work/proj/a.ts' }), 'builtin.read_file', { path: '/work/proj/a.ts' }],
    ['claude', claudeStyle('Write', { file_path: 'b.ts', content: 'x' }), 'builtin.write_file', { path: 'b.ts' }],
    ['claude', claudeStyle('Edit', { file_path: 'b.ts', old_string: 'a', new_string: 'b' }), 'builtin.write_file', { path: 'b.ts' }],
    ['claude', claudeStyle('NotebookEdit', { notebook_path: 'n.ipynb', new_source: '' }), 'builtin.write_file', { path: 'n.ipynb' }],
    ['claude', claudeStyle('WebFetch', { url: 'https://example.com', prompt: 'p' }), 'builtin.fetch', { url: 'https://example.com' }],
    ['claude', claudeStyle('Glob', { pattern: '**/*.ts' }), 'builtin.list_files', { path: '.', pattern: '**/*.ts' }],
    ['claude', claudeStyle('Grep', { pattern: 'x', path: 'src' }), 'builtin.search_files', { path: 'src', pattern: 'x' }],
    ['claude', claudeStyle('Agent', { prompt: 'p' }), 'claude.Agent', { prompt: 'p' }],
    ['codex', claudeStyle('Bash', { command: 'ls' }), 'builtin.run_command', { command: 'ls' }],
    ['codex', claudeStyle('apply_patch', { command: '*** Begin Patch\n*** Add File: a.txt\n+x\n*** Delete File: b.txt\n*** End Patch' }), 'builtin.write_file', { paths: ['a.txt', 'b.txt'] }],
    ['codex', claudeStyle('Bash', { command: "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch\nEOF" }), 'builtin.write_file', { path: 'src/a.ts' }],
    ['gemini', claudeStyle('run_shell_command', { command: 'npm test', dir_path: 'pkg' }), 'builtin.run_command', { command: 'npm test', cwd: 'pkg' }],
    ['gemini', claudeStyle('read_file', { file_path: 'a.ts' }), 'builtin.read_file', { path: 'a.ts' }],
    ['gemini', claudeStyle('replace', { file_path: 'a.ts', old_string: 'a', new_string: 'b', instruction: 'i' }), 'builtin.write_file', { path: 'a.ts' }],
    ['gemini', claudeStyle('web_fetch', { prompt: 'summarise https://a.example/x and https://b.example' }), 'builtin.fetch', { urls: ['https://a.example/x', 'https://b.example'], prompt: 'summarise https://a.example/x and https://b.example' }],
    ['gemini', claudeStyle('google_web_search', { query: 'q' }), 'gemini.google_web_search', { query: 'q' }],
    ['copilot', claudeStyle('Bash', { command: 'ls', description: 'd' }), 'builtin.run_command', { command: 'ls' }],
    ['copilot', claudeStyle('Write', { path: 'a.ts', file_text: 'x' }), 'builtin.write_file', { path: 'a.ts' }],
    ['vscode', claudeStyle('run_in_terminal', { command: 'ls', explanation: 'e', isBackground: false }), 'builtin.run_command', { command: 'ls' }],
    ['vscode', claudeStyle('read_file', { filePath: '/work/proj/a.ts' }), 'builtin.read_file', { path: '/work/proj/a.ts' }],
    ['vscode', claudeStyle('multi_replace_string_in_file', { replacements: [{ filePath: 'a' }, { filePath: 'b' }, { filePath: 'a' }] }), 'builtin.write_file', { paths: ['a', 'b'] }],
    ['vscode', claudeStyle('fetch_webpage', { urls: ['https://x.example'], query: 'q' }), 'builtin.fetch', { url: 'https://x.example' }],
  ];
  for (const [host, body, id, input] of table) {
    const tool = (body as { tool_name: string }).tool_name;
    it(`${host} ${tool} → ${id}`, () => {
      const got = read(host, body);
      assert.equal(got.call.tool.id, id);
      assert.deepEqual(got.call.input, input);
      assert.equal(got.hostTool, tool);
      assert.equal(got.session, 's-1');
    });
  }

  it('names MCP tools by the server the host says, never by splitting an ambiguous name', () => {
    assert.equal(read('claude', claudeStyle('mcp__github__create_issue', { title: 't' })).call.tool.id, 'mcp.github.create_issue');
    // Claude passes the server's name beside the tool's: it wins over the name's own split.
    assert.equal(read('claude', claudeStyle('mcp__a__b__c', {}, { mcp_server: { name: 'a__b', source: 'x' } })).call.tool.id, 'mcp.a__b.c');
    assert.equal(read('codex', claudeStyle('mcp__demo__peek', {})).call.tool.id, 'mcp.demo.peek');
    // Two ways to cut it and nobody says which: kept whole.
    const ambiguous = read('codex', claudeStyle('mcp__a__b__c', {})).call.tool;
    assert.deepEqual([ambiguous.id, ambiguous.kind], ['codex.mcp__a__b__c', 'mcp']);
    const gemini = read('gemini', claudeStyle('mcp_my_server_do_thing', {}, { mcp_context: { server_name: 'my_server', tool_name: 'do_thing' } }));
    assert.equal(gemini.call.tool.id, 'mcp.my_server.do_thing');
    assert.equal(gemini.call.tool.kind, 'mcp');
    // Without mcp_context the name could be server `my` tool `server_do_thing` or any other cut: not an MCP id.
    assert.equal(read('gemini', claudeStyle('mcp_my_server_do_thing', {})).call.tool.id, 'gemini.mcp_my_server_do_thing');
    // Copilot's `<server>-<tool>` with servers whose names hold `-`: kept whole, so `mcp.github.*` cannot match `github-admin`.
    const copilot = readHostCall('copilot', JSON.stringify({ sessionId: 's', cwd: CWD, toolName: 'github-admin-delete_repo', toolArgs: {} }), {}, CWD);
    assert.equal(copilot.call.tool.id, 'copilot.github-admin-delete_repo');
    assert.equal(copilot.call.tool.kind, 'mcp');
  });

  it('keeps dots and glob characters of host names out of ids', () => {
    assert.equal(read('claude', claudeStyle('mcp__gh.admin__x*y', {})).call.tool.id, 'mcp.gh_admin.x_y');
    assert.equal(read('claude', claudeStyle('Some.Tool', {})).call.tool.id, 'claude.Some_Tool');
  });

  it('reads Copilot CLI\'s camelCase payload, with toolArgs as an object or a JSON string', () => {
    for (const toolArgs of [{ command: 'ls' }, JSON.stringify({ command: 'ls' })]) {
      const got = readHostCall('copilot', JSON.stringify({ sessionId: 'c-1', timestamp: 1, cwd: CWD, toolName: 'bash', toolArgs }), { COPILOT_PROJECT_DIR: '/work' }, '/x');
      assert.equal(got.call.tool.id, 'builtin.run_command');
      assert.deepEqual(got.call.input, { command: 'ls' });
      assert.equal(got.camelCase, true);
      assert.equal(got.session, 'c-1');
      assert.equal(got.folder, '/work');
    }
    assert.equal(readHostCall('copilot', JSON.stringify({ toolName: 'view', toolArgs: { path: 'a' } }), {}, CWD).call.tool.id, 'builtin.read_file');
    assert.equal(readHostCall('copilot', JSON.stringify({ toolName: 'edit', toolArgs: { path: 'a', old_str: 'x', new_str: 'y' } }), {}, CWD).call.tool.id, 'builtin.write_file');
  });

  it('reads Cursor\'s events: shell, MCP (input as a JSON string), read, and preToolUse', () => {
    const base = { conversation_id: 'cv', workspace_roots: ['/work/proj'] };
    const shell = read('cursor', { ...base, hook_event_name: 'beforeShellExecution', command: 'rm -rf /', cwd: '/work/proj/sub' });
    assert.equal(shell.call.tool.id, 'builtin.run_command');
    assert.deepEqual(shell.call.input, { command: 'rm -rf /', cwd: '/work/proj/sub' });
    assert.equal(shell.session, 'cv');
    assert.equal(shell.folder, '/work/proj');
    const mcp = read('cursor', { ...base, hook_event_name: 'beforeMCPExecution', tool_name: 'send', tool_input: '{"to":"a@b.c"}', mcp_server_name: 'mail' });
    assert.equal(mcp.call.tool.id, 'mcp.mail.send');
    assert.deepEqual(mcp.call.input, { to: 'a@b.c' });
    assert.equal(read('cursor', { ...base, hook_event_name: 'beforeReadFile', file_path: '/work/proj/.env', content: 'x' }).call.tool.id, 'builtin.read_file');
    assert.equal(read('cursor', { ...base, hook_event_name: 'preToolUse', tool_name: 'Write', tool_input: { file_path: 'a' } }).call.tool.id, 'builtin.write_file');
    assert.equal(read('cursor', { ...base, hook_event_name: 'preToolUse', tool_name: 'Grep', tool_input: {} }).call.tool.id, 'cursor.Grep');
  });

  it('finds the workspace from the host\'s project folder, else its cwd', () => {
    assert.equal(read('claude', claudeStyle('Bash', { command: 'ls' }), { CLAUDE_PROJECT_DIR: '/work' }).folder, '/work');
    assert.equal(read('claude', claudeStyle('Bash', { command: 'ls' })).folder, CWD);
    assert.equal(read('gemini', claudeStyle('read_file', { file_path: 'a' }), { GEMINI_PROJECT_DIR: '/g' }).folder, '/g');
    assert.equal(readHostCall('claude', JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'ls' } }), {}, '/here').folder, path.resolve('/here'));
  });

  it('names the caller after the host, and a host subagent under it', () => {
    assert.equal(read('claude', claudeStyle('Bash', { command: 'ls' })).call.agent, 'claude');
    assert.equal(read('claude', claudeStyle('Bash', { command: 'ls' }, { agent_type: 'Explore' })).call.agent, 'claude:Explore');
  });

  it('refuses input it cannot read as a call, saying why', () => {
    const bad: Array<[HostAgent, string, RegExp]> = [
      ['claude', 'not json', /not JSON/],
      ['claude', '[1,2]', /not a JSON object/],
      ['claude', JSON.stringify({ tool_input: {} }), /names no tool/],
      ['claude', JSON.stringify({ tool_name: 'Bash', tool_input: 'rm -rf /' }), /tool_input is not an object/],
      ['claude', JSON.stringify({ tool_name: 'Bash', tool_input: { command: ['rm'] } }), /Bash without a string "command"/],
      ['claude', JSON.stringify({ tool_name: 'Write', tool_input: {} }), /file_path/],
      ['copilot', JSON.stringify({ toolName: 'bash', toolArgs: '{bad' }), /toolArgs is not JSON/],
      ['cursor', JSON.stringify({ hook_event_name: 'beforeShellExecution' }), /command/],
      ['vscode', JSON.stringify({ tool_name: 'multi_replace_string_in_file', tool_input: { replacements: [] } }), /filePath/],
    ];
    for (const [host, stdin, message] of bad) assert.throws(() => readHostCall(host, stdin, {}, CWD), (e: unknown) => e instanceof HostInputError && message.test(e.message), `${host} ${stdin}`);
  });
});

describe('hook: a Codex patch\'s paths', () => {
  it('lists every path added, updated, deleted or moved to, once each', () => {
    const patch = [
      '*** Begin Patch', '*** Add File: sub/new.txt', '+a', '*** Update File: a.txt', '*** Move to: b.txt', '@@', '-x', '+y',
      '  *** Delete File: old.txt  ', '*** Update File: a.txt', '*** End Patch',
    ].join('\n');
    assert.deepEqual(patchPaths(patch), ['sub/new.txt', 'a.txt', 'b.txt', 'old.txt']);
  });

  it('takes a shell command as a patch only when it is exactly a quoted heredoc fed to apply_patch', () => {
    const body = '*** Begin Patch\n*** Add File: a\n+x\n*** End Patch';
    assert.deepEqual(heredocPatch(`apply_patch <<'EOF'\n${body}\nEOF`), { patch: body });
    assert.deepEqual(heredocPatch(`cd sub && apply_patch <<"PATCH"\n${body}\nPATCH\n`), { patch: body, cd: 'sub' });
    // Anything after the heredoc, an unquoted (expanding) heredoc or another program: a shell command.
    assert.equal(heredocPatch(`apply_patch <<'EOF'\n${body}\nEOF\nrm -rf /`), undefined);
    assert.equal(heredocPatch(`apply_patch <<'EOF'\n${body}\nEOF && rm -rf /`), undefined);
    assert.equal(heredocPatch(`apply_patch <<EOF\n${body}\nEOF`), undefined);
    assert.equal(heredocPatch(`rm -rf / ; apply_patch <<'EOF'\n${body}\nEOF`), undefined);
    assert.equal(heredocPatch(`cd $(rm -rf /) && apply_patch <<'EOF'\n${body}\nEOF`), undefined);
  });

  it('judges a command with more than the patch as the shell command it is', () => {
    const got = read('codex', claudeStyle('Bash', { command: "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\nrm -rf ~" }));
    assert.equal(got.call.tool.id, 'builtin.run_command');
  });
});
