//! The memory claims of docs/PERFORMANCE.md, as a test that does not depend on speed: once
//! the history is full, running more commands does not grow the service. 5 000 short runs of
//! `echo hello` from four keep-alive clients; the resident set after the last 4 000 may
//! exceed the one after the first 1 000 (the history of `logHistoryLimit` = 200 entries is
//! full by then) only by allocator noise, less than a leak of even 128 bytes per run
//! (500 KiB over 4 000 runs) would add; and it stays under a fixed ceiling that a debug build
//! meets with room to spare (the release build idles at about 3.6 MiB).

use std::thread;

use serde_json::json;

use crate::client::{Conn, Request};
use crate::harness::{Server, config_with, vm_kib, zombie_children};

const CLIENTS: usize = 4;
const FIRST: usize = 1000;
const TOTAL: usize = 5000;
/// Growth allowed between the two readings: allocator noise and lazily touched pages.
const GROWTH_KIB: u64 = 512;
/// The ceiling for a debug build after all the runs.
const CEILING_KIB: u64 = 24 * 1024;

/// Runs `count` executions of `hello`, spread over the clients, each on its own connection.
fn run(addr: std::net::SocketAddr, count: usize) {
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let share = count / CLIENTS + usize::from(c < count % CLIENTS);
            thread::spawn(move || {
                let mut conn = Conn::open(addr);
                let req = Request::connect("StartActionAndWait", br#"{"actionId":"hello"}"#);
                for i in 0..share {
                    let resp = conn.send(&req);
                    assert_eq!(resp.status, 200, "run {i}: {}", resp.text());
                    let entry = &resp.json()["logEntry"];
                    assert_eq!(entry["stdout"], "hello\n", "run {i}: {entry}");
                    assert_eq!(entry["blocked"], false, "run {i}: {entry}");
                }
            })
        })
        .collect();
    for c in clients {
        c.join().expect("client thread");
    }
}

#[test]
fn memory_stays_flat_over_thousands_of_runs_once_the_history_is_full() {
    let server = Server::start(config_with(vec![json!({
        "id": "hello",
        "title": "Hello",
        "shell": "echo hello",
        "maxConcurrent": CLIENTS,
    })]));
    let pid = server.pid();

    run(server.addr, FIRST);
    let after_first = vm_kib(pid, "VmRSS");
    run(server.addr, TOTAL - FIRST);
    let after_all = vm_kib(pid, "VmRSS");
    let peak = vm_kib(pid, "VmHWM");
    eprintln!(
        "RSS after {FIRST} runs: {after_first} KiB, after {TOTAL}: {after_all} KiB, peak {peak} KiB"
    );

    assert!(
        after_all <= after_first + GROWTH_KIB,
        "RSS grew from {after_first} KiB after {FIRST} runs to {after_all} KiB after {TOTAL}"
    );
    assert!(
        after_all <= CEILING_KIB,
        "RSS after {TOTAL} runs is {after_all} KiB, over the {CEILING_KIB} KiB ceiling"
    );
    let logs = server.ok("GetLogs", json!({"startOffset": 0}));
    assert!(logs["logs"].as_array().is_some_and(|l| !l.is_empty()));
    assert!(zombie_children(pid).is_empty(), "zombies left behind");
}
