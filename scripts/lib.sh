# shellcheck shell=bash
# What the scripts of scripts/ share. Sourced, never run: a script sets SCRIPT (the name its
# errors start with), changes to the repository's root and sources this file
# (`. scripts/lib.sh`). install.sh and actiond-board do not: they are installed on boards,
# alone. Comments say why; each helper is small enough to read here.

# The Debian architectures of the packages, and the Rust target each one's binary is built
# for (static, musl; why these targets and not others: scripts/cross-build.sh). The one copy
# of that map: package-deb.sh, cross-build.sh, cross-smoke.sh and bench.sh read it.
ARCHES=(amd64 arm64 armhf armel)
target_of() {
    case $1 in
        amd64) echo x86_64-unknown-linux-musl ;;
        arm64) echo aarch64-unknown-linux-musl ;;
        armhf) echo arm-unknown-linux-musleabi ;;
        armel) echo armv5te-unknown-linux-musleabi ;;
        *) die "unknown architecture '$1' (known: ${ARCHES[*]})" ;;
    esac
}
PACKAGE_TARGETS=()
for _arch in "${ARCHES[@]}"; do PACKAGE_TARGETS+=("$(target_of "$_arch")"); done
unset _arch

# step WHAT: a heading in the output (on stderr, so that a script's stdout stays its result);
# STEP_PREFIX names the script where its steps mix with another's.
step() { printf '\n==> %s%s\n' "${STEP_PREFIX:-}" "$*" >&2; }

# die WHAT: the error, on stderr, and exit 1.
die() { echo "${SCRIPT:-${0##*/}}: error: $*" >&2; exit 1; }

# cgroup2_mount: prints where the cgroup v2 hierarchy is mounted, mounting one at
# /sys/fs/cgroup/unified first where the host has none (the legacy v1 hierarchy; systemd's
# hybrid mode puts v2 there too). actiond needs nothing more of it: no controllers, only
# cgroup.procs, cgroup.kill and cgroup.freeze. Needs root to mount. Call it outside `$( )`
# once first where it may mount, so that its step line reaches the terminal.
cgroup2_mount() {
    if ! grep -q ' - cgroup2 ' /proc/self/mountinfo; then
        step "no cgroup v2 mounted: mounting one at /sys/fs/cgroup/unified"
        mkdir -p /sys/fs/cgroup/unified
        mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified || die "could not mount cgroup v2 at /sys/fs/cgroup/unified"
    fi
    local at
    at="$(sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -1)"
    [ -d "$at" ] || die "no cgroup v2 mount point found"
    echo "$at"
}

# need COMMAND DEBIAN-PACKAGE: installs the package when the command is missing (which needs
# root), and fails loudly when that does not bring the command.
need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    step "installing $2 (for $1)"
    [ "$(id -u)" -eq 0 ] || die "$1 is missing and installing $2 needs root"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq "$2" >/dev/null \
        || die "apt-get install $2 failed"
    command -v "$1" >/dev/null 2>&1 || die "$1 still missing after installing $2"
}

# cargo_version: the version in Cargo.toml (the package's).
cargo_version() { sed -n 's/^version *= *"\(.*\)"/\1/p' Cargo.toml | head -1; }
