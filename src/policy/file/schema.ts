// The policy file's schema (policy-format.md, version 1). Every object is strict: an unknown
// field is an error, so a typo such as "tool" for "tools" can never widen a rule.
import { z } from 'zod';
import { isRemember, MAX_GRANT_SECONDS, type Remember } from './grantLength.js';
import { isMaskHost, MASK_HOST_PATTERN } from './maskHosts.js';
import { decisionValues, ENV_NAME_PATTERN, hintNames, isPersistenceEntry, MARK_PATTERN, MAX_ASK_TIMEOUT_SECONDS, OTLP_ENDPOINT_PATTERN, reviewValues, sandboxModes, toolKinds } from './policyNames.js';

// The plain names live in policyNames.ts, which the fast check (policyFileFastCheck.ts) shares without zod.
export { decisionValues, hintNames, MAX_ASK_TIMEOUT_SECONDS, reviewValues, sandboxModes, toolKinds };

export const DecisionSchema = z.enum(decisionValues).describe('allow runs the call, ask opens an approval, deny refuses it');
export const ToolKindSchema = z.enum(toolKinds);

const globList = (what: string) =>
  z.array(z.string().min(1)).min(1).describe(`${what}; a glob starting with "!" excludes`);

export const HintsSchema = z
  .strictObject({
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .describe("Required values of the tool's effective annotations; an undeclared hint takes MCP's worst-case default");

export const InputMatcherSchema = z.union([
  z.string().describe('a glob over a string value'),
  z.strictObject({ equals: z.unknown() }).describe('deep equality with this JSON value'),
  z.strictObject({ regex: z.string() }).describe('a JavaScript regular expression over a string value'),
  z.strictObject({ glob: z.string() }).describe('a glob over a string value'),
  z.strictObject({ exists: z.boolean() }).describe('whether the pointer resolves to a value'),
]);

const EnvNameSchema = z.string().regex(ENV_NAME_PATTERN, 'an environment variable\'s name is letters, digits and "_", not starting with a digit');

const MaskHostSchema = z
  .string()
  .refine(isMaskHost, { message: 'a masked secret\'s host is a host name or "*.example.com" (its sub-domains), without port or path' })
  .meta({ pattern: MASK_HOST_PATTERN.source, maxLength: 253 });

const MaskSchema = z
  .record(EnvNameSchema, z.array(MaskHostSchema).min(1))
  .refine((mask) => Object.keys(mask).length > 0, { message: '"mask" names at least one variable' })
  .meta({ minProperties: 1 })
  .describe('Secret variables masked: the command gets a stand-in, which the sandbox\'s proxy replaces with the real value only in HTTPS requests to the hosts named for it (docs/sandbox.md, "Masked secrets"); masked only when every part\'s deciding rule masks it');

export const RuleSandboxSchema = z
  .union([
    z.literal(true),
    z.strictObject({
      network: z.boolean().optional(),
      env: z.array(EnvNameSchema).min(1).optional()
        .describe('Credential variables (docs/sandbox.md) passed into the sandbox by name; a name is passed only when every part\'s deciding rule passes it'),
      mask: MaskSchema.optional(),
    }),
  ])
  .describe('allow only, on command tools: allowed only inside the sandbox; { "network": true } lets the command reach the network; { "env": [...] } passes those credential variables; { "mask": { NAME: [hosts] } } passes a stand-in, made the real value only on the way to those hosts');

const MarkSchema = z.string().regex(MARK_PATTERN, 'a mark is 1 to 64 letters, digits, "_", ".", ":" or "-"');
const markList = (what: string) => z.array(MarkSchema).min(1).describe(what);

export const WhenSchema = z
  .strictObject({
    marked: markList('the session (with its subagents) carries every one of these marks').optional(),
    unmarked: markList('the session (with its subagents) carries none of these marks').optional(),
  })
  .refine((when) => when.marked !== undefined || when.unmarked !== undefined, { message: '"when" needs "marked" or "unmarked"' })
  .describe('What the session must already have done (its marks) for this rule to decide');

export const RememberSchema = z
  .string()
  .refine(isRemember, { message: `"remember" is "session", "never" or a duration such as "15m" or "1h" (a whole number of s, m or h, at most ${MAX_GRANT_SECONDS / 3600} hours)` })
  .describe('ask only; the widest grant a person may give: "session" (default), "never" (allow once only), or a duration such as "15m" or "1h" (at most 24h)')
  .meta({ pattern: '^(session|never|[1-9][0-9]{0,5}[smh])$' }) as unknown as z.ZodType<Remember, Remember>;

export const ReviewSchema = z
  .enum(reviewValues)
  .describe('allow and ask only: "result" holds the tool\'s result for a person (Pass / Withhold) before the model sees it');

export const SandboxModeSchema = z
  .enum(sandboxModes)
  .describe('required: without a sandbox every command asks; auto (default): sandboxed where the machine can; off: never (managed and user policies only)');

export const RuleSchema = z
  .strictObject({
    id: z.string().min(1).optional().describe('Unique in its file; names the rule in explanations, audit and diagnostics'),
    decision: DecisionSchema,
    reason: z.string().optional().describe('Shown to the person (ask) and returned to the model (deny)'),
    tools: globList("Globs over the tool's stable id, e.g. builtin.read_file, mcp.github.*").optional(),
    kinds: z.array(ToolKindSchema).min(1).optional().describe("The tool's kind"),
    agents: globList('Globs over the name of the agent or subagent making the call').optional(),
    hints: HintsSchema.optional(),
    tags: z.array(z.string().min(1)).min(1).optional().describe('Matches when the tool carries at least one of these tags'),
    paths: globList("Globs over the call's path arguments, relative to the workspace folder").optional(),
    commands: z.array(z.string().min(1)).min(1).optional().describe("Command patterns over the call's shell command"),
    domains: globList("Host globs over the hosts of the call's URLs (URL arguments, curl/wget in commands): example.com, *.example.com (sub-domains only)").optional(),
    urls: globList("Globs over the call's normalised URLs (scheme://host[:port]/path?query): * within a path segment, ** across").optional(),
    input: z.record(z.string(), InputMatcherSchema).optional().describe("JSON Pointer -> matcher over the call's input"),
    // A timer holds at most 2^31-1 ms (about 24.8 days): a longer wait could not be kept.
    timeout: z.number().positive().max(MAX_ASK_TIMEOUT_SECONDS).optional().describe('ask only: seconds the question stays open (at most 2147483)'),
    onTimeout: z.enum(['deny', 'keep']).optional().describe('ask only; default deny'),
    remember: RememberSchema.optional(),
    sandbox: RuleSandboxSchema.optional(),
    marks: markList('allow and ask only: labels put on the session (and its subagents) when this rule decides a call that runs').optional(),
    when: WhenSchema.optional(),
    review: ReviewSchema.optional(),
  })
  .superRefine((rule, ctx) => {
    if (rule.decision !== 'ask') {
      for (const field of ['timeout', 'onTimeout', 'remember'] as const) {
        if (rule[field] !== undefined) {
          ctx.addIssue({ code: 'custom', path: [field], message: `"${field}" applies only to rules whose decision is "ask"` });
        }
      }
    }
    if (rule.sandbox !== undefined && rule.decision !== 'allow') {
      ctx.addIssue({ code: 'custom', path: ['sandbox'], message: '"sandbox" applies only to rules whose decision is "allow"' });
    }
    if (rule.marks !== undefined && rule.decision === 'deny') {
      // A denied call never runs, so it never marks the session: the field would be a promise not kept.
      ctx.addIssue({ code: 'custom', path: ['marks'], message: '"marks" applies only to rules whose decision is "allow" or "ask": a denied call never runs' });
    }
    if (rule.review !== undefined && rule.decision === 'deny') {
      // A denied call never runs, so there is no result to review.
      ctx.addIssue({ code: 'custom', path: ['review'], message: '"review" applies only to rules whose decision is "allow" or "ask": a denied call has no result' });
    }
  });

export const TestCallSchema = z.strictObject({
  tool: z.string().min(1),
  input: z.unknown().optional(),
  kind: ToolKindSchema.optional(),
  agent: z.string().min(1).optional(),
  hints: HintsSchema.optional(),
  tags: z.array(z.string()).optional(),
  marks: z.array(MarkSchema).optional().describe('The marks the session already carries when it makes this call'),
});

export const InlineTestSchema = z.strictObject({
  name: z.string().optional(),
  call: TestCallSchema,
  expect: DecisionSchema,
  rule: z.string().min(1).optional().describe('The id of the rule expected to decide'),
  sandbox: z.boolean().optional().describe('Judge as on a machine where commands run sandboxed (default true) or where they cannot (false)'),
  review: z.enum([...reviewValues, 'none']).optional().describe('"result": the call\'s result is expected to wait for a person; "none": expected not to'),
  hidden: z.boolean().optional().describe("true: the tool is expected to be hidden from the calling agent's model (every call of it denied, whatever its input); false: expected to be offered"),
});

const serverGlobs = (what: string) =>
  z.array(z.string().min(1)).min(1).describe(`${what}: globs over the server names of .vscode/mcp.json; a glob starting with "!" excludes`);

/**
 * Managed controls (issue 14): what a person may be offered at all, and which MCP servers may
 * start. Honoured only in the managed policy; any other layer that sets them is invalid
 * (managedControls.ts), so they can only ever be tightened by an organisation.
 */
export const ControlsSchema = z
  .strictObject({
    allowForSession: z.boolean().optional().describe('false: no one may answer Allow for Session (time-limited grants stay, up to longestGrant, 1 hour when it is not given)'),
    addRule: z.boolean().optional().describe('false: Allow and Add Rule… and the quick fixes that write allow rules are not offered'),
    longestGrant: RememberSchema.optional().describe('The longest grant a person may give any ask: "session", "never" (allow once only) or a duration such as "15m"; caps every rule\'s "remember"'),
    mcpServers: z
      .strictObject({
        allow: serverGlobs('Only these servers may start').optional(),
        deny: serverGlobs('These servers never start').optional(),
      })
      .optional()
      .describe('Which servers of .vscode/mcp.json may start at all; deny wins over allow'),
    telemetry: z
      .strictObject({
        enabled: z.boolean().optional().describe('true: decisions, asks and answers are exported to OpenTelemetry (OTLP/HTTP) on every machine under this policy; false: never, whatever AGENTPOLICY_ENABLE_TELEMETRY says; left out: the variable decides'),
        content: z.boolean().optional().describe('true: exported records also carry what a call was about (summaries with command text and paths, reasons, the rule\'s file, the input\'s digest, hosts reached); default false: only ids, decisions, rules and times'),
        endpoint: z.string().regex(OTLP_ENDPOINT_PATTERN, 'an http:// or https:// URL with a host (and an optional path), no query').optional().describe('The collector\'s OTLP/HTTP base URL (e.g. https://otel.example.com:4318): /v1/logs and /v1/metrics are added; wins over OTEL_EXPORTER_OTLP_ENDPOINT'),
      })
      .optional()
      .describe('Decisions in OpenTelemetry (docs/teams.md): whether they are exported, and whether what a call was about goes with them'),
  })
  .superRefine((controls, ctx) => {
    // Two fields that say the same thing two ways must not contradict each other.
    if (controls.allowForSession === false && controls.longestGrant === 'session') {
      ctx.addIssue({ code: 'custom', path: ['longestGrant'], message: '"longestGrant": "session" contradicts "allowForSession": false; give a duration such as "1h", or "never"' });
    }
    if (controls.allowForSession === true && controls.longestGrant !== undefined && controls.longestGrant !== 'session') {
      ctx.addIssue({ code: 'custom', path: ['allowForSession'], message: `"allowForSession": true contradicts "longestGrant": "${controls.longestGrant}" (a session grant is longer); leave allowForSession out` });
    }
  })
  .describe('Managed policy only: limits on what a person is offered and which MCP servers start; a workspace or user policy cannot set them');

export type Controls = z.infer<typeof ControlsSchema>;

export const PolicyFileSchema = z
  .strictObject({
    $schema: z.string().optional(),
    version: z.literal(1),
    default: DecisionSchema.optional(),
    sandbox: SandboxModeSchema.optional(),
    sandboxServers: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('MCP servers whose stdio process runs in the sandbox, as commands do (docs/mcp.md, "Sandboxed servers"): globs over the server names of .vscode/mcp.json; a glob starting with "!" excludes (in this file\'s list only). Every layer\'s list counts: a layer can add servers, never take one out of another\'s. A server named here never starts unsandboxed: where there is no sandbox it is not started'),
    controls: ControlsSchema.optional(),
    persistenceFiles: z
      .array(z.string().refine(isPersistenceEntry, { message: 'a persistence file is a workspace-relative path (no "/" first, no "." or ".." segment, no "~"); a trailing "/" names a folder' }))
      .min(1)
      .optional()
      .describe('More files that run code later or configure what runs, added to the built-in list (docs/sandbox.md): never written by a command or a file tool without a person\'s answer. Workspace-relative; a trailing "/" names a folder'),
    rules: z.array(RuleSchema).default([]),
    tests: z.array(InlineTestSchema).optional(),
  })
  .describe('An Agent Policy file (.agentpolicy.jsonc)');

export type Decision = z.infer<typeof DecisionSchema>;
export type ToolKind = z.infer<typeof ToolKindSchema>;
export type Hints = z.infer<typeof HintsSchema>;
export type InputMatcher = z.infer<typeof InputMatcherSchema>;
export type Rule = z.infer<typeof RuleSchema>;
export type InlineTest = z.infer<typeof InlineTestSchema>;
export type PolicyFile = z.infer<typeof PolicyFileSchema>;
export type RuleSandbox = z.infer<typeof RuleSandboxSchema>;
export type SandboxMode = z.infer<typeof SandboxModeSchema>;
export type When = z.infer<typeof WhenSchema>;
export type Review = z.infer<typeof ReviewSchema>;
