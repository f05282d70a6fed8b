// Everything `agentpolicy check` (and the editor's Problems panel) reports for one policy file.
import type { Diagnostic } from '../file/diagnostics.js';
import { runInlineTests, testDiagnostics } from './inlineTests.js';
import { lintShadowed, lintSpawnDenied, type AgentSpawnInfo } from './lint.js';
import type { PolicyLayer } from '../policy.js';

export interface CheckOptions {
  /** The agents of the workspace, for `spawn-denied`. */
  agents?: readonly AgentSpawnInfo[];
  workspaceFolder: string;
  /** Run the inline tests too (default true). */
  runTests?: boolean;
}

/** Structural diagnostics, then (for a valid file) lint and failing inline tests, in file order. */
export function checkPolicyLayer(layer: PolicyLayer, options: CheckOptions): Diagnostic[] {
  const out = [...layer.diagnostics];
  if (layer.valid) {
    out.push(...lintShadowed(layer));
    if (options.agents) out.push(...lintSpawnDenied(layer, options.agents, options.workspaceFolder));
    if (options.runTests ?? true) out.push(...testDiagnostics(layer, runInlineTests(layer, options.workspaceFolder)));
  }
  return out.sort((a, b) => a.offset - b.offset);
}
