// Each ask raises one notification (a result held for review: Pass / Withhold / Show) naming who asks, the tool id, a summary of the input and the
// rule that asked, with Allow / the longest grant it may give (Allow for Session) / Deny (the shorter grants under More…). A burst is coalesced into one
// notification that opens the tree. A setting turns them off (tree and status bar only).
import * as vscode from 'vscode';
import type { OpenCallback } from '../runtime/tree/answers.js';
import type { ListedSession } from '../runtime/host/listedSession.js';
import type { SessionHost } from '../runtime/host/sessionHost.js';
import { alreadyAnswered, alreadyReviewed, answerCallback, answerFor, choiceDescription, choiceIcon, choiceLabel, notificationChoices, type Choice } from './answering.js';
import { askMessage, defang } from './describe.js';
import { answerElicitation, elicitationActions } from './elicitation.js';
import { answerResultReview, reviewActions, showHeldResult } from './resultReview.js';
import type { Log } from './log.js';
import { NO_CONTROLS, type ManagedControls } from '../policy/rules/managedControls.js';

/** How long after a first ask further asks count as the same burst. */
const BURST_WINDOW_MS = 400;

export class Notifications implements vscode.Disposable {
  private held: Array<{ callback: OpenCallback; hosted: ListedSession }> = [];
  private burstTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly host: SessionHost,
    private readonly log: Log,
    private readonly controls: () => ManagedControls = () => NO_CONTROLS,
  ) {
    const opened = host.onDidOpenCallback((callback, hosted) => this.opened(callback, hosted));
    // A failed session says why at once (a refused key, an unknown model): the transcript alone is easy to miss.
    const failed = host.onDidFail((hosted) => {
      const show = vscode.l10n.t('Show Transcript');
      void vscode.window.showErrorMessage(defang(vscode.l10n.t('Agent Policy: {0} failed: {1}', hosted.agent, hosted.error ?? '')), show).then((picked) => {
        if (picked) void vscode.commands.executeCommand('agentPolicy.showTranscript', hosted.id);
      });
    });
    this.subscription = vscode.Disposable.from(new vscode.Disposable(opened.dispose), new vscode.Disposable(failed.dispose));
  }

  private get enabled(): boolean {
    return vscode.workspace.getConfiguration('agentPolicy').get<string>('notifications', 'all') !== 'off';
  }

  private get burstSize(): number {
    return Math.max(2, vscode.workspace.getConfiguration('agentPolicy').get<number>('notificationBurst', 3));
  }

  private opened(callback: OpenCallback, hosted: ListedSession): void {
    if (!this.enabled) return;
    // The first ask shows at once; what follows within the window waits to see if it is a burst.
    if (this.burstTimer === undefined) {
      this.show(callback, hosted);
      this.burstTimer = setTimeout(() => this.flush(), BURST_WINDOW_MS);
      return;
    }
    this.held.push({ callback, hosted });
  }

  private flush(): void {
    this.burstTimer = undefined;
    const held = this.held.filter(({ callback }) => this.isOpen(callback.id));
    this.held = [];
    if (held.length === 0) return;
    if (held.length + 1 >= this.burstSize) {
      const open = this.host.openCallbacks().length;
      const openView = vscode.l10n.t('Open');
      void vscode.window.showWarningMessage(vscode.l10n.t('Agent Policy: {0} approvals are waiting.', open), openView).then((picked) => {
        if (picked === openView) void vscode.commands.executeCommand('agentPolicy.focusCallbacks');
      });
      return;
    }
    for (const { callback, hosted } of held) this.show(callback, hosted);
  }

  private isOpen(callbackId: string): boolean {
    return this.host.openCallbacks().some(({ callback }) => callback.id === callbackId);
  }

  private show(callback: OpenCallback, hosted: ListedSession): void {
    this.log.info(`ask ${callback.id}: ${askMessage(hosted, callback)}`);
    if (callback.type === 'sign-in') {
      void vscode.window.showWarningMessage(askMessage(hosted, callback), vscode.l10n.t('Sign In…')).then((picked) => {
        if (picked) void vscode.commands.executeCommand('agentPolicy.signIn', callback.id);
      });
      return;
    }
    if (callback.type === 'elicitation') {
      const { respond, decline } = elicitationActions();
      void vscode.window.showWarningMessage(askMessage(hosted, callback), respond, decline).then(async (picked) => {
        if (!picked) return;
        // Checked before the form, so nobody fills one in for a request already answered.
        if (!this.isOpen(callback.id)) return void vscode.window.showInformationMessage(alreadyAnswered());
        await answerElicitation(this.host, this.log, callback, picked === respond ? 'respond' : 'decline');
      });
      return;
    }
    if (callback.type === 'result-review') return this.review(callback, hosted);
    const { buttons, more } = notificationChoices(callback.request);
    const moreLabel = vscode.l10n.t('More…');
    const labels = [...buttons.map(choiceLabel), moreLabel];
    void vscode.window.showWarningMessage(askMessage(hosted, callback), ...labels).then(async (picked) => {
      if (picked === moreLabel) return this.more(callback.id, more);
      const choice = buttons.find((c) => choiceLabel(c) === picked);
      if (!choice) return;
      await answerCallback(this.host, this.log, callback.id, answerFor(choice), alreadyAnswered(), 'notification');
    });
  }

  /** A held result: Pass / Withhold / Show; Show opens it read-only and asks again. */
  private review(callback: Extract<OpenCallback, { type: 'result-review' }>, hosted: ListedSession): void {
    const { pass, withhold, show } = reviewActions();
    void vscode.window.showWarningMessage(askMessage(hosted, callback), pass, withhold, show).then(async (picked) => {
      if (!picked) return;
      if (!this.isOpen(callback.id)) return void vscode.window.showInformationMessage(alreadyReviewed());
      if (picked === show) {
        await showHeldResult(callback);
        return this.review(callback, hosted);
      }
      await answerResultReview(this.host, this.log, callback, picked === pass ? 'pass' : 'withhold');
    });
  }

  /** More…: the shorter grants the buttons had no room for (Allow for 15 Minutes, …), then the other actions. */
  private async more(callbackId: string, choices: readonly Choice[]): Promise<void> {
    const picked = await vscode.window.showQuickPick(
      [
        ...choices.map((choice) => ({ label: `${choiceIcon(choice)} ${choiceLabel(choice)}`, description: choiceDescription(choice), choice, command: undefined })),
        // Not where the managed controls say answers add no rules (controls: addRule false).
        ...(this.controls().addRule ? [{ label: `$(add) ${vscode.l10n.t('Allow and Add Rule…')}`, command: 'agentPolicy.allowAndAddRule' }] : []),
        { label: `$(info) ${vscode.l10n.t('Explain This Call')}`, command: 'agentPolicy.explain' },
        { label: `$(bell) ${vscode.l10n.t('Show in Open Callbacks')}`, command: 'agentPolicy.focusCallbacks' },
      ],
      { title: vscode.l10n.t('Agent Policy: More') },
    );
    if (!picked) return;
    if ('choice' in picked) return void (await answerCallback(this.host, this.log, callbackId, answerFor(picked.choice), alreadyAnswered(), 'notification'));
    await vscode.commands.executeCommand(picked.command, callbackId);
  }

  dispose(): void {
    if (this.burstTimer) clearTimeout(this.burstTimer);
    this.subscription.dispose();
  }
}
