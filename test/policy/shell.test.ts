import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import fc from 'fast-check';
import { SHELL_PARSER_WASM_FILES, initShellParser, isShellParserReady, shellParserWasmPaths } from '../../src/policy/shell/shellParser.js';
import { isReservedWord, splitPlainCommand, splitQuotedCommand } from '../../src/policy/shell/shellFastSplit.js';
import { dynamicWordsOf } from '../../src/policy/shell/shellDynamic.js';
import { splitCommand, splitWithParser, type SplitResult } from '../../src/policy/shell/shellSplit.js';
import type { SimpleCommand } from '../../src/policy/shell/shellWalker.js';
import { parts, words } from './splitAssertions.js';

function cmd(w: string[], writesToFile = false, usesProcessSubstitution = false): SimpleCommand {
  return { words: w, writesToFile, usesProcessSubstitution };
}

function failed(source: string): Extract<SplitResult, { ok: false }> {
  const result = splitCommand(source);
  assert.equal(result.ok, false, `expected ${JSON.stringify(source)} to be rejected, got ${JSON.stringify(result)}`);
  if (result.ok) throw new Error('unreachable');
  assert.equal(typeof result.error, 'string');
  assert.ok(result.error.length > 0);
  return result;
}

describe('shell splitCommand', () => {
  before(async () => {
    await initShellParser();
  });

  describe('init', () => {
    it('is ready after initShellParser, and a second init is a no-op', async () => {
      assert.equal(isShellParserReady(), true);
      await initShellParser();
      assert.deepEqual(words('ls'), [['ls']]);
    });

    it('reports the wasm files it loads', () => {
      assert.deepEqual(
        SHELL_PARSER_WASM_FILES.map((f) => f.file),
        ['web-tree-sitter.wasm', 'tree-sitter-bash.wasm'],
      );
      const paths = shellParserWasmPaths();
      assert.ok(paths.runtime && fs.statSync(paths.runtime).isFile());
      assert.ok(paths.grammar && fs.statSync(paths.grammar).isFile());
      assert.ok(paths.runtime.endsWith('web-tree-sitter.wasm'));
      assert.ok(paths.grammar.endsWith('tree-sitter-bash.wasm'));
    });
  });

  describe('splitting on operators', () => {
    it('splits on ;', () => {
      assert.deepEqual(parts('npm test; rm -rf /'), [cmd(['npm', 'test']), cmd(['rm', '-rf', '/'])]);
    });

    it('splits on &&, ||, |, &', () => {
      assert.deepEqual(words('a && b || c | d & e'), [['a'], ['b'], ['c'], ['d'], ['e']]);
    });

    it('splits on |&', () => {
      assert.deepEqual(words('make |& tee log'), [['make'], ['tee', 'log']]);
    });

    it('splits on newlines', () => {
      assert.deepEqual(words('git status\nnpm test'), [['git', 'status'], ['npm', 'test']]);
      assert.deepEqual(words('git status\n\n  npm test\n'), [['git', 'status'], ['npm', 'test']]);
    });

    it('accepts a trailing ; or &', () => {
      assert.deepEqual(words('ls;'), [['ls']]);
      assert.deepEqual(words('sleep 1 &'), [['sleep', '1']]);
    });

    it('handles long && chains', () => {
      const source = Array.from({ length: 5000 }, (_, i) => `echo ${i}`).join(' && ');
      const commands = words(source);
      assert.equal(commands.length, 5000);
      assert.deepEqual(commands[4999], ['echo', '4999']);
    });
  });

  describe('quoting and words', () => {
    it('does not split inside quotes and removes them', () => {
      assert.deepEqual(words(`echo "a;b" 'c && d'`), [['echo', 'a;b', 'c && d']]);
    });

    it('removes backslash escapes and joins adjacent quoted parts', () => {
      assert.deepEqual(words(`echo a\\ b 'c'"d"e \\$y "\\$x" "\\"q\\""`), [['echo', 'a b', 'cde', '$y', '$x', '"q"']]);
    });

    it('keeps a backslash inside double quotes unless it escapes $ ` " \\', () => {
      assert.deepEqual(words(`grep "\\.ts$" x`), [['grep', '\\.ts$', 'x']]);
    });

    it('decodes $\'...\' strings and drops the $ of $"..."', () => {
      assert.deepEqual(words(`printf $'a\\nb\\t\\x41\\'' $"tr"`), [['printf', "a\nb\tA'", 'tr']]);
    });

    it('keeps the raw source text of words with expansions', () => {
      assert.deepEqual(words('echo $HOME "$HOME/x" ${A:-b} a$((1+2)) pre"$(id)"'), [
        ['echo', '$HOME', '"$HOME/x"', '${A:-b}', 'a$((1+2))', 'pre"$(id)"'],
        ['id'],
      ]);
    });

    it('treats a line continuation as nothing (r\\<newline>m is rm)', () => {
      assert.deepEqual(words('r\\\nm -rf /'), [['rm', '-rf', '/']]);
      assert.deepEqual(words('echo "a\\\nb"'), [['echo', 'ab']]);
      assert.deepEqual(words('npm \\\n  test'), [['npm', 'test']]);
    });

    it('keeps globs, braces and tildes as written', () => {
      assert.deepEqual(words('ls *.ts ~/x {a,b}'), [['ls', '*.ts', '~/x', '{a,b}']]);
    });

    it('handles non-ASCII text', () => {
      assert.deepEqual(words('echo é😀"ü" 日本'), [['echo', 'é😀ü', '日本']]);
    });
  });

  describe('assignments', () => {
    it('keeps leading assignments as words', () => {
      // The command without its assignments is a further part ("Programs that run programs are unwrapped").
      assert.deepEqual(parts('FOO=1 npm test'), [cmd(['FOO=1', 'npm', 'test']), cmd(['npm', 'test'])]);
      assert.deepEqual(words(`A="a b" B='c' cmd "$A"`), [['A=a b', 'B=c', 'cmd', '"$A"'], ['cmd', '"$A"']]);
    });

    it('makes an assignment-only statement one command', () => {
      assert.deepEqual(parts('X=1'), [cmd(['X=1'])]);
      assert.deepEqual(words('A=1 B="x y"'), [['A=1', 'B=x y']]);
    });

    it('lists the command in an assignment value', () => {
      assert.deepEqual(words('x=$(rm y)'), [['x=$(rm y)'], ['rm', 'y']]);
    });

    it('treats export/local/unset as commands', () => {
      assert.deepEqual(words('export A=1 B=$(x) C'), [['export', 'A=1', 'B=$(x)', 'C'], ['x']]);
      assert.deepEqual(words('unset a b'), [['unset', 'a', 'b']]);
    });
  });

  describe('nested commands', () => {
    it('lists the body of $(...) as well as the outer command', () => {
      assert.deepEqual(parts('npm test $(rm -rf x)'), [cmd(['npm', 'test', '$(rm -rf x)']), cmd(['rm', '-rf', 'x'])]);
    });

    it('lists the body of backticks', () => {
      assert.deepEqual(words('echo `rm -rf x; ls`'), [['echo', '`rm -rf x; ls`'], ['rm', '-rf', 'x'], ['ls']]);
    });

    it('lists nested substitutions', () => {
      assert.deepEqual(words('echo "$(cat $(ls))"'), [['echo', '"$(cat $(ls))"'], ['cat', '$(ls)'], ['ls']]);
    });

    it('lists substitutions inside ${...}', () => {
      assert.deepEqual(words('echo ${x:-$(rm y)}'), [['echo', '${x:-$(rm y)}'], ['rm', 'y']]);
    });

    it('splits subshells', () => {
      assert.deepEqual(words('(cd x && make)'), [['cd', 'x'], ['make']]);
    });

    it('splits { ...; } groups', () => {
      assert.deepEqual(words('{ a; b; } && c'), [['a'], ['b'], ['c']]);
    });

    it('splits if bodies', () => {
      assert.deepEqual(words('if true; then rm x; fi'), [['true'], ['rm', 'x']]);
      assert.deepEqual(words('if a; then b; elif c; then d; else e; fi'), [['a'], ['b'], ['c'], ['d'], ['e']]);
    });

    it('splits for / while / until / select bodies', () => {
      assert.deepEqual(parts('for f in *; do rm "$f"; done'), [cmd(['rm', '"$f"'])]);
      assert.deepEqual(words('for f in $(ls); do echo $f; done'), [['ls'], ['echo', '$f']]);
      assert.deepEqual(words('while read l; do echo "$l"; done'), [['read', 'l'], ['echo', '"$l"']]);
      assert.deepEqual(words('until false; do sleep 1; done'), [['false'], ['sleep', '1']]);
      assert.deepEqual(words('for ((i=0; i<3; i++)); do echo $i; done'), [['echo', '$i']]);
    });

    it('splits case bodies', () => {
      assert.deepEqual(words('case $x in a) rm a;; *) ls;; esac'), [['rm', 'a'], ['ls']]);
    });

    it('splits function bodies', () => {
      assert.deepEqual(words('f() { rm x; }; f'), [['rm', 'x'], ['f']]);
      assert.deepEqual(words('function g { git push; }'), [['git', 'push']]);
    });

    it('lists [ ] and [[ ]] tests as commands', () => {
      assert.deepEqual(words('[ -f x ] && [[ $a == b* ]]'), [
        ['[', '-f', 'x', ']'],
        ['[[', '$a', '==', 'b*', ']]'],
      ]);
    });

    it('lists negated commands', () => {
      assert.deepEqual(words('! grep -q x f'), [['grep', '-q', 'x', 'f']]);
    });
  });

  describe('redirections', () => {
    for (const [source, expected] of [
      ['echo hi > out.txt', ['echo', 'hi']],
      ['echo hi >> out', ['echo', 'hi']],
      ['cmd &> f', ['cmd']],
      ['cmd &>> f', ['cmd']],
      ['cmd >| f', ['cmd']],
      ['cmd 2> err.log', ['cmd']],
      ['cmd 1>out', ['cmd']],
      ['cmd >& out', ['cmd']],
      ['cmd > "$OUT"', ['cmd']],
      ['cmd 2>&1 > out', ['cmd']],
    ] as const) {
      it(`${source} writes to a file`, () => {
        assert.deepEqual(parts(source), [cmd([...expected], true)]);
      });
    }

    for (const source of [
      'cmd 2>&1',
      'cmd >&2',
      'cmd 2>&-',
      'cmd > /dev/null',
      'cmd 2>/dev/null',
      'cmd &>/dev/null',
      'cmd > "/dev/null"',
      'cmd < in.txt',
      'cmd <&3',
      'cat <<< "text"',
    ]) {
      it(`${source} does not write to a file`, () => {
        const commands = parts(source);
        assert.equal(commands.length, 1);
        assert.equal(commands[0]!.writesToFile, false);
      });
    }

    it('keeps words that follow a redirection', () => {
      assert.deepEqual(parts('echo > f hi there'), [cmd(['echo', 'hi', 'there'], true)]);
      assert.deepEqual(parts('> f echo hi'), [cmd(['echo', 'hi'], true)]);
    });

    it('reports a redirection without a command as an empty command that writes', () => {
      assert.deepEqual(parts('> f'), [cmd([], true)]);
    });

    it('applies a trailing redirect only to the last command of a pipeline or list', () => {
      assert.deepEqual(parts('a | b > f'), [cmd(['a']), cmd(['b'], true)]);
      assert.deepEqual(parts('a && b > f'), [cmd(['a']), cmd(['b'], true)]);
    });

    it('applies a redirect of a group or compound command to all its commands', () => {
      assert.deepEqual(parts('{ a && b; } > f'), [cmd(['a'], true), cmd(['b'], true)]);
      assert.deepEqual(parts('for x in 1; do echo $x; done >> log'), [cmd(['echo', '$x'], true)]);
    });

    it('does not mark commands inside a substitution as writing', () => {
      assert.deepEqual(parts('echo $(ls) > f'), [cmd(['echo', '$(ls)'], true), cmd(['ls'])]);
    });
  });

  describe('process substitution', () => {
    it('flags <(...) and lists the inner commands', () => {
      assert.deepEqual(parts('diff <(ls a) <(ls b)'), [
        cmd(['diff', '<(ls a)', '<(ls b)'], false, true),
        cmd(['ls', 'a']),
        cmd(['ls', 'b']),
      ]);
    });

    it('flags >(...) as a redirect target', () => {
      assert.deepEqual(parts('echo x > >(tee y)'), [cmd(['echo', 'x'], false, true), cmd(['tee', 'y'])]);
    });

    it('flags the commands fed by a redirect from <(...)', () => {
      assert.deepEqual(parts('while read l; do echo $l; done < <(ls)'), [
        cmd(['read', 'l'], false, true),
        cmd(['echo', '$l'], false, true),
        cmd(['ls']),
      ]);
    });

    it('does not flag $(...)', () => {
      assert.equal(parts('echo $(ls)')[0]!.usesProcessSubstitution, false);
    });
  });

  describe('heredocs', () => {
    it('does not treat the body as commands', () => {
      assert.deepEqual(parts('cat <<EOF\nrm -rf /\nEOF\necho done'), [cmd(['cat']), cmd(['echo', 'done'])]);
    });

    it('does not treat a quoted-delimiter body as commands', () => {
      assert.deepEqual(words("cat <<'EOF'\n$(rm x)\nEOF"), [['cat']]);
    });

    it('lists command substitutions in an unquoted body (they run)', () => {
      assert.deepEqual(words('cat <<EOF\nhello $(id)\nEOF'), [['cat'], ['id']]);
    });

    it('splits the rest of the heredoc line', () => {
      assert.deepEqual(parts('cat <<EOF | grep x > out\nbody\nEOF'), [cmd(['cat']), cmd(['grep', 'x'], true)]);
    });
  });

  describe('empty input', () => {
    for (const source of ['', '   ', '\n\n', '# just a comment', '  # c1\n# c2\n']) {
      it(`${JSON.stringify(source)} has no commands`, () => {
        assert.deepEqual(splitCommand(source), { ok: true, commands: [] });
      });
    }

    it('ignores trailing comments', () => {
      assert.deepEqual(words('echo hi # rm -rf /'), [['echo', 'hi']]);
    });
  });

  describe('syntax errors', () => {
    it('rejects a dangling operator and keeps what it could parse', () => {
      const r = failed('npm test &&');
      assert.deepEqual(r.commands, [cmd(['npm', 'test'])]);
      failed('a |');
      failed('| a');
      failed('&& a');
      failed('a ;; b');
    });

    it('rejects unbalanced quotes', () => {
      const r = failed('echo "abc');
      assert.deepEqual(r.commands, [cmd(['echo'])]);
      failed("echo 'abc");
      failed("echo $'abc");
    });

    it('rejects unclosed substitutions, subshells and groups', () => {
      const r = failed('echo $(ls');
      assert.ok(r.commands.some((c) => c.words[0] === 'ls'));
      failed('echo `ls');
      failed('(cd x');
      failed('{ a');
      failed('echo ${x');
      failed('echo )');
    });

    it('rejects incomplete compound commands', () => {
      failed('if true; then');
      failed('for x in a; do echo');
      failed('case x in');
    });

    it('rejects reserved words out of place', () => {
      failed('fi');
      failed('done');
      failed('echo a; then b');
    });

    it('rejects a redirect without a target', () => {
      failed('echo >');
    });

    it('says where the error is', () => {
      assert.match(failed('echo ok\necho "abc').error, /line 2/);
    });
  });

  describe('robustness', () => {
    function checkShape(result: SplitResult): void {
      assert.equal(typeof result.ok, 'boolean');
      assert.ok(Array.isArray(result.commands));
      if (!result.ok) assert.equal(typeof result.error, 'string');
      for (const c of result.commands) {
        assert.ok(Array.isArray(c.words));
        for (const w of c.words) assert.equal(typeof w, 'string');
        assert.equal(typeof c.writesToFile, 'boolean');
        assert.equal(typeof c.usesProcessSubstitution, 'boolean');
      }
    }

    it('never throws on random strings (any code unit, NUL, lone surrogates)', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => {
          checkShape(splitCommand(s));
        }),
        { numRuns: 3000 },
      );
    });

    it('never throws on random unicode strings', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'grapheme', maxLength: 100 }), (s) => {
          checkShape(splitCommand(s));
        }),
        { numRuns: 1000 },
      );
    });

    it('never throws on random shell-like token soup', () => {
      const token = fc.constantFrom(
        'a', 'rm', ' ', '\t', ';', '&&', '||', '|', '&', '\n', '"', "'", '$(', ')', '(', '`', '{', '}', '<(', '>(',
        '>', '>>', '&>', '2>&1', '<<', 'EOF', '<<<', '$', '${', '\\', '#', 'if', 'then', 'fi', 'for', 'in', 'do',
        'done', 'case', 'esac', ';;', '=', 'x=1', '$((', '[[', ']]', '!', '\0', 'é', '😀', '\uD800',
      );
      fc.assert(
        fc.property(fc.array(token, { maxLength: 60 }), (tokens) => {
          checkShape(splitCommand(tokens.join('')));
        }),
        { numRuns: 3000 },
      );
    });

    it('returns ok:false instead of throwing on absurd nesting', () => {
      const deep = '$('.repeat(20000) + 'ls' + ')'.repeat(20000);
      const r = splitCommand(deep);
      checkShape(r);
      // the parser keeps working afterwards
      assert.deepEqual(words('echo ok'), [['echo', 'ok']]);
    });

    it('handles NUL bytes', () => {
      checkShape(splitCommand('echo a\0b; ls'));
      checkShape(splitCommand('\0'));
    });
  });
});

describe('plain-command fast path', () => {
  before(async () => {
    await initShellParser();
  });

  // tree-sitter-bash rejects a few valid plain commands (`FOO=1 a:`); there the fast path is
  // right by POSIX and the parser's refusal only ever made the call stricter. It passes over a
  // lone `-` before an assignment (`- FOO=1`), which the split then refuses the same way.
  it('agrees with the parser on every plain command the parser accepts', () => {
    const alphabet = 'ab1 \t_./=:@%+,-'.split('');
    const word = fc.oneof(
      fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 12 }),
      fc.constantFrom('npm', 'test', 'git', 'status', 'if', 'fi', 'do', 'done', 'FOO=1', '--x=y', 'in', 'time', '{', '}'),
    );
    const operator = fc.constantFrom(' ', ' ', ' ', ' && ', '||', ';', ' ; ', '&', ' & ', '|', ' | ', '|&', ';;', '&&&');
    fc.assert(
      fc.property(fc.array(fc.tuple(word, operator), { maxLength: 8 }), (pairs) => {
        const source = pairs.map(([w, op], i) => (i === 0 ? w : op + w)).join('');
        const fast = splitPlainCommand(source);
        if (fast === undefined) return;
        const parsed = splitWithParser(source);
        if (parsed.ok) assert.deepEqual(fast, parsed, source);
        else assert.ok(fast.ok, source); // bash reads these as the fast path does (shellVsBash.test.ts runs them)
      }),
      { numRuns: 5000 },
    );
  });

  it('knows exactly the reserved words, by comparing (no hashing)', () => {
    const reserved = ['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'in', 'function', 'select', 'time', 'coproc', '{', '}', '!', '[[', ']]'];
    for (const w of reserved) assert.equal(isReservedWord(w), true, w);
    for (const w of ['', 'i', 'iff', 'If', 'fi ', 'functions', 'tim', '{{', 'done2', 'npm']) assert.equal(isReservedWord(w), false, w);
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...'ifthenlsdocawhu{}![]'.split('')), maxLength: 9 }), (w) => {
      assert.equal(isReservedWord(w), reserved.includes(w), w);
    }), { numRuns: 5000 });
  });

  it('leaves anything with quotes, expansions, redirections, reserved words or an empty command to the parser', () => {
    for (const source of ['echo "a b"', 'echo $HOME', 'ls *', 'a > f', 'if true', 'echo `x`', 'a\nb', '# c', 'a;;b', '&& a', 'a &', 'a | | b', 'a && { b; }']) {
      assert.equal(splitPlainCommand(source), undefined, source);
    }
    assert.deepEqual(splitPlainCommand('npm test; rm x')!.commands.map((c) => c.words), [['npm', 'test'], ['rm', 'x']]);
    assert.deepEqual(splitPlainCommand('a|b&&c||d&e|&f')!.commands.map((c) => c.words), [['a'], ['b'], ['c'], ['d'], ['e'], ['f']]);
    assert.deepEqual(splitPlainCommand('FOO=1 npm run lint src/a.ts'), {
      ok: true, commands: [{ words: ['FOO=1', 'npm', 'run', 'lint', 'src/a.ts'], writesToFile: false, usesProcessSubstitution: false }],
    });
  });
});

describe('quoted fast path', () => {
  before(async () => {
    await initShellParser();
  });

  /** A split with each command's non-static words beside it, as the engine reads them. */
  const withDynamics = (r: SplitResult) => ({ ...r, dynamics: r.commands.map((c) => dynamicWordsOf(c) ?? null) });

  // Pieces of words, from tame to hostile, so that both the path taken and every way out of it are exercised.
  const plain = fc.string({ unit: fc.constantFrom(...'ab1_./=:@%+,-'.split('')), minLength: 1, maxLength: 6 });
  const anyChar = fc.constantFrom(...'ab1 	_./=:@%+,;&|*?#~<>(){}[]^!$`\\\'"\n-'.split(''));
  const inner = fc.oneof(
    fc.constantFrom('date +%s', 'b c', ' b ', 'b && c', 'b|c', 'if', '', 'b;', '$(b)', 'b "c"'),
    fc.string({ unit: fc.constantFrom(...'ab %+&|;( -'.split('')), maxLength: 8 }),
  );
  const tame = fc.string({ unit: fc.constantFrom(...'ab1 _./=:@%+,;&|*?#~<>(){}[]^-'.split('')), maxLength: 6 });
  const piece = fc.oneof(
    { weight: 6, arbitrary: plain },
    { weight: 3, arbitrary: fc.oneof(tame, fc.string({ unit: anyChar, maxLength: 6 })).map((t) => `'${t}'`) },
    { weight: 3, arbitrary: fc.array(fc.oneof(tame, fc.string({ unit: anyChar, maxLength: 4 }), inner.map((x) => `$(${x})`)), { maxLength: 3 }).map((ps) => `"${ps.join('')}"`) },
    { weight: 3, arbitrary: inner.map((x) => `$(${x})`) },
    { weight: 1, arbitrary: fc.constantFrom('if', 'done', '%1', 'FOO=1', '!', '$HOME', '`b`', '\\x', '~', '#c', 'a=\'b c\'', '==') },
  );
  const word = fc.array(piece, { minLength: 1, maxLength: 3 }).map((ps) => ps.join(''));
  // Mostly a plain program with such arguments; sometimes any word leads.
  const leading = fc.oneof({ weight: 5, arbitrary: fc.constantFrom('npm', 'git', 'a', 'FOO=1 b', 'x=1', 'x=1 c') }, { weight: 1, arbitrary: word });
  const command = fc.tuple(leading, fc.array(word, { maxLength: 3 })).map(([p, args]) => [p, ...args].join(' '));
  const operator = fc.constantFrom(' && ', '||', ';', ' ; ', '&', ' | ', '|&', ';;', ' ');

  it('agrees with the parser, words, parts and their static-ness, on every line it takes', () => {
    let taken = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(command, operator), { minLength: 1, maxLength: 4 }), (pairs) => {
        const source = pairs.map(([w, op], i) => (i === 0 ? w : op + w)).join('');
        // Plain lines never reach this path (the plain path's property covers them, and tree-sitter's misreads of them).
        if (splitPlainCommand(source) !== undefined) return;
        const fast = splitQuotedCommand(source);
        if (fast === undefined) return;
        taken++;
        const parsed = splitWithParser(source);
        assert.ok(parsed.ok, `${source}: the fast path took a line the parser refuses (${parsed.ok ? '' : parsed.error})`);
        assert.deepEqual(withDynamics(fast), withDynamics(parsed), source);
      }),
      { numRuns: Number(process.env.QUOTED_RUNS ?? 20000) },
    );
    assert.ok(taken > 800, `the fast path took ${taken} of 20,000 lines: the property would prove little`);
  });

  it('takes the common shapes with quotes and substitutions, keeping a substituted word as written', () => {
    const r = splitQuotedCommand('npm run task5 -- --since "$(date +%s)" && grep -n \'a b\' src');
    assert.ok(r?.ok);
    assert.deepEqual(r.commands.map((c) => c.words), [['npm', 'run', 'task5', '--', '--since', '"$(date +%s)"'], ['date', '+%s'], ['grep', '-n', 'a b', 'src']]);
    assert.deepEqual(dynamicWordsOf(r.commands[0]!), [false, false, false, false, false, true]);
  });

  it('leaves the program word, assignments and anything else unusual to the parser', () => {
    for (const source of ['"rm" x', '$(b) x', 'X="a b" c', 'X=$(b) c', 'a "$HOME"', 'a "`b`"', 'a "\\$x"', "a $'x'", 'a $(b "c")', 'a $((1))', 'a $(b', "a 'b", 'a "b', 'a \'b\nc\'', 'a "x" >f', 'a;', 'a "b" &', 'a ;; b', 'if "x"', '%1 "x"', 'a ~/"x"']) {
      assert.equal(splitQuotedCommand(source), undefined, source);
    }
  });
});

