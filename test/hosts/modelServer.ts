// A scripted model on 127.0.0.1 for the real agent CLIs: asked with a shell tool on offer, it calls
// that tool once with the test's command; asked again with the tool's result in the request, it
// answers a short text. Each API (Anthropic Messages, OpenAI Responses, Gemini, chat completions)
// is a dialect: how to read the tools and the tool result from a request, and how to stream the
// two answers. Every request is recorded, so a test can read what the host sent back to the model.
import type * as http from 'node:http';
import { closeLoopbackServer, loopbackPort, readJsonBody, startLoopbackServer } from '../loopbackHttp';

/** What the model does: call the shell with `command` (`calls` times in a row, default once), then say `finalText`. */
export interface ModelScript {
  command: string;
  finalText?: string;
  calls?: number;
}

/** A tool the host offered, as the dialect read it from the request. */
export interface OfferedTool {
  name: string;
  /** The tool's JSON schema for its arguments (Gemini's upper-case types are read the same way). */
  parameters: JsonSchema;
}

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

/** The call the model makes: a tool name and its arguments. */
export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface ModelDialect {
  /** Which requests are model turns (a host may also ask for other things, answered 404). */
  isModelRequest(method: string, url: string): boolean;
  tools(body: Record<string, unknown>): OfferedTool[];
  /** The text of the last tool result in the request, or undefined when there is none yet. */
  toolResult(body: Record<string, unknown>): string | undefined;
  /** Streams one tool call as the API's server-sent events. */
  streamToolCall(res: http.ServerResponse, call: ToolCall, request: ModelRequest): void;
  /** Streams a final text as the API's server-sent events. */
  streamText(res: http.ServerResponse, text: string, request: ModelRequest): void;
}

export interface ModelRequest {
  method: string;
  url: string;
  body: Record<string, unknown>;
}

export interface RecordedModelRequest extends ModelRequest {
  headers: http.IncomingHttpHeaders;
  /** What the server answered: the call it made, the final text, or nothing (not a model turn). */
  answered: { toolCall: ToolCall } | { text: string } | 'not-a-model-turn';
}

/** Shell tools by host, most specific first, and the argument that carries the command line. */
const SHELL_TOOLS: readonly { name: string; commandArg: string }[] = [
  { name: 'Bash', commandArg: 'command' }, // Claude Code
  { name: 'exec_command', commandArg: 'cmd' }, // Codex
  { name: 'shell_command', commandArg: 'command' }, // Codex, other model families
  { name: 'run_shell_command', commandArg: 'command' }, // Gemini CLI
  { name: 'bash', commandArg: 'command' }, // Copilot CLI
];

export class ScriptedModelServer {
  readonly requests: RecordedModelRequest[] = [];
  private calls = 0;
  private server!: http.Server;

  private constructor(
    private readonly dialect: ModelDialect,
    private readonly script: ModelScript,
  ) {}

  static async start(dialect: ModelDialect, script: ModelScript): Promise<ScriptedModelServer> {
    const self = new ScriptedModelServer(dialect, script);
    self.server = await startLoopbackServer((req, res) => void self.handle(req, res));
    return self;
  }

  /** `http://127.0.0.1:PORT`, without a path: each host's base URL is built from it. */
  get origin(): string {
    return `http://127.0.0.1:${loopbackPort(this.server)}`;
  }

  /** The model turns, in order (requests that were not model turns left out). */
  get turns(): RecordedModelRequest[] {
    return this.requests.filter((r) => r.answered !== 'not-a-model-turn');
  }

  /** The tool results the host sent back, in order: what the model was told about its call. */
  get toolResults(): string[] {
    return this.turns.map((r) => this.dialect.toolResult(r.body)).filter((t): t is string => t !== undefined);
  }

  close(): Promise<void> {
    return closeLoopbackServer(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readJsonBody(req);
    const method = req.method ?? '';
    const url = req.url ?? '';
    const recorded: RecordedModelRequest = { method, url, headers: req.headers, body: body ?? {}, answered: 'not-a-model-turn' };
    this.requests.push(recorded);
    if (body === undefined || !this.dialect.isModelRequest(method, url)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not served by the scripted model"}}');
      return;
    }
    // A new turn, or the result of a call while the script wants more of them: call the shell (again).
    const more = this.dialect.toolResult(body) === undefined || this.calls < (this.script.calls ?? 1);
    const call = more ? this.callFor(this.dialect.tools(body)) : undefined;
    if (call) {
      recorded.answered = { toolCall: call };
      this.dialect.streamToolCall(res, call, recorded);
    } else {
      const final = this.script.finalText ?? 'Done.';
      recorded.answered = { text: final };
      this.dialect.streamText(res, final, recorded);
    }
  }

  /** The shell call for the offered tools, or undefined when no shell tool is offered (a title or summary request). */
  private callFor(tools: OfferedTool[]): ToolCall | undefined {
    for (const shell of SHELL_TOOLS) {
      const tool = tools.find((t) => t.name === shell.name);
      if (!tool) continue;
      const args: Record<string, unknown> = { [shell.commandArg]: this.script.command };
      // Fill what else the schema requires (Copilot's `description`) with something plausible.
      for (const key of tool.parameters.required ?? []) {
        if (key in args) continue;
        const type = tool.parameters.properties?.[key]?.type?.toLowerCase();
        args[key] = type === 'boolean' ? false : type === 'number' || type === 'integer' ? 0 : 'Run the command the user asked for';
      }
      this.calls++;
      return { id: `call${this.calls}x${Date.now().toString(36)}`, name: tool.name, args };
    }
    return undefined;
  }
}

/** Starts a server-sent event stream. */
export function startEventStream(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

/** One server-sent event: `event:` line when named, then the JSON data. */
export function writeEvent(res: http.ServerResponse, data: unknown, event?: string): void {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

/** The text of a tool result however the API nests it: a string, text parts, or an object. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(textOf).join('');
  if (content && typeof content === 'object') {
    const o = content as Record<string, unknown>;
    if (typeof o.text === 'string') return o.text;
    return JSON.stringify(content);
  }
  return '';
}
