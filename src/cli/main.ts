// The `agentpolicy` executable: wires the CLI to the process. It loads only the bundle its
// command needs (scripts/bundles.mjs): a host runs `agentpolicy hook` before every tool call, and
// that must not pay for parsing the whole command line.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultStateDir } from '../hooks/state/stateDir.js';
import { requireWithCodeCache } from './codeCache.js';

const argv = process.argv.slice(2);
const running = argv[0] === 'hook' && argv[1] !== 'install' && argv[1] !== 'status' ? runHook(argv.slice(1)) : runCommand(argv);
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
  // The built executable loads the hook's bundle with V8's code cache (codeCache.ts).
  const bundle = path.join(__dirname, 'hook.js');
  const cached = path.basename(__filename) === 'cli.js' ? requireWithCodeCache<typeof import('./hookMain.js')>(bundle, path.join(defaultStateDir(), 'code-cache')) : undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hookMain, readProcessStdin } = cached?.exports ?? (require('./hookMain.js') as typeof import('./hookMain.js'));
  // Straight to the descriptors: process.stdout would load the stream modules for one short line.
  const write = (fd: number, text: string): void => {
    const buffer = Buffer.from(text);
    for (let offset = 0; offset < buffer.length; ) {
      try {
        offset += fs.writeSync(fd, buffer, offset);
      } catch (error) {
        // A host may hand over a non-blocking pipe: wait a moment for room rather than lose the answer.
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      }
    }
  };
  return hookMain({
    argv: args, readStdin: readProcessStdin, env: process.env, cwd: process.cwd(),
    out: (text) => write(1, text),
    err: (line) => write(2, `${line}\n`),
    // After a telemetry export's bounded flush: a collector still answering must not hold the host's call.
    end: (code) => {
      cached?.save();
      process.exit(code);
    },
  }).finally(() => cached?.save());
}

function runCommand(args: string[]): Promise<number> {
  // `agentpolicy explain … | head` closes the pipe early: that is not an error.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  // The other commands' bundle is large (4 MB): `agentpolicy sandbox` runs every allowed command of
  // another agent, so it is loaded with the code cache too.
  const bundle = path.join(__dirname, 'commands.js');
  const cached = path.basename(__filename) === 'cli.js' ? requireWithCodeCache<typeof import('./agentpolicy.js')>(bundle, path.join(defaultStateDir(), 'code-cache')) : undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { main } = cached?.exports ?? (require('./agentpolicy.js') as typeof import('./agentpolicy.js'));
  const ran = main(args, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    cwd: process.cwd(),
  });
  // Written before a long command (serve) ends too: the functions compiled so far are enough.
  setTimeout(() => cached?.save(), 2000).unref();
  return ran.finally(() => cached?.save());
}
