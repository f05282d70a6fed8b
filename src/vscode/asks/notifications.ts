// Each ask raises one notification (a result held for review: Pass / Withhold / Show) naming who asks, the tool id, a summary of the input and the
// rule that asked, with Allow / the longest grant it may give (Allow for Session) / Deny (the shorter grants under More…). A burst is coalesced into one
// notification that opens the tree. A setting turns them off (tree and status bar only).
// An approval's notification closes as soon as its ask is answered, from anywhere: a message with
// buttons (showWarningMessage) can never be closed by the extension, so it is a progress
// notification, which ends with its ask, whose answers are links in its message.
import * as vscode from 'vscode';
import type { OpenCallback } from '../../runtime/tree/answers.js';
import type { ListedSession } from '../../runtime/host/listedSession.js';
import type { SessionHost } from '../../runtime/host/sessionHost.js';
import { alreadyAnswered, alreadyReviewed, choiceLabel, notificationChoices } from './answering.js';
import { choiceCommand, notificationAnswerLink } from './chatApprovals.js';
import { askMessage, defang } from '../basics/describe.js';
import { truncate } from '../../runtime/audit/audit.js';
import { answerElicitation, elicitationActions } from './elicitation.js';
import { answerResultReview, reviewActions, showHeldResult } from './resultReview.js';
import type { Log } from '../basics/log.js';

/** The longest message VS Code shows whole in a notification (it cuts the rest), less a margin. */
const MESSAGE_MAX = 990;

/** How long after a first ask further asks count as the same burst. */
const BURST_WINDOW_MS = 400;

export class Notifications implements vscode.Disposable {
  private held: Array<{ callback: OpenCallback; hosted: ListedSession }> = [];
  private burstTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly subscription: vscode.Disposable;
  /** The approvals' notifications still showing: each ends when its ask is answered, or the window closes. */
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly host: SessionHost,
    private readonly log: Log,
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
    const { buttons } = notificationChoices(callback.request);
    const links = [
      ...buttons.map((choice) => notificationAnswerLink(choiceLabel(choice), choiceCommand(choice), callback.id)),
      notificationAnswerLink(vscode.l10n.t('More…'), 'agentPolicy.moreAnswers', callback.id),
    ];
    const answers = links.join(' · ');
    // Cancellable: a notification with no button shows one line, its answers hidden. Its Cancel
    // closes the notification only; the ask stays open in the tree and the status bar.
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, cancellable: true },
      (progress, token) => {
        // VS Code cuts a message at 1000 characters, links included: the ask's text gives way, never its answers.
        progress.report({ message: `${truncate(askMessage(hosted, callback), MESSAGE_MAX - answers.length)}  ${answers}` });
        return this.settled(callback.id, token);
      },
    );
  }

  /** Resolves once the callback is no longer open (answered from any surface, closed, or its session gone), or the window closes. */
  private settled(callbackId: string, token: vscode.CancellationToken): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        subscription.dispose();
        cancelled.dispose();
        this.waiting.delete(done);
        resolve();
      };
      const subscription = this.host.onDidChange(() => {
        if (!this.isOpen(callbackId)) done();
      });
      const cancelled = token.onCancellationRequested(done);
      this.waiting.add(done);
      if (!this.isOpen(callbackId)) done();
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

  dispose(): void {
    if (this.burstTimer) clearTimeout(this.burstTimer);
    for (const done of [...this.waiting]) done();
    this.subscription.dispose();
  }
}
