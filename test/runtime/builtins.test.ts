import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { builtinFileTools, builtinTools, runCommandTool } from '../../src/runtime/tools/builtins.js';
import { MAX_FILE_BYTES, type ListFilesResult, type ReadFileResult, type SearchFilesResult } from '../../src/runtime/tools/fileReadTools.js';
import type { DeleteFileResult, RenameFileResult, WriteFileResult } from '../../src/runtime/tools/fileWriteTools.js';
import type { RunCommandResult } from '../../src/runtime/tools/runCommandTool.js';
import { OutsideWorkspaceError } from '../../src/runtime/tools/workspacePaths.js';
import type { RuntimeTool, ToolRunContext } from '../../src/runtime/tools/tools.js';
import { snapshot } from './fsSnapshot.js';

// Every test gets a fresh temporary tree:
//   <root>/ws        the workspace folder
//   <root>/outside   a folder next to it, holding secret.txt, that no tool may touch
let root: string;
let ws: string;
let outside: string;
let secret: string;
const strayPids: number[] = [];

function byName(name: string): RuntimeTool {
  const found = builtinTools().find((t) => t.name === name);
  assert.ok(found, `no tool ${name}`);
  return found;
}

function context(signal: AbortSignal = new AbortController().signal): ToolRunContext {
  return { sessionId: 's1', turnId: 't1', agent: 'main', workspaceFolder: ws, signal };
}

/** As the runtime does it: check (validate and normalise) the input, then run. */
async function call<T>(tool: RuntimeTool | string, input: unknown, ctx: ToolRunContext = context()): Promise<T> {
  const t = typeof tool === 'string' ? byName(tool) : tool;
  const checked = t.check(input);
  if (!checked.ok) throw new Error(`input rejected: ${checked.error}`);
  return (await t.run(checked.value, ctx)) as T;
}

function write(rel: string, content: string | Buffer): void {
  const p = path.join(ws, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

/**
 * True when the process no longer runs. A killed orphan may linger as a zombie when PID 1 does
 * not reap (as in some containers); `kill(pid, 0)` still succeeds for a zombie, so look at its state too.
 */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function waitFor(predicate: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (predicate()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function readPid(file: string): Promise<number> {
  assert.ok(await waitFor(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() !== '', 5000), `no pid in ${file}`);
  const pid = Number(fs.readFileSync(file, 'utf8').trim());
  strayPids.push(pid);
  return pid;
}

async function assertRefused(promise: Promise<unknown>, value: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof OutsideWorkspaceError, `expected OutsideWorkspaceError, got ${String(error)}`);
    assert.match(error.message, /is outside the workspace folder/);
    assert.ok(error.message.includes(JSON.stringify(value)), `message names the path: ${error.message}`);
    return true;
  });
}

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'builtins-')));
  ws = path.join(root, 'ws');
  outside = path.join(root, 'outside');
  fs.mkdirSync(ws);
  fs.mkdirSync(outside);
  secret = path.join(outside, 'secret.txt');
  fs.writeFileSync(secret, 'top secret\n');
});

afterEach(() => {
  for (const pid of strayPids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  fs.rmSync(root, { recursive: true, force: true });
});

describe('builtin tools: declarations', () => {
  it('builtinTools() is the six file tools, run_command and fetch, with stable ids and names', () => {
    assert.deepEqual(
      builtinTools().map((t) => [t.id, t.name, t.kind]),
      [
        ['builtin.read_file', 'read_file', 'builtin'],
        ['builtin.write_file', 'write_file', 'builtin'],
        ['builtin.list_files', 'list_files', 'builtin'],
        ['builtin.search_files', 'search_files', 'builtin'],
        ['builtin.delete_file', 'delete_file', 'builtin'],
        ['builtin.rename_file', 'rename_file', 'builtin'],
        ['builtin.run_command', 'run_command', 'builtin'],
        ['builtin.fetch', 'fetch', 'builtin'],
      ],
    );
    assert.deepEqual(builtinFileTools().map((t) => t.id), builtinTools().slice(0, 6).map((t) => t.id));
    assert.equal(runCommandTool().id, 'builtin.run_command');
  });

  it('declares honest annotations, path arguments and the command argument', () => {
    const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
    const expected: Record<string, { annotations: object; pathArgs: string[]; commandArg?: string }> = {
      read_file: { annotations: readOnly, pathArgs: ['path'] },
      write_file: { annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }, pathArgs: ['path'] },
      list_files: { annotations: readOnly, pathArgs: ['path'] },
      search_files: { annotations: readOnly, pathArgs: ['path'] },
      delete_file: { annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }, pathArgs: ['path'] },
      rename_file: { annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false }, pathArgs: ['from', 'to'] },
      run_command: {
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
        pathArgs: ['cwd'],
        commandArg: 'command',
      },
      fetch: { annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true }, pathArgs: [] },
    };
    for (const t of builtinTools()) {
      const e = expected[t.name];
      assert.ok(e, t.name);
      assert.deepEqual(t.annotations, e.annotations, t.name);
      assert.deepEqual(t.pathArgs, e.pathArgs, t.name);
      assert.equal(t.commandArg, e.commandArg, t.name);
      assert.ok(t.description.length > 20, t.name);
    }
  });

  it('input schemas are strict objects: unknown fields and wrong types are rejected', () => {
    const valid: Record<string, unknown> = {
      read_file: { path: 'a' },
      write_file: { path: 'a', content: '' },
      list_files: {},
      search_files: { pattern: 'x' },
      delete_file: { path: 'a' },
      rename_file: { from: 'a', to: 'b' },
      run_command: { command: 'true' },
      fetch: { url: 'https://example.com/' },
    };
    for (const t of builtinTools()) {
      const input = valid[t.name] as Record<string, unknown>;
      assert.equal(t.check(input).ok, true, t.name);
      const extra = t.check({ ...input, sneaky: 1 });
      assert.equal(extra.ok, false, t.name);
      assert.equal(t.inputJsonSchema.additionalProperties, false, t.name);
    }
    assert.equal(byName('read_file').check({ path: 1 }).ok, false);
    assert.equal(byName('read_file').check({ path: 'a', offset: 0 }).ok, false);
    assert.equal(byName('run_command').check({ command: 'ls', timeoutMs: -1 }).ok, false);
    assert.equal(byName('write_file').check({ path: 'a' }).ok, false);
  });

  it('a defaulted path is optional for the model and filled in for the policy', () => {
    const list = byName('list_files');
    assert.deepEqual(list.inputJsonSchema.required ?? [], []);
    assert.deepEqual(list.check({}), { ok: true, value: { path: '.' } });
    const search = byName('search_files');
    assert.deepEqual(search.inputJsonSchema.required, ['pattern']);
    assert.deepEqual(search.check({ pattern: 'x' }), { ok: true, value: { pattern: 'x', path: '.' } });
    assert.deepEqual(byName('run_command').inputJsonSchema.required, ['command']);
  });
});

describe('builtin.read_file', () => {
  it('reads a whole file exactly', async () => {
    write('notes.txt', 'one\ntwo\nthree\n');
    assert.deepEqual(await call<ReadFileResult>('read_file', { path: 'notes.txt' }), {
      path: 'notes.txt',
      content: 'one\ntwo\nthree\n',
      totalLines: 3,
      truncated: false,
    });
  });

  it('reads a range of lines (offset is 1-based) and says when lines follow', async () => {
    write('src/a.ts', 'l1\nl2\nl3\nl4');
    assert.deepEqual(await call<ReadFileResult>('read_file', { path: 'src/a.ts', offset: 2, limit: 2 }), {
      path: 'src/a.ts',
      content: 'l2\nl3\n',
      totalLines: 4,
      truncated: true,
    });
    assert.deepEqual(await call<ReadFileResult>('read_file', { path: './src/../src/a.ts', offset: 3 }), {
      path: 'src/a.ts',
      content: 'l3\nl4',
      totalLines: 4,
      truncated: false,
    });
    await assert.rejects(call('read_file', { path: 'src/a.ts', offset: 9 }), /offset 9 is past the end/);
  });

  it('reads an empty file', async () => {
    write('empty', '');
    assert.deepEqual(await call<ReadFileResult>('read_file', { path: 'empty' }), { path: 'empty', content: '', totalLines: 0, truncated: false });
  });

  it('reads through a symbolic link that stays inside, reporting the real path', async () => {
    write('real/file.txt', 'x\n');
    fs.symlinkSync('real', path.join(ws, 'alias'));
    assert.deepEqual(await call<ReadFileResult>('read_file', { path: 'alias/file.txt' }), {
      path: 'real/file.txt',
      content: 'x\n',
      totalLines: 1,
      truncated: false,
    });
  });

  it('refuses binary files, files over 1 MiB, directories and missing files', async () => {
    write('bin.dat', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]));
    await assert.rejects(call('read_file', { path: 'bin.dat' }), /"bin\.dat" looks binary/);
    write('big.txt', 'a'.repeat(MAX_FILE_BYTES + 1));
    await assert.rejects(call('read_file', { path: 'big.txt' }), /"big\.txt" is 1048577 bytes, larger than the 1048576-byte \(1 MiB\) limit/);
    fs.mkdirSync(path.join(ws, 'dir'));
    await assert.rejects(call('read_file', { path: 'dir' }), /"dir" is a directory/);
    await assert.rejects(call('read_file', { path: 'nope.txt' }), /"nope\.txt" does not exist/);
  });
});

describe('builtin.write_file', () => {
  it('creates a file with exactly the content', async () => {
    const content = 'héllo\nwörld';
    assert.deepEqual(await call<WriteFileResult>('write_file', { path: 'new.txt', content }), {
      path: 'new.txt',
      bytes: Buffer.byteLength(content),
      created: true,
    });
    assert.equal(fs.readFileSync(path.join(ws, 'new.txt'), 'utf8'), content);
  });

  it('replaces an existing file', async () => {
    write('a.txt', 'a much longer old content');
    assert.deepEqual(await call<WriteFileResult>('write_file', { path: 'a.txt', content: 'new' }), { path: 'a.txt', bytes: 3, created: false });
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'new');
  });

  it('creates parent directories only with createDirectories', async () => {
    await assert.rejects(call('write_file', { path: 'x/y/z.txt', content: 'z' }), /parent directory of "x\/y\/z\.txt" does not exist; pass createDirectories/);
    assert.equal(fs.existsSync(path.join(ws, 'x')), false);
    assert.deepEqual(await call<WriteFileResult>('write_file', { path: 'x/y/z.txt', content: 'z', createDirectories: true }), {
      path: 'x/y/z.txt',
      bytes: 1,
      created: true,
    });
    assert.equal(fs.readFileSync(path.join(ws, 'x/y/z.txt'), 'utf8'), 'z');
  });

  it('refuses to write over a directory or the workspace folder', async () => {
    fs.mkdirSync(path.join(ws, 'd'));
    await assert.rejects(call('write_file', { path: 'd', content: 'x' }), /"d" exists and is a directory/);
    await assert.rejects(call('write_file', { path: '.', content: 'x' }), /is the workspace folder itself/);
  });

  it('writes through a dangling symbolic link that points inside, where the file really lands', async () => {
    fs.mkdirSync(path.join(ws, 'target'));
    fs.symlinkSync('target/made.txt', path.join(ws, 'link.txt'));
    assert.deepEqual(await call<WriteFileResult>('write_file', { path: 'link.txt', content: 'ok' }), { path: 'target/made.txt', bytes: 2, created: true });
    assert.equal(fs.readFileSync(path.join(ws, 'target/made.txt'), 'utf8'), 'ok');
  });
});

describe('builtin.list_files', () => {
  beforeEach(() => {
    write('b.txt', 'b');
    write('a/one.txt', '1');
    write('a/deep/two.txt', '2');
    write('.git/HEAD', 'ref');
    write('node_modules/pkg/index.js', '');
    fs.symlinkSync('b.txt', path.join(ws, 'c-link'));
  });

  it('lists one directory, sorted, with types', async () => {
    assert.deepEqual(await call<ListFilesResult>('list_files', {}), {
      path: '.',
      entries: [
        { path: '.git', type: 'directory' },
        { path: 'a', type: 'directory' },
        { path: 'b.txt', type: 'file' },
        { path: 'c-link', type: 'symlink' },
        { path: 'node_modules', type: 'directory' },
      ],
      truncated: false,
      skipped: [],
    });
    assert.deepEqual((await call<ListFilesResult>('list_files', { path: 'a' })).entries, [
      { path: 'a/deep', type: 'directory' },
      { path: 'a/one.txt', type: 'file' },
    ]);
  });

  it('lists recursively, skipping the contents of .git and node_modules and saying so', async () => {
    const result = await call<ListFilesResult>('list_files', { recursive: true });
    assert.deepEqual(result.entries, [
      { path: '.git', type: 'directory' },
      { path: 'a', type: 'directory' },
      { path: 'a/deep', type: 'directory' },
      { path: 'a/deep/two.txt', type: 'file' },
      { path: 'a/one.txt', type: 'file' },
      { path: 'b.txt', type: 'file' },
      { path: 'c-link', type: 'symlink' },
      { path: 'node_modules', type: 'directory' },
    ]);
    assert.deepEqual(result.skipped, ['.git', 'node_modules']);
    assert.equal(result.truncated, false);
    assert.match(result.note ?? '', /\.git and node_modules/);
  });

  it('stops at maxEntries and says so', async () => {
    const result = await call<ListFilesResult>('list_files', { recursive: true, maxEntries: 3 });
    assert.deepEqual(result.entries.map((e) => e.path), ['.git', 'a', 'a/deep']);
    assert.equal(result.truncated, true);
  });

  it('never descends a symbolic link, here one pointing outside', async () => {
    fs.writeFileSync(path.join(outside, 'other.txt'), 'o');
    fs.symlinkSync(outside, path.join(ws, 'a', 'escape'));
    const result = await call<ListFilesResult>('list_files', { path: 'a', recursive: true });
    assert.deepEqual(result.entries, [
      { path: 'a/deep', type: 'directory' },
      { path: 'a/deep/two.txt', type: 'file' },
      { path: 'a/escape', type: 'symlink' },
      { path: 'a/one.txt', type: 'file' },
    ]);
  });

  it('refuses a file or a missing directory', async () => {
    await assert.rejects(call('list_files', { path: 'b.txt' }), /"b\.txt" is not a directory/);
    await assert.rejects(call('list_files', { path: 'missing' }), /"missing" does not exist/);
  });
});

describe('builtin.search_files', () => {
  beforeEach(() => {
    write('src/a.ts', 'const x = 1;\n// TODO: one\nexport {};\n');
    write('src/b.js', 'TODO two\r\nnothing\r\n');
    write('docs/readme.md', 'no match here\n  TODO three  \n');
    write('node_modules/dep/index.js', 'TODO hidden\n');
    write('bin.dat', Buffer.from('TODO\0binary'));
  });

  it('finds matching lines with 1-based line numbers, in path order', async () => {
    assert.deepEqual(await call<SearchFilesResult>('search_files', { pattern: 'TODO' }), {
      matches: [
        { path: 'docs/readme.md', line: 2, text: '  TODO three  ' },
        { path: 'src/a.ts', line: 2, text: '// TODO: one' },
        { path: 'src/b.js', line: 1, text: 'TODO two' },
      ],
      truncated: false,
      filesSearched: 3,
      filesSkipped: 1,
      skipped: ['node_modules'],
      note: 'The contents of .git and node_modules directories were skipped (see "skipped"); pass one of them as "path" to look inside.',
    });
  });

  it('filters by a glob over workspace-relative paths, and by path', async () => {
    const byGlob = await call<SearchFilesResult>('search_files', { pattern: 'TODO', glob: 'src/**/*.ts' });
    assert.deepEqual(byGlob.matches, [{ path: 'src/a.ts', line: 2, text: '// TODO: one' }]);
    const byPath = await call<SearchFilesResult>('search_files', { pattern: '^export', path: 'src' });
    assert.deepEqual(byPath.matches, [{ path: 'src/a.ts', line: 3, text: 'export {};' }]);
    const oneFile = await call<SearchFilesResult>('search_files', { pattern: 'T.DO', path: 'src/b.js' });
    assert.deepEqual(oneFile.matches, [{ path: 'src/b.js', line: 1, text: 'TODO two' }]);
    const inside = await call<SearchFilesResult>('search_files', { pattern: 'TODO', path: 'node_modules' });
    assert.deepEqual(inside.matches, [{ path: 'node_modules/dep/index.js', line: 1, text: 'TODO hidden' }]);
  });

  it('stops at maxResults and says so', async () => {
    const result = await call<SearchFilesResult>('search_files', { pattern: 'TODO', maxResults: 2 });
    assert.equal(result.matches.length, 2);
    assert.equal(result.truncated, true);
  });

  it('refuses an invalid regular expression', async () => {
    await assert.rejects(call('search_files', { pattern: '(' }), /invalid regular expression "\("/);
  });
});

describe('builtin.delete_file', () => {
  it('deletes a file and an empty directory', async () => {
    write('f.txt', 'x');
    fs.mkdirSync(path.join(ws, 'empty'));
    assert.deepEqual(await call<DeleteFileResult>('delete_file', { path: 'f.txt' }), { path: 'f.txt', deleted: true, type: 'file' });
    assert.deepEqual(await call<DeleteFileResult>('delete_file', { path: 'empty' }), { path: 'empty', deleted: true, type: 'directory' });
    assert.deepEqual(fs.readdirSync(ws), []);
  });

  it('deletes a non-empty directory only with recursive', async () => {
    write('d/e/f.txt', 'x');
    await assert.rejects(call('delete_file', { path: 'd' }), /"d" is a non-empty directory; pass recursive: true/);
    assert.equal(fs.existsSync(path.join(ws, 'd/e/f.txt')), true);
    assert.deepEqual(await call<DeleteFileResult>('delete_file', { path: 'd', recursive: true }), { path: 'd', deleted: true, type: 'directory' });
    assert.equal(fs.existsSync(path.join(ws, 'd')), false);
  });

  it('a recursive delete removes links inside, not what they point to', async () => {
    write('d/x', 'x');
    fs.symlinkSync(outside, path.join(ws, 'd', 'out'));
    await call('delete_file', { path: 'd', recursive: true });
    assert.equal(fs.readFileSync(secret, 'utf8'), 'top secret\n');
  });

  it('reports a missing path without failing', async () => {
    assert.deepEqual(await call<DeleteFileResult>('delete_file', { path: 'ghost' }), { path: 'ghost', deleted: false });
  });

  it('refuses to delete the workspace folder itself', async () => {
    write('keep.txt', 'k');
    for (const p of ['.', './', 'sub/..', ws]) {
      await assert.rejects(call('delete_file', { path: p, recursive: true }), /is the workspace folder itself; refused/);
    }
    assert.equal(fs.readFileSync(path.join(ws, 'keep.txt'), 'utf8'), 'k');
  });
});

describe('builtin.rename_file', () => {
  it('renames a file and moves a directory', async () => {
    write('a.txt', 'A');
    write('dir/in.txt', 'I');
    fs.mkdirSync(path.join(ws, 'dest'));
    assert.deepEqual(await call<RenameFileResult>('rename_file', { from: 'a.txt', to: 'b.txt' }), { from: 'a.txt', to: 'b.txt', overwritten: false });
    assert.deepEqual(await call<RenameFileResult>('rename_file', { from: 'dir', to: 'dest/dir' }), { from: 'dir', to: 'dest/dir', overwritten: false });
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'A');
    assert.equal(fs.readFileSync(path.join(ws, 'dest/dir/in.txt'), 'utf8'), 'I');
    assert.equal(fs.existsSync(path.join(ws, 'a.txt')), false);
  });

  it('replaces an existing target only with overwrite', async () => {
    write('a.txt', 'A');
    write('b.txt', 'B');
    await assert.rejects(call('rename_file', { from: 'a.txt', to: 'b.txt' }), /"b\.txt" already exists; pass overwrite: true/);
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'B');
    assert.deepEqual(await call<RenameFileResult>('rename_file', { from: 'a.txt', to: 'b.txt', overwrite: true }), {
      from: 'a.txt',
      to: 'b.txt',
      overwritten: true,
    });
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'A');
  });

  it('refuses a missing source, a missing target folder and a move into itself', async () => {
    write('d/x', 'x');
    await assert.rejects(call('rename_file', { from: 'ghost', to: 'b' }), /"ghost" does not exist/);
    await assert.rejects(call('rename_file', { from: 'd/x', to: 'no/such/x' }), /parent directory of "no\/such\/x" does not exist/);
    await assert.rejects(call('rename_file', { from: 'd', to: 'd/sub' }), /into itself/);
    await assert.rejects(call('rename_file', { from: '.', to: 'elsewhere' }), /workspace folder itself/);
  });
});

describe('builtin tools: confinement to the workspace folder', () => {
  // Each escape: how to make it (if it needs setup) and the path to pass.
  type Escape = { name: string; setup?: () => void; path: () => string; readOnlyOnly?: boolean };
  const escapes: Escape[] = [
    { name: '../x', setup: () => fs.writeFileSync(path.join(root, 'x'), 'x outside'), path: () => '../x' },
    { name: '../outside/secret.txt', path: () => '../outside/secret.txt' },
    // /etc/passwd is only ever handed to read-only tools: a broken check must not be able to harm the host.
    { name: '/etc/passwd', path: () => '/etc/passwd', readOnlyOnly: true },
    { name: 'an absolute path outside', path: () => secret },
    { name: 'a symlink to a directory outside', setup: () => fs.symlinkSync(outside, path.join(ws, 'out')), path: () => 'out/secret.txt' },
    { name: 'a symlink to a directory outside (the link itself)', setup: () => fs.symlinkSync(outside, path.join(ws, 'out')), path: () => 'out' },
    { name: 'a symlink to a file outside', setup: () => fs.symlinkSync(secret, path.join(ws, 'leak.txt')), path: () => 'leak.txt' },
    {
      name: 'a dangling symlink pointing outside',
      setup: () => fs.symlinkSync(path.join(outside, 'new.txt'), path.join(ws, 'dangle')),
      path: () => 'dangle',
    },
    {
      name: 'a file URI outside',
      path: () => `file://${secret}`,
    },
  ];

  // For each tool, the inputs that hand it the escaping path.
  const uses: Array<{ tool: string; readOnly: boolean; inputs: (p: string) => Array<Record<string, unknown>> }> = [
    { tool: 'read_file', readOnly: true, inputs: (p) => [{ path: p }] },
    { tool: 'list_files', readOnly: true, inputs: (p) => [{ path: p }, { path: p, recursive: true }] },
    { tool: 'search_files', readOnly: true, inputs: (p) => [{ pattern: '.', path: p }] },
    { tool: 'write_file', readOnly: false, inputs: (p) => [{ path: p, content: 'pwned' }, { path: p, content: 'pwned', createDirectories: true }] },
    { tool: 'delete_file', readOnly: false, inputs: (p) => [{ path: p }, { path: p, recursive: true }] },
    {
      tool: 'rename_file',
      readOnly: false,
      inputs: (p) => [
        { from: p, to: 'moved' },
        { from: 'inside.txt', to: p },
        { from: 'inside.txt', to: p, overwrite: true },
      ],
    },
    { tool: 'run_command', readOnly: false, inputs: (p) => [{ command: 'echo pwned > pwned.txt', cwd: p }] },
  ];

  for (const use of uses) {
    for (const escape of escapes) {
      if (escape.readOnlyOnly && !use.readOnly) continue;
      it(`${use.tool} refuses ${escape.name} and touches nothing`, async () => {
        write('inside.txt', 'inside');
        escape.setup?.();
        const p = escape.path();
        const before = snapshot(root);
        for (const input of use.inputs(p)) {
          await assertRefused(call(use.tool, input), p);
        }
        assert.deepEqual(snapshot(root), before);
        assert.equal(fs.existsSync(path.join(outside, 'new.txt')), false);
        assert.equal(fs.readFileSync(secret, 'utf8'), 'top secret\n');
      });
    }
  }

  it('write_file through a dangling symlink pointing outside does not create the outside file', async () => {
    const target = path.join(outside, 'sub', 'created.txt');
    fs.symlinkSync(target, path.join(ws, 'trap.txt'));
    await assertRefused(call('write_file', { path: 'trap.txt', content: 'pwned', createDirectories: true }), 'trap.txt');
    assert.equal(fs.existsSync(target), false);
    assert.equal(fs.existsSync(path.dirname(target)), false);
    assert.equal(fs.readlinkSync(path.join(ws, 'trap.txt')), target);
  });

  it('rename_file whose "to" is outside leaves the source in place', async () => {
    write('keep.txt', 'keep');
    await assertRefused(call('rename_file', { from: 'keep.txt', to: '../stolen.txt' }), '../stolen.txt');
    assert.equal(fs.readFileSync(path.join(ws, 'keep.txt'), 'utf8'), 'keep');
    assert.equal(fs.existsSync(path.join(root, 'stolen.txt')), false);
  });

  it('a workspace folder reached through a symbolic link still confines', async () => {
    const alias = path.join(root, 'alias');
    fs.symlinkSync(ws, alias);
    write('f.txt', 'f');
    const ctx = { ...context(), workspaceFolder: alias };
    assert.equal((await call<ReadFileResult>('read_file', { path: path.join(alias, 'f.txt') }, ctx)).content, 'f');
    await assertRefused(call('read_file', { path: '../outside/secret.txt' }, ctx), '../outside/secret.txt');
  });
});

describe('builtin.run_command', () => {
  const pidFile = (): string => path.join(ws, 'child.pid');

  it('captures stdout, stderr and a non-zero exit code without throwing', async () => {
    const result = await call<RunCommandResult>('run_command', { command: 'echo out; echo err >&2; exit 3' });
    assert.equal(result.exitCode, 3);
    assert.equal(result.signal, null);
    assert.equal(result.stdout, 'out\n');
    assert.equal(result.stderr, 'err\n');
    assert.equal(result.stdoutTruncated, false);
    assert.equal(result.stderrTruncated, false);
    assert.equal(result.timedOut, false);
    assert.equal(result.cancelled, false);
    assert.equal(typeof result.durationMs, 'number');
    assert.ok(result.durationMs >= 0);
  });

  it('runs in the workspace folder, or in cwd inside it, with empty stdin', async () => {
    fs.mkdirSync(path.join(ws, 'sub'));
    assert.equal((await call<RunCommandResult>('run_command', { command: 'pwd' })).stdout, `${ws}\n`);
    const inSub = await call<RunCommandResult>('run_command', { command: 'pwd; echo made > made.txt; cat', cwd: 'sub' });
    assert.equal(inSub.stdout, `${path.join(ws, 'sub')}\n`);
    assert.equal(inSub.exitCode, 0);
    assert.equal(fs.readFileSync(path.join(ws, 'sub', 'made.txt'), 'utf8'), 'made\n');
  });

  it('caps huge output, keeping its start and end and saying so', async () => {
    const tool = runCommandTool({ maxOutputBytes: 1000 });
    const result = await call<RunCommandResult>(tool, {
      command: "printf START; head -c 200000 /dev/zero | tr '\\0' a; printf END; echo small >&2",
    });
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdoutTruncated, true);
    assert.ok(result.stdout.startsWith(`START${'a'.repeat(495)}\n`), result.stdout.slice(0, 60));
    assert.ok(result.stdout.endsWith(`${'a'.repeat(497)}END`));
    assert.match(result.stdout, /\[… stdout truncated: 199008 of 200008 bytes omitted …\]/);
    assert.ok(result.stdout.length < 1100);
    assert.equal(result.stderr, 'small\n');
    assert.equal(result.stderrTruncated, false);
  });

  it('kills the whole process group when the time limit expires', async () => {
    const started = Date.now();
    const result = await call<RunCommandResult>('run_command', {
      command: `sleep 30 & echo $! > child.pid; wait`,
      timeoutMs: 300,
    });
    assert.ok(Date.now() - started < 10_000, 'returns within 10 s');
    assert.equal(result.timedOut, true);
    assert.equal(result.cancelled, false);
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, 'SIGTERM');
    const child = await readPid(pidFile());
    assert.ok(await waitFor(() => processGone(child), 2000), `child sleep ${child} is gone`);
  });

  it('follows up with SIGKILL when the group ignores SIGTERM', async () => {
    const started = Date.now();
    const result = await call<RunCommandResult>('run_command', {
      command: `trap '' TERM; sleep 30 & echo $! > child.pid; wait; wait`,
      timeoutMs: 300,
    });
    assert.ok(Date.now() - started < 10_000, 'returns within 10 s');
    assert.equal(result.timedOut, true);
    assert.equal(result.signal, 'SIGKILL');
    const child = await readPid(pidFile());
    assert.ok(await waitFor(() => processGone(child), 2000), `child sleep ${child} is gone`);
  });

  it('is cancelled by the context signal, killing the group', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const running = call<RunCommandResult>('run_command', { command: `sleep 30 & echo $! > child.pid; wait` }, context(controller.signal));
    const child = await readPid(pidFile());
    controller.abort();
    const result = await running;
    assert.ok(Date.now() - started < 10_000, 'returns within 10 s');
    assert.equal(result.cancelled, true);
    assert.equal(result.timedOut, false);
    assert.ok(await waitFor(() => processGone(child), 2000), `child sleep ${child} is gone`);
  });

  it('does not start when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await call<RunCommandResult>('run_command', { command: 'echo ran > ran.txt' }, context(controller.signal));
    assert.equal(result.cancelled, true);
    assert.equal(result.exitCode, null);
    assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), false);
  });

  it('returns when the shell exits even if a background child keeps its output open', async () => {
    const started = Date.now();
    const result = await call<RunCommandResult>('run_command', { command: 'sleep 30 & echo $! > child.pid; echo done' });
    await readPid(pidFile());
    assert.ok(Date.now() - started < 10_000, 'returns within 10 s');
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout, 'done\n');
  });

  it('throws for a cwd that is outside, missing or not a directory', async () => {
    write('file.txt', 'f');
    await assertRefused(call('run_command', { command: 'true', cwd: '..' }), '..');
    await assertRefused(call('run_command', { command: 'true', cwd: '/' }), '/');
    await assert.rejects(call('run_command', { command: 'true', cwd: 'missing' }), /"missing" does not exist/);
    await assert.rejects(call('run_command', { command: 'true', cwd: 'file.txt' }), /cwd "file\.txt" is not a directory/);
  });

  it('uses the configured default time limit', async () => {
    const result = await call<RunCommandResult>(runCommandTool({ defaultTimeoutMs: 200 }), { command: 'sleep 30' });
    assert.equal(result.timedOut, true);
  });
});
