// Agents declared in a workspace's `.agents.jsonc`, turned into runtime Agents. With no file,
// one default agent with the builtin tools exists, playing the embedded default scenario.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAgentsFile, type AgentDeclaration } from '../../agents/agentsFile.js';
import type { Diagnostic } from '../../policy/file/diagnostics.js';
import type { ParsedJsonc } from '../../policy/file/parse.js';
import { Agent, Builtins, Subagent } from './agent.js';
import { builtinFileTools } from '../tools/builtins.js';
import { ModelError, type Model } from '../model/model.js';
import { ScriptedModel } from '../model/scripted.js';
import type { RuntimeTool, ToolSource } from '../tools/tools.js';

export const AGENTS_FILE = '.agents.jsonc';
export const DEFAULT_AGENT_NAME = 'main';
/** The model of an agent that names none, with no other default configured: the embedded default scenario. */
export const DEFAULT_MODEL = 'scripted:default';

/** The scenario the default agent plays with no model configured: look around, then ask to write. */
export const DEFAULT_SCENARIO = {
  agents: {
    [DEFAULT_AGENT_NAME]: [
      { call: 'list_files', input: { path: '.' }, as: 'files' },
      { call: 'read_file', input: { path: 'README.md' }, as: 'readme' },
      { call: 'write_file', input: { path: 'AGENT_NOTES.md', content: 'Notes from the default agent: the workspace was listed and README.md read.\n' }, as: 'notes' },
      { say: 'I listed the workspace, read README.md and wrote AGENT_NOTES.md.' },
    ],
  },
};

export interface ModelFactoryContext {
  workspaceFolder: string;
  /** The folder of the agents file, for relative scenario paths. */
  baseFolder: string;
}

/** Makes a model for a provider reference; providers other than the scripted model plug in here. */
export type ModelFactory = (reference: string, context: ModelFactoryContext) => Model;

export const scriptedModelFactory: ModelFactory = (reference, context) => {
  if (reference === 'scripted' || reference === 'scripted:' || reference === DEFAULT_MODEL) {
    return new ScriptedModel(DEFAULT_SCENARIO as never, { id: DEFAULT_MODEL });
  }
  if (reference.startsWith('scripted:')) {
    return ScriptedModel.fromFile(path.resolve(context.baseFolder, reference.slice('scripted:'.length)));
  }
  const provider = reference.split(':')[0];
  throw new ModelError(`model "${reference}": the ${provider} provider is not available in this build; use scripted:<scenario file>`);
};

export interface WorkspaceAgents {
  file: string | undefined;
  parsed: ParsedJsonc<unknown> | undefined;
  agents: Agent[];
  diagnostics: Diagnostic[];
}

export interface LoadAgentsOptions {
  workspaceFolder: string;
  /** Default: `<workspace>/.agents.jsonc` when it exists. */
  agentsFile?: string;
  /** The agents file's text as an editor holds it (not saved yet); default: read from the file. */
  agentsText?: string;
  /** Client tools a declaration may name as `client.<name>`. */
  clientTools?: readonly RuntimeTool[];
  /** The tool sources a declaration may name (the workspace's MCP servers, ids `mcp.<server>`). */
  toolSources?: readonly ToolSource[];
  models?: ModelFactory;
  /** The model reference of an agent that names none, and of the default agent (default `scripted:default`). */
  defaultModel?: string;
}

/** Loads the workspace's agents. Problems are diagnostics; an agent whose model cannot be made fails at its first turn, saying why. */
export function loadWorkspaceAgents(options: LoadAgentsOptions): WorkspaceAgents {
  const file = options.agentsFile ?? path.join(options.workspaceFolder, AGENTS_FILE);
  const models = options.models ?? scriptedModelFactory;
  const defaultModel = options.defaultModel || DEFAULT_MODEL;
  if (options.agentsText === undefined && !fs.existsSync(file)) {
    if (options.agentsFile !== undefined) throw new Error(`${file}: no such file`);
    return { file: undefined, parsed: undefined, agents: [defaultAgent(options.workspaceFolder, models, defaultModel)], diagnostics: [] };
  }
  const parsed = parseAgentsFile(options.agentsText ?? fs.readFileSync(file, 'utf8'), file);
  const diagnostics = [...parsed.diagnostics];
  const agents: Agent[] = [];
  const context = { workspaceFolder: options.workspaceFolder, baseFolder: path.dirname(file) };
  const fileTools = new Map(builtinFileTools().map((t) => [t.id, t]));
  for (const decl of parsed.value?.agents ?? []) {
    const resolveTools = (refs: readonly string[] | undefined, owner: string): ResolvedTools => {
      const tools: RuntimeTool[] = [];
      const sources: ToolSource[] = [];
      const builtins = { files: false, commands: false, network: false };
      const addSource = (s: ToolSource): void => {
        if (!sources.includes(s)) sources.push(s);
      };
      for (const ref of refs ?? []) {
        const named = toolRef(ref);
        if (named.kind === 'mcp-all') (options.toolSources ?? []).forEach(addSource);
        else if (named.kind === 'mcp') {
          const id = named.sourceId;
          const source = options.toolSources?.find((s) => s.id === id);
          if (source) addSource(source);
          else {
            const known = (options.toolSources ?? []).map((s) => s.id);
            diagnostics.push(problem(file, `${owner}: no MCP server "${id.slice(4)}" is declared in .vscode/mcp.json${known.length ? ` (servers: ${known.map((k) => k.slice(4)).join(', ')})` : ''}; name a server as mcp.<server>`));
          }
        } else if (named.kind === 'builtins') Object.assign(builtins, named.families);
        else if (named.kind === 'file-tool') tools.push(fileTools.get(named.id)!);
        else if (named.kind === 'client') {
          const t = options.clientTools?.find((c) => c.id === ref);
          if (t) tools.push(t);
          else diagnostics.push(problem(file, `${owner}: no client tool ${ref} is registered`));
        } else {
          diagnostics.push(problem(file, `${owner}: unknown tool reference "${ref}" (use builtin.*, a builtin id such as builtin.read_file, mcp.<server> or client.<name>)`));
        }
      }
      return { tools, sources, builtins };
    };
    const model = lazyModel(decl.model ?? defaultModel, models, context);
    const own = resolveTools(decl.tools, decl.name);
    const subagents = (decl.subagents ?? []).map((s) => {
      const t = resolveTools(s.tools, `${decl.name}/${s.name}`);
      return new Subagent({
        name: s.name,
        description: s.description ?? '',
        instructions: s.instructions ?? '',
        tools: t.tools,
        toolSources: t.sources,
        builtins: new Builtins({ subagents: s.builtins?.subagents ?? false, ...t.builtins }),
        ...(s.model ? { model: lazyModel(s.model, models, context) } : {}),
      });
    });
    agents.push(agentOf(decl, model, own, subagents));
  }
  return { file, parsed, agents, diagnostics };
}

/** What one entry of an agent's `tools` names. */
export type ToolRef =
  | { kind: 'mcp-all' }
  /** `mcp.<server>` or `mcp.<server>.*`: every tool of that server (the policy narrows further). */
  | { kind: 'mcp'; sourceId: string }
  | { kind: 'builtins'; families: Partial<Record<'files' | 'commands' | 'network', true>> }
  | { kind: 'file-tool'; id: string }
  | { kind: 'client'; id: string }
  | { kind: 'unknown' };

let fileToolIds: ReadonlySet<string> | undefined;

/** Reads one entry of an agent's `tools` (`agentpolicy check` lists what each agent is offered from these). */
export function toolRef(ref: string): ToolRef {
  if (ref === 'mcp.*') return { kind: 'mcp-all' };
  if (ref.startsWith('mcp.')) return { kind: 'mcp', sourceId: ref.endsWith('.*') ? ref.slice(0, -2) : ref };
  if (ref === 'builtin.*') return { kind: 'builtins', families: { files: true, commands: true, network: true } };
  if (ref === 'builtin.run_command') return { kind: 'builtins', families: { commands: true } };
  if (ref === 'builtin.fetch') return { kind: 'builtins', families: { network: true } };
  fileToolIds ??= new Set(builtinFileTools().map((t) => t.id));
  if (fileToolIds.has(ref)) return { kind: 'file-tool', id: ref };
  if (ref.startsWith('client.')) return { kind: 'client', id: ref };
  return { kind: 'unknown' };
}

interface ResolvedTools {
  tools: RuntimeTool[];
  sources: ToolSource[];
  builtins: { files: boolean; commands: boolean; network: boolean };
}

function agentOf(decl: AgentDeclaration, model: Model, own: ResolvedTools, subagents: Subagent[]): Agent {
  return new Agent({
    name: decl.name,
    model,
    instructions: decl.instructions ?? '',
    tools: own.tools,
    toolSources: own.sources,
    subagents,
    ...(decl.permissionMode ? { permissionMode: decl.permissionMode } : {}),
    builtins: new Builtins({ subagents: decl.builtins?.subagents ?? true, ...own.builtins }),
  });
}

function defaultAgent(workspaceFolder: string, models: ModelFactory, model: string): Agent {
  return new Agent({
    name: DEFAULT_AGENT_NAME,
    model: lazyModel(model, models, { workspaceFolder, baseFolder: workspaceFolder }),
    instructions: 'You help with this workspace using the builtin tools.',
    builtins: new Builtins({ subagents: false, files: true, commands: true }),
  });
}

/** A model made at first use, so a bad reference fails the turn with its message rather than the load. */
function lazyModel(reference: string, factory: ModelFactory, context: ModelFactoryContext): Model {
  let made: Model | undefined;
  return {
    id: reference,
    respond(request) {
      made ??= factory(reference, context);
      return made.respond(request);
    },
  };
}

function problem(file: string, message: string): Diagnostic {
  return { file, severity: 'error', code: 'schema', message, offset: 0, length: 1 };
}
