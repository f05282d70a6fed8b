// The model loop of one session: the conversation so far, the tool sources listed before a
// model call, then model call, tool calls, model call… until the model answers without a call.
// Imports signIn.ts, turn.ts, audit.ts, offeredTools.ts, serverSandbox.ts, the policy's managed controls and hidden tools, and types only (tree, session definition, tool calls, model, tools).
import { describeDenial } from '../policy/hiddenTools.js';
import { mcpServerRefusal, NO_CONTROLS } from '../policy/rules/managedControls.js';
import { auditHidden } from './audit/auditSummary.js';
import { offeredTools } from './calls/offeredTools.js';
import type { Message } from './model/model.js';
import type { SessionDefinition } from './tree/sessionDefinition.js';
import { serverSandboxHost } from './calls/serverSandbox.js';
import { ensureSignedIn } from './tree/signIn.js';
import type { ToolCalls } from './calls/toolCall.js';
import type { Tree, TreeSession } from './tree/tree.js';
import { endTurn, type TurnCore } from './tree/turn.js';
import type { RuntimeTool } from './tools/tools.js';

export class ModelLoop {
  private readonly messages: Message[] = [];
  /** Tool sources listed so far (by source id), so a source is listed once per session. */
  private readonly listedSources = new Set<string>();
  /** The listed sources' ToolConnection.toolChanges when they were listed. */
  private readonly listedAt = new Map<string, number>();
  /** Sources that failed to list in the current turn: tried again at the next turn, not at every step. */
  private failedSources = new Set<string>();

  constructor(
    private readonly tree: Tree,
    private readonly session: TreeSession,
    private readonly definition: SessionDefinition,
    private readonly toolCalls: ToolCalls,
  ) {}

  /** Runs `turn` from its prompt to its end; never throws (a failure fails the turn). */
  async run(turn: TurnCore, prompt: string): Promise<void> {
    this.messages.push({ role: 'user', content: prompt });
    this.failedSources = new Set();
    try {
      for (let step = 0; step < this.definition.maxSteps; step++) {
        if (turn.abort.signal.aborted) return;
        this.forgetChangedSources();
        if (this.listedSources.size + this.failedSources.size < this.definition.toolSources.length) await this.listToolSources(turn);
        if (turn.abort.signal.aborted) return;
        const tools = this.offeredTools(turn).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputJsonSchema }));
        const response = await this.tree.track(() =>
          this.definition.model.respond({
            agent: this.session.agentName, sessionId: this.session.id, instructions: this.definition.instructions,
            messages: this.messages, tools, signal: turn.abort.signal,
          }),
        );
        if (turn.abort.signal.aborted) return;
        this.messages.push({ role: 'assistant', content: response.text, toolCalls: response.toolCalls });
        if (response.text) this.tree.emit({ type: 'message', sessionId: this.session.id, turnId: turn.id, agent: this.session.agentName, text: response.text });
        if (response.toolCalls.length === 0) {
          endTurn(this.tree, this.session, turn, 'completed', response.text);
          return;
        }
        // The calls' audit lines are written together once all are decided, before any tool runs (tree.ts).
        const batch = this.tree.batchAudit(() => response.toolCalls.map((call) => this.toolCalls.call(turn, call)));
        const results = await Promise.all(batch.result);
        if (batch.written) await batch.written;
        if (turn.abort.signal.aborted) return;
        response.toolCalls.forEach((call, i) => this.messages.push({ role: 'tool', callId: call.id, name: call.name, content: results[i]! }));
      }
      endTurn(this.tree, this.session, turn, 'failed', `the agent made ${this.definition.maxSteps} model calls without finishing the turn`);
    } catch (error) {
      endTurn(this.tree, this.session, turn, 'failed', turn.abort.signal.aborted ? 'cancelled' : error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * Connects the session's tool sources that are not listed yet and adds their tools. A source
   * that needs a sign-in opens one first; one that cannot be listed is left out with a warning,
   * so one broken server does not stop the agent.
   */
  private async listToolSources(turn: TurnCore): Promise<void> {
    const pending = this.definition.toolSources.filter((s) => !this.listedSources.has(s.id) && !this.failedSources.has(s.id));
    await Promise.all(pending.map(async (source) => {
      // The managed controls say which MCP servers may start at all: a refused one is never connected (nor asked about).
      const refused = this.serverRefusal(source.id);
      if (refused !== undefined) {
        this.listedSources.add(source.id);
        this.warn(`the tools of ${source.name} are not available in this session: ${refused}`);
        return;
      }
      let connection = this.tree.connections.get(source.id);
      if (!connection) {
        const root = this.tree.rootOf(this.session);
        // A server's process runs sandboxed when the policy's sandboxServers names it (serverSandbox.ts).
        connection = source.connect({
          sessionId: root.id, workspaceFolder: this.tree.workspaceFolder,
          sandbox: serverSandboxHost(this.tree, root, { session: this.session, turn }),
          audit: (line) => this.tree.audit({ session: root.id, ...line }),
        });
        this.tree.connections.set(source.id, connection);
      }
      if (connection.signIn) {
        const signedIn = await ensureSignedIn(this.tree, this.session, turn, connection.signIn);
        if (signedIn !== true) {
          this.listedSources.add(source.id);
          this.warn(`the tools of ${source.name} are not available in this session: ${signedIn}`);
          return;
        }
      }
      let tools: RuntimeTool[];
      // Read before listing: a change arriving meanwhile lists again.
      const changesBefore = connection.toolChanges;
      try {
        try {
          tools = await this.tree.track(() => connection.tools(turn.abort.signal));
        } catch (error) {
          // The server refused the credentials it was given (a 401): ask the person to sign in again, then list once more.
          if (!(error instanceof Error && error.name === 'McpSignInRequired' && connection.signIn)) throw error;
          const signedIn = await ensureSignedIn(this.tree, this.session, turn, connection.signIn);
          if (signedIn !== true) throw new Error(signedIn);
          tools = await this.tree.track(() => connection.tools(turn.abort.signal));
        }
      } catch (error) {
        this.failedSources.add(source.id);
        this.warn(`the tools of ${source.name} could not be listed: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      this.listedSources.add(source.id);
      if (connection.toolChanges !== undefined) this.listedAt.set(source.id, changesBefore ?? connection.toolChanges);
      for (const t of tools) {
        if (!t.id.startsWith(`${source.id}.`)) {
          this.warn(`${source.name} offered a tool with id ${t.id}, outside ${source.id}.*: left out`);
          continue;
        }
        const clash = this.definition.tools.get(t.name);
        if (clash) {
          this.warn(`${source.name} offered a tool named "${t.name}", already the name of ${clash.id}: left out`);
          continue;
        }
        this.definition.tools.set(t.name, t);
      }
    }));
  }

  /** Drops the tools of listed sources whose tools changed since (ToolConnection.toolChanges): they are listed again. */
  private forgetChangedSources(): void {
    for (const source of this.definition.toolSources) {
      const listedAt = this.listedAt.get(source.id);
      if (listedAt === undefined || !this.listedSources.has(source.id)) continue;
      const changes = this.tree.connections.get(source.id)?.toolChanges;
      if (changes === undefined || changes === listedAt) continue;
      for (const [name, t] of this.definition.tools) if (t.id.startsWith(`${source.id}.`)) this.definition.tools.delete(name);
      this.listedSources.delete(source.id);
    }
  }

  /** Drops the tools of listed sources (their connection is closed); the next model call lists them again. */
  forgetSourceTools(): void {
    for (const [name, t] of this.definition.tools) if (this.definition.toolSources.some((s) => t.id.startsWith(`${s.id}.`))) this.definition.tools.delete(name);
    this.listedSources.clear();
  }

  /** Why the managed controls in force now let the MCP server of this source id (`mcp.<server>`) not start; undefined for other sources. */
  private serverRefusal(sourceId: string): string | undefined {
    if (!sourceId.startsWith('mcp.')) return undefined;
    const policy = this.tree.currentPolicy();
    return mcpServerRefusal(sourceId.slice('mcp.'.length), policy?.controls ?? NO_CONTROLS);
  }

  /**
   * The session's tools less those the policy in force denies outright for its agent (hidden
   * tools), worked out for every request; a change in what is hidden is reported as an event.
   */
  private offeredTools(turn: TurnCore): RuntimeTool[] {
    const { offered, hidden } = offeredTools(this.tree, this.session.agentName, this.definition.tools.values());
    const shown = hidden.map((h) => ({ toolId: h.tool.id, name: h.tool.name, by: describeDenial(h.denial) }));
    const key = JSON.stringify(shown);
    if (key !== this.hiddenKey) {
      this.hiddenKey = key;
      this.tree.emit({ type: 'tools-hidden', sessionId: this.session.id, agent: this.session.agentName, hidden: shown });
      this.tree.audit({
        event: 'tools-hidden', session: this.session.id, turn: turn.id, agent: this.session.agentName,
        ...auditHidden(hidden.map((h) => ({ tool: h.tool.id, rule: h.denial.rule, ...(h.denial.rule === null ? { defaultFrom: h.denial.defaultFrom ?? null } : {}) }))),
      });
    }
    return offered;
  }

  /** What was last reported hidden (nothing at first: an event only when some tool is hidden, or no longer is). */
  private hiddenKey = '[]';

  private warn(message: string): void {
    this.tree.warn(this.session, message);
  }
}
