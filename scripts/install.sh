#!/usr/bin/env bash
# Install actiond as a systemd service, or remove it again.
#
#   sudo scripts/install.sh [--board raspberry-pi|generic] [--binary PATH]
#   sudo scripts/install.sh --uninstall [--purge]
#
# What it installs (PREFIX defaults to /usr/local):
#   $PREFIX/bin/actiond                               the binary (--binary; default: ./actiond
#                                                     beside scripts/, then target/release/actiond)
#   $PREFIX/lib/systemd/system/actiond.service        the unit (systemd/actiond.service)
#   $PREFIX/lib/systemd/system/actiond.service.d/<board>.conf   the board's relaxations, if any
#   $PREFIX/share/doc/actiond/README.md              the README, and beside it in docs/ the
#   $PREFIX/share/doc/actiond/docs/<page>.md          user's guide it links to (GUIDE below;
#                                                     the .deb ships the same pages)
#   $PREFIX/share/actiond/board/<name>/               every board's panel (board/<name>/)
#   /usr/lib/sysusers.d/actiond.conf                  the system user actiond (and, on a Pi,
#                                                     its and actiond-run's membership of gpio
#                                                     and video)
#   /usr/lib/sysusers.d/actiond-run.conf              the system user actions run as, actiond-run
#   /usr/lib/tmpfiles.d/actiond.conf                  root:actiond 0751 on /etc/actiond, 0640 on
#                                                     its config, so the service can read it and
#                                                     actions cannot; actiond-run's home
#   /etc/actiond/config.yaml                          the admin's settings (board/config.yaml),
#                                                     whose board: line names the board's panel
#   /etc/actiond/config.d/                            the overlay directory, empty
#   /etc/polkit-1/rules.d/50-actiond.rules            a link to the board's polkit rule: what the
#                                                     actiond user may do through systemd and
#                                                     logind (reboot, restart units)
#
# Everything goes under $DESTDIR when it is set (a package build or a test): then nothing on
# this machine is touched, no user is created and no systemctl is run; the sysusers.d and
# tmpfiles.d files carry the user and the permissions to the target system, where
# systemd-sysusers and systemd-tmpfiles apply them at boot. Without DESTDIR the script
# applies them at once (systemd-sysusers, or useradd where that is missing) and reloads systemd.
#
# It is idempotent: a file already as it should be is left alone (not even its time changes),
# so a second run reports nothing changed. The config is the admin's: written once, after that
# only its board: line changes (--board on a later run switches boards, keeping everything else
# in it); a polkit rule an admin wrote in place of the link is never replaced or removed.
# --uninstall removes what install put there, except an edited config or rule and the state
# directory /var/lib/actiond; --purge removes those too. The actiond user is kept (Debian's
# rule for system users: files it owned may remain).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
board=generic
binary=
mode=install
purge=false

usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; }

# The user's guide: the pages of docs/ that README links to, installed beside it. The
# developers' documents (ARCHITECTURE, TESTING, ...) stay in the repository.
# scripts/package-deb.sh reads this line, so the .deb ships the same pages.
GUIDE="install configuration arguments web-page home-assistant security migration-from-olivetin api"
die() { echo "install.sh: error: $*" >&2; exit 1; }
say() { echo "install.sh: $*"; }

while [ $# -gt 0 ]; do
    case $1 in
        --board) board=${2:?--board needs a name}; shift 2 ;;
        --board=*) board=${1#--board=}; shift ;;
        --binary) binary=${2:?--binary needs a path}; shift 2 ;;
        --binary=*) binary=${1#--binary=}; shift ;;
        --uninstall) mode=uninstall; shift ;;
        --purge) purge=true; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

[ -d "$here/board/$board" ] && [ -f "$here/board/$board/config.yaml" ] \
    || die "unknown board '$board' (known: $(cd "$here/board" && ls -d */ | tr -d / | tr '\n' ' '))"
case $PREFIX in /*) ;; *) die "PREFIX must be absolute: $PREFIX" ;; esac
if [ -n "$DESTDIR" ]; then
    case $DESTDIR in /*) ;; *) die "DESTDIR must be absolute: $DESTDIR" ;; esac
    [ "$DESTDIR" != / ] || die "DESTDIR=/ is the live system; leave DESTDIR empty for that"
    live=false
else
    [ "$(id -u)" -eq 0 ] || die "installing on this system needs root (or set DESTDIR)"
    live=true
fi

root=${DESTDIR%/}
bin=$PREFIX/bin/actiond
unitdir=$PREFIX/lib/systemd/system
unit=$unitdir/actiond.service
dropins=$unitdir/actiond.service.d
doc=$PREFIX/share/doc/actiond
share=$PREFIX/share/actiond
sysusers=/usr/lib/sysusers.d/actiond.conf
run_users=/usr/lib/sysusers.d/actiond-run.conf
tmpfiles=/usr/lib/tmpfiles.d/actiond.conf
etc=/etc/actiond
config=$etc/config.yaml
rules=/etc/polkit-1/rules.d/50-actiond.rules
state=/var/lib/actiond
changed=0

# put SOURCE DEST MODE: installs SOURCE at $root/DEST unless it is already there, same bytes
# and same mode.
put() {
    local src=$1 dst=$root$2 mode=$3
    if [ -f "$dst" ] && cmp -s "$src" "$dst" && [ "$(stat -c %a "$dst")" = "${mode#0}" ]; then
        return 0
    fi
    mkdir -p "$(dirname "$dst")"
    install -m "$mode" "$src" "$dst"
    say "installed $2"
    changed=$((changed + 1))
}

# put_text DEST MODE TEXT: like put, for generated content.
put_text() {
    local tmp
    tmp=$(mktemp)
    printf '%s' "$3" >"$tmp"
    put "$tmp" "$1" "$2"
    rm -f "$tmp"
}

# ours PATH: true when $root/PATH is ours: a link into $share, or (as install.sh of 0.1
# copied it) a file with the bytes of some board's polkit rule.
ours() {
    local f
    if [ -L "$root$1" ]; then
        case $(readlink "$root$1") in "$share"/*) return 0 ;; esac
        return 1
    fi
    for f in "$here"/board/*/polkit.rules; do
        [ -f "$f" ] && cmp -s "$f" "$root$1" && return 0
    done
    return 1
}

# link TARGET DEST: makes $root/DEST a link to TARGET (a path on the target system), unless
# it is one already or an admin put a file of their own there.
link() {
    if [ -L "$root$2" ] && [ "$(readlink "$root$2")" = "$1" ]; then return 0; fi
    if [ -e "$root$2" ] && ! ours "$2"; then
        say "kept $2: it is not the board's (the $board board's rule is $1)"
        return 0
    fi
    mkdir -p "$(dirname "$root$2")"
    ln -sfn "$1" "$root$2"
    say "linked $2 to $1"
    changed=$((changed + 1))
}

# config_text: the admin's config as a first install writes it, on $board.
config_text() {
    sed "s|^board: .*|board: $share/board/$board/config.yaml|" "$here/board/config.yaml"
}

# pristine: true when the admin's config is as a first install wrote it (on any board).
pristine() {
    [ "$(sed '/^board: /d' "$root$config")" = "$(sed '/^board: /d' "$here/board/config.yaml")" ]
}

# admin_config: writes the admin's config once; after that only sets its board: line.
admin_config() {
    local line tmp
    if [ ! -f "$root$config" ]; then
        put_text "$config" 0640 "$(config_text)
"
        return 0
    fi
    line=$(sed -n 's/^board: *//p' "$root$config" | head -1)
    if [ -z "$line" ]; then
        say "kept $config: it has no board: line, so it holds a panel of its own (docs/configuration.md, \"The config in layers\")"
        return 0
    fi
    [ "$line" = "$share/board/$board/config.yaml" ] && return 0
    tmp=$(mktemp)
    sed "s|^board: .*|board: $share/board/$board/config.yaml|" "$root$config" >"$tmp"
    chmod --reference="$root$config" "$tmp"
    mv -f "$tmp" "$root$config"
    say "set the board: line of $config to the $board board (the rest of it is as it was)"
    changed=$((changed + 1))
}

# drop DEST: removes $root/DEST if present.
drop() {
    if [ -e "$root$1" ] || [ -L "$root$1" ]; then
        rm -f "$root$1"
        say "removed $1"
        changed=$((changed + 1))
    fi
}

# prune DIR: removes $root/DIR if it is empty. Only directories that are actiond's own are
# pruned, never their parents, which other packages share.
prune() {
    [ -d "$root$1" ] && rmdir "$root$1" 2>/dev/null || true
}

# The system user (systemd/actiond.sysusers), and the board's extra groups if it has any.
sysusers_text() {
    cat "$here/systemd/actiond.sysusers"
    if [ -f "$here/board/$board/sysusers.conf" ]; then cat "$here/board/$board/sysusers.conf"; fi
}

install_all() {
    if [ -z "$binary" ]; then
        for b in "$here/actiond" "$here/target/release/actiond"; do
            [ -x "$b" ] && { binary=$b; break; }
        done
        [ -n "$binary" ] || die "no binary: pass --binary PATH (e.g. dist/aarch64-unknown-linux-musl/actiond)"
    fi
    [ -f "$binary" ] && [ -x "$binary" ] || die "--binary $binary is not an executable file"
    if $live; then
        # On the target itself, refuse a binary for another machine before it replaces a
        # working one; a package build (DESTDIR) may well be cross-installing.
        "$binary" --version >/dev/null 2>&1 || die "$binary does not run on this machine (built for another CPU?)"
        "$binary" --check-config "$here/board/$board/config.yaml" >/dev/null \
            || die "the $board panel does not pass $binary --check-config"
    fi

    put "$binary" "$bin" 0755
    # The unit names /usr/local; another PREFIX gets its own paths.
    put_text "$unit" 0644 "$(sed "/^#/!s|/usr/local/|$PREFIX/|g" "$here/systemd/actiond.service")
"
    for f in "$here"/board/*/service.conf; do
        b=$(basename "$(dirname "$f")")
        if [ "$b" = "$board" ]; then put "$f" "$dropins/$b.conf" 0644; else drop "$dropins/$b.conf"; fi
    done
    prune "$dropins"
    [ -f "$here/README.md" ] && put "$here/README.md" "$doc/README.md" 0644
    for page in $GUIDE; do
        [ -f "$here/docs/$page.md" ] && put "$here/docs/$page.md" "$doc/docs/$page.md" 0644
    done
    for d in "$here"/board/*/; do
        [ -f "${d}config.yaml" ] || continue
        for f in "$d"*; do
            put "$f" "$share/board/$(basename "$d")/$(basename "$f")" 0644
        done
    done
    put_text "$sysusers" 0644 "$(sysusers_text)
"
    put "$here/systemd/actiond-run.sysusers" "$run_users" 0644
    put "$here/systemd/actiond.tmpfiles" "$tmpfiles" 0644
    mkdir -p "$root$etc" "$root$etc/config.d"
    chmod 0751 "$root$etc"
    chmod 0750 "$root$etc/config.d"
    admin_config
    if [ -f "$here/board/$board/polkit.rules" ]; then
        link "$share/board/$board/polkit.rules" "$rules"
    fi

    if $live; then
        if command -v systemd-sysusers >/dev/null 2>&1; then
            # actiond-run first: a Pi's groups in actiond.conf name it.
            systemd-sysusers "$run_users" "$sysusers" || die "systemd-sysusers $sysusers failed"
        else
            if ! id actiond >/dev/null 2>&1; then
                useradd --system --home-dir "$state" --no-create-home --shell /usr/sbin/nologin \
                    --user-group --comment "actiond service" actiond || die "useradd failed"
                say "created the system user actiond"
            fi
            if ! id actiond-run >/dev/null 2>&1; then
                useradd --system --home-dir /var/lib/actiond-run --no-create-home \
                    --shell /usr/sbin/nologin --user-group --comment "actiond actions" actiond-run \
                    || die "useradd failed"
                say "created the system user actiond-run"
            fi
        fi
        if command -v systemd-tmpfiles >/dev/null 2>&1; then
            systemd-tmpfiles --create "$tmpfiles" || die "systemd-tmpfiles $tmpfiles failed"
        else
            chown root:actiond "$etc" "$etc/config.d" "$config" && chmod 0640 "$config"
            install -d -m 0700 -o actiond-run -g actiond-run /var/lib/actiond-run
        fi
        systemctl daemon-reload || die "systemctl daemon-reload failed"
        if [ $changed -gt 0 ] && systemctl is-active --quiet actiond; then
            systemctl try-restart actiond && say "restarted actiond"
        fi
    fi
    if [ $changed -eq 0 ]; then say "nothing to change"; fi
    if $live && ! systemctl is-enabled --quiet actiond 2>/dev/null; then
        say "next: systemctl enable --now actiond, then open http://$(hostname).local:1337"
    fi
}

uninstall_all() {
    if $live && systemctl list-unit-files actiond.service >/dev/null 2>&1; then
        systemctl disable --now actiond 2>/dev/null || true
    fi
    drop "$bin"
    drop "$unit"
    for f in "$root$dropins"/*.conf; do
        [ -e "$f" ] || continue
        b=$(basename "$f" .conf)
        [ -f "$here/board/$b/service.conf" ] && drop "$dropins/$b.conf"
    done
    prune "$dropins"
    drop "$doc/README.md"
    for page in $GUIDE; do drop "$doc/docs/$page.md"; done
    prune "$doc/docs"
    prune "$doc"
    for d in "$here"/board/*/; do
        [ -f "${d}config.yaml" ] || continue
        for f in "$d"*; do drop "$share/board/$(basename "$d")/$(basename "$f")"; done
        prune "$share/board/$(basename "$d")"
    done
    prune "$share/board"
    prune "$share"
    drop "$sysusers"
    drop "$run_users"
    drop "$tmpfiles"
    if [ -e "$root$rules" ] || [ -L "$root$rules" ]; then
        if $purge || ours "$rules"; then drop "$rules"; else say "kept $rules: it was edited (--purge removes it)"; fi
    fi
    if [ -f "$root$config" ]; then
        if $purge || pristine; then drop "$config"; else say "kept $config: it was edited (--purge removes it)"; fi
    fi
    prune "$etc/config.d"
    prune "$etc"
    if $purge && [ -d "$root$state" ]; then
        rm -rf -- "$root$state"
        say "removed $state"
    fi
    if $live; then
        systemctl daemon-reload || true
        say "the system user actiond was kept (remove it with: userdel actiond)"
    fi
    if [ $changed -eq 0 ]; then say "nothing to remove"; fi
}

case $mode in
    install) install_all ;;
    uninstall) uninstall_all ;;
esac
