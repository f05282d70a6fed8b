// After a sandboxed command and every process it started have ended: undo what the mounts could
// not prevent. A protected path that did not exist when the command started cannot be bound
// read-only, so a command can create it; a link on the way to a protected path sits in a writable
// folder, so a command can replace it; another hard link of a protected file is writable. Each is
// undone here and named, for the result and the audit. While the command ran, what it created was
// there (docs/sandbox.md says so): this closes the window, it cannot prevent it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isWithin, type ProtectedWatch } from './sandboxMounts.js';

// A person may allow a change to a protected file (the protected-files hook's ask) while a sandboxed
// command runs: what that change creates must not be undone as if the command had made it.
let approvedChanges = 0;
let approvedInFlight = 0;

/** Marks a person-approved change to protected files as running; call the returned function when it ended. */
export function beginApprovedProtectedChange(): () => void {
  approvedChanges++;
  approvedInFlight++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    approvedInFlight--;
    approvedChanges++;
  };
}

/** Taken when a command starts; `quiet` at the end says no person-approved change overlapped it. */
export function approvedChangeMark(): { quiet(): boolean } {
  const at = approvedChanges;
  const idle = approvedInFlight === 0;
  return { quiet: () => idle && approvedInFlight === 0 && approvedChanges === at };
}

export interface CleanupReport {
  /** What was undone, one sentence each, with paths relative to the workspace. */
  undone: string[];
  /** What was found but left alone, and why. */
  left: string[];
}

function lstatQuietly(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    return undefined;
  }
}

function shown(workspace: string, p: string): string {
  const rel = path.relative(workspace, p);
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? p : rel.split(path.sep).join('/');
}

/** Where `p` itself really is: its folder through links, and its own name (never followed). */
function realLocation(p: string): string | undefined {
  try {
    return path.join(fs.realpathSync(path.dirname(p)), path.basename(p));
  } catch {
    return undefined;
  }
}

/** Removes `p` (a link is removed, never followed), only when it really lies inside the workspace. */
function removeInside(workspace: string, p: string): boolean {
  const real = realLocation(p);
  if (real === undefined || !isWithin(real, workspace) || real === workspace) return false;
  fs.rmSync(real, { recursive: true, force: true });
  return true;
}

/**
 * Undoes the changes to protected paths the watch list allows for; `quiet` false (a person allowed
 * a change to protected files meanwhile) only reports them.
 */
export function undoProtectedChanges(watch: ProtectedWatch, quiet: boolean): CleanupReport {
  const report: CleanupReport = { undone: [], left: [] };
  const ws = watch.workspace;
  const leave = (what: string): void => {
    report.left.push(`${what}; left as it is: a person allowed a change to protected files while the command ran`);
  };

  // Links first, so that the protected names below lead where they led before.
  for (const { link, target } of watch.links) {
    const st = lstatQuietly(link);
    if (st?.isSymbolicLink() && fs.readlinkSync(link) === target) continue;
    const what = `the link ${shown(ws, link)} (on the way to a protected file) was ${st ? 'replaced' : 'removed'} by the command`;
    if (!quiet) {
      leave(what);
      continue;
    }
    if (st && !removeInside(ws, link)) {
      report.left.push(`${what}; left as it is: it is not inside the workspace`);
      continue;
    }
    fs.symlinkSync(target, link);
    report.undone.push(`${what}: restored it (-> ${target})`);
  }

  for (const { file, firstMissing } of watch.missing) {
    if (!lstatQuietly(firstMissing)) continue;
    // Walk down from what was missing: a link made on the way is removed itself, never followed.
    let current = firstMissing;
    const rest = path.relative(firstMissing, file).split(path.sep).filter((s) => s !== '');
    for (let i = 0; ; i++) {
      const st = lstatQuietly(current);
      if (!st) break;
      const isFile = current === file;
      if (st.isSymbolicLink() || isFile) {
        const what = st.isSymbolicLink() && !isFile
          ? `the command made ${shown(ws, current)} a link, on the way to the protected file ${shown(ws, file)}`
          : `the command created the protected ${st.isDirectory() ? 'folder' : 'file'} ${shown(ws, file)}`;
        if (!quiet) leave(what);
        else if (removeInside(ws, current)) report.undone.push(`${what}: removed it`);
        else report.left.push(`${what}; left as it is: it is not inside the workspace`);
        break;
      }
      if (i >= rest.length) break;
      current = path.join(current, rest[i] as string);
    }
  }

  for (const { file, content } of watch.hardLinked) {
    let now: Buffer | undefined;
    try {
      now = fs.readFileSync(file);
    } catch {
      now = undefined;
    }
    if (now !== undefined && now.equals(content)) continue;
    const what = `the protected file ${shown(ws, file)} was changed through another hard link of it`;
    if (!quiet) {
      leave(what);
      continue;
    }
    fs.writeFileSync(file, content);
    report.undone.push(`${what}: restored its content`);
  }
  return report;
}
