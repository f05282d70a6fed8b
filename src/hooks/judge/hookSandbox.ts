// Another host's allowed shell command in our sandbox (docs/hooks.md, "Commands in our sandbox"):
// where the host takes a changed tool input from its hook (Claude Code's `updatedInput`), the
// allowed `Bash` command is replaced by a line that runs it under `agentpolicy sandbox`, with the
// absolute node and this CLI's own cli.js (the host's PATH need not have either). Not done when
// the machine has no sandbox, the policy in force says `"sandbox": "off"`, the person switched it
// off (AGENTPOLICY_HOOK_SANDBOX=0), or the node or cli.js cannot be found: the answer's reason says so.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The variable that switches the rewrite off (`0`, `off`, `false`, `no`). */
export const HOOK_SANDBOX_ENV = 'AGENTPOLICY_HOOK_SANDBOX';

/** The program that runs cli.js: node, or an Electron (the extension host) run as node. */
export interface SandboxLauncher {
  node: string;
  cli: string;
  /** The node is Electron's binary: the line sets ELECTRON_RUN_AS_NODE=1. */
  electron?: boolean;
}

/** The CLI's own script: `cli.js` beside the running bundle (dist/*.js), else the script node was started with. */
export function ownCliScript(): string | undefined {
  const candidates = [path.join(__dirname, 'cli.js'), process.argv[1]];
  for (const candidate of candidates) {
    if (candidate === undefined || path.basename(candidate) === '') continue;
    try {
      const real = fs.realpathSync(candidate);
      if (path.basename(real) === 'cli.js' && fs.statSync(real).isFile()) return real;
    } catch {
      // Not there: the next.
    }
  }
  return undefined;
}

/** This process's node and cli.js, or why they cannot be named. */
export function ownSandboxLauncher(): SandboxLauncher | { problem: string } {
  const node = process.execPath;
  if (!path.isAbsolute(node) || !fs.existsSync(node)) return { problem: `node (${node}) cannot be found` };
  const found = ownCliScript();
  // Our own cli.js only (the two bundles it loads beside it: scripts/bundles.mjs), not another
  // program's that started this process (mocha's lib/cli/cli.js has a commands.js beside it too).
  const ours = (file: string): boolean => ['hook.js', 'commands.js'].every((b) => fs.existsSync(path.join(path.dirname(file), b)));
  const cli = found !== undefined && ours(found) ? found : undefined;
  if (cli === undefined) return { problem: 'the agentpolicy CLI\'s own script (dist/cli.js) was not found beside the running code' };
  return { node, cli, ...(process.versions.electron !== undefined ? { electron: true } : {}) };
}

/**
 * Whether this machine has a sandbox (sandboxProbe.ts, probed once per process). Loaded only when
 * an allowed command needs it: in the hook's bundle it is a bundle of its own, dist/sandboxProbe.js
 * (scripts/bundles.mjs), so the hook's start does not pay for the sandbox engine's code.
 */
export function machineSandbox(): { available: true } | { available: false; reason: string } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('../../runtime/sandbox/sandboxProbe.js') as typeof import('../../runtime/sandbox/sandboxProbe.js')).sandboxAvailability();
}

/** Whether the person switched the rewrite off. */
export function hookSandboxSwitchedOff(env: NodeJS.ProcessEnv): boolean {
  const value = (env[HOOK_SANDBOX_ENV] ?? '').trim().toLowerCase();
  return value === '0' || value === 'off' || value === 'false' || value === 'no';
}

/** One word for bash or sh, exactly as given. */
function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The line that runs `line` in the sandbox of `workspace`: `'<node>' '<cli.js>' sandbox --workspace '<ws>' --shell '<line>'`. */
export function sandboxedLine(launcher: SandboxLauncher, workspace: string, line: string): string {
  const words = [launcher.node, launcher.cli, 'sandbox', '--workspace', workspace, '--shell', line].map(quote).join(' ');
  return launcher.electron === true ? `ELECTRON_RUN_AS_NODE=1 ${words}` : words;
}
