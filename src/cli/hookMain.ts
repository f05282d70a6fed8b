// `agentpolicy hook --agent HOST [--timeout S] [--policy F] [--workspace DIR] [--managed F]
// [--user F] [--audit F] [--untrusted]`: the hook a host runs before each tool call. Bundled on
// its own (dist/hook.js) and loaded by main.ts only for this command: a host starts it for every
// call, so it loads the policy engine and nothing else.
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { isHostAgent, HOST_AGENTS, type HostAgent } from '../hooks/hosts/hostAgents.js';
import { editorFor } from '../hooks/editor/editorBridge.js';
import { blocked, runHook, type HookDeps, type HookOptions } from '../hooks/judge/hookCommand.js';
import { initShellParser } from '../policy/shell/shellParser.js';
import { flushTelemetry, telemetryStatus } from '../runtime/telemetry/auditTelemetry.js';

export const HOOK_USAGE = `usage:
  agentpolicy hook --agent ${HOST_AGENTS.join('|')} [--timeout S] [--policy F] [--workspace DIR]
                   [--managed F] [--user F] [--audit F] [--untrusted]
      reads the host's hook input on stdin, answers in the host's format on stdout
  agentpolicy hook install --agent A[,B…] [--workspace DIR] [--command CMD] [--timeout S] [--remove] [--dry-run]
  agentpolicy hook status [--workspace DIR] [--json]`;

export interface HookProcess {
  argv: readonly string[];
  readStdin: () => string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  out: (text: string) => void;
  err: (line: string) => void;
  findEditor?: HookDeps['findEditor'];
  /** Ends the process at once with this code: after a telemetry export's bounded flush, what it still sends is cut. */
  end?: (code: number) => void;
}

/** The variable that bounds the hook's telemetry flush, in milliseconds (0 to HOOK_FLUSH_MAX_MS). */
export const HOOK_FLUSH_ENV = 'AGENTPOLICY_TELEMETRY_HOOK_FLUSH_MS';
/** How long the short-lived hook gives its telemetry after its answer is out, unless HOOK_FLUSH_ENV says otherwise. */
export const HOOK_FLUSH_MS = 200;
const HOOK_FLUSH_MAX_MS = 2000;

/** Runs the hook; resolves to the exit code. Usage errors still answer the host with a block. */
export async function hookMain(p: HookProcess): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...p.argv],
      options: {
        agent: { type: 'string' }, timeout: { type: 'string' }, policy: { type: 'string' }, workspace: { type: 'string' },
        managed: { type: 'string' }, user: { type: 'string' }, audit: { type: 'string' }, untrusted: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (error) {
    // The host is still owed a blocking answer in its own format, when the line names one.
    const named = agentNamed(p.argv);
    return usage(p, (error as Error).message, named !== undefined && isHostAgent(named) ? named : undefined);
  }
  if (values.help === true) {
    p.out(`${HOOK_USAGE}\n`);
    return 0;
  }
  const agent = values.agent;
  if (typeof agent !== 'string' || !isHostAgent(agent)) return usage(p, `--agent must be one of ${HOST_AGENTS.join(', ')}`);
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) return usage(p, '--timeout takes a number of seconds above 0', agent);
  const str = (name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const options: HookOptions = {
    agent,
    ...(timeout !== undefined ? { timeoutSeconds: timeout } : {}),
    ...(str('policy') !== undefined ? { policyFile: str('policy')! } : {}),
    ...(str('workspace') !== undefined ? { workspace: str('workspace')! } : {}),
    ...(str('managed') !== undefined ? { managedFile: str('managed')! } : {}),
    ...(str('user') !== undefined ? { userFile: str('user')! } : {}),
    ...(str('audit') !== undefined ? { auditFile: str('audit')! } : {}),
    ...(values.untrusted === true ? { untrusted: true } : {}),
  };
  let stdin: string;
  try {
    stdin = p.readStdin();
  } catch (error) {
    stdin = '';
    p.err(`agentpolicy hook: stdin could not be read (${(error as Error).message})`);
  }
  const loadShellParser = async (): Promise<void> => {
    try {
      await initShellParser({ shortLived: true });
    } catch (error) {
      // Without the parser every command that is not a plain list is unparseable, so never allowed: safe, and said.
      p.err(`agentpolicy hook: the shell parser could not be loaded (${(error as Error).message})`);
    }
  };
  const result = await runHook(options, { stdin, env: p.env, cwd: p.cwd, loadShellParser, findEditor: p.findEditor ?? editorFor });
  if (result.stderr !== undefined) p.err(result.stderr);
  p.out(result.stdout);
  // Decisions in OpenTelemetry (docs/teams.md): the answer is out; the lines it exported get a
  // bounded moment to reach the collector, then the process ends whatever is still in flight.
  if (telemetryStatus() !== undefined) {
    await flushTelemetry(hookFlushMs(p.env));
    p.end?.(result.exitCode);
  }
  return result.exitCode;
}

/**
 * A hook entry with a wrong command line must still block: a deny in the host's format when the
 * host is known, else exit 2 (which blocks in Claude Code, Copilot CLI, VS Code and Cursor).
 */
function usage(p: HookProcess, message: string, agent?: HostAgent): number {
  p.err(`agentpolicy hook: ${message}`);
  p.err(HOOK_USAGE);
  if (agent === undefined) return 2;
  const answer = blocked(agent, 'PreToolUse', `the hook's command line is wrong (${message})`);
  p.out(answer.stdout);
  return answer.exitCode;
}

function agentNamed(argv: readonly string[]): string | undefined {
  const at = argv.indexOf('--agent');
  if (at !== -1) return argv[at + 1];
  return argv.find((a) => a.startsWith('--agent='))?.slice('--agent='.length);
}

/** The process's own stdin, whole. */
export function readProcessStdin(): string {
  return fs.readFileSync(0, 'utf8');
}

/** The hook's telemetry flush bound: HOOK_FLUSH_ENV when it is a number in range, else HOOK_FLUSH_MS. */
export function hookFlushMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env[HOOK_FLUSH_ENV]);
  return env[HOOK_FLUSH_ENV] !== undefined && env[HOOK_FLUSH_ENV]!.trim() !== '' && Number.isFinite(n) && n >= 0 ? Math.min(n, HOOK_FLUSH_MAX_MS) : HOOK_FLUSH_MS;
}
