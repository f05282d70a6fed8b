// Session transcripts as read-only documents that grow while the session runs.
import * as vscode from 'vscode';
import type { SessionHost } from '../../runtime/host/sessionHost.js';
import { sessionState } from '../basics/describe.js';

export const TRANSCRIPT_SCHEME = 'agent-policy-transcript';

export class Transcripts implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private pending: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly host: SessionHost) {
    this.disposables.push(
      this.changed,
      vscode.workspace.registerTextDocumentContentProvider(TRANSCRIPT_SCHEME, this),
      // Coalesce updates: a busy session changes many times a second.
      new vscode.Disposable(host.onDidChange(() => {
        this.pending ??= setTimeout(() => {
          this.pending = undefined;
          for (const doc of vscode.workspace.textDocuments) if (doc.uri.scheme === TRANSCRIPT_SCHEME) this.changed.fire(doc.uri);
        }, 100);
      }).dispose),
    );
  }

  static uri(sessionId: string, agent: string): vscode.Uri {
    return vscode.Uri.from({ scheme: TRANSCRIPT_SCHEME, path: `/${agent}-${sessionId}.log`, query: sessionId });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const hosted = this.host.get(uri.query);
    if (!hosted) return `${vscode.l10n.t('No session {0} in this window.', uri.query)}\n`;
    // The transcript's lines are the runtime's (English, as the CLI prints them); only the heading is the window's.
    return `${vscode.l10n.t('Agent session {0} ({1}) — {2}', hosted.id, hosted.agent, sessionState(hosted.state))}\n\n${hosted.transcript.join('\n')}\n`;
  }

  dispose(): void {
    if (this.pending) clearTimeout(this.pending);
    for (const d of this.disposables) d.dispose();
  }
}
