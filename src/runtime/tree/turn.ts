// Turns: one prompt to a session and everything the agent does until it answers. `TurnCore` is
// the runtime's record of a turn; `Turn` is the handle a program holds to answer the callbacks
// and wait for the result; `endTurn` is the one way a turn ends.
// Imports answers.ts, callbacks.ts and tree.ts; it reaches its session through `TurnOwner`.
import { Completed, Failed, type Blocked, type CallbackAnswer, type AnswerResult, type TurnState } from './answers.js';
import { closeCallbacks, type AnsweredBy } from './callbacks.js';
import type { SessionScope, Tree } from './tree.js';

/** What a turn's handle asks of its session (session.ts's Session). */
export interface TurnOwner {
  answerCallback(callbackId: string, answer: unknown, by: AnsweredBy): AnswerResult;
  drive(turn: TurnCore, after: Blocked | undefined): Promise<TurnState>;
}

export class TurnCore {
  state: 'running' | 'completed' | 'failed' = 'running';
  text = '';
  error = '';
  readonly abort = new AbortController();
  private resolveDone!: () => void;
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(
    readonly id: string,
    readonly session: TurnOwner,
  ) {}

  finish(state: 'completed' | 'failed', value: string): void {
    if (this.state !== 'running') return;
    this.state = state;
    if (state === 'completed') this.text = value;
    else this.error = value;
    this.resolveDone();
  }

  get finalState(): TurnState | undefined {
    if (this.state === 'completed') return new Completed(this.id, this.text);
    if (this.state === 'failed') return new Failed(this.id, this.error);
    return undefined;
  }
}

/** A turn of a session: answer its (and its subagents') callbacks, and wait for its result. */
export class Turn {
  constructor(private readonly core: TurnCore) {}

  get id(): string {
    return this.core.id;
  }

  /** A bad answer (KeepCallbackOpen, a session allow of a hook's approval, …) rejects with SdkError; it never throws synchronously. */
  async answer(callbackId: string, answer: CallbackAnswer, options: { by?: AnsweredBy } = {}): Promise<AnswerResult> {
    return this.core.session.answerCallback(callbackId, answer, options.by ?? 'person');
  }

  result(options: { after?: Blocked } = {}): Promise<TurnState> {
    return this.core.session.drive(this.core, options.after);
  }
}

/** Ends a running turn of `session` (once) and tells the tree. */
export function endTurn(tree: Tree, session: SessionScope, turn: TurnCore, state: 'completed' | 'failed', value: string): void {
  if (turn.state !== 'running') return;
  // A turn that fails with calls still asked (a parallel call threw) closes them: nothing may run for an ended turn.
  closeCallbacks(tree, session.id, turn.id, `the turn ended (${state}${state === 'failed' ? `: ${value}` : ''})`);
  turn.finish(state, value);
  tree.emit({
    type: 'turn-ended', sessionId: session.id, turnId: turn.id, agent: session.agentName, state,
    ...(state === 'completed' ? { text: value } : { error: value }),
  });
  tree.changed();
}
