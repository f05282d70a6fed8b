// The names of variables that hold credentials (or lead to something that hands them out): the
// sandbox withholds them from commands (src/runtime/sandbox/sandboxEnvironment.ts), and the judge takes a
// command that expands one as reading a secret (docs/programs.md). docs/sandbox.md lists them.

/**
 * Names withheld, as globs where `*` is any run of characters, matched ignoring case. A suffix
 * pattern wants the `_` before it, so `*_PASS` withholds `DB_PASS` but not `BYPASS`, and `*_TOKEN`
 * not `TOKENIZERS_PARALLELISM`. Pointers to credential files (`KUBECONFIG`,
 * `GOOGLE_APPLICATION_CREDENTIALS`) are withheld too, so that tools fall back to the home
 * folder's stores, which the sandbox hides (sandboxReads.ts).
 */
export const CREDENTIAL_VARIABLE_PATTERNS: readonly string[] = [
  // Tokens, secrets, keys and passwords by their usual suffixes (and infixes: `GH_TOKEN_2`).
  'TOKEN', '*_TOKEN', '*_TOKEN_*', '*_AUTHTOKEN', '*_AUTH', '*_PAT',
  'SECRET', '*_SECRET', '*_SECRET_*', '*_SECRETS', '*SECRET_KEY*',
  'API_KEY', 'APIKEY', '*_API_KEY', '*_API_KEY_*', '*_APIKEY',
  '*_ACCESS_KEY', '*_ACCESS_KEY_ID', '*_PRIVATE_KEY', '*_PRIVATE_KEY_*', '*_ENCRYPTION_KEY', '*_SIGNING_KEY',
  '*_MASTER_KEY', '*_ACCOUNT_KEY', '*_STORAGE_KEY',
  'PASSWORD', '*_PASSWORD', '*_PASSWORD_*', 'PASSWD', '*_PASSWD', '*_PASS', '*_PASSPHRASE',
  '*_CREDENTIALS', '*_CREDENTIAL', '*_CREDS', '*_COOKIE', '*_CONNECTION_STRING',
  // URLs and DSNs that carry a password or a key.
  'DATABASE_URL', '*_DATABASE_URL', 'MONGODB_URI', 'REDIS_URL', '*_DSN',
  // Well-known names the patterns above do not all reach.
  'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AZURE_CLIENT_SECRET',
  'GITHUB_TOKEN', 'GH_TOKEN', 'GH_ENTERPRISE_TOKEN', 'NPM_TOKEN', 'NODE_AUTH_TOKEN', 'VAULT_TOKEN', 'HF_TOKEN',
  'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'PGPASSWORD', 'MYSQL_PWD', 'DOCKER_AUTH_CONFIG',
  'GOOGLE_APPLICATION_CREDENTIALS', 'KUBECONFIG',
  // What hands credentials out: agents' sockets, the keyring's session bus, the editor's git
  // credential helper and its command-line socket (which can open files and install extensions).
  'SSH_AUTH_SOCK', 'GPG_AGENT_INFO', 'GNOME_KEYRING_CONTROL', 'DBUS_SESSION_BUS_ADDRESS',
  'GIT_ASKPASS', 'SSH_ASKPASS', 'VSCODE_GIT_ASKPASS_*', 'VSCODE_GIT_IPC_HANDLE', 'VSCODE_IPC_HOOK*',
];

function patternRegex(patterns: readonly string[]): RegExp {
  const alternatives = patterns.map((p) => p.split('*').map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*'));
  return new RegExp(`^(?:${alternatives.join('|')})$`, 'i');
}

const CREDENTIAL_NAME = patternRegex(CREDENTIAL_VARIABLE_PATTERNS);

/** Whether a variable of this name is withheld from sandboxed commands unless passed (any case). */
export function isCredentialVariable(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

