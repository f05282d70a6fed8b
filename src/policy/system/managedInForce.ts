// Which managed policy is in force, and why: the one answer the extension, the CLI, the hooks and
// the decision service all take. The system file (systemPolicy.ts) when it counts; otherwise the
// trial file a person names (the setting `agentPolicy.managedPolicyFile`, `--managed`,
// AGENTPOLICY_MANAGED_POLICY), which anyone who can change those can switch off. A trial file
// never replaces a system file in force: it is ignored, with a warning (docs/teams.md).
import * as path from 'node:path';
import { systemManagedPolicy, type SystemManagedPolicy, type SystemPolicyOptions } from './systemPolicy.js';

/** A managed policy named for trying one out, and what named it (for the warnings). */
export interface TrialManagedPolicy {
  file: string;
  from: string;
}

export interface ManagedInForce {
  /** The managed layer's file (absolute when the trial's was), or undefined: no managed layer. */
  file?: string;
  from: 'system' | 'trial' | 'none';
  /** One line: which managed policy is in force and from where (the status bar, `agentpolicy check`). */
  line: string;
  /** A system file ignored and why; a trial file not in force because the system's is. */
  warnings: string[];
  system: SystemManagedPolicy;
}

export function managedPolicyInForce(trial: TrialManagedPolicy | undefined, options: SystemPolicyOptions = {}): ManagedInForce {
  const system = systemManagedPolicy(options);
  const warnings = [...system.notes];
  if (system.kind === 'in-force') {
    if (trial !== undefined && path.resolve(trial.file) !== path.resolve(system.file)) {
      warnings.push(`${trial.from} names ${trial.file}, which is not in force: the system managed policy ${system.file} is, and a trial file cannot replace it`);
    }
    return { file: system.file, from: 'system', line: `managed policy: ${system.file} (the system's; ${system.checked})`, warnings, system };
  }
  if (system.kind === 'ignored') {
    warnings.push(`the system managed policy ${system.file} is ignored: ${system.reason} (docs/teams.md says how to set its owner and mode)`);
  }
  if (trial !== undefined) {
    return { file: trial.file, from: 'trial', line: `managed policy: ${trial.file} (from ${trial.from}, for trying one out; not the system's)`, warnings, system };
  }
  const none = system.kind === 'ignored' ? `none in force (${system.file} is ignored)` : `none (no ${system.file})`;
  return { from: 'none', line: `managed policy: ${none}`, warnings, system };
}
