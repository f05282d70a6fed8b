// What a command reaches beyond its words, judged by the rules that already say what may be
// reached (docs/programs.md, "Paths named in commands" and "Scripts the agent may have written"):
// the files it reads and writes (commandPaths.ts) by the rules on `paths`, as the read and write
// tools; a path it names that cannot be placed before it runs by the first rule on paths that may
// take it; the package scripts and makefile recipes it runs (projectScripts.ts) by the `ask` and
// `deny` rules, as commands of their own. It only tightens: an allow may become an ask or a deny.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commandFiles } from '../paths/commandPaths.js';
import { pathMatches, type CompiledRule, type RuleRef } from './compile.js';
import type { PolicyDecision } from './decision.js';
import { projectScripts } from '../paths/projectScripts.js';
import { covers } from './ruleCoverage.js';
import type { SimpleCommand } from '../shell/shellCommand.js';

/** The read and write tools, as a command's files are judged. */
export const READ_TOOL = { id: 'builtin.read_file', kind: 'builtin', annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }, pathArgs: ['path'] } as const;
export const WRITE_TOOL = { id: 'builtin.write_file', kind: 'builtin', annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }, pathArgs: ['path'] } as const;
type FileTool = typeof READ_TOOL | typeof WRITE_TOOL;

/** Scripts that run scripts (`npm test` → `npm run lint`) are followed this deep. */
export const MAX_SCRIPT_DEPTH = 3;

export interface ReachJudge {
  workspace: string;
  home: string;
  /** The file tool's decision on one file, when a rule with `paths` makes it (else undefined). */
  judgeFile(tool: FileTool, file: string): PolicyDecision | undefined;
  /** Every rule of the policy, in the order they are tried. */
  rules(): readonly CompiledRule[];
  /** A command line judged as the agent's own; undefined when scripts are nested too deep to follow. */
  judgeCommand(command: string): PolicyDecision | undefined;
}

const ruleName = (rule: RuleRef): string => `${rule.layer} rule ${rule.id !== null ? `"${rule.id}"` : rule.index + 1}`;

export function tightenByCommandReach(decision: PolicyDecision, commands: readonly SimpleCommand[], judge: ReachJudge): PolicyDecision {
  if (commands.length === 0) return decision;
  const files = commandFiles(commands, judge.workspace, judge.home);
  const named: Array<{ file: string; tool: FileTool; verb: string }> = [
    ...files.reads.map((file) => ({ file, tool: READ_TOOL, verb: 'names' })),
    ...files.writes.map((file) => ({ file, tool: WRITE_TOOL, verb: 'writes' })),
  ];
  // What recursive programs reach under a folder: many entries, so only those some rule on paths
  // that denies or asks may take (or links, which point elsewhere) are judged one by one.
  if (files.under.length > 0) {
    const guarding = (tool: FileTool): CompiledRule[] => judge.rules().filter((r) => r.paths !== undefined && r.decision !== 'allow' && (r.tools === undefined || r.tools.test(tool.id)));
    const guards = { read: guarding(READ_TOOL), write: guarding(WRITE_TOOL) };
    const workspace = realFolder(judge.workspace);
    for (const entry of files.under) {
      const relative = path.relative(workspace, entry.file);
      const resolved = { absolute: entry.file, relative: relative.startsWith('..') || path.isAbsolute(relative) ? null : relative.split(path.sep).join('/') };
      if (entry.link || guards[entry.writes ? 'write' : 'read'].some((r) => pathMatches(r.paths!, resolved))) named.push({ file: entry.file, tool: entry.writes ? WRITE_TOOL : READ_TOOL, verb: entry.writes ? 'removes or changes' : 'reads' });
    }
  }
  let asked: PolicyDecision | undefined;
  /** A deny of what the command reaches is the decision; the first ask holds unless a later deny comes (the strictest wins). */
  const tighten = (judged: PolicyDecision & { rule: RuleRef }, why: string): PolicyDecision | undefined => {
    if (judged.decision === 'deny') return { ...decision, decision: 'deny', rule: judged.rule, lowered: false, reason: why };
    if (decision.decision === 'allow') asked ??= { ...decision, decision: 'ask', rule: judged.rule, lowered: false, reason: why, ask: judged.ask ?? { onTimeout: 'deny', remember: 'session' } };
    return undefined;
  };
  /** Only a rule that says ask or deny tightens: not the default, not an untrusted workspace's lowered allow (it protects nothing). */
  const tightens = (judged: PolicyDecision | undefined): judged is PolicyDecision & { rule: RuleRef } =>
    judged !== undefined && judged.rule !== null && judged.decision !== 'allow' && !judged.lowered;
  for (const { file, tool, verb } of named) {
    const judged = judge.judgeFile(tool, file);
    if (!tightens(judged)) continue;
    const denied = tighten(judged, `${file} is a path ${ruleName(judged.rule)} ${judged.decision === 'deny' ? 'denies' : 'asks about'}${tool === WRITE_TOOL ? ' writing' : ''}${judged.reason !== undefined ? ` (${judged.reason})` : ''}, and the command ${verb} it`);
    if (denied !== undefined) return denied;
  }
  // A path the judge cannot place may be one the rules protect.
  const guard = files.unknown.length > 0 && decision.decision === 'allow' ? unknownPathGuard(judge.rules()) : undefined;
  if (asked === undefined && guard !== undefined) {
    asked = { ...decision, decision: 'ask', rule: guard, lowered: false, reason: `${files.unknown[0]!}, and ${ruleName(guard)} guards some paths`, ask: { onTimeout: 'deny', remember: 'session' } };
  }
  for (const script of projectScripts(commands, judge.workspace)) {
    const judged = judge.judgeCommand(script.command);
    // What only the default would ask is left to the rule that allowed the program (docs).
    if (!tightens(judged)) continue;
    const denied = tighten(judged, `it runs ${script.origin}: ${script.command.length > 120 ? `${script.command.slice(0, 117)}...` : script.command} (${judged.reason ?? `${ruleName(judged.rule)} ${judged.decision === 'deny' ? 'denies' : 'asks about'} it`})`);
    if (denied !== undefined) return denied;
  }
  return asked ?? decision;
}

function realFolder(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return folder;
  }
}

/**
 * The first rule with `paths` that denies or asks the read or write tool and that no rule before
 * it covers (ruleCoverage.ts, as lint's `shadowed`): the rule a path the judge cannot place may
 * fall under.
 */
function unknownPathGuard(rules: readonly CompiledRule[]): RuleRef | undefined {
  for (const [i, rule] of rules.entries()) {
    const forFiles = rule.tools === undefined || rule.tools.test(READ_TOOL.id) || rule.tools.test(WRITE_TOOL.id);
    if (forFiles && rule.paths !== undefined && rule.decision !== 'allow' && !rules.slice(0, i).some((e) => covers(e, rule))) return rule.ref;
  }
  return undefined;
}
