// Tries the extension in a real VS Code in the browser: makes sure code-server is here, packages
// and installs the VSIX, copies policies/sample-workspace to a temp folder, and serves it
// (trusted) on http://127.0.0.1:8080 or the next free port until Ctrl-C, with the Chat view open
// on a conversation starter (the setting agentPolicy.chat.starter in the copy's .vscode/settings.json).
//
//   node scripts/start-vscode.mjs [--port N] [--untrusted]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { register as registerTsx } from 'tsx/cjs/api';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(repo);
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const untrusted = process.argv.includes('--untrusted');
/** What the Chat view holds when the demo opens (the @agents participant, the sample's main agent). */
const CHAT_STARTER = '@agents What do the Atlas and the Beacon cost?';

const ensure = spawnSync('bash', ['scripts/ensure-vscode.sh'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
if (ensure.status !== 0) process.exit(1); // it said what is missing
const codeServerDir = ensure.stdout.trim().split('\n').at(-1);
process.env.AGENT_POLICY_E2E_CODE_SERVER_DIR = codeServerDir;

if (spawnSync('npm', ['run', '--silent', 'package'], { stdio: 'inherit' }).status !== 0) process.exit(1);

// The harness is TypeScript (CommonJS, like the tests): load it through tsx.
registerTsx();
const { installVsix, startCodeServer, freePort, useLocalMcpServers } = createRequire(import.meta.url)('../test/e2e/harness.ts');

const home = mkdtempSync(path.join(tmpdir(), 'agent-policy-start-'));
const extensionsDir = path.join(home, 'extensions');
const workspace = path.join(home, 'sample-workspace');
cpSync(path.join(repo, 'policies', 'sample-workspace'), workspace, { recursive: true });
useLocalMcpServers(workspace);
// The Chat view opens with a conversation starter for the sample, typed in, on the scripted model.
writeFileSync(path.join(workspace, '.vscode', 'settings.json'), `${JSON.stringify({ 'agentPolicy.chat.starter': CHAT_STARTER }, null, 2)}\n`);
try {
  installVsix(path.join(repo, 'dist', 'agent-policy.vsix'), extensionsDir);
} catch (e) {
  process.stderr.write(`${e.message}\n`);
  rmSync(home, { recursive: true, force: true });
  process.exit(1);
}

let port = Number(arg('--port') ?? 8080);
for (let tries = 0; !(await isFree(port)); tries++) {
  port = tries < 20 ? port + 1 : await freePort();
}

const server = await startCodeServer({
  workspace, extensionsDir, trusted: !untrusted, port, home, logFile: path.join(home, 'code-server.log'),
  // The tests turn the Chat view off and the walkthrough's opening on install; the demo is a
  // newcomer's VS Code: the Chat view is there, Get Started opens at the first activation.
  settings: { 'chat.disableAIFeatures': false, 'workbench.welcomePage.walkthroughs.openOnInstall': true },
});
const url = `${server.url}?folder=${encodeURIComponent(workspace)}`;
process.stdout.write(`\nAgent Policy in VS Code: ${url}\n`);
process.stdout.write(`workspace (a copy of policies/sample-workspace${untrusted ? ', not trusted' : ', trusted'}): ${workspace}\n`);
process.stdout.write(`code-server log: ${server.logFile}\nCtrl-C to stop.\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await server.stop();
  rmSync(home, { recursive: true, force: true });
  process.exit(0);
};
// These replace the harness's handlers (which only kill): stop cleanly, then remove the temp folder.
process.removeAllListeners('SIGINT');
process.removeAllListeners('SIGTERM');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
server.proc.on('exit', (code) => {
  if (stopping) return;
  process.stderr.write(`code-server exited (${code}); see ${server.logFile}\n`);
  process.exit(1);
});

async function isFree(p) {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(p, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

// Keep the event loop alive until a signal arrives.
setInterval(() => undefined, 1 << 30);
