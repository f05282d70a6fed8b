// The connections of one sandboxed command (policy-format.md, "Sandboxed commands"; docs/network.md):
// the sandbox's proxy asks for each connection; the policy's rules with `domains` or `urls` judge
// it for that command (connection.ts); a host no rule decides is asked of a person as an open
// callback naming the command and the host, like any other ask. A person's Allow holds for that
// host for the rest of the command (Allow once), or for the session's commands (Allow for the
// Session, or for a while); Deny refuses it. Nobody answering within the timeout refuses it.
// Parallel connections to one host wait for one question. Every judgement has its audit line.
// A sandboxed MCP server's process is judged the same way for its command line, its questions not
// tied to one turn (serverConnections; docs/mcp.md, "Sandboxed servers").
import { inputDigest, summarizeInput } from '../audit/auditSummary.js';
import { OpenApproval, type ApprovalRequest } from '../tree/answers.js';
import { openCallback } from '../tree/callbacks.js';
import type { ConnectionDecision, ConnectionTarget } from '../../policy/rules/connection.js';
import type { Policy, PolicyDecision } from '../../policy/policy.js';
import type { ConnectionAnswer, ConnectionJudge } from '../sandbox/sandboxNetwork.js';
import type { RuntimeTool } from '../tools/tools.js';
import { newId, type SessionScope, type Tree } from '../tree/tree.js';
import type { TurnCore } from '../tree/turn.js';

/** How long a host's question stays open before the connection is refused (the command waits meanwhile). */
export const HOST_ASK_TIMEOUT_SECONDS = 120;

/** Hosts a person allowed for a session's commands: host → until (epoch ms; Infinity for the session). */
const sessionHosts = new WeakMap<Tree, Map<string, Map<string, number>>>();

function hostsOf(tree: Tree, sessionId: string): Map<string, number> {
  let bySession = sessionHosts.get(tree);
  if (!bySession) sessionHosts.set(tree, (bySession = new Map()));
  let hosts = bySession.get(sessionId);
  if (!hosts) bySession.set(sessionId, (hosts = new Map()));
  return hosts;
}

/** The key a person's answer is kept under: the host as the client named it, lower-cased, with its port. */
function hostKey(target: ConnectionTarget): string {
  return `${target.host.toLowerCase()}:${target.port}`;
}

export interface CommandConnections {
  judge: ConnectionJudge;
  /** Closes the questions still open (the command ended): their connections are refused. */
  close(reason: string): Promise<void>;
}

export interface CommandConnectionsScope {
  tree: Tree;
  session: SessionScope;
  turn: TurnCore;
  tool: RuntimeTool;
  /** The command line whose connections these are. */
  command: string;
  /** The policy in force, or undefined (permission modes only: every host is asked). */
  policy: () => Policy | undefined;
  trusted: () => boolean;
}

export function commandConnections(scope: CommandConnectionsScope): CommandConnections {
  const { session, turn, tool, command } = scope;
  return connectionsOf({
    tree: scope.tree, policy: scope.policy, trusted: scope.trusted, command, agent: session.agentName,
    tool: {
      id: tool.id, name: tool.name, kind: tool.kind, description: tool.description, annotations: { ...tool.annotations },
      ...(tool.commandArg ? { commandArg: tool.commandArg } : {}),
    },
    asker: () => ({ session, turnId: turn.id }),
    auditScope: () => ({ session: session.id, turn: turn.id, agent: session.agentName }),
    hostsOf: () => hostsOf(scope.tree, session.id),
    title: (target) => `${session.agentName}'s command wants to reach ${target.host}:${target.port}: ${command}`,
    what: 'this command',
    ended: 'the command has ended',
  });
}

/**
 * The connections of one run of a sandboxed MCP server's process (docs/mcp.md, "Sandboxed
 * servers"): judged like a command's, with the server's command line as the command. The process
 * lives across turns, so the questions are not one turn's: a host no rule decides is asked on the
 * turn that is running a call of the server, else the turn that started it while it still runs
 * (`asker`); with no turn running nobody could answer, and the connection is refused. A person's
 * Allow holds for that host for this run of the server (once), or for the server in this session
 * tree (Allow for the Session, or for a while): a server's hosts and the commands' are kept apart.
 */
export interface ServerConnectionsScope {
  tree: Tree;
  /** The server's name (`.vscode/mcp.json`); its questions name the tool source `mcp.<name>`. */
  server: string;
  /** Its command line as written (variables unresolved), shell-quoted: what the rules' `commands` match. */
  command: string;
  /** The session and turn a question goes to now, or undefined when no turn is running. */
  asker: () => { session: SessionScope; turnId: string } | undefined;
  /** The session the tree's audit lines name when no turn is running (the root session). */
  session: SessionScope;
  policy: () => Policy | undefined;
  trusted: () => boolean;
}

export function serverConnections(scope: ServerConnectionsScope): CommandConnections {
  const { server, command } = scope;
  const id = `mcp.${server}`;
  return connectionsOf({
    tree: scope.tree, policy: scope.policy, trusted: scope.trusted, command,
    agent: scope.asker()?.session.agentName ?? scope.session.agentName,
    tool: {
      id, name: server, kind: 'mcp', description: `The MCP server ${server}, running sandboxed: ${command}`,
      annotations: {},
    },
    asker: scope.asker,
    auditScope: () => {
      const asker = scope.asker();
      return asker ? { session: asker.session.id, turn: asker.turnId, agent: asker.session.agentName } : { session: scope.session.id, agent: scope.session.agentName };
    },
    hostsOf: () => hostsOf(scope.tree, `server:${server}`),
    title: (target) => `the MCP server ${server} (sandboxed) wants to reach ${target.host}:${target.port}: ${command}`,
    what: `the MCP server ${server}`,
    ended: `the MCP server ${server} has ended`,
  });
}

interface ConnectionsSetup {
  tree: Tree;
  policy: () => Policy | undefined;
  trusted: () => boolean;
  command: string;
  /** The agent the rules' `agents` match (connection.ts). */
  agent: string;
  tool: ApprovalRequest['tool'];
  asker: () => { session: SessionScope; turnId: string } | undefined;
  auditScope: () => { session: string; turn?: string; agent?: string };
  /** The hosts a person allowed for longer than once, where they are kept. */
  hostsOf: () => Map<string, number>;
  title: (target: ConnectionTarget) => string;
  /** "this command": what a refusal names. */
  what: string;
  /** Why a connection after `close` is refused. */
  ended: string;
}

function connectionsOf(setup: ConnectionsSetup): CommandConnections {
  const { tree, tool, command } = setup;
  /** Hosts a person allowed for this command (Allow once). */
  const allowedHere = new Set<string>();
  const asking = new Map<string, Promise<ConnectionAnswer>>();
  const open = new Set<string>();
  let closed = false;

  const audit = (target: ConnectionTarget, decided: ConnectionDecision, extra: Record<string, unknown> = {}): void => {
    tree.audit({
      event: 'connection', ...setup.auditScope(), tool: tool.id,
      inputDigest: inputDigest({ command }), summary: summarizeInput(`${target.host}:${target.port} ← ${command}`),
      host: target.host, port: target.port, decision: decided.decision, rule: decided.rule, ...(decided.reason !== undefined ? { reason: decided.reason } : {}),
      ...extra,
    });
  };

  const ask = async (target: ConnectionTarget, decided: ConnectionDecision): Promise<ConnectionAnswer> => {
    const asker = setup.asker();
    if (asker === undefined) {
      // A server's connection while no turn runs: there is no one to put the question to.
      const reason = `${target.host} was not allowed for ${setup.what}: no rule decides it, and no turn is running to ask a person`;
      audit(target, { ...decided, decision: 'deny', reason });
      return { allow: false, reason };
    }
    const { session, turnId } = asker;
    const decision: PolicyDecision = {
      decision: 'ask', rule: decided.rule, lowered: false, warnings: [], ...(decided.reason !== undefined ? { reason: decided.reason } : {}),
      ask: { onTimeout: 'deny', remember: 'session', timeout: HOST_ASK_TIMEOUT_SECONDS },
    };
    const request: ApprovalRequest = {
      tool,
      title: setup.title(target),
      input: { command, host: target.host, port: target.port },
      decision,
      sessionAllowed: true,
      longestGrant: 'session',
      connection: { host: target.host, port: target.port, url: decided.url, command },
      timeout: { at: Date.now() + HOST_ASK_TIMEOUT_SECONDS * 1000, onTimeout: 'deny' },
    };
    const callback = new OpenApproval(newId('cb'), session.id, turnId, session.agentName, Date.now(), request);
    tree.audit({
      event: 'callback-opened', session: session.id, turn: turnId, agent: session.agentName, tool: tool.id, callback: callback.id,
      inputDigest: inputDigest(request.input), summary: summarizeInput(`${target.host}:${target.port} ← ${command}`),
      host: target.host, port: target.port, decision: 'ask', rule: decided.rule, ...(decided.reason !== undefined ? { reason: decided.reason } : {}),
    });
    open.add(callback.id);
    try {
      const outcome = await tree.waiting(openCallback(tree, callback, HOST_ASK_TIMEOUT_SECONDS, 'deny'));
      if (outcome.kind === 'closed') return { allow: false, reason: `not allowed: ${outcome.reason}` };
      const answer = outcome.answer;
      if (answer.type !== 'allow') {
        const why = answer.type === 'deny' && answer.options.reason ? answer.options.reason : outcome.by === 'timeout' ? 'nobody answered in time' : 'a person refused it';
        return { allow: false, reason: `${target.host} was not allowed for ${setup.what}: ${why}` };
      }
      const key = hostKey(target);
      allowedHere.add(key);
      if (answer.scope === 'session') setup.hostsOf().set(key, Infinity);
      if (answer.scope === 'duration' && answer.seconds !== undefined) setup.hostsOf().set(key, Date.now() + answer.seconds * 1000);
      return { allow: true };
    } finally {
      open.delete(callback.id);
    }
  };

  const judge: ConnectionJudge = async (target) => {
    if (closed) return { allow: false, reason: setup.ended };
    const policy = setup.policy();
    const decided: ConnectionDecision = policy
      ? policy.judgeConnection(command, target, setup.agent, { workspaceFolder: tree.workspaceFolder, trusted: setup.trusted(), sandbox: true })
      : { decision: 'ask', rule: null, url: `${target.host}:${target.port}`, reason: 'there is no policy: every host a sandboxed command reaches is asked' };
    if (decided.decision === 'allow') {
      audit(target, decided);
      return { allow: true };
    }
    if (decided.decision === 'deny') {
      audit(target, decided);
      const by = decided.rule ? `the rule ${decided.rule.id ?? `#${decided.rule.index + 1}`} (${decided.rule.file}:${decided.rule.line})` : 'the policy';
      return { allow: false, reason: `${target.host} is denied by ${by}${decided.reason ? `: ${decided.reason}` : ''}` };
    }
    const key = hostKey(target);
    const until = setup.hostsOf().get(key);
    if (allowedHere.has(key) || (until !== undefined && until > Date.now())) {
      audit(target, decided, { answeredBy: 'session' });
      return { allow: true };
    }
    let pending = asking.get(key);
    if (!pending) {
      pending = ask(target, decided);
      asking.set(key, pending);
      void pending.finally(() => asking.delete(key));
    }
    return pending;
  };

  return {
    judge,
    close: async (reason) => {
      closed = true;
      for (const id of open) {
        const record = tree.callbacks.get(id);
        if (record?.open) record.settle({ kind: 'closed', reason });
      }
      await Promise.allSettled([...asking.values()]);
    },
  };
}
