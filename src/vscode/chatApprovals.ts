// The argument the chat's buttons pass to our answer commands (Allow, Allow for Session, Deny,
// Sign In…, Respond…, Pass, Withhold, Show): the callback's id and nothing else, so that nothing
// the agent or its model wrote can choose what is answered or how. The command answers the open
// callback with that id through the same path as the notification and the tree (answering.ts):
// the answer is checked against the callback, and one already settled runs nothing.
// Plain TypeScript, no `vscode` import.

/** The chat's buttons' argument: marks the answer as given in the chat. */
export interface ChatAnswerArg {
  chatAnswer: true;
  callbackId: string;
}

/** Our callback ids (`cb-…`): letters, digits, `-`, `_`, `.`. */
const CALLBACK_ID = /^[A-Za-z0-9_.-]{1,120}$/;

export function chatAnswerArg(callbackId: string): ChatAnswerArg {
  return { chatAnswer: true, callbackId };
}

/** Whether a command's argument is the chat's: checked field by field, as it crosses VS Code's command service. */
export function isChatAnswerArg(arg: unknown): arg is ChatAnswerArg {
  if (typeof arg !== 'object' || arg === null) return false;
  const a = arg as Record<string, unknown>;
  return a.chatAnswer === true && typeof a.callbackId === 'string' && CALLBACK_ID.test(a.callbackId);
}
