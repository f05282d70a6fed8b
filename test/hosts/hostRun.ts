// One run of a real agent CLI in a temp project: a policy, a file to delete, the hook installed for
// the host, the scripted model calling the shell once with the test's command, the CLI run headless
// with its own home folder, and what came of it (the files, the model's requests, the audit log).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readServiceDiscovery } from '../../src/hooks/state/serviceFiles';
import { type HostDriver, binPath } from './hostDrivers';
import { installHook } from './installHook';
import { ScriptedModelServer } from './modelServer';
import { type GroupRun, runInGroup } from './processGroup';

export const POLICY = `// Written by test/hosts: deny deleting, allow touch and echo, ask the rest.
{
  "version": 1,
  "rules": [
    { "tools": ["builtin.run_command"], "commands": ["rm *"], "decision": "deny", "reason": "no deleting" },
    { "tools": ["builtin.run_command"], "commands": ["touch *", "echo *"], "decision": "allow" }
  ],
  "default": "ask"
}
`;

/** A temp folder for one host run: the project (policy, victim.txt, the hook entry) and the host's home. */
export interface HostProject {
  root: string;
  project: string;
  home: string;
  /** True when `relative` exists in the project. */
  exists(relative: string): boolean;
  /** The hook's audit log, at its default place under `home`. */
  auditLines(): AuditLine[];
  /** Removes the temp folder. */
  dispose(): void;
}

export interface ProjectOptions {
  /** The text of `.agentpolicy.jsonc` (default POLICY). */
  policy?: string;
  /** `--command` for the install: a crashing or slow stand-in (default: none, the hook client as a person installs it). */
  hookLauncher?: string;
  /** The timeout written in the host's hook entry, in seconds (default: the install's). */
  hookTimeoutSeconds?: number;
  /** `--via` for Claude Code: its http hook (the install's default) or the hook client as a command hook. */
  hookVia?: 'http' | 'command';
  /** The folder the temp project and home are made in (default: os.tmpdir(); our sandbox gives commands a /tmp of their own). */
  parentDir?: string;
}

export interface RunOptions {
  /** The shell command the model calls. */
  command: string;
  /** Give the host its own permission to run every tool (HostRunSetup.hostApproves; default false). */
  hostApproves?: boolean;
  /** Added to (or replacing) the run's environment, e.g. an editor's XDG_RUNTIME_DIR. */
  env?: Record<string, string>;
  /** The longest the CLI may run before it is killed (a hang fails the test, it does not stall it). */
  timeoutMs?: number;
  /** How many times in a row the model calls the shell (default once). */
  calls?: number;
}

export type HostScenario = ProjectOptions & RunOptions;

export interface AuditLine {
  event: string;
  session?: string;
  tool?: string;
  decision?: string;
  reason?: string;
  summary?: string;
}

export interface HostRun {
  run: GroupRun;
  /** The scripted model, closed: its recorded requests and the tool results the host sent back. */
  model: ScriptedModelServer;
  /** What to print when an assertion fails: the CLI's output and the model's requests. */
  explain(): string;
}

export type HostRunResult = HostProject & HostRun;

/** Node, so that a hook entry `node …` works under the host whatever PATH the test has. */
function pathWithNode(): string {
  return [path.dirname(process.execPath), ...(process.env.PATH ?? '').split(path.delimiter)].join(path.delimiter);
}

/** Makes the temp project with the policy and victim.txt, and installs the hook for the host in it. */
export function createHostProject(driver: HostDriver, options: ProjectOptions = {}): HostProject {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(options.parentDir ?? os.tmpdir(), `agentpolicy-${driver.host}-`)));
  const project = path.join(root, 'project');
  const home = path.join(root, 'home');
  fs.mkdirSync(project);
  fs.mkdirSync(path.join(home, 'run'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(project, '.agentpolicy.jsonc'), options.policy ?? POLICY);
  fs.writeFileSync(path.join(project, 'victim.txt'), 'please keep me\n');
  // The hook client goes into the run's own state folder (the host's XDG_STATE_HOME below).
  installHook(driver.host, project, {
    ...(options.hookLauncher !== undefined ? { launcher: options.hookLauncher } : {}),
    env: { ...process.env, HOME: home, XDG_STATE_HOME: path.join(home, '.local', 'state') },
    ...(options.hookTimeoutSeconds !== undefined ? { timeoutSeconds: options.hookTimeoutSeconds } : {}),
    ...(options.hookVia !== undefined ? { via: options.hookVia } : {}),
  });
  const auditFile = path.join(home, '.local', 'state', 'agentpolicy', 'audit.jsonl');
  return {
    root,
    project,
    home,
    exists: (relative) => fs.existsSync(path.join(project, relative)),
    auditLines: () => (fs.existsSync(auditFile) ? fs.readFileSync(auditFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditLine) : []),
    dispose: () => {
      stopStartedService(path.join(home, '.local', 'state', 'agentpolicy'));
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A decision service Claude Code's SessionStart hook started in the run's state folder (detached: the run's process group does not hold it) is stopped. */
export function stopStartedService(stateDir: string): void {
  const found = readServiceDiscovery(stateDir);
  if (found === undefined || found.pid === process.pid) return;
  try {
    process.kill(found.pid, 'SIGTERM');
  } catch {
    // Gone already.
  }
}

/** Runs the host headless in the project against a scripted model that calls the shell once with `options.command`. */
export async function runHostIn(driver: HostDriver, where: HostProject, options: RunOptions): Promise<HostRun> {
  const { project, home } = where;
  const model = await ScriptedModelServer.start(driver.dialect, { command: options.command, finalText: 'Done.', ...(options.calls !== undefined ? { calls: options.calls } : {}) });
  let run: GroupRun;
  try {
    const { args, env } = driver.prepare({ project, home, origin: model.origin, prompt: `Please run: ${options.command}`, hostApproves: options.hostApproves === true });
    // Nothing of the machine's environment but PATH: no keys, no config, no editor of the person running the tests.
    const baseEnv: Record<string, string> = {
      PATH: pathWithNode(),
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      XDG_DATA_HOME: path.join(home, '.local', 'share'),
      XDG_STATE_HOME: path.join(home, '.local', 'state'),
      XDG_CACHE_HOME: path.join(home, '.cache'),
      XDG_RUNTIME_DIR: path.join(home, 'run'),
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      NO_COLOR: '1',
    };
    run = await runInGroup([binPath(driver), ...args], { cwd: project, env: { ...baseEnv, ...env, ...options.env }, timeoutMs: options.timeoutMs ?? 60_000 });
  } finally {
    await model.close();
  }
  return {
    run,
    model,
    explain: () => [
      `${driver.label} exit ${run.exitCode}${run.signal ? ` (${run.signal})` : ''}${run.timedOut ? ', killed at the time limit' : ''}`,
      `stdout: ${run.stdout.slice(-3000)}`,
      `stderr: ${run.stderr.slice(-3000)}`,
      `model requests: ${model.requests.map((r) => `${r.method} ${r.url} -> ${JSON.stringify(r.answered)}`).join('; ')}`,
      `tool results: ${JSON.stringify(model.toolResults)}`,
    ].join('\n'),
  };
}

/** A temp project and one run in it; the caller disposes of it. */
export async function runHost(driver: HostDriver, scenario: HostScenario): Promise<HostRunResult> {
  const where = createHostProject(driver, scenario);
  try {
    return { ...where, ...(await runHostIn(driver, where, scenario)) };
  } catch (error) {
    where.dispose();
    throw error;
  }
}
