// `agentpolicy sandbox [options] -- COMMAND [ARGS…]`: runs one command in the sandbox the
// workspace policy makes (docs/sandbox.md, "agentpolicy sandbox"), with this process's stdin,
// stdout and stderr. The command's text is not judged (its caller did that); what the policy
// shapes is the sandbox: its protected and persistence files read-only, its denied paths and the
// home folder's credential stores unreadable, the credential variables withheld, and each
// connection judged by the rules with `domains`/`urls` (Policy.judgeConnection). A host no rule
// decides is asked in the editor window running for the workspace (the hooks' editor bridge),
// else refused with a line on stderr naming the host and the rule that would allow it.
// Exit status as `env` and `timeout` have it: the command's; 128+N when killed by signal N;
// 125 when we failed (no sandbox here, a piece of it missing, an invalid policy, the sandbox could
// not be set up): then nothing ran. 2 for a usage error, as every command of the CLI.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { connectionUrl, type ConnectionDecision, type ConnectionTarget } from '../policy/rules/connection.js';
import { formatDiagnostic, LineMap, toJson } from '../policy/file/diagnostics.js';
import { loadPolicyText, Policy, type PolicyLayer } from '../policy/policy.js';
import type { LayerName } from '../policy/rules/compile.js';
import { initShellParser } from '../policy/shell/shellParser.js';
import { askEditor, findEditor, type EditorAsk, type EditorEndpoint } from '../hooks/editor/editorBridge.js';
import { cliManagedPolicy } from './cliManagedPolicy.js';
import { findWorkspacePolicy } from '../hooks/judge/hookPolicy.js';
import { HOSTS, isHostAgent, type HostAgent } from '../hooks/hosts/hostAgents.js';
import { commandShell, findBash, locateProgram } from '../runtime/sandbox/commandProcess.js';
import { protectedPathsOf } from '../runtime/calls/protected.js';
import { undoProtectedChanges } from '../runtime/sandbox/sandboxCleanup.js';
import { policyDeniedPaths } from '../runtime/calls/sandboxDeniedPaths.js';
import { prepareSandbox, SandboxUnavailableError, type PreparedSandbox } from '../runtime/sandbox/sandboxLaunch.js';
import { bridgeMissing, bridgeTools, type ConnectionAnswer, type ConnectionJudge } from '../runtime/sandbox/sandboxNetwork.js';
import { runSandboxedProcess } from '../runtime/sandbox/sandboxedProcess.js';
import { sandboxAvailability } from '../runtime/sandbox/sandboxProbe.js';

export const SANDBOX_USAGE = `  agentpolicy sandbox [--workspace DIR] [--policy F] [--managed F] [--user F] [--untrusted] [--agent NAME]
                      [--pass-env NAME]… (-- COMMAND [ARGS…] | --shell LINE)`;

/** Our own failure (nothing ran), as `env` and `timeout` say it. */
export const SANDBOX_FAILED = 125;

/** How long a host's question stays open in the editor before its connection is refused (as for our own sessions). */
export const SANDBOX_ASK_TIMEOUT_SECONDS = 120;

export class SandboxUsageError extends Error {}

export interface SandboxIo {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
  /** The environment the command starts from (default: the process's); HOME names the home folder whose credential stores are hidden. */
  env?: NodeJS.ProcessEnv;
}

const OPTIONS = {
  workspace: { type: 'string' }, policy: { type: 'string' }, managed: { type: 'string' }, user: { type: 'string' },
  untrusted: { type: 'boolean' }, agent: { type: 'string' }, 'pass-env': { type: 'string', multiple: true },
  shell: { type: 'string' }, help: { type: 'boolean', short: 'h' },
} as const;

/** One word for bash or sh, exactly as given: `'…'`, a `'` written `'\''`. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The command line that runs exactly these words (each quoted, a single one too: the caller passes argv, not a shell line). */
export function commandLineOf(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}

export async function sandboxCommand(argv: readonly string[], io: SandboxIo): Promise<number> {
  const env = io.env ?? process.env;
  const split = argv.indexOf('--');
  const optionArgs = split < 0 ? [...argv] : argv.slice(0, split);
  const words = split < 0 ? [] : argv.slice(split + 1);
  let values: { workspace?: string; policy?: string; managed?: string; user?: string; untrusted?: boolean; agent?: string; 'pass-env'?: string[]; shell?: string; help?: boolean };
  try {
    values = parseArgs({ args: optionArgs, options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new SandboxUsageError(`${(error as Error).message}${split < 0 ? ' (the command goes after --: agentpolicy sandbox -- COMMAND [ARGS…])' : ''}`);
  }
  if (values.help) {
    io.out(`usage:\n${SANDBOX_USAGE}`);
    return 0;
  }
  if (values.shell !== undefined && words.length > 0) throw new SandboxUsageError('sandbox takes either --shell LINE or -- COMMAND [ARGS…], not both');
  if (values.shell === undefined && words.length === 0) throw new SandboxUsageError('sandbox needs a command: agentpolicy sandbox -- COMMAND [ARGS…] (or --shell LINE)');
  const line = values.shell ?? commandLineOf(words);
  if (line.trim() === '') throw new SandboxUsageError('--shell needs a command line');
  const passEnv = values['pass-env'] ?? [];
  const badName = passEnv.find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  if (badName !== undefined) throw new SandboxUsageError(`--pass-env ${JSON.stringify(badName)} is not a variable name`);
  const agent = values.agent ?? 'main';

  // The files named must exist; the workspace is --workspace, else the folder of the nearest policy, else the current folder.
  const named = (file: string | undefined, flag: string): string | undefined => {
    if (file === undefined) return undefined;
    const full = path.resolve(io.cwd, file);
    if (!fs.existsSync(full) || !fs.statSync(full).isFile()) throw new SandboxUsageError(`${flag} ${file}: no such file`);
    return full;
  };
  const givenFolder = values.workspace !== undefined ? path.resolve(io.cwd, values.workspace) : undefined;
  if (givenFolder !== undefined && !(fs.existsSync(givenFolder) && fs.statSync(givenFolder).isDirectory())) throw new SandboxUsageError(`--workspace ${values.workspace}: no such folder`);
  const policyFile = named(values.policy, '--policy')
    ?? (givenFolder !== undefined ? existingFile(path.join(givenFolder, '.agentpolicy.jsonc')) : findWorkspacePolicy(io.cwd));
  const workspaceFolder = fs.realpathSync(givenFolder ?? (policyFile !== undefined ? path.dirname(policyFile) : path.resolve(io.cwd)));
  // Where the command starts: here when here is inside the workspace, else the workspace folder.
  const here = fs.realpathSync(io.cwd);
  const cwd = here === workspaceFolder || here.startsWith(`${workspaceFolder}${path.sep}`) ? here : workspaceFolder;

  // Before anything is read: whether there is a sandbox here at all, with its network bridge.
  const available = sandboxAvailability();
  if (!available.available) {
    io.err(`agentpolicy sandbox: nothing was run: there is no sandbox here: ${available.reason}`);
    return SANDBOX_FAILED;
  }
  // On Linux each connection goes through socat relays and the engine's seccomp helper: without them, no judged network.
  const missing = 'bwrap' in available ? bridgeMissing(bridgeTools(locateProgram)) : undefined;
  if (missing !== undefined) {
    io.err(`agentpolicy sandbox: nothing was run: ${missing}${/seccomp helper/.test(missing) ? ' (it ships with agent-policy in dist/vendor/seccomp, from @anthropic-ai/sandbox-runtime: reinstall, or npm ci in a checkout)' : ''}`);
    return SANDBOX_FAILED;
  }

  // The editor window for the workspace, if one runs: it answers the hosts no rule decides, and says what the hook would read.
  const editor = findEditor(workspaceFolder);
  const layers: Partial<Record<LayerName, PolicyLayer>> = {};
  const policyFiles: string[] = [];
  const load = (file: string | undefined, layer: LayerName): void => {
    if (file === undefined) return;
    policyFiles.push(file);
    layers[layer] = loadPolicyText(fs.readFileSync(file, 'utf8'), path.relative(io.cwd, file) || file, layer);
  };
  // The system managed policy when it counts; the file --managed, the editor or the variable names only without one.
  const trialFile = named(values.managed, '--managed') ?? existingFile(editor?.managedPolicyFile) ?? existingFile(nonEmpty(env.AGENTPOLICY_MANAGED_POLICY));
  const trialFrom = values.managed !== undefined ? '--managed' : existingFile(editor?.managedPolicyFile) !== undefined ? 'the editor' : 'AGENTPOLICY_MANAGED_POLICY';
  load(cliManagedPolicy(trialFile !== undefined ? { file: trialFile, from: trialFrom } : undefined, { err: io.err, cwd: io.cwd, env }).file, 'managed');
  load(policyFile, 'workspace');
  load(named(values.user, '--user') ?? existingFile(editor?.userPolicyFile) ?? existingFile(nonEmpty(env.AGENTPOLICY_USER_POLICY)), 'user');
  const invalid = Object.values(layers).filter((l) => !l.valid);
  if (invalid.length > 0) {
    for (const layer of invalid) {
      const lines = new LineMap(layer.parsed.text);
      for (const d of layer.diagnostics) io.err(formatDiagnostic(toJson(d, lines)));
    }
    io.err(`agentpolicy sandbox: nothing was run: ${invalid.map((l) => l.file).join(', ')} ${invalid.length === 1 ? 'is' : 'are'} invalid, so the sandbox it makes is not known`);
    return SANDBOX_FAILED;
  }
  const policy = new Policy(layers);
  const trusted = values.untrusted !== true && editor?.trusted !== false;
  const home = nonEmpty(env.HOME) ?? os.homedir();
  const policyName = policyFile !== undefined ? path.relative(workspaceFolder, policyFile) || policyFile : '.agentpolicy.jsonc';

  const connections = judgeConnections({
    policy, line, agent, workspaceFolder, trusted, editor, policyName,
    say: (text) => io.err(`agentpolicy sandbox: ${text}`),
  });
  const shell = commandShell(findBash());
  let prepared: PreparedSandbox;
  try {
    prepared = await prepareSandbox(workspaceFolder, cwd, {
      network: false, judgesHosts: true, protectedWritable: false,
      // The agent control and persistence files, the home folder's start-up files, the policy's persistenceFiles and the policy files themselves.
      protectedFiles: [...protectedPathsOf(workspaceFolder, policy.persistenceFiles(), home), ...policyFiles],
      connections: { judge: connections.judge, namedHosts: policy.namedHosts() },
      unreadable: () => policyDeniedPaths(policy, workspaceFolder, home).paths,
      home,
      ...(passEnv.length > 0 ? { env: passEnv } : {}),
    }, shell);
  } catch (error) {
    if (error instanceof SandboxUnavailableError) {
      io.err(`agentpolicy sandbox: nothing was run: there is no sandbox here: ${error.message}`);
      return SANDBOX_FAILED;
    }
    throw error;
  }
  let exitCode: number;
  try {
    if (prepared.networkMissing !== undefined) {
      io.err(`agentpolicy sandbox: nothing was run: ${prepared.networkMissing}`);
      return SANDBOX_FAILED;
    }
    const result = await runSandboxedProcess({ launch: prepared.launch, shell, command: line, cwd, env });
    if (!result.ran) io.err(`agentpolicy sandbox: ${result.reason}`);
    exitCode = result.ran ? result.exitCode : SANDBOX_FAILED;
  } finally {
    connections.close();
    await prepared.close();
  }
  // The command and every process it started have ended: undo what the mounts could not stop (as run_command does).
  const cleanup = undoProtectedChanges(prepared.watch, true);
  for (const what of [...cleanup.undone, ...cleanup.left]) io.err(`agentpolicy sandbox: ${what}`);
  return exitCode;
}

interface JudgeScope {
  policy: Policy;
  line: string;
  agent: string;
  workspaceFolder: string;
  trusted: boolean;
  editor: EditorEndpoint | undefined;
  /** The workspace policy's file, as the message suggesting a rule names it. */
  policyName: string;
  /** One line on stderr. */
  say: (text: string) => void;
}

/**
 * The judge of the command's connections: the policy's rules with `domains`/`urls`; a host none
 * decides is asked in the editor (one question per host and port; an Allow holds for the rest of
 * the run), else refused. Every refusal is said once per host and port.
 */
export function judgeConnections(scope: JudgeScope): { judge: ConnectionJudge; close(): void } {
  const { policy, line, agent, workspaceFolder, trusted, editor } = scope;
  const answered = new Map<string, Promise<ConnectionAnswer>>();
  const told = new Set<string>();
  const open = new Set<AbortController>();
  let closed = false;
  const refuse = (key: string, why: string): ConnectionAnswer => {
    if (!told.has(key)) {
      told.add(key);
      scope.say(`refused the connection to ${key}: ${why}`);
    }
    return { allow: false, reason: why };
  };
  // A unique session per run: the window's "Allow for Session" then lasts as long as this run.
  const hostSession = `agentpolicy-sandbox-${process.pid}-${Date.now().toString(36)}`;
  const ruleToAdd = (host: string): string =>
    `to allow it, add to ${scope.policyName}: { "decision": "allow", "tools": ["builtin.run_command"], "domains": [${JSON.stringify(host.toLowerCase())}] }`;

  const ask = async (target: ConnectionTarget, decided: ConnectionDecision, key: string): Promise<ConnectionAnswer> => {
    if (!editor) return refuse(key, `no rule decides it and no editor window runs for ${workspaceFolder} to ask; ${ruleToAdd(target.host)}`);
    const host: HostAgent = isHostAgent(agent) ? agent : 'vscode';
    const input = { command: line, url: connectionUrl(target) };
    const request: EditorAsk = {
      host, hostLabel: HOSTS[host].label, hostSession, toolId: 'builtin.run_command', toolName: 'agentpolicy sandbox',
      input, summary: `${target.host}:${target.port} ← ${line}`,
      reason: `agentpolicy sandbox: the command wants to reach ${target.host}:${target.port}, which no rule decides${decided.reason !== undefined ? ` (${decided.reason})` : ''}`,
      rule: decided.rule, ...(decided.rule === null ? { defaultFrom: null } : {}),
      ...(agent !== host ? { agent } : {}),
      remember: 'session', timeoutSeconds: SANDBOX_ASK_TIMEOUT_SECONDS, onTimeout: 'deny',
    };
    const abort = new AbortController();
    open.add(abort);
    try {
      const answer = (await askEditor(editor, request, Date.now() + SANDBOX_ASK_TIMEOUT_SECONDS * 1000, abort.signal))?.answer;
      if (answer !== undefined && answer !== 'deny') return { allow: true };
      if (answer === 'deny') return refuse(key, `a person denied it in the editor; ${ruleToAdd(target.host)}`);
      return refuse(key, `no answer in the editor${closed ? ' (the command ended)' : ''}; ${ruleToAdd(target.host)}`);
    } finally {
      open.delete(abort);
    }
  };

  const judgeNow = (target: ConnectionTarget): ConnectionDecision => policy.judgeConnection(line, target, agent, { workspaceFolder, trusted, sandbox: true });
  // A line the plain-list reader cannot split needs the shell parser: loaded only then (it costs a WebAssembly compile), as the hook does.
  const judged = async (target: ConnectionTarget): Promise<ConnectionDecision> => {
    try {
      return judgeNow(target);
    } catch {
      await initShellParser({ shortLived: true });
      return judgeNow(target);
    }
  };

  const judge: ConnectionJudge = async (target) => {
    const key = `${target.host.toLowerCase()}:${target.port}`;
    if (closed) return { allow: false, reason: 'the command has ended' };
    let decided: ConnectionDecision;
    try {
      decided = await judged(target);
    } catch (error) {
      return refuse(key, `the connection could not be judged (${error instanceof Error ? error.message : String(error)})`);
    }
    if (decided.decision === 'allow') return { allow: true };
    if (decided.decision === 'deny') {
      const by = decided.rule ? `the rule ${decided.rule.id !== null ? `"${decided.rule.id}"` : `#${decided.rule.index + 1}`} (${decided.rule.file}:${decided.rule.line})` : 'the policy';
      return refuse(key, `denied by ${by}${decided.reason !== undefined ? `: ${decided.reason}` : ''}`);
    }
    let pending = answered.get(key);
    if (!pending) answered.set(key, (pending = ask(target, decided, key)));
    return pending;
  };

  return {
    judge,
    close: () => {
      closed = true;
      for (const abort of open) abort.abort();
    },
  };
}


function existingFile(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    return fs.statSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' ? value : undefined;
}
