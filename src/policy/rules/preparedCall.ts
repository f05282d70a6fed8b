// A call prepared for judging, and its parts (policy-format.md, "Each part is judged on its
// own"): each path argument and each simple command is a view of the call that the whole rule
// list judges as if it were the call's only part. Everything is worked out once, when a rule
// first needs it.
import { commandOf, effectiveHints, kindFromId, type HintName, type ToolCall } from './call.js';
import { urlValues } from '../network/callUrls.js';
import { commandUrls } from '../network/commandUrls.js';
import { pathValues, type CallPaths, type PathResolver, type PathValues, type ResolvedPath } from '../paths/paths.js';
import type { ToolKind } from '../file/schema.js';
import { isPlainWord } from '../shell/shellFastSplit.js';
import { splitCommand } from '../shell/shellSplit.js';
import type { SimpleCommand } from '../shell/shellWalker.js';
import { unknownUrl, type UrlReading } from '../network/urls.js';

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
  /** The URLs this view reaches: its URL arguments', and those of its `curl`/`wget` commands (callUrls.ts, commandUrls.ts). */
  readonly urls: readonly UrlReading[];
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
  private kindCache: ToolKind | null | undefined;
  private hintsCache: Required<Record<HintName, boolean>> | undefined;
  private valuesCache: PathValues | undefined;
  private resolved: (ResolvedPath | undefined)[] | undefined;
  private resolvedByValue: Map<string, ResolvedPath> | undefined;
  private pathsCache: CallPaths | undefined;
  private commandCache: CommandView | undefined;
  private commandText: string | undefined;
  private fieldUrlsCache: UrlReading[] | undefined;
  private commandUrlsCache: readonly UrlReading[] | undefined;

  constructor(
    readonly call: ToolCall,
    private readonly resolver: PathResolver,
    /** Split the call by its URLs too: false when no rule reads URLs (each URL would be judged alike). */
    private readonly urlParts = true,
    /** Read the URLs of the command's curl and wget: false when the call stands for one connection, whose URL is the only one. */
    readonly readsCommandUrls = true,
  ) {
  }

  get kind(): ToolKind | undefined {
    // null: worked out, none.
    if (this.kindCache === undefined) this.kindCache = this.call.tool.kind ?? kindFromId(this.call.tool.id) ?? null;
    return this.kindCache ?? undefined;
  }

  get hints(): Required<Record<HintName, boolean>> {
    return (this.hintsCache ??= effectiveHints(this.call.tool.annotations));
  }

  /** The path arguments as given (no file system access). */
  get pathValues(): PathValues {
    return (this.valuesCache ??= pathValues(this.call.input, this.call.tool.pathArgs));
  }

  /** The i-th path argument, resolved once; a value the call names twice is resolved once for both. */
  resolvedPath(i: number): ResolvedPath {
    const known = this.resolved?.[i];
    if (known !== undefined) return known;
    const value = this.pathValues.values[i]!;
    let resolved = this.resolvedByValue?.get(value);
    if (resolved === undefined) {
      // A read-only tool's paths are there to be read: mostly existing files.
      resolved = this.resolver.resolve(value, this.hints.readOnlyHint);
      if (this.pathValues.values.length > 1) (this.resolvedByValue ??= new Map()).set(value, resolved);
    }
    return ((this.resolved ??= [])[i] = resolved);
  }

  get paths(): CallPaths {
    if (this.pathsCache) return this.pathsCache;
    const values = this.pathValues;
    return (this.pathsCache = { paths: values.values.map((_, i) => this.resolvedPath(i)), opaque: values.opaque });
  }

  /** The path values that name a place outside the workspace folder as written (no file system access). */
  pathsOutsideAsWritten(): readonly string[] {
    const values = this.pathValues.values;
    if (values.length === 0) return values;
    return values.filter((value) => this.resolver.outsideAsWritten(value));
  }

  /** present: the call has a command; parsed: it split cleanly (else only tightening rules can match). */
  get command(): CommandView {
    if (this.commandCache) return this.commandCache;
    const { command, opaque } = commandOf(this.call);
    if (opaque) return (this.commandCache = UNSEEN_COMMAND_VIEW);
    if (command === undefined) return (this.commandCache = NO_COMMAND_VIEW);
    this.commandText = command;
    const split = splitCommand(command);
    return (this.commandCache = { commands: split.commands, parsed: split.ok, present: true });
  }

  /** The values of the URL arguments, read. */
  get fieldUrls(): readonly UrlReading[] {
    return (this.fieldUrlsCache ??= urlValues(this.call.input, this.call.tool.urlArgs));
  }

  /** The URLs of the call's command (its `curl`/`wget` commands; unknown for text that cannot be seen into). */
  get commandUrls(): readonly UrlReading[] {
    return (this.commandUrlsCache ??= this.readsCommandUrls ? urlsOfCommand(this.command, this.commandText) : NO_URLS);
  }

  get urls(): readonly UrlReading[] {
    return joinUrls(this.fieldUrls, this.commandUrls);
  }

  /**
   * The call's parts, or undefined when it has at most one (then the call is judged whole).
   * Parts are every pairing of one path view with one command view, in source order: a rule
   * that reads both (a `cwd` and a command) sees the pair it would see in a call of that part alone.
   */
  parts(): CallPart[] | undefined {
    const pathViews = this.pathViews();
    const commandViews = this.commandViews();
    const urlViews = this.urlParts ? this.urlViews() : WHOLE;
    const count = pathViews.length * commandViews.length * urlViews.length;
    if (count <= 1) return undefined;
    if (count > MAX_PARTS) {
      return [new Part(this, { paths: this.paths, label: '' }, {
        command: UNSEEN_COMMAND_VIEW,
        urls: [unknownUrl('(too many parts)', 'too many parts to judge one by one')],
        label: `(${count} parts, more than the ${MAX_PARTS} the engine judges one by one)`,
        note: 'never allowed: too many parts to judge one by one',
      }, { label: '' })];
    }
    const parts: CallPart[] = [];
    for (const p of pathViews) for (const c of commandViews) for (const u of urlViews) parts.push(new Part(this, p, c, u));
    return parts;
  }

  /** One view per URL argument when there are several (each URL is judged on its own, as each path is). */
  private urlViews(): readonly UrlSide[] {
    const urls = this.fieldUrls;
    if (urls.length <= 1) return WHOLE;
    return urls.map((u) => ({ urls: [u], label: u.text, note: urlNote(u) }));
  }

  private pathViews(): readonly PathSide[] {
    const values = this.pathValues;
    if (values.values.length + (values.opaque ? 1 : 0) <= 1) return WHOLE;
    const views: PathSide[] = values.values.map((value, i) => ({ index: i, label: value }));
    if (values.opaque) views.push({ paths: { paths: [], opaque: true }, label: '(a path argument that is not a string)', note: 'never allowed: a path argument is not a string' });
    return views;
  }

  private commandViews(): readonly CommandSide[] {
    const command = this.command;
    if (!command.present) return WHOLE;
    if (command.parsed) {
      if (command.commands.length === 0) return WHOLE;
      if (command.commands.length === 1) {
        // One command is one view unless it has several URLs: no label to build for nothing.
        const only = command.commands[0]!;
        return this.urlParts && urlsOfSimpleCommand(only).length > 1 ? commandSides(command.commands, true) : WHOLE;
      }
      return commandSides(command.commands, this.urlParts);
    }
    // Unparseable: what could be recovered is judged part by part (a deny still sees `rm`), and
    // the text as a whole is one more part that no allow rule can match.
    const whole: CommandSide = {
      command: UNSEEN_COMMAND_VIEW,
      label: this.commandText ?? '(a command that is not a string)',
      note: this.commandText === undefined ? 'never allowed: the command is not a string' : 'never allowed: the command could not be parsed',
    };
    if (command.commands.length === 0) return WHOLE;
    const sides = commandSides(command.commands, this.urlParts);
    sides.push(whole);
    return sides;
  }
}

/** A call without a command; and a command that cannot be seen into (not a string, or one part standing for text no rule may allow): shared, frozen. */
const NO_COMMAND_VIEW: CommandView = Object.freeze({ commands: Object.freeze([]) as unknown as SimpleCommand[], parsed: true, present: false });
const UNSEEN_COMMAND_VIEW: CommandView = Object.freeze({ commands: Object.freeze([]) as unknown as SimpleCommand[], parsed: false, present: true });

const NO_URLS: readonly UrlReading[] = Object.freeze([]);

/** One side of the parts that is the whole call's (no path, command or URL of its own): shared, frozen. */
const WHOLE: readonly [{ readonly label: '' }] = Object.freeze([Object.freeze({ label: '' as const })]);

/**
 * The views of simple commands: each command itself, or, for a `curl`/`wget` with several URLs,
 * one view per URL (each URL judged on its own, with the command it is an argument of).
 */
function commandSides(commands: readonly SimpleCommand[], byUrl: boolean): CommandSide[] {
  const sides: CommandSide[] = [];
  for (const c of commands) {
    const command: CommandView = { commands: [c], parsed: true, present: true };
    const label = commandLabel(c);
    const note = commandNote(c);
    const urls = byUrl ? urlsOfSimpleCommand(c) : undefined;
    if (urls === undefined || urls.length <= 1) sides.push({ command, label, note });
    else for (const u of urls) sides.push({ command, urls: [u], label: `${label} · ${u.text}`, note: note ?? urlNote(u) });
  }
  return sides;
}

/** The URLs a view's command reaches: its `curl`/`wget` arguments; one unknown URL for a command not seen into. */
export function urlsOfCommand(command: CommandView, text?: string): readonly UrlReading[] {
  if (!command.present) return [];
  const urls = command.commands.flatMap(urlsOfSimpleCommand);
  // Text that cannot be seen into could reach anywhere: tightening rules with domains take it.
  if (!command.parsed) urls.push(unknownUrl(text ?? '(a command that is not a string)', 'the command cannot be seen into'));
  return urls;
}

function urlsOfSimpleCommand(c: SimpleCommand): UrlReading[] {
  // A program only known when it runs could be curl.
  if (c.dynamic === true) return [unknownUrl(commandLabel(c), 'its program is worked out only when it runs')];
  return commandUrls(c) ?? [];
}

function joinUrls(a: readonly UrlReading[], b: readonly UrlReading[]): readonly UrlReading[] {
  return a.length === 0 ? b : b.length === 0 ? a : [...a, ...b];
}

function urlNote(u: UrlReading): string | undefined {
  return u.known ? undefined : `never allowed by a rule with domains or urls: ${u.why}`;
}

interface UrlSide {
  /** The one URL argument of this view; undefined: all of them. */
  urls?: readonly UrlReading[];
  label: string;
  note?: string | undefined;
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
  /** The one URL of this view's command; undefined: all its command's URLs. */
  urls?: readonly UrlReading[];
  label: string;
  note?: string | undefined;
}

class Part implements CallPart {
  readonly label: string;
  readonly note: string | undefined;
  readonly tightenOnly: boolean;
  private pathsCache: CallPaths | undefined;
  private urlsCache: readonly UrlReading[] | undefined;

  constructor(
    private readonly whole: PreparedCall,
    private readonly pathSide: PathSide,
    private readonly commandSide: CommandSide,
    private readonly urlSide: UrlSide,
  ) {
    this.label = joinLabels(joinLabels(pathSide.label, commandSide.label), urlSide.label);
    this.note = commandSide.note ?? pathSide.note ?? urlSide.note;
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

  get urls(): readonly UrlReading[] {
    if (this.urlsCache) return this.urlsCache;
    const side = this.commandSide;
    const fromCommand = !this.whole.readsCommandUrls ? NO_URLS : side.urls ?? (side.command ? urlsOfCommand(side.command, side.label) : this.whole.commandUrls);
    return (this.urlsCache = joinUrls(this.urlSide.urls ?? this.whole.fieldUrls, fromCommand));
  }
}

/** A simple command as a person reads it: words quoted where the shell would need it. */
export function commandLabel(c: SimpleCommand): string {
  const words = c.words;
  let text = words.length === 0 ? '' : quoteWord(words[0]!);
  for (let i = 1; i < words.length; i++) text += ` ${quoteWord(words[i]!)}`;
  return c.writesToFile ? `${text} >…` : text;
}

/** Two labels of a part, joined by ` · `; an empty one is left out. */
function joinLabels(a: string, b: string): string {
  return a === '' ? b : b === '' ? a : `${a} · ${b}`;
}

function quoteWord(word: string): string {
  if (isPlainWord(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** What is special about how a simple command is judged (never allowed, or only by ask and deny rules), or undefined. */
function commandNote(c: SimpleCommand): string | undefined {
  if (c.writesToFile) return 'never allowed: it writes to a file';
  if (c.usesProcessSubstitution) return 'never allowed: it uses process substitution';
  if (c.dynamic === true) return 'never allowed: its program name is worked out only when it runs';
  if (c.tightenOnly === true) return 'judged only by ask and deny rules: the program named by its path, by its name alone';
  if (c.reaches !== undefined) {
    const said = c.reaches.map((r) => `${r.row.spelling}: ${r.row.why} [${r.row.id}]`).join('; ');
    return `allowed only by a rule whose pattern names it: ${said}`;
  }
  return undefined;
}
