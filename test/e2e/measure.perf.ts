// Figures for the README, measured in the real VS Code (not a test: nothing is asserted on time).
// Run by `npm run bench:vscode`. Prints a table and writes test-results/e2e/performance.txt.
//  - activation: from the bundle's first line to the end of activate(), as the extension logs it;
//  - engine ready: from the same first line to the end of the core's start, right after
//    activate() returns (before the split this moment was the end of activation);
//  - VSIX size;
//  - tool call → notification visible: the audit log's time for the ask (written before the
//    notification is raised) to the moment a MutationObserver in the page sees the toast.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { copyWorkspace, installVsix, REPO, RESULTS_DIR, startVsCode, type VsCode } from './harness';

const RUNS = 5;

function findFiles(dir: string, name: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === name) out.push(p);
    }
  };
  walk(dir);
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function oneRun(extensionsDir: string, index: number): Promise<{ activationMs?: number; engineMs?: number; notifyMs?: number }> {
  const workspace = copyWorkspace();
  let vs: VsCode | undefined;
  try {
    vs = await startVsCode({ workspace, extensionsDir, name: `perf-${index}` });
    await vs.statusBarItem(/^Agent Policy: 0 open callbacks$/, 120_000);
    // Stamp the moment an ask's toast is added to the page, in epoch milliseconds.
    // (A string, since the test code has no DOM types.)
    await vs.page.evaluate(`(() => {
      new MutationObserver(() => {
        if (window.__askSeenAt) return;
        for (const t of document.querySelectorAll('.notification-toast')) {
          if ((t.textContent || '').includes('wants to run builtin.write_file')) {
            window.__askSeenAt = performance.timeOrigin + performance.now();
            return;
          }
        }
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    })()`);
    await vs.runCommand('Agent Policy: Start Agent Session');
    await vs.pickQuickItem(/^main\b/);
    await vs.typeInQuickInput('What do the Atlas and the Beacon cost?');
    await vs.notification(/main wants to run builtin\.write_file/, 60_000);
    const seenAt = (await vs.page.evaluate('window.__askSeenAt')) as number | undefined;
    const audit = findFiles(path.join(vs.userDataDir, 'User', 'workspaceStorage'), 'audit.jsonl')[0];
    const asked = audit
      ? fs.readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { event: string; tool?: string; time: string })
          .find((e) => e.event === 'callback-opened' && e.tool === 'builtin.write_file')
      : undefined;
    const logFile = findFiles(path.join(vs.userDataDir, 'logs'), 'Agent Policy.log')[0];
    const logText = logFile ? fs.readFileSync(logFile, 'utf8') : '';
    const activated = /activated in ([\d.]+) ms/.exec(logText);
    const engine = /engine ready ([\d.]+) ms/.exec(logText);
    return {
      ...(activated ? { activationMs: Number(activated[1]) } : {}),
      ...(engine ? { engineMs: Number(engine[1]) } : {}),
      ...(asked && seenAt ? { notifyMs: seenAt - Date.parse(asked.time) } : {}),
    };
  } finally {
    await vs?.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

describe('performance in VS Code (figures, not assertions)', function () {
  // Five fresh windows take 40-60 s each on a loaded machine: more than one test's usual time.
  this.timeout(RUNS * 120_000);
  it('measures activation, VSIX size and ask-to-notification latency', async function () {
    const vsix = process.env.AGENT_POLICY_E2E_VSIX ?? path.join(REPO, 'dist', 'agent-policy.vsix');
    let extensionsDir = process.env.AGENT_POLICY_E2E_EXTENSIONS_DIR ?? '';
    if (!extensionsDir) {
      extensionsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-perf-'));
      installVsix(vsix, extensionsDir);
    }
    const activation: number[] = [];
    const engine: number[] = [];
    const notify: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await oneRun(extensionsDir, i);
      if (r.activationMs !== undefined) activation.push(r.activationMs);
      if (r.engineMs !== undefined) engine.push(r.engineMs);
      if (r.notifyMs !== undefined) notify.push(r.notifyMs);
    }
    const kb = fs.statSync(vsix).size / 1024;
    const rows = [
      ['activation (bundle load + activate)', activation.length ? `${median(activation).toFixed(1)} ms` : 'not measured', '< 30 ms', `median of ${activation.length}: ${activation.map((a) => a.toFixed(1)).join(', ')}`],
      ['engine ready (bundle start → core started)', engine.length ? `${median(engine).toFixed(1)} ms` : 'not measured', '≤ before', `median of ${engine.length}: ${engine.map((a) => a.toFixed(1)).join(', ')}`],
      ['VSIX size', `${kb.toFixed(0)} KB`, '< 1024 KB', path.basename(vsix)],
      ['tool call → notification visible', notify.length ? `${median(notify).toFixed(0)} ms` : 'not measured', '< 100 ms', `median of ${notify.length}: ${notify.map((n) => n.toFixed(0)).join(', ')}`],
    ];
    const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['metric', 'value', 'target'][i]!.length));
    const line = (r: string[]): string => `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padStart(widths[1]!)}  ${r[2]!.padEnd(widths[2]!)}  ${r[3] ?? ''}`;
    const table = [line(['metric', 'value', 'target', 'note']), ...rows.map(line)].join('\n');
    const text = `Agent Policy in code-server (node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'CPU'}, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})\n\n${table}\n`;
    process.stdout.write(`\n${text}`);
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(path.join(RESULTS_DIR, 'performance.txt'), text);
  });
});
