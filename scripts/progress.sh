# Sourced by scripts/ensure-node.sh and scripts/ensure-vscode.sh. `with_progress LABEL FOLDER MB CMD…`
# runs CMD while a line on stderr says how far it is: the megabytes in FOLDER of about MB expected,
# and the seconds so far. npm installs quietly (--loglevel=error; its own progress shows on a
# terminal only), and code-server takes minutes: without this, minutes of silence.
# On a terminal the line is redrawn every 2 s; in a log, one line every 15 s.
with_progress() {
  local label=$1 folder=$2 expected=$3
  shift 3
  "$@" &
  local pid=$! start=$SECONDS every=15 eol=$'\n' mb pct rc=0 waited
  if [ -t 2 ]; then every=2; eol=$'\r'; fi
  while kill -0 "$pid" 2>/dev/null; do
    waited=0
    while [ "$waited" -lt "$every" ] && kill -0 "$pid" 2>/dev/null; do sleep 1; waited=$((waited + 1)); done
    kill -0 "$pid" 2>/dev/null || break
    mb=$(du -sm "$folder" 2>/dev/null | cut -f1) || mb=0
    pct=$(( ${mb:-0} * 100 / expected ))
    [ "$pct" -le 99 ] || pct=99
    printf '  %s: %s MB of about %s MB (%s%%), %s s%s' "$label" "${mb:-0}" "$expected" "$pct" "$((SECONDS - start))" "$eol" >&2
  done
  wait "$pid" || rc=$?
  if [ "$eol" = $'\r' ]; then printf '\n' >&2; fi
  printf '  %s: %s in %s s\n' "$label" "$([ "$rc" = 0 ] && echo done || echo "failed (exit $rc)")" "$((SECONDS - start))" >&2
  return "$rc"
}
