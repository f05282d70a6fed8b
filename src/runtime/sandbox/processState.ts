// Whether a process lives, the two ways the code asks it: any process (a sandbox's pid namespace
// init, a proxy's parent), where a zombie counts as gone; and one of this user's (a discovery
// file's pid: a pid another user's process took since is not the window or the service).
import * as fs from 'node:fs';

/** Whether a process lives: it exists, whoever's it is, and (where /proc tells) is not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && fs.existsSync('/proc/self/stat')) return false;
    // No /proc here (macOS): a signal 0 tells whether it exists (EPERM: another user's, alive).
    try {
      process.kill(pid, 0);
      return true;
    } catch (signalError) {
      return (signalError as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
}

/** Whether a process of this user lives (signal 0 reaches it; EPERM: another user's, so not ours). */
export function ownProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
