// The policy file's schema (schema.ts) checked by hand, for the values a JSON reader makes: zod's
// strict-object parser makes a result object per schema key per rule, present or not, which was
// about half of what compiling a large policy allocated. The answer is the value zod would give
// (plain objects, keys in the schema's order, the `rules` default) or undefined, "not sure": then
// zod decides, and says what is wrong. So it may refuse anything unusual, but must never accept
// what the schema refuses (test/policy/policyFileFastCheck.test.ts holds it to that).
import { isRemember } from './grantLength.js';
import { decisionValues, ENV_NAME_PATTERN, hintNames, isPersistenceEntry, MARK_PATTERN, MAX_ASK_TIMEOUT_SECONDS, OTLP_ENDPOINT_PATTERN, reviewValues, sandboxModes, toolKinds } from './policyNames.js';
import { isMaskHost } from './maskHosts.js';
import type { PolicyFile } from './schema.js';

type JsonObject = Record<string, unknown>;

/** A field's output value, or undefined when the check is not sure (never for a valid value it covers). */
type Check = (value: unknown) => unknown;

/** A field of a strict object: its check, and what its absence means (optional when not said). */
type Field = readonly [key: string, check: Check, absent?: 'required' | (() => unknown)];

/** An object as a JSON reader makes it: no prototype (the fast reader) or Object's (JSON.parse). */
function isJsonObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === null || prototype === Object.prototype;
}

function isJsonArray(value: unknown): value is unknown[] {
  return Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype;
}

const text: Check = (value) => (typeof value === 'string' ? value : undefined);
const nonEmptyText: Check = (value) => (typeof value === 'string' && value.length > 0 ? value : undefined);
const boolean: Check = (value) => (typeof value === 'boolean' ? value : undefined);
const anyValue: Check = (value) => value;
const mark: Check = (value) => (typeof value === 'string' && MARK_PATTERN.test(value) ? value : undefined);
const remember: Check = (value) => (typeof value === 'string' && isRemember(value) ? value : undefined);
const timeout: Check = (value) => (typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_ASK_TIMEOUT_SECONDS ? value : undefined);

function oneOf(values: readonly string[]): Check {
  return (value) => (typeof value === 'string' && values.includes(value) ? value : undefined);
}

/**
 * A list whose every element passes `element` as it is, copied as zod copies it: a list the
 * reader grew by push keeps spare room (2 MB more heap at 10,000 rules when shared).
 */
function listOf(element: Check, minLength: 0 | 1): Check {
  return (value) => {
    if (!isJsonArray(value) || value.length < minLength) return undefined;
    for (let i = 0; i < value.length; i++) if (element(value[i]) === undefined) return undefined;
    return value.slice();
  };
}

/** A list of objects (rules, tests): a new list of their outputs. */
function listOfObjects(element: Check): Check {
  return (value) => {
    if (!isJsonArray(value)) return undefined;
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const checked = element(value[i]);
      if (checked === undefined) return undefined;
      out.push(checked);
    }
    return out;
  };
}

/** The keys of each strict object checked, by the schema object's name: the test compares them with zod's shapes. */
export const FAST_CHECK_SHAPES = new Map<string, readonly string[]>();

/** A strict object: no other key, no key holding undefined; the output's keys in `fields` order, as zod's shape. */
function strictObject(name: string, fields: readonly Field[], refine?: (out: JsonObject) => boolean): Check {
  const keys = new Set(fields.map(([key]) => key));
  FAST_CHECK_SHAPES.set(name, [...keys]);
  return (value) => {
    if (!isJsonObject(value)) return undefined;
    for (const key in value) if (!keys.has(key) || value[key] === undefined) return undefined;
    const out: JsonObject = {};
    for (const [key, check, absent] of fields) {
      const given = value[key];
      if (given === undefined) {
        if (absent === 'required') return undefined;
        if (absent !== undefined) out[key] = absent();
        continue;
      }
      const checked = check(given);
      if (checked === undefined) return undefined;
      out[key] = checked;
    }
    return refine === undefined || refine(out) ? out : undefined;
  };
}

const globList = listOf(nonEmptyText, 1);
const markList = listOf(mark, 1);
const decision = oneOf(decisionValues);
const hints = strictObject('HintsSchema', hintNames.map((name) => [name, boolean] as const));

const matcherForms: ReadonlyMap<string, Check> = new Map([
  ['equals', strictObject('InputMatcherSchema.equals', [['equals', anyValue, 'required']])],
  ['regex', strictObject('InputMatcherSchema.regex', [['regex', text, 'required']])],
  ['glob', strictObject('InputMatcherSchema.glob', [['glob', text, 'required']])],
  ['exists', strictObject('InputMatcherSchema.exists', [['exists', boolean, 'required']])],
]);

/** An input matcher: a glob string, or an object with exactly one of the forms' keys. */
const inputMatcher: Check = (value) => {
  if (typeof value === 'string') return value;
  if (!isJsonObject(value)) return undefined;
  for (const key in value) return matcherForms.get(key)?.(value);
  return undefined; // {}: zod decides
};

/** `input`: JSON Pointer → matcher, a new object keyed in the input's order (zod's record). */
const inputMatchers: Check = (value) => {
  if (!isJsonObject(value)) return undefined;
  const out: JsonObject = {};
  for (const key in value) {
    if (key === '__proto__') return undefined; // zod's record skips it; not sure is the safe answer
    const checked = inputMatcher(value[key]);
    if (checked === undefined) return undefined;
    out[key] = checked;
  }
  return out;
};

const envName: Check = (value) => (typeof value === 'string' && ENV_NAME_PATTERN.test(value) ? value : undefined);
const persistenceEntry: Check = (value) => (typeof value === 'string' && isPersistenceEntry(value) ? value : undefined);
const maskHost: Check = (value) => (typeof value === 'string' && isMaskHost(value) ? value : undefined);
const maskHosts = listOf(maskHost, 1);
/** `mask`: variable name → host patterns, at least one name; a new object keyed in the input's order (zod's record). */
const mask: Check = (value) => {
  if (!isJsonObject(value)) return undefined;
  const out: JsonObject = {};
  let names = 0;
  for (const key in value) {
    if (key === '__proto__' || !ENV_NAME_PATTERN.test(key)) return undefined;
    const checked = maskHosts(value[key]);
    if (checked === undefined) return undefined;
    out[key] = checked;
    names++;
  }
  return names > 0 ? out : undefined;
};
const networkSandbox = strictObject('RuleSandboxSchema.network', [['network', boolean], ['env', listOf(envName, 1)], ['mask', mask]]);
const ruleSandbox: Check = (value) => (value === true ? true : networkSandbox(value));

const when = strictObject(
  'WhenSchema',
  [['marked', markList], ['unmarked', markList]],
  (out) => out.marked !== undefined || out.unmarked !== undefined,
);

const rule = strictObject(
  'RuleSchema',
  [
    ['id', nonEmptyText],
    ['decision', decision, 'required'],
    ['reason', text],
    ['tools', globList],
    ['kinds', listOf(oneOf(toolKinds), 1)],
    ['agents', globList],
    ['hints', hints],
    ['tags', globList],
    ['paths', globList],
    ['commands', globList],
    ['domains', globList],
    ['urls', globList],
    ['input', inputMatchers],
    ['timeout', timeout],
    ['onTimeout', oneOf(['deny', 'keep'])],
    ['remember', remember],
    ['sandbox', ruleSandbox],
    ['marks', markList],
    ['when', when],
    ['review', oneOf(reviewValues)],
  ],
  // The schema's superRefine: fields that apply only to some decisions.
  (out) =>
    (out.decision === 'ask' || (out.timeout === undefined && out.onTimeout === undefined && out.remember === undefined)) &&
    (out.decision === 'allow' || out.sandbox === undefined) &&
    (out.decision !== 'deny' || (out.marks === undefined && out.review === undefined)),
);

const testCall = strictObject('TestCallSchema', [
  ['tool', nonEmptyText, 'required'],
  ['input', anyValue],
  ['kind', oneOf(toolKinds)],
  ['agent', nonEmptyText],
  ['hints', hints],
  ['tags', listOf(text, 0)],
  ['marks', listOf(mark, 0)],
]);

const inlineTest = strictObject('InlineTestSchema', [
  ['name', text],
  ['call', testCall, 'required'],
  ['expect', decision, 'required'],
  ['rule', nonEmptyText],
  ['sandbox', boolean],
  ['review', oneOf([...reviewValues, 'none'])],
  ['hidden', boolean],
]);

const controls = strictObject(
  'ControlsSchema',
  [
    ['allowForSession', boolean],
    ['addRule', boolean],
    ['longestGrant', remember],
    ['mcpServers', strictObject('ControlsSchema.mcpServers', [['allow', globList], ['deny', globList]])],
    ['telemetry', strictObject('ControlsSchema.telemetry', [['enabled', boolean], ['content', boolean], ['endpoint', (value) => (typeof value === 'string' && OTLP_ENDPOINT_PATTERN.test(value) ? value : undefined)]])],
  ],
  // The schema's superRefine: allowForSession and longestGrant must not contradict each other.
  (out) =>
    !(out.allowForSession === false && out.longestGrant === 'session') &&
    !(out.allowForSession === true && out.longestGrant !== undefined && out.longestGrant !== 'session'),
);

const policyFile = strictObject('PolicyFileSchema', [
  ['$schema', text],
  ['version', (value) => (value === 1 ? value : undefined), 'required'],
  ['default', decision],
  ['sandbox', oneOf(sandboxModes)],
  ['sandboxServers', globList],
  ['controls', controls],
  ['persistenceFiles', listOf(persistenceEntry, 1)],
  ['rules', listOfObjects(rule), () => []],
  ['tests', listOfObjects(inlineTest)],
]);

/**
 * What `PolicyFileSchema.safeParse(value)` would give as its data, or undefined when not sure
 * (then zod must decide). `value` is a JSON reader's value; as with zod, the answer is new
 * objects and lists, but for the values zod passes on as they are (`equals`, a test's `input`).
 */
export function policyFileFastCheck(value: unknown): PolicyFile | undefined {
  return policyFile(value) as PolicyFile | undefined;
}

