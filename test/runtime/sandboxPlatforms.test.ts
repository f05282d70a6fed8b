// The same policy gives the sandbox engine's profile on macOS (a Seatbelt profile through
// wrapCommandWithSandboxMacOS) and its configuration on Windows (checked with the engine's own
// SandboxRuntimeConfigSchema), from the lists Linux's mounts use. Neither platform can run here:
// these tests read what is generated. Also: the command proxy on TCP loopback ports (how Seatbelt
// and Windows reach it), the probe's answer on darwin and win32, and prepareSandbox's macOS path.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { SandboxRuntimeConfigSchema } from '@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-config.js';
import type { WindowsSandboxStatus } from '@anthropic-ai/sandbox-runtime/dist/sandbox/windows-sandbox-utils.js';
import type { ConnectionTarget } from '../../src/policy/rules/connection.js';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { commandShell, runCommandProcess } from '../../src/runtime/sandbox/commandProcess.js';
import { protectedPathsOf } from '../../src/runtime/calls/protected.js';
import { policyDeniedPaths } from '../../src/runtime/calls/sandboxDeniedPaths.js';
import { prepareSandbox } from '../../src/runtime/sandbox/sandboxLaunch.js';
import { seatbeltLaunch, shellWords } from '../../src/runtime/sandbox/sandboxMacos.js';
import { startCommandProxy } from '../../src/runtime/sandbox/sandboxNetwork.js';
import { platformSandboxInputs, type PlatformNetwork, type PlatformSandboxInputs } from '../../src/runtime/sandbox/sandboxPlatforms.js';
import { describeSandbox, probeSandbox, sandboxTesting } from '../../src/runtime/sandbox/sandboxProbe.js';
import { windowsAskCallback, windowsSandboxConfig } from '../../src/runtime/sandbox/sandboxWindows.js';

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** One top-level rule of a Seatbelt profile: `(allow file-write* (subpath "…") …)`. */
interface SbplRule {
  action: string;
  operations: string[];
  /** The filters, as written (`(subpath "/x")`), without the `(with message …)` clause. */
  filters: string[];
}

/** The s-expressions directly inside `text` (strings and `#"…"` regexes kept whole). */
function children(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    } else if (c === '(') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === ')') {
      depth--;
      if (depth === 0) out.push(text.slice(start, i + 1));
    } else if (c === ';' && depth === 0) {
      while (i < text.length && text[i] !== '\n') i++;
    }
  }
  return out;
}

function sbplRules(profile: string): SbplRule[] {
  return children(profile).map((expr) => {
    const inner = expr.slice(1, -1);
    const firstParen = inner.indexOf('(');
    const words = (firstParen < 0 ? inner : inner.slice(0, firstParen)).trim().split(/\s+/);
    const filters = (firstParen < 0 ? [] : children(inner.slice(firstParen)))
      .map((f) => f.replace(/\s+/g, ' '))
      .filter((f) => !f.startsWith('(with message'));
    return { action: words[0] ?? '', operations: words.slice(1), filters };
  });
}

/** The filters of every `action` rule on `operation`, with the rule's position. */
function filtersOf(rules: SbplRule[], action: string, operation: string): Array<{ index: number; filter: string }> {
  return rules.flatMap((r, index) => (r.action === action && r.operations.includes(operation) ? r.filters.map((filter) => ({ index, filter })) : []));
}

const subpath = (p: string): string => `(subpath ${JSON.stringify(p)})`;

describe('the sandbox on macOS and Windows: the engine\'s profile from the same policy', function () {
  this.timeout(20_000);
  let root: string;
  let ws: string;
  let home: string;
  let privateTmp: string;
  let protectedFiles: string[];
  let denied: string[];
  const env = { PATH: '/usr/bin:/bin', GH_TOKEN: 'ghp_secret', NPM_TOKEN: 'npm_passed', HOME: '/nowhere' };

  before(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-platforms-')));
    ws = path.join(root, 'ws');
    home = path.join(root, 'home');
    privateTmp = path.join(root, 'tmp');
    fs.mkdirSync(privateTmp);
    const policyText = '{ "version": 1, "rules": [ { "paths": ["**/.env"], "decision": "deny" } ] }';
    write(path.join(ws, '.agentpolicy.jsonc'), policyText);
    write(path.join(ws, '.vscode', 'settings.json'), '{}');
    write(path.join(ws, '.env'), 'SECRET=1\n');
    write(path.join(ws, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\n');
    write(path.join(ws, 'src', 'main.ts'), 'export {};\n');
    write(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY\n');
    const policy = new Policy({ workspace: loadPolicyText(policyText, path.join(ws, '.agentpolicy.jsonc')) });
    denied = policyDeniedPaths(policy, ws, home).paths;
    assert.deepEqual(denied, [path.join(ws, '.env')]);
    protectedFiles = protectedPathsOf(ws, [path.join(ws, '.agentpolicy.jsonc')], home);
  });
  after(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  function inputs(network: PlatformNetwork, more: { protectedWritable?: boolean } = {}): PlatformSandboxInputs {
    return platformSandboxInputs({
      workspaceFolder: ws, cwd: path.join(ws, 'src'), privateTmp, protectedFiles, protectedWritable: more.protectedWritable ?? false,
      unreadable: denied, home, env, passEnv: ['NPM_TOKEN'], network,
    });
  }

  const judged: PlatformNetwork = { kind: 'proxy', httpPort: 60083, socksPort: 60084 };

  describe('the lists both platforms get', () => {
    it('reads: the home credential stores and the denied .env; writes: the protected and persistence paths; env: the unpassed credential variables', () => {
      const i = inputs(judged);
      assert.equal(i.workspaceFolder, ws);
      assert.ok(i.unreadable.includes(path.join(home, '.ssh')) && i.unreadable.includes(path.join(home, '.aws')) && i.unreadable.includes(path.join(ws, '.env')));
      assert.ok(!i.unreadable.some((p) => ws.startsWith(p)), 'nothing that holds the workspace is unreadable');
      for (const p of ['.agentpolicy.jsonc', '.vscode', '.vscode/settings.json', '.git/hooks', '.git/config', '.envrc']) assert.ok(i.readOnly.includes(path.join(ws, p)), p);
      assert.ok(!i.readOnly.includes(path.join(ws, 'src')));
      assert.ok(!i.readOnly.some((p) => !p.startsWith(`${ws}/`)), 'only paths inside the workspace (outside it nothing is writable)');
      assert.deepEqual(i.withheldEnv, ['GH_TOKEN']);
      assert.deepEqual(inputs(judged, { protectedWritable: true }).readOnly, []);
    });
  });

  describe('macOS: the Seatbelt profile of wrapCommandWithSandboxMacOS', () => {
    it('maps our lists onto the engine\'s parameters', () => {
      const { params } = seatbeltLaunch(inputs(judged), '/bin/bash');
      assert.equal(params.needsNetworkRestriction, true);
      assert.equal(params.httpProxyPort, 60083);
      assert.equal(params.socksProxyPort, 60084);
      assert.ok(params.readConfig?.literalDenyOnly?.includes(path.join(home, '.ssh')));
      assert.deepEqual(params.writeConfig?.literalAllowOnly?.slice(0, 2), [ws, privateTmp]);
      assert.ok(params.writeConfig?.literalDenyWithinAllow?.includes(path.join(ws, '.vscode')));
      assert.deepEqual(params.unsetEnvVars, ['GH_TOKEN']);
    });

    it('denies reading ~/.ssh and the denied .env, but not the workspace', () => {
      const rules = sbplRules(seatbeltLaunch(inputs(judged), '/bin/bash').profile);
      const readDenies = filtersOf(rules, 'deny', 'file-read*').map((f) => f.filter);
      assert.ok(readDenies.includes(subpath(path.join(home, '.ssh'))), readDenies.join('\n'));
      assert.ok(readDenies.includes(subpath(path.join(ws, '.env'))));
      assert.ok(!readDenies.includes(subpath(ws)) && !readDenies.includes(subpath(path.join(ws, 'src'))));
      // Reads are allowed first, the denies come after (Seatbelt: the last matching rule wins).
      const allowAll = rules.findIndex((r) => r.action === 'allow' && r.operations.includes('file-read*') && r.filters.length === 0);
      const firstDeny = rules.findIndex((r) => r.action === 'deny' && r.operations.includes('file-read*'));
      assert.ok(allowAll >= 0 && firstDeny > allowAll);
    });

    it('allows writing the workspace and the private temporary folder, but not .agentpolicy.jsonc, .vscode/ or .git/hooks', () => {
      const rules = sbplRules(seatbeltLaunch(inputs(judged), '/bin/bash').profile);
      const allows = filtersOf(rules, 'allow', 'file-write*');
      const allowed = allows.map((f) => f.filter);
      assert.ok(allowed.includes(subpath(ws)) && allowed.includes(subpath(privateTmp)), allowed.join('\n'));
      assert.ok(!allowed.includes(subpath(home)) && !allowed.includes(subpath('/')) && !allowed.includes(subpath(root)));
      const denies = filtersOf(rules, 'deny', 'file-write*');
      for (const p of ['.agentpolicy.jsonc', '.vscode', '.vscode/settings.json', '.git/hooks', '.git/config']) {
        const deny = denies.find((f) => f.filter === subpath(path.join(ws, p)));
        assert.ok(deny, `${p} is not write-denied:\n${denies.map((f) => f.filter).join('\n')}`);
        assert.ok(deny.index > Math.max(...allows.map((a) => a.index)), `${p}: the deny must come after the allow`);
      }
      assert.ok(!denies.some((f) => f.filter === subpath(path.join(ws, 'src')) || f.filter === subpath(ws)));
      // Nor can they (or the folders holding them) be moved away or replaced.
      const moves = filtersOf(rules, 'deny', 'file-write-unlink').map((f) => f.filter);
      assert.ok(moves.includes(subpath(path.join(ws, '.vscode'))) && moves.includes(`(literal ${JSON.stringify(path.join(ws, '.git'))})`));
    });

    it('with the protected files writable (a person allowed exactly that), they are not write-denied', () => {
      const rules = sbplRules(seatbeltLaunch(inputs(judged, { protectedWritable: true }), '/bin/bash').profile);
      const denies = filtersOf(rules, 'deny', 'file-write*').map((f) => f.filter);
      assert.ok(!denies.includes(subpath(path.join(ws, '.agentpolicy.jsonc'))));
    });

    const outbound = (profile: string): string[] => sbplRules(profile).filter((r) => r.action === 'allow' && r.operations.some((o) => o.startsWith('network'))).map((r) => `${r.operations.join(' ')} ${r.filters.join(' ')}`.trim());

    it('network judged: only the proxy\'s two loopback ports', () => {
      const launch = seatbeltLaunch(inputs(judged), '/bin/bash');
      const allowed = outbound(launch.profile);
      assert.deepEqual(allowed.filter((a) => a.startsWith('network-outbound')).sort(), [
        'network-outbound (remote ip "localhost:60083")', 'network-outbound (remote ip "localhost:60084")',
      ]);
      assert.ok(!allowed.includes('network*'));
      assert.ok(!launch.profile.includes('unix-socket'), 'no Unix-domain sockets');
    });

    it('network off: nothing; network open: everything', () => {
      assert.deepEqual(outbound(seatbeltLaunch(inputs({ kind: 'off' }), '/bin/bash').profile), []);
      assert.deepEqual(outbound(seatbeltLaunch(inputs({ kind: 'open' }), '/bin/bash').profile), ['network*']);
    });

    it('the launch: env without the withheld variables, TMPDIR and the proxy on 127.0.0.1, then sandbox-exec with the profile', () => {
      const launch = seatbeltLaunch(inputs(judged), '/bin/bash');
      const argv = launch.argv;
      assert.equal(argv[0], '/usr/bin/env');
      assert.deepEqual(argv.slice(1, 3), ['-u', 'GH_TOKEN']);
      assert.ok(!argv.includes('NPM_TOKEN'), 'a passed variable is not unset');
      assert.ok(argv.includes(`TMPDIR=${privateTmp}`));
      assert.ok(argv.includes('HTTP_PROXY=http://127.0.0.1:60083') && argv.includes('https_proxy=http://127.0.0.1:60083'));
      assert.ok(argv.includes('ALL_PROXY=socks5h://127.0.0.1:60084'));
      assert.deepEqual(argv.slice(-3), ['/usr/bin/sandbox-exec', '-p', launch.profile]);
      assert.ok(!seatbeltLaunch(inputs({ kind: 'off' }), '/bin/bash').argv.some((a) => /PROXY=/i.test(a)));
    });

    it('reads the engine\'s quoting back exactly, and refuses what it does not know', () => {
      assert.deepEqual(shellWords(`env -u A 'B=x y' 'it'"'"'s' /usr/bin/sandbox-exec`), ['env', '-u', 'A', 'B=x y', "it's", '/usr/bin/sandbox-exec']);
      assert.throws(() => shellWords('a $(b)'));
      assert.throws(() => shellWords('a "$b"'));
      assert.throws(() => shellWords("a 'b"));
    });
  });

  describe('Windows: the engine\'s configuration', () => {
    it('validates against the engine\'s schema and carries the same lists as the macOS profile', () => {
      const i = inputs(judged);
      const config = windowsSandboxConfig(i);
      assert.equal(SandboxRuntimeConfigSchema.safeParse(config).success, true);
      const paths = (list: ReadonlyArray<string | { path: string }>): string[] => list.map((e) => (typeof e === 'string' ? e : e.path));
      assert.ok(config.filesystem.denyRead.every((e) => typeof e === 'object' && e.literal === true), 'names, never patterns');
      assert.ok(paths(config.filesystem.denyRead).includes(path.join(home, '.ssh')) && paths(config.filesystem.denyRead).includes(path.join(ws, '.env')));
      assert.deepEqual(paths(config.filesystem.allowWrite), [ws, privateTmp]);
      for (const p of ['.agentpolicy.jsonc', '.vscode', '.git/hooks']) assert.ok(paths(config.filesystem.denyWrite).includes(path.join(ws, p)), p);
      const { params } = seatbeltLaunch(i, '/bin/bash');
      assert.deepEqual(paths(config.filesystem.denyRead), params.readConfig?.literalDenyOnly);
      assert.deepEqual(paths(config.filesystem.denyWrite), params.writeConfig?.literalDenyWithinAllow);
      assert.deepEqual(config.credentials?.envVars, [{ name: 'GH_TOKEN', mode: 'deny' }]);
      assert.deepEqual(config.network.allowedDomains, []);
      assert.equal(config.network.httpProxyPort, 60083);
      assert.equal(config.network.socksProxyPort, 60084);
      assert.equal(config.network.strictAllowlist, undefined);
      assert.deepEqual(config.windows?.proxyPortRange, [60080, 60089]);
    });

    it('network off: strict, no proxy; open: the ask callback allows every host; a proxy port outside the WFP range is refused', async () => {
      const off = windowsSandboxConfig(inputs({ kind: 'off' }));
      assert.equal(off.network.strictAllowlist, true);
      assert.equal(off.network.httpProxyPort, undefined);
      assert.equal(await windowsAskCallback(inputs({ kind: 'off' }))(), false);
      const open = windowsSandboxConfig(inputs({ kind: 'open' }));
      assert.deepEqual(open.network.allowedDomains, []);
      assert.equal(open.network.strictAllowlist, undefined);
      assert.equal(await windowsAskCallback(inputs({ kind: 'open' }))(), true);
      assert.throws(() => windowsSandboxConfig(inputs({ kind: 'proxy', httpPort: 40000, socksPort: 60081 })), /outside the Windows sandbox's proxy port range 60080-60089/);
      assert.doesNotThrow(() => windowsSandboxConfig(inputs({ kind: 'proxy', httpPort: 41000, socksPort: 41001 }), { proxyPortRange: [41000, 41009] }));
    });
  });

  describe('the probe on darwin and win32', () => {
    const status = (over: { provisioned?: boolean; wfp?: WindowsSandboxStatus['wfp']['state'] } = {}): WindowsSandboxStatus => ({
      user: { provisioned: over.provisioned ?? true, groupExists: true, inBuiltinUsers: true, inSandboxGroup: true, hiddenFromLogon: true, credPresent: true, realUserSid: 'S-1-5-21-1', capabilities: [] },
      wfp: { state: over.wfp ?? 'installed', filters: 4, allowLoopback: false },
    });

    it('darwin: available when sandbox-exec is there, and the sentence says what holds', () => {
      const fake = path.join(root, 'sandbox-exec');
      fs.writeFileSync(fake, '#!/bin/sh\n', { mode: 0o755 });
      const a = probeSandbox({ platform: 'darwin', sandboxExec: fake });
      assert.deepEqual(a, { available: true, platform: 'darwin', sandboxExec: fake });
      const sentence = describeSandbox(a);
      assert.match(sentence, /^Commands run sandboxed here \(macOS Seatbelt, /);
      assert.match(sentence, /credential stores/);
      assert.match(sentence, /loopback port/);
      const missing = probeSandbox({ platform: 'darwin', sandboxExec: null });
      assert.equal(missing.available, false);
      assert.match(describeSandbox(missing), /NOT sandboxed here: \/usr\/bin\/sandbox-exec is missing/);
    });

    it('win32: never available; says what the install lacks and how to install it, or that it is not used yet', () => {
      const notInstalled = probeSandbox({ platform: 'win32', windowsStatus: () => status({ provisioned: false, wfp: 'absent' }) });
      assert.equal(notInstalled.available, false);
      const reason = (notInstalled as { reason: string }).reason;
      assert.match(reason, /the srt-sandbox account is not provisioned; the WFP network filters are not installed/);
      assert.match(reason, /npx @anthropic-ai\/sandbox-runtime windows-install/);
      const installed = probeSandbox({ platform: 'win32', windowsStatus: () => status() });
      assert.equal(installed.available, false);
      assert.match(describeSandbox(installed), /is installed, but Agent Policy does not run commands through it yet/);
      const broken = probeSandbox({ platform: 'win32', windowsStatus: () => { throw new Error('srt-win.exe not found'); } });
      assert.match((broken as { reason: string }).reason, /could not run: srt-win\.exe not found\. .*windows-install/);
    });
  });

  describe('the command proxy on TCP loopback ports', () => {
    it('accepts a proxied HTTP request the judge allows, and refuses one it refuses', async () => {
      const server = http.createServer((req, res) => res.end(`hello ${req.url}`));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      const target = (server.address() as net.AddressInfo).port;
      const asked: ConnectionTarget[] = [];
      const proxy = await startCommandProxy({
        listen: 'tcp', namedHosts: ['127.0.0.1'],
        judge: async (t) => (asked.push(t), t.port === target ? { allow: true } : { allow: false, reason: 'not that port' }),
      });
      try {
        assert.ok(proxy.httpPort > 0 && proxy.socksPort > 0 && proxy.httpPort !== proxy.socksPort);
        assert.equal('dir' in proxy, false);
        const get = (port: number): Promise<{ status: number; body: string }> =>
          new Promise((resolve, reject) => {
            const req = http.request({ host: '127.0.0.1', port: proxy.httpPort, path: `http://127.0.0.1:${port}/x`, headers: { host: `127.0.0.1:${port}` } }, (res) => {
              let body = '';
              res.on('data', (c: Buffer) => (body += c.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            });
            req.on('error', reject);
            req.end();
          });
        const ok = await get(target);
        assert.equal(ok.status, 200);
        assert.equal(ok.body, 'hello /x');
        const refused = await get(target + 1 === proxy.httpPort ? target + 2 : target + 1);
        assert.equal(refused.status, 403);
        assert.deepEqual(asked[0], { host: '127.0.0.1', port: target });
        assert.equal(asked.length, 2);
      } finally {
        await proxy.close();
        server.close();
      }
      // Closed: the port no longer answers.
      await assert.rejects(new Promise((resolve, reject) => {
        const s = net.connect(proxy.httpPort, '127.0.0.1', () => (s.destroy(), resolve(undefined)));
        s.on('error', reject);
      }));
    });
  });

  describe('prepareSandbox on macOS (its launch, not run)', () => {
    afterEach(() => {
      delete sandboxTesting.availability;
    });

    it('a judged run: the Seatbelt launch, with the run\'s own proxy listening on the profile\'s ports; close() stops it', async () => {
      sandboxTesting.availability = { available: true, platform: 'darwin', sandboxExec: '/usr/bin/sandbox-exec' };
      const prepared = await prepareSandbox(ws, path.join(ws, 'src'), {
        network: false, judgesHosts: true, protectedWritable: false, protectedFiles, unreadable: () => denied, home, env: ['NPM_TOKEN'],
        connections: { judge: async () => ({ allow: false, reason: 'no' }), namedHosts: [] },
      }, commandShell('/bin/bash'));
      const launch = prepared.launch;
      let tmp = '';
      try {
        assert.equal(launch.kind, 'prefix');
        assert.ok(launch.kind === 'prefix');
        assert.equal(prepared.hostsJudged, true);
        assert.deepEqual(launch.passEnv, ['NPM_TOKEN']);
        const port = Number(launch.argv.find((a) => a.startsWith('HTTP_PROXY='))?.replace(/.*:/, ''));
        assert.ok(launch.args[1]?.includes(`(remote ip "localhost:${port}")`));
        assert.ok(launch.args[1]?.includes(subpath(path.join(home, '.ssh'))));
        tmp = launch.argv.find((a) => a.startsWith('TMPDIR='))?.slice('TMPDIR='.length) ?? '';
        assert.ok(fs.statSync(tmp).isDirectory());
        await new Promise<void>((resolve, reject) => {
          const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve()));
          s.on('error', reject);
        });
      } finally {
        await prepared.close();
      }
      assert.equal(fs.existsSync(tmp), false);
    });

    it('an offline run has no proxy and no network in its profile', async () => {
      sandboxTesting.availability = { available: true, platform: 'darwin', sandboxExec: '/usr/bin/sandbox-exec' };
      const prepared = await prepareSandbox(ws, ws, { network: false, protectedWritable: false, protectedFiles, home }, commandShell('/bin/bash'));
      try {
        assert.equal(prepared.hostsJudged, false);
        assert.ok(prepared.launch.kind === 'prefix');
        assert.ok(!prepared.launch.argv.some((a) => /PROXY=/i.test(a)));
        assert.ok(!/\(allow network/.test(prepared.launch.args[1] ?? ''));
      } finally {
        await prepared.close();
      }
    });
  });

  it('runCommandProcess runs a prefix launch: its words, then the shell line, with the credential variables withheld', async () => {
    const before = process.env.GH_TOKEN;
    process.env.GH_TOKEN = 'ghp_secret';
    try {
      const r = await runCommandProcess({
        command: 'echo "$MARK:${GH_TOKEN:-none}"', cwd: ws, timeoutMs: 10_000, maxOutputBytes: 10_000, signal: new AbortController().signal,
        shell: commandShell('/bin/bash'), sandbox: { kind: 'prefix', argv: ['/usr/bin/env', 'MARK=wrapped'], bwrap: '/nonexistent', args: [] },
      });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.equal(r.stdout, 'wrapped:none\n');
    } finally {
      if (before === undefined) delete process.env.GH_TOKEN;
      else process.env.GH_TOKEN = before;
    }
  });
});
