// MCP tools pinned (docs/teams.md, "MCP tools pinned"): the first time a server's tools are listed
// after a person allowed it to start, each tool's definition is kept by digest, per workspace, in
// a file of the user's state folder that the extension and `agentpolicy` both read. A server that
// later offers a different definition (new text, a changed schema, a flipped hint, a new tool)
// gets its calls of that tool asked until a person accepts the change, which pins the new digest.
// Nothing the server sends accepts anything: only `accept` (a person's answer) and `reset` do.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultStateDir } from '../hooks/state/stateDir.js';
import { changeSummary, definitionDigest, type McpToolDefinition } from './mcpToolDefinition.js';

/** One tool's pin: the definition a person approved, and when. */
export interface PinnedTool {
  digest: string;
  definition: McpToolDefinition;
  /** ISO 8601: when it was pinned (first listing, or a person's acceptance). */
  pinnedAt: string;
  /** Set when a person accepted this definition as a change. */
  accepted?: true;
}

interface ServerPins {
  tools: Record<string, PinnedTool>;
  /** Tools reset one by one: their next definition is pinned as first seen. */
  unpinned?: string[];
}

interface PinsFile {
  version: 1;
  workspaceFolder: string;
  servers: Record<string, ServerPins>;
}

/** A definition offered that is not the one pinned. */
export interface DefinitionChange {
  server: string;
  tool: string;
  /** `mcp.<server>.<tool>`. */
  toolId: string;
  /** The definition pinned; undefined for a tool that was never approved. */
  before?: McpToolDefinition;
  after: McpToolDefinition;
  /** The offered definition's digest (accepting pins it). */
  digest: string;
  pinnedDigest?: string;
  /** What changed, in a few words. */
  summary: string;
}

/** What a listing of a server's tools comes to. */
export interface PinReview {
  /** Tools pinned by this listing (the server's first after approval, or tools reset), with their digests. */
  pinned: Array<{ tool: string; digest: string }>;
  /** Tools whose definition is not the one pinned. */
  changes: DefinitionChange[];
}

/** A pin as `agentpolicy mcp pins` lists it. */
export interface PinListing {
  server: string;
  tool: string;
  digest: string;
  pinnedAt: string;
  accepted: boolean;
}

type Listener<T> = (value: T) => void;

/** The pins file of a workspace: `<state folder>/mcp-pins/<sha256 of the folder's real path, 16 hex>.json`. */
export function pinsFileOf(workspaceFolder: string, stateDir: string = defaultStateDir()): string {
  return path.join(stateDir, 'mcp-pins', `${createHash('sha256').update(realFolder(workspaceFolder)).digest('hex').slice(0, 16)}.json`);
}

function realFolder(folder: string): string {
  try {
    return fs.realpathSync(path.resolve(folder));
  } catch {
    return path.resolve(folder);
  }
}

/**
 * The pins of one workspace. The file is read again whenever it changed on disk (another window,
 * `agentpolicy mcp pins reset`), and written whole, through a rename, at each change.
 */
export class McpToolPins {
  readonly file: string;
  readonly workspaceFolder: string;
  private cached: { mtimeMs: number; size: number; pins: PinsFile } | undefined;
  /** Changes announced by this process, by tool id and digest: each is announced once. */
  private readonly announced = new Set<string>();
  private readonly changedListeners = new Set<Listener<DefinitionChange[]>>();
  private readonly acceptedListeners = new Set<Listener<DefinitionChange[]>>();

  constructor(workspaceFolder: string, options: { stateDir?: string; file?: string } = {}) {
    this.workspaceFolder = realFolder(workspaceFolder);
    this.file = options.file ?? pinsFileOf(workspaceFolder, options.stateDir);
  }

  /** Called with the changes a listing found that this process had not announced yet. Returns a function that stops it. */
  onChanged(listener: Listener<DefinitionChange[]>): () => void {
    this.changedListeners.add(listener);
    return () => this.changedListeners.delete(listener);
  }

  /** Called with the changes a person accepted (here). Returns a function that stops it. */
  onAccepted(listener: Listener<DefinitionChange[]>): () => void {
    this.acceptedListeners.add(listener);
    return () => this.acceptedListeners.delete(listener);
  }

  /**
   * A listing of `server`'s tools: on the server's first listing (no pins yet) every tool is
   * pinned; after that, each tool whose digest is not the pinned one is a change (a new tool too).
   * Tools no longer offered keep their pins.
   */
  review(server: string, definitions: readonly McpToolDefinition[]): PinReview {
    const pins = this.read();
    const entry = pins.servers[server];
    const now = new Date().toISOString();
    const review: PinReview = { pinned: [], changes: [] };
    const next: ServerPins = entry === undefined ? { tools: {} } : { tools: { ...entry.tools }, ...(entry.unpinned ? { unpinned: [...entry.unpinned] } : {}) };
    for (const definition of definitions) {
      const digest = definitionDigest(definition);
      const pinned = entry?.tools[definition.name];
      if (entry === undefined || (pinned === undefined && entry.unpinned?.includes(definition.name) === true)) {
        next.tools[definition.name] = { digest, definition, pinnedAt: now };
        next.unpinned = next.unpinned?.filter((t) => t !== definition.name);
        review.pinned.push({ tool: definition.name, digest });
        continue;
      }
      if (pinned?.digest === digest) continue;
      review.changes.push({
        server, tool: definition.name, toolId: `mcp.${server}.${definition.name}`, ...(pinned ? { before: pinned.definition, pinnedDigest: pinned.digest } : {}),
        after: definition, digest, summary: changeSummary(pinned?.definition, definition),
      });
    }
    if (review.pinned.length > 0) {
      if (next.unpinned?.length === 0) delete next.unpinned;
      this.write({ ...pins, servers: { ...pins.servers, [server]: next } });
    }
    const fresh = review.changes.filter((c) => !this.announced.has(`${c.toolId}\n${c.digest}`));
    for (const c of fresh) this.announced.add(`${c.toolId}\n${c.digest}`);
    if (fresh.length > 0) for (const listener of this.changedListeners) listener(fresh);
    return review;
  }

  /** Whether `digest` is the definition pinned for the tool now (the file as it is on disk). */
  isPinned(server: string, tool: string, digest: string): boolean {
    try {
      return this.read().servers[server]?.tools[tool]?.digest === digest;
    } catch {
      return false;
    }
  }

  /** A person accepted these definitions: each is pinned in place of the one before. */
  accept(changes: readonly DefinitionChange[]): void {
    if (changes.length === 0) return;
    const pins = this.read();
    const now = new Date().toISOString();
    const servers = { ...pins.servers };
    for (const c of changes) {
      const entry = servers[c.server] ?? { tools: {} };
      servers[c.server] = { ...entry, tools: { ...entry.tools, [c.tool]: { digest: c.digest, definition: c.after, pinnedAt: now, accepted: true } } };
    }
    this.write({ ...pins, servers });
    for (const listener of this.acceptedListeners) listener([...changes]);
  }

  /** Every pin, by server and tool. */
  list(): PinListing[] {
    const out: PinListing[] = [];
    for (const [server, entry] of Object.entries(this.read().servers).sort(([a], [b]) => a.localeCompare(b))) {
      for (const [tool, pin] of Object.entries(entry.tools).sort(([a], [b]) => a.localeCompare(b))) {
        out.push({ server, tool, digest: pin.digest, pinnedAt: pin.pinnedAt, accepted: pin.accepted === true });
      }
    }
    return out;
  }

  /**
   * Forgets pins: all of them, a server's (its next listing pins its tools afresh), or one tool's
   * (its next definition is pinned as first seen). Returns how many pins were forgotten.
   */
  reset(server?: string, tool?: string): number {
    const pins = this.read();
    const servers = { ...pins.servers };
    let forgotten = 0;
    for (const name of Object.keys(servers)) {
      if (server !== undefined && name !== server) continue;
      const entry = servers[name]!;
      if (tool === undefined) {
        forgotten += Object.keys(entry.tools).length;
        delete servers[name];
        continue;
      }
      if (entry.tools[tool] === undefined) continue;
      const tools = { ...entry.tools };
      delete tools[tool];
      forgotten++;
      servers[name] = { tools, unpinned: [...new Set([...(entry.unpinned ?? []), tool])] };
    }
    if (forgotten > 0) this.write({ ...pins, servers });
    return forgotten;
  }

  private read(): PinsFile {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.file);
    } catch {
      return this.empty();
    }
    if (this.cached?.mtimeMs === stat.mtimeMs && this.cached.size === stat.size) return this.cached.pins;
    let pins: PinsFile;
    try {
      const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Partial<PinsFile>;
      pins = { version: 1, workspaceFolder: this.workspaceFolder, servers: isRecord(parsed.servers) ? (parsed.servers as PinsFile['servers']) : {} };
    } catch {
      // Never pinned afresh over: a listing fails, and every call of a tool held asks.
      throw new Error(`the MCP tool pins file ${this.file} cannot be read; reset it with \`agentpolicy mcp pins reset\``);
    }
    this.cached = { mtimeMs: stat.mtimeMs, size: stat.size, pins };
    return pins;
  }

  private empty(): PinsFile {
    return { version: 1, workspaceFolder: this.workspaceFolder, servers: {} };
  }

  private write(pins: PinsFile): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.${Date.now()}.tmp`;
    fs.writeFileSync(temporary, `${JSON.stringify(pins, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(temporary, this.file);
    const stat = fs.statSync(this.file);
    this.cached = { mtimeMs: stat.mtimeMs, size: stat.size, pins };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
