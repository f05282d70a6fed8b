// The `agentpolicy` command line as its own process (for sandboxCommand.test.ts): `sandbox` runs
// its command with this process's stdin, stdout and stderr, which an in-process run cannot collect.
import { main } from '../../../src/cli/agentpolicy.js';

void main(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  cwd: process.cwd(),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 2;
  },
);
