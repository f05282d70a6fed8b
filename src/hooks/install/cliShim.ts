// The `agentpolicy` command the extension puts on PATH (docs/cli.md), as VS Code's own "Install
// 'code' command in PATH" does: a small sh script in ~/.local/bin that runs the CLI the VSIX ships
// (its dist/cli.js) with an absolute node, the editor's own runtime when it is new enough. A marker
// line says it is ours: only such a file is replaced or removed. Plain Node, tested without VS Code.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { quoteForPosixShell } from './hookEntries.js';
import { cliLauncherProblem, onPath } from './hookLauncher.js';

export const SHIM_NAME = 'agentpolicy';

/** The line that makes a file ours: Install replaces and Uninstall removes only a file holding it. */
export const SHIM_MARKER = "# agent-policy-shim: written by Agent Policy's Install 'agentpolicy' Command in PATH; its Uninstall removes it";

/** The Node the package's engines ask for (package.json); an older one runs the bundles (they target Node 20) but not the sandbox engine. */
const MIN_NODE: readonly [number, number] = [22, 12];

/** What runs the CLI: an absolute node, or an Electron run as node. */
export interface ShimRuntime {
  node: string;
  electron: boolean;
}

/**
 * The folder for the shim: $XDG_BIN_HOME when it is absolute, else ~/.local/bin, where pipx, uv and
 * most Linux distributions' shell profiles look (macOS's do not: the command says when it is not on PATH).
 */
export function shimDir(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  return env.XDG_BIN_HOME !== undefined && path.isAbsolute(env.XDG_BIN_HOME) ? env.XDG_BIN_HOME : path.join(home, '.local', 'bin');
}

/** The shim's text: the node and cli.js by absolute paths, and what to do when an update moved them. */
export function shimScript(runtime: ShimRuntime, cli: string): string {
  const q = quoteForPosixShell;
  const run = runtime.electron ? 'ELECTRON_RUN_AS_NODE=1 exec "$AP_NODE" "$AP_CLI" "$@"' : 'exec "$AP_NODE" "$AP_CLI" "$@"';
  return `#!/bin/sh
${SHIM_MARKER}
# Runs the agentpolicy CLI of the Agent Policy extension (docs/cli.md). Installing again rewrites it.
AP_NODE=${q(runtime.node)}
AP_CLI=${q(cli)}
if [ ! -x "$AP_NODE" ] || [ ! -f "$AP_CLI" ]; then
  echo "agentpolicy: $AP_NODE or $AP_CLI is gone (the extension or the editor was updated or removed): run \\"Agent Policy: Install 'agentpolicy' Command in PATH\\" in VS Code again" >&2
  exit 127
fi
${run}
`;
}

/**
 * The runtime the shim names: the editor's own (`execPath`, an Electron run as node when
 * `electron`) when its Node is new enough, else a new enough `node` found on PATH, else the
 * editor's own all the same, with a note.
 */
export function shimRuntime(own: { execPath: string; electron: boolean; nodeVersion: string }, env: NodeJS.ProcessEnv = process.env): ShimRuntime & { note?: string } {
  const ownRuntime = { node: own.execPath, electron: own.electron };
  if (newEnough(own.nodeVersion)) return ownRuntime;
  const node = onPath('node', os.homedir(), env);
  const version = node === undefined ? undefined : spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 10_000 }).stdout?.trim();
  if (node !== undefined && version !== undefined && newEnough(version)) return { node, electron: false };
  return { ...ownRuntime, note: `the editor's Node is ${own.nodeVersion} and no Node >= ${MIN_NODE.join('.')} is on PATH: the CLI runs, but its sandbox needs Node >= ${MIN_NODE.join('.')}` };
}

function newEnough(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
}

export type ShimInstall =
  | { file: string; onPath: boolean; shadowedBy?: string }
  | { problem: string };

/**
 * Writes the shim into `dir` (made when missing), whole (a temporary file renamed over it). Refuses
 * when a file there is not ours, when the CLI does not answer `--version` with this runtime, and on Windows.
 */
export function installShim(options: { dir: string; runtime: ShimRuntime; cli: string; env?: NodeJS.ProcessEnv; platform?: NodeJS.Platform }): ShimInstall {
  const env = options.env ?? process.env;
  if ((options.platform ?? process.platform) === 'win32') return { problem: 'on Windows there is no shim yet: run node with the extension\'s dist\\cli.js' };
  const file = path.join(options.dir, SHIM_NAME);
  if (ours(file) === false) return { problem: `${file} is there already and is not one Agent Policy wrote: remove it, or leave it as it is` };
  const problem = cliLauncherProblem(options.runtime.node, options.cli, env, options.runtime.electron);
  if (problem !== undefined) return { problem };
  fs.mkdirSync(options.dir, { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(temp, shimScript(options.runtime, options.cli), { mode: 0o755, flag: 'wx' });
    fs.chmodSync(temp, 0o755);
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  const found = onPath(SHIM_NAME, options.dir, env);
  const listed = (env.PATH ?? '').split(path.delimiter).some((d) => d !== '' && path.resolve(d) === path.resolve(options.dir));
  return { file, onPath: listed, ...(listed && found !== undefined && found !== file ? { shadowedBy: found } : {}) };
}

/** Takes out the shim in `dir` if it is ours. */
export function uninstallShim(dir: string): { removed: string } | { absent: string } | { problem: string } {
  const file = path.join(dir, SHIM_NAME);
  const mine = ours(file);
  if (mine === undefined) return { absent: file };
  if (!mine) return { problem: `${file} is not one Agent Policy wrote: it stays` };
  fs.rmSync(file);
  return { removed: file };
}

/**
 * After an update of the extension (its folder has the version in its name) the shim names a CLI
 * that is gone: written again with this one. A shim whose CLI is still there is left as it is (it
 * may be another editor's, say VS Code Insiders').
 */
export function refreshShim(options: { dir: string; runtime: () => ShimRuntime; cli: string; env?: NodeJS.ProcessEnv }): 'refreshed' | 'left' {
  const file = path.join(options.dir, SHIM_NAME);
  if (ours(file) !== true) return 'left';
  const named = /^AP_CLI=(.*)$/m.exec(fs.readFileSync(file, 'utf8'))?.[1];
  if (named === undefined || named === quoteForPosixShell(options.cli) || fs.existsSync(unquote(named))) return 'left';
  // The runtime is looked for only now (it may run a node on PATH): most windows open with nothing to do.
  return 'file' in installShim({ ...options, runtime: options.runtime() }) ? 'refreshed' : 'left';
}

/** Whether the file holds our marker; undefined when there is no file. */
function ours(file: string): boolean | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    return false;
  }
  return text.split('\n').slice(0, 3).includes(SHIM_MARKER);
}

/** A word quoteForPosixShell wrote, as it was. */
function unquote(word: string): string {
  return word.startsWith("'") && word.endsWith("'") ? word.slice(1, -1).replaceAll(`'\\''`, "'") : word;
}
