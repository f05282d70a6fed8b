// The `agentpolicy` executable: wires the CLI to the process. It loads only the bundle its
// command needs (scripts/bundles.mjs): a host runs `agentpolicy hook` before every tool call, and
// that must not pay for parsing the whole command line.

// `agentpolicy explain … | head` closes the pipe early: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const argv = process.argv.slice(2);
const running = argv[0] === 'hook' && argv[1] !== 'install' ? runHook(argv.slice(1)) : runCommand(argv);
running.then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`agentpolicy: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 2;
  },
);

// Plain requires: the bundler makes them `require('./hook.js')` and `require('./commands.js')`.
function runHook(args: string[]): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hookMain, readProcessStdin } = require('./hookMain.js') as typeof import('./hookMain.js');
  return hookMain({
    argv: args, readStdin: readProcessStdin, env: process.env, cwd: process.cwd(),
    out: (text) => process.stdout.write(text),
    err: (line) => process.stderr.write(`${line}\n`),
  });
}

function runCommand(args: string[]): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { main } = require('./agentpolicy.js') as typeof import('./agentpolicy.js');
  return main(args, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    cwd: process.cwd(),
  });
}
