// Claude Code's pre-tool hook as Claude Code runs it: the built `agentpolicy hook --agent claude`
// (dist/cli.js) given Claude Code's hook input for a Bash call in the workspace. It finds the
// window of the folder and asks there; what a person clicks is what it answers.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO, type VsCode } from './harness';

/** The Claude Code session every call of these tests comes from. */
export const CLAUDE_SESSION = 'b9adf915-4c1a-4e2e-9d7e-0123456789ab';

/** A fresh state folder for the hook (its XDG_STATE_HOME) per test, removed after it; call the result for its path. */
export function useStateFolder(prefix: string): () => string {
  let dir = '';
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}

export interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the hook as Claude Code would for a Bash call in the workspace; resolves when it has answered. */
export function claudeHook(v: VsCode, state: string, command: string): Promise<HookRun> {
  const stdin = JSON.stringify({
    session_id: CLAUDE_SESSION, transcript_path: path.join(state, 'transcript.jsonl'), cwd: v.workspace, permission_mode: 'default',
    hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: `toolu_${command.length}`,
  });
  const child = spawn(process.execPath, [path.join(REPO, 'dist', 'cli.js'), 'hook', '--agent', 'claude', '--timeout', '120'], {
    cwd: v.workspace, env: { ...process.env, XDG_STATE_HOME: state, CLAUDE_PROJECT_DIR: v.workspace }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** What our sandbox rewrite adds to the reason of an allowed Bash call (src/hooks/judge/hookCommand.ts). */
const SANDBOX_NOTE = "; runs in Agent Policy's sandbox (agentpolicy sandbox)";

/**
 * The hook's answer: its decision, its reason without the sandbox clause, and whether the allowed
 * command was rewritten to run in our sandbox (the clause and an updatedInput running `sandbox`).
 */
export function decisionOf(run: HookRun): { decision?: string; reason?: string; sandboxed?: boolean } {
  const out = JSON.parse(run.stdout || '{}') as {
    hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string; updatedInput?: { command?: string } };
  };
  const decision = out.hookSpecificOutput?.permissionDecision;
  const said = out.hookSpecificOutput?.permissionDecisionReason;
  if (decision !== 'allow') return { decision, reason: said };
  const rewritten = / 'sandbox' '--workspace' /.test(out.hookSpecificOutput?.updatedInput?.command ?? '');
  const noted = said?.endsWith(SANDBOX_NOTE) ?? false;
  return { decision, reason: noted ? said!.slice(0, -SANDBOX_NOTE.length) : said, sandboxed: rewritten && noted };
}
