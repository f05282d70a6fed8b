// What each agent and subagent of an agents file is offered (`agentpolicy check`, and the editor's
// Problems for `.agents.jsonc`): the tools its model is offered under a policy and those hidden
// from it (denied outright, src/policy/hiddenTools.ts), as one `info` diagnostic `tools-offered` at its name. Builtin and subagent tools are known
// exactly (the runtime's own definitions); client tools by their id only, and MCP servers' tools
// not until the server lists them: for those it says what the policy hides of them already.
import * as path from 'node:path';
import { findNodeAtLocation } from 'jsonc-parser';
import type { AgentsFile } from '../../agents/agentsFile.js';
import type { LayerName, RuleRef } from '../../policy/rules/compile.js';
import type { Diagnostic } from '../../policy/file/diagnostics.js';
import { describeDenial, outrightDenial, unlistedToolsHidden, type HiddenToolOptions, type UnlistedTools } from '../../policy/hiddenTools.js';
import { permissionModeDecision } from '../../policy/checking/lint.js';
import type { ParsedJsonc } from '../../policy/file/parse.js';
import type { Policy } from '../../policy/policy.js';
import type { RootAgentDefinition, SubagentDefinition } from '../tree/sessionOptions.js';
import { definitionOf } from '../tree/sessionDefinition.js';
import type { ToolSource } from '../tools/tools.js';
import { loadWorkspaceAgents, toolRef } from './workspaceAgents.js';

/** What `--json` adds to a `tools-offered` diagnostic. */
export interface ToolsOffered {
  /** The agent, or `agent/subagent`. */
  agent: string;
  /** Stable ids of the tools its model is offered (client tools the program registers, as named). */
  offered: string[];
  hidden: Array<{ tool: string; rule: RuleRef | null; defaultFrom?: LayerName | null }>;
  /** MCP servers (`mcp.<server>`, or `mcp.*`): their tools are listed when the server starts. */
  servers: Array<{ tools: string; allHidden?: { rule: RuleRef | null; defaultFrom?: LayerName | null }; hiddenBy: RuleRef[] }>;
}

/**
 * One `tools-offered` diagnostic per agent and subagent of a valid agents file, with its JSON data.
 * `judgedBy` ends each message: which policies it was judged by. `text`: the file's text as an
 * editor holds it (default: read from `agentsPath`).
 */
export function toolsOfferedDiagnostics(
  parsed: ParsedJsonc<AgentsFile>, file: string, agentsPath: string, policy: Policy, judgedBy: string, text?: string,
): Array<{ diagnostic: Diagnostic; data: ToolsOffered }> {
  const decls = parsed.value?.agents;
  if (decls === undefined) return [];
  // MCP servers stand in by id: nothing is started (their tools are not known until then).
  const sourceIds = new Set(decls.flatMap((d) => [d, ...(d.subagents ?? [])]).flatMap((d) => d.tools ?? []).map(toolRef).flatMap((r) => (r.kind === 'mcp' ? [r.sourceId] : [])));
  const toolSources: ToolSource[] = [...sourceIds].map((id) => ({ id, name: id.slice(4), connect: () => { throw new Error('not started by agentpolicy check'); } }));
  const { agents } = loadWorkspaceAgents({ workspaceFolder: path.dirname(agentsPath), agentsFile: agentsPath, toolSources, ...(text !== undefined ? { agentsText: text } : {}) });
  const out: Array<{ diagnostic: Diagnostic; data: ToolsOffered }> = [];
  decls.forEach((decl, i) => {
    const root = agents[i];
    if (root === undefined) return;
    const options: HiddenToolOptions = { fallbackDefault: permissionModeDecision(decl.permissionMode) };
    const report = (def: RootAgentDefinition | SubagentDefinition, refs: readonly string[] | undefined, shown: string, at: (string | number)[]): void => {
      const data = offeredTo(policy, def, root, refs ?? [], shown, options);
      const node = parsed.root ? findNodeAtLocation(parsed.root, at) : undefined;
      out.push({
        diagnostic: { file, severity: 'info', code: 'tools-offered', offset: node?.offset ?? 0, length: node?.length ?? 1, message: describeOffered(data, judgedBy) },
        data,
      });
    };
    report(root, decl.tools, decl.name, ['agents', i, 'name']);
    (decl.subagents ?? []).forEach((s, j) => {
      const sub = root.subagents[j];
      if (sub) report(sub, s.tools, `${decl.name}/${s.name}`, ['agents', i, 'subagents', j, 'name']);
    });
  });
  return out;
}

function offeredTo(policy: Policy, def: RootAgentDefinition | SubagentDefinition, root: RootAgentDefinition, refs: readonly string[], shown: string, options: HiddenToolOptions): ToolsOffered {
  const data: ToolsOffered = { agent: shown, offered: [], hidden: [], servers: [] };
  const hide = (tool: string, d: { rule: RuleRef | null; defaultFrom?: LayerName | null }): void => {
    data.hidden.push({ tool, rule: d.rule, ...(d.rule === null ? { defaultFrom: d.defaultFrom ?? null } : {}) });
  };
  // The session's own tools, as the runtime builds them (builtins, subagent tools).
  for (const tool of definitionOf(def, root).tools.values()) {
    const denial = outrightDenial(policy, tool, def.name, options);
    if (denial) hide(tool.id, denial);
    else data.offered.push(tool.id);
  }
  for (const ref of refs) {
    const named = toolRef(ref);
    const unlisted: UnlistedTools | undefined = named.kind === 'client' ? { id: named.id, kind: 'client' }
      : named.kind === 'mcp' ? { sourceId: named.sourceId } : named.kind === 'mcp-all' ? { sourceId: 'mcp' } : undefined;
    if (unlisted === undefined) continue;
    const verdict = unlistedToolsHidden(policy, unlisted, def.name, options);
    if ('id' in unlisted) {
      if (verdict.all) hide(unlisted.id, verdict.all);
      else data.offered.push(unlisted.id);
      continue;
    }
    data.servers.push({
      tools: ref.endsWith('.*') ? ref : `${ref}.*`,
      ...(verdict.all ? { allHidden: { rule: verdict.all.rule, ...(verdict.all.rule === null ? { defaultFrom: verdict.all.defaultFrom ?? null } : {}) } } : {}),
      hiddenBy: verdict.some,
    });
  }
  return data;
}

/** `agent "main" is offered …; hidden from its model: …; mcp.github.*: … (under …)`. */
function describeOffered(data: ToolsOffered, judgedBy: string): string {
  const parts = [`agent "${data.agent}" is offered ${data.offered.length > 0 ? data.offered.join(', ') : data.servers.length > 0 ? 'only the tools of its MCP servers' : 'no tool'}`];
  if (data.hidden.length > 0) parts.push(`hidden from its model (every call denied): ${data.hidden.map((h) => `${h.tool} by ${describeDenial(h)}`).join('; ')}`);
  for (const s of data.servers) {
    const what = s.allHidden ? `all hidden by ${describeDenial(s.allHidden)}`
      : s.hiddenBy.length > 0 ? `those matched by ${s.hiddenBy.map((rule) => describeDenial({ rule })).join(', ')} hidden` : 'none hidden by this policy';
    parts.push(`mcp tools ${s.tools}: listed when the server starts; ${what}`);
  }
  return `${parts.join('; ')} (under ${judgedBy})`;
}
