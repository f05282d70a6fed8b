// The names of the commands the core (dist/extensionCore.js) runs, shared by the entry that
// registers them at activation (lazyCommands.ts) and the rooms that implement them.

/** The commands the core runs, by the name its handler has there. */
export type CoreCommandName =
  | 'startSession' | 'answerPending' | 'signIn' | 'respond' | 'showTranscript' | 'cancelSession'
  | 'allow' | 'allowForSession' | 'allowForAWhile' | 'moreAnswers' | 'deny' | 'dismissInterrupted' | 'revokeGrant'
  | 'passResult' | 'withholdResult' | 'showResult'
  | 'openPolicy' | 'explain' | 'allowAndAddRule' | 'acceptPolicyChange' | 'showPolicyChange'
  | 'setApiKey' | 'selectLanguageModel' | 'forgetMcpServerApprovals' | 'reviewMcpToolChanges' | 'governOtherAgents'
  | 'installCommandInPath' | 'uninstallCommandFromPath';

/** A handler takes the arguments as VS Code passes them: a tree node, a callback or session id, or nothing. */
export type CoreCommands = Record<CoreCommandName, (...args: unknown[]) => unknown>;
