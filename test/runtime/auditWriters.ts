// Real processes writing one audit file (audit.test.ts, auditChain.test.ts): each runs a writer
// through tsx, started together when several are.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const repoRoot = path.resolve(__dirname, '../..');
const auditModule = path.join(repoRoot, 'src/runtime/audit/audit.ts');
const lockModule = path.join(repoRoot, 'src/runtime/audit/auditLock.ts');

/**
 * The writer: `file count name mode [readyFile goFile]`. Modes: `close` (write each line, then
 * close), `batches` (writeAll, 10 at a time), `mixed` (both, by turns), `kill` and `fsync` (write,
 * then SIGKILL itself), `die-locked` (SIGKILL itself holding the file's lock, before any line).
 */
const writerBody = `
const [file, countText, name, mode, readyFile, goFile] = process.argv.slice(2) as string[];
if (mode === 'die-locked') withAuditLock(file!, () => process.kill(process.pid, 'SIGKILL'));
const log = new FileAuditLog(file!, { fsync: mode === 'fsync' });
if (readyFile && goFile) {
  fs.writeFileSync(readyFile, '');
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const giveUp = Date.now() + 90000;
  while (!fs.existsSync(goFile) && Date.now() < giveUp) Atomics.wait(sleeper, 0, 0, 1);
}
const batch: Parameters<typeof log.write>[0][] = [];
for (let i = 0; i < Number(countText); i++) {
  const entry: Parameters<typeof log.write>[0] = {
    time: new Date().toISOString(),
    event: 'decision',
    session: name!,
    turn: String(i),
    agent: name!,
    tool: 'builtin.write',
    summary: name + ' line ' + i,
    decision: 'allow',
    rule: null,
    default: 'builtin',
    reason: (name + ':' + i + ' ').repeat(150),
  };
  const batched = mode === 'batches' || (mode === 'mixed' && Math.floor(i / 10) % 2 === 1);
  if (!batched) log.write(entry);
  // writeAll, as the runtime writes a response's lines: 10 at a time, about three to a write.
  else if (batch.push(entry) === 10) log.writeAll(batch.splice(0));
}
log.writeAll(batch);
if (mode === 'kill' || mode === 'fsync') process.kill(process.pid, 'SIGKILL');
log.close();
`;

let counter = 0;

/** The writer's script, in `dir`. */
function writerScript(dir: string): string {
  const file = path.join(dir, `writer-${++counter}.ts`);
  fs.writeFileSync(
    file,
    `import * as fs from 'node:fs';\nimport { FileAuditLog } from ${JSON.stringify(auditModule)};\n` +
      `import { withAuditLock } from ${JSON.stringify(lockModule)};\nvoid fs; void FileAuditLog; void withAuditLock;\n${writerBody}\n`,
  );
  return file;
}

/** One writer run to its end (`args`: file, count, name, mode). */
export function runWriter(dir: string, args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', writerScript(dir), ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 90000 });
}

/** One writer started; `done` when it ends. */
export function startWriter(dir: string, args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', writerScript(dir), ...args], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
  return { child, done };
}

/** `writers` processes (w1, w2, …) appending `count` lines each to `file`, started together; the file's text. */
export async function writersAtOnce(dir: string, file: string, mode: 'close' | 'batches' | 'mixed', writers: number, count = 500): Promise<string> {
  const go = path.join(dir, `go-${++counter}`);
  const ready = Array.from({ length: writers }, (_, n) => path.join(dir, `ready-${counter}-${n + 1}`));
  const children = ready.map((r, n) => startWriter(dir, [file, String(count), `w${n + 1}`, mode, r, go]).done);
  try {
    await waitFor(() => ready.every((f) => fs.existsSync(f)), 90000);
  } finally {
    fs.writeFileSync(go, '');
  }
  for (const r of await Promise.all(children)) assert.equal(r.code, 0, r.stderr);
  return fs.readFileSync(file, 'utf8');
}

export async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const giveUp = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > giveUp) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
