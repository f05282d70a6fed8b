// A server's config as written (variables unresolved), as a person sees it before consenting to
// start it (`describeServerLaunch`) and as that consent is remembered (`serverFingerprint`).
import { createHash } from 'node:crypto';
import type { McpServerConfig } from './mcpConfig.js';

/**
 * What identifies a server's config as written, for remembering a person's consent to start it:
 * a SHA-256 (hex) of its type, command, args, env, envFile and cwd, or url and headers. The name
 * is not part of it; the order of `env` and `headers` keys does not matter.
 */
export function serverFingerprint(server: McpServerConfig): string {
  const written = server.type === 'stdio'
    ? ['stdio', server.command, [...server.args], sortedEntries(server.env), server.envFile ?? null, server.cwd ?? null]
    : [server.type, server.url, sortedEntries(server.headers)];
  return createHash('sha256').update(JSON.stringify(written)).digest('hex');
}

/**
 * What starting the server runs, in a line for a person: the command line of a stdio server
 * (`npx -y pkg ${workspaceFolder}`, with `(in <cwd>)` when it has a cwd) or the URL of a remote
 * one. Variables are shown as written; words with unusual characters are quoted as JSON.
 */
export function describeServerLaunch(server: McpServerConfig): string {
  if (server.type !== 'stdio') return shellWord(server.url);
  const line = [server.command, ...server.args].map(shellWord).join(' ');
  return server.cwd !== undefined ? `${line} (in ${shellWord(server.cwd)})` : line;
}

/**
 * A stdio server's command line as written (variables unresolved), as bash would read it: each
 * word single-quoted unless plain. What the connections of a sandboxed server are judged for
 * (policy-format.md's command patterns match it), and what its questions and audit lines name:
 * resolved arguments may hold the values of inputs (tokens), so never those.
 */
export function serverCommandLine(server: McpServerConfig): string {
  if (server.type !== 'stdio') return server.url;
  return [server.command, ...server.args].map((word) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)).join(' ');
}

function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./~${}?&#-]+$/.test(word) ? word : JSON.stringify(word);
}

function sortedEntries(record: Record<string, string | null>): Array<[string, string | null]> {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
