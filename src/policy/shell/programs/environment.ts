// Secrets in the environment (docs/programs.md, "the environment"): a word that expands a
// credential variable (`$GITHUB_TOKEN`, `${AWS_SECRET_ACCESS_KEY:-x}`), and the programs that print
// the environment (`printenv`, `env` with no program to run). Either hands a secret to the command,
// which can print it into the agent's view or send it on.
import { isCredentialVariable } from './credentialNames.js';
import { row, walkOptions, type ProgramKnowledge, type ProgramReach, type ProgramRow } from './programRow.js';

export const CREDENTIAL_EXPANSION: ProgramRow = row('shell.credential-variable', 'reads-secret', '$NAME / ${NAME…} of a credential variable', 'hands the value of a credential variable (a token, a key, a password) to the command', []);
const RUNS_ANOTHER = row('env.assignment-runs', 'runs-program', 'env NAME=VALUE (or export NAME=VALUE) for a variable that makes a program run something else (LD_PRELOAD, PATH, NODE_OPTIONS, PAGER, GIT_SSH_COMMAND, …)', 'makes the program it starts load or run another program', []);
const PRINTENV = row('printenv.secrets', 'reads-secret', 'printenv [NAME], env with no program, set, export [-p], declare/typeset [-p|-x], readonly [-p] with no name', 'prints the environment, credential variables included', []);

/**
 * Variables that make an allowed program run something else (docs/programs.md). Before a program
 * on the command line (`LD_PRELOAD=x git log`) an assignment is a word of the part, which no
 * `"git *"` matches; through `env` it is one of env's words: this row.
 */
const RUNS_ANOTHER_NAMES = /^(LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|DYLD_[A-Z_]+|PATH|NODE_OPTIONS|NODE_PATH|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|PERL5OPT|PERL5LIB|RUBYOPT|RUBYLIB|BASH_ENV|ENV|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|GIT_SSH|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_PAGER|GIT_EDITOR|GIT_ASKPASS|GIT_EXEC_PATH|GIT_PROXY_COMMAND|GIT_CONFIG_[A-Z_0-9]+|GIT_CONFIG|SSH_ASKPASS|SUDO_ASKPASS|TAR_OPTIONS|RSYNC_RSH|MAKEFLAGS|MAKEFILES|SHELL|IFS)=/;

/** The credential variables a word expands (`$X`, `${X}`, `${X:-y}`, `${#X}`, `${!X}` names the variable X too). */
export function credentialExpansions(word: string): string[] {
  const names: string[] = [];
  for (const m of word.matchAll(/\$(?:\{[#!]?)?([A-Za-z_][A-Za-z0-9_]*)/g)) if (isCredentialVariable(m[1]!)) names.push(m[1]!);
  return names;
}

/** A part's words that expand credential variables (only words with an expansion: `'$X'` is text). */
export function credentialReaches(words: readonly string[], isStatic: (index: number) => boolean): ProgramReach[] {
  const hits: ProgramReach[] = [];
  words.forEach((w, i) => {
    if (!isStatic(i) && credentialExpansions(w).length > 0) hits.push({ row: CREDENTIAL_EXPANSION, word: w });
  });
  return hits;
}

/** The hit's word for printing the environment: no pattern word is it, so only a rule without this reading allows it (none: ask). */
const PRINTS_ENVIRONMENT = '(the whole environment)';

/** The shell's own commands that print variables with no name given, or set them for what follows. */
const BUILTINS = new Set(['set', 'export', 'declare', 'typeset', 'readonly']);

export const printenv: ProgramKnowledge = {
  programs: ['printenv', 'env', ...BUILTINS],
  rows: [RUNS_ANOTHER, PRINTENV, CREDENTIAL_EXPANSION],
  read(words) {
    if (BUILTINS.has(words[0]!)) {
      const names = words.slice(1).filter((w) => !w.startsWith('-') && !w.startsWith('+'));
      // `set -e` sets options; `set` alone, `export -p`, `declare -x` print every variable.
      if (names.length === 0 && (words[0] !== 'set' || words.length === 1)) return [{ row: PRINTENV, word: PRINTS_ENVIRONMENT }];
      // `export PATH=/tmp/x` changes what every later program of the line runs.
      return words[0] === 'set' ? [] : names.filter((w) => RUNS_ANOTHER_NAMES.test(w)).map((w) => ({ row: RUNS_ANOTHER, word: w }));
    }
    if (words[0] === 'printenv') {
      const names = words.slice(1).filter((w) => !w.startsWith('-'));
      return names.length === 0 || names.some(isCredentialVariable) ? [{ row: PRINTENV, word: PRINTS_ENVIRONMENT }] : [];
    }
    // env: options, then NAME=VALUE assignments, then the program; none: it prints the environment.
    let i = walkOptions(words, (w) => (/^-[uC]$/.test(w) || w === '--unset' || w === '--chdir' ? 1 : 0));
    const hits: ProgramReach[] = [];
    for (; i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!); i++) {
      if (RUNS_ANOTHER_NAMES.test(words[i]!)) hits.push({ row: RUNS_ANOTHER, word: words[i]! });
    }
    if (i >= words.length) hits.push({ row: PRINTENV, word: PRINTS_ENVIRONMENT });
    return hits;
  },
};
