#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run) and as README "Testing" shows it:
# format check, clippy with warnings as errors, unit tests, black-box tests of the real
# binary, the Connect client from npm against the real binary, the web page in Chromium,
# the Debian packages (built, checked by lintian, their binaries run under qemu-user on the
# oldest CPU of each architecture), and the amd64 package under a real systemd in
# systemd-nspawn. It installs what it needs and fails loudly; nothing is skipped silently.
# Slow things are cached under target/: the cross builds (target/cross) and the container's
# Debian rootfs (target/nspawn).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }
need() {
    # need COMMAND DEBIAN-PACKAGE: install the package when the command is missing.
    if ! command -v "$1" >/dev/null 2>&1; then
        step "installing $2 (for $1)"
        if [ "$(id -u)" -ne 0 ]; then
            echo "error: $1 is missing and installing $2 needs root" >&2
            exit 1
        fi
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
    fi
    command -v "$1" >/dev/null || { echo "error: $1 still missing after installing $2" >&2; exit 1; }
}

need cargo cargo
need node nodejs
need npm npm
need systemd-analyze systemd

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets --quiet -- -D warnings

step "cargo build (the binary the black-box tests drive)"
cargo build --quiet

step "cargo test (unit tests and tests/it against the real binary)"
cargo test --quiet

step "Connect client from npm against the real binary (tests/connect)"
(
    cd tests/connect
    npm ci --no-audit --no-fund --loglevel=error
    npm run --silent generate
    ACTIOND_BIN="$PWD/../../target/debug/actiond" npm test
)

step "web page in Debian's chromium against the real binary (tests/web; screenshots in tests/web/out)"
need chromium chromium
# The action icons are emoji; without a colour emoji font the screenshots show empty boxes.
if ! dpkg -s fonts-noto-color-emoji >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || { echo "error: fonts-noto-color-emoji is missing and installing it needs root" >&2; exit 1; }
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-color-emoji >/dev/null
fi
(
    cd tests/web
    npm ci --no-audit --no-fund --loglevel=error
    ACTIOND_BIN="$PWD/../../target/debug/actiond" CHROMIUM="$(command -v chromium)" npm test
)

# The container's Debian rootfs downloads and unpacks while the packages compile; on a warm
# cache this returns at once. It runs in a session of its own, so that whatever happens here
# its whole process group can be ended.
step "in the background: the Debian rootfs for the systemd stage (log: target/nspawn/prepare.log)"
mkdir -p target/nspawn
setsid --wait bash scripts/nspawn-test.sh --prepare >target/nspawn/prepare.log 2>&1 </dev/null &
prepare=$!
trap '[ -z "${prepare:-}" ] || kill -TERM -- "-$prepare" 2>/dev/null || true' EXIT

step "Debian packages for amd64, arm64, armhf and armel, built without docker (scripts/package-deb.sh)"
bash scripts/package-deb.sh
need lintian lintian
version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' Cargo.toml | head -1)
step "lintian on the four packages (an error fails the run; warnings are shown)"
lintian --fail-on error --info dist/deb/actiond_"$version"_{amd64,arm64,armhf,armel}.deb

step "the packages' binaries on the oldest CPU of each architecture, under qemu-user (scripts/cross-smoke.sh)"
bash scripts/cross-smoke.sh --debs

step "the amd64 package under a real systemd in systemd-nspawn (scripts/nspawn-test.sh)"
if ! wait "$prepare"; then
    cat target/nspawn/prepare.log
    echo "error: making the container's rootfs failed (above)" >&2
    exit 1
fi
prepare=
bash scripts/nspawn-test.sh "dist/deb/actiond_${version}_amd64.deb"

step "all tests passed"
