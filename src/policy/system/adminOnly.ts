// Whether only an administrator can change a file: the check a system managed policy passes
// before it counts (docs/teams.md, "A managed policy people cannot switch off"). POSIX only: on
// Windows Node cannot read owners and access lists (systemPolicy.ts says what happens there).
//
// Every folder from / down to the file, and the file, both as named and as the real path its
// symlinks lead to, must be owned by root (uid 0); the file and its own folder must be writable by
// no group and no one else; a folder above them may be writable by an administrators' group
// (gid 0, and on macOS also admin, gid 80), or by anyone when its sticky bit is set (like /tmp:
// there only root can rename or remove the root-owned entry below it). A symlink's own mode means
// nothing, its owner and its folder do. The answer is the same whoever asks, root included: it
// says whether anyone but an administrator could change what is read, not whether the account
// asking could (root can write anything, so that question says nothing when a test runs as root).
import * as fs from 'node:fs';
import * as path from 'node:path';

export type AdminOnly = { ok: true } | { ok: false; reason: string };

/** Groups whose members are administrators: group write for them on a folder above the file's is fine. */
function adminGroups(platform: NodeJS.Platform): readonly number[] {
  return platform === 'darwin' ? [0, 80] : [0];
}

/** `/`, `/etc`, `/etc/agentpolicy`, `/etc/agentpolicy/managed.agentpolicy.jsonc` for that file. */
function chain(file: string): string[] {
  const out: string[] = [];
  for (let p = file; ; p = path.dirname(p)) {
    out.unshift(p);
    if (path.dirname(p) === p) return out;
  }
}

/** Whether only root (and the administrators' groups) can change `file` and the folders above it. `file` must be absolute. */
export function adminOnlyFile(file: string, platform: NodeJS.Platform = process.platform): AdminOnly {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch (error) {
    return { ok: false, reason: `it cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  // The file and its own folder, as named and as real: no write but root's.
  const close = new Set([file, path.dirname(file), real, path.dirname(real)]);
  const named = chain(file);
  for (const p of new Set([...named, ...chain(real)])) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch (error) {
      return { ok: false, reason: `${p} cannot be examined (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
    }
    const why = unsafe(p, st, close.has(p), platform);
    if (why !== undefined) return { ok: false, reason: named.includes(p) ? why : `${why} (${file} leads there)` };
  }
  if (!fs.statSync(real).isFile()) return { ok: false, reason: `${real} is not a regular file` };
  return { ok: true };
}

function unsafe(p: string, st: fs.Stats, close: boolean, platform: NodeJS.Platform): string | undefined {
  if (st.uid !== 0) return `${p} is owned by uid ${st.uid}, not by root`;
  if (st.isSymbolicLink()) return undefined;
  const sticky = st.isDirectory() && (st.mode & 0o1000) !== 0;
  if ((st.mode & 0o002) !== 0 && (close || !sticky)) return `${p} is writable by everyone (mode ${mode(st)})`;
  if ((st.mode & 0o020) !== 0 && (close || !(sticky || adminGroups(platform).includes(st.gid)))) {
    return `${p} is writable by its group (gid ${st.gid}, mode ${mode(st)})`;
  }
  return undefined;
}

function mode(st: fs.Stats): string {
  return (st.mode & 0o7777).toString(8).padStart(4, '0');
}
