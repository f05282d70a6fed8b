// The cases of the program knowledge's tests: everyday invocations that must stay allowed when
// their program is allowed by its first word, and tricks (with the row of docs/programs.md that
// catches each) that must not be.

export const EVERYDAY: readonly string[] = [
  // git
  'git status', 'git status --short', 'git log --oneline -5', 'git log --oneline --graph --all', 'git log -p -- src/a.ts',
  'git log --stat HEAD~3..HEAD', "git log --format='%h %s' -n 20", 'git log --author=ann --since=2.weeks', 'git show HEAD', 'git show HEAD~1:src/a.ts',
  'git show --stat', 'git diff', 'git diff HEAD~1 -- src', 'git diff --cached', 'git diff --name-only main...HEAD',
  'git diff --stat', 'git blame src/a.ts', 'git blame -L 10,20 src/a.ts', 'git branch', 'git branch -a',
  'git branch --show-current', 'git tag --list', 'git remote -v', 'git rev-parse HEAD', 'git rev-parse --show-toplevel',
  'git ls-files', "git ls-files '*.ts'", 'git grep -n TODO', 'git grep -n -e foo -- src', 'git shortlog -sn',
  'git describe --tags', 'git reflog -10', 'git stash list', 'git config --get user.name', 'git config user.email',
  'git config --list', 'git config -l --show-origin', 'git -C sub status', 'git --no-pager log -3', 'git -c color.ui=never log -1',
  'git -c core.quotepath=off status', 'git cat-file -p HEAD', 'git merge-base HEAD main', 'git log --grep=fix', 'git whatchanged -1',
  'git rebase main', 'git rebase -i HEAD~3', 'git difftool --tool-help', 'git submodule status', 'git bisect start',
  // find
  'find . -name "*.ts"', "find . -name '*.ts' -not -path './node_modules/*'", 'find src -type f', 'find . -maxdepth 2 -type d', 'find . -mtime -1',
  'find . -size +1M', 'find . -newer package.json', 'find . -name "*.log" -print', 'find . -iname readme.md', 'find . -type f -name "*.json" -print0',
  'find src -empty', 'find . -path "*/test/*" -prune -o -print', 'find . -printf "%p %s\\n"', 'find . -ls', 'find . -perm -u+x -type f',
  // awk
  "awk -F: '{print $1}' /etc/passwd", "awk '{print $2}' f", "awk 'NR==1' f", "awk '$3 > 100' f", "awk '{s+=$1} END {print s}' f",
  "awk 'length > 80' f", "awk -v n=3 'NR<=n' f", "awk '/error/ {c++} END {print c}' log", "awk 'BEGIN{FS=\",\"} {print $1}' f.csv", "gawk '{print toupper($0)}' f",
  "mawk '{print NF}' f", "awk '{ if ($1 == \"x\") print $2 }' f", "awk '!seen[$0]++' f", "awk '{print $1 \"|\" $2}' f", "awk 'a || b' f",
  // sed
  "sed -n '1,5p' f", "sed 's/foo/bar/g' f", "sed -n '/start/,/end/p' f", "sed '1d' f", 'sed -E "s/([0-9]+)/<\\1>/" f',
  "sed -n '$p' f", "sed 's/e/E/' f", "sed -e 's/a/b/' -e 's/c/d/' f", "sed '/^#/d' f", "sed 'y/abc/xyz/' f",
  "sed -n 'l' f", "sed '=' f", "sed -n '/x/{p;q}' f", "sed 's|/usr|/opt|g' f", "sed '$!N;P;D' f",
  'sed --quiet 1p f', "sed -r 's/(a|b)+/x/' f", "sed 's/\\//-/g' f", "sed '2q' f", "sed 's/x/y/2' f",
  // tar
  'tar -tzf a.tgz', 'tar -tvf a.tar', 'tar tf a.tar', 'tar --list -f a.tar', 'tar -tjf a.tar.bz2',
  'tar -tf a.tar --wildcards "*.md"', 'tar --version', 'tar -dvf a.tar', 'tar -tzvf a.tgz src/', 'tar tzf a.tgz',
  // rg
  'rg -n TODO src', 'rg --files', 'rg -l foo', "rg -g '*.ts' Policy", 'rg --type ts decide',
  'rg -i error logs', 'rg -c match', 'rg --json foo', 'rg -w word', 'rg --pre-glob "*.gz" foo',
  'rg -F "a.b" src', 'rg --hidden -g "!.git" foo', 'rg -A 3 -B 1 foo', 'rg --stats foo', 'rg -S Foo',
  // sort
  'sort f', 'sort -u f', 'sort -n -k2 f', 'sort -t: -k3,3n /etc/passwd', 'sort -r f',
  'sort --unique f', 'sort -h sizes', 'sort -V versions', 'sort -c f', 'sort -z f',
  // make
  'make', 'make test', 'make -j4 build', 'make -C sub all', 'make -n install',
  'make --dry-run', 'make -k test', 'make V=1', 'make CFLAGS=-O2', 'make -s lint',
  // interpreters
  'python3 script.py', 'python3 -m pytest', 'python3 -m venv .venv', 'python3 --version', 'python3 -u tool.py arg',
  'node index.js', 'node --test', 'node --version', 'node scripts/build.mjs --fast', 'perl script.pl',
  'perl -w script.pl', 'ruby app.rb', 'ruby -w app.rb', 'python3 -W ignore x.py', 'node --inspect=0 app.js',
  // the environment
  'echo $HOME', "echo '$GITHUB_TOKEN'", 'printenv PATH', 'env FOO=1 node x.js', 'echo ${#PATH}',
  'env -u FOO node x.js', "sh -c 'echo $HOME'", 'echo "$PWD"', 'printenv HOME LANG', 'env LANG=C sort f',
];

export const TRICKS: ReadonlyArray<readonly [string, string]> = [
  // git: configuration that names a program
  ["git -c core.pager='sh -c id' log", 'git.config-program'], ["git -c core.pager=evil log -p", 'git.config-program'], ['git -c core.editor=vim commit', 'git.config-program'],
  ["git -c core.sshCommand='sh -c id' fetch", 'git.config-program'], ['git -c core.fsmonitor=./x status', 'git.config-program'], ['git -c core.hooksPath=hooks commit -m x', 'git.config-program'],
  ["git -c alias.x='!touch pwned' x", 'git.config-program'], ["git -c 'alias.y=!sh -c id' y", 'git.config-program'], ['git -c diff.external=./x diff', 'git.config-program'],
  ['git -c diff.foo.textconv=./x diff', 'git.config-program'], ['git -c filter.lfs.smudge=./x checkout .', 'git.config-program'], ['git -c credential.helper=./x fetch', 'git.config-program'],
  ['git -c sequence.editor=./x rebase -i HEAD~2', 'git.config-program'], ['git -c gpg.program=./x commit -S -m x', 'git.config-program'], ['git -c include.path=../evil.cfg log', 'git.config-program'],
  ['git -c protocol.ext.allow=always fetch ext::x', 'git.config-program'], ['git -c core.askPass=./x push', 'git.config-program'], ['git -ccore.pager=./x log', 'git.config-program'],
  ['git --config-env=core.pager=EVIL log', 'git.config-program'], ['git -C sub -c core.pager=./x log', 'git.config-program'], ['git --no-pager -c core.editor=./x commit', 'git.config-program'],
  ['git -c pager.log=./x log', 'git.config-program'], ['git -c merge.x.driver=./y merge main', 'git.config-program'], ['git -c CORE.PAGER=./x log', 'git.config-program'],
  // git: options and sub-commands
  ['git --exec-path=/tmp/x status', 'git.exec-path'], ["git fetch --upload-pack='touch x' origin", 'git.pack-program'], ["git push --receive-pack='touch x' origin", 'git.pack-program'],
  ["git clone -u 'touch x' repo", 'git.pack-program'], ["git ls-remote --upload-pack='id' origin", 'git.pack-program'], ["git submodule foreach 'rm -rf .'", 'git.submodule-foreach'],
  ['git submodule --quiet foreach id', 'git.submodule-foreach'], ["git difftool -x 'sh -c id' HEAD", 'git.difftool-extcmd'], ["git difftool --extcmd=./x", 'git.difftool-extcmd'],
  ["git grep -O'sh -c id' foo", 'git.grep-pager'], ['git grep --open-files-in-pager=./x foo', 'git.grep-pager'], ["git rebase --exec 'touch x' main", 'git.rebase-exec'],
  ["git rebase -x 'touch x' main", 'git.rebase-exec'], ["git rebase -i -x id HEAD~2", 'git.rebase-exec'], ['git rebase --exe=id main', 'git.rebase-exec'],
  ['git bisect run ./test.sh', 'git.bisect-run'], ['git log --output=/tmp/x', 'git.output'], ['git show --output=x HEAD', 'git.output'],
  ['git diff --output x', 'git.output'], ['git format-patch -o out HEAD~2', 'git.output'], ['git archive -o x.tar HEAD', 'git.output'],
  ['git bundle create x.bundle HEAD', 'git.output'], ['git config core.pager ./x', 'git.config-write'], ['git config --add alias.x !id', 'git.config-write'],
  ['git config --global core.editor ./x', 'git.config-write'], ['git config set core.pager ./x', 'git.config-write'], ['git config --unset user.name', 'git.config-write'],
  ['git log --outp=/tmp/x', 'git.output'],
  // find
  ['find . -delete', 'find.delete'], ['find . -name "*.ts" -delete', 'find.delete'], ['find / -maxdepth 1 -delete', 'find.delete'],
  ['find . -fprint /tmp/list', 'find.fprint'], ['find . -fprint0 x', 'find.fprint'], ['find . -fprintf x "%p"', 'find.fprint'],
  ['find . -fls x', 'find.fprint'], ['find . -type f -fprint ~/.bashrc', 'find.fprint'],
  // awk
  ["awk 'BEGIN{system(\"touch x\")}'", 'awk.system'], ["awk '{system($0)}' cmds", 'awk.system'], ["awk 'BEGIN{print \"id\" | \"sh\"}'", 'awk.system'],
  ["awk 'BEGIN{\"id\" | getline x; print x}'", 'awk.system'], ["gawk 'BEGIN{system(\"id\")}'", 'awk.system'], ["mawk 'BEGIN { system (\"id\") }'", 'awk.system'],
  ["awk '{print > \"out\"}' f", 'awk.redirect'], ["awk '{print $1 >> \"/tmp/x\"}' f", 'awk.redirect'], ["awk '{printf \"%s\", $0 > \"x\"}' f", 'awk.redirect'],
  ['awk -f prog.awk f', 'awk.program-file'], ['gawk --exec=prog.awk f', 'awk.program-file'], ['gawk -E prog.awk f', 'awk.program-file'],
  ["gawk '@load \"filefuncs\"; BEGIN{}'", 'awk.system'], ['awk "$PROG" f', 'awk.system'], ["gawk -e 'BEGIN{system(\"id\")}'", 'awk.system'],
  ["awk -F: 'BEGIN{system(\"id\")}' f", 'awk.system'], ["awk -v x=1 '{system(\"id\")}' f", 'awk.system'],
  // sed
  ["sed -i 's/a/b/' f", 'sed.in-place'], ["sed -i.bak 's/a/b/' f", 'sed.in-place'], ["sed --in-place 's/a/b/' f", 'sed.in-place'],
  ["sed --in-pl 's/a/b/' f", 'sed.in-place'], ["sed -ni 's/a/b/p' f", 'sed.in-place'], ["sed -Ei 's/a/b/' f", 'sed.in-place'],
  ["sed -n '1e id' f", 'sed.execute'], ["sed 'e id' f", 'sed.execute'], ["sed 's/.*/id/e' f", 'sed.execute'],
  ["sed -n 's/x/touch pwned/ep' f", 'sed.execute'], ["sed '1!e id' f", 'sed.execute'], ["sed '/x/e id' f", 'sed.execute'],
  ["sed 'w out' f", 'sed.write'], ["sed -n '1w /tmp/x' f", 'sed.write'], ["sed 's/a/b/w out' f", 'sed.write'],
  ["sed '/x/W out' f", 'sed.write'], ['sed -f script.sed f', 'sed.script-file'], ['sed --file=script.sed f', 'sed.script-file'],
  ["sed -e 's/a/b/' -e '1e id' f", 'sed.execute'], ['sed "$S" f', 'sed.execute'], ["sed -n '$!{e id' -e '}' f", 'sed.execute'],
  ["sed '1{e id' -e '}' f", 'sed.execute'],
  // tar
  ["tar --to-command='sh -c id' -xf a.tar", 'tar.runs-program'], ["tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='touch x' .", 'tar.runs-program'], ["tar -I 'sh -c id' -xf a.tar", 'tar.runs-program'],
  ['tar --use-compress-program=./x -tf a.tar', 'tar.runs-program'], ['tar --rsh-command=./x -tf host:a.tar', 'tar.runs-program'], ['tar -F ./x -tf a.tar', 'tar.runs-program'],
  ['tar --info-script=./x -tf a.tar', 'tar.runs-program'], ['tar --new-volume-script=./x -tf a.tar', 'tar.runs-program'], ['tar --to-com=./x -xf a.tar', 'tar.runs-program'],
  ['tar -xzf a.tgz', 'tar.writes'], ['tar xzf a.tgz', 'tar.writes'], ['tar -czf out.tgz src', 'tar.writes'],
  ['tar czf out.tgz src', 'tar.writes'], ['tar --extract -f a.tar', 'tar.writes'], ['tar --create -f out.tar src', 'tar.writes'],
  ['tar -rf a.tar x', 'tar.writes'], ['tar -uf a.tar x', 'tar.writes'], ['tar -Af a.tar b.tar', 'tar.writes'],
  ['tar --delete -f a.tar x', 'tar.writes'], ['tar -x -f a.tar -C ~', 'tar.writes'], ['tar --ext -f a.tar', 'tar.writes'],
  ['tar -tf a.tar --to-command=./x', 'tar.runs-program'],
  // rg, sort
  ["rg --pre 'sh -c id' foo", 'rg.pre'], ['rg --pre=./x foo', 'rg.pre'], ['rg -n --pre ./x foo src', 'rg.pre'],
  ['sort --compress-program=./x f', 'sort.compress-program'], ['sort --compress-prog=./x f', 'sort.compress-program'], ['sort -o ~/.bashrc f', 'sort.output'],
  ['sort --output=x f', 'sort.output'], ['sort -uo x f', 'sort.output'], ['sort -ox f', 'sort.output'],
  // make
  ["make --eval='all:; touch x'", 'make.eval'], ["make -E 'all:; id'", 'make.eval'], ['make SHELL=./x', 'make.shell'],
  ['make .SHELLFLAGS=-c SHELL=/bin/sh all', 'make.shell'], ['make -f /tmp/evil.mk', 'make.file'], ['make --file=evil.mk', 'make.file'],
  ['make --makefile=evil.mk all', 'make.file'], ['make -sf evil.mk', 'make.file'],
  // interpreters
  ["python3 -c 'import os; os.system(\"id\")'", 'interpreter.inline-code'], ["python -c 'print(1)'", 'interpreter.inline-code'], ["python3 -Bc 'x'", 'interpreter.inline-code'],
  ["node -e 'require(\"child_process\").execSync(\"id\")'", 'interpreter.inline-code'], ["node --eval 'x'", 'interpreter.inline-code'], ["node -p 'process.env'", 'interpreter.inline-code'],
  ["node --print 'x'", 'interpreter.inline-code'], ["perl -e 'system(\"id\")'", 'interpreter.inline-code'], ["perl -E 'say 1'", 'interpreter.inline-code'],
  ["perl -pi -e 's/a/b/' f", 'interpreter.in-place'], ["perl -i.bak -pe 's/a/b/' f", 'interpreter.in-place'], ["ruby -e 'system(\"id\")'", 'interpreter.inline-code'],
  ["ruby -i -pe 'x' f", 'interpreter.in-place'], ["php -r 'system(\"id\");'", 'interpreter.inline-code'], ["python3.12 -c 'x'", 'interpreter.inline-code'],
  // the environment
  ['echo $GITHUB_TOKEN', 'shell.credential-variable'], ['echo ${GITHUB_TOKEN:-none}', 'shell.credential-variable'], ['echo "$AWS_SECRET_ACCESS_KEY"', 'shell.credential-variable'],
  ["sh -c 'echo $NPM_TOKEN'", 'shell.credential-variable'], ['cat ${OPENAI_API_KEY}', 'shell.credential-variable'], ['echo ${#ANTHROPIC_API_KEY}', 'shell.credential-variable'],
  ['echo $MY_SERVICE_TOKEN', 'shell.credential-variable'], ['echo $DB_PASSWORD', 'shell.credential-variable'], ['printenv', 'printenv.secrets'],
  ['printenv GITHUB_TOKEN', 'printenv.secrets'], ['env', 'printenv.secrets'], ['env -i', 'printenv.secrets'],
  ['env LD_PRELOAD=./x.so git log', 'env.assignment-runs'], ["env PAGER='sh -c id' git log", 'env.assignment-runs'], ['env GIT_SSH_COMMAND=./x git fetch', 'env.assignment-runs'],
  ["env NODE_OPTIONS='--require ./x.js' node app.js", 'env.assignment-runs'], ['env PATH=./bin:/usr/bin git status', 'env.assignment-runs'], ['env BASH_ENV=./x bash -c true', 'env.assignment-runs'],
  ['LD_PRELOAD=./x.so git log', 'env.assignment-runs'], ["PAGER='sh -c id' git log", 'env.assignment-runs'], ['GIT_EXTERNAL_DIFF=./x git diff', 'env.assignment-runs'],
  ['PYTHONSTARTUP=x python3', 'env.assignment-runs'], ['GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=./x git log', 'env.assignment-runs'],
];
