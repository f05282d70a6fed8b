// The builtin run_command tool: confines its cwd to the workspace folder, then hands the command
// to the process runner (commandProcess.ts), inside the sandbox when the call's context says so
// (sandboxLaunch.ts → the run → sandboxCleanup.ts; docs/sandbox.md, docs/network.md).
import { z } from 'zod';
import { CommandStartError, commandShell, findBash, runCommandProcess, type CommandProcessResult, type CommandShell } from '../sandbox/commandProcess.js';
import { approvedChangeMark, undoProtectedChanges, type CleanupReport } from '../sandbox/sandboxCleanup.js';
import { prepareSandbox, SandboxUnavailableError, type PreparedSandbox } from '../sandbox/sandboxLaunch.js';
import { cleanupNote, sandboxLimitNote, type CommandSandboxReport } from '../sandbox/sandboxNote.js';
import { withInputSchema } from './toolInputSchema.js';
import { zodTool, type RuntimeTool, type ToolRunContext } from './tools.js';
import { confineExisting } from './workspacePaths.js';

const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_TIMEOUT_MS = 60 * 60_000;
const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

/** What the start of stderr says when a command ran with /bin/sh because there is no bash. */
export const NO_BASH_STDERR_NOTE = '[run_command: bash is not installed on this machine, so this command ran with /bin/sh -c]\n';

/** What run_command returns: the process's result, and how it ran (sandboxed or not, with or without network). */
export type RunCommandResult = CommandProcessResult & { sandbox: CommandSandboxReport };

const RunCommandInput = z.strictObject({
  command: z.string().min(1).describe('A command line, run by bash -c (bash syntax).'),
  cwd: z.string().min(1).optional().describe('Working directory, relative to the workspace folder. Default: the workspace folder.'),
  timeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional().describe('Time limit in milliseconds.'),
});

async function runCommand(
  input: z.infer<typeof RunCommandInput>,
  context: ToolRunContext,
  defaultTimeoutMs: number,
  maxOutputBytes: number,
  shell: CommandShell,
): Promise<RunCommandResult> {
  const tool = 'run_command';
  const cwdArg = input.cwd ?? '.';
  const { confined: cwd, stats: st } = await confineExisting(context.workspaceFolder, tool, 'cwd', cwdArg);
  if (!st.isDirectory()) throw new Error(`${tool}: cwd ${JSON.stringify(cwdArg)} is not a directory`);

  const sandbox = context.sandbox;
  let prepared: PreparedSandbox | undefined;
  if (sandbox) {
    try {
      prepared = await prepareSandbox(context.workspaceFolder, cwd.absolute, sandbox, shell);
    } catch (error) {
      if (error instanceof SandboxUnavailableError) throw new Error(`${tool}: this command was to run in the sandbox, but ${error.message}`);
      throw error;
    }
  }
  const watch = prepared?.watch;
  const mark = approvedChangeMark();
  let result: CommandProcessResult;
  try {
    result = await runCommandProcess({
      command: input.command,
      shell,
      cwd: cwd.absolute,
      timeoutMs: input.timeoutMs ?? defaultTimeoutMs,
      maxOutputBytes,
      signal: context.signal,
      ...(prepared ? { sandbox: prepared.launch } : {}),
    });
  } catch (error) {
    // Whatever bwrap got to run before it failed is checked all the same.
    if (watch) {
      const cleanup = undoProtectedChanges(watch, mark.quiet());
      if (cleanup.undone.length > 0 || cleanup.left.length > 0) sandbox?.onUndone?.(cleanup.undone, cleanup.left);
    }
    if (error instanceof CommandStartError) throw new Error(`${tool}: ${error.message}`);
    throw error;
  } finally {
    await prepared?.close();
  }
  // No bash: a person allowed this command (the no-bash hook asks for every one); say how it ran.
  const stderr = shell.isBash ? result.stderr : NO_BASH_STDERR_NOTE + result.stderr;
  if (!sandbox || !prepared || !watch) return { ...result, stderr, sandbox: { sandboxed: false, network: true } };

  // The command and every process it started have ended (its pid namespace is gone): undo what the mounts could not stop.
  const cleanup: CleanupReport = undoProtectedChanges(watch, mark.quiet());
  if (cleanup.undone.length > 0 || cleanup.left.length > 0) sandbox.onUndone?.(cleanup.undone, cleanup.left);
  const report: CommandSandboxReport = {
    sandboxed: true, network: sandbox.network, ...(prepared.hostsJudged ? { hostsJudged: true } : {}),
    ...(sandbox.protectedWritable ? { protectedWritable: true } : {}),
    ...(cleanup.undone.length > 0 || cleanup.left.length > 0 ? { undone: [...cleanup.undone, ...cleanup.left] } : {}),
  };
  const limit = sandboxLimitNote(result, { ...sandbox, hostsJudged: prepared.hostsJudged });
  const missing = limit !== undefined && prepared.networkMissing !== undefined ? `[sandbox: ${prepared.networkMissing}]` : undefined;
  const notes = [limit, missing, cleanupNote(cleanup.undone, cleanup.left)].filter((n) => n !== undefined);
  const withNotes = notes.length > 0 ? `${stderr}${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}${notes.join('\n')}\n` : stderr;
  return { ...result, stderr: withNotes, sandbox: report };
}

export interface RunCommandToolOptions {
  defaultTimeoutMs?: number;
  maxOutputBytes?: number;
  /** Finds bash (default: findBash, looked for once); undefined: there is none, commands run with /bin/sh. */
  findBash?: () => string | undefined;
}

/**
 * `builtin.run_command`: `bash --noprofile --norc -c -- command` in the workspace folder (or a cwd
 * inside it), bash being the grammar the policy reads commands with. Where there is no bash it
 * says so, the no-bash hook (noBashHook.ts) asks for every call, and an allowed command runs
 * with `/bin/sh -c`.
 */
export function runCommandTool(options: RunCommandToolOptions = {}): RuntimeTool {
  const shell = commandShell((options.findBash ?? findBash)());
  const defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!Number.isInteger(defaultTimeoutMs) || defaultTimeoutMs < 1) throw new Error(`runCommandTool: defaultTimeoutMs must be a positive integer`);
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 1) throw new Error(`runCommandTool: maxOutputBytes must be a positive integer`);
  return withInputSchema(
    zodTool(
      {
        id: 'builtin.run_command',
        kind: 'builtin',
        name: 'run_command',
        description:
          (shell.isBash
            ? `Run a shell command with bash (bash --noprofile --norc -c; write bash syntax), in the workspace folder or in cwd (relative to it). `
            : `Bash is not installed on this machine: every command is asked of a person, and an allowed command runs with /bin/sh -c (POSIX sh syntax only). ` +
              `Run a shell command in the workspace folder or in cwd (relative to it). `) +
          `Returns the exit code, stdout and stderr ` +
          `(each capped at ${maxOutputBytes} bytes; the middle of longer output is cut and the result says so). ` +
          `The command and everything it started are killed after timeoutMs (default ${defaultTimeoutMs} ms) or when the turn is cancelled. ` +
          `A non-zero exit code is a result, not an error. stdin is empty. ` +
          `Where the machine has a sandbox the command may run in it (the result's "sandbox" says): then everything outside the workspace folder ` +
          `(but a private /tmp) and the workspace's protected files (the policy and agents files, .vscode, .git/config, .git/hooks, .github/workflows, .envrc…) are read-only, ` +
          `credential files in the home folder are unreadable and credential variables are withheld, processes it leaves behind end with it, ` +
          `and it reaches the network only through a proxy (HTTP_PROXY/HTTPS_PROXY/ALL_PROXY are set) that lets through the hosts the policy allows and asks a person about others.`,
        inputSchema: RunCommandInput,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
        pathArgs: ['cwd'],
        commandArg: 'command',
      },
      (input, context) => runCommand(input, context, defaultTimeoutMs, maxOutputBytes, shell),
    ),
    RunCommandInput,
  );
}
