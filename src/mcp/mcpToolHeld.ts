// One listing of a server's tools against the workspace's pins (mcpToolPins.ts): the tools whose
// definition is not the one a person approved are held (their calls ask, mcpToolMapping.ts), and
// what was pinned or found changed is logged and audited.
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { SourceAuditLine } from '../runtime/tools/tools.js';
import { toolDefinition, type McpToolDefinition } from './mcpToolDefinition.js';
import { MCP_TOOL_NAME, type HeldDefinition } from './mcpToolMapping.js';
import type { McpToolPins } from './mcpToolPins.js';

/** The tools of one listing held for a changed definition, by tool name. */
export type HeldTools = ReadonlyMap<string, HeldDefinition>;

export function heldDefinitions(
  pins: McpToolPins, server: string, listed: readonly McpTool[],
  report: { log(line: string): void; audit(line: SourceAuditLine): void },
): HeldTools {
  // The tools that become runtime tools (toRuntimeTools): valid names, the first of each.
  const definitions: McpToolDefinition[] = [];
  const seen = new Set<string>();
  for (const tool of listed) {
    if (typeof tool.name !== 'string' || !MCP_TOOL_NAME.test(tool.name) || seen.has(tool.name)) continue;
    seen.add(tool.name);
    definitions.push(toolDefinition(tool));
  }
  const review = pins.review(server, definitions);
  if (review.pinned.length > 0) report.log(`pinned the definitions of ${review.pinned.length} tool(s): ${review.pinned.map((p) => p.tool).join(', ')}`);
  for (const p of review.pinned) report.audit({ event: 'mcp-tool-pinned', tool: `mcp.${server}.${p.tool}`, definitionDigest: p.digest });
  const held = new Map<string, HeldDefinition>();
  for (const change of review.changes) {
    report.log(`${change.tool}: its definition is not the one approved (${change.summary}); its calls ask until a person accepts the change`);
    report.audit({
      event: 'mcp-tool-changed', tool: change.toolId, definitionDigest: change.digest,
      ...(change.pinnedDigest !== undefined ? { pinnedDigest: change.pinnedDigest } : {}), summary: change.summary,
    });
    held.set(change.tool, {
      ...(change.before !== undefined ? { before: change.before } : {}),
      why: change.before === undefined
        ? 'a new tool of the server, not among the tools approved: accept it to let the policy decide its calls'
        : `its definition changed since it was approved (${change.summary}): accept the change to let the policy decide its calls`,
      stillHeld: () => !pins.isPinned(server, change.tool, change.digest),
    });
  }
  return held;
}
