// `npm run bench:peers`: our policy engine side by side with Gemini CLI's (bench/peersBench.ts).
// The peer is installed on first use into .cache/peers/ (ignored by git), never a dependency of
// the package; a later run reuses it. Ours is bundled with esbuild as the product ships.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { bundleBench } from './bundle-bench.mjs';

const PEER = '@google/gemini-cli-core';
const VERSION = '0.61.0'; // the version issue 12's figures were taken against
const prefix = path.resolve('.cache', 'peers', `gemini-cli-core-${VERSION}`);
const root = path.join(prefix, 'node_modules', ...PEER.split('/'));

const installed = () => {
  const manifest = path.join(root, 'package.json');
  return existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === VERSION;
};
if (!installed()) {
  process.stderr.write(`installing ${PEER}@${VERSION} into ${path.relative(process.cwd(), prefix)}...\n`);
  mkdirSync(prefix, { recursive: true });
  // No install scripts (nothing of the peer's runs but its policy engine) and no optional
  // native packages: the policy engine needs neither.
  const r = spawnSync('npm', ['install', '--prefix', prefix, '--save-exact', '--no-audit', '--no-fund',
    '--ignore-scripts', '--omit=optional', '--loglevel=error', `${PEER}@${VERSION}`], { stdio: 'inherit' });
  if (r.status !== 0 || !installed()) {
    process.stderr.write(`could not install ${PEER}@${VERSION}\n`);
    process.exit(1);
  }
}

await bundleBench('bench/peersBench.ts', '.cache/bench-peers.js');
const r = spawnSync(process.execPath, ['.cache/bench-peers.js', '--peer', root, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exitCode = r.status ?? 1;
