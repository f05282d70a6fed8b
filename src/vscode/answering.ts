// Answering a callback from any surface (notification, tree, command palette), with the same
// message when the answer came too late: it was answered elsewhere, and nothing ran.
import * as vscode from 'vscode';
import { AllowApproval, DenyApproval, SdkError, type CallbackAnswer } from '../runtime/answers.js';
import type { SessionHost } from '../runtime/sessionHost.js';
import type { Log } from './log.js';

export type Choice = 'allow' | 'allow-session' | 'deny';

export const CHOICE_LABELS: Record<Choice, string> = { allow: 'Allow', 'allow-session': 'Allow for Session', deny: 'Deny' };

export function answerFor(choice: Choice): CallbackAnswer {
  if (choice === 'allow') return new AllowApproval();
  if (choice === 'allow-session') return new AllowApproval({ scope: 'session' });
  return new DenyApproval({ reason: 'a person denied this call' });
}

export const ALREADY_ANSWERED = 'Agent Policy: this was already answered elsewhere; nothing was run.';

/** Returns true when this answer settled the callback. */
export async function answerCallback(host: SessionHost, log: Log, callbackId: string, answer: CallbackAnswer): Promise<boolean> {
  try {
    const result = await host.answer(callbackId, answer);
    if (result?.type === 'answered') {
      log.info(`answered ${callbackId}: ${answer.type}${answer.type === 'allow' ? ` (${answer.scope})` : answer.type === 'elicitation' ? ` (${answer.action})` : ''}`);
      return true;
    }
    void vscode.window.showInformationMessage(ALREADY_ANSWERED);
    return false;
  } catch (error) {
    if (error instanceof SdkError) {
      void vscode.window.showErrorMessage(`Agent Policy: ${error.message}`);
      return false;
    }
    throw error;
  }
}
