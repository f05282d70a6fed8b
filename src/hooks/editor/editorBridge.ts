// The hook's side of "asks answered in VS Code": find the editor window running for the folder
// (its discovery file, checked) and put one ask to it over its Unix socket, waiting for a person's
// answer until the hook's own deadline. The window's side is editorServer.ts; the folder, the
// files and their checks are editorDiscovery.ts; docs/hooks.md says what this protects against
// and what it cannot.
//
// Protocol: one connection per ask. The hook sends one line of JSON, `{"v":1,"token":…,"ask":…}`;
// the window answers with one line, `{"answer":…,"by":…,"reason"?:…}`, or `{"error":…}`, and
// closes. The hook closing first (its deadline passed, or its host stopped it) closes the ask.
import type * as Net from 'node:net';
import type { Remember } from '../../policy/file/grantLength.js';
import type { PartDecision, PolicyDecision } from '../../policy/policy.js';
import { bridgeDirectories, bridgeSupported, liveDiscovery, privateDirectoryProblem, readAcceptedPolicy, realFolder, type Discovery } from '../state/editorDiscovery.js';
import type { HostAgent } from '../hosts/hostAgents.js';

export const PROTOCOL_VERSION = 1;
/** The longest ask line, in bytes with its newline: an ask past it is not sent (the host's own ask is used). */
export const MAX_ASK_BYTES = 256 * 1024;
/** The longest answer line the hook reads. */
export const MAX_ANSWER_BYTES = 4 * 1024;

export interface EditorAsk {
  host: HostAgent;
  /** "Claude Code". The window names the host from its own table, not from this. */
  hostLabel: string;
  /** The host's session id (untrusted text: the window makes it display-safe). */
  hostSession: string;
  /** The host's subagent, when the host says (untrusted). */
  agent?: string;
  /** Our stable id: `builtin.run_command`. */
  toolId: string;
  /** The host's own name for the tool (`Bash`). */
  toolName?: string;
  /** Our mapped input: `{ command: "rm -rf build" }`. */
  input: unknown;
  /** One line; the window makes its own from `input`. */
  summary: string;
  /** Why it asks: the rule's reason, or the protected file. */
  reason?: string;
  rule: PolicyDecision['rule'];
  /** When no rule decided: the layer whose `default` asked (null: the built-in default). */
  defaultFrom?: PolicyDecision['defaultFrom'];
  parts?: ReadonlyArray<Pick<PartDecision, 'part' | 'decision' | 'rule' | 'note'>>;
  /** The workspace is untrusted and its allow became this ask: no Allow for Session (as in our own sessions). */
  lowered?: boolean;
  /** The widest grant a person may give (`never` for protected files and `remember: never` rules; a duration such as `15m`). */
  remember: Remember;
  /** The rule's ask timeout, in seconds. */
  timeoutSeconds?: number;
  onTimeout: 'deny' | 'keep';
  /** Flow rules: the marks the host session carries, and those only perhaps there (hookMarks.ts); the tree shows them. */
  marks?: string[];
  maybeMarks?: string[];
}

/**
 * A person's answer (`by: 'person'`), the same person's earlier Allow for Session of the same
 * call in this host session (`by: 'session'`), or the rule's own timeout in the window
 * (`by: 'timeout'`, always a deny). The window has written the audit lines of every answer it
 * gives (callback-opened and callback-settled, or a decision line for `session`).
 */
export type EditorAnswer = { answer: 'allow-once' | 'allow-session' | 'allow-duration' | 'deny'; by: 'person' | 'session' | 'timeout'; reason?: string };

/**
 * An editor window running for a folder, as its discovery file describes it: the folder (real
 * path), socket, token and pid, and what the hook needs of the window (`auditFile`, `trusted`,
 * `managedPolicyFile`, `userPolicyFile`; see `Discovery`).
 */
export type EditorEndpoint = Omit<Discovery, 'version'>;

function endpointOf(discovery: Discovery): EditorEndpoint {
  const { version: _version, ...endpoint } = discovery;
  return endpoint;
}

/**
 * The editor window running for this folder or the nearest folder above it, when there is one:
 * its discovery file is private to this user and names a live window and its socket. Undefined
 * off Linux and macOS. `directories`: where to look (tests); by default `bridgeDirectories()`.
 */
export function findEditor(workspaceFolder: string, options: { directories?: readonly string[] } = {}): EditorEndpoint | undefined {
  if (!bridgeSupported()) return undefined;
  // A folder another user could have made or changed is not looked in.
  const dirs = (options.directories ?? bridgeDirectories()).filter((dir) => privateDirectoryProblem(dir) === undefined);
  for (let folder = realFolder(workspaceFolder); ; folder = dirnameOf(folder)) {
    for (const dir of dirs) {
      const { discovery } = liveDiscovery(dir, folder);
      if (discovery) return endpointOf(discovery);
    }
    if (dirnameOf(folder) === folder) return undefined;
  }
}

function dirnameOf(folder: string): string {
  const i = folder.lastIndexOf('/');
  return i <= 0 ? '/' : folder.slice(0, i);
}

const ANSWERS = new Set(['allow-once', 'allow-session', 'allow-duration', 'deny']);
const BY = new Set(['person', 'session', 'timeout']);

function answerOf(line: string): EditorAnswer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const a = value as { answer?: unknown; by?: unknown; reason?: unknown } | null;
  if (typeof a !== 'object' || a === null || !ANSWERS.has(a.answer as string) || !BY.has(a.by as string)) return undefined;
  const answer = { answer: a.answer, by: a.by } as EditorAnswer;
  // A deny by the window's timeout is a deny whatever else it says.
  if (answer.by === 'timeout' && answer.answer !== 'deny') return undefined;
  return typeof a.reason === 'string' ? { ...answer, reason: a.reason.slice(0, 500) } : answer;
}

/**
 * Sends the ask and waits for a person's answer until `deadlineMs` (epoch ms). Undefined when the
 * window is not there, went away, refused the ask, or the deadline passed (the connection is
 * then closed, which closes the ask in the window). Never throws.
 */
export function askEditor(editor: EditorEndpoint, ask: EditorAsk, deadlineMs: number, signal?: AbortSignal): Promise<EditorAnswer | undefined> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(undefined);
    let line: string;
    try {
      line = `${JSON.stringify({ v: PROTOCOL_VERSION, token: editor.token, ask })}\n`;
    } catch {
      return resolve(undefined);
    }
    const remaining = deadlineMs - Date.now();
    if (remaining <= 0 || Buffer.byteLength(line) > MAX_ASK_BYTES) return resolve(undefined);
    let done = false;
    let received = '';
    // Loaded only to ask: a hook that finds no window (or no ask) does not pay for the socket modules.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const socket = (require('node:net') as typeof Net).createConnection({ path: editor.socket });
    const finish = (answer: EditorAnswer | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', withdraw);
      socket.destroy();
      resolve(answer);
    };
    // Withdrawn (the asker no longer needs the answer): closing the connection closes the ask in the window.
    const withdraw = (): void => finish(undefined);
    signal?.addEventListener('abort', withdraw, { once: true });
    const timer = setTimeout(() => finish(undefined), remaining);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(line));
    socket.on('data', (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\n');
      if (end >= 0) finish(answerOf(received.slice(0, end)));
      else if (received.length > MAX_ANSWER_BYTES) finish(undefined);
    });
    socket.on('error', () => finish(undefined));
    socket.on('close', () => finish(undefined));
  });
}

/** The window for a folder with its ask bound: what the hook (hookCommand.ts's `HookEditor`) takes. */
export function editorFor(folder: string): (EditorEndpoint & { heldAcceptedPolicy(): string | null | undefined; ask(ask: EditorAsk, deadlineMs: number): Promise<EditorAnswer | undefined> }) | undefined {
  const editor = findEditor(folder);
  return editor && {
    ...editor,
    heldAcceptedPolicy: () => (editor.held === undefined ? undefined : readAcceptedPolicy(editor) ?? null),
    ask: (ask, deadlineMs) => askEditor(editor, ask, deadlineMs),
  };
}
