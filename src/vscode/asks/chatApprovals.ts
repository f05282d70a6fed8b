// The argument the chat's buttons and the notifications' answer links pass to our answer commands (Allow, Allow for Session, Deny,
// Sign In…, Respond…, Pass, Withhold, Show): the callback's id and nothing else, so that nothing
// the agent or its model wrote can choose what is answered or how. The command answers the open
// callback with that id through the same path as the notification and the tree (answering.ts):
// the answer is checked against the callback, and one already settled runs nothing.
// Plain TypeScript, no `vscode` import.

import type { Choice } from './answering.js';

const CHOICE_COMMANDS: Record<'allow' | 'allow-session' | 'deny', string> = {
  allow: 'agentPolicy.allow',
  'allow-session': 'agentPolicy.allowForSession',
  deny: 'agentPolicy.deny',
};

/** The command that gives an answer; a time-limited one opens Allow for a While…'s pick of them. */
export function choiceCommand(choice: Choice): string {
  return choice === 'allow' || choice === 'allow-session' || choice === 'deny' ? CHOICE_COMMANDS[choice] : 'agentPolicy.allowForAWhile';
}

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
  return namesCallback(arg, 'chatAnswer');
}

/** A notification's answer links' argument: marks the answer as given from the notification. */
export interface NotificationAnswerArg {
  notificationAnswer: true;
  callbackId: string;
}

export function isNotificationAnswerArg(arg: unknown): arg is NotificationAnswerArg {
  return namesCallback(arg, 'notificationAnswer');
}

function namesCallback(arg: unknown, flag: 'chatAnswer' | 'notificationAnswer'): boolean {
  if (typeof arg !== 'object' || arg === null) return false;
  const a = arg as Record<string, unknown>;
  return a[flag] === true && typeof a.callbackId === 'string' && CALLBACK_ID.test(a.callbackId);
}

/**
 * A markdown link in a notification's message that runs `command` on this callback: the only
 * notification an extension can close when its ask is answered elsewhere (`withProgress`) takes
 * no buttons of its own, and VS Code runs a message's `command:` links.
 */
export function notificationAnswerLink(label: string, command: string, callbackId: string): string {
  const arg: NotificationAnswerArg = { notificationAnswer: true, callbackId };
  return `[${label.replace(/[[\]\\]/g, '')}](command:${command}?${encodeURIComponent(JSON.stringify([arg]))})`;
}
