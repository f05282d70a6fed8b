// The options of an MCP tool source: where the server runs, its inputs, timeouts, restarts after
// crashes, and the person's consent to start it. Its own module because both the source and each
// of its connections read them.
import type { McpInputDeclaration, McpInputs, McpServerConfig } from './mcpConfig.js';
import type { McpToolPins } from './mcpToolPins.js';

export interface McpSourceOptions {
  /** Where `${workspaceFolder}` points and where a stdio server runs by default; else the session's folder. */
  workspaceFolder?: string;
  /** Values of `${input:id}`. */
  inputs?: McpInputs;
  /** The file's `inputs`, for descriptions and the password flag. */
  inputDeclarations?: readonly McpInputDeclaration[];
  clientInfo?: { name: string; version: string };
  log?: (line: string) => void;
  /** A tool call fails when the server sends nothing (result or progress) for this long; paused while a person answers an elicitation. Default 5 min. */
  callTimeoutMs?: number;
  /** Starting and initializing the server. Default 60 s. */
  startTimeoutMs?: number;
  /** Restarts after crashes allowed within `windowMs`. Default 3 in 60 s. */
  restarts?: { max: number; windowMs: number };
  /**
   * Asked before the server's process (stdio) or connection (HTTP, SSE) is first started, with
   * the server's config as written (variables unresolved). `true` is remembered by this source
   * for that config (`serverFingerprint`), so restarts after a crash do not ask again, while a
   * changed config does; `false` fails the listing or call, and the next start asks again.
   */
  confirmStart?: (server: McpServerConfig) => Promise<boolean>;
  /**
   * The workspace's pinned tool definitions (docs/mcp.md, "MCP tools pinned"): the server's first
   * listing pins its tools; a definition that differs later makes its calls ask until accepted.
   * Without it nothing is pinned.
   */
  pins?: McpToolPins;
}
