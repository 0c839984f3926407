#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run) and as README "Testing" shows it:
# format check, clippy with warnings as errors, unit tests, black-box tests of the real
# binary, the MQTT tests against Debian's mosquitto, the Connect client from npm against the
# real binary, and ARM builds run under qemu-user (scripts/cross-smoke.sh). It installs what it needs and fails loudly; nothing is
# skipped silently.
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

step "MQTT against a real broker: Debian's mosquitto (tests/it/mqtt.rs, ignored by cargo test)"
need mosquitto mosquitto
need mosquitto_sub mosquitto-clients
need mosquitto_pub mosquitto-clients
# By name: these are #[ignore]d so that a clone without mosquitto still passes cargo test.
# --include-ignored also runs the module's always-on tests; the count check makes sure the
# filter still matches the tests (a renamed module must not turn this stage into a no-op).
mqtt_out=$(cargo test --quiet --test it mqtt:: -- --include-ignored 2>&1) || {
    printf '%s\n' "$mqtt_out"
    exit 1
}
printf '%s\n' "$mqtt_out" | grep -E '^test result:'
printf '%s\n' "$mqtt_out" | grep -qE 'test result: ok\. ([1-9][0-9]+) passed' || {
    echo "error: the MQTT stage ran fewer tests than expected" >&2
    exit 1
}

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

step "ARM builds without docker, run under qemu-user (scripts/cross-smoke.sh)"
bash scripts/cross-smoke.sh

step "all tests passed"
