// Sign-ins: a tool or a tool source that needs its user signed in opens a sign-in callback
// before it is listed or run, and checks again once it is answered.
// Imports answers.ts, callbacks.ts, tree.ts (for newId) and types only (turn, tools).
import { OpenSignIn, type SignInSourceRequest } from './answers.js';
import { openCallback } from './callbacks.js';
import { newId, type SessionScope, type Tree } from './tree.js';
import type { TurnCore } from './turn.js';
import type { SignInSource } from '../tools/tools.js';

/** true when connected; otherwise the message for the model. */
export async function ensureSignedIn(tree: Tree, session: SessionScope, turn: TurnCore, source: SignInSource): Promise<true | string> {
  // Checking is work in flight: a driver must not take the tree for quiet (and return an empty Blocked) meanwhile.
  const connected = (): Promise<boolean> => tree.track(async () => await source.isConnected());
  if (await connected()) return true;
  const request: SignInSourceRequest = {
    source: source.source, id: source.id, name: source.name, mode: source.wasConnected?.() ? 'reconnect' : 'connect',
  };
  const callback = new OpenSignIn(newId('cb'), session.id, turn.id, session.agentName, Date.now(), [request]);
  const outcome = await openCallback(tree, callback, undefined, 'deny');
  if (outcome.kind === 'closed') return `not run: ${outcome.reason}`;
  if (outcome.answer.type !== 'sign-in') return `the sign-in to ${source.name} was not completed`;
  if (outcome.answer.denied.includes(source.id)) return `the user refused to connect ${source.name}`;
  if (!(await connected())) return `${source.name} is still not connected: the user said it was, but it is not`;
  return true;
}
