// Changing the policy from the editor: quick fixes for its diagnostics, and "Allow and Add
// Rule", which inserts a rule before the first rule that matches the call (undoable, comments
// and formatting kept) and then answers the callback with allow once.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { parseAgentsFile, spawnInfo } from '../../agents/agentsFile.js';
import { addRuleRefusal, NO_CONTROLS, type ManagedControls } from '../../policy/rules/managedControls.js';
import { loadPolicyText } from '../../policy/policy.js';
import type { TextEdit } from '../../policy/editing/policyEdit.js';
import { addSpawnAllowEdit, renameFieldEdit, shadowingRuleIndex, spawnAllowIndex, suggestedFieldName } from '../../policy/editing/ruleQuickFixes.js';
import { canAllowByWorkspaceRule, insertionIndex, ruleSuggestions } from '../../policy/editing/ruleSuggestions.js';
import { deleteRuleEdit, insertRuleEdit, moveRuleEdit, ruleIndexAt } from '../../policy/editing/ruleTextEdits.js';
import { AllowApproval, type OpenApproval } from '../../runtime/tree/answers.js';
import type { SessionHost } from '../../runtime/host/sessionHost.js';
import { AGENTS_FILE } from '../../runtime/agents/workspaceAgents.js';
import { answerCallback } from '../asks/answering.js';
import type { Log } from '../basics/log.js';
import type { PolicyService } from './policyService.js';
import { WORKSPACE_POLICY_FILE } from './policyService.js';

function toWorkspaceEdit(doc: vscode.TextDocument, edits: readonly TextEdit[]): vscode.WorkspaceEdit {
  const edit = new vscode.WorkspaceEdit();
  for (const e of edits) edit.replace(doc.uri, new vscode.Range(doc.positionAt(e.offset), doc.positionAt(e.offset + e.length)), e.content);
  return edit;
}

export class PolicyQuickFixes implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  constructor(
    private readonly workspaceFolder: string,
    /** The managed controls now: with `addRule: false`, no quick fix adds an allow rule or moves one up (either could loosen). */
    private readonly controls: () => ManagedControls = () => NO_CONTROLS,
  ) {}

  provideCodeActions(doc: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const text = doc.getText();
    const actions: vscode.CodeAction[] = [];
    const add = (title: string, diagnostic: vscode.Diagnostic, build: () => { edits: TextEdit[] }, preferred = false): void => {
      try {
        const action = new vscode.CodeAction(title, vscode.CodeActionKind.QuickFix);
        action.edit = toWorkspaceEdit(doc, build().edits);
        action.diagnostics = [diagnostic];
        action.isPreferred = preferred;
        actions.push(action);
      } catch {
        // The text changed under the diagnostic or cannot be edited safely: offer nothing.
      }
    };
    for (const diagnostic of context.diagnostics) {
      if (diagnostic.source !== 'agent-policy') continue;
      const offset = doc.offsetAt(diagnostic.range.start);
      if (diagnostic.code === 'shadowed') {
        const layer = loadPolicyText(text, doc.uri.fsPath, 'workspace');
        const index = ruleIndexAt(text, offset);
        const above = index === undefined ? undefined : shadowingRuleIndex(layer, index);
        if (index !== undefined && above !== undefined) {
          const loosens = layer.rules[index]?.decision === 'allow' && !this.controls().addRule;
          if (!loosens) add(vscode.l10n.t('Move rule {0} above rule {1}, which shadows it', index + 1, above + 1), diagnostic, () => moveRuleEdit(text, index, above), true);
          add(vscode.l10n.t('Delete rule {0}, which never decides', index + 1), diagnostic, () => deleteRuleEdit(text, index));
        }
      } else if (diagnostic.code === 'spawn-denied' && this.controls().addRule) {
        const layer = loadPolicyText(text, doc.uri.fsPath, 'workspace');
        const agentsFile = path.join(this.workspaceFolder, AGENTS_FILE);
        const agents = fs.existsSync(agentsFile) ? parseAgentsFile(fs.readFileSync(agentsFile, 'utf8'), agentsFile).value : undefined;
        const at = spawnAllowIndex(layer, spawnInfo(agents), this.workspaceFolder);
        add(vscode.l10n.t('Add a rule allowing {0}', 'agents.spawn'), diagnostic, () => addSpawnAllowEdit(text, at), true);
      } else if (diagnostic.code === 'schema') {
        const name = suggestedFieldName(diagnostic.message);
        if (name) add(vscode.l10n.t('Rename the field to "{0}"', name), diagnostic, () => renameFieldEdit(text, offset, doc.offsetAt(diagnostic.range.end) - offset, name), true);
      }
    }
    return actions;
  }
}

/** Allow and Add Rule: the person picks how narrow the rule is; it is inserted, saved, and the call allowed once. */
export async function allowAndAddRule(host: SessionHost, policy: PolicyService, log: Log, callback: OpenApproval): Promise<void> {
  const trusted = vscode.workspace.isTrusted;
  const decision = callback.request.decision;
  // The managed controls may forbid it: refused here too, since a command can be run however its menus are hidden.
  const refusal = addRuleRefusal(policy.current().controls);
  if (refusal !== undefined) {
    void vscode.window.showWarningMessage(vscode.l10n.t('Agent Policy: Allow and Add Rule is not available: {0}. Answer with Allow or Deny.', refusal));
    return;
  }
  if (callback.request.hook) {
    void vscode.window.showWarningMessage(vscode.l10n.t('Agent Policy: the {0} hook asks for this call whatever the rules say; a rule cannot allow it. Answer it once.', callback.request.hook));
    return;
  }
  if (decision && !canAllowByWorkspaceRule(decision, trusted)) {
    void vscode.window.showWarningMessage(
      trusted
        ? vscode.l10n.t('Agent Policy: a managed rule decides this call; a workspace rule cannot allow it.')
        : vscode.l10n.t('Agent Policy: in an untrusted workspace a workspace rule only asks; it cannot allow this call.'),
    );
    return;
  }
  const file = path.join(policy.workspaceFolder, WORKSPACE_POLICY_FILE);
  if (!fs.existsSync(file)) fs.writeFileSync(file, '{\n  "version": 1,\n  "rules": []\n}\n');
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  const layer = loadPolicyText(doc.getText(), file, 'workspace');
  if (!layer.valid) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Agent Policy: {0} has errors; fix them before adding a rule.', WORKSPACE_POLICY_FILE));
    return;
  }
  const tool = callback.request.tool;
  const call = {
    tool: {
      id: tool.id,
      ...(tool.kind !== 'unknown' ? { kind: tool.kind } : {}),
      annotations: tool.annotations,
      ...(tool.pathArgs ? { pathArgs: tool.pathArgs } : {}),
      ...(tool.commandArg ? { commandArg: tool.commandArg } : {}),
      ...(tool.urlArgs ? { urlArgs: tool.urlArgs } : {}),
      ...(tool.tags ? { tags: tool.tags } : {}),
    },
    input: callback.request.input,
    agent: callback.agent,
  };
  const existingIds = layer.rules.flatMap((r) => (r.ref.id !== null ? [r.ref.id] : []));
  const suggestions = ruleSuggestions(call, { workspaceFolder: policy.workspaceFolder, existingIds, ...(decision ? { asked: decision } : {}) });
  const picked = await vscode.window.showQuickPick(
    suggestions.map((s) => ({ label: s.label, description: s.description, detail: JSON.stringify(s.rule), suggestion: s })),
    { title: vscode.l10n.t('Agent Policy: Allow and Add Rule — {0}', tool.id), placeHolder: vscode.l10n.t('How narrow should the new rule be?') },
  );
  if (!picked) return;
  const options = { workspaceFolder: policy.workspaceFolder, trusted };
  const before = insertionIndex(layer, call, options, decision);
  const result = insertRuleEdit(doc.getText(), picked.suggestion.rule, before);
  if (!(await vscode.workspace.applyEdit(toWorkspaceEdit(doc, result.edits)))) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Agent Policy: the rule could not be inserted.'));
    return;
  }
  // Saved here, by the person: the change is accepted, and it applies from the next decision.
  await doc.save();
  policy.reloadWorkspace();
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  const inserted = loadPolicyText(doc.getText(), file, 'workspace').rules[result.insertedAt];
  if (inserted) {
    const start = doc.positionAt(inserted.offset);
    editor.selection = new vscode.Selection(start, doc.positionAt(inserted.offset + inserted.length));
    editor.revealRange(editor.selection);
  }
  log.info(`added rule "${result.rule.id}" at index ${result.insertedAt} of ${file}`);
  await answerCallback(host, log, callback.id, new AllowApproval());
}
