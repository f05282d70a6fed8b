// The steps of the Get Started walkthrough that no command run or view shown can mark: the
// walkthrough's completionEvents wait for these context keys (`onContext:…` in package.json), set
// here when a person has done the step's thing, not merely run its command.
import * as vscode from 'vscode';

export const WALKTHROUGH_STEP_KEYS = {
  /** The workspace policy was created from an example, or the one there is was opened. */
  policyOpened: 'agentPolicy.walkthrough.policyOpened',
  /** An ask was answered from its notification's answers or its More… (answering.ts marks both by the surface). */
  answeredFromNotification: 'agentPolicy.walkthrough.answeredFromNotification',
  /** An ask was answered from the command palette (Answer Pending Approval, Allow for a While). */
  answeredFromPalette: 'agentPolicy.walkthrough.answeredFromPalette',
  /** An explanation of a call was shown. */
  explained: 'agentPolicy.walkthrough.explained',
  /** Govern Other Agents left at least one other agent governed in this folder. */
  governed: 'agentPolicy.walkthrough.governed',
} as const;

export type WalkthroughStep = keyof typeof WALKTHROUGH_STEP_KEYS;

export function walkthroughStepDone(step: WalkthroughStep): void {
  void vscode.commands.executeCommand('setContext', WALKTHROUGH_STEP_KEYS[step], true);
}
