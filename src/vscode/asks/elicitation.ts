// Answering an MCP server's request for input: respond with a form built from its schema,
// decline, or cancel. The server's message and field texts are untrusted and shown as text.
import * as vscode from 'vscode';
import { ElicitationAnswer, type OpenElicitation } from '../../runtime/tree/answers.js';
import { defaultText, formFields, readField, type FormField } from '../../runtime/tree/elicitationForm.js';
import type { SessionHost } from '../../runtime/host/sessionHost.js';
import { answerCallback } from './answering.js';
import type { Log } from '../basics/log.js';

type Action = 'respond' | 'decline' | 'cancel';

export function elicitationActions(): Record<Action, string> {
  return { respond: vscode.l10n.t('Respond…'), decline: vscode.l10n.t('Decline'), cancel: vscode.l10n.t('Cancel') };
}

/** Asks what to do, fills the form when responding, and answers. Escape at any step leaves the request open. */
export async function answerElicitation(host: SessionHost, log: Log, callback: OpenElicitation, action?: Action): Promise<void> {
  const { request } = callback;
  if (!action) {
    const actions = elicitationActions();
    const picked = await vscode.window.showQuickPick(
      [
        { label: `$(edit) ${actions.respond}`, description: vscode.l10n.t('fill in the form and send it to the server'), action: 'respond' as const },
        { label: `$(close) ${actions.decline}`, description: vscode.l10n.t('tell the server no'), action: 'decline' as const },
        { label: `$(circle-slash) ${actions.cancel}`, description: vscode.l10n.t('dismiss without choosing'), action: 'cancel' as const },
      ],
      { title: vscode.l10n.t('Agent Policy: {0} asks', request.source.name), placeHolder: request.message, ignoreFocusOut: true },
    );
    if (!picked) return;
    action = picked.action;
  }
  if (action !== 'respond') {
    await answerCallback(host, log, callback.id, new ElicitationAnswer({ action }));
    return;
  }
  const content = await fillForm(callback);
  if (!content) return;
  await answerCallback(host, log, callback.id, new ElicitationAnswer({ action: 'accept', content }));
}

async function fillForm(callback: OpenElicitation): Promise<Record<string, string | number | boolean> | undefined> {
  const fields = formFields(callback.request.requestedSchema);
  const content: Record<string, string | number | boolean> = {};
  for (const [i, form] of fields.entries()) {
    const value = await askField(callback, form, i + 1, fields.length);
    if (value === null) return undefined;
    if (value !== undefined) content[form.name] = value;
  }
  return content;
}

/** null: the person escaped. undefined: an optional field left empty. */
async function askField(callback: OpenElicitation, form: FormField, step: number, steps: number): Promise<string | number | boolean | undefined | null> {
  const title = vscode.l10n.t('Agent Policy: {0} asks ({1}/{2})', callback.request.source.name, step, steps);
  const detail = typeof form.field.description === 'string' ? form.field.description : undefined;
  const choices = form.field.type === 'boolean' ? ['yes', 'no'] : form.field.enum;
  if (choices) {
    const names = Array.isArray(form.field.enumNames) ? form.field.enumNames : undefined;
    const items = choices.map((value, i) => ({ label: names?.[i] ?? value, description: names?.[i] ? value : '', value }));
    if (!form.required) items.push({ label: vscode.l10n.t('(no answer)'), description: '', value: '' });
    const picked = await vscode.window.showQuickPick(items, { title, placeHolder: `${form.label}${detail ? ` — ${detail}` : ''}`, ignoreFocusOut: true });
    if (!picked) return null;
    const read = readField(form, picked.value);
    return read.ok ? read.value : null;
  }
  const initial = defaultText(form);
  const text = await vscode.window.showInputBox({
    title,
    prompt: `${form.required ? form.label : vscode.l10n.t('{0} (optional)', form.label)}${detail ? ` — ${detail}` : ''}`,
    ...(initial !== undefined ? { value: initial } : {}),
    password: form.field.format === 'password',
    ignoreFocusOut: true,
    validateInput: (typed) => {
      const read = readField(form, typed);
      return read.ok ? undefined : read.error;
    },
  });
  if (text === undefined) return null;
  const read = readField(form, text);
  return read.ok ? read.value : null;
}
