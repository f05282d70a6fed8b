// `agentpolicy hook status`: per host and workspace, what is in place and what would happen. For
// each host of HOST_AGENTS: whether our entry is installed, what it runs (the hook client by
// absolute path, a bare command found on PATH or not, or a `--command` line), whether that can start
// now, whether the decision service answers, the host's last call in the audit log, what the host
// does when the hook fails (docs/hook-hosts.md §1), and whether its commands are sandboxed. Only
// reads: files, the PATH, and one request without the secret to the service (answered 401).
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { parse } from 'jsonc-parser';
import { readAuditLog } from '../../runtime/audit/auditRead.js';
import type { AuditEntry } from '../../runtime/audit/audit.js';
import { readServiceDiscovery } from '../state/serviceFiles.js';
import { findEditor, type EditorEndpoint } from '../editor/editorBridge.js';
import { ownProcessAlive as processAlive } from '../../runtime/sandbox/processState.js';
import { DEFAULT_HOOK_LAUNCHER, DEFAULT_HOOK_TIMEOUT_SECONDS, hookTargets, quoteForPosixShell, targetOf, type HookTarget } from '../install/hookEntries.js';
import { fileProblem, onPath, shellWords } from '../install/hookLauncher.js';
import { hookSandboxSwitchedOff, machineSandbox } from '../judge/hookSandbox.js';
import { BLOCKS_WHEN_HOOK_CANNOT_START, installedHookHosts } from '../install/hookInstall.js';
import { HOST_AGENTS, HOSTS, type HostAgent } from '../hosts/hostAgents.js';
import { defaultStateDir } from '../state/stateDir.js';

/** What a host does with the call when something fails. */
export type FailureOutcome = 'decides' | 'blocks' | 'lets-through';

export interface HostFailureBehaviour {
  /** The hook program cannot start (not found: the shell exits 127 with a message). */
  cannotStart: 'blocks' | 'lets-through';
  /** The hook does not answer within the entry's timeout. */
  timeout: 'blocks' | 'lets-through';
}

/**
 * docs/hook-hosts.md §1 ("other exit ≠0", "timeout", "fail-closed switch") with the entries
 * `hook install` writes: Claude Code's `onFailure: "block"`, Cursor's `failClosed: true`. The
 * client's own failures end with exit 2 and a message, a block on every host.
 */
export const HOST_FAILURE: Readonly<Record<HostAgent, HostFailureBehaviour>> = {
  claude: { cannotStart: BLOCKS_WHEN_HOOK_CANNOT_START.claude ? 'blocks' : 'lets-through', timeout: 'blocks' },
  codex: { cannotStart: BLOCKS_WHEN_HOOK_CANNOT_START.codex ? 'blocks' : 'lets-through', timeout: 'lets-through' },
  gemini: { cannotStart: BLOCKS_WHEN_HOOK_CANNOT_START.gemini ? 'blocks' : 'lets-through', timeout: 'lets-through' },
  copilot: { cannotStart: BLOCKS_WHEN_HOOK_CANNOT_START.copilot ? 'blocks' : 'lets-through', timeout: 'lets-through' },
  vscode: { cannotStart: BLOCKS_WHEN_HOOK_CANNOT_START.vscode ? 'blocks' : 'lets-through', timeout: 'lets-through' },
  cursor: { cannotStart: BLOCKS_WHEN_HOOK_CANNOT_START.cursor ? 'blocks' : 'lets-through', timeout: 'blocks' },
};

/** What an installed entry runs. */
export interface HookEntryRun {
  /**
   * `client`: the hook client script by absolute path (what `hook install` writes); `path`: one bare
   * word looked up on the host's PATH (the legacy `agentpolicy hook …`); `command`: any other
   * command line (a `--command` written into the entry); `http`: Claude Code's http hook to the
   * decision service.
   */
  kind: 'client' | 'path' | 'command' | 'http';
  /** The launcher: the entry's command line before ` hook --agent`; for `http`, the URL. */
  launcher: string;
  /** For `client`: the script's absolute path; for `http`: the client its SessionStart hook starts the service with. */
  client?: string;
  /** For `client`: what it runs when the service does not answer (`node cli.js`, or the command given); for `http`, what starts the service. */
  fallback?: string;
}

export interface ServiceStatus {
  /** `reachable`: a request without the secret got its 401; `not-running`: no discovery file, or its pid is gone; `not-answering`: the process is there but nothing answered in time. */
  state: 'reachable' | 'not-running' | 'not-answering';
  pid?: number;
  url?: string;
  socket?: string;
  /** Why it is not reachable, when it is not. */
  detail?: string;
}

export interface LastCall {
  time: string;
  session: string;
  tool?: string;
  decision?: 'allow' | 'ask' | 'deny';
  summary?: string;
  /** The audit file it was read from. */
  auditFile: string;
  /** What the hook took to decide it (the audit line's hookMs), when the line says. */
  hookMs?: number;
}

export interface HostHookStatus {
  host: HostAgent;
  label: string;
  workspace: string;
  installed: boolean;
  /** The host's file, relative to the workspace. */
  file: string;
  /** What our entry runs; null when none is installed. */
  runs: HookEntryRun | null;
  /** Whether what the entry runs can start now; null when none is installed. */
  canStart: boolean | null;
  /** Why it cannot start (or cannot decide without the service), when so. */
  problem?: string;
  /** The decision service (one per user: the same for every host). */
  service: ServiceStatus;
  /** Whether the entry asks the service first (the client does; a bare or `--command` launcher decides in-process). */
  usesService: boolean;
  /** The host's latest `decision` line in the audit logs read (sessions `<host>:<id>`), from any workspace; null when none. */
  lastCall: LastCall | null;
  /**
   * What happens on failure: the service down (the client decides in-process, or blocks when its
   * fallback cannot run; Claude Code's http hook blocks until a session start starts it again), the
   * hook not starting, the hook timing out.
   */
  onFailure: { serviceDown: 'decides' | 'blocks'; cannotStart: 'blocks' | 'lets-through'; timeout: 'blocks' | 'lets-through' };
  /**
   * Whether the host's allowed commands run in our sandbox (their tool input rewritten: Claude Code,
   * Gemini CLI, Copilot CLI, and Codex when it runs them outside its own sandbox) when the machine
   * has one and AGENTPOLICY_HOOK_SANDBOX does not switch it off here; VS Code's and Cursor's never.
   */
  sandboxed: boolean;
  /** When the answer depends on how the host runs (Codex): in which case. */
  sandboxedWhen?: string;
  /** Set when the hook cannot start: what goes wrong, and the command that fixes it. */
  warning?: string;
  fix?: string;
}

export interface HookStatusOptions {
  workspace: string;
  env?: NodeJS.ProcessEnv;
  /** Default: defaultStateDir(env). */
  stateDir?: string;
  /** Default: AGENTPOLICY_AUDIT, the VS Code window's for the workspace, and <stateDir>/audit.jsonl. */
  auditFiles?: readonly string[];
  /** Default: the editor window of the workspace, as the hook finds it. */
  findEditor?: (folder: string) => Pick<EditorEndpoint, 'auditFile'> | undefined;
  /** How long the service has to answer, in ms. Default 1000. */
  probeTimeoutMs?: number;
  /** Whether this machine has a sandbox (default: the probe, hookSandbox.ts). */
  sandboxAvailable?: () => { available: boolean };
}

/** The hosts whose allowed commands the hook puts into our sandbox (hookCommand.ts: Claude Code's updatedInput). */
const SANDBOXED_HOSTS: readonly HostAgent[] = ['claude', 'codex', 'gemini', 'copilot'];
/** Codex's commands are ours to sandbox only when it does not sandbox them itself (hookCommand.ts). */
const CODEX_SANDBOXED_WHEN = 'when Codex runs them outside its own sandbox (permission mode bypassPermissions); else Codex\'s sandbox holds them';

export async function hookStatus(options: HookStatusOptions): Promise<HostHookStatus[]> {
  const env = options.env ?? process.env;
  const workspace = path.resolve(options.workspace);
  const stateDir = options.stateDir ?? defaultStateDir(env);
  const installed = new Set(installedHookHosts(workspace));
  // As `hook install` writes them by default: Claude Code's http hook is the file shown when none is in place.
  const targets = hookTargets({ launcher: DEFAULT_HOOK_LAUNCHER, timeoutSeconds: DEFAULT_HOOK_TIMEOUT_SECONDS, claudeHttp: { serviceUrl: '', token: '' } });
  const service = await serviceStatus(stateDir, options.probeTimeoutMs ?? 1000);
  const last = lastCalls(auditFilesOf(options, workspace, stateDir, env));
  const sandboxHere = !hookSandboxSwitchedOff(env) && (options.sandboxAvailable ?? machineSandbox)().available;
  return HOST_AGENTS.map((host) => {
    let target = targetOf(targets, host);
    let command: string | undefined;
    if (installed.has(host)) {
      for (const t of targets.filter((c) => c.hosts.includes(host))) {
        command = ourCommand(workspace, t);
        if (command !== undefined) {
          target = t;
          break;
        }
      }
    }
    const failure = HOST_FAILURE[host];
    const base = { host, label: HOSTS[host].label, workspace, file: target.file, service, lastCall: last.get(host) ?? null };
    if (command === undefined) {
      return { ...base, installed: false, runs: null, canStart: null, usesService: false, sandboxed: false, onFailure: { serviceDown: 'decides' as const, ...failure } };
    }
    const http = target.slots[0]?.commandField === 'url';
    const { runs, problem, fallbackProblem } = http ? inspectHttp(command, workspace, target, service, env) : inspectLauncher(command, workspace, env);
    const status: HostHookStatus = {
      ...base, installed: true, runs, canStart: problem === undefined, usesService: http || runs.kind === 'client',
      sandboxed: sandboxHere && SANDBOXED_HOSTS.includes(host),
      ...(sandboxHere && host === 'codex' ? { sandboxedWhen: CODEX_SANDBOXED_WHEN } : {}),
      onFailure: { serviceDown: http || fallbackProblem !== undefined ? 'blocks' : 'decides', ...failure },
      ...(problem !== undefined || fallbackProblem !== undefined ? { problem: (problem ?? fallbackProblem)! } : {}),
    };
    const trouble = problem ?? fallbackProblem;
    if (trouble !== undefined) {
      const outcome = http
        ? problem !== undefined ? 'every call is blocked' : 'calls are judged only while the decision service runs; once it stops every call is blocked'
        : problem !== undefined
          ? failure.cannotStart === 'lets-through' ? 'it fails open: every call runs ungoverned' : 'every call is blocked'
          : service.state === 'reachable' ? 'calls are judged only while the decision service runs; without it every call is blocked' : 'the decision service is not running, so every call is blocked';
      const what = http ? (problem !== undefined ? 'cannot be answered' : 'cannot start the decision service again') : problem !== undefined ? 'cannot start' : 'cannot decide without the service';
      status.warning = `${HOSTS[host].label}: the hook ${what} (${trouble}): ${outcome}`;
      status.fix = `agentpolicy hook install --agent ${host} --workspace ${quoteForPosixShell(workspace)}`;
    }
    return status;
  });
}

/**
 * Claude Code's http hook: answered when the service listens on the port its URL names; started
 * again, when it is down, by the SessionStart hook's client (whose fallback must run).
 */
function inspectHttp(url: string, workspace: string, target: HookTarget, service: ServiceStatus, env: NodeJS.ProcessEnv): { runs: HookEntryRun; problem?: string; fallbackProblem?: string } {
  const ensureSlot = target.slots.find((s) => s.path.includes('SessionStart'));
  const ensure = ensureSlot !== undefined ? ourCommand(workspace, { ...target, slots: [ensureSlot] }) : undefined;
  const client = ensure !== undefined ? shellWords(ensure.replace(/\sserve\s+--ensure.*$/, ''))[0] : undefined;
  const started = ensure !== undefined ? inspectLauncher(ensure.replace(/\sserve\s+--ensure/, ' hook --agent claude'), workspace, env) : undefined;
  const runs: HookEntryRun = { kind: 'http', launcher: url, ...(client !== undefined ? { client } : {}), ...(started?.runs.fallback !== undefined ? { fallback: started.runs.fallback } : {}) };
  const fallbackProblem = started === undefined ? 'no SessionStart hook starts the decision service' : started.problem ?? started.fallbackProblem;
  let problem: string | undefined;
  const port = portOf(url);
  if (service.state === 'reachable' && service.url !== undefined && portOf(service.url) !== port) {
    problem = `the decision service listens on ${service.url}, not on the port the hook names (${port})`;
  } else if (service.state !== 'reachable' && fallbackProblem !== undefined) {
    problem = 'the decision service is not running, and nothing starts it';
  }
  return { runs, ...(problem !== undefined ? { problem } : {}), ...(fallbackProblem !== undefined ? { fallbackProblem } : {}) };
}

function portOf(url: string): string {
  try {
    return new URL(url).port;
  } catch {
    return '';
  }
}

/** One line per host. */
export function hookStatusLine(s: HostHookStatus): string {
  const parts = [`${s.label} (${s.host}):`];
  if (!s.installed || s.runs === null) {
    parts.push('not installed;');
  } else {
    parts.push(`installed (${s.file}), runs ${describeRun(s.runs)};`);
    const starts = s.runs.kind === 'http' ? 'is answered' : 'can start';
    parts.push(s.canStart === true ? (s.problem !== undefined ? `${starts}, but ${s.problem};` : `${starts};`) : `${s.runs.kind === 'http' ? 'CANNOT BE ANSWERED' : 'CANNOT START'}: ${s.problem ?? 'unknown'};`);
  }
  const svc = s.service;
  const service = svc.state === 'reachable' ? `reachable (pid ${svc.pid})` : svc.state === 'not-running' ? 'not running' : `not answering (pid ${svc.pid}${svc.detail !== undefined ? `, ${svc.detail}` : ''})`;
  parts.push(`service ${service}${s.installed && !s.usesService ? ' (not used by this entry)' : ''};`);
  const took = s.lastCall?.hookMs !== undefined ? ` (decided in ${s.lastCall.hookMs} ms)` : '';
  parts.push(s.lastCall !== null ? `last call ${s.lastCall.time}${s.lastCall.decision !== undefined ? ` ${s.lastCall.decision}` : ''}${s.lastCall.tool !== undefined ? ` ${s.lastCall.tool}` : ''}${took};` : 'no call in the audit log;');
  const said = (o: FailureOutcome): string => (o === 'lets-through' ? 'LETS THE CALL THROUGH' : o);
  parts.push(`on failure: service down → ${said(s.onFailure.serviceDown)}, cannot start → ${said(s.onFailure.cannotStart)}, timeout → ${said(s.onFailure.timeout)};`);
  parts.push(s.sandboxed ? `allowed commands run in our sandbox${s.sandboxedWhen !== undefined ? ` ${s.sandboxedWhen}` : ''}` : 'commands not sandboxed');
  return parts.join(' ');
}

function describeRun(run: HookEntryRun): string {
  if (run.kind === 'http') return `the http hook ${run.launcher.replace(/\?.*$/, '')}${run.client !== undefined ? ` (its SessionStart hook starts the service with ${run.client})` : ''}`;
  if (run.kind === 'client') return `the hook client ${run.client}${run.fallback !== undefined ? ` (else ${run.fallback})` : ''}`;
  if (run.kind === 'path') return `${run.launcher} from PATH`;
  return `the command ${run.launcher}`;
}

// ---------------------------------------------------------------------------------------------
// The entry and what it runs.

/** Our handler's command line for this target (the first slot's), read tolerantly. */
function ourCommand(workspace: string, target: HookTarget): string | undefined {
  let value: unknown;
  try {
    value = parse(fs.readFileSync(path.join(workspace, ...target.file.split('/')), 'utf8'), [], { allowTrailingComma: true, allowEmptyContent: true });
  } catch {
    return undefined;
  }
  for (const slot of target.slots) {
    let at: unknown = value;
    for (const key of slot.path) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
    if (!Array.isArray(at)) continue;
    for (const element of at) {
      const handlers = slot.shape === 'grouped' ? ((element as { hooks?: unknown } | null)?.hooks ?? []) : [element];
      if (!Array.isArray(handlers)) continue;
      for (const handler of handlers) {
        const command = (handler as Record<string, unknown> | null)?.[slot.commandField];
        if (typeof command === 'string' && target.isOurs(command)) return command;
      }
    }
  }
  return undefined;
}

const CLIENT_NAME = /^hook-client-[0-9a-f]+\.sh$/;

function inspectLauncher(command: string, cwd: string, env: NodeJS.ProcessEnv): { runs: HookEntryRun; problem?: string; fallbackProblem?: string } {
  const at = command.search(/\shook\s+--agent\s/);
  const launcher = command.slice(0, at).trim();
  const words = shellWords(launcher);
  const first = words[0] ?? '';
  if (words.length === 1 && path.isAbsolute(first) && CLIENT_NAME.test(path.basename(first))) {
    const problem = fileProblem(first, fs.constants.X_OK, 'the hook client');
    if (problem !== undefined) return { runs: { kind: 'client', launcher, client: first }, problem };
    let text: string;
    try {
      text = fs.readFileSync(first, 'utf8');
    } catch (error) {
      return { runs: { kind: 'client', launcher, client: first }, problem: `the hook client ${first} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    const node = /^AP_NODE=(.*)$/m.exec(text)?.[1];
    const cli = /^AP_CLI=(.*)$/m.exec(text)?.[1];
    if (node !== undefined && cli !== undefined) {
      const [n] = shellWords(node);
      const [c] = shellWords(cli);
      const fallbackProblem = n === undefined || c === undefined ? 'its fallback cannot be read'
        : fileProblem(n, fs.constants.X_OK, 'node') ?? fileProblem(c, fs.constants.R_OK, 'the agentpolicy CLI');
      return { runs: { kind: 'client', launcher, client: first, fallback: `${n ?? '?'} ${c ?? '?'}` }, ...(fallbackProblem !== undefined ? { fallbackProblem } : {}) };
    }
    const given = /^ap_fallback\(\) \{ (.*) "\$@"; \}$/m.exec(text)?.[1];
    if (given === undefined) return { runs: { kind: 'client', launcher, client: first }, fallbackProblem: 'its fallback cannot be read' };
    const fallbackProblem = commandProblem(shellWords(given), cwd, env);
    return { runs: { kind: 'client', launcher, client: first, fallback: given }, ...(fallbackProblem !== undefined ? { fallbackProblem } : {}) };
  }
  const kind = words.length === 1 && !first.includes('/') ? 'path' : 'command';
  const problem = commandProblem(words, cwd, env);
  return { runs: { kind, launcher }, ...(problem !== undefined ? { problem } : {}) };
}

/** Why a command line's program cannot start: its first word (a bare name on PATH, or a path), and for `node X.js` the script. */
function commandProblem(words: readonly string[], cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  const first = words[0];
  if (first === undefined) return 'the hook command is empty';
  let program: string;
  if (!first.includes('/')) {
    // A shell construct (a variable, a subshell): it cannot be told without running it.
    if (!/^[A-Za-z0-9_.+-]+$/.test(first)) return undefined;
    const found = onPath(first, cwd, env);
    if (found === undefined) return `"${first}" is not on this PATH`;
    program = found;
  } else {
    program = path.resolve(cwd, first);
    const problem = fileProblem(program, fs.constants.X_OK, first);
    if (problem !== undefined) return problem;
  }
  const script = words[1];
  if (path.basename(program) === 'node' && script !== undefined && /\.[cm]?js$/i.test(script)) return fileProblem(path.resolve(cwd, script), fs.constants.R_OK, 'the script');
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The service.

async function serviceStatus(stateDir: string, timeoutMs: number): Promise<ServiceStatus> {
  const found = readServiceDiscovery(stateDir);
  if (found === undefined) return { state: 'not-running', detail: 'no discovery file' };
  const where = { pid: found.pid, url: found.url, ...(found.socket !== undefined ? { socket: found.socket } : {}) };
  if (!processAlive(found.pid)) return { state: 'not-running', ...where, detail: `its process (pid ${found.pid}) is gone` };
  const answer = await probe(found.socket !== undefined ? { socketPath: found.socket } : { host: '127.0.0.1', port: Number(new URL(found.url).port) }, timeoutMs);
  return answer === 401 ? { state: 'reachable', ...where } : { state: 'not-answering', ...where, detail: typeof answer === 'number' ? `answered ${answer}, not 401` : answer };
}

/** A request without the secret: the service refuses it (401) before reading anything. Never a hook call. */
function probe(target: { socketPath: string } | { host: string; port: number }, timeoutMs: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request({ ...target, method: 'GET', path: '/status', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.once('timeout', () => {
      resolve(`no answer within ${timeoutMs} ms`);
      req.destroy();
    });
    req.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

// ---------------------------------------------------------------------------------------------
// The audit logs.

function auditFilesOf(options: HookStatusOptions, workspace: string, stateDir: string, env: NodeJS.ProcessEnv): string[] {
  if (options.auditFiles !== undefined) return [...options.auditFiles];
  let editor: Pick<EditorEndpoint, 'auditFile'> | undefined;
  try {
    editor = (options.findEditor ?? findEditor)(workspace);
  } catch {
    editor = undefined;
  }
  const files = [env.AGENTPOLICY_AUDIT || undefined, editor?.auditFile, path.join(stateDir, 'audit.jsonl')].filter((f): f is string => f !== undefined);
  return [...new Set(files)];
}

function lastCalls(files: readonly string[]): Map<HostAgent, LastCall> {
  const last = new Map<HostAgent, LastCall & { at: number }>();
  for (const file of files) {
    let entries: AuditEntry[];
    try {
      entries = readAuditLog(file).entries;
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.event !== 'decision') continue;
      const host = HOST_AGENTS.find((h) => e.session.startsWith(`${h}:`));
      const at = Date.parse(e.time);
      if (host === undefined || Number.isNaN(at)) continue;
      const before = last.get(host);
      if (before !== undefined && before.at > at) continue;
      last.set(host, {
        at, time: e.time, session: e.session, auditFile: file,
        ...(e.tool !== undefined ? { tool: e.tool } : {}), ...(e.decision !== undefined ? { decision: e.decision } : {}), ...(e.summary !== undefined ? { summary: e.summary } : {}),
        ...(typeof e.hookMs === 'number' ? { hookMs: e.hookMs } : {}),
      });
    }
  }
  return new Map([...last].map(([h, { at: _at, ...call }]) => [h, call]));
}
