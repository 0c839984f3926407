#!/usr/bin/env bash
# Counts actiond's own user-space instructions per execution with callgrind, by phase of the
# request (docs/PERFORMANCE.md explains the phases and holds the latest table).
#
#   scripts/profile.sh [OPERATION] [COUNT]
#
# OPERATION is StartActionAndWait (default) or StartAction; COUNT executions (default 1000) are
# measured after 100 unmeasured ones, one client at a time, each running `echo hello`. It builds
# a release binary with line tables into target/prof (same optimisation as the release
# profile, not stripped), runs it under `valgrind --tool=callgrind` (children not traced: only
# the service's own instructions count), zeroes the counters after the warm-up, dumps them
# after the loop, and prints instructions per execution, in total and per phase, from
# `callgrind_annotate --inclusive=yes`. Instruction counts do not depend on the machine's
# load, so this is the figure to decide by on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
OP="${1:-StartActionAndWait}"
COUNT="${2:-1000}"
case "$OP" in StartActionAndWait | StartAction) ;; *) echo "usage: $0 [StartActionAndWait|StartAction] [COUNT]" >&2; exit 2 ;; esac
command -v valgrind >/dev/null || { echo "error: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }

# ACTIOND_PROFILE_BIN profiles another build (an older one kept aside, to compare).
if [ -z "${ACTIOND_PROFILE_BIN:-}" ]; then
    CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
        cargo build --release --quiet --target-dir target/prof
fi
cargo build --release --quiet --manifest-path scripts/bench/Cargo.toml --target-dir target/bench
BIN="${ACTIOND_PROFILE_BIN:-$PWD/target/prof/release/actiond}"
TOOL="$PWD/target/bench/release/actiond-bench"
OUT="$PWD/target/prof/callgrind"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
# The config in a directory of its own: actiond watches it for edits, and the log written
# beside it would wake that watcher on every execution.
mkdir "$WORK/conf"
VG=""
cleanup() {
    if [ -n "$VG" ]; then kill "$VG" 2>/dev/null || true; wait "$VG" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/conf/actiond.yaml" <<'YAML'
maxConcurrentExecutions: 1024
actions:
  - id: hello
    title: Say hi
    shell: echo hello
    maxConcurrent: 1024
YAML
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
ADDR="127.0.0.1:$PORT"
rm -f "$OUT/$OP".*
# The environment of a systemd service (with User=), not this shell's: every variable the
# service inherits is passed on to every command, so its size changes the cost of a spawn.
env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    HOME=/var/lib/actiond USER=actiond LOGNAME=actiond SHELL=/usr/sbin/nologin \
    INVOCATION_ID=0123456789abcdef0123456789abcdef JOURNAL_STREAM=8:12345 \
    valgrind --tool=callgrind --trace-children=no --separate-threads=yes --vgdb-prefix="$WORK/vgdb" --callgrind-out-file="$OUT/$OP.%p" \
    "$BIN" --config "$WORK/conf/actiond.yaml" --listen "$ADDR" 2>"$WORK/actiond.log" &
VG=$!
"$TOOL" ready --addr "$ADDR" --path /readyz >/dev/null
load() {
    "$TOOL" http --addr "$ADDR" --conns 1 --count "$1" --method POST --path "/api/$OP" \
        --body '{"actionId":"hello"}' --expect "$2" >/dev/null
}
expect='hello\n'; [ "$OP" = StartAction ] && expect=executionTrackingId
# vgdb finds the process by the user and host names in the environment: the service's.
cg_control() { env -u HOST -u HOSTNAME LOGNAME=actiond USER=actiond callgrind_control "$@"; }
load 100 "$expect"
sleep 1
cg_control --vgdb-prefix="$WORK/vgdb" -z "$VG" >/dev/null
load "$COUNT" "$expect"
# StartAction answers before its run ends: let the last runs finish inside the measurement.
# (The limits above are the highest allowed, so no press is recorded as blocked.)
sleep 5
cg_control --vgdb-prefix="$WORK/vgdb" -d "$VG" >/dev/null
sleep 1
kill "$VG"; wait "$VG" 2>/dev/null || true; VG=""
# The dump (one file per thread) is the one callgrind_control asked for, part 1; the final
# one written at exit is part 2.
mapfile -t DUMPS < <(ls "$OUT/$OP".*.1-* 2>/dev/null)
[ "${#DUMPS[@]}" -gt 0 ] || { echo "error: no callgrind dump" >&2; exit 1; }
echo "dumps: ${DUMPS[*]}"
python3 scripts/profile-phases.py "${DUMPS[@]}" "$COUNT"
