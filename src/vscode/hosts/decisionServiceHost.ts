// The decision service (src/hooks/service/decisionService.ts) run by this window while it is open, so other
// agents' hooks are answered without a process per call: one per user, so a window starts it only
// when none answers (another window, or `agentpolicy serve`), and looks again every half minute
// (the window that ran it may have closed). Off with `agentPolicy.decisionService: false`.
import * as vscode from 'vscode';
import { startDecisionService, type DecisionService } from '../../hooks/service/decisionService.js';
import { serviceRuns } from '../../hooks/state/serviceFiles.js';
import { defaultStateDir } from '../../hooks/state/stateDir.js';
import type { Log } from '../basics/log.js';

const LOOK_AGAIN_MS = 30_000;

/** `shellReady`: the window's own load of the shell parser (its files are in the extension's folder), done before the service loads it. */
export function startDecisionServiceHost(options: { workspaceFolder: string; log: Log; shellReady: () => Promise<void> }): vscode.Disposable {
  const { workspaceFolder, log, shellReady } = options;
  const stateDir = defaultStateDir(process.env);
  let service: DecisionService | undefined;
  let starting = false;
  let disposed = false;
  let lastProblem = '';
  const enabled = (): boolean => vscode.workspace.getConfiguration('agentPolicy').get<boolean>('decisionService', true);

  const ensure = async (): Promise<void> => {
    if (disposed || starting || service !== undefined || !enabled()) return;
    starting = true;
    try {
      if ((await serviceRuns(stateDir)) !== undefined) return;
      await shellReady();
      const started = await startDecisionService({ stateDir, workspace: workspaceFolder });
      if (disposed) {
        await started.close();
        return;
      }
      service = started;
      lastProblem = '';
      log.info(`the decision service answers other agents' hooks from this window (${started.address})`);
    } catch (error) {
      // Another window may have won the race; anything else is said once.
      const problem = error instanceof Error ? error.message : String(error);
      if (problem !== lastProblem && !/already runs/.test(problem)) log.warn(`the decision service could not start in this window: ${problem}`);
      lastProblem = problem;
    } finally {
      starting = false;
    }
  };
  const stop = async (): Promise<void> => {
    const s = service;
    service = undefined;
    await s?.close();
  };

  void ensure();
  const timer = setInterval(() => void ensure(), LOOK_AGAIN_MS);
  const configuration = vscode.workspace.onDidChangeConfiguration((e) => {
    if (!e.affectsConfiguration('agentPolicy.decisionService')) return;
    if (enabled()) void ensure();
    else void stop();
  });
  return new vscode.Disposable(() => {
    disposed = true;
    clearInterval(timer);
    configuration.dispose();
    void stop();
  });
}
