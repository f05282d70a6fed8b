// What the engine answers about a call (policy-format.md, "The decision"), and the options
// a caller judges it with.
import type { LayerName, MatcherName, RuleRef } from './compile.js';
import type { SessionMarks } from './flowMarks.js';
import type { Remember } from '../file/grantLength.js';
import type { Decision, Review } from '../file/schema.js';

export interface DecideOptions {
  /** The folder paths resolve against. */
  workspaceFolder: string;
  /** VS Code workspace trust (CLI --untrusted): when false the workspace layer can only tighten. */
  trusted?: boolean;
  /** The decision when no rule decides and no layer sets `default` (the runtime's permissionMode). */
  fallbackDefault?: Decision;
  /** Resolve symbolic links (default true). */
  followSymlinks?: boolean;
  /**
   * Whether `builtin.run_command` can run commands inside a sandbox on this machine (the
   * runtime's probe; default false). Only that tool is ever sandboxed: for every other tool a
   * `"sandbox"` rule's allow yields ask.
   */
  sandbox?: boolean;
  /** Why there is no sandbox here, when `sandbox` is false (said in the reasons of what it turns into asks). */
  sandboxUnavailable?: string;
  /**
   * The marks the session (with its subagents) already carries (flow rules: a rule's `when`).
   * Default: none, a fresh session. `'unknown'`: the caller cannot know them (a hook that keeps no
   * state): every `ask`/`deny` rule's `when` is taken to hold and no `allow` rule's does, so an
   * unknown never loosens. `{ known, maybe }`: some marks only may be there (a call the host may
   * have run), judged the same way label by label (flowMarks.ts).
   */
  marks?: SessionMarks;
  /**
   * Judge the files a command's words name and write by the rules on `paths` (commandPaths.ts;
   * default true). False: the command's parts alone, as the tests of rule order judge them.
   */
  commandPaths?: boolean;
  /** The home folder `~` names in commands (default the user's; tests give a scratch one). */
  home?: string;
}

/** How a sandboxable command is to run (policy-format.md, "Sandboxed commands"). */
export interface SandboxRun {
  /** True when the command runs inside the sandbox. */
  sandboxed: boolean;
  /** True when the deciding rules let it reach every host unjudged (every allowed part's rule says `"network": true`). */
  network: boolean;
  /**
   * True when a deciding rule says `"network": false`: no network at all. Otherwise, with
   * `network` false, each connection goes through the sandbox's proxy and is judged by the
   * rules with `domains` or `urls` (connection.ts), asked when none decides.
   */
  offline?: true;
  /**
   * The credential variables (docs/sandbox.md, "Environment") passed into the command by name:
   * those every allowed part's deciding rule passes (`"sandbox": { "env": [...] }`), sorted;
   * absent when none. The runtime withholds every other credential variable.
   */
  env?: string[];
  /**
   * The secret variables masked (docs/sandbox.md, "Masked secrets"): name → the host patterns the
   * sandbox's proxy substitutes the real value for, in HTTPS requests only. A variable is masked
   * when every allowed part's deciding rule masks it (`"sandbox": { "mask": {...} }`), for the
   * hosts they all name (possibly none: then the stand-in goes nowhere as the real value); a
   * masked variable is never in `env`. Names and hosts sorted; absent when none.
   */
  mask?: Record<string, string[]>;
}

/** One part of a call (a path or a simple command) and how the rule list judged it on its own. */
export interface PartDecision {
  part: string;
  decision: Decision;
  rule: RuleRef | null;
  /** When no rule decided this part: the layer whose `default` applied, or null for the built-in default. */
  defaultFrom?: LayerName | null;
  /** The reason of the rule that decided it, or why its allow became an ask. */
  reason?: string;
  /** What is special about how it was judged: why it can never be allowed (unparseable, a program name worked out at run time, writes to a file), or that only ask and deny rules judge it. */
  note?: string;
}

export interface AskSettings {
  timeout?: number;
  onTimeout: 'deny' | 'keep';
  /** The widest grant a person may give (grantLength.ts): "session", "never" or a duration ("15m"). */
  remember: Remember;
  /** Set when the managed controls narrowed `remember` below what the rules say: why, naming the managed policy. */
  cappedBy?: string;
}

/** The decision object of policy-format.md, with a few additions (`defaultFrom`, `ask`). */
export interface PolicyDecision {
  decision: Decision;
  rule: RuleRef | null;
  reason?: string;
  lowered: boolean;
  warnings: string[];
  /** When no rule decided: the layer whose `default` applied, or null for the built-in default. */
  defaultFrom?: LayerName | null;
  /** For `ask`: how the question behaves. */
  ask?: AskSettings;
  /** A call with several parts: each part with its own decision and rule, in the order they appear. */
  parts?: PartDecision[];
  /** For `builtin.run_command` calls that are not denied: whether the command runs sandboxed, and with network. */
  sandbox?: SandboxRun;
  /**
   * Flow rules: the marks the deciding rules (of every part) put on the session if the call runs
   * (allowed, or asked and allowed by a person); sorted, never on a deny. The runtime adds them.
   */
  marks?: string[];
  /**
   * Result review: `"result"` when a deciding rule (of any part) says `"review": "result"`: the
   * tool runs (if allowed) and its result waits for a person before the model sees it. Never on a deny.
   */
  review?: Review;
}

export interface TraceEntry {
  /** The part this test was for, when the call has several: as shown, and its place in `parts`. */
  part?: string;
  partIndex?: number;
  rule: RuleRef;
  decision: Decision;
  /** null: it matched (and so decided). */
  failed: MatcherName | null;
  /** When `failed` is `when`: which mark the session lacks or carries; for `reach`, what it reached. */
  why?: string;
  /**
   * Set on the last entry when what the command reaches (a file it reads or writes, a script it
   * runs: commandReach.ts) made a rule decide after the rules had judged the command itself.
   */
  reach?: true;
}

export interface Explanation extends PolicyDecision {
  /** Every rule that was tested, in order, and the first matcher that failed for it. */
  trace: TraceEntry[];
}
