// The extension's entry stays small and starts the core after activation: its bundle holds
// neither zod, nor the policy engine, nor the runtime (esbuild's metafile says what each bundle
// holds), and every contributed command is registered before the core starts; a command run
// before the core is there waits for it, then runs the core's handler.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.join(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  main: string;
  publisher: string;
  name: string;
  contributes: { commands: Array<{ command: string }>; views: Record<string, Array<{ id: string }>> };
};

interface Bundle {
  code: string;
  /** The files it holds, relative to the repository. */
  inputs: string[];
}

async function build(out: string): Promise<Bundle> {
  const { entries, bundleOptions } = (await import(pathToFileURL(path.join(root, 'scripts', 'bundles.mjs')).href)) as {
    entries: Array<{ out: string }>;
    bundleOptions: (entry: { out: string }) => esbuild.BuildOptions;
  };
  const entry = entries.find((e) => e.out === out);
  assert.ok(entry, `scripts/bundles.mjs has no entry ${out}`);
  const result = await esbuild.build({ ...bundleOptions(entry), sourcemap: false, write: false, metafile: true, logLevel: 'silent', absWorkingDir: root });
  const js = result.outputFiles.find((f) => f.path.endsWith(`${out}.js`));
  assert.ok(js);
  return { code: js.text, inputs: Object.keys(result.metafile.inputs) };
}

/** What activate() did with a stand-in for VS Code's API and for the core bundle. */
interface Run {
  exports: { activate: (context: unknown) => Promise<unknown>; deactivate: () => Promise<void> };
  commands: Map<string, (...args: unknown[]) => unknown>;
  /** How many times the core bundle was evaluated. */
  coreEvaluations: number;
  /** Each time the core was started: how many commands were registered then. */
  coreStarts: number[];
  /** Core handlers run, by name, with their arguments. */
  ran: Array<[string, unknown[]]>;
  executed: unknown[][];
  logShown: number;
  errors: string[];
  hostDisposed: number;
}

function evaluate(code: string, core: 'loads' | 'fails', settings: Record<string, unknown> = {}): Run {
  const run: Run = { exports: undefined as never, commands: new Map(), coreEvaluations: 0, coreStarts: [], ran: [], executed: [], logShown: 0, errors: [], hostDisposed: 0 };
  class EventEmitter {
    private listeners: Array<(e: unknown) => void> = [];
    event = (listener: (e: unknown) => void) => {
      this.listeners.push(listener);
      return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
    };
    fire(e: unknown): void {
      for (const l of this.listeners) l(e);
    }
    dispose(): void {}
  }
  const vscode = {
    EventEmitter,
    ThemeColor: class {},
    StatusBarAlignment: { Left: 1, Right: 2 },
    commands: {
      registerCommand(id: string, handler: (...args: unknown[]) => unknown) {
        assert.ok(!run.commands.has(id), `${id} registered twice`);
        run.commands.set(id, handler);
        return { dispose: () => run.commands.delete(id) };
      },
      executeCommand: async (...args: unknown[]) => void run.executed.push(args),
    },
    window: {
      createOutputChannel: () => ({ info() {}, warn() {}, error: (m: string) => run.errors.push(m), show: () => run.logShown++, dispose() {} }),
      createStatusBarItem: () => ({ show() {}, dispose() {} }),
      createTreeView: (id: string) => {
        assert.equal(id, Object.values(manifest.contributes.views).flat()[0]!.id);
        return { dispose() {} };
      },
      showErrorMessage: async (m: string) => void run.errors.push(m),
    },
    workspace: {
      workspaceFolders: [{ uri: { scheme: 'file', fsPath: '/workspace' } }],
      isTrusted: true,
      getConfiguration: (section: string) => ({ get: <T>(key: string, fallback: T): T => (`${section}.${key}` in settings ? settings[`${section}.${key}`] as T : fallback) }),
    },
    // English, as VS Code gives it with no bundle: the message with {0}, {1}… filled in.
    l10n: { t: (message: string, ...args: unknown[]) => message.replace(/\{(\d+)\}/g, (whole, i: string) => (Number(i) < args.length ? String(args[Number(i)]) : whole)) },
  };
  // A handler for any name, but not `then`: the handlers are awaited, and must not look like a promise.
  const handlers = new Proxy({}, { get: (_, name: string) => (name === 'then' ? undefined : (...args: unknown[]) => run.ran.push([name, args]) && `ran ${name}`) });
  const requireStub = (id: string): unknown => {
    if (id === 'vscode') return vscode;
    if (id === './extensionCore.js') {
      run.coreEvaluations++;
      if (core === 'fails') throw new Error('the core bundle is missing');
      return { startCore: () => (run.coreStarts.push(run.commands.size), { commands: handlers, host: { dispose: async () => void run.hostDisposed++ }, api: async () => 'the api' }) };
    }
    throw new Error(`the extension's bundle requires ${id}, which it must not`);
  };
  const module = { exports: {} };
  new Function('require', 'module', 'exports', '__filename', '__dirname', code)(requireStub, module, module.exports, path.join(root, manifest.main), path.join(root, 'dist'));
  run.exports = module.exports as Run['exports'];
  return run;
}

/** globalState: a Memento kept across activations (as VS Code keeps it across windows). */
class Memento {
  readonly values = new Map<string, unknown>();
  synced: readonly string[] = [];
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
  }
  setKeysForSync(keys: readonly string[]): void {
    this.synced = keys;
  }
}
const newContext = () => ({ subscriptions: [] as unknown[], extensionPath: root, globalState: new Memento() });
const context = newContext();
const OPEN_WALKTHROUGH = ['workbench.action.openWalkthrough', `${manifest.publisher}.${manifest.name}#getStarted`, false];

describe("the extension's small entry and its core", function () {
  this.timeout(60_000);
  let entry: Bundle;
  let core: Bundle;
  before(async () => {
    [entry, core] = await Promise.all([build('extension'), build('extensionCore')]);
  });

  it('holds only the thin VS Code layer: no zod, no policy engine, no runtime, no other package', () => {
    const foreign = entry.inputs.filter((f) => !f.startsWith('src/vscode/'));
    assert.deepEqual(foreign, [], 'the small bundle must not hold these');
    assert.ok(core.inputs.some((f) => f.includes('node_modules/zod/')), 'the core holds zod (the check above is not vacuous)');
    assert.ok(core.inputs.includes('src/policy/policy.ts') && core.inputs.includes('src/runtime/host/sessionHost.ts'));
  });

  it('requires nothing but vscode and the core beside it', () => {
    const required = [...entry.code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
    assert.deepEqual([...new Set(required)].sort(), ['./extensionCore.js', 'vscode']);
  });

  it('shares no module with the core (none is evaluated twice, so classes stay one)', () => {
    const both = entry.inputs.filter((f) => core.inputs.includes(f));
    assert.deepEqual(both, []);
  });

  it('registers every contributed command before the core starts; one run early waits for it, then runs in the core', async () => {
    const run = evaluate(entry.code, 'loads');
    // VS Code calls activate() at once: the core is evaluated after it.
    const api = run.exports.activate(context);
    assert.deepEqual([run.coreEvaluations, run.coreStarts], [0, []], 'activate() returned before the core was evaluated');
    assert.deepEqual([...run.commands.keys()].sort(), manifest.contributes.commands.map((c) => c.command).sort());
    const early = run.commands.get('agentPolicy.startSession')!('from the palette');
    assert.deepEqual(run.ran, [], 'nothing runs before the core is there');
    await null; // one turn of the microtask queue: the core is loaded at once, not after a later turn
    assert.deepEqual([run.coreEvaluations, run.coreStarts], [1, [run.commands.size]], 'the core was loaded once, with every command already registered');
    assert.equal(await early, 'ran startSession');
    assert.deepEqual(run.ran, [['startSession', ['from the palette']]]);
    assert.equal(await api, 'the api');
  });

  it('evaluates the core bundle while the host has yet to call activate(), and starts it only after', async () => {
    const run = evaluate(entry.code, 'loads');
    // VS Code reads the extension's storage before it calls activate(): the host is idle meanwhile.
    await new Promise(setImmediate);
    assert.deepEqual([run.coreEvaluations, run.coreStarts, run.commands.size], [1, [], 0]);
    const api = run.exports.activate(context);
    assert.deepEqual(run.coreStarts, [], 'activate() returned before the core was started');
    await null;
    assert.deepEqual([run.coreEvaluations, run.coreStarts], [1, [run.commands.size]], 'evaluated once, started after every command was registered');
    assert.equal(await api, 'the api');
  });

  it('runs each command by the core handler of its name; the log, the view and the walkthrough need no core', async () => {
    const run = evaluate(entry.code, 'loads');
    await run.exports.activate(context);
    run.executed.length = 0;
    const noCore = ['agentPolicy.showLog', 'agentPolicy.focusCallbacks', 'agentPolicy.getStarted'];
    for (const id of run.commands.keys()) {
      run.ran.length = 0;
      await run.commands.get(id)!({ kind: 'callback' }, 'second');
      if (noCore.includes(id)) assert.deepEqual(run.ran, [], id);
      else assert.deepEqual(run.ran, [[id.replace('agentPolicy.', ''), [{ kind: 'callback' }, 'second']]], id);
    }
    assert.equal(run.logShown, 1);
    assert.deepEqual(run.executed, [['agentPolicy.callbacks.focus'], OPEN_WALKTHROUGH]);
    await run.exports.deactivate();
    assert.equal(run.hostDisposed, 1);
  });

  it('opens the walkthrough at the first activation of a profile only, and marks it shown for Settings Sync', async () => {
    const shared = newContext();
    const first = evaluate(entry.code, 'loads');
    await first.exports.activate(shared);
    assert.deepEqual(first.executed.filter((e) => e[0] === OPEN_WALKTHROUGH[0]), [OPEN_WALKTHROUGH], 'opened at the first activation');
    assert.deepEqual(shared.globalState.synced, ['agentPolicy.walkthroughShown']);
    for (const core of ['loads', 'fails'] as const) {
      const later = evaluate(entry.code, core);
      await later.exports.activate({ ...newContext(), globalState: shared.globalState });
      assert.deepEqual(later.executed.filter((e) => e[0] === OPEN_WALKTHROUGH[0]), [], `never again (the core ${core})`);
    }
  });

  it('does not open the walkthrough when walkthroughs should not open on install, and never later either', async () => {
    const shared = newContext();
    const off = evaluate(entry.code, 'loads', { 'workbench.welcomePage.walkthroughs.openOnInstall': false });
    await off.exports.activate(shared);
    const on = evaluate(entry.code, 'loads');
    await on.exports.activate({ ...newContext(), globalState: shared.globalState });
    assert.deepEqual([...off.executed, ...on.executed].filter((e) => e[0] === OPEN_WALKTHROUGH[0]), []);
    await on.commands.get('agentPolicy.getStarted')!();
    assert.deepEqual(on.executed.filter((e) => e[0] === OPEN_WALKTHROUGH[0]), [OPEN_WALKTHROUGH], 'Agent Policy: Get Started opens it');
  });

  it('says so when the core cannot be loaded, and its commands fail with the reason; the log still opens', async () => {
    const run = evaluate(entry.code, 'fails');
    assert.equal(await run.exports.activate(context), undefined);
    assert.ok(run.errors.some((e) => /Agent Policy could not start: the core bundle is missing/.test(e)), run.errors.join('\n'));
    await assert.rejects(async () => run.commands.get('agentPolicy.startSession')!(), /the core bundle is missing/);
    await run.commands.get('agentPolicy.showLog')!();
    assert.equal(run.logShown, 1);
  });
});
