// Runs the `agentpolicy` command line in-process, collecting what it prints.
import { main } from '../../src/cli/agentpolicy.js';

export async function runCli(argv: string[], cwd: string): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l), cwd });
  return { code, out, err };
}
