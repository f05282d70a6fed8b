// The extension's entry, dist/extension.js, kept small so that activation is quick: it creates
// what a person sees from the first frame (the log, the status bar item, the Open Callbacks
// view), registers every command, and returns. The core (core.ts, bundled as
// dist/extensionCore.js: the policy engine, the runtime and all that needs them) is loaded right
// after; commands wait for it. Nothing here may import the engine or the runtime
// (test/vscode/extensionBundle.test.ts reads what the bundle holds).
import * as vscode from 'vscode';
import { CallbacksView } from './callbacksView.js';
import type { AgentPolicyApi, Core } from './core.js';
import { registerCommands } from './lazyCommands.js';
import { Log } from './log.js';
import { StatusBar } from './statusBar.js';

let loading: Promise<Core> | undefined;

// Set by the bundle's first and last lines (esbuild.mjs); absent when run from source.
declare const __agentPolicyLoadStart: number | undefined;
declare const __agentPolicyLoadEnd: number | undefined;

export function activate(context: vscode.ExtensionContext): Promise<AgentPolicyApi | undefined> {
  const started = performance.now();
  const bundleStart = typeof __agentPolicyLoadStart === 'number' ? __agentPolicyLoadStart : started;
  const log = new Log();
  const status = new StatusBar();
  const callbacks = new CallbacksView();
  const folder = vscode.workspace.workspaceFolders?.[0];
  const workspaceFolder = folder?.uri.scheme === 'file' ? folder.uri.fsPath : process.cwd();
  // A microtask: it runs as soon as VS Code's call to activate() has returned and what was queued
  // before it has run. A plain require, so that the core is evaluated in this microtask (import()
  // would wait one more turn, behind whatever other extensions queued meanwhile).
  const core = Promise.resolve().then(() => {
    const begun = performance.now();
    const { startCore } = require('./core.js') as typeof import('./core.js');
    const evaluated = performance.now();
    const loaded = startCore({ context, log, status, callbacks, workspaceFolder });
    const now = performance.now();
    log.info(`engine ready ${(now - bundleStart).toFixed(1)} ms after the extension's bundle started (waited ${(begun - activated).toFixed(1)} ms for the host, core bundle evaluation ${(evaluated - begun).toFixed(1)} ms, start ${(now - evaluated).toFixed(1)} ms)`);
    return loaded;
  });
  loading = core;
  context.subscriptions.push(log, status, callbacks, ...registerCommands(log, () => core.then((loaded) => loaded.commands)));
  const activated = performance.now();
  // The footer runs at the end of the bundle's evaluation; the gap before activate() is the host's.
  const evaluation = typeof __agentPolicyLoadStart === 'number' && typeof __agentPolicyLoadEnd === 'number' ? __agentPolicyLoadEnd - __agentPolicyLoadStart : 0;
  log.info(`activated in ${(evaluation + activated - started).toFixed(1)} ms (bundle evaluation ${evaluation.toFixed(1)} ms, activate ${(activated - started).toFixed(1)} ms) for ${workspaceFolder}${vscode.workspace.isTrusted ? '' : ' (untrusted: the workspace policy can only tighten)'}; the engine loads next`);
  return core.then(
    (loaded) => loaded.api(),
    (error: unknown) => {
      log.error('the engine could not be loaded', error);
      callbacks.view.message = 'Agent Policy could not start: see Agent Policy: Show Log.';
      void vscode.window.showErrorMessage(`Agent Policy could not start: ${error instanceof Error ? error.message : String(error)}`, 'Open Output').then((picked) => {
        if (picked) log.channel.show();
      });
      return undefined;
    },
  );
}

export async function deactivate(): Promise<void> {
  // Running sessions are not ended here: the audit log shows them as interrupted next time.
  const core = await loading?.catch(() => undefined);
  await core?.host.dispose();
  loading = undefined;
}
