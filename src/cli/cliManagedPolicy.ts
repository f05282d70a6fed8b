// The managed policy a command judges with (managedInForce.ts): the system's when it counts, else
// the `--managed` file (or the one the editor or AGENTPOLICY_MANAGED_POLICY names); each warning
// (a system file ignored and why, a trial file not in force) printed once on stderr.
import * as path from 'node:path';
import { managedPolicyInForce, type ManagedInForce } from '../policy/system/managedInForce.js';

export interface CliManagedIo {
  err: (line: string) => void;
  cwd: string;
  env?: NodeJS.ProcessEnv;
}

/** `trial`: the file a person names and what named it (`--managed`, …), relative to the folder the command runs in. */
export function cliManagedPolicy(trial: { file: string; from: string } | undefined, io: CliManagedIo): ManagedInForce {
  const inForce = managedPolicyInForce(trial !== undefined ? { file: path.resolve(io.cwd, trial.file), from: trial.from } : undefined, { env: io.env ?? process.env });
  for (const warning of inForce.warnings) io.err(`agentpolicy: warning: ${warning}`);
  return inForce;
}
