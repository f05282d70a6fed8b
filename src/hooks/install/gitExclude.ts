// Keeps a file of this machine's (Claude Code's settings.local.json, which holds the http hook's
// port and token) out of the repository: when the workspace is in a git repository and git would
// not ignore the file, its path goes into the repository's own `info/exclude`, which is never
// committed. Without git, or outside a repository, nothing is done.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export function keepOutOfGit(workspaceFolder: string, relativePath: string): void {
  const git = (...args: string[]) => spawnSync('git', ['-C', workspaceFolder, ...args], { encoding: 'utf8', timeout: 10_000 });
  const ignored = git('check-ignore', '-q', '--', relativePath);
  if (ignored.error !== undefined || ignored.status === 0) return; // no git, or ignored already
  if (ignored.status !== 1) return; // not a repository (128)
  const exclude = git('rev-parse', '--path-format=absolute', '--git-path', 'info/exclude');
  const file = exclude.status === 0 ? exclude.stdout.trim() : '';
  if (file === '' || !path.isAbsolute(file)) return;
  const top = git('rev-parse', '--show-toplevel').stdout.trim();
  const fromTop = path.relative(top, path.join(workspaceFolder, relativePath)).split(path.sep).join('/');
  if (fromTop.startsWith('..')) return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  fs.appendFileSync(file, `${before === '' || before.endsWith('\n') ? '' : '\n'}# Agent Policy: this machine's hook port and token\n/${fromTop}\n`);
}
