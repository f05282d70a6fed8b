// The system managed policy: `managed.agentpolicy.jsonc` in a fixed folder an administrator owns
// (where Claude Code keeps its managed settings, in our own folder), and whether it counts
// (adminOnly.ts). The folder can be named by AGENTPOLICY_SYSTEM_DIR, for tests: honoured only
// where the fixed folder holds no policy file and the named one passes the same ownership check,
// so it can add an administrator's file where there is none, never replace or hide one.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { adminOnlyFile } from './adminOnly.js';

export const SYSTEM_POLICY_NAME = 'managed.agentpolicy.jsonc';
export const SYSTEM_DIR_VARIABLE = 'AGENTPOLICY_SYSTEM_DIR';

/** What the system managed policy is read with: the platform and the environment (default: this process's). */
export interface SystemPolicyOptions {
  platform?: NodeJS.Platform;
  env?: NodeJS.ProcessEnv;
  /** Instead of the platform's fixed folder: for tests only, set by code, never from outside. */
  fixedDir?: string;
}

/** The fixed folder: as Claude Code's managed settings (Linux and WSL, macOS, Windows). */
export function systemPolicyDir(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return '/Library/Application Support/AgentPolicy';
  // Fixed, not %ProgramData%: a variable the user sets would move it.
  if (platform === 'win32') return 'C:\\ProgramData\\AgentPolicy';
  return '/etc/agentpolicy';
}

/**
 * The system managed policy: `in-force` (with how it was checked), `ignored` (why), or `none`
 * (no file where it would be). `notes`: the test variable ignored, and why.
 */
export type SystemManagedPolicy =
  | { kind: 'none'; file: string; notes: string[] }
  | { kind: 'in-force'; file: string; checked: string; notes: string[] }
  | { kind: 'ignored'; file: string; reason: string; notes: string[] };

export function systemManagedPolicy(options: SystemPolicyOptions = {}): SystemManagedPolicy {
  const platform = options.platform ?? process.platform;
  const env = options.env ?? process.env;
  const join = platform === 'win32' ? path.win32.join : path.posix.join;
  const fixed = join(options.fixedDir ?? systemPolicyDir(platform), SYSTEM_POLICY_NAME);
  const notes: string[] = [];
  let file = fixed;
  const named = env[SYSTEM_DIR_VARIABLE]?.trim();
  if (named) {
    if (platform === 'win32') notes.push(`${SYSTEM_DIR_VARIABLE} is ignored on Windows, where a folder's owner cannot be checked`);
    else if (!path.posix.isAbsolute(named)) notes.push(`${SYSTEM_DIR_VARIABLE} is ignored: ${named} is not an absolute path`);
    else if (present(fixed)) notes.push(`${SYSTEM_DIR_VARIABLE} is ignored: ${fixed} exists, and the variable never replaces it`);
    else file = path.posix.join(named, SYSTEM_POLICY_NAME);
  }
  if (!present(file)) return { kind: 'none', file, notes };
  if (platform === 'win32') {
    return { kind: 'in-force', file, checked: 'not checked: on Windows its owner and access list cannot be read here (docs/teams.md)', notes };
  }
  const owned = adminOnlyFile(file, platform);
  if (!owned.ok) return { kind: 'ignored', file, reason: owned.reason, notes };
  return { kind: 'in-force', file, checked: 'owned by root, and no one else can change it or its folders', notes };
}

/** Whether anything is at that path (a dangling symlink or an unreadable one counts: it is then ignored, with the reason). */
function present(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR';
  }
}
