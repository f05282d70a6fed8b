// The extension's entry, dist/extension.js, kept small so that activation is quick: it creates
// what a person sees from the first frame (the log, the status bar item, the Open Callbacks
// view), registers every command, and returns. The core (core.ts, bundled as
// dist/extensionCore.js: the policy engine, the runtime and all that needs them) is started right
// after; commands wait for it. Nothing here may import the engine or the runtime
// (test/vscode/extensionBundle.test.ts reads what the bundle holds).
import * as vscode from 'vscode';
import { CallbacksView } from './asks/callbacksView.js';
import type { AgentPolicyApi, Core } from './core.js';
import { registerCommands } from './lazyCommands.js';
import { Log } from './basics/log.js';
import { StatusBar } from './asks/statusBar.js';
import { openWalkthroughOnFirstActivation } from './walkthrough.js';

// Set by the bundle's first and last lines (esbuild.mjs); absent when run from source.
declare const __agentPolicyLoadStart: number | undefined;
declare const __agentPolicyLoadEnd: number | undefined;

type CoreModule = typeof import('./core.js');

/** The core bundle, evaluated once; when, and how long it took. */
let coreModule: { module: CoreModule; evaluatedAt: number; ms: number; beforeActivate: boolean } | undefined;
let activateCalled = false;

function requireCore(): NonNullable<typeof coreModule> {
  if (!coreModule) {
    const begun = performance.now();
    // A plain require: the bundler makes it `require('./extensionCore.js')`, the bundle beside this one.
    const module = require('./core.js') as CoreModule;
    const now = performance.now();
    coreModule = { module, evaluatedAt: now, ms: now - begun, beforeActivate: !activateCalled };
  }
  return coreModule;
}

// Before it calls activate(), VS Code reads the extension's storage from the window, which takes
// hundreds of milliseconds on a busy machine. When the host has nothing else to do in that wait,
// the core is evaluated then, as the single bundle was before, so that the engine is ready no later
// than it was; when activate() comes first, the core is evaluated right after it instead.
setImmediate(() => {
  try {
    requireCore();
  } catch {
    // activate() loads it again and reports why it cannot.
  }
});

let loading: Promise<Core> | undefined;

export function activate(context: vscode.ExtensionContext): Promise<AgentPolicyApi | undefined> {
  activateCalled = true;
  const started = performance.now();
  const bundleStart = typeof __agentPolicyLoadStart === 'number' ? __agentPolicyLoadStart : started;
  const log = new Log();
  const status = new StatusBar();
  const callbacks = new CallbacksView();
  const folder = vscode.workspace.workspaceFolders?.[0];
  const workspaceFolder = folder?.uri.scheme === 'file' ? folder.uri.fsPath : process.cwd();
  // A microtask: it runs as soon as VS Code's call to activate() has returned (and what was queued
  // before it has run), not a turn of the event loop later.
  const core = Promise.resolve().then(() => {
    const evaluated = requireCore();
    const begun = performance.now();
    const loaded = evaluated.module.startCore({ context, log, status, callbacks, workspaceFolder });
    const now = performance.now();
    const when = evaluated.beforeActivate ? 'while the host prepared activate()' : 'after activate()';
    log.info(`engine ready ${(now - bundleStart).toFixed(1)} ms after the extension's bundle started (core bundle evaluated ${when} in ${evaluated.ms.toFixed(1)} ms, started in ${(now - begun).toFixed(1)} ms)`);
    return loaded;
  });
  loading = core;
  context.subscriptions.push(log, status, callbacks, ...registerCommands(log, () => core.then((loaded) => loaded.commands)));
  openWalkthroughOnFirstActivation(context.globalState);
  const activated = performance.now();
  // The footer runs at the end of the bundle's evaluation; the gap before activate() is the host's.
  const evaluation = typeof __agentPolicyLoadStart === 'number' && typeof __agentPolicyLoadEnd === 'number' ? __agentPolicyLoadEnd - __agentPolicyLoadStart : 0;
  log.info(`activated in ${(evaluation + activated - started).toFixed(1)} ms (bundle evaluation ${evaluation.toFixed(1)} ms, activate ${(activated - started).toFixed(1)} ms) for ${workspaceFolder}${vscode.workspace.isTrusted ? '' : ' (untrusted: the workspace policy can only tighten)'}`);
  return core.then(
    (loaded) => loaded.api(),
    (error: unknown) => {
      log.error('the engine could not be loaded', error);
      callbacks.view.message = vscode.l10n.t('Agent Policy could not start: see Agent Policy: Show Log.');
      const message = vscode.l10n.t('Agent Policy could not start: {0}', error instanceof Error ? error.message : String(error));
      void vscode.window.showErrorMessage(message, vscode.l10n.t('Open Output')).then((picked) => {
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
