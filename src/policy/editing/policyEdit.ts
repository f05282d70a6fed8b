// What an edit of a policy file's text returns, and the error it throws when the text cannot be
// edited safely. Shared by the rule edits (ruleTextEdits.ts), their text model (ruleListModel.ts)
// and the quick fixes (ruleQuickFixes.ts).
import type { Rule } from '../file/schema.js';

/** jsonc-parser's `Edit`: replace `length` characters at `offset` (of the original text) with `content`. */
export interface TextEdit {
  offset: number;
  length: number;
  content: string;
}

export interface RuleEditResult {
  /** Non-overlapping edits against the original text. */
  edits: TextEdit[];
  /** The text with the edits applied. */
  newText: string;
}

export interface InsertRuleResult extends RuleEditResult {
  /** The index the new rule has in `rules` of the new text. */
  insertedAt: number;
  /** The rule as inserted: its `id` gets a `-2`, `-3`, … suffix when the file already uses it. */
  rule: Rule;
}

/** The text cannot be edited safely (it does not parse, or `rules` is not an array). */
export class PolicyEditError extends Error {}
