// Where Agent Policy keeps what outlives one hook process: the last valid policies, the readings
// validated before, the hook's default audit log, the compiled hook code. Node modules only: the
// `agentpolicy` dispatcher imports it.
import * as os from 'node:os';
import * as path from 'node:path';

/** The user's state folder for Agent Policy ($XDG_STATE_HOME/agentpolicy, else ~/.local/state/agentpolicy). */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'agentpolicy');
}
