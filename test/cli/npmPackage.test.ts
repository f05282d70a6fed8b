// The npm package (docs/cli.md): `npm pack` gives a tarball of at most 5 MB holding the
// `agentpolicy` executable and every bundle it loads (.npmignore), and no sources or source maps; installed
// with `npm install -g` into a folder of its own (offline: the bundles need no dependency), its
// `bin/agentpolicy --version` answers. Both read the built dist/ (skipped before a build), with
// --ignore-scripts so that the pack does not rebuild dist/ under other tests.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.join(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string>; files?: string[]; dependencies?: object; private?: boolean };
const MAX_TARBALL_BYTES = 5_000_000;

/** npm as run from a shell: none of an outer npm's variables (npm test sets a prefix and more). */
function npm(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return spawnSync('npm', args, { cwd, encoding: 'utf8', env, timeout: 120_000 });
}

describe('the npm package', function () {
  this.timeout(120_000);
  let tmp: string;
  before(function () {
    if (!fs.existsSync(path.join(root, 'dist', 'cli.js'))) this.skip();
  });
  beforeEach(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'npm-package-')));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('is publishable: a bin, engines, no dependencies to install (the bundles hold them), and no files list (vsce refuses one beside .vscodeignore)', () => {
    assert.equal(manifest.private, undefined);
    assert.equal(manifest.files, undefined);
    assert.equal(manifest.dependencies, undefined);
  });

  it('packs at most 5 MB: the bin target and every bundle it loads, the wasm, the seccomp helper; no sources, tests or maps', async () => {
    const packed = npm(['pack', '--dry-run', '--json', '--ignore-scripts'], root);
    assert.equal(packed.status, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout) as Array<{ size: number; files: Array<{ path: string }> }>;
    assert.ok(info!.size <= MAX_TARBALL_BYTES, `the tarball is ${info!.size} bytes`);
    const files = info!.files.map((f) => f.path);
    const { CLI_BUNDLES_SHIPPED } = (await import(pathToFileURL(path.join(root, 'scripts', 'bundles.mjs')).href)) as { CLI_BUNDLES_SHIPPED: string[] };
    const wanted = [path.posix.normalize(manifest.bin.agentpolicy!), ...CLI_BUNDLES_SHIPPED.map((b) => `dist/${b}.js`), 'dist/policy.js', 'dist/runtime.js',
      'dist/tree-sitter-bash.wasm', 'dist/web-tree-sitter.wasm', 'dist/vendor/seccomp/x64/apply-seccomp', 'package.json', 'README.md', 'LICENSE'];
    for (const file of wanted) assert.ok(files.includes(file), `${file} is not packed`);
    assert.deepEqual(files.filter((f) => /\.map$|^src\/|^test\/|^node_modules\/|^\.cache\//.test(f)), []);
    assert.doesNotMatch(packed.stderr, /npm warn/i, 'no warning a newcomer must decode');
  });

  it('installs with npm install -g --prefix, offline, into a working agentpolicy', () => {
    const packed = npm(['pack', '--ignore-scripts', '--pack-destination', tmp], root);
    assert.equal(packed.status, 0, packed.stderr);
    const tarball = path.join(tmp, `agent-policy-${manifest.version}.tgz`);
    const prefix = path.join(tmp, 'prefix');
    const installed = npm(['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball], tmp);
    assert.equal(installed.status, 0, installed.stderr);
    // Its #!/usr/bin/env node finds this node.
    const ran = spawnSync(path.join(prefix, 'bin', 'agentpolicy'), ['--version'], { encoding: 'utf8', env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin` } });
    assert.equal(ran.status, 0, ran.stderr);
    assert.equal(ran.stdout.trim(), manifest.version);
  });
});
