/**
 * Shell command splitting for policy evaluation.
 *
 * Parser: tree-sitter-bash (the grammar maintained by the tree-sitter org) run through
 * web-tree-sitter (WebAssembly). It is the most complete maintained bash grammar on npm
 * (process substitution, [[ ]], $'..', heredocs, case/select, ...), it needs no native
 * build, and parsing is synchronous once a one-time async init has loaded the wasm.
 * (Rejected: sh-syntax's parse() is async per call; mvdan-sh is deprecated in its favour;
 * @ericcornelissen/bash-parser is POSIX-only, e.g. no process substitution.)
 *
 * Usage: `await initShellParser()` once at startup, then `splitCommand()` synchronously.
 *
 * BUNDLING: the wasm files are read from disk at init, first from the directory of the
 * running script (`__dirname`, i.e. next to the esbuild bundle), then from node_modules.
 * A build producing a bundle (e.g. dist/extension.js, dist/cli.js) must copy these two
 * files into the bundle's directory (e.g. dist/):
 *   node_modules/web-tree-sitter/web-tree-sitter.wasm   -> dist/web-tree-sitter.wasm
 *   node_modules/tree-sitter-bash/tree-sitter-bash.wasm -> dist/tree-sitter-bash.wasm
 * (`SHELL_PARSER_WASM_FILES` lists them; `shellParserWasmPaths()` tells which paths are
 * used.) `web-tree-sitter` itself is plain JS and bundles fine with esbuild.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
// `import = require` (not `import {..} from`) so esbuild resolves the package's "require"
// export (web-tree-sitter.cjs); its ESM build uses import.meta.url, which breaks in a CJS bundle.
import WebTreeSitter = require('web-tree-sitter');

type Language = WebTreeSitter.Language;
type Parser = WebTreeSitter.Parser;
type Tree = WebTreeSitter.Tree;
const { Language, Parser } = WebTreeSitter;

export interface SimpleCommand {
  /** The command's words after quote removal, in order. Leading NAME=value assignments are words too: `FOO=1 npm test` -> ["FOO=1","npm","test"]. A word containing an expansion ($VAR, $(...), `...`) keeps its raw source text. */
  words: string[];
  /** True when the command redirects output to a file: >, >>, &>, &>>, >|, N>file (but NOT fd duplications like 2>&1 / >&2, and NOT a redirect whose target is exactly /dev/null). */
  writesToFile: boolean;
  /** True when the command uses process substitution <(...) or >(...). */
  usesProcessSubstitution: boolean;
}

export type SplitResult =
  | { ok: true; commands: SimpleCommand[] }
  | { ok: false; error: string; commands: SimpleCommand[] }; // commands: whatever could be recovered, best effort

/** The wasm files the shell parser loads; a bundle must ship them next to itself. */
export const SHELL_PARSER_WASM_FILES = [
  { file: 'web-tree-sitter.wasm', packageSpecifier: 'web-tree-sitter/web-tree-sitter.wasm' },
  { file: 'tree-sitter-bash.wasm', packageSpecifier: 'tree-sitter-bash/tree-sitter-bash.wasm' },
] as const;

export interface ShellParserInitOptions {
  /** Directory holding web-tree-sitter.wasm and tree-sitter-bash.wasm; tried before the defaults. */
  wasmDir?: string;
}

/**
 * Where each wasm file will be loaded from: the first existing candidate among
 * `options.wasmDir`, the directory of this script/bundle, and node_modules.
 * Returns `undefined` for a file that cannot be found.
 */
export function shellParserWasmPaths(options: ShellParserInitOptions = {}): {
  runtime: string | undefined;
  grammar: string | undefined;
} {
  const [runtime, grammar] = SHELL_PARSER_WASM_FILES.map((f) => locateWasm(f.file, f.packageSpecifier, options.wasmDir));
  return { runtime, grammar };
}

function locateWasm(file: string, specifier: string, wasmDir: string | undefined): string | undefined {
  const candidates: string[] = [];
  if (wasmDir !== undefined) candidates.push(path.join(wasmDir, file));
  if (typeof __dirname === 'string') candidates.push(path.join(__dirname, file));
  try {
    if (typeof require === 'function' && typeof require.resolve === 'function') candidates.push(require.resolve(specifier));
  } catch {
    // package not installed (e.g. a packaged extension without node_modules)
  }
  return candidates.find((c) => {
    try {
      return fs.statSync(c).isFile();
    } catch {
      return false;
    }
  });
}

let language: Language | undefined;
let parser: Parser | undefined;
let initPromise: Promise<void> | undefined;

/** Loads the wasm parser. Call (and await) once before `splitCommand`; later calls are no-ops. */
export function initShellParser(options: ShellParserInitOptions = {}): Promise<void> {
  if (!initPromise) {
    initPromise = doInit(options).catch((err: unknown) => {
      initPromise = undefined; // allow a retry
      throw err;
    });
  }
  return initPromise;
}

/** True once `initShellParser()` has completed. */
export function isShellParserReady(): boolean {
  return parser !== undefined;
}

async function doInit(options: ShellParserInitOptions): Promise<void> {
  const { runtime, grammar } = shellParserWasmPaths(options);
  if (runtime === undefined || grammar === undefined) {
    const missing = SHELL_PARSER_WASM_FILES.filter((_, i) => (i === 0 ? runtime : grammar) === undefined).map((f) => f.file);
    throw new Error(`shell parser: cannot find ${missing.join(' and ')} (ship them next to the bundle, or install web-tree-sitter and tree-sitter-bash)`);
  }
  await Parser.init({ wasmBinary: fs.readFileSync(runtime) });
  const lang = await Language.load(fs.readFileSync(grammar));
  const p = new Parser();
  p.setLanguage(lang);
  symbolInfo = [];
  language = lang;
  parser = p;
}

/**
 * Splits a shell command line into its simple commands (including those nested in
 * $(...), `...`, <(...), subshells, groups, compound commands and function bodies).
 * Requires `initShellParser()` to have completed (throws otherwise); for any string
 * input after that it never throws.
 */
export function splitCommand(source: string): SplitResult {
  return (typeof source === 'string' ? splitPlainCommand(source) : undefined) ?? splitWithParser(source);
}

/** The parser's split, with no fast path (tests compare the two). */
export function splitWithParser(source: string): SplitResult {
  if (!parser) {
    throw new Error('splitCommand() called before the shell parser was initialised: await initShellParser() once at startup');
  }
  let walker: Walker | undefined;
  try {
    if (typeof source !== 'string') return { ok: false, error: 'input is not a string', commands: [] };
    const tree = parser.parse(source);
    if (!tree) return { ok: false, error: 'shell parser returned no tree', commands: [] };
    try {
      const root = toPlainTree(tree);
      walker = new Walker(source);
      walker.walk(root);
      if (root.hasError && walker.error === undefined) walker.error = describeError(root, source);
      if (walker.error !== undefined) {
        return { ok: false, error: walker.error, commands: walker.out.filter(nonEmpty) };
      }
      return { ok: true, commands: walker.out };
    } finally {
      tree.delete();
    }
  } catch (err) {
    resetParser();
    const msg =
      err instanceof RangeError && /call stack/i.test(err.message)
        ? 'command is nested too deeply to analyse'
        : err instanceof Error
          ? err.message
          : String(err);
    return { ok: false, error: `shell parser failure: ${msg}`, commands: walker ? walker.out.filter(nonEmpty) : [] };
  }
}

// A command made only of these characters has no quoting, operators, expansions, globs,
// comments or redirections: every shell reads it as one simple command whose words are the
// blank-separated fields. Such commands (most allowed ones: `npm test`, `git status`) skip the
// parser, which costs tens of microseconds.
const PLAIN = /^[A-Za-z0-9 \t_.\/=:+,-]*$/;
const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'in', 'function', 'select', 'time', 'coproc', '{', '}', '!', '[[', ']]']);

/** The split of a plain command, or undefined when the parser must decide. */
export function splitPlainCommand(source: string): SplitResult | undefined {
  if (source.length > 4096 || !PLAIN.test(source)) return undefined;
  const words = source.split(/[ \t]+/).filter((w) => w.length > 0);
  if (words.some((w) => RESERVED.has(w))) return undefined;
  return { ok: true, commands: words.length === 0 ? [] : [{ words, writesToFile: false, usesProcessSubstitution: false }] };
}

function nonEmpty(c: SimpleCommand): boolean {
  return c.words.length > 0 || c.writesToFile || c.usesProcessSubstitution;
}

function resetParser(): void {
  try {
    if (language) {
      const p = new Parser();
      p.setLanguage(language);
      try {
        parser?.delete();
      } catch {
        // ignore
      }
      parser = p;
    }
  } catch {
    // keep the old parser; the next call reports its own failure
  }
}

// ---------------------------------------------------------------------------
// Plain tree: one cursor pass copies the wasm tree into JS objects (each wasm node
// accessor costs a marshalling round trip; the walker reads nodes many times).

interface Node {
  type: string;
  isNamed: boolean;
  isMissing: boolean;
  /** This node or a descendant is an ERROR or MISSING node. */
  hasError: boolean;
  /** This node or a descendant is an expansion ($x, ${x}, $(..), `..`, $((..)), <(..)). */
  hasExpansion: boolean;
  /** UTF-16 offsets into the source. */
  startIndex: number;
  endIndex: number;
  children: Node[];
}

const ERROR_SYMBOL = 0xffff;
const LEAF_LIKE = new Set(['simple_expansion', 'raw_string', 'ansi_c_string', 'comment', 'heredoc_start', 'heredoc_end']);
/** Per grammar symbol id: [type name, is named]; filled lazily. */
let symbolInfo: Array<[string, boolean] | undefined> = [];

function toPlainTree(tree: Tree): Node {
  const lang = tree.language;
  const withErrors = tree.rootNode.hasError; // MISSING nodes can only exist then
  const cursor = tree.walk();
  try {
    const make = (): Node => {
      const id = cursor.nodeTypeId;
      let info = symbolInfo[id];
      if (info === undefined) {
        info = id === ERROR_SYMBOL ? ['ERROR', true] : [lang.types[id] ?? 'ERROR', lang.nodeTypeIsNamed(id)];
        symbolInfo[id] = info;
      }
      const type = info[0];
      const isMissing = withErrors && cursor.nodeIsMissing;
      return {
        type,
        isNamed: info[1],
        isMissing,
        hasError: isMissing || type === 'ERROR',
        hasExpansion: EXPANSIONS.has(type),
        startIndex: cursor.startIndex,
        endIndex: cursor.endIndex,
        children: [],
      };
    };
    const root = make();
    const stack: Node[] = [root];
    let current = root;
    for (;;) {
      // `$x` / `$'..'` / '..' have no children the walker needs; skipping them saves wasm calls
      if (!LEAF_LIKE.has(current.type) && cursor.gotoFirstChild()) {
        const child = make();
        current.children.push(child);
        stack.push(child);
        current = child;
        continue;
      }
      for (;;) {
        stack.pop();
        const parent = stack[stack.length - 1];
        if (parent === undefined) return root;
        if (current.hasError) parent.hasError = true;
        if (current.hasExpansion) parent.hasExpansion = true;
        if (cursor.gotoNextSibling()) {
          const sibling = make();
          parent.children.push(sibling);
          stack.push(sibling);
          current = sibling;
          break;
        }
        cursor.gotoParent();
        current = parent;
      }
    }
  } finally {
    cursor.delete();
  }
}

// ---------------------------------------------------------------------------
// Tree walking

/** Nodes that are statements (things that run commands). */
const STATEMENTS = new Set([
  'command',
  'variable_assignment',
  'variable_assignments',
  'declaration_command',
  'unset_command',
  'test_command',
  'redirected_statement',
  'pipeline',
  'list',
  'negated_command',
  'subshell',
  'compound_statement',
  'if_statement',
  'elif_clause',
  'else_clause',
  'while_statement',
  'for_statement',
  'c_style_for_statement',
  'case_statement',
  'case_item',
  'do_group',
  'function_definition',
  'ERROR',
]);

const REDIRECTS = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);

/** Node types whose presence makes a word keep its raw source text. */
const EXPANSIONS = new Set([
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
]);

/** Word-like leaves of a test command ([ ... ] / [[ ... ]]). */
const TEST_WORDS = new Set([
  'word',
  'string',
  'raw_string',
  'ansi_c_string',
  'translated_string',
  'number',
  'concatenation',
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
  'extglob_pattern',
  'regex',
  'test_operator',
  'variable_name',
  'brace_expression',
]);

/** Reserved words that bash rejects in command position but tree-sitter accepts as commands. */
const MISPLACED_RESERVED = new Set(['then', 'else', 'elif', 'fi', 'do', 'done', 'esac', '}']);

const CASE_TERMINATORS = new Set([';;', ';&', ';;&']);

/** Output redirection operators. */
const WRITE_OPS = new Set(['>', '>>', '&>', '&>>', '>|']);

interface Group {
  /** Every simple command run directly by the statement (not inside substitutions). */
  all: SimpleCommand[];
  /** The commands a trailing redirect applies to (tree-sitter attaches `a | b > f` to the whole pipeline). */
  tail: SimpleCommand[];
}

interface Piece {
  start: number;
  end: number;
  text: string;
  raw: boolean;
  dollar: boolean;
  isString: boolean;
}

class Walker {
  readonly out: SimpleCommand[] = [];
  error: string | undefined;

  constructor(private readonly source: string) {}

  walk(root: Node): void {
    this.statement(root);
  }

  private newCommand(): SimpleCommand {
    const cmd: SimpleCommand = { words: [], writesToFile: false, usesProcessSubstitution: false };
    this.out.push(cmd);
    return cmd;
  }

  private statement(node: Node): Group {
    switch (node.type) {
      case 'command':
      case 'declaration_command':
      case 'unset_command':
      case 'variable_assignments':
        return single(this.simpleCommand(node));
      case 'variable_assignment': {
        const cmd = this.newCommand();
        if (!node.isMissing) cmd.words.push(this.wordText(node));
        this.scan(node, cmd);
        return single(cmd);
      }
      case 'test_command': {
        const cmd = this.newCommand();
        this.testWords(node, cmd);
        return single(cmd);
      }
      case 'redirected_statement':
        return this.redirectedStatement(node);
      case 'pipeline':
      case 'list': {
        const all: SimpleCommand[] = [];
        let tail: SimpleCommand[] = [];
        for (const child of flattenSameType(node)) {
          if (STATEMENTS.has(child.type)) {
            const g = this.statement(child);
            all.push(...g.all);
            tail = g.tail;
          } else {
            this.scan(child, undefined);
          }
        }
        return { all, tail };
      }
      case 'c_style_for_statement': {
        const all: SimpleCommand[] = [];
        for (const child of node.children) {
          if (child.type === 'do_group' || child.type === 'compound_statement') all.push(...this.statement(child).all);
          else this.scan(child, undefined);
        }
        return { all, tail: all };
      }
      default: {
        // program, subshell, compound_statement, if/while/for/case, function_definition, ERROR, ...
        const all: SimpleCommand[] = [];
        for (const child of node.children) {
          if (STATEMENTS.has(child.type)) {
            all.push(...this.statement(child).all);
          } else {
            if (!child.isNamed && CASE_TERMINATORS.has(child.type) && node.type !== 'case_item') {
              this.unexpected(child); // tree-sitter accepts `a ;; b`; bash does not
            }
            this.scan(child, undefined);
          }
        }
        return { all, tail: all };
      }
    }
  }

  private unexpected(token: Node): void {
    if (this.error === undefined) {
      this.error = `syntax error near unexpected token '${this.text(token)}' at ${this.position(token.startIndex)}`;
    }
  }

  /** command / declaration_command / unset_command / variable_assignments. */
  private simpleCommand(node: Node): SimpleCommand {
    const cmd = this.newCommand();
    const pieces: Piece[] = [];
    for (const child of node.children) {
      const type = child.type;
      if (child.isMissing || type === 'comment') continue;
      if (REDIRECTS.has(type)) {
        for (const extra of this.redirect(child, [cmd])) pieces.push(this.piece(extra));
        continue;
      }
      if (type === 'command_name') {
        const inner = child.children[0] ?? child;
        if (inner.isMissing) continue;
        if (inner.type === 'word' && MISPLACED_RESERVED.has(this.text(inner))) this.unexpected(inner);
        pieces.push(this.piece(inner));
      } else {
        pieces.push(this.piece(child));
      }
      this.scan(child, cmd);
    }
    cmd.words.push(...this.mergePieces(pieces));
    return cmd;
  }

  private redirectedStatement(node: Node): Group {
    // the body is the statement child (the rest are redirects); `> file` alone has none
    let body: Node | undefined = node.children.find((c) => STATEMENTS.has(c.type));
    if (body?.isMissing) body = undefined;
    let group: Group;
    let bodyCommand: SimpleCommand | undefined;
    if (body) {
      group = this.statement(body);
      if (body.type === 'command' && group.tail.length === 1) bodyCommand = group.tail[0];
    } else {
      // Redirections without a command (`> file`) still open (and truncate) the file.
      const cmd = this.newCommand();
      group = single(cmd);
    }
    const extras: Piece[] = [];
    for (const child of node.children) {
      if (child === body) continue;
      if (REDIRECTS.has(child.type)) {
        for (const extra of this.redirect(child, group.tail)) extras.push(this.piece(extra));
      } else if (STATEMENTS.has(child.type)) {
        this.statement(child);
      } else {
        this.scan(child, undefined);
      }
    }
    if (extras.length > 0 && bodyCommand) {
      // `echo > f hi`: tree-sitter makes `hi` a second redirect destination; bash makes it an argument.
      bodyCommand.words.push(...this.mergePieces(extras));
    }
    return group;
  }

  /**
   * Applies a redirect to its target commands and walks what it contains.
   * Returns nodes that tree-sitter parsed as extra destinations (really command arguments).
   */
  private redirect(node: Node, targets: SimpleCommand[]): Node[] {
    const owner = targets[0];
    if (node.type === 'heredoc_redirect') {
      const extras: Node[] = [];
      for (const child of node.children) {
        if (REDIRECTS.has(child.type)) extras.push(...this.redirect(child, targets));
        else if (STATEMENTS.has(child.type)) this.statement(child);
        else this.scan(child, owner); // heredoc_body: only its expansions run
      }
      return extras;
    }
    if (node.type !== 'file_redirect') {
      this.scan(node, owner); // herestring
      return [];
    }
    let op = '';
    let target: Node | undefined;
    const extras: Node[] = [];
    for (const child of node.children) {
      if (!child.isNamed) {
        if (op === '') op = child.type;
        continue;
      }
      if (child.type === 'file_descriptor' || child.type === 'comment' || child.isMissing) continue;
      if (target === undefined) {
        target = child;
        this.scan(child, undefined);
      } else {
        extras.push(child);
        this.scan(child, owner);
      }
    }
    const procSub = target !== undefined && target.type === 'process_substitution';
    let writes = false;
    if (procSub) {
      // `> >(cmd)` writes into a pipe to cmd (reported via usesProcessSubstitution), not a file
    } else if (WRITE_OPS.has(op)) {
      writes = target === undefined || !this.isDevNull(target);
    } else if (op === '>&' && target !== undefined) {
      // `>&2` / `>&-` duplicate a descriptor; `>& file` (csh style) writes stdout+stderr to file.
      const t = target.type === 'number' ? this.text(target) : this.wordText(target);
      writes = !/^[0-9]+-?$/.test(t) && t !== '-' && !this.isDevNull(target);
    }
    for (const t of targets) {
      if (writes) t.writesToFile = true;
      if (procSub) t.usesProcessSubstitution = true;
    }
    return extras;
  }

  private isDevNull(node: Node): boolean {
    return !node.hasExpansion && this.wordText(node) === '/dev/null';
  }

  /** Words of `[ ... ]` / `[[ ... ]]`. */
  private testWords(node: Node, cmd: SimpleCommand): void {
    for (const child of node.children) {
      if (child.isMissing || child.type === 'comment') continue;
      if (!child.isNamed) cmd.words.push(this.text(child));
      else if (TEST_WORDS.has(child.type)) {
        cmd.words.push(this.wordText(child));
        this.scan(child, cmd);
      } else this.testWords(child, cmd);
    }
  }

  /** Finds command/process substitutions below `node` and walks their bodies. */
  private scan(node: Node, owner: SimpleCommand | undefined): void {
    const type = node.type;
    if (type === 'command_substitution' || type === 'process_substitution') {
      if (type === 'process_substitution' && owner) owner.usesProcessSubstitution = true;
      for (const child of node.children) {
        if (STATEMENTS.has(child.type)) this.statement(child);
        else this.scan(child, undefined);
      }
      return;
    }
    if (node.children.length === 0) return;
    for (const child of node.children) {
      if (STATEMENTS.has(child.type) && child.type !== 'variable_assignment') this.statement(child);
      else this.scan(child, owner);
    }
  }

  // -------------------------------------------------------------------------
  // Words

  private piece(node: Node): Piece {
    const dollar = !node.isNamed && node.type === '$';
    const raw = !dollar && node.hasExpansion;
    return {
      start: node.startIndex,
      end: node.endIndex,
      text: dollar ? '$' : raw ? this.text(node) : this.wordText(node),
      raw,
      dollar,
      isString: node.type === 'string',
    };
  }

  /** Joins pieces that touch (or are separated only by line continuations) into words. */
  private mergePieces(pieces: Piece[]): string[] {
    const words: string[] = [];
    let i = 0;
    while (i < pieces.length) {
      const first = pieces[i]!;
      let last = first;
      let raw = first.raw;
      let text = '';
      let j = i;
      for (;;) {
        const p = pieces[j]!;
        const next = pieces[j + 1];
        const touching = next !== undefined && this.touching(p.end, next.start);
        // `$"..."` (locale translation) is quoted text without the `$`
        if (!(p.dollar && touching && next.isString)) text += p.text;
        raw = raw || p.raw;
        last = p;
        j++;
        if (!touching) break;
      }
      words.push(raw ? this.source.slice(first.start, last.end) : text);
      i = j;
    }
    return words;
  }

  private touching(end: number, start: number): boolean {
    if (end === start) return true;
    if (start < end) return false;
    const gap = this.source.slice(end, start);
    return /^(?:\\\n)+$/.test(gap);
  }

  /** Quote removal for a word without expansions (with expansions: raw text). */
  private wordText(node: Node): string {
    if (node.hasExpansion) return this.text(node);
    switch (node.type) {
      case 'word':
      case 'extglob_pattern':
        return unescapeUnquoted(this.text(node));
      case 'string':
        return unescapeDouble(stripQuotes(this.text(node), '"', '"'));
      case 'translated_string':
        return unescapeDouble(stripQuotes(this.text(node), '$"', '"'));
      case 'raw_string':
        return stripQuotes(this.text(node), "'", "'");
      case 'ansi_c_string':
        return decodeAnsiC(stripQuotes(this.text(node), "$'", "'"));
      case 'concatenation':
      case 'variable_assignment': {
        const pieces: Piece[] = [];
        for (const child of node.children) if (!child.isMissing) pieces.push(this.piece(child));
        // children of a concatenation touch; join them (handles `a$"b"` too)
        let text = '';
        for (let i = 0; i < pieces.length; i++) {
          const p = pieces[i]!;
          const next = pieces[i + 1];
          if (p.dollar && next !== undefined && next.isString && next.start === p.end) continue;
          if (i > 0 && !this.touching(pieces[i - 1]!.end, p.start)) text += this.source.slice(pieces[i - 1]!.end, p.start);
          text += p.text;
        }
        return text;
      }
      default:
        return this.text(node);
    }
  }

  private text(node: Node): string {
    return this.source.slice(node.startIndex, node.endIndex);
  }

  private position(index: number): string {
    return positionOf(this.source, index);
  }
}

/** Children of `node`, with nested nodes of the same type (`a && b && c` nests lists leftwards) spliced in, without recursion. */
function flattenSameType(node: Node): Node[] {
  const out: Node[] = [];
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n !== node && n.type !== node.type) {
      out.push(n);
      continue;
    }
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

function single(cmd: SimpleCommand): Group {
  return { all: [cmd], tail: [cmd] };
}

function stripQuotes(text: string, open: string, close: string): string {
  let s = text.startsWith(open) ? text.slice(open.length) : text;
  if (s.endsWith(close)) s = s.slice(0, s.length - close.length);
  return s;
}

/** Backslash removal outside quotes: `\x` -> `x`, `\<newline>` -> nothing. */
function unescapeUnquoted(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      const n = s[++i]!;
      if (n !== '\n') out += n;
    } else {
      out += c;
    }
  }
  return out;
}

/** Backslash removal inside double quotes: only before $ ` " \ and newline. */
function unescapeDouble(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const n = s[i + 1];
    if (c === '\\' && n !== undefined && (n === '$' || n === '`' || n === '"' || n === '\\' || n === '\n')) {
      if (n !== '\n') out += n;
      i++;
    } else {
      out += c;
    }
  }
  return out;
}

const ANSI_SIMPLE: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** Decodes the body of a bash `$'...'` string. */
function decodeAnsiC(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  let i = 0;
  const take = (re: RegExp, max: number): string => {
    let digits = '';
    while (digits.length < max && i < s.length && re.test(s[i]!)) digits += s[i++];
    return digits;
  };
  while (i < s.length) {
    const c = s[i++]!;
    if (c !== '\\' || i >= s.length) {
      out += c;
      continue;
    }
    const e = s[i++]!;
    const simple = ANSI_SIMPLE[e];
    if (simple !== undefined) {
      out += simple;
    } else if (e >= '0' && e <= '7') {
      i--;
      out += String.fromCharCode(parseInt(take(/[0-7]/, 3), 8) & 0xff);
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const digits = take(/[0-9a-fA-F]/, e === 'x' ? 2 : e === 'u' ? 4 : 8);
      const cp = digits === '' ? NaN : parseInt(digits, 16);
      out += Number.isNaN(cp) || cp > 0x10ffff ? `\\${e}${digits}` : String.fromCodePoint(cp);
    } else if (e === 'c' && i < s.length) {
      out += String.fromCharCode(s.charCodeAt(i++) & 0x1f);
    } else {
      out += `\\${e}`;
    }
  }
  return out;
}

function positionOf(source: string, index: number): string {
  const before = source.slice(0, index);
  const line = before.split('\n').length;
  const column = index - (before.lastIndexOf('\n') + 1) + 1;
  return `line ${line}, column ${column}`;
}

function describeError(root: Node, source: string): string {
  const bad = findErrorNode(root);
  if (!bad) return 'syntax error';
  const where = positionOf(source, bad.startIndex);
  if (bad.isMissing) {
    const what = bad.type === 'word' ? 'a command or word' : `'${bad.type}'`;
    return `syntax error: expected ${what} at ${where}`;
  }
  const text = source.slice(bad.startIndex, bad.endIndex);
  if (text.trim() === '') return `syntax error: unexpected end of input at ${where}`;
  const snippet = text.length > 30 ? `${text.slice(0, 30)}...` : text;
  return `syntax error near ${JSON.stringify(snippet)} at ${where}`;
}

function findErrorNode(node: Node): Node | null {
  if (node.type === 'ERROR' || node.isMissing) return node;
  if (!node.hasError) return null;
  for (const child of node.children) {
    const found = findErrorNode(child);
    if (found) return found;
  }
  return node;
}
