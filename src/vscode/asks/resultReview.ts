// Result review in the editor: a tool's result held by a `"review": "result"` rule is answered
// Pass or Withhold (notification, tree, palette), and Show opens it in a read-only editor. The
// result is untrusted text (a fetched page, an MCP server's answer): shown as plain text in a
// language of its own with link detection off, never rendered as markdown.
import * as vscode from 'vscode';
import { ResultReviewAnswer, type OpenResultReview } from '../../runtime/tree/answers.js';
import type { SessionHost } from '../../runtime/host/sessionHost.js';
import { alreadyReviewed, answerCallback } from './answering.js';
import type { Log } from '../basics/log.js';

export const HELD_RESULT_SCHEME = 'agent-policy-result';
/** Contributed in package.json with `editor.links: false`: a held result's URLs are not clickable. */
export const HELD_RESULT_LANGUAGE = 'agent-policy-held-result';

export type ReviewAction = 'pass' | 'withhold' | 'show';

export function reviewActions(): Record<ReviewAction, string> {
  return { pass: vscode.l10n.t('Pass'), withhold: vscode.l10n.t('Withhold'), show: vscode.l10n.t('Show') };
}

function reviewDescriptions(): Record<ReviewAction, string> {
  return {
    pass: vscode.l10n.t('give the agent this result'),
    withhold: vscode.l10n.t('the agent is told a person withheld it, and gets none of it'),
    show: vscode.l10n.t('read the whole result first (read-only, as plain text)'),
  };
}
const REVIEW_ICONS: Record<ReviewAction, string> = { pass: '$(pass)', withhold: '$(eye-closed)', show: '$(eye)' };

/** The held results' text by callback id, for the read-only documents that show them. */
export class HeldResults implements vscode.TextDocumentContentProvider {
  constructor(private readonly host: SessionHost) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    const id = uri.path.replace(/^\//, '').replace(/\.txt$/, '');
    const open = this.host.openCallbacks().find(({ callback }) => callback.id === id)?.callback;
    // Once answered the result is gone from here: the agent has it (passed) or never will (withheld).
    return open?.type === 'result-review' ? open.request.result : vscode.l10n.t('(this result was already answered: it is no longer held here)');
  }

  static uri(callbackId: string): vscode.Uri {
    return vscode.Uri.from({ scheme: HELD_RESULT_SCHEME, path: `/${callbackId}.txt` });
  }
}

/** Opens a held result in a read-only editor, as plain text. */
export async function showHeldResult(callback: OpenResultReview): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(HeldResults.uri(callback.id));
  await vscode.languages.setTextDocumentLanguage(doc, HELD_RESULT_LANGUAGE);
  await vscode.window.showTextDocument(doc, { preview: true });
}

/** Asks what to do with a held result (or does `action`), and answers. Show opens it and asks again. Escape leaves it held. */
export async function answerResultReview(host: SessionHost, log: Log, callback: OpenResultReview, action?: ReviewAction): Promise<void> {
  for (;;) {
    if (!action) {
      const actions: ReviewAction[] = ['pass', 'withhold', 'show'];
      const [labels, descriptions] = [reviewActions(), reviewDescriptions()];
      const picked = await vscode.window.showQuickPick(
        actions.map((a) => ({ label: `${REVIEW_ICONS[a]} ${labels[a]}`, description: descriptions[a], action: a })),
        {
          title: vscode.l10n.t('Agent Policy: review the result of {0}', callback.request.tool.id),
          placeHolder: vscode.l10n.t('{0}: {1} ({2} characters)', callback.agent, callback.request.summary, callback.request.chars),
          ignoreFocusOut: true,
        },
      );
      if (!picked) return;
      action = picked.action;
    }
    if (action !== 'show') {
      await answerCallback(host, log, callback.id, new ResultReviewAnswer({ action }), alreadyReviewed());
      return;
    }
    await showHeldResult(callback);
    action = undefined;
  }
}
