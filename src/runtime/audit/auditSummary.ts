// What an audit line says of a call (docs/decisions.md, the audit log): the input's digest and
// one-line summary, the parts and the hidden tools, each bounded so a line stays under its size.
import { hash } from 'node:crypto';
import { canonicalJson } from '../../policy/rules/compile.js';
import { SUMMARY_MAX, truncate, type AuditEntry } from './audit.js';

/**
 * 'sha256:' + hex of the canonical JSON (keys sorted) of the input: stable across key order.
 * `canonical`: the input's `canonicalJson`, when the caller has it already.
 */
export function inputDigest(input: unknown, canonical: string = canonicalJson(input)): string {
  // The one-shot hash: no Hash object per call (a third of the digest's cost).
  return `sha256:${hash('sha256', canonical, 'hex')}`;
}

/** Keys whose value is the call, as a person would write it. */
const COMMAND_KEYS = ['command', 'cmd'];
/** Keys that name what the call is about; shown as `key: value`. */
const NAMED_KEYS = ['path', 'file_path', 'filePath', 'file', 'paths', 'url', 'urls', 'uri', 'pattern', 'query'];

/**
 * A one-line summary of a tool input, at most `max` characters: the command for
 * `{command: 'npm test'}`, `path: src/a.ts` for `{path: 'src/a.ts'}` (and the like for
 * file_path, url, pattern, …), a string as it is, anything else as compact JSON. Whitespace
 * runs become one space; a cut ends in '…'.
 */
/** The most hidden tools one tools-hidden line lists (each names its rule's file: the line stays within its byte limit). */
export const AUDIT_HIDDEN_MAX = 12;

/** A tools-hidden line's list: each tool with the rule, or the default's layer (`permissionMode` when none sets one), that denies it outright. */
export function auditHidden(hidden: ReadonlyArray<{ tool: string; rule: AuditEntry['rule'] | null; defaultFrom?: string | null }>): Pick<AuditEntry, 'hidden' | 'hiddenOmitted'> {
  const kept = hidden.slice(0, AUDIT_HIDDEN_MAX).map((h) => ({ tool: h.tool, rule: h.rule ?? null, ...(h.rule ? {} : { default: h.defaultFrom ?? 'permissionMode' }) }));
  return { hidden: kept, ...(hidden.length > kept.length ? { hiddenOmitted: hidden.length - kept.length } : {}) };
}

/** The most parts one audit line lists. */
export const AUDIT_PARTS_MAX = 32;

/** A decision's parts as an audit line keeps them: each label cut, at most AUDIT_PARTS_MAX. */
export function auditParts(parts: ReadonlyArray<{ part: string; decision: 'allow' | 'ask' | 'deny'; rule: AuditEntry['rule'] }> | undefined): Pick<AuditEntry, 'parts' | 'partsOmitted'> {
  if (parts === undefined) return {};
  const kept = parts.slice(0, AUDIT_PARTS_MAX).map((p) => ({ part: truncate(oneLine(p.part), SUMMARY_MAX), decision: p.decision, rule: p.rule ?? null }));
  return { parts: kept, ...(parts.length > kept.length ? { partsOmitted: parts.length - kept.length } : {}) };
}

export function summarizeInput(input: unknown, max: number = SUMMARY_MAX): string {
  return truncate(oneLine(summaryText(input, max)), max);
}

function summaryText(input: unknown, max: number): string {
  if (typeof input === 'string') return input.slice(0, max * 4);
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const record = input as Record<string, unknown>;
    for (const key of COMMAND_KEYS) {
      const text = textOf(record[key], ' ', max);
      if (text !== undefined) return text;
    }
    for (const key of NAMED_KEYS) {
      const text = textOf(record[key], ', ', max);
      if (text !== undefined) return `${key}: ${text}`;
    }
  }
  return boundedJson(input, max * 4);
}

/** A string, or an array of strings joined; undefined for anything else. */
function textOf(value: unknown, separator: string, max: number): string | undefined {
  if (typeof value === 'string') return value.slice(0, max * 4);
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string'))
    return (value as string[]).join(separator).slice(0, max * 4);
  return undefined;
}

export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim();
}

/**
 * Compact JSON in key order as given, stopping once past `limit` characters, so a huge input
 * costs no more than its first few hundred characters. Cycles print as "[Circular]".
 */
function boundedJson(value: unknown, limit: number): string {
  let out = '';
  const stack: object[] = [];
  const full = (): boolean => out.length > limit;
  const emit = (v: unknown, inArray: boolean): void => {
    if (full()) return;
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function')
      v = (v as { toJSON(): unknown }).toJSON();
    if (typeof v === 'string') {
      out += JSON.stringify(v.length > limit ? v.slice(0, limit + 1) : v);
      return;
    }
    if (typeof v === 'bigint') {
      out += v.toString();
      return;
    }
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') {
      out += inArray ? 'null' : '';
      return;
    }
    if (v === null || typeof v !== 'object') {
      out += JSON.stringify(v);
      return;
    }
    if (stack.includes(v)) {
      out += '"[Circular]"';
      return;
    }
    stack.push(v);
    if (Array.isArray(v)) {
      out += '[';
      for (let i = 0; i < v.length && !full(); i++) {
        if (i > 0) out += ',';
        emit(v[i], true);
      }
      out += ']';
    } else {
      out += '{';
      let first = true;
      for (const [key, item] of Object.entries(v)) {
        if (full()) break;
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        out += `${first ? '' : ','}${JSON.stringify(key)}:`;
        first = false;
        emit(item, false);
      }
      out += '}';
    }
    stack.pop();
  };
  emit(value, false);
  return out === '' ? String(value) : out;
}
