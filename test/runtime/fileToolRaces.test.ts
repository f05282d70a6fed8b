// Race-free file tools: what a builtin file tool touches is what the policy judged, even when a
// folder on the way (or the final component) is swapped for a symbolic link between the
// confinement check and the system call. The race is simulated deterministically through
// `confinementTesting.beforeOpen`, which runs after the path is judged and before it is opened.
// Every case runs twice: through /proc/self/fd (Linux) and through the fallback used elsewhere.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { builtinTools } from '../../src/runtime/tools/builtins.js';
import type { ReadFileResult } from '../../src/runtime/tools/fileReadTools.js';
import type { DeleteFileResult, RenameFileResult, WriteFileResult } from '../../src/runtime/tools/fileWriteTools.js';
import type { RuntimeTool, ToolRunContext } from '../../src/runtime/tools/tools.js';
import { ChangedWhileOpeningError, confinementTesting, OutsideWorkspaceError, verifyOpened } from '../../src/runtime/tools/workspacePaths.js';
import { snapshot } from './fsSnapshot.js';

//   <root>/ws        the workspace folder
//   <root>/outside   a folder next to it, holding secret.txt, that no tool may touch
let root: string;
let ws: string;
let outside: string;
let secret: string;

function byName(name: string): RuntimeTool {
  const found = builtinTools().find((t) => t.name === name);
  assert.ok(found, `no tool ${name}`);
  return found;
}

function context(): ToolRunContext {
  return { sessionId: 's1', turnId: 't1', agent: 'main', workspaceFolder: ws, signal: new AbortController().signal };
}

async function call<T>(tool: string, input: unknown): Promise<T> {
  const t = byName(tool);
  const checked = t.check(input);
  if (!checked.ok) throw new Error(`input rejected: ${checked.error}`);
  return (await t.run(checked.value, context())) as T;
}

function write(rel: string, content: string): void {
  const p = path.join(ws, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

/** Between the judgement and the open: moves ws/<rel> away and puts a link to `to` in its place (once). */
function swapBeforeOpen(rel: string, to: string): void {
  confinementTesting.beforeOpen = () => {
    const p = path.join(ws, rel);
    if (fs.lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) return;
    fs.renameSync(p, `${p}.moved`);
    fs.symlinkSync(to, p);
  };
}

async function assertRaceRefused(promise: Promise<unknown>, tool: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof Error);
    assert.ok(error.message.startsWith(`${tool}: `), error.message);
    assert.match(error.message, /changed while being opened|changed into a symbolic link|outside the workspace folder|is a symbolic link; not written/);
    return true;
  });
}

function assertOutsideUntouched(before: Record<string, string>): void {
  assert.deepEqual(snapshot(outside), before);
  assert.equal(fs.readFileSync(secret, 'utf8'), 'top secret\n');
}

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'races-')));
  ws = path.join(root, 'ws');
  outside = path.join(root, 'outside');
  fs.mkdirSync(ws);
  fs.mkdirSync(outside);
  secret = path.join(outside, 'secret.txt');
  fs.writeFileSync(secret, 'top secret\n');
});

afterEach(() => {
  confinementTesting.beforeOpen = undefined;
  confinementTesting.withoutProcFd = undefined;
  fs.rmSync(root, { recursive: true, force: true });
});

for (const mode of ['/proc/self/fd', 'fallback (fstat dev/ino against an lstat walk)'] as const) {
  describe(`file tool races: ${mode}`, () => {
    beforeEach(() => {
      confinementTesting.withoutProcFd = mode !== '/proc/self/fd';
    });

    it('write_file whose parent folder is swapped for a link to outside right before the write is refused; nothing is written outside', async () => {
      fs.mkdirSync(path.join(ws, 'sub'));
      const before = snapshot(outside);
      swapBeforeOpen('sub', outside);
      await assertRaceRefused(call('write_file', { path: 'sub/new.txt', content: 'pwned' }), 'write_file');
      await assertRaceRefused(call('write_file', { path: 'sub/secret.txt', content: 'pwned' }), 'write_file');
      await assertRaceRefused(call('write_file', { path: 'sub/deeper/new.txt', content: 'pwned', createDirectories: true }), 'write_file');
      assertOutsideUntouched(before);
    });

    it('write_file whose grandparent folder is swapped is refused too', async () => {
      fs.mkdirSync(path.join(ws, 'a/b'), { recursive: true });
      fs.mkdirSync(path.join(outside, 'b'));
      const before = snapshot(outside);
      swapBeforeOpen('a', outside);
      await assertRaceRefused(call('write_file', { path: 'a/b/new.txt', content: 'pwned' }), 'write_file');
      assertOutsideUntouched(before);
    });

    it('a parent swapped for a link to another folder inside is refused as well (it was not what was judged)', async () => {
      fs.mkdirSync(path.join(ws, 'sub'));
      fs.mkdirSync(path.join(ws, 'other'));
      swapBeforeOpen('sub', path.join(ws, 'other'));
      await assertRaceRefused(call('write_file', { path: 'sub/new.txt', content: 'x' }), 'write_file');
      assert.deepEqual(fs.readdirSync(path.join(ws, 'other')), []);
    });

    it('write_file whose parent is already a link to outside is refused at confinement', async () => {
      fs.symlinkSync(outside, path.join(ws, 'out'));
      const before = snapshot(outside);
      await assert.rejects(call('write_file', { path: 'out/new.txt', content: 'pwned' }), OutsideWorkspaceError);
      await assert.rejects(call('write_file', { path: 'out/new.txt', content: 'pwned', createDirectories: true }), OutsideWorkspaceError);
      assertOutsideUntouched(before);
    });

    it('a final component swapped for a link to an outside file is refused for write and read', async () => {
      write('a.txt', 'inside');
      const before = snapshot(outside);
      swapBeforeOpen('a.txt', secret);
      await assertRaceRefused(call('write_file', { path: 'a.txt', content: 'pwned' }), 'write_file');
      await assertRaceRefused(call<ReadFileResult>('read_file', { path: 'a.txt' }), 'read_file');
      assertOutsideUntouched(before);
      // And one that was already there is refused at confinement.
      fs.symlinkSync(secret, path.join(ws, 'leak.txt'));
      await assert.rejects(call('write_file', { path: 'leak.txt', content: 'pwned' }), OutsideWorkspaceError);
      await assert.rejects(call('read_file', { path: 'leak.txt' }), OutsideWorkspaceError);
      assertOutsideUntouched(before);
    });

    it('read_file through a swapped parent is refused and returns nothing', async () => {
      write('sub/secret.txt', 'inside copy\n');
      swapBeforeOpen('sub', outside);
      await assertRaceRefused(call('read_file', { path: 'sub/secret.txt' }), 'read_file');
    });

    it('delete_file through a swapped parent is refused and deletes nothing outside', async () => {
      write('sub/secret.txt', 'inside copy\n');
      fs.mkdirSync(path.join(outside, 'dir'));
      fs.writeFileSync(path.join(outside, 'dir', 'f'), 'f');
      fs.mkdirSync(path.join(ws, 'sub', 'dir'));
      const before = snapshot(outside);
      swapBeforeOpen('sub', outside);
      await assertRaceRefused(call('delete_file', { path: 'sub/secret.txt' }), 'delete_file');
      await assertRaceRefused(call('delete_file', { path: 'sub/dir', recursive: true }), 'delete_file');
      assertOutsideUntouched(before);
    });

    it('rename_file through a swapped parent, at either end, is refused and moves nothing', async () => {
      write('sub/secret.txt', 'inside copy\n');
      write('inside.txt', 'inside');
      const before = snapshot(outside);
      swapBeforeOpen('sub', outside);
      await assertRaceRefused(call('rename_file', { from: 'sub/secret.txt', to: 'stolen.txt' }), 'rename_file');
      await assertRaceRefused(call('rename_file', { from: 'inside.txt', to: 'sub/planted.txt' }), 'rename_file');
      await assertRaceRefused(call('rename_file', { from: 'inside.txt', to: 'sub/secret.txt', overwrite: true }), 'rename_file');
      assertOutsideUntouched(before);
      assert.equal(fs.existsSync(path.join(ws, 'stolen.txt')), false);
      assert.equal(fs.readFileSync(path.join(ws, 'inside.txt'), 'utf8'), 'inside');
    });

    it('normal writes, reads, deletes and renames still work', async () => {
      confinementTesting.beforeOpen = () => undefined;
      assert.deepEqual(await call<WriteFileResult>('write_file', { path: 'new.txt', content: 'hello\n' }), { path: 'new.txt', bytes: 6, created: true });
      assert.deepEqual(await call<WriteFileResult>('write_file', { path: 'new.txt', content: 'hi\n' }), { path: 'new.txt', bytes: 3, created: false });
      assert.deepEqual(await call<WriteFileResult>('write_file', { path: 'x/y/z.txt', content: 'z', createDirectories: true }), {
        path: 'x/y/z.txt',
        bytes: 1,
        created: true,
      });
      assert.deepEqual(await call<ReadFileResult>('read_file', { path: 'x/y/z.txt' }), { path: 'x/y/z.txt', content: 'z', totalLines: 1, truncated: false });
      assert.equal((await call<ReadFileResult>('read_file', { path: 'new.txt' })).content, 'hi\n');
      assert.deepEqual(await call<RenameFileResult>('rename_file', { from: 'new.txt', to: 'x/moved.txt' }), { from: 'new.txt', to: 'x/moved.txt', overwritten: false });
      assert.equal(fs.readFileSync(path.join(ws, 'x/moved.txt'), 'utf8'), 'hi\n');
      assert.deepEqual(await call<DeleteFileResult>('delete_file', { path: 'x', recursive: true }), { path: 'x', deleted: true, type: 'directory' });
      assert.deepEqual(await call<DeleteFileResult>('delete_file', { path: 'gone/ghost' }), { path: 'gone/ghost', deleted: false });
      assert.deepEqual(fs.readdirSync(ws), []);
      // A link that stays inside is still followed where the policy resolved it.
      write('real/file.txt', 'r\n');
      fs.symlinkSync('real', path.join(ws, 'alias'));
      assert.deepEqual(await call<WriteFileResult>('write_file', { path: 'alias/file.txt', content: 'w\n' }), { path: 'real/file.txt', bytes: 2, created: false });
      assert.equal((await call<ReadFileResult>('read_file', { path: 'alias/file.txt' })).content, 'w\n');
    });

    it('verifyOpened refuses a descriptor that is not the judged path', async () => {
      const handle = await fsp.open(secret, 'r');
      try {
        await assert.rejects(verifyOpened(handle, ws, path.join(ws, 'secret.txt'), 'read_file', 'path', 'secret.txt'), (error: unknown) => {
          assert.ok(error instanceof OutsideWorkspaceError || error instanceof ChangedWhileOpeningError, String(error));
          return true;
        });
      } finally {
        await handle.close();
      }
    });
  });
}
