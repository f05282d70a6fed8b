// A sandboxed run on macOS: the sandbox engine's Seatbelt profile (@anthropic-ai/sandbox-runtime's
// wrapCommandWithSandboxMacOS, the one Claude Code runs under), from the same lists as Linux's
// mounts (sandboxPlatforms.ts), run by /usr/bin/sandbox-exec. What the profile holds:
// - reads: everything but the unreadable paths (`(deny file-read* (subpath …))`);
// - writes: only the workspace folder, the run's private temporary folder and the engine's
//   devices (/dev/null, /dev/stdout, …); inside the workspace the protected and persistence
//   paths are denied, and so are moving or removing them and the folders above them;
// - network: none (network off), everything (`(allow network*)`), or only the command's own
//   proxy on its two 127.0.0.1 ports (each connection judged: sandboxNetwork.ts, `listen: 'tcp'`).
//   Unix-domain sockets are refused unless the network is open.
// The engine returns one shell string (`env -u … /usr/bin/sandbox-exec -p PROFILE SHELL -c CMD`);
// it is read back into words here (the engine quotes with single quotes only) so the command is
// run without a shell around it, by our own shell line (`bash --noprofile --norc -c --`), and
// with our own proxy variables (127.0.0.1, as on Linux). Not run on a Mac by this project's tests.
import { wrapCommandWithSandboxMacOS, type MacOSSandboxParams } from '@anthropic-ai/sandbox-runtime/dist/sandbox/macos-sandbox-utils.js';
import { proxyVariables, type PlatformSandboxInputs } from './sandboxPlatforms.js';

export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';
const ENV = '/usr/bin/env';

/**
 * Writable besides the workspace and the private temporary folder: the devices the engine's own
 * configuration makes writable (its getDefaultWritePaths, less its /tmp/claude: the run has its own folder).
 */
export const SEATBELT_DEVICE_WRITES: readonly string[] = ['/dev/stdout', '/dev/stderr', '/dev/null', '/dev/tty', '/dev/dtracehelper', '/dev/autofs_nowait'];

/** Stands for the command in the engine's string: replaced by our shell line. */
const COMMAND_PLACEHOLDER = 'agentpolicy-command-placeholder';

export interface SeatbeltLaunch {
  /** The program and its arguments, up to (not including) the shell that runs the command. */
  argv: string[];
  /** The Seatbelt profile (sandbox-exec's `-p`). */
  profile: string;
  /** What the engine was asked for (for tests and the audit). */
  params: MacOSSandboxParams;
}

/** The engine's parameters for one run. */
export function seatbeltParams(inputs: PlatformSandboxInputs, shellPath: string): MacOSSandboxParams {
  const network = inputs.network;
  return {
    command: COMMAND_PLACEHOLDER,
    needsNetworkRestriction: network.kind !== 'open',
    ...(network.kind === 'proxy' ? { httpProxyPort: network.httpPort, socksProxyPort: network.socksPort } : {}),
    // Every list holds names, never patterns: the `literal…` lists (a workspace named `a[1]` stays itself).
    readConfig: { denyOnly: [], literalDenyOnly: [...inputs.unreadable] },
    writeConfig: {
      allowOnly: [],
      literalAllowOnly: [inputs.workspaceFolder, inputs.privateTmp, ...SEATBELT_DEVICE_WRITES],
      denyWithinAllow: [],
      literalDenyWithinAllow: [...inputs.readOnly],
    },
    unsetEnvVars: [...inputs.withheldEnv],
    binShell: shellPath,
  };
}

/** The Seatbelt-wrapped launch of one run: `/usr/bin/env -u … NAME=VALUE … /usr/bin/sandbox-exec -p PROFILE`. */
export function seatbeltLaunch(inputs: PlatformSandboxInputs, shellPath: string): SeatbeltLaunch {
  const params = seatbeltParams(inputs, shellPath);
  const words = shellWords(wrapCommandWithSandboxMacOS(params));
  // What the engine says: env, its -u flags, its assignments, sandbox-exec -p PROFILE, the shell, -c, the command.
  let i = 0;
  if (words[i++] !== 'env') throw new Error(`the sandbox engine's macOS wrap has an unknown shape (${words[0]})`);
  const unset: string[] = [];
  while (words[i] === '-u' && words[i + 1] !== undefined) {
    unset.push('-u', words[i + 1] as string);
    i += 2;
  }
  while (words[i] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string)) i++;
  const tail = words.slice(i);
  if (tail.length !== 6 || tail[0] !== SANDBOX_EXEC || tail[1] !== '-p' || tail[4] !== '-c' || tail[5] !== COMMAND_PLACEHOLDER) {
    throw new Error(`the sandbox engine's macOS wrap has an unknown shape (${tail.filter((_, n) => n !== 2).join(' ')})`);
  }
  const profile = tail[2] as string;
  // Our own variables, not the engine's (its proxy URLs say `localhost`, which may be ::1; our proxy is on 127.0.0.1).
  const assignments = Object.entries({ TMPDIR: inputs.privateTmp, ...proxyVariables(inputs.network) }).map(([k, v]) => `${k}=${v}`);
  return { argv: [ENV, ...unset, ...assignments, SANDBOX_EXEC, '-p', profile], profile, params };
}

/**
 * The words of a line the engine's quote() made: bare words, single-quoted runs and `"'"`;
 * anything else (an expansion, an operator) is refused rather than guessed at.
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let i = 0;
  while (i < line.length) {
    const c = line[i] as string;
    if (c === ' ') {
      if (word !== undefined) words.push(word);
      word = undefined;
      i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated quote in the sandbox engine\'s wrap');
      word = (word ?? '') + line.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      const end = line.indexOf('"', i + 1);
      const inner = end < 0 ? undefined : line.slice(i + 1, end);
      if (inner === undefined || /[\\$`"]/.test(inner)) throw new Error('an unexpected double-quoted word in the sandbox engine\'s wrap');
      word = (word ?? '') + inner;
      i = end + 1;
    } else if (/[A-Za-z0-9_./:=@+,%-]/.test(c)) {
      word = (word ?? '') + c;
      i++;
    } else {
      throw new Error(`an unexpected character ${JSON.stringify(c)} in the sandbox engine's wrap`);
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
