// Programs that run programs are unwrapped (policy-format.md, "Commands"): the command a
// wrapper runs is a further simple command, and a deny on `rm *` denies every spelling.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { loadPolicyText, Policy } from '../../src/policy/policy.js';
import { initShellParser } from '../../src/policy/shell/shellParser.js';
import { RUNS_PROGRAMS } from '../../src/policy/shell/shellUnwrap.js';
import { hasPart, rejected, words } from './splitAssertions.js';

const POLICY = JSON.stringify({
  version: 1,
  rules: [
    { id: 'no-rm', tools: ['builtin.run_command'], commands: ['rm *'], decision: 'deny' },
    { id: 'rest', tools: ['builtin.run_command'], commands: ['*'], decision: 'allow' },
  ],
});

function decision(command: string): string {
  const layer = loadPolicyText(POLICY, '.agentpolicy.jsonc', 'workspace');
  assert.equal(layer.valid, true);
  const d = new Policy({ workspace: layer }).decide(
    { tool: { id: 'builtin.run_command' }, input: { command }, agent: 'main' },
    { workspaceFolder: os.tmpdir() },
  );
  return d.decision;
}

const RM_SPELLINGS = [
  'env rm x',
  'sudo rm x',
  'FOO=1 rm x',
  'xargs rm',
  'find . -exec rm {} \\;',
  "bash -c 'rm x'",
  'sudo -u bob env FOO=1 nice -n 5 rm -rf /',
  '/bin/rm x',
  '/usr/bin/env rm x',
  'env - rm x',
  'a[1]=x rm x',
  'builtin command rm x',
  'coproc rm x',
  "trap 'rm x' EXIT",
  "watch -n1 'rm x'",
  'watch -x rm x',
  'flock /tmp/lock rm x',
  "flock -w 5 /tmp/lock -c 'rm x'",
  "script -qc 'rm x' /dev/null",
  "script -q --command 'rm x'",
  'npx rm x',
  "npx -c 'rm x'",
  "npx --call='rm x'",
  'npx --yes rm x',
  'npm exec -- rm x',
  'npm x rm x',
  "npm exec -c 'rm x'",
  'npm exec --package=foo -- rm x',
  'pnpm dlx rm x',
  'pnpm exec rm x',
  'yarn dlx rm x',
  'docker exec box rm x',
  'docker exec -it -u root box rm x',
  'kubectl exec pod -c app -- rm x',
  "ssh -p 2222 host 'rm x'",
  'ssh host rm x',
];

describe('shell unwrapping of programs that run programs', () => {
  before(async () => {
    await initShellParser();
  });

  it('the gate before unwrapping names exactly the programs the unwrapper reads (its case labels and the shells)', () => {
    const source = fs.readFileSync(path.join(__dirname, '../../src/policy/shell/shellUnwrap.ts'), 'utf8');
    const body = source.slice(source.indexOf('function unwrapOne('), source.indexOf('\n}\n', source.indexOf('function unwrapOne(')));
    const labels = [...body.matchAll(/case '([^']+)':/g)].map((m) => m[1]!);
    const shells = /const SHELLS = new Set\(\[([^\]]*)\]\)/.exec(source)![1]!.match(/'[^']+'/g)!.map((q) => q.slice(1, -1));
    assert.ok(labels.length > 20, 'the case labels were found');
    assert.deepEqual([...RUNS_PROGRAMS].sort(), [...new Set([...labels, ...shells])].sort());
    // A program outside the gate is read as itself, whatever its arguments.
    assert.deepEqual(words('npm -c rm x'), [['npm', '-c', 'rm', 'x']]);
    assert.deepEqual(words('bash -c "rm x"'), [['bash', '-c', 'rm x'], ['rm', 'x']]);
  });

  it('keeps the wrapper and adds the command it runs', () => {
    assert.deepEqual(words('sudo rm x'), [['sudo', 'rm', 'x'], ['rm', 'x']]);
    assert.deepEqual(words('FOO=1 rm x'), [['FOO=1', 'rm', 'x'], ['rm', 'x']]);
    assert.deepEqual(words('ls -la'), [['ls', '-la']]);
  });

  for (const s of RM_SPELLINGS) {
    it(`${s} has a part starting with rm`, () => {
      assert.ok(words(s).some((w) => w[0] === 'rm'), JSON.stringify(words(s)));
    });
  }

  it('env', () => {
    hasPart('env -i -u HOME -C /tmp --unset=PATH --chdir=/ -0 -v A=1 B=2 rm x', ['rm', 'x']);
    hasPart('env -- rm x', ['rm', 'x']);
    hasPart('env -uHOME rm x', ['rm', 'x']);
    assert.deepEqual(words('env'), [['env']]);
    assert.deepEqual(words('env A=1'), [['env', 'A=1']]);
    hasPart('env - A=1 rm x', ['rm', 'x']);
    // env -S splits its string into words: read as a shell line, which can only split more.
    hasPart("env -S 'rm x'", ['rm', 'x']);
    hasPart("env --split-string='rm -f x' y", ['rm', '-f', 'x', 'y']);
    hasPart('env -iS rm', ['rm']);
    rejected('env -S "$CMD"');
  });

  it('make --eval, parallel, docker run, kubectl run', () => {
    hasPart("make test --eval 'x:;cat ~/.ssh/id_rsa'", ['cat', '~/.ssh/id_rsa']);
    hasPart("make -E 'y:\n\t@rm -rf $$HOME' y", ['rm', '-rf', '$HOME']);
    hasPart("parallel 'rm {}' ::: a b", ['rm', '{}']);
    hasPart('parallel -j 4 gzip -9 ::: a b', ['gzip', '-9']);
    rejected('parallel -j 2');
    hasPart('docker run --rm -v /:/host -e A=1 alpine cat /host/etc/shadow', ['cat', '/host/etc/shadow']);
    hasPart('kubectl run t --image=busybox -- rm -rf /data', ['rm', '-rf', '/data']);
  });

  it('sudo and doas', () => {
    hasPart('sudo -u bob -g staff -C 3 -D /tmp -h host -p pw -r role -t type -T 5 -U al -E -n -- rm x', ['rm', 'x']);
    hasPart('sudo -Eu bob rm x', ['rm', 'x']);
    hasPart('doas -u root rm x', ['rm', 'x']);
    rejected('sudo --user=bob rm x');
  });

  it('command, exec, time', () => {
    hasPart('command rm x', ['rm', 'x']);
    hasPart('command -p rm x', ['rm', 'x']);
    assert.deepEqual(words('command -v rm'), [['command', '-v', 'rm']]);
    assert.deepEqual(words('command -V rm'), [['command', '-V', 'rm']]);
    hasPart('exec -c -l -a name rm x', ['rm', 'x']);
    assert.ok(words('time rm x').some((w) => w[0] === 'rm'));
    assert.ok(words('time -p rm x').some((w) => w[0] === 'rm'));
    rejected('exec -z rm x');
  });

  it('nice, nohup, setsid', () => {
    hasPart('nice -n 5 rm x', ['rm', 'x']);
    hasPart('nice -n5 rm x', ['rm', 'x']);
    hasPart('nice -10 rm x', ['rm', 'x']);
    hasPart('nice --adjustment=3 rm x', ['rm', 'x']);
    hasPart('nohup rm x', ['rm', 'x']);
    hasPart('setsid -f rm x', ['rm', 'x']);
    rejected('nohup -x rm x');
  });

  it('timeout, stdbuf', () => {
    hasPart('timeout 5 rm x', ['rm', 'x']);
    hasPart('timeout -k 2 -s KILL --preserve-status --foreground -v 5s rm x', ['rm', 'x']);
    hasPart('stdbuf -oL -e 0 -i0 rm x', ['rm', 'x']);
    hasPart('stdbuf --output=L rm x', ['rm', 'x']);
    rejected('timeout -z 5 rm x');
  });

  it('xargs', () => {
    hasPart('xargs rm', ['rm']);
    hasPart('xargs -0 -n 1 -P 4 -I {} -d x -a f -E e -L 2 -s 100 rm {}', ['rm', '{}']);
    hasPart('xargs --arg-file=f --max-args=2 -i -l3 -eEOF rm', ['rm']);
    hasPart('xargs -r --null rm', ['rm']);
    assert.deepEqual(words('xargs'), [['xargs'], ['echo']]);
    assert.deepEqual(words('xargs -0'), [['xargs', '-0'], ['echo']]);
    rejected('xargs -Z rm');
  });

  it('find -exec, -execdir, -ok, -okdir', () => {
    hasPart('find . -name x -exec rm {} \\;', ['rm', '{}']);
    hasPart('find . -execdir rm {} +', ['rm', '{}']);
    const all = words("find . -ok rm {} ';' -okdir mv {} y \\;");
    assert.ok(all.some((w) => w[0] === 'rm') && all.some((w) => w[0] === 'mv'), JSON.stringify(all));
  });

  it('shells with -c, and eval', () => {
    for (const sh of ['bash', 'sh', 'zsh', 'dash', 'ksh', '/bin/bash']) hasPart(`${sh} -c 'rm x'`, ['rm', 'x']);
    hasPart("bash -lc 'ls && rm x' name", ['rm', 'x']);
    hasPart("bash -c 'ls && rm x'", ['ls']);
    assert.deepEqual(words('bash script.sh'), [['bash', 'script.sh']]);
    hasPart('eval rm x', ['rm', 'x']);
    hasPart("eval 'ls; rm x'", ['rm', 'x']);
    hasPart("bash -c \"sudo -- sh -c 'rm x'\"", ['rm', 'x']);
    rejected("bash -c 'rm x &&'");
    rejected('bash -c "rm $X"');
    rejected('eval "$C"');
    rejected('eval rm $X');
  });

  it('builtin, coproc, trap, compgen -C, mapfile -C; alias definitions are unparseable', () => {
    hasPart('builtin eval rm x', ['rm', 'x']);
    hasPart('coproc rm x', ['rm', 'x']);
    hasPart("trap 'ls; rm x' EXIT INT", ['rm', 'x']);
    assert.deepEqual(words('trap - EXIT'), [['trap', '-', 'EXIT']]);
    rejected("trap -z 'rm x' EXIT");
    rejected("alias a='rm x' b='ls'");
    hasPart("compgen -W 'a b' -C 'rm x' y", ['rm', 'x']);
    hasPart("mapfile -t -c 1 -C 'rm x' arr", ['rm', 'x']);
    rejected('mapfile -C');
  });

  it('leading assignments with a subscript are dropped too', () => {
    hasPart('a[1]=x rm y', ['rm', 'y']);
    hasPart('a[i+1]+=x B=2 rm y', ['rm', 'y']);
  });

  it('a static command string with a $ in it is split; one with an expansion is unparseable', () => {
    hasPart("bash -c 'rm $1' _ x", ['rm', '$1']);
    hasPart("eval 'rm \"$x\"'", ['rm', '"$x"']);
    rejected('bash -c "rm $1"');
  });

  it('declare -n and hash -p are unparseable', () => {
    rejected('declare -n r=a');
    rejected('hash -p /bin/rm ls');
    assert.deepEqual(words('hash -r'), [['hash', '-r']]);
  });

  it('unwraps recursively, up to a depth of 8', () => {
    hasPart('sudo -u bob env FOO=1 nice -n 5 rm -rf /', ['rm', '-rf', '/']);
    hasPart(`${'nohup '.repeat(8)}rm x`, ['rm', 'x']);
    rejected(`${'nohup '.repeat(9)}rm x`);
  });

  describe('through the engine', () => {
    for (const s of RM_SPELLINGS) {
      it(`denies ${s}`, () => {
        assert.equal(decision(s), 'deny');
      });
    }

    it('still allows plain commands and does not deny unknown options (they are asked)', () => {
      assert.equal(decision('ls -la'), 'allow');
      assert.equal(decision('sudo ls'), 'allow');
      assert.notEqual(decision('sudo --weird rm x'), 'allow');
    });

    it('a random wrapper chain around rm is denied', () => {
      const wrapper = fc.oneof(
        fc.constantFrom('env', 'env -i', 'env -u HOME', 'env -C /tmp', 'env --unset=X', 'env -- ', 'env A=1 B=2', 'env -0 -v'),
        fc.constantFrom('sudo', 'sudo -u bob', 'sudo -E', 'sudo -n -u root --', 'doas -u root', 'doas'),
        fc.constantFrom('command', 'command -p', 'exec', 'exec -a name', 'exec -c -l'),
        fc.constantFrom('nice', 'nice -n 5', 'nice -3', 'nice --adjustment=2', 'nohup', 'setsid', 'setsid -f'),
        fc.constantFrom('timeout 5', 'timeout -k 1 -s TERM 10s', 'timeout --foreground 3', 'stdbuf -oL', 'stdbuf -i 0 -e L'),
        fc.constantFrom('xargs', 'xargs -0', 'xargs -n 1 -P 2', 'xargs -I {}', 'xargs --max-args=3', 'FOO=1', 'A=1 B=2'),
        fc.constantFrom('time', 'time -p'),
        fc.constantFrom('/usr/bin/env', '/usr/bin/sudo -u bob', 'env -', 'builtin command', 'a[1]=x'),
      );
      const arg = fc.constantFrom('x', '-rf', '/', 'a.txt', '--', '-f', 'dir/');
      fc.assert(
        fc.property(fc.array(wrapper, { minLength: 1, maxLength: 4 }), fc.array(arg, { maxLength: 3 }), fc.constantFrom('plain', 'bash', 'eval', 'find'), (chain, args, outer) => {
          // `time` is a shell keyword only first in a pipeline; keep it out of nested positions.
          const inner = [...chain.filter((w, i) => i === 0 || !w.startsWith('time')), 'rm', ...args].join(' ');
          const cmd =
            outer === 'bash' ? `bash -c '${inner}'` : outer === 'eval' ? `eval ${inner}` : outer === 'find' ? `find . -exec ${inner} {} \\;` : inner;
          if (outer !== 'plain' && inner.startsWith('time')) return;
          assert.equal(decision(cmd), 'deny', cmd);
        }),
        { numRuns: 200 },
      );
    });
  });
});
