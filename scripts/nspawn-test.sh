#!/usr/bin/env bash
# CI stage (called by scripts/test.sh): the amd64 Debian package under a real systemd. A
# minimal Debian rootfs (debootstrap, cached under target/nspawn/ and keyed by its recipe) is
# overlaid, the package is installed into it as an image build would (chroot: enabled, not
# started), the container is booted with systemd-nspawn, and everything is checked from outside
# through nsenter: the service comes up at boot and reaches READY, remove stops it, an
# install inside the running system starts it, boards switch, the watchdog restarts a
# stopped process, a stop records a running action as killed and leaves no process, each run
# gets a cgroup of its own (Delegate=yes) so a kill reaches a child that called setsid and
# cleared its environment (the host needs a cgroup v2 hierarchy; scripts/test.sh mounts one
# beside a legacy one), the
# history survives restarts, Reboot goes through polkit (which refuses what the rule does
# not name), an upgrade keeps an edited config and the history, and a purge removes all of it.
#
#   scripts/nspawn-test.sh [DEB]     default: dist/deb/actiond_<version>_amd64.deb
#   scripts/nspawn-test.sh --prepare only make the cached rootfs (scripts/test.sh runs this
#                                    in the background while the packages build)
#
# Each check is a function named in CHECKS below; a new assertion is one more function and
# one more name there. The container's root is an overlay on the cached rootfs. Nothing
# outlives the stage: the trap powers the container off (and kills it if it does not stop),
# unmounts the overlay and removes what the run wrote. ACTIOND_NSPAWN_KEEP=1 keeps that
# (target/nspawn/run/upper) for a look after a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=bookworm
# polkitd: the package recommends it, and the Reboot check needs it (libpam-systemd provides
# the logind it depends on, which debootstrap does not resolve by itself). Everything the package
# needs is in the image, so installing it needs no network inside the container.
INCLUDE=systemd,systemd-sysv,dbus,curl,polkitd,libpam-systemd
# Bump when the recipe below changes in a way the key does not show.
RECIPE=1
NSPAWN_DIR=$PWD/target/nspawn
RUN=$NSPAWN_DIR/run
ROOT=$RUN/root
# A sleep no other process on the machine has on its command line.
MARK=4127
MACHINE=actiond-ci
version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' Cargo.toml | head -1)
prepare_only=false
if [ "${1:-}" = --prepare ]; then prepare_only=true; shift; fi
DEB=${1:-dist/deb/actiond_${version}_amd64.deb}
started=$SECONDS

die() {
    echo "nspawn-test: FAIL: $*" >&2
    # What actiond itself said is usually the reason; the container is still up here.
    if [ -n "$INIT" ] && kill -0 "$INIT" 2>/dev/null; then
        echo "--- the last lines of actiond's journal:" >&2
        in_ct journalctl -u actiond --no-pager -n 30 >&2 2>/dev/null || true
    fi
    exit 1
}
step() { printf '\n==> nspawn: %s\n' "$*"; }
pass() { echo "    ok: $*"; }

[ "$(id -u)" -eq 0 ] || die "booting a container needs root"
need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    step "installing $2 (for $1)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null || die "apt-get install $2 failed"
}
need debootstrap debootstrap
need systemd-nspawn systemd-container
need nsenter util-linux
need pgrep procps
$prepare_only || [ -f "$DEB" ] || die "no package at $DEB (scripts/package-deb.sh amd64 makes it)"

# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds or time runs out.
wait_for() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.2
    done
}

# ---------------------------------------------------------------------------------------
# The rootfs

# The Debian archive apt is configured with here (deb822 sources first, then one-line
# sources); ACTIOND_DEBIAN_MIRROR overrides it.
debian_mirror() {
    local m=${ACTIOND_DEBIAN_MIRROR:-}
    [ -n "$m" ] || m=$(awk -v RS= -v suite="$SUITE" '
        $0 ~ ("Suites:[^\n]*[ \t]" suite "([ \t\n]|$)") && $0 ~ /Types:[^\n]*deb/ {
            if (match($0, /URIs:[ \t]*[^ \t\n]+/)) {
                s = substr($0, RSTART, RLENGTH); sub(/URIs:[ \t]*/, "", s); print s; exit
            }
        }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [ -n "$m" ] || m=$(awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2; exit }' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
    echo "${m:-http://deb.debian.org/debian}"
}

key=$(printf '%s\n' "$SUITE" minbase "$INCLUDE" "$RECIPE" | sha256sum | cut -c1-12)
PRISTINE=$NSPAWN_DIR/rootfs-$SUITE-$key

# unmount_under DIR: unmounts whatever is mounted at or below DIR, deepest first (debootstrap
# mounts /proc and /sys in its target, and leaves them if it is killed).
unmount_under() {
    local m
    for m in $(awk -v dir="$1" '$2 == dir || index($2, dir "/") == 1 { print $2 }' /proc/self/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount --lazy "$m"
    done
}

make_rootfs() {
    local mirror old tmp=$PRISTINE.tmp t0=$SECONDS
    mirror=$(debian_mirror)
    step "debootstrap --variant=minbase --include=$INCLUDE $SUITE from $mirror (cached as $PRISTINE)"
    MAKING=$tmp
    unmount_under "$tmp"
    rm -rf "$tmp"
    mkdir -p "$NSPAWN_DIR"
    debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$tmp" "$mirror" \
        >"$NSPAWN_DIR/debootstrap.log" 2>&1 \
        || { tail -20 "$NSPAWN_DIR/debootstrap.log" >&2; die "debootstrap failed (log: $NSPAWN_DIR/debootstrap.log)"; }
    rm -f "$tmp"/var/cache/apt/archives/*.deb
    # Only a finished rootfs gets the cache's name; older recipes' rootfs go.
    for old in "$NSPAWN_DIR"/rootfs-*; do [ "$old" = "$tmp" ] || rm -rf "$old"; done
    unmount_under "$tmp"
    mv "$tmp" "$PRISTINE"
    MAKING=""
    echo "rootfs made in $((SECONDS - t0)) s: $(du -sh "$PRISTINE" | cut -f1)"
}

# ---------------------------------------------------------------------------------------
# The container

NSPAWN="" INIT="" MAKING=""

# in_ct COMMAND...: runs COMMAND inside the container (all its namespaces), with a clean
# environment.
in_ct() {
    nsenter --target "$INIT" --all \
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root TERM=dumb "$@"
}

container_init() {
    INIT=$(pgrep -P "$NSPAWN" | head -1)
    [ -n "$INIT" ]
}

system_up() {
    kill -0 "$NSPAWN" 2>/dev/null || die "systemd-nspawn ended while booting: $(tail -5 "$RUN/console.log")"
    # Asked again each time: the first child seen may be one nspawn replaces before init runs.
    container_init || return 1
    case $(in_ct systemctl is-system-running 2>/dev/null) in
        running|degraded) return 0 ;;
        *) return 1 ;;
    esac
}

boot() {
    local t0=$SECONDS
    systemd-nspawn --directory="$ROOT" --boot --private-network --register=no --keep-unit \
        --machine="$MACHINE" --console=read-only >>"$RUN/console.log" 2>&1 </dev/null &
    NSPAWN=$!
    wait_for 120 system_up || {
        tail -20 "$RUN/console.log" >&2
        die "the container's systemd did not finish booting in 120 s: $(in_ct systemctl is-system-running 2>&1)"
    }
    if [ "$(in_ct systemctl is-system-running)" = degraded ]; then
        echo "    (degraded: $(in_ct systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' '))"
    fi
    echo "    booted in $((SECONDS - t0)) s (container init is pid $INIT here)"
}

# unmount_root: takes the run's overlay down, if it is up (also one a killed run left).
unmount_root() {
    if grep -q " $ROOT " /proc/self/mounts; then
        umount "$ROOT" 2>/dev/null || umount --lazy "$ROOT"
    fi
}

cleanup() {
    set +e
    # A debootstrap cut short leaves its mounts and an unfinished rootfs.
    if [ -n "$MAKING" ]; then
        unmount_under "$MAKING"
        rm -rf "$MAKING"
    fi
    if [ -n "$NSPAWN" ] && kill -0 "$NSPAWN" 2>/dev/null; then
        # SIGTERM makes systemd-nspawn power the container off in order; if that takes too
        # long, killing the container's init ends every process in its PID namespace.
        kill -TERM "$NSPAWN"
        for _ in $(seq 50); do kill -0 "$NSPAWN" 2>/dev/null || break; sleep 0.2; done
        if kill -0 "$NSPAWN" 2>/dev/null; then
            [ -n "$INIT" ] && kill -KILL "$INIT"
            sleep 0.5
            kill -KILL "$NSPAWN"
        fi
        wait "$NSPAWN" 2>/dev/null
    fi
    unmount_root
    if grep -q " $RUN/" /proc/self/mounts; then
        echo "nspawn-test: left mounts under $RUN:" >&2
        grep " $RUN/" /proc/self/mounts >&2
    fi
    if [ "${ACTIOND_NSPAWN_KEEP:-0}" = 1 ]; then
        echo "nspawn-test: kept $RUN"
    else
        rm -rf "$RUN"
    fi
}
trap cleanup EXIT
# A signal ends the script through exit, so the EXIT trap cleans up then too.
trap 'exit 143' TERM INT HUP

# ---------------------------------------------------------------------------------------
# Talking to the service

api() {
    in_ct curl -sS --max-time 30 -H 'Content-Type: application/json' \
        -H 'Connect-Protocol-Version: 1' -d "$2" "http://localhost:1337/api/$1"
}
# has TEXT PART: TEXT contains PART. (Not `… | grep -q`: under pipefail, grep leaving early
# fails the writer with SIGPIPE.)
has() { case $1 in *"$2"*) return 0 ;; *) return 1 ;; esac; }
prop() { in_ct systemctl show --property="$1" --value actiond.service; }
field() { sed -n "s/.*\"$1\":\"\\{0,1\\}\\([^\",}]*\\).*/\\1/p" | head -1; }
ready() { [ "$(in_ct curl -s --max-time 5 http://localhost:1337/readyz 2>/dev/null)" = OK ]; }
active() { [ "$(prop ActiveState)" = active ] && ready; }

# run ACTION: runs ACTION and waits; prints its tracking id.
run() {
    local body id
    body=$(api StartActionAndWait "{\"actionId\":\"$1\"}") || die "StartActionAndWait $1 failed"
    id=$(echo "$body" | field executionTrackingId)
    [ -n "$id" ] || die "no tracking id running $1: $body"
    echo "$id"
}

# history_has ID...: every ID is in the history (GetLogs, first page).
history_has() {
    local logs id
    logs=$(api GetLogs '{"startOffset":0}') || return 1
    for id in "$@"; do
        case $logs in *"\"$id\""*) ;; *) return 1 ;; esac
    done
}

# processes MATCH: pids of live processes in the container whose command line is MATCH.
processes() {
    in_ct sh -c '
        for p in /proc/[0-9]*; do
            [ "$(tr "\0" " " <"$p/cmdline" 2>/dev/null)" = "$1 " ] || continue
            grep -q "^State:.*Z" "$p/status" 2>/dev/null && continue
            echo "${p#/proc/}"
        done' sh "$1"
}

# actiond_processes: pids of processes of the actiond user in the container.
actiond_processes() {
    in_ct sh -c '
        uid=$(id -u actiond 2>/dev/null) || exit 0
        for p in /proc/[0-9]*; do
            [ "$(awk "/^Uid:/ {print \$2}" "$p/status" 2>/dev/null)" = "$uid" ] && echo "${p#/proc/}"
        done; true'
}

# put_in_ct FILE DEST: copies a host file into the container's filesystem.
put_in_ct() { in_ct sh -c 'cat >"$1"' sh "$2" <"$1"; }

# ---------------------------------------------------------------------------------------
# The checks, in order. Each leaves the service running with its last config, unless it
# says otherwise.

CHECKS=(
    check_image_build_install
    check_boot_brings_it_up
    check_remove_stops_and_install_starts
    check_boards
    check_edited_config
    check_watchdog_restarts_a_stopped_service
    check_stop_kills_a_running_action
    check_kill_reaches_escaped_processes
    check_history_survives_a_restart
    check_polkit_refuses_what_the_rule_does_not_name
    check_reboot_through_polkit
    check_upgrade_keeps_config_and_history
    check_exec_children_are_born_in_their_cgroup
    check_purge_removes_everything
)

HISTORY=()   # tracking ids that must stay in the history

check_image_build_install() {
    step "install into the image with apt in a chroot (as an image build does): enabled, not started"
    cp "$DEB" "$ROOT/root/actiond.deb"
    chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q /root/actiond.deb >"$RUN/chroot-install.log" 2>&1 \
        || { cat "$RUN/chroot-install.log" >&2; die "apt-get install in the chroot failed"; }
    [ -L "$ROOT/etc/systemd/system/multi-user.target.wants/actiond.service" ] \
        || die "the unit was not enabled in the image"
    grep -q '^actiond:' "$ROOT/etc/passwd" || die "no actiond user in the image"
    [ -z "$(pgrep -f "^$ROOT/usr/bin/actiond|^/usr/bin/actiond --config")" ] \
        || die "the install in a chroot started actiond: $(pgrep -af actiond)"
    pass "enabled, user created, nothing started"
}

check_boot_brings_it_up() {
    step "boot: the enabled unit starts and reaches READY"
    boot
    wait_for 30 active || die "actiond is not active after boot: $(in_ct systemctl status actiond --no-pager 2>&1 | head -20)"
    # Type=notify: `active` means systemd got READY=1; the status line is actiond's own.
    [ "$(prop Type)" = notify ] || die "Type is $(prop Type)"
    case $(prop StatusText) in "listening on http://"*) ;; *) die "no READY status: '$(prop StatusText)'" ;; esac
    [ "$(prop User)" = actiond ] || die "runs as '$(prop User)'"
    local out
    out=$(api StartActionAndWait '{"actionId":"disk"}')
    case $out in *'"exitCode":0'*) ;; *) die "disk did not run: $out" ;; esac
    HISTORY+=("$(echo "$out" | field executionTrackingId)")
    pass "active (running), $(prop StatusText), the generic board's disk action ran"
}

check_remove_stops_and_install_starts() {
    step "apt remove stops the service and keeps config and history; apt install ./deb starts it"
    in_ct env DEBIAN_FRONTEND=noninteractive apt-get remove -y -q actiond >"$RUN/remove.log" 2>&1 \
        || { cat "$RUN/remove.log" >&2; die "apt-get remove failed"; }
    [ -z "$(actiond_processes)" ] || die "actiond processes left after remove: $(actiond_processes)"
    [ -f "$ROOT/etc/actiond/config.yaml" ] || die "remove took the conffile"
    [ -d "$ROOT/var/lib/actiond" ] || die "remove took the state directory"
    [ ! -e "$ROOT/usr/bin/actiond" ] || die "remove left the binary"
    cp "$DEB" "$ROOT/root/actiond.deb"
    in_ct sh -c 'cd /root && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./actiond.deb' \
        >"$RUN/install.log" 2>&1 || { cat "$RUN/install.log" >&2; die "apt install ./actiond.deb failed"; }
    wait_for 30 active || die "not active after apt install: $(cat "$RUN/install.log")"
    grep -q 'actiond is running: open http://' "$RUN/install.log" || die "the install did not say where to go: $(cat "$RUN/install.log")"
    wait_for 10 history_has "${HISTORY[@]}" || die "the history before the remove is gone"
    pass "stopped by remove, started by install, history kept"
}

check_boards() {
    step "actiond-board switches to the Raspberry Pi board and back"
    has "$(in_ct actiond-board)" '* generic ' || die "generic is not the board in use: $(in_ct actiond-board)"
    local before
    before=$(prop InvocationID)
    in_ct actiond-board raspberry-pi >"$RUN/board.log" 2>&1 || { cat "$RUN/board.log" >&2; die "actiond-board raspberry-pi failed"; }
    cmp -s "$ROOT/usr/share/actiond/board/raspberry-pi/config.yaml" "$ROOT/etc/actiond/config.yaml" || die "the Pi config is not installed"
    [ -f "$ROOT/etc/systemd/system/actiond.service.d/raspberry-pi.conf" ] || die "no Pi drop-in"
    [ -f "$ROOT/etc/polkit-1/rules.d/50-actiond.rules" ] || die "no Pi polkit rule"
    [ "$(prop PrivateDevices)" = no ] || die "the drop-in is not in force"
    has " $(in_ct id -nG actiond) " ' gpio ' || die "actiond is not in group gpio: $(in_ct id -nG actiond)"
    wait_for 30 active || die "not active on the Pi board"
    [ "$(prop InvocationID)" != "$before" ] || die "the service was not restarted"
    has "$(in_ct actiond-board)" '* raspberry-pi ' || die "raspberry-pi is not marked: $(in_ct actiond-board)"
    in_ct actiond-board generic >"$RUN/board.log" 2>&1 || { cat "$RUN/board.log" >&2; die "actiond-board generic failed"; }
    [ ! -e "$ROOT/etc/systemd/system/actiond.service.d" ] || die "the Pi drop-in is left"
    [ ! -e "$ROOT/etc/polkit-1/rules.d/50-actiond.rules" ] || die "the Pi rule is left"
    [ ! -e "$ROOT/etc/sysusers.d/actiond.conf" ] || die "the Pi sysusers entry is left"
    ! has " $(in_ct id -nG actiond) " ' gpio ' || die "actiond is still in group gpio"
    [ "$(prop PrivateDevices)" = yes ] || die "PrivateDevices is not back"
    wait_for 30 active || die "not active back on the generic board"
    pass "switched both ways; files, groups and drop-in follow the board"
}

check_edited_config() {
    step "an edited config: the board tool refuses to replace it, the service uses it"
    cat >"$RUN/config.yaml" <<EOF
# Edited by scripts/nspawn-test.sh: every action this test needs.
killGracePeriod: 2
actions:
  - {id: hello, title: Hello, shell: 'echo "hello from \$(id -un)"'}
  - {id: sleep, title: Sleep, exec: [sleep, "$MARK"], timeout: 600}
  - {id: reboot, title: Reboot, exec: [systemctl, reboot]}
  - {id: restartJournal, title: Not in the polkit rule, exec: [systemctl, restart, systemd-journald]}
  # A child that leaves the process group and the environment behind: only the cgroup finds it.
  - {id: escape, title: Escapes, shell: 'setsid env -i sleep $((MARK + 1)) & exec sleep 300', timeout: 600}
  - {id: escapeTimeout, title: Escapes and times out, shell: 'setsid env -i sleep $((MARK + 2)) & exec sleep 300', timeout: 2}
  # A daemon started on purpose, by a run that then ends normally: it is left running.
  - {id: daemon, title: Starts a daemon, shell: 'setsid env -i sleep $((MARK + 3)) >/dev/null 2>&1 </dev/null &'}
EOF
    put_in_ct "$RUN/config.yaml" /etc/actiond/config.yaml
    if in_ct actiond-board raspberry-pi >"$RUN/board.log" 2>&1; then die "actiond-board replaced an edited config"; fi
    grep -q 'edited by hand' "$RUN/board.log" || die "the refusal does not say why: $(cat "$RUN/board.log")"
    cmp -s "$RUN/config.yaml" "$ROOT/etc/actiond/config.yaml" || die "the refusal changed the config"
    # actiond reloads the file by itself.
    hello_runs() { has "$(api StartActionAndWait '{"actionId":"hello"}')" 'hello from actiond'; }
    wait_for 30 hello_runs || die "the edited config was not picked up: $(api StartActionAndWait '{"actionId":"hello"}')"
    HISTORY+=("$(run hello)")
    pass "refused, config kept, reloaded"
}

check_watchdog_restarts_a_stopped_service() {
    step "the watchdog restarts a SIGSTOPped actiond (test drop-in: WatchdogSec=2)"
    in_ct mkdir -p /etc/systemd/system/actiond.service.d
    printf '[Service]\nWatchdogSec=2\n' >"$RUN/watchdog.conf"
    put_in_ct "$RUN/watchdog.conf" /etc/systemd/system/actiond.service.d/ci-watchdog.conf
    in_ct systemctl daemon-reload
    in_ct systemctl restart actiond
    wait_for 30 active || die "not active with the short watchdog"
    local pid restarts
    pid=$(prop MainPID) restarts=$(prop NRestarts)
    in_ct sh -c 'kill -STOP "$1"' sh "$pid"
    restarted() { [ "$(prop NRestarts)" -gt "$restarts" ] && [ "$(prop MainPID)" != "$pid" ] && active; }
    wait_for 60 restarted || die "no watchdog restart within 60 s: $(in_ct systemctl status actiond --no-pager 2>&1 | head -15)"
    restarts="$restarts -> $(prop NRestarts)"
    has "$(in_ct journalctl -u actiond --no-pager)" 'Watchdog timeout' || die "the journal shows no watchdog timeout"
    wait_for 10 history_has "${HISTORY[@]}" || die "history lost in the watchdog restart"
    in_ct rm /etc/systemd/system/actiond.service.d/ci-watchdog.conf
    in_ct rmdir /etc/systemd/system/actiond.service.d
    in_ct systemctl daemon-reload
    in_ct systemctl restart actiond
    wait_for 30 active || die "not active after removing the test drop-in"
    pass "restarted by the watchdog (NRestarts $restarts), history kept"
}

check_stop_kills_a_running_action() {
    step "systemctl stop during a running action: recorded as killed, no process left"
    local body id
    body=$(api StartAction '{"actionId":"sleep"}') || die "StartAction sleep failed"
    id=$(echo "$body" | field executionTrackingId)
    [ -n "$id" ] || die "no tracking id: $body"
    sleeping() { [ -n "$(processes "sleep $MARK")" ]; }
    wait_for 30 sleeping || die "the sleep never started"
    in_ct systemctl stop actiond
    [ -z "$(processes "sleep $MARK")" ] || die "sleep $MARK outlived the stop: $(processes "sleep $MARK")"
    [ -z "$(actiond_processes)" ] || die "actiond processes left after stop: $(actiond_processes)"
    in_ct systemctl start actiond
    wait_for 30 active || die "not active after start"
    body=$(api ExecutionStatus "{\"executionTrackingId\":\"$id\"}")
    case $body in
        *'"executionFinished":true'*'killed because the service is stopping'*|*'killed because the service is stopping'*'"executionFinished":true'*) ;;
        *) die "the stopped sleep is not recorded as killed: $body" ;;
    esac
    HISTORY+=("$id")
    pass "killed on stop, recorded, nothing left"
}

check_kill_reaches_escaped_processes() {
    step "Delegate=yes: each run in a cgroup of its own; kills reach a setsid, env -i child"
    local log main id body
    log=$(in_ct journalctl -u actiond --no-pager -o cat _SYSTEMD_INVOCATION_ID="$(prop InvocationID)")
    has "$log" 'kill containment: each execution in its own cgroup below' \
        || die "not in cgroup mode under the shipped unit: $(echo "$log" | grep 'kill containment' || echo 'no kill containment line')"
    main=$(prop MainPID)
    case $(in_ct cat "/proc/$main/cgroup") in
        *"/actiond.service/supervisor"*) ;;
        *) die "actiond is not in actiond.service/supervisor: $(in_ct cat "/proc/$main/cgroup")" ;;
    esac
    escaped() { [ -n "$(processes "sleep $1")" ]; }
    gone() { [ -z "$(processes "sleep $1")" ]; }
    # KillAction.
    body=$(api StartAction '{"actionId":"escape"}') || die "StartAction escape failed"
    id=$(echo "$body" | field executionTrackingId)
    wait_for 30 escaped $((MARK + 1)) || die "the escaping child never started"
    api KillAction "{\"executionTrackingId\":\"$id\"}" >/dev/null || die "KillAction failed"
    wait_for 30 gone $((MARK + 1)) || die "KillAction left the escaped child: $(processes "sleep $((MARK + 1))")"
    # The timeout, through the same ladder.
    api StartAction '{"actionId":"escapeTimeout"}' >/dev/null || die "StartAction escapeTimeout failed"
    wait_for 30 escaped $((MARK + 2)) || die "the escaping child never started"
    wait_for 30 gone $((MARK + 2)) || die "the timeout left the escaped child: $(processes "sleep $((MARK + 2))")"
    # A run that ends normally leaves its daemon; stopping the service ends it.
    has "$(api StartActionAndWait '{"actionId":"daemon"}')" '"exitCode":0' || die "daemon did not run"
    sleep 1
    escaped $((MARK + 3)) || die "the daemon of a finished run was killed"
    in_ct systemctl restart actiond
    wait_for 30 active || die "not active after restart"
    gone $((MARK + 3)) || die "the daemon outlived the service: $(processes "sleep $((MARK + 3))")"
    pass "cgroup mode; killed by KillAction and by timeout; a finished run's daemon lives until stop"
}

# ---------------------------------------------------------------------------------------
# `exec:` commands under the shipped unit: born in their cgroup, no wrapper shell. Kept in a
# function of its own, with the actions it needs added to the config here and the config
# put back at the end, so that it stands apart from the other checks; it runs just before
# the purge, so that its runs do not push the runs the history checks look for off the
# first page of GetLogs.

check_exec_children_are_born_in_their_cgroup() {
    step "exec: commands are born in run-N with no shell above them; a setsid + env -i grandchild is killed"
    local main log id body pid chain p argv0 env probe
    main=$(prop MainPID)
    log=$(in_ct journalctl -u actiond --no-pager -o cat _SYSTEMD_INVOCATION_ID="$(prop InvocationID)")
    has "$log" 'which its process enters between clone and execve, with no wrapper shell' \
        || die "the log does not say how executions enter their cgroup: $(echo "$log" | grep 'kill containment' || echo 'no kill containment line')"
    {
        cat "$RUN/config.yaml"
        echo "  - {id: execNap, title: Exec nap, exec: [sleep, \"$((MARK + 4))\"], timeout: 600}"
        echo "  - {id: execEscape, title: Exec escape, exec: [setsid, --wait, env, -i, sleep, \"$((MARK + 5))\"], timeout: 600}"
        # What clone3 answers under the unit's seccomp filters (RestrictNamespaces=): a
        # command inherits them. 38 is ENOSYS, 22 EINVAL (allowed, refused for its null args).
        echo "  - {id: clone3Probe, title: clone3 probe, exec: [perl, -e, 'syscall(435, 0, 0); print \$!+0']}"
    } >"$RUN/config-exec.yaml"
    put_in_ct "$RUN/config-exec.yaml" /etc/actiond/config.yaml
    napping() { [ -n "$(processes "sleep $1")" ]; }
    gone() { [ -z "$(processes "sleep $1")" ]; }
    starts_nap() {
        body=$(api StartAction '{"actionId":"execNap"}') && id=$(echo "$body" | field executionTrackingId) && [ -n "$id" ]
    }
    wait_for 30 starts_nap || die "the config with exec actions was not picked up: $body"
    wait_for 30 napping $((MARK + 4)) || die "exec: [sleep $((MARK + 4))] never started"
    pid=$(processes "sleep $((MARK + 4))")
    case $(in_ct cat "/proc/$pid/cgroup") in
        *"/actiond.service/run-"*) ;;
        *) die "the exec: command is not in a run cgroup: $(in_ct cat "/proc/$pid/cgroup")" ;;
    esac
    # From the command up to actiond by the ppid chain: no shell anywhere.
    p=$pid chain=""
    while [ "$p" != "$main" ]; do
        [ -n "$p" ] && [ "$p" -gt 1 ] || die "actiond ($main) is not above the exec: command: $chain"
        argv0=$(in_ct sh -c 'tr "\0" "\n" <"/proc/$1/cmdline" | head -1' sh "$p")
        chain="$chain $p:$argv0"
        case ${argv0##*/} in sh|dash|bash|ash|busybox) die "a shell above the exec: command:$chain" ;; esac
        p=$(in_ct sh -c 'sed "s/.*) //" "/proc/$1/stat" | cut -d" " -f2' sh "$p")
    done
    [ "$(in_ct sh -c 'sed "s/.*) //" "/proc/$1/stat" | cut -d" " -f2' sh "$pid")" = "$main" ] \
        || die "the exec: command is not actiond's own child:$chain"
    api KillAction "{\"executionTrackingId\":\"$id\"}" >/dev/null || die "KillAction failed"
    wait_for 30 gone $((MARK + 4)) || die "KillAction left the exec: command"
    # setsid + env -i below an exec: command: out of the group and unmarked, still in the cgroup.
    body=$(api StartAction '{"actionId":"execEscape"}') || die "StartAction execEscape failed"
    id=$(echo "$body" | field executionTrackingId)
    wait_for 30 napping $((MARK + 5)) || die "the setsid, env -i grandchild never started"
    pid=$(processes "sleep $((MARK + 5))")
    env=$(in_ct sh -c 'tr "\0" " " <"/proc/$1/environ"' sh "$pid")
    ! has "$env" ACTIOND || die "the grandchild kept the execution's marker: $env"
    api KillAction "{\"executionTrackingId\":\"$id\"}" >/dev/null || die "KillAction failed"
    wait_for 30 gone $((MARK + 5)) || die "KillAction left the setsid, env -i grandchild: $(processes "sleep $((MARK + 5))")"
    probe=$(api StartActionAndWait '{"actionId":"clone3Probe"}' | field stdout)
    echo "    clone3 under the unit answers errno ${probe:-?}; outside it $(in_ct perl -e 'syscall(435, 0, 0); print $!+0')"
    put_in_ct "$RUN/config.yaml" /etc/actiond/config.yaml
    pass "born in run-N, actiond's own child, no shell above it; the grandchild killed"
}

check_history_survives_a_restart() {
    step "the history survives a restart"
    in_ct systemctl restart actiond
    wait_for 30 active || die "not active after restart"
    history_has "${HISTORY[@]}" || die "history lost: $(api GetLogs '{"startOffset":0}')"
    pass "${#HISTORY[@]} runs still listed"
}

check_polkit_refuses_what_the_rule_does_not_name() {
    step "polkit refuses what the rule does not allow (restart systemd-journald)"
    local body
    body=$(api StartActionAndWait '{"actionId":"restartJournal"}')
    case $body in *'"exitCode":0'*) die "the actiond user restarted systemd-journald: $body" ;; esac
    case $body in *'Access denied'*|*'nteractive authentication required'*) ;; *) die "refused, but not by polkit: $body" ;; esac
    pass "refused: $(echo "$body" | grep -o 'Access denied\|[Ii]nteractive authentication required' | head -1)"
}

check_reboot_through_polkit() {
    step "Reboot: systemctl reboot as the actiond user, allowed by the polkit rule, reboots the container"
    local boot_id id status
    boot_id=$(in_ct cat /proc/sys/kernel/random/boot_id)
    id=$(api StartAction '{"actionId":"reboot"}' | field executionTrackingId)
    [ -n "$id" ] || die "StartAction reboot gave no tracking id"
    # systemd-nspawn ends when the container reboots (exit status 133), and the supervisor
    # (here this script, on a host systemd-nspawn@.service) boots it again.
    for _ in $(seq 600); do kill -0 "$NSPAWN" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$NSPAWN" 2>/dev/null && die "the container did not reboot within 60 s"
    status=0
    wait "$NSPAWN" || status=$?
    [ "$status" -eq 133 ] || die "systemd-nspawn ended with $status, not 133 (reboot)"
    NSPAWN="" INIT="" MAKING=""
    boot
    [ "$(in_ct cat /proc/sys/kernel/random/boot_id)" != "$boot_id" ] || die "the boot id did not change"
    wait_for 30 active || die "actiond is not back after the reboot"
    HISTORY+=("$id")
    wait_for 10 history_has "${HISTORY[@]}" || die "history lost across the reboot (the reboot run is $id)"
    pass "rebooted (new boot id), service back, the reboot's own run recorded"
}

check_upgrade_keeps_config_and_history() {
    step "upgrade to a newer build: the edited config and the history stay"
    local new=$RUN/upgrade newdeb before
    rm -rf "$new"
    mkdir -p "$new"
    dpkg-deb -R "$DEB" "$new/root"
    # A newer version whose shipped config differs too, so dpkg has to choose; with the
    # choice unattended upgrades make (keep the admin's file) the new one lands beside it.
    sed -i "s/^Version: .*/Version: $version+ci1/" "$new/root/DEBIAN/control"
    echo "# newer build" >>"$new/root/etc/actiond/config.yaml"
    newdeb=$new/actiond_${version}+ci1_amd64.deb
    dpkg-deb --root-owner-group --build "$new/root" "$newdeb" >/dev/null
    cp "$newdeb" "$ROOT/root/"
    before=$(prop InvocationID)
    in_ct sh -c "cd /root && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold ./$(basename "$newdeb")" \
        >"$RUN/upgrade.log" 2>&1 || { cat "$RUN/upgrade.log" >&2; die "the upgrade failed"; }
    [ "$(in_ct dpkg-query -W -f='${Version}' actiond)" = "$version+ci1" ] || die "not upgraded"
    cmp -s "$RUN/config.yaml" "$ROOT/etc/actiond/config.yaml" || die "the upgrade changed the edited config"
    grep -q '^# newer build' "$ROOT/etc/actiond/config.yaml.dpkg-dist" || die "no config.yaml.dpkg-dist with the new config"
    wait_for 30 active || die "not active after the upgrade"
    [ "$(prop InvocationID)" != "$before" ] || die "the upgrade did not restart the service"
    history_has "${HISTORY[@]}" || die "history lost in the upgrade"
    HISTORY+=("$(run hello)")
    pass "config kept (new one as .dpkg-dist), restarted, history kept"
}

check_purge_removes_everything() {
    step "apt purge removes everything"
    local files left=""
    files=$(in_ct dpkg-query -L actiond)
    # What actiond-board and admins add in actiond's places goes too.
    in_ct mkdir -p /etc/systemd/system/actiond.service.d
    printf '[Service]\nEnvironment=X=1\n' >"$RUN/override.conf"
    put_in_ct "$RUN/override.conf" /etc/systemd/system/actiond.service.d/override.conf
    in_ct env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q actiond >"$RUN/purge.log" 2>&1 \
        || { cat "$RUN/purge.log" >&2; die "apt-get purge failed"; }
    for f in $files /etc/actiond /var/lib/actiond /etc/systemd/system/actiond.service.d \
             /etc/systemd/system/multi-user.target.wants/actiond.service \
             /etc/polkit-1/rules.d/50-actiond.rules /etc/sysusers.d/actiond.conf; do
        # Directories other packages share (/usr/bin, /usr/share/doc, …) stay.
        [ -d "$ROOT$f" ] && [ -n "$(ls -A "$ROOT$f" 2>/dev/null)" ] && [ "$f" != /etc/actiond ] \
            && [ "$f" != /var/lib/actiond ] && [ "$f" != /etc/systemd/system/actiond.service.d ] && continue
        if [ -e "$ROOT$f" ] || [ -L "$ROOT$f" ]; then left="$left $f"; fi
    done
    [ -z "$left" ] || die "left after purge:$left"
    [ "$(prop LoadState)" = not-found ] || die "systemd still knows the unit: $(prop LoadState)"
    [ -z "$(actiond_processes)" ] || die "actiond processes left: $(actiond_processes)"
    ! in_ct dpkg-query -W actiond >/dev/null 2>&1 || die "dpkg still lists actiond: $(in_ct dpkg-query -W actiond 2>&1)"
    pass "no file, unit, process or state left (the system user stays, as Debian does)"
}

# ---------------------------------------------------------------------------------------

[ -d "$PRISTINE" ] || make_rootfs
if $prepare_only; then echo "rootfs ready: $PRISTINE"; exit 0; fi
# The run's root is an overlay on the cached rootfs: nothing to copy, and the cache stays
# as debootstrap left it whatever the run writes.
unmount_root
rm -rf "$RUN"
mkdir -p "$RUN/upper" "$RUN/work" "$ROOT"
mount -t overlay overlay -o "lowerdir=$PRISTINE,upperdir=$RUN/upper,workdir=$RUN/work" "$ROOT" \
    || die "cannot mount an overlay on $PRISTINE"
for check in "${CHECKS[@]}"; do
    t0=$SECONDS
    "$check"
    echo "    ($((SECONDS - t0)) s)"
done
echo
echo "nspawn-test: ${#CHECKS[@]} checks passed in $((SECONDS - started)) s"
