#!/usr/bin/env bash
# Debian packages of actiond, one per architecture, made with dpkg-deb (no docker, no
# debhelper): the static binary from scripts/cross-build.sh, the unit, its sysusers.d and
# tmpfiles.d entries, the template of the admin's /etc/actiond/config.yaml (written by the
# postinst once, never a conffile), every board's panel for `actiond-board` with the generic
# board's polkit rule, the panels of 0.1.0 for the migration, the man pages, README, LICENSE
# and changelog.
#
#   scripts/package-deb.sh [--no-build] [ARCH...]    default: amd64 arm64 armhf armel
#   --no-build: package the binaries already in dist/<target>/ (from cross-build.sh).
#
# Output: dist/deb/actiond_<version>_<arch>.deb, then a table of sizes. When it makes all four,
# it also writes that table into docs/install.md and docs/PACKAGING.md (between the "sizes" marks),
# so the sizes there are always a build's, never typed. Which Rust target each architecture
# gets, and why, is in scripts/cross-build.sh. The maintainer scripts are written here too
# (below); docs/PACKAGING.md says what they do.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=package-deb
. scripts/lib.sh

# The user's guide pages: scripts/install.sh's GUIDE line, so both install the same.
guide=$(sed -n 's/^GUIDE="\(.*\)"$/\1/p' scripts/install.sh)
[ -n "$guide" ] || die "scripts/install.sh has no GUIDE=\"...\" line"
for f in $guide; do [ -f "docs/$f.md" ] || die "GUIDE names docs/$f.md, which does not exist"; done

build=true
if [ "${1:-}" = --no-build ]; then build=false; shift; fi
[ $# -gt 0 ] || set -- "${ARCHES[@]}"

targets=()
for arch in "$@"; do targets+=("$(target_of "$arch")"); done
for tool in dpkg-deb gzip md5sum; do
    command -v $tool >/dev/null || die "$tool is missing (Debian package dpkg-dev / gzip / coreutils)"
done
if $build; then bash scripts/cross-build.sh "${targets[@]}"; fi

version=$(cargo_version)
[ -n "$version" ] || die "no version in Cargo.toml"
# Every file gets the time of the last commit, so two builds of one commit are the same bytes.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH
date_rfc2822=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
maintainer="actiond developers <dev@actiond.invalid>"
work=target/deb
out=dist/deb
mkdir -p "$out"

# ---------------------------------------------------------------------------------------
# Maintainer scripts. They follow what debhelper generates for a unit, a sysusers.d and a
# tmpfiles.d file, so they behave as admins expect of any Debian service.

postinst() {
    cat <<'EOF'
#!/bin/sh
# actiond: create the user, enable the service, and start it (restart it after an upgrade),
# but only on a running systemd: inside a chroot or an image build the enabled unit starts
# at the first boot.
set -e

running_systemd() {
    [ -d /run/systemd/system ] && ! systemd-detect-virt --quiet --chroot
}

case "$1" in
configure|abort-upgrade|abort-deconfigure|abort-remove)
    # The system users, actiond and actiond-run (its actions'), and a board's extra groups:
    # actiond-board may override actiond.conf in /etc/sysusers.d. One it wrote before there
    # was actiond-run gets actiond-run into the groups it gives actiond (GPIO, video), as the
    # board's file now does: actions run as actiond-run.
    board_users=$DPKG_ROOT/etc/sysusers.d/actiond.conf
    if [ -f "$board_users" ] && grep -q '^# Written by actiond-board' "$board_users"; then
        for g in $(sed -n 's/^m[[:space:]][[:space:]]*actiond[[:space:]][[:space:]]*\([^[:space:]]*\).*/\1/p' "$board_users"); do
            grep -q "^m[[:space:]][[:space:]]*actiond-run[[:space:]][[:space:]]*$g\([[:space:]]\|\$\)" "$board_users" \
                || echo "m actiond-run $g" >>"$board_users"
        done
    fi
    systemd-sysusers ${DPKG_ROOT:+--root="$DPKG_ROOT"} actiond-run.conf actiond.conf

    # The admin's config: written from the template once, and never again (it is not a
    # conffile, so no upgrade asks about it). The board panel it names is the package's.
    mkdir -p "$DPKG_ROOT/etc/actiond/config.d"
    if [ ! -e "$DPKG_ROOT/etc/actiond/config.yaml" ]; then
        # Readable by the service only (as tmpfiles.d below, which a chroot does not apply).
        install -m 0640 -g actiond "$DPKG_ROOT/usr/share/actiond/config.yaml" "$DPKG_ROOT/etc/actiond/config.yaml"
        chgrp actiond "$DPKG_ROOT/etc/actiond" "$DPKG_ROOT/etc/actiond/config.d"
        chmod 0751 "$DPKG_ROOT/etc/actiond"
        chmod 0750 "$DPKG_ROOT/etc/actiond/config.d"
    elif [ -n "$2" ] && dpkg --compare-versions "$2" lt-nl 0.2.0~; then
        # 0.1 kept the panel and the admin's settings in one file (a conffile then).
        actiond-board --migrate || echo "actiond: the config was left as it was (see above)" >&2
    fi
    # The group and modes of it all.
    systemd-tmpfiles ${DPKG_ROOT:+--root="$DPKG_ROOT"} --create actiond.conf >/dev/null || true

    deb-systemd-helper unmask actiond.service >/dev/null || true
    # was-enabled is true on a first install, so the unit gets enabled; on an upgrade it
    # keeps the admin's choice.
    if deb-systemd-helper --quiet was-enabled actiond.service; then
        deb-systemd-helper enable actiond.service >/dev/null || true
    else
        deb-systemd-helper update-state actiond.service >/dev/null || true
    fi

    if running_systemd; then
        systemctl --system daemon-reload >/dev/null || true
        if [ -n "$2" ]; then action=restart; else action=start; fi
        deb-systemd-invoke $action actiond.service >/dev/null || true
        if systemctl --quiet is-active actiond.service; then
            # actiond's readiness status says where it listens ("listening on http://…:PORT").
            port=$(systemctl show --property=StatusText --value actiond.service | sed -n 's/.*:\([0-9][0-9]*\)$/\1/p')
            echo "actiond is running: open http://$(hostname):${port:-1337}/ (other boards: actiond-board)"
        else
            echo "actiond did not start; see: journalctl -u actiond" >&2
        fi
    fi
    ;;
esac

exit 0
EOF
}

prerm() {
    cat <<'EOF'
#!/bin/sh
# actiond: stop the service when the package is removed. An upgrade restarts it in the new
# postinst instead; actiond records and ends its running actions when it stops.
set -e

if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
    deb-systemd-invoke stop actiond.service >/dev/null || true
fi

exit 0
EOF
}

postrm() {
    cat <<'EOF'
#!/bin/sh
# actiond: after removal systemd forgets the unit; a purge also removes the state (history,
# sessions) and every file actiond-board or an admin put in actiond's places under /etc.
# The system users actiond and actiond-run stay, as Debian does for system users: files it owned elsewhere
# (say, in a directory an action writes to) must not pass to a later user with its uid.
set -e

if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
    systemctl --system daemon-reload >/dev/null || true
fi

if [ "$1" = remove ] && command -v deb-systemd-helper >/dev/null; then
    deb-systemd-helper mask actiond.service >/dev/null || true
fi

if [ "$1" = purge ]; then
    if command -v deb-systemd-helper >/dev/null; then
        deb-systemd-helper purge actiond.service >/dev/null || true
        deb-systemd-helper unmask actiond.service >/dev/null || true
    fi
    # The groups actiond-board added the user to (sysusers.d never takes them back), and
    # those it created, once nobody is in them: a reinstall starts without them.
    if [ -f /etc/sysusers.d/actiond.conf ]; then
        for g in $(sed -n 's/^m[[:space:]][[:space:]]*actiond\(-run\)\{0,1\}[[:space:]][[:space:]]*\([^[:space:]]*\).*/\2/p' /etc/sysusers.d/actiond.conf | sort -u); do
            gpasswd -d actiond "$g" >/dev/null 2>&1 || true
            gpasswd -d actiond-run "$g" >/dev/null 2>&1 || true
        done
        for g in $(sed -n 's/^# created-groups://p' /etc/sysusers.d/actiond.conf); do
            if getent group "$g" >/dev/null && [ -z "$(getent group "$g" | cut -d: -f4)" ]; then
                groupdel "$g" 2>/dev/null || true
            fi
        done
    fi
    rm -rf /var/lib/actiond /var/lib/actiond-run /etc/actiond /etc/systemd/system/actiond.service.d
    rm -f /etc/polkit-1/rules.d/50-actiond.rules /etc/sysusers.d/actiond.conf
    if [ -d /run/systemd/system ]; then
        systemctl --system daemon-reload >/dev/null || true
    fi
fi

exit 0
EOF
}

control() {
    # control ARCH INSTALLED-KIB
    cat <<EOF
Package: actiond
Version: $version
Architecture: $1
Maintainer: $maintainer
Installed-Size: $2
Depends: systemd (>= 247)
Recommends: polkitd, iproute2, procps
Section: admin
Priority: optional
Description: run predefined commands from a web page, Home Assistant or curl
 actiond lets people press a button (on its own web page, from Home Assistant
 or with curl) and run a predefined command on a small Linux board: a
 Raspberry Pi by the door, a NAS, a router. It runs each command in a process
 group of its own with typed, checked arguments, kills what it starts, keeps
 a bounded history across restarts, and needs a few MiB of memory.
 .
 The package runs it as a hardened systemd service. /etc/actiond/config.yaml
 holds the admin's settings and starts from a board panel the package keeps
 current (the generic server panel; "actiond-board raspberry-pi" switches to
 the Raspberry Pi's). Only the status actions are open to guests; add a user
 with "actiond hash-password" for the rest. polkitd lets the service reboot
 the board and restart the services its config names; iproute2 and procps
 give the generic panel its network addresses, uptime and memory.
EOF
}

changelog() {
    # A native package's changelog in Debian's format: one entry for this version, pointing
    # at the project's own changelog.
    cat <<EOF
actiond ($version) stable; urgency=medium

  * Release $version; what changed is in /usr/share/doc/actiond/CHANGELOG.md.gz.

 -- $maintainer  $date_rfc2822
EOF
}

copyright() {
    cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: actiond
Source: the actiond source tree (this package is built from it by scripts/package-deb.sh)

Files: *
Copyright: the actiond developers
License: MIT

License: MIT
EOF
    # The license text, as a paragraph of the field: blank lines become " .".
    sed -e 's/^$/./' -e 's/^/ /' LICENSE
}

lintian_overrides() {
    cat <<'EOF'
# Static on purpose: one musl binary runs on every board whatever its C library is (glibc of
# any version, or musl), so one armhf package serves old and new Raspberry Pi OS alike. All
# the library code in it is built from source with it (Rust's std, and musl from Debian).
actiond: statically-linked-binary [usr/bin/actiond]
EOF
}

# ---------------------------------------------------------------------------------------

# thousands N: N with a comma every three digits, as the documentation writes bytes.
thousands() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'; }

sizes=()
rows=()
for arch in "$@"; do
    target=$(target_of "$arch")
    bin=dist/$target/actiond
    [ -x "$bin" ] || die "no binary at $bin (run scripts/cross-build.sh $target)"
    step "packaging $arch from $bin"
    root=$work/$arch
    rm -rf "$root"
    mkdir -p "$root/DEBIAN"

    install -D -m 0755 "$bin" "$root/usr/bin/actiond"
    install -D -m 0755 scripts/actiond-board "$root/usr/sbin/actiond-board"
    # The unit names /usr/local (scripts/install.sh's prefix); the package lives in /usr,
    # and its documentation is the man pages.
    mkdir -p "$root/usr/lib/systemd/system"
    sed -e '/^#/!s|/usr/local/|/usr/|g' \
        -e 's|^Documentation=.*|Documentation=man:actiond(1) man:actiond-board(8)|' \
        systemd/actiond.service >"$root/usr/lib/systemd/system/actiond.service"
    install -D -m 0644 systemd/actiond.sysusers "$root/usr/lib/sysusers.d/actiond.conf"
    install -D -m 0644 systemd/actiond-run.sysusers "$root/usr/lib/sysusers.d/actiond-run.conf"
    install -D -m 0644 systemd/actiond.tmpfiles "$root/usr/lib/tmpfiles.d/actiond.conf"
    # The template of the admin's config: the postinst copies it to /etc/actiond/config.yaml
    # when there is none (tmpfiles.d then makes it 0640 root:actiond). Every board's panel,
    # rule and drop-in, for the config's board: line and actiond-board, and the panels as
    # 0.1.0 shipped them, from which `actiond-board --migrate` tells the admin's edits.
    install -D -m 0644 board/config.yaml "$root/usr/share/actiond/config.yaml"
    mkdir -p "$root/usr/share/lintian/overrides"
    install -D -m 0644 board/generic/polkit.rules "$root/usr/share/polkit-1/rules.d/50-actiond.rules"
    for d in board/*/; do
        [ -f "${d}config.yaml" ] || continue
        for f in "$d"*; do
            install -D -m 0644 "$f" "$root/usr/share/actiond/$f"
        done
    done
    for f in board/migrate/*/*.yaml; do
        install -D -m 0644 "$f" "$root/usr/share/actiond/${f#board/}"
    done
    lintian_overrides >"$root/usr/share/lintian/overrides/actiond"
    doc=$root/usr/share/doc/actiond
    mkdir -p "$doc" "$root/usr/share/man/man1" "$root/usr/share/man/man8"
    gzip -9n <README.md >"$doc/README.md.gz"
    # The user's guide README links to (docs/ beside it), the pages scripts/install.sh
    # installs (its GUIDE line); the developers' documents stay in the repository.
    mkdir -p "$doc/docs"
    for f in $guide; do
        gzip -9n <"docs/$f.md" >"$doc/docs/$f.md.gz"
    done
    gzip -9n <CHANGELOG.md >"$doc/CHANGELOG.md.gz"
    changelog | gzip -9n >"$doc/changelog.gz"
    copyright >"$doc/copyright"
    gzip -9n <docs/man/actiond.1 >"$root/usr/share/man/man1/actiond.1.gz"
    gzip -9n <docs/man/actiond-board.8 >"$root/usr/share/man/man8/actiond-board.8.gz"
    chmod 0644 "$doc"/*.gz "$doc"/copyright "$doc"/docs/* "$root"/usr/share/man/man*/* "$root/usr/share/lintian/overrides/actiond"

    postinst >"$root/DEBIAN/postinst"
    prerm >"$root/DEBIAN/prerm"
    postrm >"$root/DEBIAN/postrm"
    chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
    (cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
    chmod 0644 "$root/DEBIAN/md5sums"
    kib=$(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1)
    control "$arch" "$kib" >"$root/DEBIAN/control"

    find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
    deb=$out/actiond_${version}_$arch.deb
    dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
    bytes=$(stat -c %s "$deb")
    sizes+=("$(printf '%-40s %9s bytes  %5s KiB  (installed %s KiB)' "$deb" "$bytes" $((bytes / 1024)) "$kib")")
    rows+=("| \`$(basename "$deb")\` | $(thousands "$bytes") | $(thousands "$kib") KiB | \`$target\` | $(thousands "$(stat -c %s "$bin")") |")
done

echo
printf '%s\n' "${sizes[@]}"

# The sizes in the documentation are this build's: with all four packages made, the table
# between the marks in docs/install.md and docs/PACKAGING.md is written anew.
[ "$*" = "${ARCHES[*]}" ] || exit 0
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# The two files written here do not count as changes to the source.
if [ -n "$(git status --porcelain -- . ':!docs/install.md' ':!docs/PACKAGING.md' 2>/dev/null)" ]; then
    commit="$commit with local changes"
fi
table=$(mktemp)
{
    echo "From \`scripts/package-deb.sh\`, version $version, commit $commit (written by the build):"
    echo
    echo "| package | bytes | installed | binary | bytes |"
    echo "|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
} >"$table"
for doc in docs/install.md docs/PACKAGING.md; do
    grep -q '^<!-- sizes -->$' "$doc" && grep -q '^<!-- /sizes -->$' "$doc" \
        || die "$doc has no <!-- sizes --> ... <!-- /sizes --> marks for the table"
    awk -v table="$table" '
        $0 == "<!-- /sizes -->" { skip = 0 }
        !skip { print }
        $0 == "<!-- sizes -->" { while ((getline line < table) > 0) print line; skip = 1 }
    ' "$doc" >"$doc.new"
    mv "$doc.new" "$doc"
done
rm -f "$table"
echo "the sizes table in docs/install.md and docs/PACKAGING.md is this build's"
