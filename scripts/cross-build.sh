#!/usr/bin/env bash
# Static release builds of actiond for the Debian packages and for other boards, WITHOUT
# docker, on Debian 12 (bookworm) x86_64: Debian's rustc-web toolchain, the gcc cross linkers,
# Debian's musl, and `-Zbuild-std` where Debian ships no standard library for the target.
# `cross` (Cross.toml) gives the same binaries on a machine with docker; this is the route for
# one without.
#
#   scripts/cross-build.sh [TARGET...]      default: the four package targets
#
# The package targets (scripts/package-deb.sh), one per Debian architecture, all static musl so
# that one file runs whatever the board's C library is:
#   x86_64-unknown-linux-musl        amd64
#   aarch64-unknown-linux-musl       arm64: Pi 3/4/5, Zero 2 W on 64-bit OS (ARMv8.0-A)
#   arm-unknown-linux-musleabi       armhf: every Pi on 32-bit Raspberry Pi OS, Pi Zero and
#                                    Pi 1 included (ARMv6). Raspberry Pi OS armhf is ARMv6
#                                    hard-float, Debian's armhf is ARMv7; an ARMv7 build dies
#                                    with SIGILL on the ARMv6 boards, so this is ARMv6. It uses
#                                    the soft-float calling convention because the only ARMv6-clean
#                                    musl Debian has is armel's; in a static binary the calling
#                                    convention is invisible to the system, and actiond does
#                                    next to no floating point.
#   armv5te-unknown-linux-musleabi   armel: Debian's armel baseline (ARMv5TE, soft-float), e.g.
#                                    Kirkwood NAS boxes. An ARMv6 build would SIGILL there.
# Others, on request:
#   aarch64-unknown-linux-gnu        64-bit OS with glibc >= 2.34 (bookworm), dynamic
#   armv7-unknown-linux-musleabihf   Pi 2/3/4 on 32-bit OS, static, ARMv7 hard-float
#
# Output: dist/<target>/actiond (stripped; dist/ is git-ignored; $ACTIOND_CROSS_DIST names another
# directory) and a size table on stdout. scripts/profile.sh builds through here with its own
# cache and output directory, and the release profile's strip and debug settings changed by
# CARGO_PROFILE_RELEASE_* variables, which pass through to cargo.
# The build cache lives in target/cross ($ACTIOND_CROSS_CACHE), apart from the host (rustup)
# build in target/debug and target/release: this route uses Debian's compiler, and mixing two
# compilers' artifacts in one directory would rebuild everything each time.
# Installs what it needs with apt (root) and fails loudly when it cannot.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=cross-build
. scripts/lib.sh

# PACKAGE_TARGETS (lib.sh): the four above that the packages are built from.
ALL_TARGETS=("${PACKAGE_TARGETS[@]}" aarch64-unknown-linux-gnu armv7-unknown-linux-musleabihf)
CACHE="${ACTIOND_CROSS_CACHE:-$PWD/target/cross}"
DIST="${ACTIOND_CROSS_DIST:-$PWD/dist}"

[ $# -gt 0 ] || set -- "${PACKAGE_TARGETS[@]}"
for t in "$@"; do
    case " ${ALL_TARGETS[*]} " in
        *" $t "*) ;;
        *) die "unknown target '$t' (known: ${ALL_TARGETS[*]})" ;;
    esac
done

# ---------------------------------------------------------------------------------------
# Packages

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

apt_install() {
    # apt_install PKG...: installs the missing ones; a failure stops the script.
    local missing=()
    for p in "$@"; do installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    [ "$(id -u)" -eq 0 ] || die "missing Debian packages (${missing[*]}) and not root to install them"
    step "apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || die "apt-get install ${missing[*]} failed"
}

add_arch() {
    # add_arch ARCH: enables a foreign architecture and refreshes the package lists. Lists of
    # an added 32-bit architecture sometimes fail to download from the security mirror; the
    # main archive is enough for musl-dev, so only the packages' presence is checked later.
    dpkg --print-foreign-architectures | grep -qx "$1" && return 0
    [ "$(id -u)" -eq 0 ] || die "need root to add the $1 architecture"
    step "dpkg --add-architecture $1"
    dpkg --add-architecture "$1"
    apt-get update -qq || [ "$1" != arm64 ] || die "apt-get update failed after adding arm64"
}

# What each target needs from Debian beside the compiler: the foreign architecture of its C
# library ("-" for none) and its packages. A build installs what its targets need and nothing
# more: x86_64 alone adds no architecture, no cross compiler and no emulator, so it cannot
# drag the host's libraries to the versions a foreign architecture has (apt keeps a library
# the same version on every architecture it is installed for). qemu-user-static is not for the
# build: scripts/cross-smoke.sh runs the ARM binaries with it.
needs() {
    case $1 in
        x86_64-unknown-linux-musl)
            echo "- musl-dev:amd64" ;;
        aarch64-unknown-linux-musl)
            echo "arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross musl-dev:arm64 libunwind-14-dev:arm64 qemu-user-static" ;;
        aarch64-unknown-linux-gnu)
            echo "arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross libstd-rust-web-dev:arm64 qemu-user-static" ;;
        arm-unknown-linux-musleabi|armv5te-unknown-linux-musleabi)
            echo "armel gcc-arm-linux-gnueabi libc6-dev-armel-cross musl-dev:armel qemu-user-static" ;;
        armv7-unknown-linux-musleabihf)
            echo "armhf gcc-arm-linux-gnueabihf libc6-dev-armhf-cross musl-dev:armhf qemu-user-static" ;;
    esac
}

packages=(rustc-web cargo-web rust-web-src file binutils)
arches=()
for t in "$@"; do
    read -r arch pkgs <<<"$(needs "$t")"
    [ "$arch" = - ] || case " ${arches[*]} " in *" $arch "*) ;; *) arches+=("$arch") ;; esac
    for p in $pkgs; do
        case " ${packages[*]} " in *" $p "*) ;; *) packages+=("$p") ;; esac
    done
done
all_there=true
for p in "${packages[@]}"; do installed "$p" || all_there=false; done

if ! $all_there; then
    [ "$(id -u)" -eq 0 ] || die "missing Debian packages and not root to install them"
    # One architecture at a time, arm64 first: when armhf is added in the same update and its
    # security index fails, apt keeps stale lists and offers only bookworm's older rustc.
    new_arch=false
    for a in arm64 armel armhf; do
        case " ${arches[*]} " in *" $a "*) ;; *) continue ;; esac
        dpkg --print-foreign-architectures | grep -qx "$a" && continue
        add_arch "$a"
        new_arch=true
    done
    $new_arch || apt-get update -qq \
        || echo "cross-build: apt-get update reported errors; going on with the lists it has" >&2
    apt_install "${packages[@]}"
fi

# The compiler and the arm64 standard library (for the glibc build, which uses Debian's) must be
# the very same release, and the project needs at least its rust-version (bookworm main's 1.85
# is too old; bookworm-security has newer ones).
ver() { dpkg-query -W -f='${Version}' "$1"; }
case " $* " in
    *" aarch64-unknown-linux-gnu "*)
        [ "$(ver rustc-web)" = "$(ver libstd-rust-web-dev:arm64)" ] \
            || die "rustc-web $(ver rustc-web) and libstd-rust-web-dev:arm64 $(ver libstd-rust-web-dev:arm64) differ; run apt-get update && apt-get install --only-upgrade rustc-web libstd-rust-web-dev:arm64" ;;
esac
rust_version=$(/usr/bin/rustc --version | awk '{print $2}')
min=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml)
[ "$(printf '%s\n%s\n' "$min" "$rust_version" | sort -V | head -1)" = "$min" ] \
    || die "Debian rustc $rust_version is older than the project's rust-version $min"

# ---------------------------------------------------------------------------------------
# Per-target settings (environment variables, so paths can be absolute and nothing is written
# into the work tree's cargo config)

mkdir -p "$CACHE/link/x86_64-musl" "$CACHE/link/aarch64-musl" "$CACHE/link/arm-musl"
# std's `unwind` crate asks for -lunwind on musl even with panic=abort. On x86_64 and aarch64
# gcc 12's libgcc_eh needs glibc's _dl_find_object, so LLVM's libunwind stands in; on 32-bit
# ARM, libgcc_eh (ARM EHABI) links against musl. One-line GNU ld scripts named libunwind.a:
if case " $* " in *" x86_64-unknown-linux-musl "*) true ;; *) false ;; esac; then
    # libunwind-14-dev cannot be installed for amd64 beside the arm64 one (both own
    # /usr/lib/llvm-14/lib/libunwind.a), so the amd64 archive is unpacked into the cache.
    unwind_amd64="$CACHE/sysroot/amd64/usr/lib/llvm-14/lib/libunwind.a"
    if [ ! -f "$unwind_amd64" ]; then
        step "apt-get download libunwind-14-dev:amd64 (unpacked into $CACHE/sysroot/amd64)"
        mkdir -p "$CACHE/sysroot/debs"
        (cd "$CACHE/sysroot/debs" && apt-get download -qq libunwind-14-dev:amd64) \
            || die "apt-get download libunwind-14-dev:amd64 failed"
        dpkg-deb -x "$(ls "$CACHE"/sysroot/debs/libunwind-14-dev_*_amd64.deb | tail -1)" "$CACHE/sysroot/amd64"
        [ -f "$unwind_amd64" ] || die "no $unwind_amd64 in libunwind-14-dev:amd64"
    fi
    echo "INPUT($unwind_amd64)" >"$CACHE/link/x86_64-musl/libunwind.a"
fi
echo 'INPUT(/usr/lib/llvm-14/lib/libunwind.a)' >"$CACHE/link/aarch64-musl/libunwind.a"
echo 'INPUT(-lgcc_eh)' >"$CACHE/link/arm-musl/libunwind.a"

musl_flags() {
    # musl_flags SPECS LINKDIR: link Debian's musl through its gcc specs file instead of
    # Rust's self-contained crt; static relocation, since the specs file would start a
    # static-PIE with the wrong crt object.
    echo "-C link-self-contained=no -C relocation-model=static -C link-arg=-specs=$1 -L native=$2"
}

# The source paths a panic message names are written relative to their crate's directory:
# `tokio-1.54.1/src/sync/mpsc.rs`, `std/src/thread/mod.rs`, not under the builder's cargo home
# and the compiler's source directory (about 260 paths, 13 KiB of the x86_64 binary, that also
# told the build machine's layout).
remap_flags() {
    local d flags=""
    for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
        [ -d "$d" ] && flags="$flags --remap-path-prefix=$d="
    done
    d="$(/usr/bin/rustc --print sysroot)/lib/rustlib/src/rust/library/"
    echo "$flags --remap-path-prefix=$d="
}
REMAP_FLAGS="$(remap_flags)"

# No unwind tables (.eh_frame and its index) for actiond's and std's code: the release profile
# aborts on a panic, and std is built without the backtrace feature, so nothing in the binary
# ever walks its own stack (they were 245,760 bytes of the x86_64 binary). A panic still
# prints its message and its place in the source.
# What is lost: a debugger's or `perf --call-graph`'s stack of the stripped binary. x86_64
# only for now: the ARM builds take it once scripts/cross-smoke.sh has run them with it.
NO_UNWIND_TABLES="-C force-unwind-tables=no"

configure() {
    # configure TARGET: sets LINKER, FLAGS, BUILD_STD, STRIP_TOOL, QEMU for one target.
    BUILD_STD=yes FLAGS="$REMAP_FLAGS"
    case $1 in
        x86_64-unknown-linux-musl)
            LINKER=x86_64-linux-gnu-gcc STRIP_TOOL=strip
            FLAGS="$REMAP_FLAGS $NO_UNWIND_TABLES $(musl_flags /usr/lib/x86_64-linux-musl/musl-gcc.specs "$CACHE/link/x86_64-musl")" ;;
        aarch64-unknown-linux-gnu)
            LINKER=aarch64-linux-gnu-gcc BUILD_STD=no STRIP_TOOL=aarch64-linux-gnu-strip ;;
        aarch64-unknown-linux-musl)
            LINKER=aarch64-linux-gnu-gcc STRIP_TOOL=aarch64-linux-gnu-strip
            FLAGS="$REMAP_FLAGS $(musl_flags /usr/lib/aarch64-linux-musl/musl-gcc.specs "$CACHE/link/aarch64-musl")" ;;
        armv7-unknown-linux-musleabihf)
            LINKER=arm-linux-gnueabihf-gcc STRIP_TOOL=arm-linux-gnueabihf-strip
            FLAGS="$REMAP_FLAGS $(musl_flags /usr/lib/arm-linux-musleabihf/musl-gcc.specs "$CACHE/link/arm-musl")" ;;
        arm-unknown-linux-musleabi|armv5te-unknown-linux-musleabi)
            LINKER=arm-linux-gnueabi-gcc STRIP_TOOL=arm-linux-gnueabi-strip
            FLAGS="$REMAP_FLAGS $(musl_flags /usr/lib/arm-linux-musleabi/musl-gcc.specs "$CACHE/link/arm-musl")" ;;
    esac
}

# ---------------------------------------------------------------------------------------
# Build

# One cargo run per kind of standard library builds all its targets at once: cargo schedules
# their units together, so while one target's single-threaded link-time optimisation runs
# (the release profile has one codegen unit), the other core compiles another target. One
# target after the other, the same builds took about a third longer on 2 cores.
build_group() {
    # build_group yes|no TARGET...: builds the targets, with -Zbuild-std when yes.
    local std=$1 t var
    shift
    [ $# -gt 0 ] || return 0
    local envs=() targets=() extra=()
    for t in "$@"; do
        configure "$t"
        var=$(echo "$t" | tr 'a-z-' 'A-Z_')
        envs+=("CARGO_TARGET_${var}_LINKER=$LINKER" "CARGO_TARGET_${var}_RUSTFLAGS=$FLAGS")
        targets+=(--target "$t")
    done
    # -Zbuild-std must name panic_abort because the release profile says panic = "abort".
    # No standard library features: cargo's default for -Zbuild-std adds `backtrace` (and
    # `panic-unwind`, which panic = "abort" never uses), and a backtrace brings a DWARF reader,
    # an ELF parser, a demangler and a second inflater into the binary, 80 KiB or more, to
    # print nothing but addresses from a stripped binary. A panic still prints its message
    # and its place in the source.
    [ "$std" = yes ] && extra=(-Zbuild-std=std,panic_abort -Zbuild-std-features=)
    step "building $* (Debian rustc $rust_version$([ "$std" = yes ] && echo ', -Zbuild-std'))"
    env PATH="/usr/bin:/bin:/usr/sbin:/sbin" \
        RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
        CARGO_TARGET_DIR="$CACHE/target" "${envs[@]}" \
        /usr/bin/cargo build --release --locked --quiet "${targets[@]}" "${extra[@]}" \
        || die "cargo build for $* failed"
}

with_std=() without_std=()
for t in "$@"; do
    configure "$t"
    if [ $BUILD_STD = yes ]; then with_std+=("$t"); else without_std+=("$t"); fi
done
start=$SECONDS
build_group yes "${with_std[@]}"
build_group no "${without_std[@]}"
built=$((SECONDS - start))

sizes=()
for t in "$@"; do
    configure "$t"
    out="$CACHE/target/$t/release/actiond"
    [ -f "$out" ] || die "no binary at $out"
    mkdir -p "$DIST/$t"
    # The profile strips already; strip again with the target's binutils so the artifact is
    # stripped even if the profile changes, and check that it is an ELF for the right machine.
    "$STRIP_TOOL" --remove-section=.comment -o "$DIST/$t/actiond" "$out"
    desc=$(file -b "$DIST/$t/actiond")
    case $t:$desc in
        x86_64-*:*ELF*x86-64*|aarch64-*:*ELF*aarch64*|arm*:*ELF*32-bit*ARM*) ;;
        *) die "$DIST/$t/actiond is not an ELF for $t: $desc" ;;
    esac
    case $t in *musl*) case $desc in *static*) ;; *) die "$t build is not static: $desc" ;; esac ;; esac
    # A 32-bit ARM binary is marked with the newest architecture of any object linked into it
    # (ours, std's, musl's): that must be the target's, or the oldest boards get SIGILL.
    case $t in
        arm-*) want_arch=v6 ;;
        armv5te-*) want_arch=v5TE ;;
        armv7-*) want_arch=v7 ;;
        *) want_arch= ;;
    esac
    if [ -n "$want_arch" ]; then
        got_arch=$(readelf -A "$DIST/$t/actiond" | sed -n 's/^ *Tag_CPU_arch: //p')
        [ "$got_arch" = "$want_arch" ] || die "$t binary is marked $got_arch, not $want_arch"
        desc="$desc, Tag_CPU_arch $got_arch"
    fi
    bytes=$(stat -c %s "$DIST/$t/actiond")
    sizes+=("$(printf '%-32s %9s bytes  %5s KiB  %s' "$t" "$bytes" $((bytes / 1024)) "$desc")")
done

printf '\n%-32s %15s  %9s  %s\n' target size "" file
printf '%s\n' "${sizes[@]}"
echo "built in ${built} s"
