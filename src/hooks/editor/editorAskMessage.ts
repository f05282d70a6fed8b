// What the window accepts from a hook's connection: one line of JSON, no longer than
// MAX_ASK_BYTES, carrying this window's token and an ask of the expected shape, every text
// bounded. Anything else is refused with a reason and the connection closed. The ask is
// untrusted text throughout (any process of the user can connect): it can only raise a
// question, and what it says is shown defanged.
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../policy/rules/compile.js';
import { MARK_PATTERN } from '../../policy/file/policyNames.js';
import { isRemember, type Remember } from '../../policy/file/grantLength.js';
import type { ExternalAsk } from '../../runtime/host/externalSession.js';
import { PROTOCOL_VERSION } from './editorBridge.js';
import { HOST_AGENTS, type HostAgent } from '../hosts/hostAgents.js';

/** Control characters, line breaks and bidirectional overrides: they could make a notification say something else than it seems to. */
const HIDING_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const oneLine = (max: number) => z.string().max(max).transform((s) => s.replace(HIDING_CHARACTERS, ' '));

const ruleRef = z.object({
  layer: z.enum(['managed', 'workspace', 'user']),
  id: z.string().max(200).nullable(),
  index: z.number().int().min(0).max(1_000_000),
  file: z.string().max(4096),
  line: z.number().int().min(0).max(10_000_000),
});

const askSchema = z.object({
  host: z.enum(HOST_AGENTS),
  hostSession: z.string().max(1000),
  agent: oneLine(200).optional(),
  // Stable ids are plain: `builtin.x`, `mcp.<server>.<tool>` (MCP names are [A-Za-z0-9_.-/]), `<host>.<tool>`.
  toolId: z.string().regex(/^[A-Za-z0-9_.\-/:@+]{1,256}$/),
  toolName: oneLine(200).optional(),
  input: z.unknown(),
  reason: oneLine(2000).optional(),
  rule: ruleRef.nullable(),
  defaultFrom: z.enum(['managed', 'workspace', 'user']).nullable().optional(),
  // `note` says a part can never be allowed (it writes to a file, …): such a part is never granted on its own (sessionGrants.ts).
  parts: z.array(z.object({ part: z.string().max(8000), decision: z.enum(['allow', 'ask', 'deny']), rule: ruleRef.nullable(), note: z.string().max(500).optional() })).max(500).optional(),
  lowered: z.boolean().optional(),
  remember: z.string().refine(isRemember),
  timeoutSeconds: z.number().positive().max(7 * 24 * 3600).optional(),
  onTimeout: z.enum(['deny', 'keep']),
  // Flow rules: the host session's marks, shown in the tree (labels as the policy format allows them).
  marks: z.array(z.string().regex(MARK_PATTERN)).max(64).optional(),
  maybeMarks: z.array(z.string().regex(MARK_PATTERN)).max(64).optional(),
});

export type ReceivedAsk = ExternalAsk & { host: HostAgent; hostSession: string };

/** The ask in a hook's line, or why it is refused. */
export function readAskLine(line: string, token: string): { ask: ReceivedAsk } | { refused: string } {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return { refused: 'malformed: not JSON' };
  }
  const m = message as { v?: unknown; token?: unknown; ask?: unknown } | null;
  if (typeof m !== 'object' || m === null || m.v !== PROTOCOL_VERSION) return { refused: `malformed: not a version ${PROTOCOL_VERSION} ask` };
  if (typeof m.token !== 'string' || !sameToken(m.token, token)) return { refused: 'refused: wrong token' };
  const parsed = askSchema.safeParse(m.ask);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { refused: `malformed: ${issue ? `${issue.path.join('.') || 'ask'}: ${issue.message}` : 'not an ask'}` };
  }
  const a = parsed.data;
  try {
    // The same depth limit as every input the runtime judges.
    canonicalJson(a.input);
  } catch (error) {
    return { refused: `malformed: input: ${error instanceof Error ? error.message : String(error)}` };
  }
  return {
    ask: {
      host: a.host, hostSession: a.hostSession, toolId: a.toolId, input: a.input, rule: a.rule,
      lowered: a.lowered ?? false, remember: a.remember as Remember, onTimeout: a.onTimeout,
      ...(a.agent !== undefined && a.agent.trim() !== '' ? { agent: a.agent } : {}),
      ...(a.toolName !== undefined ? { toolName: a.toolName } : {}),
      ...(a.reason !== undefined ? { reason: a.reason } : {}),
      ...(a.defaultFrom !== undefined ? { defaultFrom: a.defaultFrom } : {}),
      ...(a.parts !== undefined ? { parts: a.parts } : {}),
      ...(a.timeoutSeconds !== undefined ? { timeoutSeconds: a.timeoutSeconds } : {}),
      ...(a.marks !== undefined ? { marks: a.marks } : {}),
      ...(a.maybeMarks !== undefined ? { maybeMarks: a.maybeMarks } : {}),
    },
  };
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
