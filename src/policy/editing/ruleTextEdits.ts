// Text edits that insert, move and delete the rules of a policy file, for the editor. No `vscode`
// here: the extension turns the returned edits into a WorkspaceEdit.
//
// Every edit keeps the rest of the file as it was, byte for byte: comments, blank lines,
// trailing commas, tabs or spaces, EOLs (only a list emptied by a delete becomes `[]`). The rules
// array is cut into its elements, each with the comments attached to it (ruleListModel.ts), and
// edits rearrange those pieces; only the new rule is rendered, in the style of its neighbours and
// with the indentation detected from the text.
// (jsonc-parser's `modify` is not used: with formatting options it reformats every line it
// touches, expanding a one-line neighbour and moving its trailing comment to the new element.
// The pieces come from jsonc-parser's tree and scanner; edits are its `Edit`s and `applyEdits`.)
import { applyEdits, findNodeAtLocation, getNodeValue, parseTree, type FormattingOptions, type Node, type ParseError } from 'jsonc-parser';
import { canonicalJson } from '../rules/compile.js';
import { PolicyEditError, type InsertRuleResult, type RuleEditResult, type TextEdit } from './policyEdit.js';
import { uniqueId } from './ruleIds.js';
import { ListModel } from './ruleListModel.js';
import type { Rule } from '../file/schema.js';

/** Indentation and EOL as the text uses them (tabs when any structural line starts with a tab). */
export function detectFormatting(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  let tabs = false;
  let smallest = Infinity;
  for (const line of text.split(/\r?\n/)) {
    const m = /^([ \t]+)["{}[\]]/.exec(line);
    if (!m) continue;
    if (m[1]!.includes('\t')) tabs = true;
    else smallest = Math.min(smallest, m[1]!.length);
  }
  if (tabs) return { insertSpaces: false, tabSize: 4, eol };
  return { insertSpaces: true, tabSize: Number.isFinite(smallest) ? Math.min(smallest, 8) : 2, eol };
}

/** Inserts `rule` at index `before` of `rules` ('end', or any index past the end, appends), creating `rules` when missing. */
export function insertRuleEdit(text: string, rule: Rule, before: number | 'end'): InsertRuleResult {
  const formatting = detectFormatting(text);
  let { root, rules } = parseForEdit(text);
  let base = text;
  if (!rules) {
    // No `rules` yet: an empty one after the last field, the way the file writes its fields.
    const object = ListModel.read(text, root, formatting);
    object.insertBody(object.length, '"rules": []', false);
    base = object.applyTo(text);
    ({ rules } = parseForEdit(base));
    if (!rules) throw new PolicyEditError('could not add "rules" to the policy file');
  }
  const used = new Set(usedRuleIds(rules));
  const inserted: Rule = rule.id !== undefined && used.has(rule.id) ? { ...rule, id: uniqueId(rule.id, used) } : rule;
  const model = ListModel.read(base, rules, formatting);
  const at = before === 'end' ? model.length : Math.max(0, Math.min(before, model.length));
  const expected = rulesValues(base);
  expected.splice(at, 0, JSON.parse(JSON.stringify(inserted)) as unknown);
  model.insertNew(at, inserted);
  const result = finish(text, model.applyTo(base));
  check(result.newText, (after) => canonicalJson(after) === canonicalJson(expected), 'the inserted rule is not where it should be');
  return { ...result, insertedAt: at, rule: inserted };
}

/** Moves rule `from` so that it ends up at index `to` (e.g. a shadowed rule above the rule that shadows it), with its comments and text as they are. */
export function moveRuleEdit(text: string, from: number, to: number): RuleEditResult {
  const { rules } = parseForEdit(text);
  const before = rulesValues(text);
  const n = rules?.children?.length ?? 0;
  if (!rules || from < 0 || from >= n || to < 0 || to >= n) throw new PolicyEditError(`there is no rule ${Math.max(from, to) + 1} to move`);
  if (from === to) return { edits: [], newText: text };
  const model = ListModel.read(text, rules, detectFormatting(text));
  model.move(from, to);
  const result = finish(text, model.applyTo(text));
  const expected = [...before];
  const [moved] = expected.splice(from, 1);
  expected.splice(to, 0, moved);
  check(result.newText, (after) => canonicalJson(after) === canonicalJson(expected), 'the rules are not in the intended order');
  return result;
}

/** Deletes rule `index` with the comments attached to it. */
export function deleteRuleEdit(text: string, index: number): RuleEditResult {
  const { rules } = parseForEdit(text);
  const before = rulesValues(text);
  if (!rules || index < 0 || index >= (rules.children?.length ?? 0)) throw new PolicyEditError(`there is no rule ${index + 1} to delete`);
  const model = ListModel.read(text, rules, detectFormatting(text));
  model.delete(index);
  const result = finish(text, model.applyTo(text));
  const expected = before.filter((_, i) => i !== index);
  check(result.newText, (after) => canonicalJson(after) === canonicalJson(expected), 'the rule was not deleted cleanly');
  return result;
}

/** The index of the rule whose text contains `offset` (e.g. a diagnostic's), if any. */
export function ruleIndexAt(text: string, offset: number): number | undefined {
  const rules = parseForEdit(text).rules;
  if (!rules?.children) return undefined;
  const i = rules.children.findIndex((c) => offset >= c.offset && offset < c.offset + c.length);
  return i === -1 ? undefined : i;
}

// ---------------------------------------------------------------------------------------------
// Plumbing

function parseForEdit(text: string): { root: Node; rules: Node | undefined } {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || !root) throw new PolicyEditError('the policy file has syntax errors; fix them before editing its rules');
  if (root.type !== 'object') throw new PolicyEditError('the policy file is not a JSON object');
  const rules = findNodeAtLocation(root, ['rules']);
  if (rules && rules.type !== 'array') throw new PolicyEditError('"rules" is not an array');
  return { root, rules };
}

function usedRuleIds(rules: Node): string[] {
  return (rules.children ?? []).flatMap((c) => {
    const id = c.type === 'object' ? findNodeAtLocation(c, ['id']) : undefined;
    return id && typeof id.value === 'string' ? [id.value] : [];
  });
}

function rulesValues(text: string): unknown[] {
  const { rules } = parseForEdit(text);
  return rules ? (getNodeValue(rules) as unknown[]) : [];
}

/** One edit covering what differs between the texts (their common prefix and suffix kept). */
function finish(original: string, changed: string): RuleEditResult {
  if (original === changed) return { edits: [], newText: original };
  let start = 0;
  const max = Math.min(original.length, changed.length);
  while (start < max && original.charCodeAt(start) === changed.charCodeAt(start)) start++;
  let end = 0;
  while (end < max - start && original.charCodeAt(original.length - 1 - end) === changed.charCodeAt(changed.length - 1 - end)) end++;
  const edit: TextEdit = { offset: start, length: original.length - end - start, content: changed.slice(start, changed.length - end) };
  const newText = applyEdits(original, [edit]);
  return { edits: [edit], newText };
}

/** A guard against a bug here ever writing a file that means something else. */
function check(newText: string, ok: (rules: unknown[]) => boolean, what: string): void {
  let after: unknown[];
  try {
    after = rulesValues(newText);
  } catch (error) {
    throw new PolicyEditError(`internal error: the edited policy does not parse (${(error as Error).message})`);
  }
  if (!ok(after)) throw new PolicyEditError(`internal error: ${what}`);
}
