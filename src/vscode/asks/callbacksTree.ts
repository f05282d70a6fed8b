// The rows of the Open Callbacks view: sessions → subagents → open callbacks (approvals, sign-ins,
// MCP servers' requests for input and results held for review), other agents' sessions whose hooks ask here, plus
// sessions a reload interrupted with what they left open. The view itself is created at activation (callbacksView.ts); this fills it.
import * as vscode from 'vscode';
import type { OpenCallback } from '../../runtime/tree/answers.js';
import type { RecoveredSession } from '../../runtime/audit/auditRead.js';
import type { ExternalHost, ListedSession, SessionNodeInfo } from '../../runtime/host/listedSession.js';
import type { Grant } from '../../runtime/tree/sessionGrants.js';
import type { SessionHost } from '../../runtime/host/sessionHost.js';
import { offeredDurations } from '../../policy/file/grantLength.js';
import { CALLBACK_ICONS, callbackKind, callbackLabel, sessionState, callbackSummary, defang, describeAsker, describeRule, formatAge, grantRow } from '../basics/describe.js';

export type TreeNode =
  | { kind: 'session'; hosted: ListedSession }
  | { kind: 'subagent'; hosted: ListedSession; node: SessionNodeInfo }
  | { kind: 'callback'; hosted: ListedSession; callback: OpenCallback }
  | { kind: 'grant'; hosted: ListedSession; sessionId: string; grant: Grant }
  | { kind: 'interrupted'; recovered: RecoveredSession }
  | { kind: 'lost'; recovered: RecoveredSession; index: number };

export class CallbacksTree implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private ageTimer: ReturnType<typeof setInterval> | undefined;
  /** While a time-limited grant is in force: its time left is shown, and it leaves the tree when it lapses. */
  private grantTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly host: SessionHost,
    private readonly view: Pick<vscode.TreeView<unknown>, 'badge' | 'message'>,
  ) {
    this.disposables.push(this.changed, host.onDidChange(() => this.refresh()));
    this.refresh();
  }

  refresh(): void {
    const open = this.host.openCallbacks().length;
    this.view.badge = open > 0 ? { value: open, tooltip: open === 1 ? vscode.l10n.t('1 open callback') : vscode.l10n.t('{0} open callbacks', open) } : undefined;
    this.view.message = undefined;
    this.changed.fire(undefined);
    // Ages are shown in the tree: refresh them while something waits.
    if (open > 0 && !this.ageTimer) this.ageTimer = setInterval(() => this.changed.fire(undefined), 30_000);
    if (open === 0 && this.ageTimer) {
      clearInterval(this.ageTimer);
      this.ageTimer = undefined;
    }
    const timed = this.host.sessions().some((h) => h.grants().some(({ grant }) => grant.expiresAt !== undefined));
    if (timed && !this.grantTimer) this.grantTimer = setInterval(() => this.refresh(), GRANT_REFRESH_MS);
    if (!timed && this.grantTimer) {
      clearInterval(this.grantTimer);
      this.grantTimer = undefined;
    }
  }

  getChildren(element?: TreeNode): TreeNode[] {
    if (!element) {
      const live = this.host.sessions().filter((h) => h.state === 'running' || h.openCallbacks().length > 0 || h.grants().length > 0).map((hosted) => ({ kind: 'session' as const, hosted }));
      const interrupted = this.host.interrupted.map((recovered) => ({ kind: 'interrupted' as const, recovered }));
      return [...live, ...interrupted];
    }
    if (element.kind === 'session' || element.kind === 'subagent') {
      const sessionId = element.kind === 'session' ? element.hosted.id : element.node.id;
      const hosted = element.hosted;
      const callbacks = hosted.openCallbacks();
      const own = callbacks.filter((c) => c.sessionId === sessionId).map((callback) => ({ kind: 'callback' as const, hosted, callback }));
      const grants = hosted.grants();
      const granted = grants.filter((g) => g.sessionId === sessionId).map(({ grant }) => ({ kind: 'grant' as const, hosted, sessionId, grant }));
      // Subagents that have something open, or a grant in force, below them.
      const below = [...callbacks.map((c) => c.sessionId), ...grants.map((g) => g.sessionId)];
      const children = [...hosted.nodes.values()]
        .filter((n) => n.parentId === sessionId)
        .filter((n) => below.some((id) => hosted.pathOf(id).some((p) => p.id === n.id)))
        .map((node) => ({ kind: 'subagent' as const, hosted, node }));
      return [...own, ...granted, ...children];
    }
    if (element.kind === 'interrupted') return element.recovered.openCallbacks.map((_, index) => ({ kind: 'lost' as const, recovered: element.recovered, index }));
    return [];
  }

  getTreeItem(element: TreeNode): vscode.TreeItem {
    switch (element.kind) {
      case 'session': {
        const h = element.hosted;
        const open = h.openCallbacks().length;
        if (h.external) return externalSessionItem(h, h.external, open);
        const item = new vscode.TreeItem(h.agent, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `session:${h.id}`;
        // Flow rules: what the session and its subagents have done, as the policy's `when` sees it.
        const marks = marksText(h);
        const state = sessionState(h.state);
        const marked = marks !== undefined ? ` · ${vscode.l10n.t('marked {0}', marks)}` : '';
        item.description = `${state}${open ? ` · ${vscode.l10n.t('{0} open', open)}` : ''}${marked} · ${h.prompt}`;
        item.tooltip = `${vscode.l10n.t('Session {0} of {1}', h.id, h.agent)}\n${vscode.l10n.t('Prompt: {0}', h.prompt)}${marks !== undefined ? `\n${vscode.l10n.t("Marks (its subagents' included): {0}", marks)}` : ''}`;
        item.iconPath = new vscode.ThemeIcon(h.state === 'running' ? 'sync~spin' : 'circle-outline');
        item.contextValue = `session:${h.state}`;
        item.command = { command: 'agentPolicy.showTranscript', title: vscode.l10n.t('Show Session Transcript'), arguments: [h.id] };
        item.accessibilityInformation = { label: `${vscode.l10n.t('Agent session {0}, {1}, {2} open callbacks', h.agent, state, open)}${marked.replace(' · ', ', ')}` };
        return item;
      }
      case 'subagent': {
        const n = element.node;
        const item = new vscode.TreeItem(n.agent, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `subagent:${n.id}`;
        const earlier = n.rootTurnId !== '' && n.rootTurnId !== element.hosted.currentTurnId;
        item.description = `${vscode.l10n.t('subagent {0}', n.id)}${earlier ? ` · ${vscode.l10n.t('started by an earlier turn')}` : ''}`;
        item.iconPath = new vscode.ThemeIcon('person');
        item.contextValue = 'subagent';
        item.accessibilityInformation = { label: earlier ? vscode.l10n.t('Subagent {0}, started by an earlier turn', n.agent) : vscode.l10n.t('Subagent {0}', n.agent) };
        return item;
      }
      case 'callback': {
        const c = element.callback;
        const earlier = element.hosted.fromEarlierTurn(c);
        const label = callbackLabel(c);
        const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
        item.id = `callback:${c.id}`;
        item.description = `${callbackSummary(c)} · ${formatAge(Date.now() - c.openedAt)}${earlier ? ` · ${vscode.l10n.t('earlier turn')}` : ''}`;
        const tip = new vscode.MarkdownString(undefined, true);
        tip.appendText(`${describeAsker(element.hosted, c)}\n${earlier ? vscode.l10n.t('Turn {0} (left running by an earlier turn)', c.turnId) : vscode.l10n.t('Turn {0}', c.turnId)}\n`);
        if (c.type === 'approval') {
          tip.appendText(`${c.request.title}\n`);
          if (c.request.decision?.reason) tip.appendText(`${vscode.l10n.t('Reason: {0}', c.request.decision.reason)}\n`);
          tip.appendCodeblock(JSON.stringify(c.request.input, null, 2), 'json');
        } else if (c.type === 'elicitation') {
          tip.appendText(`${vscode.l10n.t('{0} asks:', describeRule(c))}\n${c.request.message}\n`);
          tip.appendText(`${vscode.l10n.t('Fields: {0}', Object.keys(c.request.requestedSchema.properties).join(', ') || vscode.l10n.t('none'))}\n`);
        } else if (c.type === 'result-review') {
          // The result is untrusted: its start as plain text in a code block, never rendered.
          tip.appendText(`${c.request.title}\n${vscode.l10n.t('Held by {0}', describeRule(c))}\n`);
          tip.appendCodeblock(c.request.preview.slice(0, 600), 'text');
        }
        item.tooltip = tip;
        item.iconPath = new vscode.ThemeIcon(CALLBACK_ICONS[c.type]);
        item.contextValue = c.type === 'approval' ? `callback:approval${c.request.sessionAllowed ? ':session-allowed' : ''}${offeredDurations(c.request.longestGrant).length > 0 ? ':timed-allowed' : ''}` : `callback:${c.type}`;
        item.accessibilityInformation = { label: vscode.l10n.t('{0} for {1}: {2}, asked by {3}', callbackKind(c.type), label, callbackSummary(c), c.agent) };
        // A held result opens (read-only) when its row is clicked.
        if (c.type === 'result-review') item.command = { command: 'agentPolicy.showResult', title: vscode.l10n.t('Show Held Result'), arguments: [c.id] };
        return item;
      }
      case 'grant':
        return grantItem(element.grant, element.sessionId);
      case 'interrupted': {
        const r = element.recovered;
        const item = new vscode.TreeItem(vscode.l10n.t('{0} (interrupted)', r.agent ?? vscode.l10n.t('session')), r.openCallbacks.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
        item.id = `interrupted:${r.session}`;
        item.description = vscode.l10n.t('started {0} · {1} left open', new Date(r.startedAt).toLocaleString(), r.openCallbacks.length);
        item.tooltip = vscode.l10n.t('Session {0} was still running when the window closed or reloaded. What it left open can no longer be answered; nothing of it ran.', r.session);
        item.iconPath = new vscode.ThemeIcon('warning');
        item.contextValue = 'session:interrupted';
        return item;
      }
      case 'lost': {
        const e = element.recovered.openCallbacks[element.index]!;
        const item = new vscode.TreeItem(e.tool ?? vscode.l10n.t('sign-in'), vscode.TreeItemCollapsibleState.None);
        item.id = `lost:${element.recovered.session}:${element.index}`;
        item.description = `${e.summary ?? ''} · ${vscode.l10n.t('never answered')}`;
        item.iconPath = new vscode.ThemeIcon('circle-slash');
        item.contextValue = 'callback:lost';
        return item;
      }
    }
  }

  getParent(): undefined {
    return undefined;
  }

  dispose(): void {
    if (this.ageTimer) clearInterval(this.ageTimer);
    if (this.grantTimer) clearInterval(this.grantTimer);
    for (const d of this.disposables) d.dispose();
  }
}

/** How often the time left of grants is redrawn (and lapsed ones leave): the time left is shown in minutes. */
const GRANT_REFRESH_MS = 15_000;

/** A grant in force: its time left (first, never cut off), what it covers and the tool; Revoke takes it back. */
function grantItem(grant: Grant, sessionId: string): vscode.TreeItem {
  const row = grantRow(grant, Date.now());
  const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
  item.id = `grant:${sessionId}:${grant.id}`;
  const what = grant.covers === 'part' ? vscode.l10n.t('this command in any chain') : vscode.l10n.t('this exact call');
  item.description = row.description;
  const allowed = grant.expiresAt === undefined
    ? vscode.l10n.t('Allowed without asking, for the rest of the session: {0} of {1}.', what, grant.toolId)
    : vscode.l10n.t('Allowed without asking, until {0}: {1} of {2}.', new Date(grant.expiresAt).toLocaleTimeString(), what, grant.toolId);
  item.tooltip = defang(`${allowed}\n${grant.label}\n${vscode.l10n.t('Revoke to be asked again.')}`);
  item.iconPath = new vscode.ThemeIcon(grant.expiresAt === undefined ? 'unlock' : 'watch');
  item.contextValue = `grant:${grant.expiresAt === undefined ? 'session' : 'timed'}`;
  item.accessibilityInformation = { label: vscode.l10n.t('Grant: {0}, {1}, {2}', grant.label, grant.toolId, row.left) };
  return item;
}

/** Flow rules: a session's marks, those only perhaps there (an ask another agent's host put to its own person) said so. */
function marksText(h: ListedSession): string | undefined {
  const all = [...(h.marks ?? []), ...(h.maybeMarks ?? []).map((m) => vscode.l10n.t('{0} (perhaps)', m))];
  return all.length > 0 ? all.join(', ') : undefined;
}

/** Another agent's session whose hook asks here: "Claude Code · b9adf915". It never runs here, so it has no state or prompt. */
function externalSessionItem(h: ListedSession, external: ExternalHost, open: number): vscode.TreeItem {
  const short = h.id.slice(external.host.length + 1, external.host.length + 9);
  const item = new vscode.TreeItem(`${external.hostLabel} · ${short}`, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `session:${h.id}`;
  const marks = marksText(h);
  item.description = `${vscode.l10n.t('{0} open', open)}${marks !== undefined ? ` · ${vscode.l10n.t('marked {0}', marks)}` : ''} · ${vscode.l10n.t('asked by its hook')}`;
  const tooltip = vscode.l10n.t('{0} session {1}: its pre-tool hook (agentpolicy hook) asks here, and the answer goes back to it.', external.hostLabel, h.id);
  item.tooltip = defang(`${tooltip}${marks !== undefined ? `\n${vscode.l10n.t('Marks (kept by its hook): {0}', marks)}` : ''}`);
  item.iconPath = new vscode.ThemeIcon('plug');
  item.contextValue = 'session:external';
  item.command = { command: 'agentPolicy.showTranscript', title: vscode.l10n.t('Show Session Transcript'), arguments: [h.id] };
  item.accessibilityInformation = { label: vscode.l10n.t('{0} session {1}, {2} open callbacks', external.hostLabel, short, open) };
  return item;
}
