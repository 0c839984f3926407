//! Execution history as GetLogs and GetActionLogs show it: newest first, the
//! paging arithmetic (countRemaining, totalCount, pageSize, startOffset), the per-action
//! view, and the eviction at `logHistoryLimit` (the oldest run of the action holding the most).
//!
//! Runs get tracking ids `run-00`, `run-01`, … in start order, so every expected page can
//! be written down exactly.

use serde_json::{Value, json};

use crate::client::assert_entry_shape;
use crate::harness::{Server, config_with, shell_action};

/// Runs `action` to completion with tracking id `id`.
fn run_as(server: &Server, action: &str, id: &str) {
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": action, "uniqueTrackingId": id}),
    );
    assert_eq!(reply["logEntry"]["exitCode"], 0, "{reply}");
}

fn run_id(n: usize) -> String {
    format!("run-{n:02}")
}

/// The tracking ids of a page, in order.
fn ids(page: &Value) -> Vec<String> {
    page["logs"]
        .as_array()
        .unwrap_or_else(|| panic!("logs is not an array: {page}"))
        .iter()
        .map(|e| {
            assert_entry_shape(e);
            e["executionTrackingId"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// Tracking ids `run-<from>` down to `run-<to>` inclusive (newest first).
fn newest_first(from: usize, to: usize) -> Vec<String> {
    (to..=from).rev().map(run_id).collect()
}

/// The four counters of a page: countRemaining, pageSize, totalCount, startOffset, as the
/// decimal strings the wire carries for int64.
fn counters(page: &Value) -> [&str; 4] {
    ["countRemaining", "pageSize", "totalCount", "startOffset"].map(|f| {
        page[f]
            .as_str()
            .unwrap_or_else(|| panic!("{f} is not an int64 string: {page}"))
    })
}

/// A server with page size 10 that has run 25 executions, `run-00` … `run-24`.
fn server_with_25_runs() -> Server {
    let mut config = config_with(vec![shell_action("noop", "true")]);
    config["logHistoryPageSize"] = json!(10);
    let server = Server::start(config);
    for n in 0..25 {
        run_as(&server, "noop", &run_id(n));
    }
    server
}

fn page(server: &Server, offset: i64) -> Value {
    server.ok("GetLogs", json!({"startOffset": offset}))
}

#[test]
fn first_page_is_the_newest_ten() {
    let server = server_with_25_runs();
    let page = page(&server, 0);
    assert_eq!(ids(&page), newest_first(24, 15));
    assert_eq!(counters(&page), ["15", "10", "25", "0"], "{page}");
}

#[test]
fn offset_ten_skips_the_newest_ten() {
    let server = server_with_25_runs();
    let page = page(&server, 10);
    assert_eq!(ids(&page), newest_first(14, 5));
    assert_eq!(counters(&page), ["5", "10", "25", "10"], "{page}");
}

#[test]
fn last_page_is_short_with_nothing_remaining() {
    let server = server_with_25_runs();
    let page = page(&server, 20);
    assert_eq!(ids(&page), newest_first(4, 0));
    assert_eq!(counters(&page), ["0", "10", "25", "20"], "{page}");
}

#[test]
fn offset_equal_to_the_total_gives_an_empty_page() {
    let server = server_with_25_runs();
    let page = page(&server, 25);
    assert_eq!(page["logs"], json!([]), "{page}");
    assert_eq!(counters(&page), ["0", "10", "25", "25"], "{page}");
}

#[test]
fn offset_past_the_total_gives_an_empty_page() {
    let server = server_with_25_runs();
    let page = page(&server, 30);
    assert_eq!(page["logs"], json!([]), "{page}");
    assert_eq!(counters(&page), ["0", "10", "25", "30"], "{page}");
}

#[test]
fn negative_offset_is_invalid_argument() {
    let server = server_with_25_runs();
    for offset in [json!(-1), json!(-10), json!("-1")] {
        let (status, body) = server.call("GetLogs", json!({"startOffset": offset}));
        assert_eq!(status, 400, "startOffset {offset}: {body}");
        assert_eq!(body["code"], "invalid_argument", "{body}");
    }
}

#[test]
fn page_size_follows_the_config() {
    let mut config = config_with(vec![shell_action("noop", "true")]);
    config["logHistoryPageSize"] = json!(4);
    let server = Server::start(config);
    for n in 0..5 {
        run_as(&server, "noop", &run_id(n));
    }
    let page = page(&server, 0);
    assert_eq!(ids(&page), newest_first(4, 1));
    assert_eq!(counters(&page), ["1", "4", "5", "0"], "{page}");
    let page = server.ok("GetLogs", json!({"startOffset": 4}));
    assert_eq!(ids(&page), newest_first(0, 0));
    assert_eq!(counters(&page), ["0", "4", "5", "4"], "{page}");
}

#[test]
fn empty_history_gives_an_empty_page() {
    let server = Server::start(config_with(vec![shell_action("noop", "true")]));
    let page = server.ok("GetLogs", json!({}));
    assert_eq!(page["logs"], json!([]), "{page}");
    assert_eq!(counters(&page), ["0", "10", "0", "0"], "{page}");
}

#[test]
fn running_execution_is_listed_first() {
    let server = Server::start(config_with(vec![
        shell_action("noop", "true"),
        shell_action("gated", "while [ ! -e go ]; do sleep 0.02; done"),
    ]));
    run_as(&server, "noop", "done-1");
    server.ok(
        "StartAction",
        json!({"actionId": "gated", "uniqueTrackingId": "running-1"}),
    );
    let page = server.ok("GetLogs", json!({}));
    assert_eq!(ids(&page), ["running-1", "done-1"]);
    assert_eq!(page["logs"][0]["executionFinished"], false, "{page}");
    std::fs::write(server.path("go"), "").expect("write go");
    server.wait_finished("running-1", std::time::Duration::from_secs(10));
}

// ---------------------------------------------------------------------------------------
// GetActionLogs

fn three_action_server() -> Server {
    Server::start(config_with(vec![
        shell_action("alpha", "true"),
        shell_action("beta", "true"),
        shell_action("gamma", "true"),
    ]))
}

#[test]
fn action_logs_show_only_that_action_newest_first() {
    let server = three_action_server();
    let order = [
        ("alpha", "a1"),
        ("beta", "b1"),
        ("alpha", "a2"),
        ("gamma", "c1"),
        ("beta", "b2"),
        ("alpha", "a3"),
    ];
    for (action, id) in order {
        run_as(&server, action, id);
    }
    let cases: [(&str, &[&str]); 3] = [
        ("alpha", &["a3", "a2", "a1"]),
        ("beta", &["b2", "b1"]),
        ("gamma", &["c1"]),
    ];
    for (action, expected) in cases {
        let page = server.ok("GetActionLogs", json!({"actionId": action}));
        assert_eq!(ids(&page), expected, "{action}: {page}");
        let total = expected.len().to_string();
        assert_eq!(counters(&page), ["0", "10", total.as_str(), "0"], "{page}");
        for entry in page["logs"].as_array().into_iter().flatten() {
            assert_eq!(entry["actionId"], action, "{entry}");
        }
    }
    let all = server.ok("GetLogs", json!({}));
    assert_eq!(counters(&all), ["0", "10", "6", "0"], "{all}");
}

#[test]
fn action_logs_page_like_the_full_history() {
    let server = three_action_server();
    // Twelve alpha runs with a beta run between each, so alpha's pages cannot line up with
    // the full history's by accident.
    for n in 0..12 {
        run_as(&server, "alpha", &run_id(n));
        run_as(&server, "beta", &format!("beta-{n:02}"));
    }
    let page = server.ok(
        "GetActionLogs",
        json!({"actionId": "alpha", "startOffset": 0}),
    );
    assert_eq!(ids(&page), newest_first(11, 2));
    assert_eq!(counters(&page), ["2", "10", "12", "0"], "{page}");
    let page = server.ok(
        "GetActionLogs",
        json!({"actionId": "alpha", "startOffset": "10"}),
    );
    assert_eq!(ids(&page), newest_first(1, 0));
    assert_eq!(counters(&page), ["0", "10", "12", "10"], "{page}");
    let page = server.ok(
        "GetActionLogs",
        json!({"action_id": "alpha", "start_offset": 12}),
    );
    assert_eq!(page["logs"], json!([]), "{page}");
    assert_eq!(counters(&page), ["0", "10", "12", "12"], "{page}");
}

#[test]
fn action_logs_of_an_action_that_never_ran_are_empty() {
    let server = three_action_server();
    run_as(&server, "alpha", "a1");
    let page = server.ok("GetActionLogs", json!({"actionId": "gamma"}));
    assert_eq!(page["logs"], json!([]), "{page}");
    assert_eq!(counters(&page), ["0", "10", "0", "0"], "{page}");
}

// ---------------------------------------------------------------------------------------
// Retention

/// A flood of one action's presses over HTTP takes that action's own older runs, never
/// another action's last one: in memory, in the history file after its rewrites, and after a
/// restart.
#[test]
fn a_flood_of_one_action_keeps_another_actions_last_run() {
    const LIMIT: usize = 10;
    let state = crate::harness::TempDir::new();
    let mut status = shell_action("status", "true");
    status["maxConcurrent"] = json!(8);
    let config =
        crate::durability::persistent(&state, LIMIT, vec![shell_action("guarded", "true"), status]);
    let server = Server::start(config.clone());
    run_as(&server, "guarded", "alice-run");
    // 4 clients at once, 60 presses: six times the limit, so the file is rewritten too.
    std::thread::scope(|scope| {
        for t in 0..4 {
            let server = &server;
            scope.spawn(move || {
                for n in 0..15 {
                    run_as(server, "status", &format!("flood-{t}-{n:02}"));
                }
            });
        }
    });
    let kept = |server: &Server| {
        let page = server.ok("GetLogs", json!({}));
        assert_eq!(page["logs"].as_array().map(Vec::len), Some(LIMIT), "{page}");
        ids(&page)
    };
    let before = kept(&server);
    assert_eq!(
        before.last().map(String::as_str),
        Some("alice-run"),
        "{before:?}"
    );
    assert_eq!(server.status("alice-run")["exitCode"], 0);
    let file = std::fs::read_to_string(state.path().join("history.jsonl")).expect("history file");
    assert!(file.contains("\"alice-run\""), "the file lost alice's run");
    assert!(
        !file.contains("\"flood-0-00\""),
        "the file was never rewritten"
    );
    server.stop();
    let server = Server::start(config);
    assert_eq!(
        kept(&server),
        before,
        "a restart shows the history shown before it"
    );
}

#[test]
fn history_limit_evicts_the_oldest_entries() {
    let mut config = config_with(vec![shell_action("noop", "true")]);
    config["logHistoryLimit"] = json!(5);
    let server = Server::start(config);
    for n in 0..8 {
        run_as(&server, "noop", &run_id(n));
    }
    let page = server.ok("GetLogs", json!({}));
    assert_eq!(ids(&page), newest_first(7, 3));
    assert_eq!(counters(&page), ["0", "10", "5", "0"], "{page}");
    let page = server.ok("GetActionLogs", json!({"actionId": "noop"}));
    assert_eq!(ids(&page), newest_first(7, 3));
    // Evicted entries are gone for every lookup; kept ones are still found.
    let (status, body) = server.call("ExecutionStatus", json!({"executionTrackingId": "run-02"}));
    assert_eq!(status, 404, "{body}");
    assert_eq!(server.status("run-03")["executionTrackingId"], "run-03");
}
