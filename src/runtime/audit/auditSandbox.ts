// The audit log's sandbox fields: how a run_command call ran (or would run, on an ask), and the
// `sandbox-cleanup` line that names changes to protected paths undone after a sandboxed command.
// Kept apart from audit.ts so that the log's core stays about lines, not about commands.
import { z } from 'zod';
import type { CommandSandboxReport } from '../sandbox/sandboxNote.js';

/** On `decision` and `callback-opened` lines of `builtin.run_command` (on an ask: how it runs if a person allows it). */
export type AuditSandbox = Pick<CommandSandboxReport, 'sandboxed' | 'network' | 'hostsJudged' | 'protectedWritable'>;

/** Older lines have no such field; newer readers accept any extra keys in it. */
export const AuditSandboxSchema = z.looseObject({
  sandboxed: z.boolean(),
  network: z.boolean(),
  hostsJudged: z.boolean().optional(),
  protectedWritable: z.boolean().optional(),
});

/** The summary cell of a sandbox-cleanup line. */
export function undoneCell(undone: readonly string[] | undefined): string {
  return (undone ?? []).join('; ');
}
