// What a sandboxed command cannot read (policy-format.md, "Sandboxed commands", Reads): the home
// folder's credential stores, and the paths the policy's `deny` rules on paths cover
// (sandboxDeniedPaths.ts works those out). Each existing one is covered by a read-only bind of an
// empty placeholder that nobody may read (mode 000; the command has no capability to override
// that): a folder then cannot be listed, a file cannot be read, and, being a mount point, neither
// can be written, renamed, removed or replaced. A path that does not exist needs no mount: outside
// the workspace everything is read-only, so the command cannot make it either (inside the
// workspace it can: docs/sandbox.md, Limits).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The home folder's credential stores, relative to it: keys, cloud and cluster logins, package
 * registry tokens, password stores and keyrings, browser profiles (cookies and saved passwords),
 * and shell and REPL histories (where typed secrets end up). docs/sandbox.md lists them.
 */
export const HOME_CREDENTIAL_STORES: readonly string[] = [
  // Keys and logins.
  '.ssh', '.gnupg', '.aws', '.azure', '.config/gcloud', '.config/gh', '.config/hub', '.kube', '.docker/config.json',
  '.netrc', '.git-credentials', '.config/git/credentials', '.vault-token', '.terraform.d/credentials.tfrc.json',
  '.config/doctl', '.oci', '.config/heroku', '.fly', '.config/op', '.pulumi/credentials.json',
  // Package registries.
  '.npmrc', '.yarnrc', '.yarnrc.yml', '.pypirc', '.cargo/credentials', '.cargo/credentials.toml', '.gem/credentials',
  '.m2/settings.xml', '.m2/settings-security.xml', '.gradle/gradle.properties', '.nuget/NuGet/NuGet.Config', '.config/NuGet/NuGet.Config',
  '.composer/auth.json', '.config/composer/auth.json', '.config/pip/pip.conf', '.pip/pip.conf',
  // Password stores and keyrings.
  '.password-store', '.local/share/keyrings', '.config/keepassxc', '.local/share/kwalletd',
  // Browser profiles: cookies and saved passwords.
  '.config/google-chrome', '.config/chromium', '.config/BraveSoftware', '.config/microsoft-edge', '.mozilla', '.config/vivaldi', '.config/opera',
  // Shell and REPL histories.
  '.bash_history', '.zsh_history', '.histfile', '.local/share/fish/fish_history', '.python_history', '.node_repl_history',
  '.psql_history', '.mysql_history', '.sqlite_history', '.rediscli_history', '.irb_history', '.lesshst', '.viminfo',
];

/** Private to each command (sandboxMounts.ts mounts a tmpfs there). */
const PRIVATE_TMP = '/tmp';

/** A path hidden in the sandbox, as bwrap mounts it. */
export interface HiddenPath {
  path: string;
  kind: 'folder' | 'file';
}

/** `child` equal to or under `parent`. */
function within(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function statQuietly(p: string, follow: boolean): fs.Stats | undefined {
  try {
    return follow ? fs.statSync(p) : fs.lstatSync(p);
  } catch {
    return undefined;
  }
}

/**
 * The paths to hide, for the home folder's stores and `extra` (absolute; the policy's denied
 * paths): those that exist, at their real path and, when a link leads there, at the link's own
 * path too (bwrap resolves it to the same mount; it costs nothing and holds if the link is
 * re-pointed between now and the start). Outermost first, nothing under a hidden folder (it is
 * empty to the command: a mount below it could not be made), and never the workspace folder
 * or a folder holding it (the command must run there; a deny rule on `**` still judges the read tools).
 */
export function hiddenPaths(home: string, workspaceFolder: string, extra: readonly string[]): HiddenPath[] {
  const workspace = path.resolve(workspaceFolder);
  const workspaceReal = statQuietly(workspace, true) ? fs.realpathSync(workspace) : workspace;
  const found = new Map<string, HiddenPath['kind']>();
  const candidates = [...HOME_CREDENTIAL_STORES.map((rel) => path.join(home, rel)), ...extra.map((p) => path.resolve(p))];
  for (const candidate of candidates) {
    const target = statQuietly(candidate, true);
    if (!target) continue; // missing (or a dangling link): nothing there to read
    const kind = target.isDirectory() ? 'folder' : 'file';
    const real = fs.realpathSync(candidate);
    for (const p of new Set([real, candidate])) {
      if (within(workspace, p) || within(workspaceReal, p)) continue;
      // The sandbox's /tmp is its own: what is there on the host is out of sight already.
      if (within(p, PRIVATE_TMP) && !within(p, workspace) && !within(p, workspaceReal)) continue;
      found.set(p, kind);
    }
  }
  const sorted = [...found.entries()].sort(([a], [b]) => a.split(path.sep).length - b.split(path.sep).length || a.localeCompare(b));
  const out: HiddenPath[] = [];
  for (const [p, kind] of sorted) {
    if (out.some((h) => h.kind === 'folder' && within(p, h.path))) continue;
    out.push({ path: p, kind });
  }
  return out;
}

/** The placeholders bound over hidden paths: an empty folder and an empty file, mode 000, in a private folder of this process. */
let placeholderRoot: string | undefined;

function placeholders(): { folder: string; file: string } {
  const make = (): string => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-policy-unreadable-'));
    fs.mkdirSync(path.join(root, 'folder'), { mode: 0o000 });
    fs.writeFileSync(path.join(root, 'file'), '', { mode: 0o000 });
    // The mode given is masked by the umask: set it exactly.
    fs.chmodSync(path.join(root, 'folder'), 0o000);
    fs.chmodSync(path.join(root, 'file'), 0o000);
    return root;
  };
  // A cleaner of the temporary folder may have removed them since: made again, never bound missing.
  if (placeholderRoot === undefined || !statQuietly(path.join(placeholderRoot, 'folder'), false) || !statQuietly(path.join(placeholderRoot, 'file'), false)) {
    placeholderRoot = make();
  }
  return { folder: path.join(placeholderRoot, 'folder'), file: path.join(placeholderRoot, 'file') };
}

/**
 * bwrap's arguments that hide `hidden` (hiddenPaths' answer). They must come after every other
 * mount of those paths (`--ro-bind / /`, the workspace's binds): bwrap mounts in order, and a
 * later bind of the same path or a parent would show it again.
 */
export function hideArgs(hidden: readonly HiddenPath[]): string[] {
  if (hidden.length === 0) return [];
  const { folder, file } = placeholders();
  return hidden.flatMap((h) => ['--ro-bind', h.kind === 'folder' ? folder : file, h.path]);
}
