// Where each host reads its project hooks and the entry `agentpolicy hook install` writes there
// (docs/hook-hosts.md sections 2-7; the choices are explained in docs/hooks.md).
import type { HostAgent } from '../hosts/hostAgents.js';

/** The hook timeout written when none is given, in seconds: long enough for a person to answer an ask. */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 120;

/** The launcher written when none is given: the `agentpolicy` executable on the PATH the host runs hooks with. */
export const DEFAULT_HOOK_LAUNCHER = 'agentpolicy';

/** How to put the default launcher where the hosts find it. */
export const LAUNCHER_HINT = 'install the CLI (npm install -g agent-policy), or write the hooks with --command "node /absolute/path/to/dist/cli.js"';

/**
 * One array of hook entries in a host's file. `grouped`: the array holds matcher groups
 * (`{matcher, hooks: [handler]}`) and our handler sits in a group of its own; `flat`: the array
 * holds handlers directly.
 */
export interface HookSlot {
  /** The path of the array in the file, e.g. `['hooks', 'PreToolUse']`. */
  path: readonly string[];
  shape: 'grouped' | 'flat';
  /** What is written: the group (grouped) or the handler (flat). */
  entry: Record<string, unknown>;
  /** The field of a handler that says what it runs: its command line, or an http hook's URL. */
  commandField: 'command' | 'bash' | 'url';
}

/** A file of ours: which hosts it governs and what it must hold for them. */
export interface HookTarget {
  /** The hosts this entry governs (Copilot CLI and VS Code agent mode share one). */
  hosts: readonly HostAgent[];
  /** Relative to the workspace folder, with forward slashes. */
  file: string;
  /** Top-level keys a new file starts with (before the hooks). */
  header: Record<string, unknown>;
  slots: readonly HookSlot[];
  /** Whether a handler's command line (or URL) is ours for this target. */
  isOurs(command: string): boolean;
  /**
   * Installing for these hosts takes our entries out of this file rather than putting them in:
   * another file holds them now (Claude Code's http hook and its command hook live in two files).
   */
  inactive?: boolean;
}

export interface HookCommandOptions {
  /** How to start the CLI, as a shell command line or the path of an executable (quoted when needed). */
  launcher: string;
  timeoutSeconds: number;
  /**
   * Claude Code's `type: "http"` hook to the decision service (docs/hooks.md): written into
   * `.claude/settings.local.json` with a SessionStart command hook that starts the service. Absent:
   * Claude Code gets the command hook in `.claude/settings.json`.
   */
  claudeHttp?: ClaudeHttpHook;
}

export interface ClaudeHttpHook {
  /** `http://127.0.0.1:<the service's kept port>` */
  serviceUrl: string;
  /** The http hook's token (serviceFiles.ts): it opens the service's /http/ only. */
  token: string;
}

/**
 * A parameter the service ignores, there for people: when the service is down Claude Code blocks
 * the call and shows the hook's URL with its error, so the URL says how to start it.
 */
export const IF_REFUSED = 'if-refused=run+agentpolicy+serve';

/** Our http hook's URL, whatever the port and query: the service's Claude Code path on 127.0.0.1. */
const OUR_HTTP_HOOK_URL = /^http:\/\/127\.0\.0\.1:\d+\/http\/claude(?:\?|$)/;

/** The line that makes sure the decision service runs (Claude Code's SessionStart hook). */
export function ensureServiceLine(launcher: string): string {
  return `${launcher} serve --ensure`;
}

/** Ours: `<launcher> serve --ensure` where the launcher names agentpolicy, or is the one written now. */
function isOurEnsureLine(command: string, launcher: string): boolean {
  const at = command.search(/\sserve\s+--ensure(?:\s|$)/);
  if (at < 0) return false;
  const start = command.slice(0, at).trim();
  return /agentpolicy|agent-policy/i.test(start) || start === launcher.trim();
}

/**
 * The one entry both Copilot CLI and VS Code agent mode run: both read `.github/hooks/*.json` and
 * both take `linux`/`osx` over `bash` (seen: Copilot CLI 1.0.102 ran `linux`), so no key can hold a
 * command for one of them only. The command line picks the host itself: Copilot CLI sets
 * `COPILOT_CLI=1` in its hooks' environment, VS Code does not.
 */
export const COPILOT_OR_VSCODE = '"$([ -n "${COPILOT_CLI:-}" ] && echo copilot || echo vscode)"';

/** The hosts' entries, one target per file. */
export function hookTargets(options: HookCommandOptions): HookTarget[] {
  const { timeoutSeconds: t } = options;
  const cmd = (agent: string): string => hookCommandLine(options.launcher, agent, t);
  const isOurs = (...hosts: HostAgent[]) => (command: string) => isOurHookCommand(command, hosts, options.launcher);
  const group = (handler: Record<string, unknown>) => ({ matcher: '*', hooks: [handler] });
  const cursor = (extra: Record<string, unknown> = {}) => ({ command: cmd('cursor'), ...extra, timeout: t, failClosed: true });
  const http = options.claudeHttp;
  return [
    {
      // Claude Code's command hook, shared with the team (when the http hook is not written).
      hosts: ['claude'], file: '.claude/settings.json', header: {}, isOurs: isOurs('claude'), inactive: http !== undefined,
      slots: [{ path: ['hooks', 'PreToolUse'], shape: 'grouped', commandField: 'command',
        entry: group({ type: 'command', command: cmd('claude'), timeout: t, onFailure: 'block' }) }],
    },
    {
      // Claude Code's http hook: this machine's port and token, so the person's own file (Claude
      // Code keeps settings.local.json out of git). SessionStart starts the service when it is down.
      hosts: ['claude'], file: '.claude/settings.local.json', header: {}, inactive: http === undefined,
      isOurs: (value) => OUR_HTTP_HOOK_URL.test(value) || isOurEnsureLine(value, options.launcher),
      slots: [
        { path: ['hooks', 'PreToolUse'], shape: 'grouped', commandField: 'url',
          entry: group({
            type: 'http', url: `${http?.serviceUrl ?? 'http://127.0.0.1:0'}/http/claude?timeout=${t}&${IF_REFUSED}`,
            headers: { Authorization: `Bearer ${http?.token ?? ''}` }, timeout: t, onFailure: 'block',
          }) },
        { path: ['hooks', 'SessionStart'], shape: 'grouped', commandField: 'command',
          entry: group({ type: 'command', command: ensureServiceLine(options.launcher), timeout: 30 }) },
      ],
    },
    {
      // Codex's HooksFile rejects unknown top-level keys: nothing but `hooks`.
      hosts: ['codex'], file: '.codex/hooks.json', header: {}, isOurs: isOurs('codex'),
      slots: [{ path: ['hooks', 'PreToolUse'], shape: 'grouped', commandField: 'command',
        entry: group({ type: 'command', command: cmd('codex'), timeout: t }) }],
    },
    {
      // Gemini CLI's timeout is in milliseconds.
      hosts: ['gemini'], file: '.gemini/settings.json', header: {}, isOurs: isOurs('gemini'),
      slots: [{ path: ['hooks', 'BeforeTool'], shape: 'grouped', commandField: 'command',
        entry: group({ type: 'command', command: cmd('gemini'), timeout: t * 1000, name: 'agentpolicy' }) }],
    },
    {
      // No matcher: every tool. `timeoutSec` is Copilot's field; VS Code reads it when `timeout` is absent.
      hosts: ['copilot', 'vscode'], file: '.github/hooks/agentpolicy.json', header: { version: 1 }, isOurs: isOurs('copilot', 'vscode'),
      slots: [{ path: ['hooks', 'preToolUse'], shape: 'flat', commandField: 'bash',
        entry: { type: 'command', bash: hookCommandLine(options.launcher, COPILOT_OR_VSCODE, t), timeoutSec: t } }],
    },
    {
      // Cursor's preToolUse covers what its three specific events do not: writes and deletes.
      hosts: ['cursor'], file: '.cursor/hooks.json', header: { version: 1 }, isOurs: isOurs('cursor'),
      slots: [
        { path: ['hooks', 'beforeShellExecution'], shape: 'flat', commandField: 'command', entry: cursor() },
        { path: ['hooks', 'beforeMCPExecution'], shape: 'flat', commandField: 'command', entry: cursor() },
        { path: ['hooks', 'beforeReadFile'], shape: 'flat', commandField: 'command', entry: cursor() },
        { path: ['hooks', 'preToolUse'], shape: 'flat', commandField: 'command', entry: cursor({ matcher: 'Write|Delete' }) },
      ],
    },
  ];
}

/** The target that governs `host` (the one installing writes). */
export function targetOf(targets: readonly HookTarget[], host: HostAgent): HookTarget {
  const found = targets.find((t) => t.hosts.includes(host) && t.inactive !== true);
  if (!found) throw new Error(`no hook target for ${host}`);
  return found;
}

export function hookCommandLine(launcher: string, agent: string, timeoutSeconds: number): string {
  return `${launcher} hook --agent ${agent} --timeout ${timeoutSeconds}`;
}

/**
 * Ours: `<launcher> hook --agent <host>` where the launcher names agentpolicy (or agent-policy,
 * the package and the extension's folder) or is the launcher being written now. Anyone else's
 * entry is never touched.
 */
export function isOurHookCommand(command: string, hosts: readonly HostAgent[], launcher: string): boolean {
  const at = command.search(/\shook\s+--agent\s/);
  if (at < 0) return false;
  const start = command.slice(0, at).trim();
  if (!/agentpolicy|agent-policy/i.test(start) && start !== launcher.trim()) return false;
  const rest = command.slice(at);
  return hosts.some((h) => new RegExp(`--agent\\s+["']?${h}(?=["'\\s]|$)|echo ${h}(?=[\\s|)"']|$)`).test(rest));
}

/**
 * The launcher as a command line: an existing file is one word (quoted for a POSIX shell when it
 * needs it; a `.js` file is run with `node`); anything else is taken as a command line as given.
 */
export function launcherFor(given: string, isFile: (p: string) => boolean): string {
  const trimmed = given.trim();
  if (!isFile(trimmed)) return trimmed;
  const quoted = quoteForPosixShell(trimmed);
  return /\.[cm]?js$/i.test(trimmed) ? `node ${quoted}` : quoted;
}

export function quoteForPosixShell(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
