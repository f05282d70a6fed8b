import * as fs from 'node:fs';
// What is still running, for the tests that kill a runner outright and check nothing is left.

/** Live (not zombie) processes whose command line contains `text`, other than this one. */
export function liveProcesses(text: string): Array<{ pid: number; cmd: string }> {
  const out: Array<{ pid: number; cmd: string }> = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const cmd = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(text)) out.push({ pid: Number(name), cmd });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Polls `check` every 50 ms for up to `ms`: its first truthy value, or undefined. */
export async function until<T>(check: () => T | undefined | false, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) return undefined;
    await new Promise((r) => setTimeout(r, 50));
  }
}
