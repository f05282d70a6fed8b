// Seeing into everything (policy-format.md, "Commands"): every command bash would run is a part
// of the split, or the split is unparseable. Each case below was checked against bash 5.2
// (`bash --noprofile --norc -c`); shellVsBash.test.ts checks generated lines against it.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { splitPlainCommand } from '../../src/policy/shell/shellFastSplit.js';
import { splitWithParser } from '../../src/policy/shell/shellSplit.js';
import { hasPart, parts, rejected, words } from './splitAssertions.js';

/** The `dynamic` flag of every part of `source`, in order. */
function dynamics(source: string): boolean[] {
  return parts(source).map((c) => c.dynamic === true);
}

describe('shell split sees into everything', () => {
  before(async () => {
    await initShellParser();
  });

  describe('substitutions inside ${...}', () => {
    for (const [source, inner] of [
      ['echo ${X:-`rm x`}', ['rm', 'x']],
      ['echo ${X:=$(rm x)}', ['rm', 'x']],
      ['echo ${X/$(rm a)/b}', ['rm', 'a']],
      ['echo ${#X[$(rm x)]}', ['rm', 'x']],
      ['echo ${X:-`rm "a b"`}', ['rm', 'a b']],
      ['echo "${X:-`rm x`}"', ['rm', 'x']],
      ['echo "${X:-"`rm x y`"}"', ['rm', 'x', 'y']],
      ['echo ${X:-${Y:-`rm x`}}', ['rm', 'x']],
      ['echo $(( $(rm x) ))', ['rm', 'x']],
      ['echo $[ $(rm x) ]', ['rm', 'x']],
      ['a[$(rm x)]=1', ['rm', 'x']],
      ['((a[$(rm x)]=1))', ['rm', 'x']],
      ['for ((i=$(rm x); i<1; i++)); do :; done', ['rm', 'x']],
    ] as const) {
      it(`${source} has the part ${inner.join(' ')}`, () => hasPart(source, [...inner]));
    }

    it('a backtick body with backslashes in "${X:-"..."}" is read its own way by bash: unparseable', () => {
      // bash runs `rm x y` for "${X:-"`rm x\ y`"}" but `rm 'x y'` for "${X:-`rm x\ y`}"
      rejected('echo "${X:-"`rm x\\ y`"}"', /backslashes/);
      hasPart('echo "${X:-`rm x\\ y`}"', ['rm', 'x y']);
    });

    it('quotes do not quote in arithmetic: bash runs what is in them', () => {
      rejected("echo $(( '$(rm x)' ))");
      rejected("(( '$(rm x)' ))");
      rejected("echo $[ '$(rm x)' ]");
      rejected("echo ${a['$(rm x)']}");
      rejected("echo ${a[$'\\x24(rm x)']}");
      rejected("echo $(( ${X:-'$(rm x)'} ))");
      hasPart("echo $(( '`rm x`' ))", ['rm', 'x']);
      // The parser reads these as a subshell in $(...); bash as arithmetic (found by shellVsBash.test.ts)
      rejected("cat <<EOF\n$(( A=1 p3 b; A=1 nice rm -- '$(rm x)' ))\nEOF", /arithmetic/);
      rejected("echo $((ls) )");
      hasPart('echo $( (rm x) )', ['rm', 'x']);
      // outside arithmetic they do
      assert.deepEqual(words("echo ${X:-'$(rm x)'} '$(rm y)'"), [['echo', "${X:-'$(rm x)'}", '$(rm y)']]);
    });

    it('a substitution the parser leaves as text and cannot be split is unparseable', () => {
      rejected('echo ${X:-`rm x}');
    });
  });

  describe('here-documents and here-strings', () => {
    it('runs $(...), backticks and ${...} in an unquoted body', () => {
      hasPart('cat <<EOF\n$(rm x)\nEOF', ['rm', 'x']);
      hasPart('cat <<EOF\na `rm x` b\nEOF', ['rm', 'x']);
      hasPart('cat <<EOF\n${X:-`rm x`}\nEOF', ['rm', 'x']);
      hasPart('cat <<EOF\n${X:-$(rm x)}\nEOF', ['rm', 'x']);
      hasPart('cat <<-EOF\n\t`rm x`\n\tEOF', ['rm', 'x']);
    });

    it('does not run a quoted body', () => {
      for (const start of ["'EOF'", '"EOF"', 'E\\OF']) {
        assert.deepEqual(words(`cat <<${start}\n$(rm x) \`rm y\` \${X:-\`rm z\`}\nEOF`), [['cat']], start);
      }
    });

    it('runs substitutions in here-strings', () => {
      hasPart('cat <<< $(rm x)', ['rm', 'x']);
      hasPart('cat <<< `rm x`', ['rm', 'x']);
      hasPart('cat <<< "a $(rm x)"', ['rm', 'x']);
    });

    it('keeps the git commit idiom readable', () => {
      assert.deepEqual(words('git commit -m "$(cat <<\'EOF\'\nfix: a; b\n\n$(not run)\nEOF\n)"'), [
        ['git', 'commit', '-m', '"$(cat <<\'EOF\'\nfix: a; b\n\n$(not run)\nEOF\n)"'],
        ['cat'],
      ]);
    });

    it("rejects a ';' after a here-document in $(...) or <(...) (bash 5.2 runs `rm ls`)", () => {
      rejected('x=$(cat <<EOF\nhi\nEOF\nrm; ls)', /here-document/);
      rejected('diff <(cat <<EOF\nhi\nEOF\nrm; ls) f', /here-document/);
      // backticks, and a newline or && after it, bash reads as written
      hasPart('x=`cat <<EOF\nhi\nEOF\nrm; ls`', ['rm']);
      hasPart('x=$(cat <<EOF\nhi\nEOF\nrm && ls)', ['rm']);
    });
  });

  describe('words the parser returns whole, and every place a word can be', () => {
    for (const [source, inner] of [
      ['[[ $(rm x) == y ]]', ['rm', 'x']],
      ['[[ x == $(rm x) ]]', ['rm', 'x']],
      ['[[ x =~ $(rm x) ]]', ['rm', 'x']],
      ['[[ -n `rm x` ]]', ['rm', 'x']],
      ['[ "$(rm x)" ]', ['rm', 'x']],
      ['case $(rm x) in a) ;; esac', ['rm', 'x']],
      ['case a in $(rm x)) ;; esac', ['rm', 'x']],
      ['case a in `rm x`|b) ;; esac', ['rm', 'x']],
      ['a=(x $(rm y))', ['rm', 'y']],
      ['a=(x `rm y`)', ['rm', 'y']],
      ['declare -x a=$(rm x)', ['rm', 'x']],
      ['export a=$(rm x)', ['rm', 'x']],
      ['f() { local a=$(rm x); }', ['rm', 'x']],
      ['readonly a=`rm x`', ['rm', 'x']],
      ['for x in $(rm x); do :; done', ['rm', 'x']],
      ['for x in a `rm x`; do :; done', ['rm', 'x']],
      ['select x in $(rm x); do :; done', ['rm', 'x']],
      ['echo > $(rm x)', ['rm', 'x']],
      ['echo 2>"$(rm x)"', ['rm', 'x']],
      ['echo >> `rm x`', ['rm', 'x']],
      ['cat < <(rm x)', ['rm', 'x']],
      ['echo > >(rm x)', ['rm', 'x']],
      ['coproc rm x', ['rm', 'x']],
      ['coproc (rm x)', ['rm', 'x']],
      ['f() { rm x; }', ['rm', 'x']],
      ['function f { rm x; }', ['rm', 'x']],
      ['f() ( rm x )', ['rm', 'x']],
      ['echo "`rm x`"', ['rm', 'x']],
      ['echo "a `rm x` b"', ['rm', 'x']],
      ['echo `echo \\`rm x\\``', ['rm', 'x']],
      ['time rm x', ['rm', 'x']],
      ['! ! rm x', ['rm', 'x']],
    ] as const) {
      it(`${source} has the part ${inner.join(' ')}`, () => hasPart(source, [...inner]));
    }

    it('$(<file) runs no command', () => {
      assert.deepEqual(words('echo $(<file) $(< f)'), [['echo', '$(<file)', '$(< f)']]);
    });

    it('rejects coproc NAME with a group (the parser cannot read it)', () => {
      rejected('coproc foo { rm x; }');
    });

    it('rejects a backtick substitution the parser ends elsewhere than bash', () => {
      // bash ends `...` at the first backtick without a backslash, quotes or not
      rejected('echo `echo "a`b"`');
    });

    it('rejects a line starting with a backslash that the parser glues to the line before', () => {
      // tree-sitter reads `ls\n\rm -rf x` as one command `ls` with the word `\nrm`; bash runs rm.
      rejected('ls\n\\rm -rf x', /line break/);
      rejected('echo a # c\n\\rm x', /line break/);
      rejected('a=1\n\\rm x', /line break/);
      rejected('p1\n\\\nrm a', /line break/);
      hasPart('echo a |\n\\rm x', ['rm', 'x']);
      hasPart('echo a \\\n b', ['echo', 'a', 'b']);
    });
  });

  describe('text bash evaluates later as code', () => {
    it('eval, trap, builtin, compgen -C and mapfile -C: the string is split as a command', () => {
      hasPart("eval 'rm x'", ['rm', 'x']);
      hasPart("trap 'rm x' EXIT", ['rm', 'x']);
      hasPart("trap -- 'rm x' INT TERM", ['rm', 'x']);
      hasPart("builtin eval 'rm x'", ['rm', 'x']);
      hasPart("compgen -C 'rm x' y", ['rm', 'x']);
      hasPart("mapfile -C 'rm x' -c 1 arr", ['rm', 'x']);
      hasPart("readarray -t -C'rm x' arr", ['rm', 'x']);
    });

    it('rejects an alias definition (the command it makes depends on where it is used)', () => {
      rejected("alias ls='rm x'", /alias/);
      rejected("alias -p ll='ls -l'", /alias/);
      assert.deepEqual(words('alias; alias -p ll'), [['alias'], ['alias', '-p', 'll']]);
    });

    it('rejects a command string with an expansion', () => {
      rejected('trap "$X" EXIT');
      rejected('compgen -C "$C" x');
    });

    it('trap with no command runs nothing', () => {
      assert.deepEqual(words('trap -p'), [['trap', '-p']]);
      assert.deepEqual(words('trap - INT'), [['trap', '-', 'INT']]);
      assert.deepEqual(words("trap '' INT"), [['trap', '', 'INT']]);
      assert.deepEqual(words('trap INT'), [['trap', 'INT']]);
    });

    it('source and . are commands of their own (like running a script)', () => {
      assert.deepEqual(words('source f; . ./g'), [['source', 'f'], ['.', './g']]);
    });

    it('rejects indirect expansion, prompt expansion and namerefs', () => {
      rejected('echo ${!name}', /name/);
      rejected('echo ${!name:-x}');
      rejected('echo ${!a[0]}');
      rejected('echo ${x@P}', /prompt/);
      rejected('declare -n r=x', /nameref/);
      rejected('local -rn r=x');
      rejected('typeset -n r');
      // keys and names are not indirection
      assert.deepEqual(words('echo ${!a[@]} ${!a[*]} ${!p*} ${!p@} ${x@Q}'), [['echo', '${!a[@]}', '${!a[*]}', '${!p*}', '${!p@}', '${x@Q}']]);
      assert.deepEqual(words('export -n x'), [['export', '-n', 'x']]);
    });

    it('rejects a subscript with a command in text bash reads as a name', () => {
      // bash runs rm x for each of these
      rejected("x='a[$(rm x)]'; echo $((x))", /subscript/);
      rejected("declare 'a[$(rm x)]=1'", /subscript/);
      rejected("let 'a[$(rm x)]=1'", /subscript/);
      rejected("read 'a[$(rm x)]' <<< y", /subscript/);
      rejected("printf -v 'a[`rm x`]' y", /subscript/);
      rejected("test -v 'a[$(rm x)]'", /subscript/);
      rejected("a['$(rm x)']=1", /subscript/);
      rejected("[[ 'a[$(rm x)]' -eq 1 ]]", /subscript/);
      rejected("[[ -v 'a[$(rm x)]' ]]", /subscript/);
      hasPart('[[ -v a[$(rm x)] ]]', ['rm', 'x']);
      // ${a[...]} in a command string is read by its own split
      hasPart("bash -c 'echo ${a[$(rm x)]}'", ['rm', 'x']);
    });

    it('rejects PS4 with an expansion and exported function definitions', () => {
      rejected("PS4='$(rm x)'; set -x; :", /PS4/);
      rejected('export PS4="\\`rm x\\`"', /PS4/);
      rejected("env 'BASH_FUNC_ls%%=() { rm x; }' bash -c ls", /function/);
      assert.deepEqual(words("PS4='+ '"), [['PS4=+ ']]);
    });

    it('rejects hash -p (it makes a name run another program)', () => {
      rejected('hash -p /bin/rm ls; ls x', /hash -p/);
    });
  });

  describe('dynamic program names', () => {
    it('marks a part whose program word has an expansion, a glob or a brace expansion', () => {
      for (const source of ['$X y', '"$X" y', '${X} y', '$(echo rm) x', '`echo rm` x', 'r* x', 'r? x', 'r{m,} x', '$DIR/rm x', 'FOO=1 $X y', '> f $X y', 'a$(b) c']) {
        assert.equal(dynamics(source)[0], true, source);
      }
    });

    // tree-sitter hangs the words after the redirect on it; the program is among them
    it('marks the part of a command whose program comes after a redirect of its pipeline', () => {
      assert.deepEqual(dynamics('p1 | a=1 >f $X'), [false, true, true]);
      assert.deepEqual(dynamics('p1 | >f $X y'), [false, true]);
    });

    it('does not mark quoted or escaped spellings, or a dynamic argument', () => {
      for (const source of ["'rm' x", '"rm" x', 'r\\m x', "$'rm' x", "'r*' x", 'r\\* x', '~/bin/rm x', 'A=$X rm', 'rm $X', 'rm *', 'ls {a,b}']) {
        assert.ok(dynamics(source).every((d) => !d), `${source}: ${JSON.stringify(parts(source))}`);
      }
    });

    it('marks unwrapped parts whose program word is dynamic', () => {
      assert.deepEqual(dynamics('env $X y'), [false, true]);
      assert.deepEqual(dynamics('sudo "$CMD"'), [false, true]);
      assert.deepEqual(dynamics('xargs $X'), [false, true]);
      assert.deepEqual(dynamics('find . -exec $X {} \\;'), [false, true]);
      assert.deepEqual(dynamics('FOO=1 $X'), [true, true]);
      assert.deepEqual(dynamics("sudo '$X'"), [false, false]);
    });

    it('rejects a command string with an expansion, but splits a quoted one that has a $ in it', () => {
      rejected('bash -c "$X"');
      rejected('eval rm $X');
      assert.deepEqual(words("bash -c 'echo $HOME'"), [['bash', '-c', 'echo $HOME'], ['echo', '$HOME']]);
      assert.deepEqual(dynamics("bash -c '$X y'"), [false, true]);
    });

    it('the fast path has no dynamic commands and agrees with the parser', () => {
      for (const source of ['npm test', '/bin/rm -rf x', 'FOO=1 ./gradlew build']) {
        assert.deepEqual(splitPlainCommand(source), splitWithParser(source), source);
      }
    });
  });

  describe('programs named by their path', () => {
    it('adds the command with the program basename', () => {
      assert.deepEqual(words('/bin/rm -rf x'), [['/bin/rm', '-rf', 'x'], ['rm', '-rf', 'x']]);
      assert.deepEqual(words('./rm x'), [['./rm', 'x'], ['rm', 'x']]);
      assert.deepEqual(words('~/bin/rm x'), [['~/bin/rm', 'x'], ['rm', 'x']]);
      assert.deepEqual(words('FOO=1 /bin/rm x'), [['FOO=1', '/bin/rm', 'x'], ['/bin/rm', 'x'], ['rm', 'x']]);
    });

    it('unwraps wrappers named by their path', () => {
      assert.deepEqual(words('/usr/bin/env rm x'), [['/usr/bin/env', 'rm', 'x'], ['env', 'rm', 'x'], ['rm', 'x']]);
      hasPart('/usr/bin/sudo rm x', ['rm', 'x']);
      hasPart("/bin/bash -c 'rm x'", ['rm', 'x']);
      hasPart('/usr/bin/env /bin/rm x', ['rm', 'x']);
    });

    it('leaves a dynamic path or a folder alone', () => {
      assert.deepEqual(words('$DIR/rm x'), [['$DIR/rm', 'x']]);
      assert.deepEqual(words('dir/ x'), [['dir/', 'x']]);
    });
  });

  describe('through the engine', () => {
    const POLICY = JSON.stringify({
      version: 1,
      rules: [
        { id: 'no-rm', tools: ['builtin.run_command'], commands: ['rm *'], decision: 'deny' },
        { id: 'rest', tools: ['builtin.run_command'], commands: ['*'], decision: 'allow' },
      ],
    });
    const decision = (command: string): string => {
      const layer = loadPolicyText(POLICY, '.agentpolicy.jsonc', 'workspace');
      return new Policy({ workspace: layer }).decide({ tool: { id: 'builtin.run_command' }, input: { command }, agent: 'main' }, { workspaceFolder: os.tmpdir() })
        .decision;
    };

    for (const command of [
      '/bin/rm -rf x',
      '/usr/bin/env rm x',
      'echo ${X:-`rm x`}',
      'cat <<EOF\n`rm x`\nEOF',
      "trap 'rm x' EXIT",
      '$X y',
      'r* x',
      '! ! rm x',
      'a[1]=x rm y',
      'env - rm x',
    ]) {
      it(`denies ${JSON.stringify(command)}`, () => assert.equal(decision(command), 'deny'));
    }

    for (const command of ['ls\n\\rm -rf x', 'echo ${!x}', "x='a[$(rm y)]'; echo $((x))"]) {
      it(`never allows ${JSON.stringify(command)}`, () => assert.notEqual(decision(command), 'allow'));
    }

    it('still allows plain and quoted commands', () => {
      assert.equal(decision('ls -la'), 'allow');
      assert.equal(decision("'ls' \"$HOME\""), 'allow');
    });
  });
});
