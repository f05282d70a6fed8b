// A call prepared for judging, and its parts (policy-format.md, "Each part is judged on its
// own"): each path argument and each simple command is a view of the call that the whole rule
// list judges as if it were the call's only part. Everything is worked out once, when a rule
// first needs it.
import { commandOf, effectiveHints, kindFromId, type HintName, type ToolCall } from './call.js';
import { pathValues, type CallPaths, type PathResolver, type PathValues, type ResolvedPath } from './paths.js';
import type { ToolKind } from './schema.js';
import { splitCommand } from './shellSplit.js';
import type { SimpleCommand } from './shellWalker.js';

/** A call's command as the rules see it. */
export interface CommandView {
  commands: SimpleCommand[];
  /** False: the text could not be parsed (or a part cannot be seen into), so only tightening rules can match. */
  parsed: boolean;
  /** The call has a command at all. */
  present: boolean;
}

/** What a rule's matchers read: the whole call, or one of its parts. */
export interface CallView {
  readonly call: ToolCall;
  readonly kind: ToolKind | undefined;
  readonly hints: Required<Record<HintName, boolean>>;
  readonly paths: CallPaths;
  readonly command: CommandView;
}

/** One part of a call: one path (or none) and one simple command (or none). */
export interface CallPart extends CallView {
  /** How the part is shown: the path as given, the simple command's words, or both. */
  readonly label: string;
  /** What is special about how this part is judged: why it can never be allowed, or that only ask and deny rules judge it. */
  readonly note: string | undefined;
  /** Only ask and deny rules judge this part; when none matches, it does not count. */
  readonly tightenOnly: boolean;
}

/**
 * A call with more parts than this is judged whole as a command that cannot be seen into
 * (never allowed): a crafted call could otherwise make the engine judge millions of views.
 */
export const MAX_PARTS = 1024;

export class PreparedCall implements CallView {
  readonly kind: ToolKind | undefined;
  private hintsCache: Required<Record<HintName, boolean>> | undefined;
  private valuesCache: PathValues | undefined;
  private readonly resolved: (ResolvedPath | undefined)[] = [];
  private pathsCache: CallPaths | undefined;
  private commandCache: CommandView | undefined;
  private commandText: string | undefined;

  constructor(
    readonly call: ToolCall,
    private readonly resolver: PathResolver,
  ) {
    this.kind = call.tool.kind ?? kindFromId(call.tool.id);
  }

  get hints(): Required<Record<HintName, boolean>> {
    return (this.hintsCache ??= effectiveHints(this.call.tool.annotations));
  }

  /** The path arguments as given (no file system access). */
  get pathValues(): PathValues {
    return (this.valuesCache ??= pathValues(this.call.input, this.call.tool.pathArgs));
  }

  /** The i-th path argument, resolved once. */
  resolvedPath(i: number): ResolvedPath {
    // A read-only tool's paths are there to be read: mostly existing files.
    return (this.resolved[i] ??= this.resolver.resolve(this.pathValues.values[i]!, this.hints.readOnlyHint));
  }

  get paths(): CallPaths {
    if (this.pathsCache) return this.pathsCache;
    const values = this.pathValues;
    return (this.pathsCache = { paths: values.values.map((_, i) => this.resolvedPath(i)), opaque: values.opaque });
  }

  /** The path values that name a place outside the workspace folder as written (no file system access). */
  pathsOutsideAsWritten(): string[] {
    return this.pathValues.values.filter((value) => this.resolver.outsideAsWritten(value));
  }

  /** present: the call has a command; parsed: it split cleanly (else only tightening rules can match). */
  get command(): CommandView {
    if (this.commandCache) return this.commandCache;
    const { command, opaque } = commandOf(this.call);
    if (opaque) return (this.commandCache = { commands: [], parsed: false, present: true });
    if (command === undefined) return (this.commandCache = { commands: [], parsed: true, present: false });
    this.commandText = command;
    const split = splitCommand(command);
    return (this.commandCache = { commands: split.commands, parsed: split.ok, present: true });
  }

  /**
   * The call's parts, or undefined when it has at most one (then the call is judged whole).
   * Parts are every pairing of one path view with one command view, in source order: a rule
   * that reads both (a `cwd` and a command) sees the pair it would see in a call of that part alone.
   */
  parts(): CallPart[] | undefined {
    const pathViews = this.pathViews();
    const commandViews = this.commandViews();
    if (pathViews.length * commandViews.length <= 1) return undefined;
    if (pathViews.length * commandViews.length > MAX_PARTS) {
      return [new Part(this, { paths: this.paths, label: '' }, {
        command: { commands: [], parsed: false, present: true },
        label: `(${pathViews.length * commandViews.length} parts, more than the ${MAX_PARTS} the engine judges one by one)`,
        note: 'never allowed: too many parts to judge one by one',
      })];
    }
    const parts: CallPart[] = [];
    for (const p of pathViews) for (const c of commandViews) parts.push(new Part(this, p, c));
    return parts;
  }

  private pathViews(): PathSide[] {
    const values = this.pathValues;
    if (values.values.length + (values.opaque ? 1 : 0) <= 1) return [{ label: '' }];
    const views: PathSide[] = values.values.map((value, i) => ({ index: i, label: value }));
    if (values.opaque) views.push({ paths: { paths: [], opaque: true }, label: '(a path argument that is not a string)', note: 'never allowed: a path argument is not a string' });
    return views;
  }

  private commandViews(): CommandSide[] {
    const command = this.command;
    if (!command.present) return [{ label: '' }];
    if (command.parsed) {
      if (command.commands.length <= 1) return [{ label: '' }];
      return command.commands.map((c) => ({ command: { commands: [c], parsed: true, present: true }, label: commandLabel(c), note: commandNote(c) }));
    }
    // Unparseable: what could be recovered is judged part by part (a deny still sees `rm`), and
    // the text as a whole is one more part that no allow rule can match.
    const whole: CommandSide = {
      command: { commands: [], parsed: false, present: true },
      label: this.commandText ?? '(a command that is not a string)',
      note: this.commandText === undefined ? 'never allowed: the command is not a string' : 'never allowed: the command could not be parsed',
    };
    if (command.commands.length === 0) return [{ label: '' }];
    return [...command.commands.map((c) => ({ command: { commands: [c], parsed: true, present: true }, label: commandLabel(c), note: commandNote(c) })), whole];
  }
}

interface PathSide {
  /** The index of the one path argument of this view. */
  index?: number;
  /** Or fixed paths (an opaque value, or every path when there is one path view). */
  paths?: CallPaths;
  label: string;
  note?: string | undefined;
}

interface CommandSide {
  command?: CommandView;
  label: string;
  note?: string | undefined;
}

class Part implements CallPart {
  readonly label: string;
  readonly note: string | undefined;
  readonly tightenOnly: boolean;
  private pathsCache: CallPaths | undefined;

  constructor(
    private readonly whole: PreparedCall,
    private readonly pathSide: PathSide,
    private readonly commandSide: CommandSide,
  ) {
    this.label = [pathSide.label, commandSide.label].filter((l) => l !== '').join(' · ');
    this.note = commandSide.note ?? pathSide.note;
    this.tightenOnly = commandSide.command?.commands.length === 1 && commandSide.command.commands[0]!.tightenOnly === true;
  }

  get call(): ToolCall {
    return this.whole.call;
  }

  get kind(): ToolKind | undefined {
    return this.whole.kind;
  }

  get hints(): Required<Record<HintName, boolean>> {
    return this.whole.hints;
  }

  get paths(): CallPaths {
    if (this.pathsCache) return this.pathsCache;
    const side = this.pathSide;
    if (side.index !== undefined) return (this.pathsCache = { paths: [this.whole.resolvedPath(side.index)], opaque: false });
    return (this.pathsCache = side.paths ?? this.whole.paths);
  }

  get command(): CommandView {
    return this.commandSide.command ?? this.whole.command;
  }
}

/** A simple command as a person reads it: words quoted where the shell would need it. */
export function commandLabel(c: SimpleCommand): string {
  const text = c.words.map(quoteWord).join(' ');
  return c.writesToFile ? `${text} >…` : text;
}

function quoteWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** What is special about how a simple command is judged (never allowed, or only by ask and deny rules), or undefined. */
function commandNote(c: SimpleCommand): string | undefined {
  if (c.writesToFile) return 'never allowed: it writes to a file';
  if (c.usesProcessSubstitution) return 'never allowed: it uses process substitution';
  if (c.dynamic === true) return 'never allowed: its program name is worked out only when it runs';
  if (c.tightenOnly === true) return 'judged only by ask and deny rules: the program named by its path, by its name alone';
  return undefined;
}
