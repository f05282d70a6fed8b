// A conversation starter: when the workspace's settings ask for one (`npm start`'s demo workspace
// does), the Chat view opens once with the request typed in, not sent, on our scripted model.
import * as vscode from 'vscode';
import { CHAT_VENDOR, SCRIPTED_CHAT_MODEL } from '../models/chatModelCatalog.js';
import type { Log } from '../basics/log.js';

export const CHAT_STARTER_SETTING = 'agentPolicy.chat.starter';
/** workspaceState: the starter last shown, so it opens once per workspace (again only when it changes). */
const SHOWN_KEY = 'agentPolicy.chatStarterShown';

/**
 * Opens the Chat view with the starter in its input. Only in a trusted workspace: a folder one
 * merely opened does not get to type into the chat. The person sends it, or not.
 */
export async function openChatStarter(state: vscode.Memento, log: Log): Promise<void> {
  const query = vscode.workspace.getConfiguration().get<string>(CHAT_STARTER_SETTING, '').trim();
  if (query === '' || !vscode.workspace.isTrusted || state.get<string>(SHOWN_KEY) === query) return;
  await state.update(SHOWN_KEY, query);
  const open = (options: Record<string, unknown>): Thenable<unknown> => vscode.commands.executeCommand('workbench.action.chat.open', { query, isPartialQuery: true, ...options });
  try {
    // With our scripted model picked; a VS Code whose chat cannot select it still gets the request.
    await Promise.resolve(open({ modelSelector: { vendor: CHAT_VENDOR, id: SCRIPTED_CHAT_MODEL } })).catch(() => open({}));
    log.info(`the Chat view opened with the starter ${JSON.stringify(query)} (${CHAT_STARTER_SETTING})`);
  } catch (error) {
    log.warn(`the Chat view could not open with the starter (${CHAT_STARTER_SETTING}): ${error instanceof Error ? error.message : String(error)}`);
  }
}
