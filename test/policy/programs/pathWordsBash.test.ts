// The paths a command names, against bash itself: generated lines of `cd`s, globs, braces, `~`,
// `$HOME` and quotes run in real bash with a stub `cat` that writes down the real path of every
// argument it is given; each existing file it was given must be among the files commandFiles()
// says the line reads (commandPaths.ts reads words as bash gives them).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { commandFiles } from '../../../src/policy/paths/commandPaths.js';
import { initShellParser } from '../../../src/policy/shell/shellParser.js';
import { splitCommand } from '../../../src/policy/shell/shellSplit.js';

describe('paths named in commands, as bash gives them', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let home: string;
  let bin: string;

  before(async () => {
    await initShellParser();
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'path-words-bash-')));
    ws = path.join(root, 'ws');
    home = path.join(root, 'home');
    bin = path.join(root, 'bin');
    for (const dir of [path.join(ws, 'src', 'deep'), path.join(home, '.ssh'), bin]) fs.mkdirSync(dir, { recursive: true });
    for (const file of ['.env', '.envrc', 'src/a.ts', 'src/b.ts', 'src/deep/c.ts', 'notes']) fs.writeFileSync(path.join(ws, file), 'x\n');
    for (const file of ['.ssh/id_rsa', '.ssh/config', '.bashrc']) fs.writeFileSync(path.join(home, file), 'x\n');
    fs.symlinkSync(path.join(home, '.ssh'), path.join(ws, 'keys'));
    fs.writeFileSync(path.join(bin, 'cat'), '#!/bin/sh\nfor a; do realpath -m -- "$a"; done >> "$LOG"\n', { mode: 0o755 });
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  const folders = ['src', 'src/deep', '~', '~/.ssh', '..', '/tmp', 'keys', '"$HOME"', 'nowhere'];
  const words = ['.env', '.en?', '.en[v]', '.{env,envrc}', '*.ts', '.*rc', 'a.ts', '../notes', '~/.bashrc', '"$HOME"/.ssh/id_rsa', '${HOME}/.ssh/config', "'.env'", '"notes"',
    'id_rsa', 'config', 'deep/c.ts', 'keys/id_rsa', 'src/*', '~/.ssh/*', '.ssh/id_rsa', 'c.ts'];
  const separators = [' && ', '; ', ' || ', '\n'];
  const lineArb = fc.array(fc.oneof(
    fc.constantFrom(...folders).map((f) => `cd ${f}`),
    fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 3 }).map((ws) => `cat ${ws.join(' ')}`),
  ), { minLength: 1, maxLength: 4 }).chain((parts) => fc.array(fc.constantFrom(...separators), { minLength: parts.length, maxLength: parts.length })
    .map((seps) => parts.map((p, i) => (i === 0 ? p : `${seps[i]}${p}`)).join('')));

  it('every file bash hands the program is among the files the judge reads', () => {
    const real = (p: string): string => {
      try {
        return fs.realpathSync(p);
      } catch {
        return p;
      }
    };
    fc.assert(fc.property(lineArb, (line) => {
      const log = path.join(root, 'log');
      fs.rmSync(log, { force: true });
      spawnSync('bash', ['-c', line], { cwd: ws, env: { PATH: `${bin}:/usr/bin:/bin`, HOME: home, LOG: log }, encoding: 'utf8', timeout: 10_000 });
      const given = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l !== '' && fs.existsSync(l)) : [];
      const split = splitCommand(line);
      const files = commandFiles(split.commands, ws, home);
      const judged = new Set(files.reads.map(real));
      const missed = given.map(real).filter((g) => !judged.has(g));
      assert.deepEqual(missed, [], `bash gave cat files the judge did not read, for: ${line}`);
    }), { numRuns: 150 });
  });
});
