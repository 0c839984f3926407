//! Graceful shutdown: on SIGTERM or SIGINT the service stops, takes every
//! running execution down with the kill ladder, leaves nothing of their process groups
//! behind (not even unreaped zombies), and exits 0 within `killGracePeriod` + 2 s.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::harness::{
    GroupGuard, SOON, Server, assert_group_gone, config_with, group_members, read_pid_file,
    shell_action, wait_until,
};

/// The tests' `killGracePeriod` (see `config_with`).
const GRACE: Duration = Duration::from_secs(1);

/// The bound on shutdown: the grace period plus two seconds.
const SHUTDOWN_BOUND: Duration = Duration::from_secs(1 + 2);

/// How long to wait for an exit before declaring a hang (longer than the bound, so that a
/// slow exit is reported with its duration rather than as "still running").
const HANG: Duration = Duration::from_secs(15);

/// Signals the service, waits for it to exit, and returns how long that took; asserts the
/// exit was a clean 0.
fn stop_and_time(server: &mut Server, signal: Signal) -> Duration {
    let began = Instant::now();
    server.signal(signal);
    let status = server.wait_exit(HANG);
    let elapsed = began.elapsed();
    let status = status.unwrap_or_else(|| panic!("actiond still running {HANG:?} after {signal}"));
    assert_eq!(
        status.code(),
        Some(0),
        "exit status {status:?} after {signal}"
    );
    elapsed
}

/// Starts `action`, which writes its group id to `pid` and has two grandchildren, and
/// returns the group id once all three processes exist.
fn start_group(server: &Server, action: &str) -> i32 {
    server.start_action(action);
    let pgid = read_pid_file(&server.path("pid"), SOON);
    let all_there = wait_until(SOON, || group_members(pgid).len() >= 3);
    assert!(all_there, "group {pgid}: {:?}", group_members(pgid));
    pgid
}

#[test]
fn sigterm_kills_a_term_ignoring_execution_and_exits_zero_in_time() {
    let mut server = Server::start(config_with(vec![shell_action(
        "stubborn",
        "trap '' TERM\necho $$ > pid\nsleep 1000 & sleep 1000 & wait\n",
    )]));
    let pgid = start_group(&server, "stubborn");
    let _guard = GroupGuard(pgid);
    let elapsed = stop_and_time(&mut server, Signal::SIGTERM);
    assert!(
        elapsed <= SHUTDOWN_BOUND,
        "shutdown took {elapsed:?}, more than killGracePeriod + 2 s"
    );
    // The group ignores SIGTERM: an exit before the grace period means the ladder was cut
    // short (or never ran).
    assert!(elapsed >= GRACE, "exited after only {elapsed:?}");
    assert_group_gone(pgid);
}

#[test]
fn sigint_shuts_down_like_sigterm() {
    let mut server = Server::start(config_with(vec![shell_action(
        "family",
        "echo $$ > pid\nsleep 1000 & sleep 1000 & wait\n",
    )]));
    let pgid = start_group(&server, "family");
    let _guard = GroupGuard(pgid);
    let elapsed = stop_and_time(&mut server, Signal::SIGINT);
    assert!(elapsed <= SHUTDOWN_BOUND, "shutdown took {elapsed:?}");
    assert_group_gone(pgid);
}

#[test]
fn sigterm_when_idle_exits_zero_in_time() {
    let mut server = Server::start(config_with(vec![shell_action("noop", "true")]));
    server.run("noop");
    let elapsed = stop_and_time(&mut server, Signal::SIGTERM);
    assert!(elapsed <= SHUTDOWN_BOUND, "shutdown took {elapsed:?}");
}

#[test]
fn shutdown_closes_idle_keep_alive_connections() {
    // An idle keep-alive client must not hold the service up.
    let mut server = Server::start(config_with(vec![shell_action("noop", "true")]));
    let mut conn = server.conn();
    let resp = conn.send(&crate::client::Request::get("/readyz"));
    assert_eq!(resp.status, 200);
    let elapsed = stop_and_time(&mut server, Signal::SIGTERM);
    assert!(elapsed <= SHUTDOWN_BOUND, "shutdown took {elapsed:?}");
    drop(conn);
}

#[test]
fn sigterm_the_moment_it_listens_is_a_clean_stop() {
    // systemd may send SIGTERM right after READY=1. The handler must already be in place by
    // the time "listening on" is printed, or the signal's default action kills the service
    // without recording anything. A few rounds, since the window was a matter of timing.
    for round in 0..10 {
        let mut server = Server::start(config_with(vec![shell_action("noop", "true")]));
        server.signal(Signal::SIGTERM);
        let status = server
            .wait_exit(SHUTDOWN_BOUND)
            .unwrap_or_else(|| panic!("round {round}: no exit after SIGTERM"));
        assert!(status.success(), "round {round}: {status:?}");
    }
}

/// A SIGTERM while a reload of a large config is being loaded (off the event loop) exits in
/// time: the stop does not wait for a config that would never apply.
#[test]
fn sigterm_during_a_long_reload_exits_in_time() {
    let mut server = Server::start(config_with(vec![shell_action("noop", "true")]));
    assert!(
        wait_until(SOON, || server.log_contains("for changes")),
        "the service never said it watches its files"
    );
    // 40,000 actions (2.6 MB, within the 4 MiB a file may have): far longer to load than
    // the wait below and the bound on shutdown together, on a debug build.
    let mut text = String::from("killGracePeriod: 1\nactions:\n");
    for i in 0..40_000 {
        text.push_str(&format!("  - {{id: a{i}, title: A {i}, shell: 'true'}}\n"));
    }
    let tmp = server.path("config.yaml.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
    // Settled after 2 s of quiet, read twice 250 ms apart: the load is under way then. Wall
    // time: nothing is said when a load begins, and the point is a stop in its middle.
    std::thread::sleep(Duration::from_secs(3));
    let elapsed = stop_and_time(&mut server, Signal::SIGTERM);
    assert!(
        !server.log_contains("config reloaded") && !server.log_contains("not reloaded"),
        "the reload was over before the stop: the test proves nothing"
    );
    assert!(elapsed <= SHUTDOWN_BOUND, "shutdown took {elapsed:?}");
}
