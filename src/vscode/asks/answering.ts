// Answering a callback from any surface (notification, tree, command palette), with the same
// message when the answer came too late: it was answered elsewhere, and nothing ran.
import * as vscode from 'vscode';
import { offeredDurations } from '../../policy/file/grantLength.js';
import { AllowApproval, DenyApproval, SdkError, type ApprovalRequest, type CallbackAnswer } from '../../runtime/tree/answers.js';
import type { AnswerSurface, SessionHost } from '../../runtime/host/sessionHost.js';
import type { Log } from '../basics/log.js';
import { walkthroughStepDone } from '../basics/walkthroughSteps.js';

/** An answer to an approval: once, a time-limited grant (`allow-for-900`: 15 minutes), the session, or deny. */
export type Choice = 'allow' | 'allow-session' | 'deny' | `allow-for-${number}`;

/** "Allow", "Allow for 15 Minutes", "Allow for Session", "Deny". */
export function choiceLabel(choice: Choice): string {
  if (choice === 'allow') return vscode.l10n.t('Allow');
  if (choice === 'allow-session') return vscode.l10n.t('Allow for Session');
  if (choice === 'deny') return vscode.l10n.t('Deny');
  return vscode.l10n.t('Allow for {0}', grantLength(secondsOf(choice)));
}

/** "15 Minutes", "1 Hour", "1 Hour 30 Minutes": grantLength.ts's durationLabel, in the window's language. */
export function grantLength(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts: string[] = [];
  if (h > 0) parts.push(h === 1 ? vscode.l10n.t('1 Hour') : vscode.l10n.t('{0} Hours', h));
  if (m > 0) parts.push(m === 1 ? vscode.l10n.t('1 Minute') : vscode.l10n.t('{0} Minutes', m));
  if (s > 0 || parts.length === 0) parts.push(s === 1 ? vscode.l10n.t('1 Second') : vscode.l10n.t('{0} Seconds', s));
  return parts.join(' ');
}

function secondsOf(choice: `allow-for-${number}`): number {
  return Number(choice.slice('allow-for-'.length));
}

/**
 * Every answer an approval offers, in order: Allow, the time-limited grants its rule lets a person
 * give (15 minutes, 1 hour, or the rule's own duration), Allow for Session where offered, Deny.
 */
export function approvalChoices(request: ApprovalRequest): Choice[] {
  const timed = offeredDurations(request.longestGrant).map((s): Choice => `allow-for-${s}`);
  return ['allow', ...timed, ...(request.sessionAllowed ? ['allow-session' as const] : []), 'deny'];
}

/**
 * The few a notification shows as buttons (it has room for four or five): Allow, the shortest
 * grant for a while, the widest grant (the session, or the longest duration), Deny. The others
 * are under its More….
 */
export function notificationChoices(request: ApprovalRequest): { buttons: Choice[]; more: Choice[] } {
  const all = approvalChoices(request);
  const grants = all.filter((c) => c !== 'allow' && c !== 'deny');
  // Four buttons at most (Allow, the longest grant, Deny, More…): a fifth has VS Code cut every
  // label to "All…" / "De…". The shorter grants are under More….
  const shown = new Set<Choice>(['allow', 'deny', ...grants.slice(-1)]);
  return { buttons: all.filter((c) => shown.has(c)), more: all.filter((c) => !shown.has(c)) };
}

/** What each answer does, for quick picks. */
export function choiceDescription(choice: Choice): string {
  if (choice === 'allow') return vscode.l10n.t('run this call once');
  if (choice === 'deny') return vscode.l10n.t('do not run it; the agent is told');
  if (choice === 'allow-session') return vscode.l10n.t('run this call, and the same call (or a chain of the same asking commands) for the rest of the session');
  return vscode.l10n.t('run this call, and the same call (or a chain of the same asking commands) for the next {0}', grantLength(secondsOf(choice)).toLowerCase());
}

export const CHOICE_ICONS = { allow: '$(check)', grant: '$(check-all)', deny: '$(close)' } as const;

export function choiceIcon(choice: Choice): string {
  return choice === 'allow' ? CHOICE_ICONS.allow : choice === 'deny' ? CHOICE_ICONS.deny : CHOICE_ICONS.grant;
}

export function answerFor(choice: Choice): CallbackAnswer {
  if (choice === 'allow') return new AllowApproval();
  if (choice === 'allow-session') return new AllowApproval({ scope: 'session' });
  if (choice === 'deny') return new DenyApproval({ reason: 'a person denied this call' });
  return new AllowApproval({ scope: 'duration', seconds: secondsOf(choice) });
}

export function alreadyAnswered(): string {
  return vscode.l10n.t('Agent Policy: this was already answered elsewhere; nothing was run.');
}
/** A held result answered elsewhere: the tool did run, so "nothing was run" would be wrong. */
export function alreadyReviewed(): string {
  return vscode.l10n.t('Agent Policy: this result was already reviewed elsewhere (or its turn ended); nothing changed.');
}

/** Returns true when this answer settled the callback. `via`: the surface it came from, which the transcript and the chat name. */
export async function answerCallback(host: SessionHost, log: Log, callbackId: string, answer: CallbackAnswer, tooLate: string = alreadyAnswered(), via?: AnswerSurface): Promise<boolean> {
  try {
    const result = await host.answer(callbackId, answer, via !== undefined ? { via } : {});
    if (result?.type === 'answered') {
      log.info(`answered ${callbackId}: ${answer.type}${answer.type === 'allow' ? ` (${answer.scope}${answer.seconds !== undefined ? ` ${answer.seconds} s` : ''})` : answer.type === 'elicitation' || answer.type === 'result-review' ? ` (${answer.action})` : ''}`);
      // The walkthrough's answer steps complete on where the ask was answered, whichever answer it was.
      if (via === 'notification') walkthroughStepDone('answeredFromNotification');
      else if (via === 'palette') walkthroughStepDone('answeredFromPalette');
      return true;
    }
    void vscode.window.showInformationMessage(tooLate);
    return false;
  } catch (error) {
    if (error instanceof SdkError) {
      void vscode.window.showErrorMessage(vscode.l10n.t('Agent Policy: {0}', error.message));
      return false;
    }
    throw error;
  }
}
