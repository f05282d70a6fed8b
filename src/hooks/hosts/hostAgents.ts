// The agent programs whose hooks `agentpolicy hook` answers, and what each one's hook can be told.
// The exact formats, and how each fact was checked, are in docs/hook-hosts.md.

import { HOST_AGENTS } from '../../policy/file/policyNames.js';

export { HOST_AGENTS };
export type HostAgent = (typeof HOST_AGENTS)[number];

export interface HostInfo {
  /** The name a person knows it by: "Claude Code wants to run …". */
  label: string;
  /**
   * The host's own hook timeout when the hook entry sets none, in seconds. The hook answers
   * well before it: a host lets a call through when its hook is slow.
   */
  defaultTimeoutSeconds: number;
}

export const HOSTS: Readonly<Record<HostAgent, HostInfo>> = {
  claude: { label: 'Claude Code', defaultTimeoutSeconds: 600 },
  codex: { label: 'Codex', defaultTimeoutSeconds: 600 },
  gemini: { label: 'Gemini CLI', defaultTimeoutSeconds: 60 },
  copilot: { label: 'Copilot CLI', defaultTimeoutSeconds: 30 },
  vscode: { label: 'VS Code agent mode', defaultTimeoutSeconds: 30 },
  cursor: { label: 'Cursor', defaultTimeoutSeconds: 60 },
};

export function isHostAgent(name: string): name is HostAgent {
  return (HOST_AGENTS as readonly string[]).includes(name);
}
