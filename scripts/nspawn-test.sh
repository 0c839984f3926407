#!/usr/bin/env bash
# CI stage (called by scripts/test.sh): the amd64 Debian package under a real systemd. A
# minimal Debian rootfs (debootstrap, cached under target/nspawn/ and keyed by its recipe) is
# overlaid, the package is installed into it as an image build would (chroot: enabled, not
# started), the container is booted with systemd-nspawn, and everything is checked from outside
# through nsenter: the service comes up at boot and reaches READY, remove stops it, an
# install from a signed apt repository served from the host (README's commands, signed-by)
# starts it, boards switch keeping the admin's users and their sessions, the watchdog restarts a
# stopped process, a stop records a running action as killed and leaves no process, actions
# run as actiond-run with no capability and cannot write actiond's history, sessions or config,
# read its secrets or signal it, each run
# gets a cgroup of its own (Delegate=yes) so a kill reaches a child that called setsid and
# cleared its environment (the host needs a cgroup v2 hierarchy; scripts/test.sh mounts one
# beside a legacy one), the
# history survives restarts, Reboot goes through polkit (which refuses what the rule does
# not name), `apt upgrade` to the next version published to the repository keeps the config
# and the history and brings the new panel without a question, a tampered Release is refused,
# a purge removes all of it (the groups a board added included), and an upgrade from a 0.1.0
# install moves its one-file config onto the layers losing nothing.
#
#   scripts/nspawn-test.sh           tests dist/deb/actiond_<version>_amd64.deb
#   scripts/nspawn-test.sh --prepare only make the cached rootfs (scripts/test.sh runs this
#                                    in the background while the packages build)
#
# The repository: scripts/release.sh publishes the package into target/nspawn/run/repo,
# signed with a throwaway key made for the run (target/nspawn/run/gnupg), and the host serves
# it over HTTP on a free port of a link-local address of a veth pair into the container (the
# container has no other network). The next version is the same tree with a bumped version
# and one more action in the generic panel, packaged and published the same way.
#
# Each check is a function named in CHECKS below; a new assertion is one more function and
# one more name there. The container's root is an overlay on the cached rootfs. Nothing
# outlives the stage: the trap powers the container off (and kills it if it does not stop),
# unmounts the overlay and removes what the run wrote. ACTIOND_NSPAWN_KEEP=1 keeps that
# (target/nspawn/run/upper) for a look after a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=nspawn-test
STEP_PREFIX="nspawn: "
. scripts/lib.sh

SUITE=bookworm
# polkitd, iproute2 and procps: the package recommends them, and the Reboot check needs polkitd
# (libpam-systemd provides the logind it depends on, which debootstrap does not resolve by
# itself). Everything the package needs is in the image, so installing it needs no network
# inside the container but the host's apt repository of actiond.
INCLUDE=systemd,systemd-sysv,dbus,curl,polkitd,libpam-systemd,iproute2,procps
# Bump when the recipe below changes in a way the key does not show.
RECIPE=1
NSPAWN_DIR=$PWD/target/nspawn
RUN=$NSPAWN_DIR/run
ROOT=$RUN/root
# A sleep no other process on the machine has on its command line.
MARK=4127
MACHINE=actiond-ci-$$
version=$(cargo_version)
prepare_only=false
if [ "${1:-}" = --prepare ]; then prepare_only=true; shift; fi
[ $# -eq 0 ] || { echo "usage: scripts/nspawn-test.sh [--prepare]" >&2; exit 2; }
DEB=dist/deb/actiond_${version}_amd64.deb
# The next version, published to the same repository for the upgrade.
NEXT=$version+ci1
# The upgrade from 0.1.0 is checked with the packaging files of 0.1.0's last commit (839d6a3,
# the one-file config), kept in tests/nspawn/.
# The veth pair into the container (interface names are at most 15 characters) and its
# link-local /30, the host at .1, the container at .2.
HOSTIF=actd$(printf %x $$)
REPO=$RUN/repo
HTTP="" PORT="" URL="" HOST_IP="" CT_IP=""
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
pass() { echo "    ok: $*"; }

[ "$(id -u)" -eq 0 ] || die "booting a container needs root"
need debootstrap debootstrap
need systemd-nspawn systemd-container
need nsenter util-linux
need pgrep procps
need ip iproute2
need reprepro reprepro
need gpg gnupg
need python3 python3
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
        --network-veth-extra="$HOSTIF:host1" \
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
    network
}

# pick_subnet: a link-local 169.254.N.0/30 no interface here has.
pick_subnet() {
    local n
    for _ in $(seq 50); do
        n=$((RANDOM % 250 + 2))
        ip -4 addr show | grep -q " 169\.254\.$n\." && continue
        HOST_IP=169.254.$n.1 CT_IP=169.254.$n.2
        return 0
    done
    die "no free 169.254.N.0/30 for the veth pair"
}

# network: the veth pair's addresses (the container's side set from here, with the host's
# `ip` in the container's network namespace), and the HTTP server of the repository on the
# host, started once: bound to every address of the host, so that it stays up while the
# container reboots and its veth pair is made anew (a test repository, for a few minutes).
network() {
    [ -n "$HOST_IP" ] || pick_subnet
    ip addr add "$HOST_IP/30" dev "$HOSTIF" || die "cannot address $HOSTIF"
    ip link set "$HOSTIF" up
    nsenter --target "$INIT" --net ip addr add "$CT_IP/30" dev host1 || die "cannot address host1 in the container"
    nsenter --target "$INIT" --net ip link set host1 up
    if [ -z "$HTTP" ]; then
        mkdir -p "$REPO"
        python3 -u -m http.server --bind 0.0.0.0 --directory "$REPO" 0 >"$RUN/http.log" 2>&1 </dev/null &
        HTTP=$!
        serving() { grep -q '^Serving HTTP on .* port [0-9]' "$RUN/http.log"; }
        wait_for 10 serving || die "the repository's HTTP server did not start: $(cat "$RUN/http.log")"
        PORT=$(sed -n 's/^Serving HTTP on [^ ]* port \([0-9]*\).*/\1/p' "$RUN/http.log" | head -1)
        URL=http://$HOST_IP:$PORT
    fi
    in_ct curl -sSf --max-time 10 -o /dev/null "$URL/" || die "the container does not reach $URL"
}

# unmount_root: takes the run's overlay down, if it is up (also one a killed run left).
unmount_root() {
    if grep -q " $ROOT " /proc/self/mounts; then
        umount "$ROOT" 2>/dev/null || umount --lazy "$ROOT"
    fi
}

cleanup() {
    set +e
    if [ -n "$HTTP" ]; then kill "$HTTP" 2>/dev/null; wait "$HTTP" 2>/dev/null; fi
    [ -d "$RUN/gnupg" ] && GNUPGHOME=$RUN/gnupg gpgconf --kill all 2>/dev/null
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
    ip link del "$HOSTIF" 2>/dev/null
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

# actiond_processes: pids of processes of the actiond user, or of actiond-run (its actions'),
# in the container.
actiond_processes() {
    in_ct sh -c '
        uids=" $(id -u actiond 2>/dev/null) $(id -u actiond-run 2>/dev/null) "
        [ "$uids" != "  " ] || exit 0
        for p in /proc/[0-9]*; do
            u=$(awk "/^Uid:/ {print \$2}" "$p/status" 2>/dev/null)
            [ -n "$u" ] && case $uids in *" $u "*) echo "${p#/proc/}" ;; esac
        done; true'
}

# put_in_ct FILE DEST: copies a host file into the container's filesystem.
put_in_ct() { in_ct sh -c 'cat >"$1"' sh "$2" <"$1"; }

# add_user NAME PASSWORD: a user of group admins under authLocalUsers in the admin's config,
# the way README says (`actiond hash-password`, then a line under users:).
# reloads: how many times the running service has said "config reloaded". A login is tried
# only after the reload that brings its user: every earlier try is a failed login, and five
# of them within a minute throttle that name for the minute.
reloads() {
    in_ct journalctl -u actiond --no-pager -o cat _SYSTEMD_INVOCATION_ID="$(prop InvocationID)" \
        | grep -c 'config reloaded' || true
}

add_user() {
    local hash
    hash=$(printf '%s\n' "$2" | in_ct actiond hash-password) || die "actiond hash-password failed"
    in_ct sed -i "s|^  users:\$|  users:\n    - {username: $1, usergroup: admins, password: '$hash'}|" \
        /etc/actiond/config.yaml
    grep -q "username: $1," "$ROOT/etc/actiond/config.yaml" || die "no users: line to add $1 under"
}

# login NAME PASSWORD: the session cookie (svc-sid-local=…) of a login.
login() {
    in_ct curl -sS --max-time 30 -D - -o /dev/null -H 'Content-Type: application/json' \
        -H 'Connect-Protocol-Version: 1' -d "{\"username\":\"$1\",\"password\":\"$2\"}" \
        http://localhost:1337/api/LocalUserLogin | tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: *\(svc-sid-local=[^;]*\).*/\1/p'
}

# who COOKIE: the user a session cookie makes its holder.
who() {
    in_ct curl -sS --max-time 30 -H "Cookie: $1" -H 'Content-Type: application/json' \
        -H 'Connect-Protocol-Version: 1' -d '{}' http://localhost:1337/api/WhoAmI | field authenticatedUser
}

# rest_of_config: the admin's config but its board: line.
rest_of_config() { sed '/^board: /d' "$ROOT/etc/actiond/config.yaml"; }

# ---------------------------------------------------------------------------------------
# The repository

# signing_key: a throwaway signing key for the run (gpg, under the run's directory); prints
# its fingerprint.
signing_key() {
    if [ ! -d "$GNUPGHOME" ]; then
        mkdir -m 0700 "$GNUPGHOME"
        gpg --batch --quiet --passphrase '' --quick-gen-key "actiond CI <ci@actiond.invalid>" ed25519 sign 1d \
            2>>"$RUN/gpg.log" || die "gpg could not make a key: $(cat "$RUN/gpg.log")"
    fi
    gpg --batch --list-secret-keys --with-colons | awk -F: '$1 == "fpr" { print $10; exit }'
}

# publish TREE VERSION: scripts/release.sh of TREE publishes its amd64 package of VERSION
# (already in TREE/dist/deb) into the repository, signed with the run's key.
publish() {
    local key
    export GNUPGHOME=$RUN/gnupg
    key=$(signing_key)
    (cd "$1" && bash scripts/release.sh --no-build --arch amd64 --repo "$REPO" --key "$key" \
        --url "$URL" "$2") >"$RUN/release-$2.log" 2>&1 \
        || { cat "$RUN/release-$2.log" >&2; die "scripts/release.sh $2 failed"; }
}

# next_release: the same tree with a bumped version and one more action in the generic panel,
# packaged from the same binary: what the repository gets for the upgrade.
next_release() {
    local tree=$RUN/next
    rm -rf "$tree"
    mkdir -p "$tree/dist/x86_64-unknown-linux-musl"
    git ls-files -z | xargs -0 tar -cf - 2>/dev/null | tar -xf - -C "$tree"
    cp dist/x86_64-unknown-linux-musl/actiond "$tree/dist/x86_64-unknown-linux-musl/"
    sed -i "0,/^version = \"$version\"/s//version = \"$NEXT\"/" "$tree/Cargo.toml"
    cat >>"$tree/board/generic/config.yaml" <<'EOF2'

  - id: ciNewPanel
    title: New in the next release
    acls: [status]
    exec: [echo, new panel]
EOF2
    (cd "$tree" && bash scripts/package-deb.sh --no-build amd64) >"$RUN/next-package.log" 2>&1 \
        || { cat "$RUN/next-package.log" >&2; die "packaging $NEXT failed"; }
    echo "$tree"
}

# readme_install: the commands of README's "From the apt repository", for the container: the
# repository's address is the host's, and root needs no sudo.
readme_install() {
    awk '/^### From the apt repository/ { on = 1 } on && /^```sh/ { block = 1; next }
         block && /^```/ { exit } block { print }' README.md \
        | sed -e "s|https://OWNER.github.io/actiond|$URL|g" -e 's/sudo //g'
}

# apt_in_ct ARGS...: apt-get in the container, unattended, with no standard input (so a
# conffile question would fail it); the output goes to $RUN/apt.log.
apt_in_ct() {
    in_ct env DEBIAN_FRONTEND=noninteractive apt-get -q "$@" >"$RUN/apt.log" 2>&1 </dev/null
}

# ---------------------------------------------------------------------------------------
# The checks, in order. Each leaves the service running with its last config, unless it
# says otherwise.

CHECKS=(
    check_image_build_install
    check_boot_brings_it_up
    check_install_from_the_repository
    check_boards_keep_the_admins_users_and_sessions
    check_overlay_and_an_admins_own_files
    check_watchdog_restarts_a_stopped_service
    check_stop_kills_a_running_action
    check_actions_cannot_touch_actiond
    check_kill_reaches_escaped_processes
    check_history_survives_a_restart
    check_polkit_refuses_what_the_rule_does_not_name
    check_reboot_through_polkit
    check_upgrade_from_the_repository
    check_a_tampered_release_is_refused
    check_exec_children_are_born_in_their_cgroup
    check_purge_removes_everything
    check_upgrade_from_0_1_0
)

HISTORY=()   # tracking ids that must stay in the history
ADMIN_PW="door bell 1337"
COOKIE=""    # the session of the user `ci`, which board switches and upgrades must keep

check_image_build_install() {
    step "install into the image with apt in a chroot (as an image build does): enabled, not started"
    cp "$DEB" "$ROOT/root/actiond.deb"
    chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q /root/actiond.deb >"$RUN/chroot-install.log" 2>&1 \
        || { cat "$RUN/chroot-install.log" >&2; die "apt-get install in the chroot failed"; }
    [ -L "$ROOT/etc/systemd/system/multi-user.target.wants/actiond.service" ] \
        || die "the unit was not enabled in the image"
    grep -q '^actiond:' "$ROOT/etc/passwd" || die "no actiond user in the image"
    grep -q '^actiond-run:' "$ROOT/etc/passwd" || die "no actiond-run user (the actions') in the image"
    [ -z "$(pgrep -f "^$ROOT/usr/bin/actiond|^/usr/bin/actiond --config")" ] \
        || die "the install in a chroot started actiond: $(pgrep -af actiond)"
    # The admin's config, from the template, on the generic board; the overlay directory.
    grep -qx 'board: /usr/share/actiond/board/generic/config.yaml' "$ROOT/etc/actiond/config.yaml" \
        || die "no admin config on the generic board: $(head -20 "$ROOT/etc/actiond/config.yaml")"
    [ -d "$ROOT/etc/actiond/config.d" ] || die "no /etc/actiond/config.d"
    # (the group by number: this machine's names are not the image's)
    [ "$(stat -c '%a %g' "$ROOT/etc/actiond/config.yaml")" = "640 $(chroot "$ROOT" getent group actiond | cut -d: -f3)" ] \
        || die "config.yaml is $(stat -c '%a %g' "$ROOT/etc/actiond/config.yaml"), not 640 group actiond"
    [ -z "$(chroot "$ROOT" dpkg-query -W -f='${Conffiles}' actiond)" ] || die "the package has conffiles"
    pass "enabled, user created, the admin's config written from the template, nothing started"
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
    out=$(api StartActionAndWait '{"actionId":"network"}')
    case $out in *'"exitCode":0'*) ;; *) die "network (ip, from iproute2) did not run: $out" ;; esac
    pass "active (running), $(prop StatusText), the generic board's disk and network actions ran"
}

check_install_from_the_repository() {
    step "apt remove keeps config and history; README's commands install from the signed repository served by the host"
    apt_in_ct remove -y actiond || { cat "$RUN/apt.log" >&2; die "apt-get remove failed"; }
    [ -z "$(actiond_processes)" ] || die "actiond processes left after remove: $(actiond_processes)"
    [ -f "$ROOT/etc/actiond/config.yaml" ] || die "remove took the config"
    [ -d "$ROOT/var/lib/actiond" ] || die "remove took the state directory"
    [ ! -e "$ROOT/usr/bin/actiond" ] || die "remove left the binary"
    publish "$PWD" "$version"
    local commands
    commands=$(readme_install)
    case $commands in
        *"signed-by="*"$URL"*"apt install actiond"*) ;;
        *) die "README's install commands are not what they should be: $commands" ;;
    esac
    printf '%s\n' "$commands" | sed 's/^/    $ /'
    in_ct sh -ec "$commands" >"$RUN/install.log" 2>&1 < <(yes) \
        || { cat "$RUN/install.log" >&2; die "README's install commands failed"; }
    [ "$(in_ct dpkg-query -W -f='${Version}' actiond)" = "$version" ] || die "actiond $version is not installed"
    has "$(in_ct apt-cache policy actiond)" "$URL stable/main" \
        || die "apt does not know the repository: $(in_ct apt-cache policy actiond)"
    wait_for 30 active || die "not active after the install: $(cat "$RUN/install.log")"
    grep -q 'actiond is running: open http://' "$RUN/install.log" \
        || die "the install did not say where to go: $(cat "$RUN/install.log")"
    wait_for 10 history_has "${HISTORY[@]}" || die "the history before the remove is gone"
    pass "installed $version from $URL (signed-by), started, history kept"
}

check_boards_keep_the_admins_users_and_sessions() {
    step "a user in the admin's config; actiond-board switches to the Pi board and back, keeping the user and the session"
    has "$(in_ct actiond-board)" '* generic ' || die "generic is not the board in use: $(in_ct actiond-board)"
    local r0
    r0=$(reloads)
    add_user ci "$ADMIN_PW"
    reloaded() { [ "$(reloads)" -gt "$r0" ]; }
    wait_for 30 reloaded || die "the config with the user ci was not reloaded"
    logged_in() { COOKIE=$(login ci "$ADMIN_PW"); [ -n "$COOKIE" ]; }
    wait_for 10 logged_in || die "the user ci cannot log in after the config reloaded"
    [ "$(who "$COOKIE")" = ci ] || die "the session is not ci's"
    local before rest groups
    rest=$(rest_of_config)
    # Not a Raspberry Pi (no device tree here): refused, nothing changed.
    if in_ct actiond-board raspberry-pi >"$RUN/board.log" 2>&1; then die "actiond-board switched a machine that is no Pi"; fi
    grep -q 'for a Raspberry Pi' "$RUN/board.log" && grep -q -- '--force raspberry-pi' "$RUN/board.log" \
        || die "the refusal does not say why: $(cat "$RUN/board.log")"
    has "$(in_ct actiond-board)" '* generic ' || die "the refusal changed the board"
    [ ! -e "$ROOT/etc/sysusers.d/actiond.conf" ] || die "the refusal wrote the groups"
    ! in_ct getent group gpio >/dev/null || die "there is a gpio group before the switch"
    # A machine that says it is one.
    echo "Raspberry Pi 4 Model B Rev 1.4" >"$ROOT/root/model"
    before=$(prop InvocationID)
    in_ct env ACTIOND_MODEL_FILE=/root/model actiond-board raspberry-pi >"$RUN/board.log" 2>&1 \
        || { cat "$RUN/board.log" >&2; die "actiond-board raspberry-pi failed"; }
    grep -qx 'board: /usr/share/actiond/board/raspberry-pi/config.yaml' "$ROOT/etc/actiond/config.yaml" \
        || die "the board: line is not the Pi's"
    [ "$(rest_of_config)" = "$rest" ] || die "the switch changed more of the admin's config than its board: line"
    [ "$(readlink "$ROOT/etc/systemd/system/actiond.service.d/raspberry-pi.conf")" = /usr/share/actiond/board/raspberry-pi/service.conf ] \
        || die "no link to the Pi drop-in"
    [ "$(readlink "$ROOT/etc/polkit-1/rules.d/50-actiond.rules")" = /usr/share/actiond/board/raspberry-pi/polkit.rules ] \
        || die "no link to the Pi polkit rule"
    [ "$(prop PrivateDevices)" = no ] || die "the drop-in is not in force"
    groups=" $(in_ct id -nG actiond) "
    has "$groups" ' gpio ' && has "$groups" ' video ' || die "actiond is not in gpio and video: $groups"
    grep -qx '# created-groups: gpio' "$ROOT/etc/sysusers.d/actiond.conf" \
        || die "the created gpio group is not recorded: $(cat "$ROOT/etc/sysusers.d/actiond.conf")"
    wait_for 30 active || die "not active on the Pi board"
    [ "$(prop InvocationID)" != "$before" ] || die "the service was not restarted"
    has "$(in_ct actiond-board)" '* raspberry-pi ' || die "raspberry-pi is not marked: $(in_ct actiond-board)"
    has "$(api StartActionAndWait '{"actionId":"temperature"}')" '"actionId":"temperature"' || die "the Pi panel is not in force"
    [ "$(who "$COOKIE")" = ci ] || die "the session did not survive the switch and its restart"
    in_ct actiond-board generic >"$RUN/board.log" 2>&1 || { cat "$RUN/board.log" >&2; die "actiond-board generic failed"; }
    [ ! -e "$ROOT/etc/systemd/system/actiond.service.d" ] || die "the Pi drop-in is left"
    [ ! -L "$ROOT/etc/polkit-1/rules.d/50-actiond.rules" ] || die "the Pi rule is left"
    [ ! -e "$ROOT/etc/sysusers.d/actiond.conf" ] || die "the Pi sysusers entry is left"
    groups=" $(in_ct id -nG actiond) "
    ! has "$groups" ' gpio ' && ! has "$groups" ' video ' || die "actiond is still in gpio or video: $groups"
    ! in_ct getent group gpio >/dev/null || die "the gpio group actiond-board created is left"
    [ "$(prop PrivateDevices)" = yes ] || die "PrivateDevices is not back"
    [ "$(rest_of_config)" = "$rest" ] || die "the switch back changed the admin's config"
    wait_for 30 active || die "not active back on the generic board"
    [ "$(who "$COOKIE")" = ci ] || die "the session did not survive the switch back"
    pass "refused on a non-Pi; switched both ways by the board: line, links and groups (the created gpio deleted again); user and session kept"
}

check_overlay_and_an_admins_own_files() {
    step "the admin's actions in config.d/ are read; a polkit rule the admin wrote is never replaced"
    cat >"$RUN/ci.yaml" <<EOF
# Written by scripts/nspawn-test.sh: every action this test needs, which its guest calls may
# run (a setting here replaces the board's).
killGracePeriod: 2
defaultPermissions: {view: true, exec: true, logs: true, kill: true}
# One page of GetLogs holds every run the checks look for.
logHistoryPageSize: 100
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
    put_in_ct "$RUN/ci.yaml" /etc/actiond/config.d/50-ci.yaml
    # actiond reloads by itself.
    hello_runs() { has "$(api StartActionAndWait '{"actionId":"hello"}')" 'hello from actiond-run'; }
    wait_for 30 hello_runs || die "the overlay file was not picked up: $(api StartActionAndWait '{"actionId":"hello"}')"
    HISTORY+=("$(run hello)")
    local checked
    checked=$(in_ct actiond --check-config /etc/actiond/config.yaml 2>&1) || die "--check-config failed: $checked"
    has "$checked" '/etc/actiond/config.d/50-ci.yaml (overlay): reboot, hello, sleep, restartJournal' \
        || die "--check-config does not say where the actions are: $checked"
    # The admin's own rule in the board's place: refused, nothing changes.
    printf '// mine\n' >"$RUN/rule"
    put_in_ct "$RUN/rule" /etc/polkit-1/rules.d/50-actiond.rules
    if in_ct env ACTIOND_MODEL_FILE=/root/model actiond-board raspberry-pi >"$RUN/board.log" 2>&1; then
        die "actiond-board replaced the admin's polkit rule"
    fi
    grep -q 'written by an admin' "$RUN/board.log" || die "the refusal does not say why: $(cat "$RUN/board.log")"
    cmp -s "$RUN/rule" "$ROOT/etc/polkit-1/rules.d/50-actiond.rules" || die "the refusal changed the rule"
    has "$(in_ct actiond-board)" '* generic ' || die "the refusal changed the board"
    in_ct rm /etc/polkit-1/rules.d/50-actiond.rules
    pass "overlay read and named by --check-config; the admin's rule refused and kept"
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

# Actions run as actiond-run: each way an action could reach actiond is tried, and fails.
check_actions_cannot_touch_actiond() {
    step "actions run as actiond-run, without capabilities: they cannot write actiond's history, sessions or config, read its secrets or signal it"
    local main body out name action
    main=$(prop MainPID)
    has "$(in_ct journalctl -u actiond --no-pager -o cat _SYSTEMD_INVOCATION_ID="$(prop InvocationID)")" \
        'actions run as actiond-run (uid' || die "the log does not say actions run as actiond-run"
    # A secret as README says to keep one: readable by the service's group only.
    in_ct sh -c 'echo s3cret >/etc/actiond/mqtt.secret && chgrp actiond /etc/actiond/mqtt.secret && chmod 0640 /etc/actiond/mqtt.secret'
    # Each t* action must fail (exit non-zero); tWho must succeed.
    cat >"$RUN/touch.yaml" <<'EOF'
actions:
  - {id: tWriteHistory, title: t, shell: 'echo forged >>/var/lib/actiond/history.jsonl'}
  - {id: tReadHistory, title: t, shell: 'cat /var/lib/actiond/history.jsonl'}
  - {id: tWriteSessions, title: t, shell: 'echo "{}" >/var/lib/actiond/sessions.json'}
  - {id: tReadConfig, title: t, shell: 'cat /etc/actiond/config.yaml'}
  - {id: tReadSecret, title: t, shell: 'cat /etc/actiond/mqtt.secret'}
  - {id: tWriteConfig, title: t, shell: 'echo "actions: []" >>/etc/actiond/config.yaml'}
  - {id: tOverlay, title: t, shell: 'echo "actions: []" >/etc/actiond/config.d/99-forged.yaml'}
  - {id: tKillParent, title: t, shell: 'kill -TERM $PPID'}
  - {id: tCgroupKill, title: t, shell: 'echo 1 >"/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)/../supervisor/cgroup.kill"'}
  - {id: tEscapeCgroup, title: t, shell: 'echo $$ >"/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)/../supervisor/cgroup.procs"'}
  - {id: tWho, title: t, shell: 'id -un; grep -E "^Cap(Inh|Prm|Eff|Amb):" /proc/self/status; echo "home=$HOME"; echo kept >"$HOME/note" && cat "$HOME/note"'}
EOF
    put_in_ct "$RUN/touch.yaml" /etc/actiond/config.d/55-touch.yaml
    picked() { has "$(api StartActionAndWait '{"actionId":"tWho"}')" '"exitCode":0'; }
    wait_for 30 picked || die "the actions of 55-touch.yaml were not picked up: $(api StartActionAndWait '{"actionId":"tWho"}')"
    for action in tWriteHistory tReadHistory tWriteSessions tReadConfig tReadSecret tWriteConfig \
                  tOverlay tKillParent tCgroupKill tEscapeCgroup; do
        body=$(api StartActionAndWait "{\"actionId\":\"$action\"}")
        has "$body" '"exitCode":' || die "$action did not run: $body"
        ! has "$body" '"exitCode":0' || die "$action succeeded as actiond-run: $body"
        { [ "$(prop MainPID)" = "$main" ] && ready; } \
            || die "actiond did not survive $action: $(in_ct systemctl status actiond --no-pager 2>&1 | head -10)"
    done
    # A line of its own: a refusal's stderr (kept in the history) may name 99-forged.yaml.
    ! grep -qx forged "$ROOT/var/lib/actiond/history.jsonl" || die "the history holds the forged line"
    ! grep -q 'actions: \[\]' "$ROOT/etc/actiond/config.yaml" || die "the config was written to"
    [ ! -e "$ROOT/etc/actiond/config.d/99-forged.yaml" ] || die "an action wrote an overlay file"
    out=$(api StartActionAndWait '{"actionId":"tWho"}')
    for name in actiond-run 'CapInh:\t0000000000000000' 'CapPrm:\t0000000000000000' \
                'CapEff:\t0000000000000000' 'CapAmb:\t0000000000000000' home=/var/lib/actiond-run kept; do
        has "$out" "$name" || die "the action's output lacks $name: $out"
    done
    [ "$(in_ct stat -c '%U %a' /var/lib/actiond)" = "actiond 700" ] \
        || die "the state directory is $(in_ct stat -c '%U %a' /var/lib/actiond)"
    in_ct rm /etc/actiond/config.d/55-touch.yaml /etc/actiond/mqtt.secret
    pass "each refused (history, sessions, config, overlay, secret, SIGTERM, cgroup.kill, cgroup escape); actions run as actiond-run with no capability, their output kept"
}

check_kill_reaches_escaped_processes() {
    step "Delegate=yes: each run in a cgroup of its own; kills reach a setsid, env -i child"
    local log main id body
    log=$(in_ct journalctl -u actiond --no-pager -o cat _SYSTEMD_INVOCATION_ID="$(prop InvocationID)")
    has "$log" 'kill containment: each execution in its own cgroup below' \
        || die "not in cgroup mode under the shipped unit: $(echo "$log" | grep 'kill containment' || echo 'no kill containment line')"
    # Which layout holds (threaded run cgroups where a move through cgroup.procs would wait
    # for an RCU grace period): named in the pass line, so the log shows which one was tested.
    local layout
    layout=$(echo "$log" | grep -o 'cgroup\.threads, threaded\|cgroup\.procs; [a-z., ]*' | head -1)
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
    pass "cgroup mode (${layout:-layout not named}); killed by KillAction and by timeout; a finished run's daemon lives until stop"
}

# ---------------------------------------------------------------------------------------
# `exec:` commands under the shipped unit: born in their cgroup, no wrapper shell. Kept in a
# function of its own, with the actions it needs in an overlay file of their own that is
# removed at the end, so that it stands apart from the other checks; it runs just before
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
        echo "actions:"
        echo "  - {id: execNap, title: Exec nap, exec: [sleep, \"$((MARK + 4))\"], timeout: 600}"
        echo "  - {id: execEscape, title: Exec escape, exec: [setsid, --wait, env, -i, sleep, \"$((MARK + 5))\"], timeout: 600}"
        # What clone3 answers under the unit's seccomp filters (RestrictNamespaces=): a
        # command inherits them. 38 is ENOSYS, 22 EINVAL (allowed, refused for its null args).
        echo "  - {id: clone3Probe, title: clone3 probe, exec: [perl, -e, 'syscall(435, 0, 0); print \$!+0']}"
    } >"$RUN/exec.yaml"
    put_in_ct "$RUN/exec.yaml" /etc/actiond/config.d/60-exec.yaml
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
    in_ct rm /etc/actiond/config.d/60-exec.yaml
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
    case $body in *'"exitCode":0'*) die "the actions' user restarted systemd-journald: $body" ;; esac
    case $body in *'Access denied'*|*'nteractive authentication required'*) ;; *) die "refused, but not by polkit: $body" ;; esac
    pass "refused: $(echo "$body" | grep -o 'Access denied\|[Ii]nteractive authentication required' | head -1)"
}

check_reboot_through_polkit() {
    step "Reboot: systemctl reboot as actiond-run (the actions' user), allowed by the polkit rule, reboots the container"
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

check_upgrade_from_the_repository() {
    step "the next version published to the repository: apt update && apt upgrade keeps the config and the history, brings the new panel, restarts"
    local tree before
    tree=$(next_release)
    publish "$tree" "$NEXT"
    in_ct cp -a /etc/actiond /root/etc-before
    before=$(prop InvocationID)
    # No standard input and no --force-conf option: a conffile question would fail the upgrade.
    apt_in_ct update || { cat "$RUN/apt.log" >&2; die "apt-get update failed"; }
    has "$(in_ct apt-cache policy actiond)" "Candidate: $NEXT" || die "apt does not offer $NEXT: $(in_ct apt-cache policy actiond)"
    apt_in_ct upgrade -y || { cat "$RUN/apt.log" >&2; die "apt-get upgrade failed"; }
    cp "$RUN/apt.log" "$RUN/upgrade.log"
    [ "$(in_ct dpkg-query -W -f='${Version}' actiond)" = "$NEXT" ] || die "not upgraded to $NEXT: $(cat "$RUN/upgrade.log")"
    in_ct diff -r /root/etc-before /etc/actiond >/dev/null || die "the upgrade changed /etc/actiond: $(in_ct diff -r /root/etc-before /etc/actiond)"
    [ -z "$(find "$ROOT/etc/actiond" -name '*.dpkg-*')" ] || die "dpkg left files beside the config: $(find "$ROOT/etc/actiond" -name '*.dpkg-*')"
    wait_for 30 active || die "not active after the upgrade"
    [ "$(prop InvocationID)" != "$before" ] || die "the upgrade did not restart the service"
    history_has "${HISTORY[@]}" || die "history lost in the upgrade"
    has "$(api StartActionAndWait '{"actionId":"ciNewPanel"}')" 'new panel' || die "the new panel is not in force"
    has "$(api StartActionAndWait '{"actionId":"hello"}')" 'hello from actiond' || die "the admin's overlay is lost"
    [ "$(who "$COOKIE")" = ci ] || die "the session did not survive the upgrade"
    HISTORY+=("$(run hello)")
    pass "$version -> $NEXT from the repository without a question; /etc/actiond unchanged, new panel in force, restarted, history and session kept"
}

check_a_tampered_release_is_refused() {
    step "a tampered Release (and InRelease) is refused by apt"
    local dists=$REPO/dists/stable saved=$RUN/dists-saved
    rm -rf "$saved"
    cp -a "$dists" "$saved"
    # A Release that says something else than what was signed: Release.gpg no longer matches.
    sed -i 's/^Date: .*/Date: Thu, 01 Jan 2099 00:00:00 UTC/' "$dists/Release"
    rm "$dists/InRelease"
    # apt fails or, with lists from before, warns that it keeps them: either way the signature
    # is what it names, and the tampered lists are not used.
    refused() { apt_in_ct update || true; grep -q "BADSIG\|signatures were invalid" "$RUN/apt.log"; }
    refused || die "apt did not refuse the tampered Release for its signature: $(cat "$RUN/apt.log")"
    cp "$RUN/apt.log" "$RUN/tampered-release.log"
    # The same in InRelease, the clearsigned one apt reads first.
    cp "$saved/Release" "$dists/Release"
    sed 's/^Date: .*/Date: Thu, 01 Jan 2099 00:00:00 UTC/' "$saved/InRelease" >"$dists/InRelease"
    refused || die "apt did not refuse the tampered InRelease for its signature: $(cat "$RUN/apt.log")"
    cp "$RUN/apt.log" "$RUN/tampered-inrelease.log"
    # Put back, the repository is good again.
    rm -rf "$dists"
    mv "$saved" "$dists"
    apt_in_ct update && ! grep -q "BADSIG\|signatures were invalid" "$RUN/apt.log" \
        || { cat "$RUN/apt.log" >&2; die "apt-get update fails on the restored repository"; }
    pass "refused: $(grep -o 'BADSIG [0-9A-F]*\|The following signatures were invalid' "$RUN/tampered-release.log" | head -1)"
}

check_purge_removes_everything() {
    step "apt purge removes everything, the groups a board added included"
    local files left=""
    in_ct actiond-board --force raspberry-pi >"$RUN/board.log" 2>&1 || { cat "$RUN/board.log" >&2; die "actiond-board --force raspberry-pi failed"; }
    grep -q 'warning: the raspberry-pi board is for a Raspberry Pi' "$RUN/board.log" || die "--force did not warn: $(cat "$RUN/board.log")"
    has " $(in_ct id -nG actiond) " ' gpio ' || die "actiond is not in gpio before the purge"
    has " $(in_ct id -nG actiond-run) " ' gpio ' || die "actiond-run (the actions' user) is not in gpio before the purge"
    files=$(in_ct dpkg-query -L actiond)
    # What actiond-board and admins add in actiond's places goes too.
    printf '[Service]\nEnvironment=X=1\n' >"$RUN/override.conf"
    put_in_ct "$RUN/override.conf" /etc/systemd/system/actiond.service.d/override.conf
    apt_in_ct purge -y actiond || { cat "$RUN/apt.log" >&2; die "apt-get purge failed"; }
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
    local groups
    groups=" $(in_ct id -nG actiond) "
    ! has "$groups" ' gpio ' && ! has "$groups" ' video ' || die "the purge left actiond in gpio or video: $groups"
    groups=" $(in_ct id -nG actiond-run) "
    ! has "$groups" ' gpio ' && ! has "$groups" ' video ' || die "the purge left actiond-run in gpio or video: $groups"
    ! in_ct getent group gpio >/dev/null || die "the purge left the gpio group actiond-board created"
    pass "no file, unit, process, state or board group left (the system user stays, as Debian does)"
}

# old_package: the amd64 package of 0.1.0, built by 0.1.0's own packaging script from its
# own files (tests/nspawn/actiond-0.1.0-packaging.tar.gz: `git archive` of 839d6a3 for the
# paths the script reads), with this build's binary, whose version
# does not matter to dpkg. A fixture, not the commit itself, so that a shallow clone runs the
# check too.
old_package() {
    local tree=$RUN/old
    rm -rf "$tree"
    mkdir -p "$tree/dist/x86_64-unknown-linux-musl"
    tar -xzf tests/nspawn/actiond-0.1.0-packaging.tar.gz -C "$tree" \
        || die "cannot unpack tests/nspawn/actiond-0.1.0-packaging.tar.gz"
    grep -qx 'version = "0.1.0"' "$tree/Cargo.toml" || die "the 0.1.0 fixture is not 0.1.0's"
    cp dist/x86_64-unknown-linux-musl/actiond "$tree/dist/x86_64-unknown-linux-musl/"
    (cd "$tree" && bash scripts/package-deb.sh --no-build amd64) >"$RUN/old-package.log" 2>&1 \
        || { cat "$RUN/old-package.log" >&2; die "packaging 0.1.0 failed"; }
    echo "$tree/dist/deb/actiond_0.1.0_amd64.deb"
}

check_upgrade_from_0_1_0() {
    step "an install of 0.1.0 (one config file, edited as its README said) upgrades from the repository onto the layers, losing nothing"
    local old id sid migrated
    old=$(old_package)
    cp "$old" "$ROOT/root/actiond_0.1.0_amd64.deb"
    in_ct sh -c 'cd /root && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./actiond_0.1.0_amd64.deb' \
        >"$RUN/old-install.log" 2>&1 </dev/null || { cat "$RUN/old-install.log" >&2; die "installing 0.1.0 failed"; }
    [ "$(in_ct dpkg-query -W -f='${Version}' actiond)" = 0.1.0 ] || die "0.1.0 is not installed"
    has "$(in_ct dpkg-query -W -f='${Conffiles}' actiond)" /etc/actiond/config.yaml || die "0.1.0 has no conffile"
    ! grep -q '^board:' "$ROOT/etc/actiond/config.yaml" || die "0.1.0's config has a board: line"
    wait_for 30 active || die "0.1.0 is not active"
    # What 0.1.0's README said to do: a user under authLocalUsers; and a title of one's own.
    local r0
    r0=$(reloads)
    add_user ada "$ADMIN_PW"
    in_ct sed -i 's/^pageTitle: .*/pageTitle: Door/' /etc/actiond/config.yaml
    cp "$ROOT/etc/actiond/config.yaml" "$RUN/config-0.1.0.yaml"
    reloaded() { [ "$(reloads)" -gt "$r0" ]; }
    wait_for 30 reloaded || die "0.1.0 did not reload the config with the user ada"
    ada_in() { sid=$(login ada "$ADMIN_PW"); [ -n "$sid" ]; }
    wait_for 10 ada_in || die "ada cannot log in on 0.1.0"
    id=$(run disk)
    # The upgrade, as a board would get it: from the repository, unattended, no questions.
    apt_in_ct install -y actiond || { cat "$RUN/apt.log" >&2; die "the upgrade from 0.1.0 failed"; }
    cp "$RUN/apt.log" "$RUN/upgrade-0.1.0.log"
    [ "$(in_ct dpkg-query -W -f='${Version}' actiond)" = "$NEXT" ] || die "not upgraded to $NEXT"
    grep -q "actiond-board: moved /etc/actiond/config.yaml onto the generic board's panel" "$RUN/upgrade-0.1.0.log" \
        || die "the upgrade did not say what it did with the config: $(cat "$RUN/upgrade-0.1.0.log")"
    migrated=$(cat "$ROOT/etc/actiond/config.yaml")
    has "$migrated" $'\nboard: /usr/share/actiond/board/generic/config.yaml\n' || die "no board: line after the upgrade: $migrated"
    has "$migrated" "username: ada," || die "ada's line is lost: $migrated"
    has "$migrated" $'\npageTitle: Door\n' || die "the title is lost: $migrated"
    cmp -s "$RUN/config-0.1.0.yaml" "$ROOT/etc/actiond/config.yaml.from-0.1" || die "the old config is not kept whole"
    [ -d "$ROOT/etc/actiond/config.d" ] || die "no config.d after the upgrade"
    wait_for 30 active || die "not active after the upgrade from 0.1.0"
    [ "$(who "$sid")" = ada ] || die "ada's session did not survive the upgrade"
    history_has "$id" || die "the history of 0.1.0 is lost"
    has "$(api Init '{}')" '"pageTitle":"Door"' || die "the title is not in force: $(api Init '{}')"
    has "$(api StartActionAndWait '{"actionId":"ciNewPanel"}')" 'new panel' || die "the package's new panel is not in force"
    pass "moved onto the generic board; ada, her session, the title and the history kept; dpkg lists the old conffile as: $(in_ct dpkg-query -W -f='${Conffiles}' actiond | tr -s ' ' | sed 's/^ //')"
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
