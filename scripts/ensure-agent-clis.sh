#!/usr/bin/env bash
# Installs the real agent CLIs the hook tests drive (Claude Code, Codex, Gemini CLI, Copilot CLI)
# into .cache/agent-clis, ignored by git and never a dependency of the package. Pinned versions:
# the hook formats in docs/hook-hosts.md were read at these. Prints the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${AGENT_POLICY_CACHE:-$PWD/.cache}"
dir="$cache/agent-clis"
PACKAGES=(
  "@anthropic-ai/claude-code@2.1.332"
  "@openai/codex@0.171.0"
  "@google/gemini-cli@0.61.0"
  "@github/copilot@1.0.102"
)
stamp="$dir/.complete-$(printf '%s\n' "${PACKAGES[@]}" | sha256sum | cut -c1-16)"
mkdir -p "$cache"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.ensure-agent-clis.lock"
  flock 9
fi
if [ ! -f "$stamp" ]; then
  echo "installing the agent CLIs into $dir (once; a few minutes)" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  (
    cd "$dir"
    for v in $(compgen -e | grep -i '^npm_'); do unset "$v"; done
    unset NODE
    printf '{ "name": "agent-clis-cache", "private": true }\n' > package.json
    npm install --no-audit --no-fund --loglevel=error "${PACKAGES[@]}" >/dev/null
  )
  touch "$stamp"
fi
echo "$dir"
