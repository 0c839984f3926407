#!/usr/bin/env bash
# Benchmarks actiond against its peer, webhook (the Go tool Debian packages, configured to do
# the same work), and against the physical limit: a tiny Rust program that starts the same
# command the way actiond's executor does and waits for it (scripts/bench, "bare spawn").
# Everything runs on this machine in one go, and each ratio is taken within one run, so the
# ratios hold even where absolute times drift (a shared or busy machine).
#
# actiond is measured in both containment modes: group mode (no delegated cgroup, as on a
# developer's machine) and cgroup mode (each execution in a cgroup of its own, as under the
# shipped unit), the latter in a cgroup of the bench's own below the cgroup v2 hierarchy
# (mounted beside a legacy one when there is none, as scripts/test.sh does; needs root). A
# separate phase prices one press of an `exec: [/bin/true]` and of a `shell: 'true'` action in
# each mode, the service's own CPU and that of the service and its children together
# (utime + stime + cutime + cstime): both servers run side by side and take turns, so the
# machine's drift falls on both alike.
#
#   scripts/bench.sh           5 runs of 3 s per figure, 10 000 executions for the RSS figure,
#                              5 rounds of 1 000 presses per action and mode
#   scripts/bench.sh --quick   3 runs of 1 s per figure, 2 000 executions, 3 rounds of 500
#   scripts/bench.sh --smoke   1 run, a few hundred executions: checks that the whole bench
#                              works end to end (about a minute after the build); its figures
#                              mean nothing
#   scripts/bench.sh --binary PATH   measures PATH instead of the shipped build (below)
# Each count can also be set alone: ACTIOND_BENCH_RUNS, _SECS, _EXECS, _INSN_EXECS, _ROUNDS,
# _PRESSES, _IDLE (e.g. ACTIOND_BENCH_ROUNDS=1 ACTIOND_BENCH_PRESSES=50 scripts/bench.sh).
#
# Beside times, it counts each server's own CPU per execution (utime + stime from
# /proc/<pid>/stat over 4-client runs, divided by the executions; for the bare spawner its
# own CPU; and the floor, scripts/bench/floor.c, a C program that does nothing but start the
# command with one pipe and wait: the least any server starting it must spend) and its user-space
# instructions per execution (callgrind, once: the machine-independent figure; not for
# webhook, whose Go runtime does not survive valgrind).
#
# The history kept on disk is measured twice beside the in-memory figure: at the default sync
# level (every batch fsynced before its runs are answered) and with `historySync: 100ms`; and
# the disk's own price of one append + fdatasync (`actiond-bench fsync`) is measured on the
# same file system, so the table says what the durable default costs and where it goes.
#
# What it measures is what ships: the static musl release build for this machine's
# architecture (the Debian architecture dpkg reports, its target from lib.sh's map), built by
# scripts/cross-build.sh, whose cache under target/cross rebuilds it only when the sources
# change. The output names that binary (path, target, size, sha256). When it cannot be built
# the bench stops; `--binary PATH` benches another build instead (the host's glibc build, an
# older one kept aside), and every line that names the binary says it is not the shipped one.
#
# It installs what it needs (webhook, wrk, binutils, valgrind, curl, gcc from Debian, and what
# cross-build.sh needs; fails loudly when it cannot), builds the helper in release, prints one
# table of figures and one of the targets (each figure actiond is held to, beside its limit,
# PASS or FAIL; the TARGETS list in scripts/bench/src/report.rs), and writes both to
# bench-out/bench.md and bench-out/bench.json (git-ignored), with the raw figures beside them.
# CI does not call it: timings are for people, tests assert what does not depend on speed.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=5
SECS=3
EXECS=10000
INSN_EXECS=300
# The mode phase: rounds, presses per action and mode and round, presses after a pause.
ROUNDS=5
PRESSES=1000
IDLE=4
KIND=full
BINARY=""
usage() { echo "usage: $0 [--quick | --smoke] [--binary PATH]" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) KIND=quick RUNS=3 SECS=1 EXECS=2000 INSN_EXECS=100 ROUNDS=3 PRESSES=500 IDLE=3 ;;
        --smoke) KIND=smoke RUNS=1 SECS=1 EXECS=400 INSN_EXECS=20 ROUNDS=1 PRESSES=50 IDLE=1 ;;
        --binary) [ $# -ge 2 ] || usage; BINARY="$2"; shift ;;
        *) usage ;;
    esac
    shift
done
# The counts one by one, after the preset; unset so that the servers and the commands they
# start see the same environment as in a run without them.
for _v in RUNS SECS EXECS INSN_EXECS ROUNDS PRESSES IDLE; do
    _e="ACTIOND_BENCH_$_v"
    if [ -n "${!_e:-}" ]; then
        [[ "${!_e}" =~ ^[1-9][0-9]*$ ]] || { echo "$0: $_e must be a positive whole number" >&2; exit 2; }
        printf -v "$_v" '%s' "${!_e}"
        KIND=custom
    fi
    unset "$_e"
done
unset _v _e

SCRIPT=bench.sh
. scripts/lib.sh

# The stripped size of the shipped build that growth is bounded against (20 KiB at most, the
# targets' table): per target, "BYTES COMMIT", measured through this script's own route
# (cross-build.sh with Debian's rustc 1.96, then strip). 429e939 is the main branch the cgroup
# mode's spawn without a wrapper shell had been merged into. A target with none gets no size
# verdict. Record a new one only with the reason for it, in the commit. Recorded again (was
# 2855848): the same commit built on today's route (std without its backtrace printer, paths
# remapped, no unwind tables), so that cuts of the route no longer hide growth of the code.
size_baseline() {
    case $1 in
        x86_64-unknown-linux-musl) echo "2419408 429e939" ;;
    esac
}

need cargo cargo
need webhook webhook
need wrk wrk
need strip binutils
need valgrind valgrind
need curl curl
need cc gcc
need file file

# The binary under test: the shipped build, or the one --binary names (labelled wherever the
# binary is named).
if [ -z "$BINARY" ]; then
    ARCH="$(dpkg --print-architecture)" || die "dpkg cannot tell this machine's architecture"
    TARGET="$(target_of "$ARCH")" \
        || die "no package is built for $ARCH, so nothing ships for this machine; $0 --binary PATH benches another build"
    step "building the shipped binary: $TARGET, static musl release (scripts/cross-build.sh)"
    # Its size table goes to stderr with its steps: stdout is the bench's tables.
    scripts/cross-build.sh "$TARGET" >&2 \
        || die "the shipped build ($TARGET) could not be made (above); nothing was measured. To bench another build, labelled as such: $0 --binary PATH"
    ACTIOND="$PWD/dist/$TARGET/actiond"
    SHIPPED=true
    WHAT="$TARGET, the shipped static build"
else
    if [ ! -f "$BINARY" ] || [ ! -x "$BINARY" ]; then die "--binary $BINARY: no executable file there"; fi
    ACTIOND="$(realpath "$BINARY")"
    SHIPPED=false
    TARGET=""
    WHAT="NOT the shipped build (--binary): $(file -b "$ACTIOND" | cut -d, -f1-2)"
fi
[ -x "$ACTIOND" ] || die "no binary at $ACTIOND"
ACTIOND_SHA="$(sha256sum "$ACTIOND" | cut -c1-16)"
ACTIOND_BYTES="$(stat -c %s "$ACTIOND")"
ACTIOND_ID="$ACTIOND ($WHAT; $ACTIOND_BYTES bytes; sha256 $ACTIOND_SHA)"
step "actiond under test: $ACTIOND_ID"

step "building the bench helper (release)"
cargo build --release --quiet --manifest-path scripts/bench/Cargo.toml --target-dir target/bench
TOOL="$PWD/target/bench/release/actiond-bench"
# The floor: a C program that only starts the command with one pipe and waits (floor.c).
FLOOR="$PWD/target/bench/floor"
cc -O2 -o "$FLOOR" scripts/bench/floor.c
WEBHOOK="$(command -v webhook)"

OUT="$PWD/bench-out"
mkdir -p "$OUT"
RAW="$OUT/raw.tsv"
: >"$RAW"
WORK="$(mktemp -d)"
# actiond watches its config's directory for edits, so the configs live in a directory of their
# own: every log line written beside them would wake its watcher, about 11 000 instructions per
# execution that a service logging to the journal never spends (scripts/profile.sh).
CONF="$WORK/conf"
mkdir "$CONF"
SERVER_PID=""
OTHER_PIDS=()
CGROUPS=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    for p in "${OTHER_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ -n "$CGROUPS" ]; then drop_cgroup "$CGROUPS"; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# Cgroup mode: a cgroup of the bench's own on the v2 hierarchy, with a fresh directory below
# it for each server (actiond moves itself into its `supervisor/` and runs each execution in a
# `run-<n>/` beside it).
[ "$(id -u)" -eq 0 ] || die "cgroup mode needs root here (it creates cgroups); run as root"
cgroup2_mount >/dev/null
CG_MOUNT="$(cgroup2_mount)"
CGROUPS="$CG_MOUNT/actiond-bench-$$"
mkdir "$CGROUPS" || die "cannot create the cgroup $CGROUPS"
# fresh_cgroup: sets CG to a new directory below the bench's cgroup (a unique name, since
# it is also called in command substitutions, whose changes to variables do not come back).
fresh_cgroup() {
    CG="$(mktemp -d -p "$CGROUPS" s.XXXXXX)" || die "cannot create a cgroup below $CGROUPS"
}
# drop_cgroup DIR: kills what is left in DIR and removes it with everything below it.
drop_cgroup() {
    [ -d "$1" ] || return 0
    if [ -e "$1/cgroup.kill" ]; then echo 1 >"$1/cgroup.kill" 2>/dev/null || true; fi
    local i
    for i in $(seq 1 50); do
        find "$1" -depth -type d -exec rmdir {} + 2>/dev/null || true
        [ -d "$1" ] || return 0
        sleep 0.1
    done
}
# in_cgroup_mode LOG: fails unless actiond's log says it runs each execution in its cgroup.
in_cgroup_mode() {
    grep -q "each execution in its own cgroup" "$1" || {
        cat "$1" >&2
        die "actiond did not take its cgroup (see its log above)"
    }
}

# The same two commands for everyone: `echo hello` (its output is returned) and `true`.
# actiond runs them as `/bin/sh -c CMD`, so webhook is told to run exactly that too.
# maxConcurrent is raised above the 16 clients so that no press is recorded as blocked
# (a blocked entry is a fast 200 and would flatter actiond).
cat >"$CONF/actiond.yaml" <<'EOF'
maxConcurrentExecutions: 64
actions:
  - id: hello
    title: Say hi
    shell: echo hello
    maxConcurrent: 64
  - id: "true"
    title: Do nothing
    shell: "true"
    maxConcurrent: 64
  - id: exec-true
    title: Do nothing, no shell
    exec: [/bin/true]
    maxConcurrent: 64
EOF
cat >"$WORK/hooks.json" <<'EOF'
[
  {"id": "hello", "execute-command": "/bin/sh", "include-command-output-in-response": true,
   "pass-arguments-to-command": [{"source": "string", "name": "-c"}, {"source": "string", "name": "echo hello"}]},
  {"id": "true", "execute-command": "/bin/sh", "include-command-output-in-response": true,
   "pass-arguments-to-command": [{"source": "string", "name": "-c"}, {"source": "string", "name": "true"}]}
]
EOF

# wrk_script NAME METHOD BODY EXPECT: a wrk script that sends METHOD with BODY (Connect JSON
# headers when there is a body) and counts answers that are not 200 or lack EXPECT (a Lua
# string literal), so a fast wrong answer cannot pass as throughput.
wrk_script() {
    local body_lines=""
    if [ -n "$3" ]; then
        body_lines="wrk.body = '$3'
wrk.headers['Content-Type'] = 'application/json'
wrk.headers['Connect-Protocol-Version'] = '1'"
    fi
    cat >"$WORK/$1.lua" <<EOF
wrk.method = '$2'
$body_lines
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, $4, 1, true) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get('bad') end
  io.write(string.format('bad answers: %d\n', total))
end
EOF
}
# actiond returns the output inside JSON (`"stdout":"hello\n"`); webhook returns it as is.
wrk_script actiond-hello POST '{"actionId":"hello"}' "'hello\\\\n'"
wrk_script actiond-readyz POST '{}' "'{'"
wrk_script actiond-dashboard POST '{}' "'Say hi'"
wrk_script webhook-hello POST '' "'hello\\n'"
wrk_script webhook-root GET '' "'OK'"

# record RUN SUBJECT METRIC VALUE. A value that is not a number means a measurement failed
# (its error is above): stop rather than print a table with a hole in it.
record() {
    [[ "$4" =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] || die "no figure for $2 $3 in run $1 (got '$4')"
    printf '%s\t%s\t%s\t%s\n' "$@" >>"$RAW"
}
# field JSON NAME: a number from the helper's one-line JSON.
field() { sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" <<<"$1"; }
vm() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# cpu_all PID: its own CPU ticks and those of its reaped children, "OWN ALL".
cpu_all() { awk '{print $14 + $15, $14 + $15 + $16 + $17}' "/proc/$1/stat"; }
# free_port: a port nothing listens on, below the kernel's range for outgoing connections
# (the bench's own clients take those, and a server cannot bind a port a connection uses).
EPHEMERAL_LOW="$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)"
free_port() {
    local p
    while :; do
        p=$((10000 + RANDOM % (EPHEMERAL_LOW - 10000)))
        (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}

# wrk_rate CONNS SCRIPT URL: requests per second; fails on errors or wrong answers.
wrk_rate() {
    local out
    out="$(wrk -t1 -c"$1" -d"${SECS}s" -s "$WORK/$2.lua" "$3")"
    if grep -q "Non-2xx\|Socket errors" <<<"$out" || ! grep -q "^bad answers: 0$" <<<"$out"; then
        printf '%s\n' "$out" >&2
        die "wrk saw errors or wrong answers against $3"
    fi
    awk '/^Requests\/sec:/ {print $2}' <<<"$out"
}

# start_server SUBJECT PORT: starts actiond or webhook in the background (SERVER_PID).
start_server() {
    case "$1" in
        actiond) ACTIOND_CGROUP=off "$ACTIOND" --config "$CONF/actiond.yaml" --listen "127.0.0.1:$2" \
                     2>"$WORK/$1.log" &
                 SERVER_PID=$! ;;
        actiond-cgroup)
                 fresh_cgroup
                 ACTIOND_CGROUP="$CG" "$ACTIOND" --config "$CONF/actiond.yaml" --listen "127.0.0.1:$2" \
                     2>"$WORK/$1.log" &
                 SERVER_PID=$! ;;
        webhook) "$WEBHOOK" -hooks "$WORK/hooks.json" -ip 127.0.0.1 -port "$2" >"$WORK/$1.log" 2>&1 &
                 SERVER_PID=$! ;;
    esac
}
stop_server() {
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

# Instructions are counted by callgrind (valgrind), which needs no hardware counters (this
# VM has none for perf) and gives the same count however busy the machine is, so they are
# measured once, in run 1. Only the subject's own threads count: the commands it starts
# are not traced. cg_total FILE: the instructions in one callgrind dump.
cg_total() { awk '/^summary:/ {print $2; exit}' "$1"; }
# insn_per_exec SUBJECT: the subject's own user-space instructions per `echo hello` run,
# over INSN_EXECS runs after 50 unmeasured ones.
insn_per_exec() {
    local cg="$WORK/cg-$1" port addr a b pid
    if [ "$1" = baseline ]; then
        # Two runs of the spawner, 50 and 50 + INSN_EXECS commands: the difference leaves
        # out its start-up.
        for n in 50 $((50 + INSN_EXECS)); do
            valgrind --tool=callgrind --callgrind-out-file="$cg.$n" "$TOOL" spawn --threads 1 \
                --count "$n" --cmd "echo hello" --cwd "$WORK" >/dev/null 2>>"$WORK/valgrind.log" \
                || die "the bare spawner failed under callgrind (see $WORK/valgrind.log)"
        done
        a="$(cg_total "$cg.50")"; b="$(cg_total "$cg.$((50 + INSN_EXECS))")"
        echo $(( (b - a) / INSN_EXECS ))
        return
    fi
    port="$(free_port)"
    addr="127.0.0.1:$port"
    local start_cmd=() load_args=()
    case "$1" in
        actiond | actiond-cgroup)
            start_cmd=("$ACTIOND" --config "$CONF/actiond.yaml" --listen "$addr")
            load_args=(--method POST --path /api/StartActionAndWait --body '{"actionId":"hello"}' --expect 'hello\n') ;;
        *) die "no instruction count for $1" ;;
    esac
    local cgroup=""
    if [ "$1" = actiond-cgroup ]; then fresh_cgroup; cgroup="$CG"; fi
    ACTIOND_CGROUP="${cgroup:-off}" valgrind --tool=callgrind --trace-children=no --vgdb-prefix="$WORK/vgdb-$1" \
        --callgrind-out-file="$cg.%p" "${start_cmd[@]}" >>"$WORK/valgrind-$1.log" 2>&1 &
    SERVER_PID=$!
    "$TOOL" ready --addr "$addr" --path /readyz >/dev/null || die "$1 did not start under callgrind"
    if [ -n "$cgroup" ]; then in_cgroup_mode "$WORK/valgrind-$1.log"; fi
    "$TOOL" http --addr "$addr" --conns 1 --count 50 "${load_args[@]}" >/dev/null
    callgrind_control --vgdb-prefix="$WORK/vgdb-$1" -z "$SERVER_PID" >/dev/null 2>&1
    "$TOOL" http --addr "$addr" --conns 1 --count "$INSN_EXECS" "${load_args[@]}" >/dev/null
    callgrind_control --vgdb-prefix="$WORK/vgdb-$1" -d "$SERVER_PID" >/dev/null 2>&1
    pid="$SERVER_PID"
    stop_server
    # Part 1 is the dump asked for after the measured runs (part 2 is written at exit).
    echo $(( $(cg_total "$cg.$pid.1") / INSN_EXECS ))
}

# wait_ready ADDR PATH LOG: waits until the server answers, or stops with its log.
wait_ready() {
    "$TOOL" ready --addr "$1" --path "$2" >/dev/null || {
        tail -20 "$3" >&2
        die "the server on $1 did not answer (its log is above)"
    }
}

# ratio A B: A ÷ B.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }

# metric ADDR NAME: one figure from actiond's /metrics.
metric() { curl -fsS "http://$1/metrics" | awk -v n="$2" '$1 == n {print $2}'; }

# history_load SYNC: starts actiond with its history on disk (stateDirectory in bench-out/,
# on the repository's file system) and `historySync: SYNC`, or in memory only when SYNC is
# `memory`, and runs the 16-client load. Sets LOAD_RPS, and LOAD_RECORDS and LOAD_SYNCS: the
# history file's records and fsyncs during the load (from /metrics; 0 in memory). It runs in
# this shell, not in a command substitution, so that the exit trap still knows the server
# to stop when a measurement fails.
history_load() {
    local state="$OUT/state" port addr r0 s0 r1 s1
    rm -rf "$state"
    {
        cat "$CONF/actiond.yaml"
        printf 'prometheus:\n  enabled: true\n'
        [ "$1" = memory ] || printf 'stateDirectory: "%s"\nhistorySync: %s\n' "$state" "$1"
    } >"$CONF/actiond-history.yaml"
    port="$(free_port)"
    addr="127.0.0.1:$port"
    "$ACTIOND" --config "$CONF/actiond-history.yaml" --listen "$addr" 2>"$WORK/actiond-history.log" &
    SERVER_PID=$!
    wait_ready "$addr" /readyz "$WORK/actiond-history.log"
    r0="$(metric "$addr" actiond_history_file_records_total)"
    s0="$(metric "$addr" actiond_history_file_syncs_total)"
    LOAD_RPS="$(wrk_rate 16 actiond-hello "http://$addr/api/StartActionAndWait")"
    r1="$(metric "$addr" actiond_history_file_records_total)"
    s1="$(metric "$addr" actiond_history_file_syncs_total)"
    stop_server
    rm -rf "$state"
    LOAD_RECORDS=$((${r1:-0} - ${r0:-0}))
    LOAD_SYNCS=$((${s1:-0} - ${s0:-0}))
}

# disk_figures RUN: the 16-client throughput with the history kept on disk, at the default
# sync level (every batch of records is fsynced before its runs are answered): its ratio to
# the in-memory figure measured just before it (absolute speeds on a shared VM drift between
# phases of a run, so the two sides of this ratio are taken next to each other), the fsyncs
# per second and the records each fsync carried (group commit). Then the same with
# `historySync: 100ms`, where every record is still written before it is answered but
# fsynced at most ten times a second: the difference between the two is what the per-batch
# fsync itself costs.
disk_figures() {
    local run=$1 memory
    history_load memory
    memory="$LOAD_RPS"
    [ "$LOAD_RECORDS" -eq 0 ] || die "a history file was written with no state directory"
    record "$run" actiond rps_c16_memory_again "$memory"
    history_load always
    record "$run" actiond rps_c16_disk "$LOAD_RPS"
    record "$run" actiond disk_vs_memory_c16 "$(ratio "$LOAD_RPS" "$memory")"
    record "$run" actiond fsyncs_per_s_c16_disk "$(awk -v n="$LOAD_SYNCS" -v t="$SECS" 'BEGIN {print n / t}')"
    [ "$LOAD_SYNCS" -gt 0 ] || die "no fsync of the history file while 16 clients ran commands"
    record "$run" actiond records_per_fsync_c16_disk "$(awk -v r="$LOAD_RECORDS" -v n="$LOAD_SYNCS" 'BEGIN {print r / n}')"
    history_load 100ms
    [ "$LOAD_RECORDS" -gt 0 ] || die "no history record written while 16 clients ran commands"
    record "$run" actiond rps_c16_disk_interval "$LOAD_RPS"
    record "$run" actiond disk_interval_vs_memory_c16 "$(ratio "$LOAD_RPS" "$memory")"
}

# mode_presses RUN: the price of one press of `exec-true` (`exec: [/bin/true]`) and of `true`
# (`shell: 'true'`) in each mode, one client, StartActionAndWait: the service's own CPU, and
# the service's and its children's together. A group-mode and a cgroup-mode actiond run side
# by side and take turns, ROUNDS rounds of PRESSES presses per action and mode, so that the
# machine's drift falls on both modes alike; the cgroup ÷ group ratio is the report's. Each
# round also takes 16 clients' throughput of `exec-true` for SECS in each mode, and IDLE
# presses of `exec-true` one at a time with a pause before each (a board pressed now and
# then: a cgroup move after a pause waits for the kernel's RCU grace period, see
# docs/PERFORMANCE.md), their median latency.
mode_presses() {
    local run=$1 gaddr caddr gpid cpid round action mode pid addr b a j i
    local -A own=() all=() rps=() idle=()
    gaddr="127.0.0.1:$(free_port)"
    ACTIOND_CGROUP=off "$ACTIOND" --config "$CONF/actiond.yaml" --listen "$gaddr" 2>"$WORK/modes-group.log" &
    gpid=$!
    OTHER_PIDS+=("$gpid")
    fresh_cgroup
    local cg="$CG"
    caddr="127.0.0.1:$(free_port)"
    ACTIOND_CGROUP="$cg" "$ACTIOND" --config "$CONF/actiond.yaml" --listen "$caddr" 2>"$WORK/modes-cgroup.log" &
    cpid=$!
    OTHER_PIDS+=("$cpid")
    wait_ready "$gaddr" /readyz "$WORK/modes-group.log"
    wait_ready "$caddr" /readyz "$WORK/modes-cgroup.log"
    in_cgroup_mode "$WORK/modes-cgroup.log"
    grep -q "kill containment: process group" "$WORK/modes-group.log" || die "the group-mode actiond is not in group mode"
    press() {
        "$TOOL" http --addr "$1" --conns 1 --count "$3" --method POST --path /api/StartActionAndWait \
            --body "{\"actionId\":\"$2\"}" --expect '"exitCode":0' >/dev/null \
            || die "a press of $2 failed against $1"
    }
    for action in exec-true true; do
        press "$gaddr" "$action" 50
        press "$caddr" "$action" 50
    done
    for round in $(seq 1 "$ROUNDS"); do
        for action in exec-true true; do
            for mode in group cgroup; do
                if [ "$mode" = group ]; then pid=$gpid addr=$gaddr; else pid=$cpid addr=$caddr; fi
                read -r -a b <<<"$(cpu_all "$pid")"
                press "$addr" "$action" "$PRESSES"
                read -r -a a <<<"$(cpu_all "$pid")"
                own[$mode.$action]=$(( ${own[$mode.$action]:-0} + a[0] - b[0] ))
                all[$mode.$action]=$(( ${all[$mode.$action]:-0} + a[1] - b[1] ))
            done
        done
        for mode in group cgroup; do
            if [ "$mode" = group ]; then addr=$gaddr; else addr=$caddr; fi
            j="$("$TOOL" http --addr "$addr" --conns 16 --secs "$SECS" --method POST \
                --path /api/StartActionAndWait --body '{"actionId":"exec-true"}' --expect '"exitCode":0')" \
                || die "16 clients of exec-true failed against $addr"
            rps[$mode]="${rps[$mode]:-} $(field "$j" rate)"
            for i in $(seq 1 "$IDLE"); do
                sleep 0.3
                j="$("$TOOL" http --addr "$addr" --conns 1 --count 1 --method POST \
                    --path /api/StartActionAndWait --body '{"actionId":"exec-true"}' --expect '"exitCode":0')" \
                    || die "a press of exec-true failed against $addr"
                idle[$mode]="${idle[$mode]:-} $(field "$j" p50_us)"
            done
        done
    done
    kill "$gpid" "$cpid"
    wait "$gpid" "$cpid" 2>/dev/null || true
    OTHER_PIDS=()
    drop_cgroup "$cg"
    local hz n key
    hz="$(getconf CLK_TCK)"
    n=$((ROUNDS * PRESSES))
    for mode in group cgroup; do
        local subject=actiond
        [ "$mode" = cgroup ] && subject=actiond-cgroup
        for action in exec-true true; do
            key="${action//-/_}"
            record "$run" "$subject" "press_${key}_own_us" "$(awk -v t="${own[$mode.$action]}" -v hz="$hz" -v n="$n" 'BEGIN {print t / hz / n * 1e6}')"
            record "$run" "$subject" "press_${key}_all_us" "$(awk -v t="${all[$mode.$action]}" -v hz="$hz" -v n="$n" 'BEGIN {print t / hz / n * 1e6}')"
        done
        record "$run" "$subject" rps_c16_exec_true "$(median ${rps[$mode]})"
        record "$run" "$subject" idle_exec_true_p50_us "$(median ${idle[$mode]})"
    done
}

# median X...: the median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

CPU_MODEL="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
MACHINE="$(nproc) CPU(s), ${CPU_MODEL:-unknown CPU}, $(uname -sm) $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo '+changes')"
step "machine: $MACHINE"
# The measuring alone is timed (the builds before it vary from seconds to minutes): a quiet
# window for a full run is planned from it.
MEASURE_START=$SECONDS

# Stripped sizes: actiond's release profile strips already; strip copies to be sure of both.
strip -o "$WORK/actiond.stripped" "$ACTIOND"
strip -o "$WORK/webhook.stripped" "$WEBHOOK"
STRIPPED="$(stat -c %s "$WORK/actiond.stripped")"
record 1 actiond size_bytes "$STRIPPED"
record 1 webhook size_bytes "$(stat -c %s "$WORK/webhook.stripped")"
# The growth over the recorded baseline: only for the shipped build, whose target has one.
SIZE_NOTE="no size baseline recorded for ${TARGET:-a binary given by --binary}"
if $SHIPPED; then
    read -r base_bytes base_commit <<<"$(size_baseline "$TARGET")"
    if [ -n "${base_bytes:-}" ]; then
        record 1 actiond size_growth_kib "$(awk -v a="$STRIPPED" -v b="$base_bytes" 'BEGIN {print (a - b) / 1024}')"
        SIZE_NOTE="size baseline $base_bytes bytes stripped at $base_commit"
    fi
fi
step "$SIZE_NOTE"

for run in $(seq 1 "$RUNS"); do
    step "run $run of $RUNS: bare spawn"
    for cmd in hello true; do
        shell="echo hello"; [ "$cmd" = true ] && shell=true
        j="$("$TOOL" spawn --threads 1 --secs "$SECS" --cmd "$shell" --cwd "$WORK")"
        record "$run" baseline "${cmd}_p50_us" "$(field "$j" p50_us)"
        record "$run" baseline "${cmd}_p99_us" "$(field "$j" p99_us)"
        [ "$cmd" = hello ] && record "$run" baseline rps_c1 "$(field "$j" rate)"
    done
    for n in 4 16; do
        j="$("$TOOL" spawn --threads "$n" --secs "$SECS" --cmd "echo hello" --cwd "$WORK" \
            --hz "$(getconf CLK_TCK)")"
        record "$run" baseline "rps_c$n" "$(field "$j" rate)"
        # Its own CPU with 4 threads, beside the servers' own CPU with 4 clients below.
        if [ "$n" = 4 ]; then
            record "$run" baseline cpu_per_exec_us "$(field "$j" cpu_per_op_us)"
        fi
    done
    j="$("$FLOOR" "$((EXECS / 4))" "echo hello")"
    FLOOR_CPU="$(field "$j" cpu_per_op_us)"
    record "$run" baseline floor_cpu_per_exec_us "$FLOOR_CPU"
    # The disk's own price of a durable append, on the file system the history is kept on
    # below (the floor under each of actiond's fsyncs).
    j="$("$TOOL" fsync --dir "$OUT" --count "$((EXECS / 5))" --bytes 400)"
    record "$run" baseline fdatasync_p50_us "$(field "$j" p50_us)"
    record "$run" baseline fdatasync_cpu_us "$(field "$j" cpu_per_op_us)"
    if [ "$run" = 1 ]; then
        # Not webhook: Go's runtime dies under valgrind ("the impossible happened"), and this
        # VM gives perf no instruction counter.
        for subject in baseline actiond actiond-cgroup; do
            step "run $run of $RUNS: $subject, instructions per execution (callgrind)"
            record "$run" "$subject" insn_per_exec "$(insn_per_exec "$subject")"
        done
    fi

    step "run $run of $RUNS: one press in group and in cgroup mode, taking turns"
    mode_presses "$run"

    for subject in actiond actiond-cgroup webhook; do
        step "run $run of $RUNS: $subject"
        port="$(free_port)"
        addr="127.0.0.1:$port"
        actiond=false
        case "$subject" in actiond*) actiond=true ;; esac
        if $actiond; then
            ready=/readyz
            start_cmd=("$ACTIOND" --config "$CONF/actiond.yaml" --listen "$addr")
            run_path=/api/StartActionAndWait
            run_args=(--method POST)
            expect='hello\n'
            startup_cgroup=off
            if [ "$subject" = actiond-cgroup ]; then fresh_cgroup; startup_cgroup="$CG"; fi
        else
            ready=/
            start_cmd=("$WEBHOOK" -hooks "$WORK/hooks.json" -ip 127.0.0.1 -port "$port")
            run_path=/hooks
            run_args=(--method POST)
            expect=hello
        fi
        j="$(ACTIOND_CGROUP="${startup_cgroup:-off}" "$TOOL" startup --addr "$addr" --path "$ready" -- "${start_cmd[@]}")"
        record "$run" "$subject" startup_ms "$(field "$j" ms)"

        start_server "$subject" "$port"
        wait_ready "$addr" "$ready" "$WORK/$subject.log"
        if [ "$subject" = actiond-cgroup ]; then in_cgroup_mode "$WORK/$subject.log"; fi
        sleep 1
        record "$run" "$subject" rss_idle_kib "$(vm "$SERVER_PID" VmRSS)"

        # RSS after EXECS executions (4 clients), and the service's own CPU per execution.
        before="$(cpu_ticks "$SERVER_PID")"
        if $actiond; then
            "$TOOL" http --addr "$addr" --conns 4 --count "$EXECS" "${run_args[@]}" \
                --path "$run_path" --body '{"actionId":"hello"}' --expect "$expect" >/dev/null
        else
            "$TOOL" http --addr "$addr" --conns 4 --count "$EXECS" "${run_args[@]}" \
                --path "$run_path/hello" --expect "$expect" >/dev/null
        fi
        after="$(cpu_ticks "$SERVER_PID")"
        cpu="$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$EXECS" 'BEGIN {print t / hz / n * 1e6}')"
        record "$run" "$subject" cpu_per_exec_us "$cpu"
        if $actiond; then
            record "$run" "$subject" cpu_vs_floor "$(ratio "$cpu" "$FLOOR_CPU")"
        fi
        sleep 0.5
        record "$run" "$subject" rss_after_kib "$(vm "$SERVER_PID" VmRSS)"

        # Latency of one client, after the warm-up above.
        for cmd in hello true; do
            exp="$expect"; [ "$cmd" = true ] && exp=""
            if $actiond; then
                j="$("$TOOL" http --addr "$addr" --conns 1 --secs "$SECS" "${run_args[@]}" \
                    --path "$run_path" --body "{\"actionId\":\"$cmd\"}" --expect "$exp")"
            else
                j="$("$TOOL" http --addr "$addr" --conns 1 --secs "$SECS" "${run_args[@]}" \
                    --path "$run_path/$cmd" --expect "$exp")"
            fi
            record "$run" "$subject" "${cmd}_p50_us" "$(field "$j" p50_us)"
            record "$run" "$subject" "${cmd}_p99_us" "$(field "$j" p99_us)"
        done

        # Throughput: wrk, one thread, N keep-alive connections.
        if $actiond; then
            url="http://$addr$run_path"; script=actiond-hello
        else
            url="http://$addr$run_path/hello"; script=webhook-hello
        fi
        for n in 1 4 16; do
            rps="$(wrk_rate "$n" "$script" "$url")"
            record "$run" "$subject" "rps_c$n" "$rps"
        done

        if $actiond; then
            # Ten subscribers read every event while 16 clients run commands.
            "$TOOL" subscribe --addr "$addr" --conns 10 --secs $((SECS + 2)) >"$WORK/sub.json" &
            sub=$!
            sleep 0.5
            record "$run" "$subject" rps_c16_sub10 "$(wrk_rate 16 "$script" "$url")"
            wait "$sub" || die "the event subscribers failed"
            [ "$(field "$(cat "$WORK/sub.json")" bytes)" -gt 0 ] || die "the subscribers saw no event"
            record "$run" "$subject" rps_readyz "$(wrk_rate 16 actiond-readyz "http://$addr/api/GetReadyz")"
            record "$run" "$subject" rps_dashboard "$(wrk_rate 16 actiond-dashboard "http://$addr/api/GetDashboard")"
        else
            record "$run" webhook rps_readyz "$(wrk_rate 16 webhook-root "http://$addr/")"
        fi
        record "$run" "$subject" rss_peak_kib "$(vm "$SERVER_PID" VmHWM)"
        stop_server
        if [ "$subject" = actiond-cgroup ]; then drop_cgroup "$CG"; fi
        # The history on disk costs the same in both modes: measured in group mode only.
        if [ "$subject" = actiond ]; then
            step "run $run of $RUNS: actiond with its history on disk ($(stat -f -c %T "$OUT"))"
            disk_figures "$run"
        fi
    done
done

COUNTS="$RUNS run(s) of ${SECS} s per figure, RSS after $EXECS executions, $ROUNDS round(s) of $PRESSES presses per mode"
case "$KIND" in
    smoke) COUNTS="SMOKE RUN, figures not meant to be read: $COUNTS" ;;
    custom) COUNTS="counts set by ACTIOND_BENCH_*: $COUNTS" ;;
esac
TITLE="actiond $COMMIT, $(date -u '+%Y-%m-%d %H:%M UTC'); binary $ACTIOND_ID; $SIZE_NOTE; $MACHINE; $COUNTS"
echo
echo "$TITLE"
echo
"$TOOL" report --raw "$RAW" --md "$OUT/bench.md" --json "$OUT/bench.json" --title "$TITLE"
step "written: $OUT/bench.md, $OUT/bench.json, $RAW"
step "measured in $(( (SECONDS - MEASURE_START) / 60 )) min $(( (SECONDS - MEASURE_START) % 60 )) s, after $MEASURE_START s of building and setting up"
