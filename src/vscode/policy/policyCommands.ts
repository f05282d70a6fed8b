// Editing the policy: open (or create from an example) the workspace policy, explain a call,
// and a CodeLens on each rule with how many calls it decided in this window.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { kindFromId, type ToolCall } from '../../policy/rules/call.js';
import type { RuleRef } from '../../policy/rules/compile.js';
import { hiddenSentence, outrightDenial, type OutrightDenial } from '../../policy/hiddenTools.js';
import { loadPolicyText, type Explanation } from '../../policy/policy.js';
import type { OpenCallback } from '../../runtime/tree/answers.js';
import { sandboxForDecision } from '../../runtime/calls/sandboxRun.js';
import type { SessionHost } from '../../runtime/host/sessionHost.js';
import { describeDecision } from '../../policy/checking/inlineTests.js';
import { describeChange } from '../../policy/editing/loosening.js';
import { describeControls, NO_CONTROLS, type ManagedControls } from '../../policy/rules/managedControls.js';
import { explainSandbox } from '../basics/describe.js';
import type { CoreCommands } from '../basics/coreCommands.js';
import { allowAndAddRule } from './policyEditing.js';
import type { PolicyService } from './policyService.js';
import { WORKSPACE_POLICY_FILE } from './policyService.js';
import { walkthroughStepDone } from '../basics/walkthroughSteps.js';

export const EXPLAIN_SCHEME = 'agent-policy-explain';

/** The examples shipped in `policies/`, each described by its first comment line. */
export function examplePolicies(extensionPath: string): Array<{ file: string; name: string; description: string }> {
  const dir = path.join(extensionPath, 'policies');
  let files: string[] = [];
  try {
    // A managed example (managed-*.agentpolicy.jsonc) sets controls, which a workspace policy may not: never a starting point.
    files = fs.readdirSync(dir).filter((f) => f.endsWith('.agentpolicy.jsonc') && !f.startsWith('managed')).sort();
  } catch {
    return [];
  }
  return files.map((f) => {
    const first = fs.readFileSync(path.join(dir, f), 'utf8').split('\n')[0] ?? '';
    return { file: path.join(dir, f), name: f.replace('.agentpolicy.jsonc', ''), description: first.replace(/^\/\/\s*/, '') };
  });
}

export async function openWorkspacePolicy(policy: PolicyService, extensionPath: string): Promise<void> {
  const target = path.join(policy.workspaceFolder, WORKSPACE_POLICY_FILE);
  if (!fs.existsSync(target)) {
    const picked = await vscode.window.showQuickPick(
      examplePolicies(extensionPath).map((e) => ({ label: e.name, description: e.description, file: e.file })),
      // Opened from the walkthrough's button too, where the step's picture can take the focus as it loads.
      { title: vscode.l10n.t('Agent Policy: Open Workspace Policy'), placeHolder: vscode.l10n.t('There is no {0} yet: start from an example', WORKSPACE_POLICY_FILE), ignoreFocusOut: true },
    );
    if (!picked) return;
    // Through a WorkspaceEdit, so creating it can be undone like any edit.
    const edit = new vscode.WorkspaceEdit();
    const uri = vscode.Uri.file(target);
    edit.createFile(uri, { ignoreIfExists: true, contents: fs.readFileSync(picked.file) });
    await vscode.workspace.applyEdit(edit);
  }
  await vscode.window.showTextDocument(vscode.Uri.file(target));
  walkthroughStepDone('policyOpened');
}

/** Explanations shown as Markdown documents. */
export class Explanations implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private count = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? '';
  }

  add(markdown: string): vscode.Uri {
    const p = `/explanation-${++this.count}.md`;
    this.texts.set(p, markdown);
    return vscode.Uri.from({ scheme: EXPLAIN_SCHEME, path: p });
  }
}

/** A call that no longer waits (the chat's "Explain the last decision"): its tool, input and agent prefill the explanation. */
export interface PastCall {
  toolId: string;
  input?: unknown;
  agent: string;
  /** Its session, whose marks (flow rules) it is judged with. */
  sessionId?: string;
}

function isPastCall(arg: unknown): arg is PastCall {
  const c = arg as Partial<PastCall> | undefined;
  return typeof c === 'object' && c !== null && typeof c.toolId === 'string' && typeof c.agent === 'string';
}

/** `marks`: the marks of the session the callback came from (flow rules), judged with it. */
export async function explainCall(policy: PolicyService, explanations: Explanations, from?: OpenCallback | PastCall, marks: readonly string[] = []): Promise<void> {
  const approval = from === undefined || 'toolId' in from ? undefined : from.type === 'approval' ? from : undefined;
  const past = from !== undefined && 'toolId' in from ? from : undefined;
  const toolId = await vscode.window.showInputBox({
    title: vscode.l10n.t('Agent Policy: Explain a Tool Call'),
    prompt: vscode.l10n.t('The stable id of the tool'),
    value: approval?.request.tool.id ?? past?.toolId ?? 'builtin.read_file',
    validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('a tool id such as {0}', 'builtin.read_file')),
    // Two steps, also opened from the walkthrough's button: the focus moving must not drop the first.
    ignoreFocusOut: true,
  });
  if (!toolId) return;
  const inputText = await vscode.window.showInputBox({
    title: vscode.l10n.t('Agent Policy: Explain a Tool Call'),
    prompt: vscode.l10n.t('The input of {0}, as JSON', toolId),
    value: JSON.stringify(approval?.request.input ?? past?.input ?? { path: 'src/index.js' }),
    validateInput: (v) => {
      try {
        JSON.parse(v);
        return undefined;
      } catch (error) {
        return vscode.l10n.t('not JSON: {0}', (error as Error).message);
      }
    },
    ignoreFocusOut: true,
  });
  if (inputText === undefined) return;
  const call: ToolCall = {
    tool: {
      id: toolId.trim(),
      ...(approval ? { kind: approval.request.tool.kind === 'unknown' ? undefined : approval.request.tool.kind, annotations: approval.request.tool.annotations } : {}),
    } as ToolCall['tool'],
    input: JSON.parse(inputText) as unknown,
    agent: approval?.agent ?? past?.agent ?? 'main',
  };
  if (call.tool.kind === undefined) {
    const kind = kindFromId(call.tool.id);
    if (kind) call.tool.kind = kind;
    else delete call.tool.kind;
  }
  const explanation = policy.current().explain(call, { workspaceFolder: policy.workspaceFolder, trusted: vscode.workspace.isTrusted, ...sandboxForDecision(call.tool.id), marks: new Set(marks) });
  // Hidden tools: denied outright for this agent, so its model is not offered the tool at all.
  const hidden = outrightDenial(policy.current(), call.tool, call.agent);
  const uri = explanations.add(explanationMarkdown(call, explanation, policy.workspaceFolder, marks, policy.current().controls, hidden));
  await vscode.commands.executeCommand('markdown.showPreview', uri);
  walkthroughStepDone('explained');
}

/** Text inside a table cell: no pipes or newlines to break the row, no backticks to end the code span. */
function markdownCell(text: string): string {
  return text.replace(/[|`\r\n]/g, ' ');
}

function fileLink(file: string, line: number, workspaceFolder: string): string {
  const abs = path.isAbsolute(file) ? file : path.join(workspaceFolder, file);
  return `[${path.basename(file)}:${line}](${vscode.Uri.file(abs).with({ fragment: `L${line}` }).toString()})`;
}

export function explanationMarkdown(call: ToolCall, e: Explanation, workspaceFolder: string, marks: readonly string[] = [], controls: ManagedControls = NO_CONTROLS, hidden?: OutrightDenial): string {
  const lines = [
    `# ${e.decision.toUpperCase()}: ${call.tool.id}`,
    '',
    vscode.l10n.t('Input: {0} · agent {1}', `\`${JSON.stringify(call.input)}\``, `\`${call.agent}\``),
    '',
    `**${describeDecision(e)}**${e.rule ? ` — ${fileLink(e.rule.file, e.rule.line, workspaceFolder)}` : ''}`,
    '',
  ];
  // The engine's sentences (hidden, warnings, reasons, the decision) are English, as the CLI's explain prints them.
  if (hidden) lines.push(vscode.l10n.t('Hidden: {0}.', hiddenSentence(hidden, call.agent)), '');
  if (e.reason) lines.push(vscode.l10n.t('Reason: {0}', e.reason), '');
  // Flow rules: the marks the session carried, and those this call adds if it runs.
  if (marks.length > 0 || e.trace.some((t) => t.failed === 'when')) lines.push(vscode.l10n.t('Session marks: {0}', marks.length > 0 ? marks.map((m) => `\`${m}\``).join(', ') : vscode.l10n.t('none')), '');
  if (e.marks) lines.push(vscode.l10n.t('Marks if it runs: {0}', e.marks.map((m) => `\`${m}\``).join(', ')), '');
  if (e.review) lines.push(vscode.l10n.t('Review: the result waits for a person (Pass / Withhold) before the model sees it.'), '');
  if (e.lowered) lines.push(vscode.l10n.t('Lowered: the workspace is not trusted, so its `allow` became `ask`.'), '');
  const sandbox = explainSandbox(call.tool.id, e);
  if (sandbox) lines.push(sandbox, '');
  for (const w of e.warnings) lines.push(vscode.l10n.t('Warning: {0}', w), '');
  const ruleName = (rule: RuleRef): string => rule.id !== null
    ? vscode.l10n.t('{0} rule {1} "{2}" ({3})', rule.layer, rule.index + 1, rule.id, fileLink(rule.file, rule.line, workspaceFolder))
    : vscode.l10n.t('{0} rule {1} ({2})', rule.layer, rule.index + 1, fileLink(rule.file, rule.line, workspaceFolder));
  const [partH, ruleH, decisionH] = [vscode.l10n.t('part'), vscode.l10n.t('rule'), vscode.l10n.t('decision')];
  if (e.parts) {
    lines.push(`## ${vscode.l10n.t('Parts')}`, '', vscode.l10n.t('Each part is judged on its own by the whole rule list; the call takes the strictest.'), '', `| # | ${partH} | ${decisionH} | ${vscode.l10n.t('decided by')} |`, '| --- | --- | --- | --- |');
    e.parts.forEach((p, i) => {
      const by = p.rule ? ruleName(p.rule) : p.defaultFrom ? vscode.l10n.t("the {0} policy's default", p.defaultFrom) : vscode.l10n.t('the built-in default');
      lines.push(`| ${i + 1} | \`${markdownCell(p.part)}\` | ${p.decision} | ${by}${p.note ? ` (${p.note})` : ''} |`);
    });
    lines.push('');
  }
  lines.push(`## ${vscode.l10n.t('Rules tested')}`, '', vscode.l10n.t('The rules whose tools match; for a simple command, those its first word does not rule out.'), '', `| ${e.parts ? `${partH} | ` : ''}${ruleH} | ${decisionH} | ${vscode.l10n.t('result')} |`, `| ${e.parts ? '--- | ' : ''}--- | --- | --- |`);
  for (const t of e.trace) {
    const part = e.parts ? `${(t.partIndex ?? 0) + 1} | ` : '';
    const result = t.failed === null
      ? vscode.l10n.t('every matcher matched: it decided')
      : `${vscode.l10n.t('{0} did not match', `\`${t.failed}\``)}${t.why !== undefined ? ` (${markdownCell(t.why)})` : ''}`;
    lines.push(`| ${part}${ruleName(t.rule)} | ${t.decision} | ${result} |`);
  }
  if (e.trace.length === 0) lines.push(`| ${vscode.l10n.t('(no rule names this tool)')} | | |`);
  if (e.rule === null) lines.push('', vscode.l10n.t('No rule matched: {0} decided.', e.defaultFrom ? vscode.l10n.t("the {0} policy's default", e.defaultFrom) : vscode.l10n.t('the built-in default (ask)')));
  // What the managed policy lets a person give or start at all, and how it narrowed this ask.
  const [heading, ...limits] = describeControls(controls);
  if (heading !== undefined) {
    lines.push('', `## ${vscode.l10n.t('Managed controls')}`, '', vscode.l10n.t('From {0}:', markdownCell(heading.replace(/^managed controls \((.*)\):$/, '$1'))), '', ...limits.map((l) => `- ${markdownCell(l.trim())}`));
    if (e.ask?.cappedBy !== undefined) lines.push('', vscode.l10n.t('This ask: {0}.', markdownCell(e.ask.cappedBy)));
  }
  return lines.join('\n');
}

/** A CodeLens on each rule: how many calls it decided in this window. */
export class RuleCounts implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private pending: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly host: SessionHost) {
    host.onDidChange(() => {
      this.pending ??= setTimeout(() => {
        this.pending = undefined;
        this.changed.fire();
      }, 500);
    });
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const layer = loadPolicyText(doc.getText(), doc.uri.fsPath, 'workspace');
    return layer.rules.map((rule) => {
      // The policy in force is loaded from the same absolute file name as this document.
      const count = this.host.ruleCounts.get(`${rule.ref.file}#${rule.ref.index}`) ?? 0;
      const at = doc.positionAt(rule.offset);
      return new vscode.CodeLens(new vscode.Range(at, at), {
        title: count === 1 ? vscode.l10n.t('decided 1 call in this window') : vscode.l10n.t('decided {0} calls in this window', count),
        command: '',
      });
    });
  }
}

export interface PolicyCommandContext {
  host: SessionHost;
  policy: PolicyService;
  log: import('../basics/log.js').Log;
  extensionPath: string;
  explanations: Explanations;
  ready: () => Promise<void>;
}

/** The approval a command was run on: a tree node, an id, or the person picks one. */
async function approvalFrom(host: SessionHost, arg: unknown): Promise<OpenCallback | undefined> {
  const id = typeof arg === 'string' ? arg : (arg as { kind?: string; callback?: OpenCallback } | undefined)?.kind === 'callback' ? (arg as { callback: OpenCallback }).callback.id : undefined;
  const open = host.openCallbacks().map((o) => o.callback).filter((c) => c.type === 'approval');
  if (id) return open.find((c) => c.id === id);
  if (open.length === 0) return undefined;
  const picked = await vscode.window.showQuickPick(
    open.map((c) => ({ label: c.type === 'approval' ? c.request.tool.id : c.id, description: c.agent, callback: c })),
    { title: vscode.l10n.t('Agent Policy: pick an open approval') },
  );
  return picked?.callback;
}

type PolicyCommandName = 'openPolicy' | 'explain' | 'allowAndAddRule' | 'acceptPolicyChange' | 'showPolicyChange';

/**
 * The policy commands' handlers (lazyCommands.ts registers them by their ids); also raises the
 * notification for an outside change held for a person, which offers two of them.
 */
export function policyCommands(ctx: PolicyCommandContext): Pick<CoreCommands, PolicyCommandName> {
  const { policy } = ctx;
  const showChange = async (): Promise<void> => {
    const held = policy.heldChange();
    if (!held) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: no policy change is waiting for you.'));
      return;
    }
    const md = [
      `# ${vscode.l10n.t('{0} changed outside this editor', path.basename(held.file))}`,
      '',
      vscode.l10n.t('These decisions would become more permissive. Until you accept, the new allows ask.'),
      '',
      ...held.changes.map((c) => `- ${describeChange(c)}`),
    ].join('\n');
    await vscode.commands.executeCommand('markdown.showPreview', ctx.explanations.add(md));
  };
  policy.onDidHold((held) => {
    const [accept, show] = [vscode.l10n.t('Accept'), vscode.l10n.t('Show Changes')];
    // describeChange is the engine's (English, as the hook and the CLI say it): passed through.
    const changes = `${held.changes.slice(0, 2).map(describeChange).join('; ')}${held.changes.length > 2 ? '; …' : ''}`;
    const message = held.changes.length === 1
      ? vscode.l10n.t('Agent Policy: {0} changed outside this editor and allows more (1 decision: {1}). Its new allows ask until you accept.', path.basename(held.file), changes)
      : vscode.l10n.t('Agent Policy: {0} changed outside this editor and allows more ({1} decisions: {2}). Its new allows ask until you accept.', path.basename(held.file), held.changes.length, changes);
    void vscode.window
      .showWarningMessage(message, accept, show)
      .then((picked) => {
        if (picked === accept) policy.accept();
        else if (picked === show) void showChange();
      });
  });
  return {
    openPolicy: () => openWorkspacePolicy(policy, ctx.extensionPath),
    explain: async (arg?: unknown) => {
      await ctx.ready();
      if (isPastCall(arg)) {
        const session = arg.sessionId !== undefined ? ctx.host.get(arg.sessionId) : undefined;
        return explainCall(policy, ctx.explanations, arg, session?.marks);
      }
      const from = arg === undefined ? undefined : await approvalFrom(ctx.host, arg);
      // The session's marks (flow rules): the call is explained as that session would have it judged.
      const marks = from ? ctx.host.sessions().find((s) => s.nodes.has(from.sessionId))?.marks : undefined;
      await explainCall(policy, ctx.explanations, from, marks);
    },
    allowAndAddRule: async (arg?: unknown) => {
      await ctx.ready();
      const callback = await approvalFrom(ctx.host, arg);
      if (!callback || callback.type !== 'approval') {
        void vscode.window.showInformationMessage(vscode.l10n.t('Agent Policy: that approval is no longer open.'));
        return;
      }
      await allowAndAddRule(ctx.host, policy, ctx.log, callback);
    },
    acceptPolicyChange: () => policy.accept(),
    showPolicyChange: showChange,
  };
}
