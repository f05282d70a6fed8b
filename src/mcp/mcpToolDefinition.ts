// What an MCP server says a tool is (its name, title, description, input schema and annotations),
// as kept when a person approves the server (mcpToolPins.ts): a digest of its canonical JSON, and
// what changed between two definitions in words a person can read (the description's lines, the
// schema's paths, the hints). All of it comes from the server: untrusted text, only ever shown.
import { createHash } from 'node:crypto';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson, InputTooDeepError } from '../policy/rules/compile.js';
import { hintNames } from '../policy/file/policyNames.js';

/** One tool as its server defined it (values as sent, JSON only). */
export interface McpToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  annotations?: Record<string, unknown>;
}

/** The parts of a listed tool a pin holds; anything else the server sends (output schema, _meta) is left out. */
export function toolDefinition(tool: McpTool): McpToolDefinition {
  return JSON.parse(JSON.stringify({
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema ?? null,
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
  })) as McpToolDefinition;
}

/**
 * 'sha256:' + hex of the definition's canonical JSON (keys sorted at every level, so the order a
 * server sends them in does not matter). A definition nested too deep for that is hashed as sent:
 * at worst an unchanged tool then asks again, never the reverse.
 */
export function definitionDigest(definition: McpToolDefinition): string {
  let text: string;
  try {
    text = canonicalJson(definition);
  } catch (error) {
    if (!(error instanceof InputTooDeepError)) throw error;
    text = JSON.stringify(definition);
  }
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** What changed, in a few words: `description, input schema, readOnlyHint false → true`, or `a new tool`. */
export function changeSummary(before: McpToolDefinition | undefined, after: McpToolDefinition): string {
  if (before === undefined) return 'a new tool';
  const parts: string[] = [];
  if (before.name !== after.name) parts.push('name');
  if ((before.title ?? '') !== (after.title ?? '')) parts.push('title');
  if ((before.description ?? '') !== (after.description ?? '')) parts.push('description');
  if (schemaLines(before.inputSchema, after.inputSchema).length > 0) parts.push('input schema');
  for (const line of hintLines(before.annotations, after.annotations)) parts.push(line);
  return parts.length > 0 ? parts.join(', ') : 'annotations';
}

/** The most lines each part of a change shows. */
const MAX_LINES = 40;

/**
 * What changed between the definition a person approved and the one the server offers now, as
 * plain text in the shape of a diff: the description line by line (`-` old, `+` new), the input
 * schema path by path, each hint old → new. `before` undefined: a tool that was not approved.
 */
export function describeDefinitionChange(toolId: string, before: McpToolDefinition | undefined, after: McpToolDefinition): string {
  const out: string[] = [];
  if (before === undefined) {
    out.push(`${toolId}: a new tool, not among the tools approved`);
    if (after.title !== undefined) out.push('title:', `  + ${after.title}`);
    out.push('description:', ...indent(lines(after.description).map((l) => `+ ${l}`)));
    out.push('input schema:', ...indent(cut(JSON.stringify(after.inputSchema, null, 2).split('\n').map((l) => `+ ${l}`))));
    const hints = hintLines(undefined, after.annotations);
    if (hints.length > 0) out.push('hints:', ...indent(hints));
    return out.join('\n');
  }
  out.push(`${toolId}: its definition changed since it was approved`);
  if ((before.title ?? '') !== (after.title ?? '')) out.push('title:', `  - ${before.title ?? ''}`, `  + ${after.title ?? ''}`);
  if ((before.description ?? '') !== (after.description ?? '')) {
    out.push('description:', ...indent(cut(lineDiff(lines(before.description), lines(after.description)))));
  }
  const schema = schemaLines(before.inputSchema, after.inputSchema);
  if (schema.length > 0) out.push('input schema:', ...indent(cut(schema)));
  const hints = hintLines(before.annotations, after.annotations);
  if (hints.length > 0) out.push('hints:', ...indent(hints));
  const other = otherAnnotationLines(before.annotations, after.annotations);
  if (other.length > 0) out.push('annotations:', ...indent(cut(other)));
  return out.join('\n');
}

function lines(text: string | undefined): string[] {
  return (text ?? '').split(/\r?\n/);
}

function indent(list: readonly string[]): string[] {
  return list.map((l) => `  ${l}`);
}

function cut(list: readonly string[]): string[] {
  return list.length <= MAX_LINES ? [...list] : [...list.slice(0, MAX_LINES), `… and ${list.length - MAX_LINES} more lines`];
}

/** A line diff (longest common subsequence): unchanged lines as `  `, removed `- `, added `+ `. Long texts: all old lines, then all new. */
export function lineDiff(a: readonly string[], b: readonly string[]): string[] {
  if (a.length * b.length > 250_000) return [...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`)];
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push(`+ ${b[j]}`);
      j++;
    } else {
      out.push(`- ${a[i]}`);
      i++;
    }
  }
  return out;
}

/** The schema's leaves by path (`properties.path.type`), each as JSON. */
function leaves(value: unknown, at: string, out: Map<string, string>, depth = 0): Map<string, string> {
  const isArray = Array.isArray(value);
  const entries = value !== null && typeof value === 'object' && depth < 64
    ? (isArray ? (value as unknown[]).map((v, i) => [`[${i}]`, v] as const) : Object.entries(value as Record<string, unknown>).map(([k, v]) => [/^[A-Za-z_$][\w$-]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`, v] as const))
    : undefined;
  if (entries === undefined || entries.length === 0) {
    out.set(at === '' ? '(the schema)' : at.replace(/^\./, ''), JSON.stringify(value) ?? 'undefined');
    return out;
  }
  for (const [key, v] of entries) leaves(v, `${at}${key}`, out, depth + 1);
  return out;
}

/** The schema's changes path by path: `+ path: value`, `- path: value`, `~ path: old → new`, in path order. */
export function schemaLines(before: unknown, after: unknown): string[] {
  const a = leaves(before, '', new Map());
  const b = leaves(after, '', new Map());
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  const out: string[] = [];
  for (const p of paths) {
    const [x, y] = [a.get(p), b.get(p)];
    if (x === y) continue;
    if (x === undefined) out.push(`+ ${p}: ${y}`);
    else if (y === undefined) out.push(`- ${p}: ${x}`);
    else out.push(`~ ${p}: ${x} → ${y}`);
  }
  return out;
}

/** Each MCP hint that differs, `readOnlyHint: false → true` (`not given` where a side has no boolean). */
function hintLines(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): string[] {
  const shown = (v: unknown): string => (typeof v === 'boolean' ? String(v) : v === undefined ? 'not given' : `${JSON.stringify(v)} (not a boolean: ignored)`);
  const out: string[] = [];
  for (const hint of hintNames) {
    const [x, y] = [before?.[hint], after?.[hint]];
    if (JSON.stringify(x) !== JSON.stringify(y)) out.push(`${hint} ${shown(x)} → ${shown(y)}`);
  }
  return out;
}

/** Annotations other than the hints (title and the like) that differ. */
function otherAnnotationLines(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): string[] {
  const strip = (o: Record<string, unknown> | undefined): Record<string, unknown> => Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => !(hintNames as readonly string[]).includes(k)));
  return schemaLines(strip(before), strip(after));
}
