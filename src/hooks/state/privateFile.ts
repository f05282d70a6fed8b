// Writing a file only this user can read, whole: a temporary file beside it renamed over it, so a
// reader (another hook process, the window) sees the old text or the new, never half of one.
// Node modules only: the `agentpolicy` dispatcher uses it for its code cache.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Writes `data` to `file` (mode 0600), making its folder (0700) when `makeFolder`. Throws on failure, leaving no temporary file. */
export function writePrivateFile(file: string, data: string | Uint8Array, options: { makeFolder?: boolean } = {}): void {
  if (options.makeFolder) fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(temp, data, { mode: 0o600, flag: 'wx' });
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}
