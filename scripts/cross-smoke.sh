#!/usr/bin/env bash
# CI stage (called by scripts/test.sh): prove that each release binary runs on the CPU it is
# built for, by running it under qemu-user (natively for x86_64) and talking to it over
# loopback: GetReadyz, StartActionAndWait of an echo action, KillAction of a sleep, and no
# process left behind afterwards (checked in /proc).
#
#   scripts/cross-smoke.sh --debs [ARCH...]           the binaries inside dist/deb/*.deb
#                                                     (scripts/package-deb.sh); default: all four
#   scripts/cross-smoke.sh [--no-build] [TARGET...]   dist/<target>/actiond, built first by
#                                                     scripts/cross-build.sh unless --no-build;
#                                                     default: the four package targets
#
# Each runs on the oldest CPU of its kind: the armhf package's ARMv6 build on the Pi Zero's
# ARM1176 (an ARMv7 instruction would kill it with SIGILL there), the armel build on an
# ARM926 (ARMv5TE), the arm64 build on a Cortex-A53 (Pi 3 and Zero 2 W). The service's own
# code runs emulated; the commands it starts (/bin/sh, sleep) are this machine's, since
# qemu-user hands execve to the kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=cross-smoke
. scripts/lib.sh

mode=build
case ${1:-} in
    --no-build) mode=dist; shift ;;
    --debs) mode=debs; shift ;;
esac
started=$SECONDS


command -v curl >/dev/null || {
    [ "$(id -u)" -eq 0 ] || die "curl is missing and installing it needs root"
    apt-get install -y -qq curl >/dev/null || die "apt-get install curl failed"
}

# Pairs of "TARGET BINARY" to test.
runs=()
case $mode in
    debs)
        [ $# -gt 0 ] || set -- "${ARCHES[@]}"
        version=$(cargo_version)
        unpacked=$(mktemp -d)
        for arch in "$@"; do
            deb=dist/deb/actiond_${version}_$arch.deb
            [ -f "$deb" ] || die "no $deb (run scripts/package-deb.sh $arch)"
            dpkg-deb -x "$deb" "$unpacked/$arch"
            runs+=("$(target_of "$arch") $unpacked/$arch/usr/bin/actiond")
        done
        ;;
    *)
        [ $# -gt 0 ] || set -- "${PACKAGE_TARGETS[@]}"
        if [ $mode = build ]; then bash scripts/cross-build.sh "$@"; fi
        for t in "$@"; do runs+=("$t dist/$t/actiond"); done
        ;;
esac
built=$SECONDS

# A sleep long and odd enough that no other process on the machine has the same command line.
MARK=3127$$

# emulator TARGET: the command line that runs TARGET's binaries here (empty: natively).
emulator() {
    case $1 in
        x86_64-*) echo "" ;;
        aarch64-*) echo "qemu-aarch64-static -cpu cortex-a53" ;;
        armv7-*) echo "qemu-arm-static -cpu cortex-a7" ;;
        # The Pi Zero's CPU: an ARMv7 instruction in the armv6 build would fault here.
        arm-*) echo "qemu-arm-static -cpu arm1176" ;;
        armv5te-*) echo "qemu-arm-static -cpu arm926" ;;
        *) die "no emulator for $1" ;;
    esac
}

# marked_sleeps: pids of live (non-zombie) processes running `sleep $MARK`.
marked_sleeps() {
    local p
    for p in /proc/[0-9]*; do
        [ "$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null)" = "sleep $MARK " ] || continue
        [ "$(awk '{print $3}' "$p/stat" 2>/dev/null)" = Z ] && continue
        echo "${p#/proc/}"
    done
}

# children PID: pids whose parent is PID.
children() {
    local p
    for p in /proc/[0-9]*/stat; do
        awk -v want="$1" '{ if ($4 == want) print $1 }' "$p" 2>/dev/null || true
    done
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds or time runs out.
wait_for() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.1
    done
}

smoke() {
    local target=$1 bin=$2 dir pid addr api body id
    step "smoke test of $bin ($target) $(if [ -n "$(emulator "$target")" ]; then echo "under $(emulator "$target")"; else echo natively; fi)"
    dir=$(mktemp -d)
    cat >"$dir/config.yaml" <<EOF
killGracePeriod: 1
actions:
  - {id: echo, title: Echo, shell: 'echo "smoke on \$(uname -s)"'}
  - {id: sleep, title: Sleep, exec: [sleep, "$MARK"], timeout: 120}
EOF
    # shellcheck disable=SC2046 # the emulator line is a command and its options
    $(emulator "$target") "$bin" --config "$dir/config.yaml" --listen 127.0.0.1:0 \
        >"$dir/log" 2>&1 &
    pid=$!
    SMOKE_PID=$pid SMOKE_DIR=$dir

    has_addr() { grep -qs 'listening on http://' "$dir/log"; }
    wait_for 60 has_addr || { cat "$dir/log" >&2; die "$target did not start listening within 60 s"; }
    addr=$(sed -n 's|.*listening on http://\([0-9.:]*\).*|\1|p' "$dir/log" | head -1)
    api() {
        curl -sS --max-time 30 -H 'Content-Type: application/json' \
            -H 'Connect-Protocol-Version: 1' -d "$2" "http://$addr/api/$1"
    }

    body=$(api GetReadyz '{}') || die "$target: GetReadyz failed"
    echo "GetReadyz: $body"
    case $body in *'"status"'*) ;; *) die "$target: unexpected GetReadyz answer: $body" ;; esac

    body=$(api StartActionAndWait '{"actionId":"echo"}') || die "$target: StartActionAndWait failed"
    echo "StartActionAndWait echo: $(echo "$body" | head -c 300)"
    case $body in *'smoke on Linux'*'"exitCode":0'*) ;; *) die "$target: echo did not run: $body" ;; esac

    body=$(api StartAction '{"actionId":"sleep"}') || die "$target: StartAction failed"
    id=$(echo "$body" | sed -n 's/.*"executionTrackingId":"\([^"]*\)".*/\1/p')
    [ -n "$id" ] || die "$target: no tracking id in $body"
    running() { [ -n "$(marked_sleeps)" ]; }
    wait_for 30 running || die "$target: the sleep never started"
    echo "sleep running as pid $(marked_sleeps | tr '\n' ' ')"
    body=$(api KillAction "{\"executionTrackingId\":\"$id\"}") || die "$target: KillAction failed"
    echo "KillAction: $body"
    gone() { [ -z "$(marked_sleeps)" ]; }
    wait_for 30 gone || die "$target: sleep $MARK still running after KillAction: $(marked_sleeps)"
    finished() {
        api ExecutionStatus "{\"executionTrackingId\":\"$id\"}" | grep -q '"executionFinished":true'
    }
    wait_for 30 finished || die "$target: the killed execution is not recorded as finished"
    body=$(api ExecutionStatus "{\"executionTrackingId\":\"$id\"}")
    case $body in *'"exitCode":-1'*|*'"exitCode":143'*|*'"exitCode":137'*) ;;
        *) die "$target: killed sleep has an unexpected record: $body" ;; esac

    kill -TERM $pid
    stopped() { ! kill -0 $pid 2>/dev/null; }
    wait_for 30 stopped || die "$target: did not exit within 30 s of SIGTERM"
    wait $pid || die "$target: exited with status $? after SIGTERM; log:
$(cat "$dir/log")"
    [ -z "$(marked_sleeps)" ] || die "$target: processes left: $(marked_sleeps)"
    [ -z "$(children $pid)" ] || die "$target: children left: $(children $pid)"
    rm -rf "$dir"
    SMOKE_PID="" SMOKE_DIR=""
    echo "$target: OK (no process left)"
}

# Whatever fails, neither the service nor its sleep outlives this stage.
SMOKE_PID="" SMOKE_DIR=""
cleanup() {
    [ -n "$SMOKE_PID" ] && kill -9 "$SMOKE_PID" 2>/dev/null
    for s in $(marked_sleeps); do kill -9 "$s" 2>/dev/null; done
    [ -n "$SMOKE_DIR" ] && rm -rf "$SMOKE_DIR"
    [ -n "${unpacked:-}" ] && rm -rf "$unpacked"
    return 0
}
trap cleanup EXIT

for r in "${runs[@]}"; do
    # shellcheck disable=SC2086 # "TARGET BINARY"
    smoke $r
done

# The emulated CPUs must refuse newer instructions, or passing on them proves nothing: the
# ARMv6 build has to die with SIGILL on the ARMv5TE model.
for r in "${runs[@]}"; do
    # shellcheck disable=SC2086 # "TARGET BINARY"
    set -- $r
    [ "$1" = arm-unknown-linux-musleabi ] || continue
    step "the ARMv6 build on an ARMv5TE CPU (qemu-arm-static -cpu arm926) must die of SIGILL"
    status=0
    qemu-arm-static -cpu arm926 "$2" --version >/dev/null 2>&1 || status=$?
    # 128 + 4: the shell's status of a process killed by SIGILL.
    [ "$status" -eq 132 ] || die "the ARMv6 build ended with status $status on an ARM926, not SIGILL: the CPU models do not check"
    echo "SIGILL, as it must"
done
echo
echo "cross-smoke: ${#runs[@]} binaries passed; build $((built - started)) s, smoke $((SECONDS - built)) s, total $((SECONDS - started)) s"
