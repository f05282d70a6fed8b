// Walking the shell syntax tree into simple commands: every command a line would run
// (including those in $(...), `...`, <(...), subshells, groups, compound commands and function
// bodies), with its words after quote removal and whether it writes to a file. Also catches the
// syntax errors bash has and tree-sitter lets through (`a ;; b`, `then` as a command). What the
// parser leaves as text but bash runs or evaluates, and where the two disagree: shellSeeInto.ts.
import type { NestedSplit, SimpleCommand } from './shellCommand.js';
import { dynamicWordsOf, isStaticNode, programIndex, setDynamicWords } from './shellDynamic.js';
import {
  BACKSLASHES_IN_NESTED_QUOTES,
  CONTENT_NODES,
  READ_NODES,
  closingBacktick,
  contentText,
  evaluatedLater,
  evaluatingExpansion,
  hasUnescapedNewline,
  hiddenSubstitutions,
  mayHideSubstitution,
  semicolonAfterHeredoc,
  unescapeBackticks,
} from './shellSeeInto.js';
import { addRedirectFile } from './shellRedirects.js';
import { positionOf, type ShellNode } from './shellTree.js';
import { mergePieces, pieceOf, quotedText, wordText, type Piece } from './shellWords.js';

export type { NestedSplit, SimpleCommand } from './shellCommand.js';

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

/** The named parts of a here-document redirect that are not words of its command. */
const NOT_HEREDOC_WORDS = new Set(['heredoc_start', 'heredoc_body', 'heredoc_end', 'file_descriptor', 'comment']);

/** The operators that close a descriptor (no file follows). */
const CLOSE_OPS = new Set(['<&-', '>&-']);
/** What bash reads as a redirect's descriptor when `<` or `>` follows it at once. */
const REDIRECT_FD = /^(?:[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})$/;

/** Output redirection operators. */
const WRITE_OPS = new Set(['>', '>>', '&>', '&>>', '>|']);

interface Group {
  /** Every simple command run directly by the statement (not inside substitutions). */
  all: SimpleCommand[];
  /** The commands a trailing redirect applies to (tree-sitter attaches `a | b > f` to the whole pipeline). */
  tail: SimpleCommand[];
}

/** Named leaves whose text bash never expands (or that are not text of a word). */
const LITERAL_LEAVES = new Set(['raw_string', 'ansi_c_string', 'comment', 'heredoc_start', 'heredoc_end']);

/** Walks one tree; `out` collects the commands in source order, `error` the first syntax error bash would report. */
export class Walker {
  readonly out: SimpleCommand[] = [];
  error: string | undefined;
  /** Whether the source has substitution syntax at all (else the checks for hidden ones are skipped). */
  private readonly mayHide: boolean;
  /** Whether the source has more than one line (else the checks for misread line breaks are skipped). */
  private readonly multiline: boolean;

  /** The simple command made of each command node, for words a redirect around it carries. */
  private readonly commandOf = new Map<ShellNode, SimpleCommand>();

  constructor(
    private readonly source: string,
    private readonly nested: NestedSplit,
  ) {
    this.mayHide = mayHideSubstitution(source);
    this.multiline = source.includes('\n');
  }

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
        this.commandOf.set(node, cmd);
        if (!node.isMissing) {
          cmd.words.push(wordText(this.source, node));
          this.fail(evaluatedLater(cmd.words, () => !node.hasExpansion));
        }
        this.scan(node, cmd);
        return single(cmd);
      }
      case 'test_command': {
        const cmd = this.newCommand();
        const expanded = new Set<number>();
        this.testWords(node, cmd, expanded);
        this.fail(evaluatedLater(cmd.words, (i) => !expanded.has(i)));
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
          else this.scan(child, undefined, 0, false, true);
        }
        return { all, tail: all };
      }
      default: {
        // program, subshell, compound_statement, if/while/for/case, function_definition, ERROR, ...
        const all: SimpleCommand[] = [];
        const arith = node.type === 'compound_statement' && node.children[0]?.type === '((';
        for (const child of node.children) {
          if (STATEMENTS.has(child.type)) {
            all.push(...this.statement(child).all);
          } else {
            if (!child.isNamed && CASE_TERMINATORS.has(child.type) && node.type !== 'case_item') {
              this.unexpected(child); // tree-sitter accepts `a ;; b`; bash does not
            }
            this.scan(child, undefined, 0, false, arith);
          }
        }
        return { all, tail: all };
      }
    }
  }

  private unexpected(token: ShellNode): void {
    this.fail(`syntax error near unexpected token '${this.text(token)}' at ${this.position(token.startIndex)}`);
  }

  private misreadLineBreak(at: number): void {
    this.fail(`the parser misread a line break at ${this.position(at)}`);
  }

  /** Records the first reason the line cannot be read. */
  private fail(reason: string | undefined): void {
    if (reason !== undefined && this.error === undefined) this.error = reason;
  }

  /** command / declaration_command / unset_command / variable_assignments. */
  private simpleCommand(node: ShellNode): SimpleCommand {
    const cmd = this.newCommand();
    this.commandOf.set(node, cmd);
    const pieces: Piece[] = [];
    let end = node.startIndex;
    for (const child of node.children) {
      const type = child.type;
      if (this.multiline && hasUnescapedNewline(this.source.slice(end, child.startIndex))) this.misreadLineBreak(end);
      end = Math.max(end, child.endIndex);
      if (child.isMissing || type === 'comment') continue;
      if (REDIRECTS.has(type)) {
        for (const extra of this.redirect(child, [cmd])) pieces.push(pieceOf(this.source, extra));
        continue;
      }
      if (this.isRedirectFd(child)) continue;
      if (type === 'command_name') {
        const inner = child.children[0] ?? child;
        if (inner.isMissing) continue;
        if (inner.type === 'word' && MISPLACED_RESERVED.has(this.text(inner))) this.unexpected(inner);
        // `! ! cmd`: the parser takes the second `!` (negation again) for the program
        if (inner.type === 'word' && this.text(inner) === '!') continue;
        pieces.push(pieceOf(this.source, inner));
      } else {
        pieces.push(pieceOf(this.source, child));
      }
      this.scan(child, cmd);
    }
    this.addCommandWords(cmd, pieces);
    return cmd;
  }

  /**
   * `0<&-`, `{fd}>f`: digits or `{name}` right before `<` or `>` name the descriptor the redirect
   * opens or closes, for bash; tree-sitter makes them a word of the command where the operator is
   * `<&-`/`>&-` or the name is in braces.
   */
  private isRedirectFd(node: ShellNode): boolean {
    const next = this.source.charCodeAt(node.endIndex);
    return (next === 0x3c || next === 0x3e) && REDIRECT_FD.test(this.text(node));
  }

  /**
   * Adds words to a command (which may have only assignments, or nothing, yet): a program only
   * known when it runs makes it dynamic, and a word bash evaluates later makes the line unreadable.
   */
  private addCommandWords(cmd: SimpleCommand, pieces: Piece[]): void {
    const flags = this.addWords(cmd, pieces);
    if (flags?.[programIndex(cmd.words)] === true) cmd.dynamic = true;
    this.fail(evaluatedLater(cmd.words, (i) => flags?.[i] !== true));
  }

  private redirectedStatement(node: ShellNode): Group {
    // the body is the statement child (the rest are redirects); `> file` alone has none
    let body: ShellNode | undefined = node.children.find((c) => STATEMENTS.has(c.type));
    if (body?.isMissing) body = undefined;
    let group: Group;
    let bodyCommand: SimpleCommand | undefined;
    if (body) {
      group = this.statement(body);
      const last = lastSimpleCommand(body);
      if (last !== undefined) bodyCommand = this.commandOf.get(last);
    } else {
      // Redirections without a command (`> file`) still open (and truncate) the file.
      const cmd = this.newCommand();
      group = single(cmd);
      bodyCommand = cmd;
    }
    const extras: ShellNode[] = [];
    for (const child of node.children) {
      if (child === body) continue;
      if (REDIRECTS.has(child.type)) {
        extras.push(...this.redirect(child, group.tail));
      } else if (STATEMENTS.has(child.type)) {
        this.statement(child);
      } else {
        this.scan(child, undefined);
      }
    }
    if (extras.length > 0) {
      // `echo > f hi`, `a | b 2>/dev/null --force`, `a && b > f x`: tree-sitter makes the words after
      // the destination more destinations, of a redirect around the whole pipeline or list; bash
      // makes them arguments of the simple command the redirect follows.
      if (bodyCommand === undefined) this.unexpected(extras[0]!); // `{ a; } > f x`: bash refuses
      else this.addCommandWords(bodyCommand, extras.map((extra) => pieceOf(this.source, extra)));
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
      // <<'EOF', <<"EOF", <<E\OF: the body is not expanded
      const start = node.children.find((c) => c.type === 'heredoc_start');
      const quoted = start !== undefined && /['"\\]/.test(this.text(start));
      for (const child of node.children) {
        if (REDIRECTS.has(child.type)) {
          extras.push(...this.redirect(child, targets));
        } else if (STATEMENTS.has(child.type)) {
          this.statement(child);
        } else {
          if (!(quoted && child.type === 'heredoc_body')) this.scan(child, owner); // heredoc_body: only its expansions run
          // `git push <<EOF --force`: tree-sitter hangs the words after the delimiter on the here-document
          if (child.isNamed && !child.isMissing && !NOT_HEREDOC_WORDS.has(child.type) && !this.isRedirectFd(child)) extras.push(child);
        }
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
      // `<&-` and `>&-` close a descriptor and take no file: what follows are the command's words
      if (target === undefined && !CLOSE_OPS.has(op)) {
        target = child;
        this.scan(child, undefined);
      } else if (!this.isRedirectFd(child)) {
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
      const t = target.type === 'number' ? this.text(target) : wordText(this.source, target);
      writes = !/^[0-9]+-?$/.test(t) && t !== '-' && !this.isDevNull(target);
    }
    const reads = op === '<' || op === '<>';
    const file = target !== undefined && !procSub && (writes || reads) && target.type !== 'number' ? { file: wordText(this.source, target), writes, known: !target.hasExpansion && isStaticNode(target, this.source) } : undefined;
    for (const t of targets) {
      if (writes) t.writesToFile = true;
      if (procSub) t.usesProcessSubstitution = true;
      if (file !== undefined) addRedirectFile(t, file);
    }
    return extras;
  }

  private isDevNull(node: ShellNode): boolean {
    return !node.hasExpansion && wordText(this.source, node) === '/dev/null';
  }

  /** Words of `[ ... ]` / `[[ ... ]]`; `expanded` collects the indexes of those with an expansion. */
  private testWords(node: ShellNode, cmd: SimpleCommand, expanded: Set<number>): void {
    for (const child of node.children) {
      if (child.isMissing || child.type === 'comment') continue;
      if (!child.isNamed) cmd.words.push(this.text(child));
      else if (TEST_WORDS.has(child.type)) {
        if (child.hasExpansion) expanded.add(cmd.words.length);
        cmd.words.push(wordText(this.source, child));
        this.scan(child, cmd);
      } else if (child.children.length === 0) this.scan(child, cmd);
      else this.testWords(child, cmd, expanded);
    }
  }

  /**
   * Finds command/process substitutions below `node` and walks their bodies, and what the parser
   * left as text but bash runs or evaluates (shellSeeInto.ts). `dq`: 1 inside "...", 2 inside
   * "..." in ${...} in "..." (shellSeeInto.ts); `searched`: inside content already searched as a
   * whole; `arith`: in arithmetic ($((...)), ((...)), $[...], a subscript), where quotes do not quote.
   */
  private scan(node: ShellNode, owner: SimpleCommand | undefined, dq = 0, searched = false, arith = false): void {
    const type = node.type;
    if (type === 'command_substitution' || type === 'process_substitution') {
      if (type === 'process_substitution' && owner) owner.usesProcessSubstitution = true;
      // `$((…))` read as a substitution of a subshell: bash reads it as arithmetic when the `))`
      // closes it (always, in a here-document), where quotes do not quote: `'$(rm x)'` runs.
      if (type === 'command_substitution' && this.source.startsWith('$((', node.startIndex)) {
        this.fail(`bash may read the $(( at ${this.position(node.startIndex)} as arithmetic, not as the subshell the parser saw`);
      }
      if (this.nestedBackticks(node, dq)) return;
      if (this.multiline && node.children[0]?.type !== '`' && semicolonAfterHeredoc(node)) {
        this.fail(`bash 5.2 reads a ';' after a here-document in $(...) or <(...) as a space (at ${this.position(node.startIndex)})`);
      }
      for (const child of node.children) {
        if (STATEMENTS.has(child.type)) this.statement(child);
        else this.scan(child, undefined);
      }
      return;
    }
    if (node.children.length === 0) {
      if (this.multiline && type === 'word' && hasUnescapedNewline(this.text(node))) this.misreadLineBreak(node.startIndex);
      if (arith && (type === 'raw_string' || type === 'ansi_c_string')) {
        // `$(( '$(rm x)' ))` runs rm x
        const text = quotedText(this.source, node);
        this.hidden(text, text, 1);
      }
      if (this.mayHide && !searched && node.isNamed && !LITERAL_LEAVES.has(type)) {
        const text = this.text(node);
        this.hidden(text, text, type === 'string_content' ? Math.max(dq, 1) : dq);
      }
      return;
    }
    if (type === 'expansion') this.fail(evaluatingExpansion(node, this.source));
    const inner = type === 'string' || type === 'translated_string' ? Math.min(dq + 1, 2) : type === 'expansion' ? dq : 0;
    const content = CONTENT_NODES.has(type);
    if (this.mayHide && content) {
      const { from, text } = contentText(node, this.source, inner > 0);
      this.hidden(text, this.source.slice(from, from + text.length), inner);
    }
    // Under an expansion or substitution the parser read, content is searched anew.
    const below = content || (searched && !READ_NODES.has(type));
    const arithBelow = arith || type === 'arithmetic_expansion' || type === 'subscript';
    for (const child of node.children) {
      if (STATEMENTS.has(child.type) && child.type !== 'variable_assignment') this.statement(child);
      else this.scan(child, owner, inner, below, arithBelow);
    }
  }

  /**
   * A backtick substitution ends at the first backtick without a backslash, whatever quotes are
   * in between, and bash removes the backslashes before `, $ and \ before it reads the body
   * (`a \`b\``: b runs). The parser does neither: where it ends elsewhere, the line is not read;
   * where the body has backslashes, the unescaped body is split instead of the tree.
   */
  private nestedBackticks(node: ShellNode, dq: number): boolean {
    const open = node.children[0];
    const close = node.children[node.children.length - 1];
    if (open?.type !== '`') return false;
    const end = closingBacktick(this.source, open.endIndex);
    if (close?.type !== '`' || close === open || end !== close.startIndex) {
      this.fail(`the parser misread the backtick substitution at ${this.position(open.startIndex)}`);
      return true;
    }
    const body = this.source.slice(open.endIndex, end);
    if (!body.includes('\\')) return false;
    if (dq >= 2) this.fail(BACKSLASHES_IN_NESTED_QUOTES);
    else this.splitNested(unescapeBackticks(body, dq > 0));
    return true;
  }

  /** Substitutions in literal text (a word, string or here-document content the parser did not read into). */
  private hidden(masked: string, text: string, dq: number): void {
    for (const h of hiddenSubstitutions(masked, text, dq)) {
      if ('error' in h) this.fail(h.error);
      else this.splitNested(h.body);
    }
  }

  /** Adds the commands of a command string bash runs from within the line. */
  private splitNested(body: string): void {
    const r = this.nested(body);
    this.out.push(...r.commands);
    if (!r.ok) this.fail(`a command in backticks cannot be read: ${r.error ?? 'syntax error'}`);
  }

  // -------------------------------------------------------------------------
  // Words

  /** Appends the words the pieces make to `cmd`, and which of them are not static. */
  private addWords(cmd: SimpleCommand, pieces: Piece[]): readonly boolean[] | undefined {
    const { words, dynamic } = mergePieces(this.source, pieces);
    let flags = dynamicWordsOf(cmd);
    if (flags || dynamic) {
      flags = [...(flags ?? new Array<boolean>(cmd.words.length).fill(false)), ...(dynamic ?? new Array<boolean>(words.length).fill(false))];
      setDynamicWords(cmd, flags);
    }
    cmd.words.push(...words);
    return flags;
  }

  private text(node: ShellNode): string {
    return this.source.slice(node.startIndex, node.endIndex);
  }

  private position(index: number): string {
    return positionOf(this.source, index);
  }
}

/**
 * The simple command that ends `body` and so comes right before a redirect after it: the last
 * command of a pipeline or list, the command a `!` negates. Undefined for a compound command.
 */
function lastSimpleCommand(body: ShellNode): ShellNode | undefined {
  let node: ShellNode | undefined = body;
  while (node !== undefined) {
    switch (node.type) {
      case 'command':
      case 'declaration_command':
      case 'unset_command':
      case 'variable_assignments':
      case 'variable_assignment':
        return node;
      case 'pipeline':
      case 'list':
      case 'negated_command': {
        let last: ShellNode | undefined;
        for (const child of node.children) if (STATEMENTS.has(child.type)) last = child;
        node = last;
        break;
      }
      default:
        return undefined;
    }
  }
  return undefined;
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
