// The splitter against real bash: command lines built from a grammar of pieces run with
// `bash --noprofile --norc -c --` (as the runtime runs them), with PATH holding only stub programs
// that log their name and arguments (and links to the few real wrappers the grammar uses).
// Every program that ran must be some part of the split, or the split is unparseable (never
// allowed) or has a dynamic part (never allowed, matched by every deny).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { splitCommand, splitWithParser } from '../../src/policy/shell/shellSplit.js';
import { unwrapCommands } from '../../src/policy/shell/shellUnwrap.js';

const BASH = '/bin/bash';
const STUBS = ['p1', 'p2', 'p3', 'rm'];
/** Programs with names the grammar does not use, for lines the parser once misread (`-`, a space). */
const ODD_STUBS = ['-', ' '];
/** Exit status of each stub: p2 fails, so `||`, `if` and `until` take both ways. */
const STATUS: Record<string, number> = { p1: 0, p2: 1, p3: 0, rm: 0 };
/** Real programs the grammar wraps stubs in; found on the machine and linked into the stub folder. */
const REAL = ['env', 'xargs', 'nice', 'timeout', 'bash'];

const FIELD = '\x1f';
const RECORD = '\x1e';

/** Escapes `s` for use inside '...'. */
function singleQuoted(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `list` followed by what ends a command before a closing word: `;` or, after a here-document, nothing. */
function term(list: string): string {
  return list.endsWith('\n') ? list : `${list};`;
}

/**
 * A grammar of command lines over the stubs, nested up to `depth` levels (substitutions,
 * groups, compound commands); `bin` is the stub folder (for absolute program paths).
 */
function commandLines(bin: string, depth = 2): fc.Arbitrary<string> {
  const name = fc.constantFrom(...STUBS);
  const program = fc.oneof(
    { weight: 6, arbitrary: name },
    { weight: 1, arbitrary: name.map((n) => `'${n}'`) },
    { weight: 1, arbitrary: name.map((n) => `"${n}"`) },
    { weight: 1, arbitrary: name.map((n) => `\\${n}`) },
    { weight: 1, arbitrary: name.map((n) => `${bin}/${n}`) },
  );
  const staticArg = fc.constantFrom('a', 'b', '-x', "'b c'", '"d e"', 'x\\ y', "'$(p3)'", '\\$\\(p3\\)', '"\\`p3\\`"', '--', "$'f\\tg'", 'h\\\ni', '{', ']');
  // A simple command with no substitution in it (a backtick body, a here-document line).
  const plain = fc.tuple(name, fc.array(staticArg, { maxLength: 2 })).map(([n, args]) => [n, ...args].join(' '));
  const simple = (arg: fc.Arbitrary<string>): fc.Arbitrary<string> =>
    fc
      .tuple(
        fc.constantFrom('', '', '', 'A=1 ', 'A="$(p3 q)" '),
        fc.constantFrom('', '', '', '', 'env ', 'env A=2 ', 'command ', 'nice ', 'timeout 5 ', 'xargs -a /dev/null ', 'builtin command '),
        program,
        fc.array(arg, { maxLength: 2 }),
      )
      .map(([assign, wrapper, p, args]) => `${assign}${wrapper}${[p, ...args].join(' ')}`);
  const listOf = (statement: fc.Arbitrary<string>): fc.Arbitrary<string> =>
    fc
      .tuple(statement, fc.array(fc.tuple(fc.constantFrom('; ', ' && ', ' || ', ' | ', '\n', ' & ', ' |& ', ';'), statement), { maxLength: 1 }))
      // after a here-document the newline ends the command
      .map(([first, rest]) => rest.reduce((acc, [sep, s]) => (acc.endsWith('\n') ? `${acc}${s}` : `${acc}${sep}${s}`), first));

  // Lists nested up to d levels.
  const level = (d: number): fc.Arbitrary<string> => {
    if (d === 0) return listOf(simple(staticArg));
    const l = level(d - 1);
    const arg = fc.oneof(
      { weight: 12, arbitrary: staticArg },
      fc.constant('$v'),
      l.map((x) => `$(${x})`),
      l.map((x) => `"$(${x})"`),
      plain.map((p) => `\`${p}\``),
      plain.map((p) => `"a \`${p}\` b"`),
      l.map((x) => `\${X:-$(${x})}`),
      plain.map((p) => `\${X:-\`${p}\`}`),
      plain.map((p) => `"\${X:-\`${p}\`}"`),
      l.map((x) => `\${X:=$(${x})}`),
      l.map((x) => `\${X/$(${x})/b}`),
      l.map((x) => `\${#X[$(${x})]}`),
      l.map((x) => `$((1+$(${x})0))`),
      l.map((x) => `$[ $(${x}) + 1 ]`),
      plain.map((p) => `\`echo \\\`${p}\\\`\``),
      l.map((x) => `<(${x})`),
      plain.map((p) => `"\${X:-"\`${p}\`"}"`),
      l.map((x) => `\${X:-"$(${x})"}`),
      plain.map((p) => `$(( '\`${p}\`'1 ))`),
      l.map((x) => `\${X:-'$(${x})'}`),
    );
    const statement = fc.oneof(
      { weight: 12, arbitrary: simple(arg) },
      fc.tuple(simple(arg), fc.constantFrom('> /dev/null', '2>/dev/null', '> "o$(p3 r)"', '2>"e`p3 s`"', '< <(p1 t)', '<<< "$(p3 h)"')).map(([s, r]) => `${s} ${r}`),
      // words after a redirect are arguments (tree-sitter hangs them on the redirect)
      fc.tuple(simple(arg), fc.constantFrom('>/dev/null', '2>&1', '>&2', '</dev/null', '0<&-', '2>&-', '{fd}>/dev/null'), fc.array(staticArg, { minLength: 1, maxLength: 2 })).map(([s, r, a]) => `${s} ${r} ${a.join(' ')}`),
      fc.tuple(name, fc.constantFrom('', '-p ', '-p -- '), fc.constantFrom('! ', '! ! ', '')).map(([n, o, neg]) => `time ${o}${neg}${n} a`),
      l.map((x) => `( ${x} )`),
      l.map((x) => `{ ${term(x)} }`),
      fc.tuple(l, l, l).map(([c, t, e]) => `if ${term(c)} then ${term(t)} else ${term(e)} fi`),
      fc.tuple(l, l).map(([w, b]) => `for v in a $(${w}); do ${term(b)} done`),
      fc.tuple(l, l).map(([w, b]) => `select v in $(${w}) z; do ${term(b)} break; done <<< 1`),
      fc.tuple(l, l, l).map(([w, a, b]) => `case $(${w})x in x) ${a} ;; *) ${b} ;; esac`),
      fc.tuple(l, l).map(([c, b]) => `until ${term(c)} p1; do ${term(b)} done`),
      l.map((x) => `fn() { ${term(x)} }; fn`),
      fc.tuple(name, l, plain).map(([n, x, p]) => `${n} <<EOF\nline $(${x}) and \`${p}\` \${X:-\`${p}\`}\nEOF\n`),
      fc.tuple(name, plain).map(([n, p]) => `${n} <<'EOF'\n$(${p}) \`${p}\`\nEOF\n`),
      fc.tuple(name, fc.array(staticArg, { minLength: 1, maxLength: 2 })).map(([n, a]) => `${n} <<EOF ${a.join(' ')}\nline\nEOF\n`),
      l.map((x) => `[[ -n $(${x}) ]]`),
      l.map((x) => `arr=(x $(${x}))`),
      l.map((x) => `declare -x d=$(${x})`),
      l.map((x) => `! ${x.endsWith('\n') ? 'p1' : x}`),
      l.map((x) => `bash -c ${singleQuoted(x)}`),
      l.map((x) => `eval ${singleQuoted(x)}`),
      l.map((x) => `trap ${singleQuoted(x)} EXIT`),
      simple(arg).map((x) => `coproc ${x} < /dev/null; wait`),
      simple(arg).map((x) => `time ${x}`),
      fc.tuple(l, l).map(([c, b]) => `while ${term(c)} p2; do ${term(b)} done`),
      l.map((x) => `function fn2 { ${term(x)} }; fn2`),
      l.map((x) => `(( $(${x}) 1 ))`),
      l.map((x) => `[[ $(${x}) == x ]]`),
      fc.tuple(l, l).map(([w, a]) => `case x in $(${w})) ${a} ;; esac`),
      fc.tuple(simple(arg), l).map(([x, y]) => `${x} > >(${y}) 2>&1`),
      l.map((x) => `fn3() { local lv=$(${x}); }; fn3`),
      l.map((x) => `export E=$(${x})`),
      l.map((x) => `p1 # $(${x})`),
      l.map((x) => `p1 <<< \`${x.endsWith('\n') ? 'p1' : x.split(/[;&|\n]/)[0]}\``),
      fc.tuple(name, l).map(([n, x]) => `${n} <<-EOF\n\tline $(${x})\n\tEOF\n`),
      l.map((x) => `builtin eval ${singleQuoted(x)}`),
      l.map((x) => `command -v p1 ${x.endsWith('\n') ? '' : `&& ${x}`}`),
    );
    return listOf(statement);
  };
  return level(depth);
}

/** Does a part's words account for a logged run? A word with an expansion stands for any number of arguments. */
function accounts(words: readonly string[], argv: readonly string[]): boolean {
  const go = (w: number, a: number): boolean => {
    if (w === words.length) return a === argv.length;
    const word = words[w]!;
    if (/[$`<>]/.test(word)) {
      for (let k = a; k <= argv.length; k++) if (go(w + 1, k)) return true;
      return false;
    }
    return a < argv.length && argv[a] === word && go(w + 1, a + 1);
  };
  return go(0, 0);
}

describe('shell split against real bash', function () {
  this.timeout(120_000);
  let dir = '';
  let bin = '';

  before(async function () {
    if (!fs.existsSync(BASH) || !fs.existsSync('/bin/sh')) this.skip();
    await initShellParser();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'split-vs-bash-'));
    bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.mkdirSync(path.join(dir, 'work'));
    for (const stub of [...STUBS, ...ODD_STUBS]) {
      // A POSIX sh script (dash starts faster than bash); one write per run, so runs at the
      // same time (a pipeline, <(...)) do not interleave.
      const script = `#!/bin/sh\nr="\${0##*/}"\nfor a in "$@"; do r="$r${FIELD}$a"; done\nprintf '%s${RECORD}' "$r" >> "$SPLIT_LOG"\nexit ${STATUS[stub] ?? 0}\n`;
      fs.writeFileSync(path.join(bin, stub), script, { mode: 0o755 });
    }
    for (const real of REAL) {
      const found = ['/usr/bin', '/bin'].map((d) => path.join(d, real)).find((p) => fs.existsSync(p));
      if (found) fs.symlinkSync(found, path.join(bin, real));
    }
  });

  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The runs (name and arguments) of the stubs when bash runs `command`. */
  async function run(command: string, n: number): Promise<string[][]> {
    const log = path.join(dir, `log-${n}`);
    fs.writeFileSync(log, '');
    await new Promise<void>((resolve) => {
      // Its own process group: a generated line may loop forever or leave a background job,
      // and every process it started is killed with it (a bare timeout killed only bash).
      const child = spawn(BASH, ['--noprofile', '--norc', '-c', '--', `${command}\nwait`], {
        cwd: path.join(dir, 'work'),
        env: { PATH: bin, SPLIT_LOG: log },
        stdio: 'ignore',
        detached: true,
      });
      const killGroup = (): void => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // the group is gone already
        }
      };
      const timer = setTimeout(killGroup, 5_000);
      const done = (): void => {
        clearTimeout(timer);
        killGroup();
        resolve();
      };
      child.on('close', done);
      child.on('error', done);
    });
    return fs
      .readFileSync(log, 'utf8')
      .split(RECORD)
      .filter((r) => r.length > 0)
      .map((r) => r.split(FIELD));
  }

  // Lines run four at a time (each costs a bash and a few stubs); a failure names the seed and
  // the shortest failing line.
  it('every program bash runs is a part of the split (or the split is never allowed)', async () => {
    const seed = Date.now() % 0x7fffffff;
    const lines = fc.sample(commandLines(bin), { numRuns: 150, seed });
    const runs: string[][][] = new Array(lines.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < lines.length) {
        const i = next++;
        runs[i] = await run(lines[i]!, i);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    const failures: string[] = [];
    let checked = 0;
    lines.forEach((command, i) => {
      const split = splitCommand(command);
      if (!split.ok || split.commands.some((c) => c.dynamic === true)) return;
      checked++;
      for (const argv of runs[i]!) {
        if (!split.commands.some((c) => accounts(c.words, argv))) {
          failures.push(`bash ran ${JSON.stringify(argv)} for ${JSON.stringify(command)}, which no part accounts for: ${JSON.stringify(split.commands.map((c) => c.words))}`);
          break;
        }
      }
    });
    failures.sort((a, b) => a.length - b.length);
    assert.equal(failures.length, 0, `seed ${seed}, ${failures.length} failing, the shortest: ${failures[0]}`);
    assert.ok(checked > 75, `only ${checked} of the lines split cleanly (seed ${seed})`);
  });

  it('never throws on the grammar, and its parts have the documented shape', () => {
    fc.assert(
      fc.property(commandLines('/opt/bin'), (command) => {
        const split = splitCommand(command);
        for (const c of split.commands) {
          assert.ok(c.words.every((w) => typeof w === 'string'));
          assert.ok(c.dynamic === undefined || c.dynamic === true);
        }
      }),
      { numRuns: 1000 },
    );
  });

  // Where tree-sitter-bash and bash read a line differently (found by random lines of odd tokens
  // run by bash): it passes over a lone `-` before an assignment and `\ ` between words with no
  // node; it reads `{ }` or `[ ]` as one word; it hangs the words after a redirect of a pipeline,
  // or after a here-document's delimiter or a closing `<&-`, on the redirect; it reads the `0` of
  // `0<&-` and the `{fd}` of `{fd}>f` as words; it reads the keyword `time` as a program. Each line is run by bash, and
  // every program bash ran must be in the split, or the split refuses the line.
  it('never splits cleanly into words bash does not run: input the parser passes over, merges, or hangs on a redirect', async () => {
    const lines = [
      '- a=b', 'A=1 - a=b', 'p1; - a=b', 'p1 & - a=b', 'p1 | - a=b', '- A=1 rm x', '- a=b 2>/dev/null', '- a="$HOME"', '\\  p1 x', 'p1 \\  a',
      // read as one word by tree-sitter, two by bash
      'p1 { }', 'p1 [ ] a', 'p1 a } } b', 'p1 ] { c', 'p1 [ { d',
      // words after a redirect of a pipeline, a list or a negation belong to its last command
      'p1 | p2 2>/dev/null --force', 'p1 && p2 >&2 --force', '! p2 2>/dev/null --force', 'p1 |& p2 >&2 a b', '>/dev/null p1 a',
      'p2 <<EOF --force\nx\nEOF\n', 'p1 | p2 <<EOF a b\nx\nEOF\n',
      // descriptors: `<&-` takes no file; digits or {name} right before < or > are the descriptor
      'p2 2>&- --force', 'p1 0<&- a b', 'p1 {fd}>/dev/null a', 'p1 | p2 <&- a', '0<&- {fd}>/dev/null p1 a', 'p1 >/dev/null {fd}>/dev/null a 2>&1 0<&-',
      // the keyword time, with a negated pipeline
      'time ! rm x', 'time -p ! ! rm x', 'time -- ! rm x',
    ];
    for (const [i, command] of lines.entries()) {
      const runs = await run(command, 1000 + i);
      assert.ok(runs.length > 0, `bash ran no stub for ${JSON.stringify(command)}`);
      // the fast paths read the plain lines themselves: the parser's reading (unwrapped) is checked too
      const parsed = splitWithParser(command);
      const parserReading = parsed.ok ? unwrapCommands(parsed.commands, splitCommand) : parsed;
      for (const split of [splitCommand(command), parserReading]) {
        if (!split.ok) continue;
        for (const argv of runs) {
          assert.ok(
            split.commands.some((c) => accounts(c.words, argv)),
            `bash ran ${JSON.stringify(argv)} for ${JSON.stringify(command)}; the split: ${JSON.stringify(split.commands.map((c) => c.words))}`,
          );
        }
      }
    }
  });
});
