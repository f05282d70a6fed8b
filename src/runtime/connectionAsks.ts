// The connections of one sandboxed command (policy-format.md, "Sandboxed commands"; docs/network.md):
// the sandbox's proxy asks for each connection; the policy's rules with `domains` or `urls` judge
// it for that command (connection.ts); a host no rule decides is asked of a person as an open
// callback naming the command and the host, like any other ask. A person's Allow holds for that
// host for the rest of the command (Allow once), or for the session's commands (Allow for the
// Session, or for a while); Deny refuses it. Nobody answering within the timeout refuses it.
// Parallel connections to one host wait for one question. Every judgement has its audit line.
import { inputDigest, summarizeInput } from './audit.js';
import { OpenApproval, type ApprovalRequest } from './answers.js';
import { openCallback } from './callbacks.js';
import type { ConnectionDecision, ConnectionTarget } from '../policy/connection.js';
import type { Policy, PolicyDecision } from '../policy/policy.js';
import type { ConnectionAnswer, ConnectionJudge } from './sandboxNetwork.js';
import type { RuntimeTool } from './tools.js';
import { newId, type SessionScope, type Tree } from './tree.js';
import type { TurnCore } from './turn.js';

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
  const { tree, session, turn, tool, command } = scope;
  /** Hosts a person allowed for this command (Allow once). */
  const allowedHere = new Set<string>();
  const asking = new Map<string, Promise<ConnectionAnswer>>();
  const open = new Set<string>();
  let closed = false;

  const audit = (target: ConnectionTarget, decided: ConnectionDecision, extra: Record<string, unknown> = {}): void => {
    tree.audit({
      event: 'connection', session: session.id, turn: turn.id, agent: session.agentName, tool: tool.id,
      inputDigest: inputDigest({ command }), summary: summarizeInput(`${target.host}:${target.port} ← ${command}`),
      host: target.host, port: target.port, decision: decided.decision, rule: decided.rule, ...(decided.reason !== undefined ? { reason: decided.reason } : {}),
      ...extra,
    });
  };

  const ask = async (target: ConnectionTarget, decided: ConnectionDecision): Promise<ConnectionAnswer> => {
    const decision: PolicyDecision = {
      decision: 'ask', rule: decided.rule, lowered: false, warnings: [], ...(decided.reason !== undefined ? { reason: decided.reason } : {}),
      ask: { onTimeout: 'deny', remember: 'session', timeout: HOST_ASK_TIMEOUT_SECONDS },
    };
    const request: ApprovalRequest = {
      tool: {
        id: tool.id, name: tool.name, kind: tool.kind, description: tool.description, annotations: { ...tool.annotations },
        ...(tool.commandArg ? { commandArg: tool.commandArg } : {}),
      },
      title: `${session.agentName}'s command wants to reach ${target.host}:${target.port}: ${command}`,
      input: { command, host: target.host, port: target.port },
      decision,
      sessionAllowed: true,
      longestGrant: 'session',
      connection: { host: target.host, port: target.port, url: decided.url, command },
      timeout: { at: Date.now() + HOST_ASK_TIMEOUT_SECONDS * 1000, onTimeout: 'deny' },
    };
    const callback = new OpenApproval(newId('cb'), session.id, turn.id, session.agentName, Date.now(), request);
    tree.audit({
      event: 'callback-opened', session: session.id, turn: turn.id, agent: session.agentName, tool: tool.id, callback: callback.id,
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
        return { allow: false, reason: `${target.host} was not allowed for this command: ${why}` };
      }
      const key = hostKey(target);
      allowedHere.add(key);
      if (answer.scope === 'session') hostsOf(tree, session.id).set(key, Infinity);
      if (answer.scope === 'duration' && answer.seconds !== undefined) hostsOf(tree, session.id).set(key, Date.now() + answer.seconds * 1000);
      return { allow: true };
    } finally {
      open.delete(callback.id);
    }
  };

  const judge: ConnectionJudge = async (target) => {
    if (closed) return { allow: false, reason: 'the command has ended' };
    const policy = scope.policy();
    const decided: ConnectionDecision = policy
      ? policy.judgeConnection(command, target, session.agentName, { workspaceFolder: tree.workspaceFolder, trusted: scope.trusted(), sandbox: true })
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
    const until = hostsOf(tree, session.id).get(key);
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
