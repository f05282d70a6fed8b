// An outside suite: the shell attacks of OpenMoat's conformance fixtures (openMoatCases.ts),
// judged under a policy in our format that says what OpenMoat's defaults say — secret paths
// denied, shell start-up files not written, force pushes, branch deletes, hard resets and
// recursive removals denied, everyday programs allowed by their first word. None may be allowed;
// those a deny rule covers must be denied, however they are spelled.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadPolicyText, Policy } from '../../../src/policy/policy.js';
import { initShellParser } from '../../../src/policy/shell/shellParser.js';
import { ATTACKS } from './openMoatCases.js';

const EVERYDAY = ['git', 'cat', 'head', 'tail', 'grep', 'rg', 'find', 'awk', 'sed', 'tar', 'ls', 'echo', 'printf', 'cp', 'mv', 'rm', 'mkdir', 'touch', 'tee',
  'curl', 'wget', 'scp', 'rsync', 'ln', 'base64', 'xargs', 'npm', 'pnpm', 'yarn', 'npx', 'make', 'python3', 'node', 'cd', 'wc', 'sort', 'sudo', 'env', 'printenv', 'export', 'declare', 'set', 'eval', 'dd'];

/** A glob for the workspace and its absolute form for paths outside it (policy-format.md, paths). */
const anywhere = (...globs: string[]): string[] => globs.flatMap((g) => [g, `/${g}`]);

export const openMoatPolicy = (home: string): object => ({
  version: 1,
  rules: [
    { id: 'secrets-paths', paths: anywhere('**/.ssh', '**/.ssh/**', '**/.aws/**', '**/.kube/**', '**/.config/gh/**', '**/.config/gcloud/**', '**/.azure/**', '**/.gnupg', '**/.gnupg/**',
      '**/.git-credentials', '**/.npmrc', '**/.pypirc', '**/.cargo/credentials*', '**/.zsh_history', '**/.bash_history', '**/.env', '**/.env.*', '**/.envrc'), decision: 'deny', reason: 'secrets stay' },
    { id: 'shell-rc', tools: ['builtin.write_file'], paths: anywhere('**/.zshrc', '**/.bashrc', '**/.profile', '**/.bash_profile', '**/.zprofile'), decision: 'deny', reason: 'no persistence' },
    { id: 'destructive', tools: ['builtin.run_command'], commands: ['git push --force *', 'git push --delete *', 'git reset --hard *', 'git branch --delete --force *', 'rm --recursive --force *', 'dd * of=/dev/*', 'mv ~ *'], decision: 'deny', reason: 'destructive' },
    { id: 'home-writes', tools: ['builtin.write_file'], paths: [home, `${home}/**`], decision: 'ask' },
    { id: 'everyday', tools: ['builtin.run_command'], commands: EVERYDAY.map((p) => `${p} *`), decision: 'allow' },
  ],
  default: 'ask',
});

describe("OpenMoat's shell attacks under a policy that says what its defaults say", () => {
  let root: string;
  let home: string;
  let ws: string;
  let policy: Policy;
  const user = os.userInfo().username;

  before(async () => {
    await initShellParser();
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'openmoat-')));
    home = path.join(root, 'me');
    ws = path.join(root, 'p');
    for (const dir of ['.ssh', '.aws', '.kube', '.config/gh', '.gnupg']) fs.mkdirSync(path.join(home, dir), { recursive: true });
    for (const file of ['.ssh/id_rsa', '.ssh/id_ed25519', '.ssh/authorized_keys', '.aws/credentials', '.kube/config', '.config/gh/hosts.yml', '.zsh_history', '.zshrc', '.bashrc']) fs.writeFileSync(path.join(home, file), 'secret\n');
    for (const dir of ['src', 'config', 'public', 'build', 'dist']) fs.mkdirSync(path.join(ws, dir), { recursive: true });
    for (const file of ['.env', '.envrc', 'config/.env.production', 'notes', '.zshrc']) fs.writeFileSync(path.join(ws, file), 'x\n');
    policy = new Policy({ workspace: loadPolicyText(JSON.stringify(openMoatPolicy(home)), path.join(ws, '.agentpolicy.jsonc')) });
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  const place = (text: string): string => text.replaceAll('/Users/me', home).replaceAll('~me', `~${user}`);
  const decide = (command: string): string => policy.decide({ tool: { id: 'builtin.run_command', kind: 'builtin' }, input: { command: place(command) }, agent: 'main' } as never,
    { workspaceFolder: ws, home, trusted: true, sandbox: true }).decision;

  it(`allows none of ${ATTACKS.length} attacks, and denies those a deny rule covers`, () => {
    const wrong: string[] = [];
    for (const attack of ATTACKS) {
      const made: string[] = [];
      for (const [link, target] of Object.entries(attack.links ?? {})) {
        const at = link.replace(/^\/p/, ws);
        fs.symlinkSync(place(target), at);
        made.push(at);
      }
      try {
        const got = decide(attack.command);
        if (got === 'allow' || (attack.expect === 'deny' && got !== 'deny')) wrong.push(`${attack.id}: ${got} (want ${attack.expect}): ${attack.command}`);
      } finally {
        for (const at of made) fs.rmSync(at);
      }
    }
    assert.deepEqual(wrong, []);
  });
});
