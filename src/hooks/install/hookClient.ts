// The hook client (docs/hooks.md, "How the hook starts"): the small POSIX sh script `agentpolicy
// hook install` writes into the user's state folder and names by absolute path in every host's
// entry, in place of `agentpolicy hook …`. Called as `CLIENT hook --agent HOST [--timeout S]`, it
//   1. asks the decision service over its Unix socket (curl --unix-socket, the per-user secret from
//      a private temp file, never on a command line), POST /raw/<agent>, and replays its answer
//      exactly: the body is the stdout, the exit code and the stderr (base64) come in headers;
//   2. when the service is not there or does not answer (no socket, no curl, connection refused, a
//      non-2xx answer), decides in-process: the absolute node and cli.js (or the --command given)
//      with `hook --agent HOST …`, the input passed through;
//   3. when that cannot run or fails, blocks: a message on stderr saying how to start the service
//      or install the hook again, and exit 2 (a block on every host: docs/hook-hosts.md §1).
// It never exits 0 without an answer of the policy. Any other call (`CLIENT --version`) goes to
// the in-process CLI as it is.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SERVICE_SECRET, SERVICE_SOCKET } from '../state/serviceFiles.js';
import { quoteForPosixShell } from './hookEntries.js';
import { HOST_AGENTS } from '../hosts/hostAgents.js';

/** How the client decides when the service does not answer. */
export type HookClientFallback =
  /** The CLI's own bundle run by an absolute node (an Electron run as node: the editor's own): both are checked before each run. */
  | { node: string; cli: string; electron?: boolean }
  /** A command line given with `--command` (run as written, with `hook --agent …` after it). */
  | { command: string };

/** What `agentpolicy hook install` says when everything fails, in the client's block message. */
const REINSTALL = 'agentpolicy hook install --agent <host>';

/** The client's text for this fallback. */
export function hookClientScript(fallback: HookClientFallback): string {
  const q = quoteForPosixShell;
  const head = 'command' in fallback
    ? [
        `ap_fallback() { ${fallback.command} "$@"; }`,
        `ap_ready() { :; }`,
        `AP_WHAT=${q(`the hook command (${fallback.command})`)}`,
      ]
    : [
        `AP_NODE=${q(fallback.node)}`,
        `AP_CLI=${q(fallback.cli)}`,
        fallback.electron === true ? `ap_fallback() { ELECTRON_RUN_AS_NODE=1 "$AP_NODE" "$AP_CLI" "$@"; }` : `ap_fallback() { "$AP_NODE" "$AP_CLI" "$@"; }`,
        `ap_ready() { [ -f "$AP_NODE" ] && [ -x "$AP_NODE" ] && [ -f "$AP_CLI" ] && [ -r "$AP_CLI" ]; }`,
        `AP_WHAT="node ($AP_NODE) or the agentpolicy CLI ($AP_CLI)"`,
      ];
  return `#!/bin/sh
# Agent Policy's hook client, written by \`agentpolicy hook install\` (src/hooks/install/hookClient.ts).
# Do not edit: installing again writes it again. Asks the decision service, else decides in-process
# (the line below), else blocks (exit 2). Never lets a call through without the policy's answer.
set -u
${head.join('\n')}

ap_block() {
  printf '%s\\n' "agentpolicy hook: Agent Policy could not judge this call, so it is blocked: $1. Start the decision service (agentpolicy serve, or open the folder in VS Code with Agent Policy) or install the hook again (${REINSTALL})." >&2
  exit 2
}

case \${XDG_STATE_HOME:-} in
  /*) ap_state=$XDG_STATE_HOME/agentpolicy ;;
  *) ap_state=\${HOME:-/nonexistent}/.local/state/agentpolicy ;;
esac

# \`serve --ensure\` (Claude Code's SessionStart hook) when the service answers already: done, without
# starting node (a request without the secret, which the service refuses with 401 and reads no further).
if [ "\${1:-}" = serve ] && [ "\${2:-}" = --ensure ] && [ $# -eq 2 ] && [ -S "$ap_state/${SERVICE_SOCKET}" ] && command -v curl > /dev/null 2>&1; then
  ap_code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --unix-socket "$ap_state/${SERVICE_SOCKET}" http://localhost/status 2> /dev/null) || ap_code=
  if [ "$ap_code" = 401 ]; then exit 0; fi
fi

# Anything but a hook call (e.g. --version): the CLI itself.
if [ "\${1:-}" != hook ] || [ "\${2:-}" = install ]; then
  ap_ready || ap_block "$AP_WHAT cannot be run"
  ap_fallback "$@"
  exit $?
fi
shift

# The call as the service takes it: --agent and --timeout only; any other flag is the CLI's alone.
ap_agent=
ap_timeout=
ap_plain=1
ap_want=
for ap_arg in "$@"; do
  if [ -n "$ap_want" ]; then
    if [ "$ap_want" = agent ]; then ap_agent=$ap_arg; else ap_timeout=$ap_arg; fi
    ap_want=
    continue
  fi
  case $ap_arg in
    --agent) ap_want=agent ;;
    --timeout) ap_want=timeout ;;
    --agent=*) ap_agent=\${ap_arg#--agent=} ;;
    --timeout=*) ap_timeout=\${ap_arg#--timeout=} ;;
    *) ap_plain=0 ;;
  esac
done
case $ap_agent in
  ${HOST_AGENTS.join('|')}) ;;
  *) ap_plain=0 ;;
esac
case $ap_timeout in
  '') ;;
  *[!0-9]*) ap_plain=0 ;;
esac
# Variables that change what the hook reads: only the in-process hook sees them.
if [ -n "\${AGENTPOLICY_MANAGED_POLICY:-}\${AGENTPOLICY_USER_POLICY:-}\${AGENTPOLICY_AUDIT:-}\${AGENTPOLICY_SYSTEM_DIR:-}" ]; then ap_plain=0; fi

# A private folder for the input (read once, sent to the service or to the in-process hook) and the answer.
ap_tmp=
trap 'if [ -n "$ap_tmp" ]; then rm -rf "$ap_tmp"; fi' EXIT
trap 'exit 2' HUP INT TERM
ap_tmp=$(umask 077 && mktemp -d "\${TMPDIR:-/tmp}/agentpolicy-hook.XXXXXX" 2>/dev/null) || ap_tmp=
if [ -z "$ap_tmp" ] || [ ! -d "$ap_tmp" ]; then
  # No temp folder: no service (its failure would have used up the input); the in-process hook reads it.
  ap_tmp=
  ap_ready || ap_block "no temporary folder, and $AP_WHAT cannot be run"
  ap_fallback hook "$@"
  ap_rc=$?
  [ "$ap_rc" -eq 0 ] || ap_block "the in-process hook failed (exit $ap_rc)"
  exit 0
fi
cat > "$ap_tmp/in" || ap_block 'the hook input could not be read'

ap_service() {
  [ "$ap_plain" = 1 ] || return 1
  [ -S "$ap_state/${SERVICE_SOCKET}" ] && [ -f "$ap_state/${SERVICE_SECRET}" ] || return 1
  command -v curl > /dev/null 2>&1 || return 1
  ap_secret=
  IFS= read -r ap_secret < "$ap_state/${SERVICE_SECRET}" || [ -n "$ap_secret" ] || return 1
  case $ap_secret in
    ''|*[!0-9a-f]*) return 1 ;;
  esac
  printf 'Authorization: Bearer %s\\n' "$ap_secret" > "$ap_tmp/auth" || return 1
  ap_secret=
  set --
  ap_cwd=$(pwd -P 2>/dev/null) || ap_cwd=
  case $ap_cwd in /*) set -- "$@" --url-query "cwd=$ap_cwd" ;; esac
  if [ -n "$ap_timeout" ]; then set -- "$@" --url-query "timeout=$ap_timeout"; fi
  if [ -n "\${CLAUDE_PROJECT_DIR+x}" ]; then set -- "$@" --url-query "CLAUDE_PROJECT_DIR=$CLAUDE_PROJECT_DIR"; fi
  if [ -n "\${GEMINI_PROJECT_DIR+x}" ]; then set -- "$@" --url-query "GEMINI_PROJECT_DIR=$GEMINI_PROJECT_DIR"; fi
  if [ -n "\${COPILOT_PROJECT_DIR+x}" ]; then set -- "$@" --url-query "COPILOT_PROJECT_DIR=$COPILOT_PROJECT_DIR"; fi
  if [ -n "\${COPILOT_CLI+x}" ]; then set -- "$@" --url-query "COPILOT_CLI=$COPILOT_CLI"; fi
  if [ -n "\${AGENTPOLICY_HOOK_SANDBOX+x}" ]; then set -- "$@" --url-query "AGENTPOLICY_HOOK_SANDBOX=$AGENTPOLICY_HOOK_SANDBOX"; fi
  curl -sS --unix-socket "$ap_state/${SERVICE_SOCKET}" --connect-timeout 2 \\
    -H "@$ap_tmp/auth" -H 'Content-Type: application/json' --data-binary "@$ap_tmp/in" \\
    -o "$ap_tmp/out" -w '%{http_code} %header{x-agentpolicy-exit} %header{x-agentpolicy-stderr}\\n' \\
    "$@" "http://localhost/raw/$ap_agent" > "$ap_tmp/meta" 2> "$ap_tmp/curl-err" || return 1
  ap_status=
  ap_exit=
  ap_err=
  read -r ap_status ap_exit ap_err < "$ap_tmp/meta" || [ -n "$ap_status" ] || return 1
  [ "$ap_status" = 200 ] || return 1
  case $ap_exit in
    ''|*[!0-9]*) return 1 ;;
  esac
  [ -f "$ap_tmp/out" ] || : > "$ap_tmp/out"
  return 0
}

if ap_service; then
  if [ -n "$ap_err" ]; then printf '%s' "$ap_err" | base64 -d >&2 2> /dev/null; fi
  cat "$ap_tmp/out" || ap_block 'the answer could not be written'
  exit "$ap_exit"
fi

ap_ready || ap_block "the decision service did not answer, and $AP_WHAT cannot be run"
ap_fallback hook "$@" < "$ap_tmp/in" > "$ap_tmp/out"
ap_rc=$?
[ "$ap_rc" -eq 0 ] || ap_block "the decision service did not answer, and the in-process hook failed (exit $ap_rc)"
cat "$ap_tmp/out" || ap_block 'the answer could not be written'
exit 0
`;
}

/** Where a client with this text lives: one file per text (the same install writes the same file). */
export function hookClientPath(stateDir: string, text: string): string {
  return path.join(stateDir, `hook-client-${createHash('sha256').update(text).digest('hex').slice(0, 12)}.sh`);
}

/** Writes the client (0700, whole: a temporary file renamed over it) into the state folder, which must be private (0700). */
export function writeHookClient(file: string, text: string): void {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(temp, text, { mode: 0o700, flag: 'wx' });
    fs.chmodSync(temp, 0o700);
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}
