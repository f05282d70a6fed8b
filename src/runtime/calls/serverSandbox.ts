// The sandbox of an MCP server's stdio process (docs/mcp.md, "Sandboxed servers"): when the
// policy's top-level `sandboxServers` names the server, its process runs in the sandbox a
// command runs in (sandboxLaunch.ts): the workspace writable but its protected and persistence
// files, the credential stores and the policy's denied paths unreadable, the credential variables
// withheld, and each connection it opens judged by the policy with the server's command line as
// the command, a host no rule decides asked as an open callback naming the server
// (connectionAsks.ts, serverConnections). The session tree hands this host to the tool sources it
// connects (modelLoop.ts); the MCP side (src/mcp/) starts the process with what `prepare` gives.
import * as os from 'node:os';
import { summarizeInput } from '../audit/auditSummary.js';
import { commandShell, findBash } from '../sandbox/commandProcess.js';
import { serverConnections } from './connectionAsks.js';
import { approvedChangeMark, undoProtectedChanges } from '../sandbox/sandboxCleanup.js';
import { prepareSandbox, type PreparedSandbox } from '../sandbox/sandboxLaunch.js';
import { sandboxLimits } from '../sandbox/sandboxNote.js';
import { sandboxAvailability } from '../sandbox/sandboxProbe.js';
import { deniedPathsOf } from './sandboxRun.js';
import type { PreparedServerSandbox, ServerSandboxHost, ServerSandboxRun } from '../tools/tools.js';
import type { ToolSandbox } from '../sandbox/toolSandbox.js';
import type { SessionScope, Tree } from '../tree/tree.js';
import type { TurnCore } from '../tree/turn.js';

export interface ServerSandboxOptions {
  /** The home folder whose credential stores are hidden (default os.homedir(), read when a server starts). */
  home?: string;
}



/**
 * The host a session tree's tool sources get (ToolSourceContext.sandbox). `root` is the tree's
 * root session (its audit lines name it when no turn runs); `connectedIn` is the session and turn
 * that connected the source: a question about a host goes to the turn whose call of the server
 * runs, else to that turn while it still runs.
 */
export function serverSandboxHost(tree: Tree, root: SessionScope, connectedIn: { session: SessionScope; turn: TurnCore }, options: ServerSandboxOptions = {}): ServerSandboxHost {
  return {
    required: (name) => tree.currentPolicy()?.sandboxedServer(name)?.reason,
    unavailable: () => {
      const available = sandboxAvailability();
      return available.available ? undefined : available.reason;
    },
    prepare: (run) => prepareServer(tree, root, connectedIn, run, options),
  };
}

async function prepareServer(
  tree: Tree, root: SessionScope, connectedIn: { session: SessionScope; turn: TurnCore }, run: ServerSandboxRun, options: ServerSandboxOptions,
): Promise<PreparedServerSandbox> {
  const home = options.home ?? os.homedir();
  const asker = (): { session: SessionScope; turnId: string } | undefined => {
    const calling = run.caller();
    const session = calling !== undefined ? tree.sessions.get(calling.sessionId) : undefined;
    if (calling !== undefined && session !== undefined) return { session, turnId: calling.turnId };
    return connectedIn.turn.state === 'running' ? { session: connectedIn.session, turnId: connectedIn.turn.id } : undefined;
  };
  const connections = serverConnections({
    tree, server: run.server, command: run.command, asker, session: root,
    policy: () => tree.currentPolicy(), trusted: () => tree.trustedNow(),
  });
  const sandbox: Omit<ToolSandbox, 'onUndone'> = {
    // The network is never on unjudged for a server: each connection goes through its own proxy.
    network: false, judgesHosts: true,
    connections: { judge: connections.judge, namedHosts: tree.currentPolicy()?.namedHosts() ?? [] },
    protectedWritable: false, protectedFiles: tree.protectedPaths(),
    unreadable: deniedPathsOf(() => tree.currentPolicy(), tree.workspaceFolder, home), home,
  };
  const mark = approvedChangeMark();
  let prepared: PreparedSandbox;
  try {
    prepared = await prepareSandbox(tree.workspaceFolder, run.cwd, sandbox, commandShell(findBash()));
  } catch (error) {
    await connections.close(`the MCP server ${run.server} could not start`);
    throw error;
  }
  const report = { network: false, ...(prepared.hostsJudged ? { hostsJudged: true } : {}) };
  const description = `sandboxed: ${sandboxLimits(report)}${prepared.networkMissing !== undefined ? ` (no network at all: ${prepared.networkMissing})` : ''}`;
  const scope = (): { session: string; turn?: string; agent: string } => {
    const who = asker();
    return who ? { session: who.session.id, turn: who.turnId, agent: who.session.agentName } : { session: root.id, agent: root.agentName };
  };
  let closing: Promise<void> | undefined;
  return {
    launch: prepared.launch,
    hostsJudged: prepared.hostsJudged,
    ...(prepared.networkMissing !== undefined ? { networkMissing: prepared.networkMissing } : {}),
    description,
    started: () => {
      const at = scope();
      // The audit line first: a start the log cannot record does not happen (this throws, and the caller stops).
      tree.audit({
        event: 'server-started', ...at, tool: `mcp.${run.server}`, summary: summarizeInput(run.command),
        sandbox: { sandboxed: true, ...report }, reason: run.reason,
      });
      tree.emit({ type: 'sandbox', sessionId: at.session, available: true, message: `the MCP server ${run.server} runs ${description} (${run.reason})` });
    },
    close: () => (closing ??= (async () => {
      await connections.close(`the MCP server ${run.server} has ended`);
      await prepared.close();
      // What the mounts could not stop (a protected path that did not exist yet), as after a command.
      const cleanup = undoProtectedChanges(prepared.watch, mark.quiet());
      const lines = [...cleanup.undone, ...cleanup.left];
      if (lines.length === 0) return;
      const at = scope();
      try {
        tree.audit({ event: 'sandbox-cleanup', ...at, tool: `mcp.${run.server}`, undone: lines.slice(0, 8).map((l) => summarizeInput(l, 300)) });
      } finally {
        for (const line of lines) tree.emit({ type: 'warning', sessionId: at.session, message: `sandbox (MCP server ${run.server}): ${line}` });
      }
    })()),
  };
}
