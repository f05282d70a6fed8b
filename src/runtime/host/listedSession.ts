// What an editor window lists and shows of a session: ours (sessionHost.ts's HostedSession, a
// session the window runs) or another agent's (externalSession.ts: Claude Code, Codex, … asking
// through its pre-tool hook). The views read only this; answering goes through SessionHost.
import type { OpenCallback } from '../tree/answers.js';
import type { Grant } from '../tree/sessionGrants.js';

export interface SessionNodeInfo {
  id: string;
  agent: string;
  parentId: string | undefined;
  /** The root session's turn under which this session was (transitively) started. */
  rootTurnId: string;
}

/** The host agent whose hook asks, for a session that is not ours. */
export interface ExternalHost {
  /** Its id in `HOST_AGENTS` (src/hooks/hosts/hostAgents.ts): `claude`, `codex`, … */
  host: string;
  /** The name a person knows it by: "Claude Code". */
  hostLabel: string;
  /** The host's own session id, as it sent it (untrusted text: show it defanged). */
  hostSession: string;
}

export interface ListedSession {
  readonly id: string;
  /** The root agent's name (another agent's: its host's label). */
  readonly agent: string;
  /** `external`: another agent's session, which this window never runs, only answers for. */
  readonly state: 'running' | 'completed' | 'failed' | 'cancelled' | 'external';
  readonly prompt: string;
  readonly transcript: readonly string[];
  readonly nodes: ReadonlyMap<string, SessionNodeInfo>;
  readonly currentTurnId: string;
  /** Set for another agent's session. */
  readonly external?: ExternalHost;
  /** Flow rules: the marks the session tree carries, sorted (none for another agent's session). */
  readonly marks?: readonly string[];
  /** Another agent's session: marks perhaps there (an ask its host put to its own person). */
  readonly maybeMarks?: readonly string[];
  openCallbacks(): OpenCallback[];
  /** What a person allowed beyond one call and is still in force (Allow for Session, for 15 minutes…), with the session or subagent that holds it. */
  grants(): Array<{ sessionId: string; grant: Grant }>;
  /** Takes a grant back (audited); false when it had lapsed or is not this session's. */
  revokeGrant(grantId: string): boolean;
  /** The chain of agent names from the root to the session that asked, e.g. ["main", "researcher"]. */
  pathOf(sessionId: string): SessionNodeInfo[];
  /** A subagent's callback left open by an earlier turn of the root (runtime.md rule 15). */
  fromEarlierTurn(callback: OpenCallback): boolean;
}
