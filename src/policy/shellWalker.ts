// Walking the shell syntax tree into simple commands: every command a line would run
// (including those in $(...), `...`, <(...), subshells, groups, compound commands and function
// bodies), with its words after quote removal and whether it writes to a file. Also catches the
// syntax errors bash has and tree-sitter lets through (`a ;; b`, `then` as a command).
import { positionOf, type ShellNode } from './shellTree.js';
import { decodeAnsiC, stripQuotes, unescapeDouble, unescapeUnquoted } from './shellWords.js';

export interface SimpleCommand {
  /** The command's words after quote removal, in order. Leading NAME=value assignments are words too: `FOO=1 npm test` -> ["FOO=1","npm","test"]. A word containing an expansion ($VAR, $(...), `...`) keeps its raw source text. */
  words: string[];
  /** True when the command redirects output to a file: >, >>, &>, &>>, >|, N>file (but NOT fd duplications like 2>&1 / >&2, and NOT a redirect whose target is exactly /dev/null). */
  writesToFile: boolean;
  /** True when the command uses process substitution <(...) or >(...). */
  usesProcessSubstitution: boolean;
}

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

/** Walks one tree; `out` collects the commands in source order, `error` the first syntax error bash would report. */
export class Walker {
  readonly out: SimpleCommand[] = [];
  error: string | undefined;

  constructor(private readonly source: string) {}

  walk(root: ShellNode): void {
    this.statement(root);
  }

  private newCommand(): SimpleCommand {
    const cmd: SimpleCommand = { words: [], writesToFile: false, usesProcessSubstitution: false };
    this.out.push(cmd);
    return cmd;
  }

  private statement(node: ShellNode): Group {
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

  private unexpected(token: ShellNode): void {
    if (this.error === undefined) {
      this.error = `syntax error near unexpected token '${this.text(token)}' at ${this.position(token.startIndex)}`;
    }
  }

  /** command / declaration_command / unset_command / variable_assignments. */
  private simpleCommand(node: ShellNode): SimpleCommand {
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

  private redirectedStatement(node: ShellNode): Group {
    // the body is the statement child (the rest are redirects); `> file` alone has none
    let body: ShellNode | undefined = node.children.find((c) => STATEMENTS.has(c.type));
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
  private redirect(node: ShellNode, targets: SimpleCommand[]): ShellNode[] {
    const owner = targets[0];
    if (node.type === 'heredoc_redirect') {
      const extras: ShellNode[] = [];
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
    let target: ShellNode | undefined;
    const extras: ShellNode[] = [];
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

  private isDevNull(node: ShellNode): boolean {
    return !node.hasExpansion && this.wordText(node) === '/dev/null';
  }

  /** Words of `[ ... ]` / `[[ ... ]]`. */
  private testWords(node: ShellNode, cmd: SimpleCommand): void {
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
  private scan(node: ShellNode, owner: SimpleCommand | undefined): void {
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

  private piece(node: ShellNode): Piece {
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
  private wordText(node: ShellNode): string {
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

  private text(node: ShellNode): string {
    return this.source.slice(node.startIndex, node.endIndex);
  }

  private position(index: number): string {
    return positionOf(this.source, index);
  }
}

/** Children of `node`, with nested nodes of the same type (`a && b && c` nests lists leftwards) spliced in, without recursion. */
function flattenSameType(node: ShellNode): ShellNode[] {
  const out: ShellNode[] = [];
  const stack: ShellNode[] = [node];
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
