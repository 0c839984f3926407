#!/usr/bin/env bash
# Counts actiond's own user-space instructions per execution with callgrind, by phase of the
# request (docs/PERFORMANCE.md explains the phases and holds the latest table).
#
#   scripts/profile.sh [--build shipped|glibc] [--cgroup] [OPERATION] [COUNT]
#
# OPERATION is StartActionAndWait (default) or StartAction; COUNT executions (default 1000) are
# measured after 100 unmeasured ones, one client at a time, each running `echo hello`.
#
# --build shipped (the default) profiles what ships: the static musl release build for this
# machine's architecture, made by scripts/cross-build.sh as the packages and the bench make it,
# but kept unstripped with line tables, in a cache of its own (target/prof-cross: a different
# profile would otherwise rebuild the shipped cache under target/cross). --build glibc profiles
# the host's glibc build instead (`cargo build --release` with line tables, into target/prof).
# Both have the release profile's optimisation.
#
# --cgroup runs actiond in cgroup mode, as under the shipped unit: each execution in a cgroup
# of its own, below a delegated directory made for this run on the cgroup v2 hierarchy
# (mounted at /sys/fs/cgroup/unified when none is, as scripts/test.sh and scripts/bench.sh do;
# needs root). Without it actiond runs in group mode (ACTIOND_CGROUP=off).
#
# actiond runs under `valgrind --tool=callgrind` (children not traced: only the service's own
# instructions count), the counters are zeroed after the warm-up and dumped after the loop, and
# the instructions per execution are printed in total and per phase (scripts/profile-phases.py).
# Instruction counts do not depend on the machine's load, so this is the figure to decide by on
# a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=profile.sh
. scripts/lib.sh
usage() { echo "usage: $0 [--build shipped|glibc] [--cgroup] [StartActionAndWait|StartAction] [COUNT]" >&2; exit 2; }
BUILD=shipped
CGROUP_MODE=false
while [ $# -gt 0 ]; do
    case "$1" in
        --build) [ $# -ge 2 ] || usage; BUILD="$2"; shift 2 ;;
        --cgroup) CGROUP_MODE=true; shift ;;
        -*) usage ;;
        *) break ;;
    esac
done
case "$BUILD" in shipped | glibc) ;; *) usage ;; esac
OP="${1:-StartActionAndWait}"
COUNT="${2:-1000}"
case "$OP" in StartActionAndWait | StartAction) ;; *) usage ;; esac
command -v valgrind >/dev/null || die "valgrind is missing (apt-get install valgrind)"
if $CGROUP_MODE; then [ "$(id -u)" -eq 0 ] || die "--cgroup needs root (it creates cgroups)"; fi

# ACTIOND_PROFILE_BIN profiles another build (an older one kept aside, to compare).
if [ -n "${ACTIOND_PROFILE_BIN:-}" ]; then
    BIN="$ACTIOND_PROFILE_BIN"
    WHAT="$BIN (ACTIOND_PROFILE_BIN)"
elif [ "$BUILD" = shipped ]; then
    ARCH="$(dpkg --print-architecture)" || die "dpkg cannot tell this machine's architecture"
    TARGET="$(target_of "$ARCH")" || die "nothing ships for $ARCH; --build glibc profiles the host's build"
    step "building the shipped build with symbols and line tables: $TARGET (scripts/cross-build.sh, cache target/prof-cross)"
    ACTIOND_CROSS_CACHE="$PWD/target/prof-cross" ACTIOND_CROSS_DIST="$PWD/target/prof-cross/dist" \
        CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
        scripts/cross-build.sh "$TARGET" >&2 || die "the shipped build ($TARGET) could not be made"
    # The linker's output, before cross-build.sh strips its copy in dist/.
    BIN="$PWD/target/prof-cross/target/$TARGET/release/actiond"
    WHAT="$TARGET, the shipped static build, unstripped"
else
    CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
        cargo build --release --quiet --target-dir target/prof
    BIN="$PWD/target/prof/release/actiond"
    WHAT="the host's glibc build"
fi
cargo build --release --quiet --manifest-path scripts/bench/Cargo.toml --target-dir target/bench
TOOL="$PWD/target/bench/release/actiond-bench"
OUT="$PWD/target/prof/callgrind"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
# The config in a directory of its own: actiond watches it for edits, and the log written
# beside it would wake that watcher on every execution.
mkdir "$WORK/conf"
VG=""
CG=""
cleanup() {
    if [ -n "$VG" ]; then kill "$VG" 2>/dev/null || true; wait "$VG" 2>/dev/null || true; fi
    if [ -n "$CG" ] && [ -d "$CG" ]; then
        # What is left in it is killed; then the directories go, deepest first.
        echo 1 >"$CG/cgroup.kill" 2>/dev/null || true
        for _ in $(seq 1 50); do
            find "$CG" -depth -type d -exec rmdir {} + 2>/dev/null || true
            [ -d "$CG" ] || break
            sleep 0.1
        done
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# Cgroup mode: a directory of this run's own on the cgroup v2 hierarchy stands for the one
# systemd delegates to the unit; actiond moves itself into its `supervisor/` and runs each
# execution in a `run-<n>/` beside it.
CGROUP_SETTING=off
if $CGROUP_MODE; then
    cgroup2_mount >/dev/null
    CG_MOUNT="$(cgroup2_mount)"
    CG="$CG_MOUNT/actiond-profile-$$"
    mkdir "$CG" || die "cannot create the cgroup $CG"
    CGROUP_SETTING="$CG"
fi
step "profiling $WHAT, $($CGROUP_MODE && echo "cgroup mode ($CG)" || echo "group mode"), $OP, $COUNT presses"

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
    INVOCATION_ID=0123456789abcdef0123456789abcdef JOURNAL_STREAM=8:12345 ACTIOND_CGROUP="$CGROUP_SETTING" \
    valgrind --tool=callgrind --trace-children=no --separate-threads=yes --vgdb-prefix="$WORK/vgdb" --callgrind-out-file="$OUT/$OP.%p" \
    "$BIN" --config "$WORK/conf/actiond.yaml" --listen "$ADDR" 2>"$WORK/actiond.log" &
VG=$!
"$TOOL" ready --addr "$ADDR" --path /readyz >/dev/null || { cat "$WORK/actiond.log" >&2; die "actiond did not start under callgrind"; }
if $CGROUP_MODE && ! grep -q "each execution in its own cgroup" "$WORK/actiond.log"; then
    cat "$WORK/actiond.log" >&2
    die "actiond did not take its cgroup (its log is above)"
fi
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
[ "${#DUMPS[@]}" -gt 0 ] || die "no callgrind dump"
echo "dumps: ${DUMPS[*]}"
python3 scripts/profile-phases.py "${DUMPS[@]}" "$COUNT"
