//! The start limits seen through the records they leave: `maxConcurrent`
//! (runs of one action at once), `maxConcurrentExecutions` (runs of all actions at once) and
//! `maxRate` (starts of one action in a sliding window). A start refused by a limit is not an
//! error: it answers like any start and leaves a blocked entry (executionStarted false,
//! executionFinished true, blocked true, exitCode -1) whose stderr holds one
//! `actiond: blocked: …` line naming the limit, so an operator can tell which one bit.
//!
//! The last tests race two starts for the last free place, many rounds over, to show that
//! the check and the insert that follows it are one step: exactly one of the two runs, never
//! both and never neither. The two callers connect first and then wait on a barrier, so the
//! requests leave within microseconds of each other.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Conn, Request};
use crate::harness::{
    GATED, SOON, Server, assert_blocked, config_with, notices, poll_every, send_together,
    shell_action, started_id, wait_until,
};

/// Runs a gated action to completion: lets it through first, then waits for its end.
fn run_released(server: &Server, action: &str) -> Value {
    std::fs::write(server.path("go"), "").expect("write go");
    let entry = server.run(action);
    std::fs::remove_file(server.path("go")).expect("remove go");
    entry
}

/// Asserts an entry that ran (or runs): not blocked.
fn assert_not_blocked(entry: &Value) {
    assert_eq!(entry["blocked"], false, "{entry}");
    assert!(
        notices(entry).iter().all(|l| !l.contains("blocked")),
        "{entry}"
    );
}

/// Lets every gated run finish and waits for each of `ids` to end; then takes the `go` file
/// away again for the next round.
fn release(server: &Server, ids: &[String]) {
    std::fs::write(server.path("go"), "").expect("write go");
    for id in ids {
        let entry = server.wait_finished(id, SOON);
        assert_eq!(entry["exitCode"], 0, "{entry}");
    }
    std::fs::remove_file(server.path("go")).expect("remove go");
}

fn gated(id: &str, max_concurrent: u32) -> Value {
    let mut action = shell_action(id, GATED);
    action["maxConcurrent"] = json!(max_concurrent);
    action
}

// ---------------------------------------------------------------------------------------
// Each limit, one at a time

#[test]
fn max_concurrent_blocks_the_run_beyond_it_and_names_the_limit() {
    let server = Server::start(config_with(vec![gated("pair", 2)]));
    let running: Vec<String> = (0..2).map(|_| server.start_action("pair")).collect();
    for id in &running {
        server.wait_started(id);
    }
    // The waiting form answers at once with the blocked entry: nothing runs, so there is
    // nothing to wait for.
    let began = Instant::now();
    let entry = server.run("pair");
    assert!(began.elapsed() < Duration::from_secs(2), "{entry}");
    let reason = assert_blocked(&entry);
    assert!(
        reason.contains("maxConcurrent") && !reason.contains("maxConcurrentExecutions"),
        "the reason names the wrong limit: {reason:?}"
    );
    assert!(
        reason.contains('2'),
        "the reason gives the limit: {reason:?}"
    );
    assert_eq!(entry["actionId"], "pair", "{entry}");
    // The blocked entry is in the history like any other, and ExecutionStatus shows it.
    let id = entry["executionTrackingId"].as_str().unwrap().to_string();
    assert_eq!(server.status(&id), entry);

    release(&server, &running);
    // With the places free again the action runs.
    assert_not_blocked(&run_released(&server, "pair"));
}

#[test]
fn max_concurrent_executions_blocks_across_actions_and_names_the_limit() {
    let mut config = config_with(vec![gated("a", 5), gated("b", 5), gated("c", 5)]);
    config["maxConcurrentExecutions"] = json!(2);
    let server = Server::start(config);
    let running = vec![server.start_action("a"), server.start_action("b")];
    for id in &running {
        server.wait_started(id);
    }
    // `c` has never run, and `a` still has room under its own maxConcurrent: only the
    // service-wide limit can refuse either.
    for action in ["c", "a"] {
        let entry = server.run(action);
        let reason = assert_blocked(&entry);
        assert!(
            reason.contains("maxConcurrentExecutions"),
            "{action}: the reason names the wrong limit: {reason:?}"
        );
        assert!(
            reason.contains('2'),
            "the reason gives the limit: {reason:?}"
        );
    }
    release(&server, &running);
    assert_not_blocked(&run_released(&server, "c"));
}

#[test]
fn max_rate_blocks_starts_beyond_the_window_and_lets_them_through_once_it_passes() {
    let mut action = shell_action("paced", "echo paced");
    // maxConcurrent high enough that only the rate can refuse a start.
    action["maxConcurrent"] = json!(10);
    action["maxRate"] = json!([{"limit": 3, "duration": "5s"}]);
    let server = Server::start(config_with(vec![action]));

    let first = Instant::now();
    for i in 0..3 {
        let entry = server.run("paced");
        assert_not_blocked(&entry);
        assert_eq!(entry["stdout"], "paced\n", "run {i}: {entry}");
    }
    // Three quick runs take far less than the window, even on a loaded machine (a second
    // each would still leave room); if they did not, the next start is legitimately allowed
    // and the test proves nothing.
    assert!(
        first.elapsed() < Duration::from_millis(3500),
        "three runs took {:?}: too slow to test a 5 s window",
        first.elapsed()
    );
    let entry = server.run("paced");
    let reason = assert_blocked(&entry);
    assert!(
        reason.contains("maxRate"),
        "the reason names the wrong limit: {reason:?}"
    );
    assert!(
        reason.contains('3'),
        "the reason gives the limit: {reason:?}"
    );
    // A blocked start does not count as a run: a second refusal says the same, and once
    // the window has passed the action runs although blocked starts happened inside it (the
    // polling below adds more).
    assert_blocked(&server.run("paced"));
    let entry = poll_every(Duration::from_millis(200), SOON, || {
        let entry = server.run("paced");
        (entry["blocked"] == false).then_some(entry)
    })
    .expect("still blocked long after the window");
    assert!(
        first.elapsed() >= Duration::from_secs(5),
        "ran again {:?} after the first run, inside the 5 s window",
        first.elapsed()
    );
    assert_not_blocked(&entry);
    assert_eq!(entry["exitCode"], 0, "{entry}");
}

// ---------------------------------------------------------------------------------------
// Two starts racing for the last place

/// Starts `actions[0]` and `actions[1]` at the same moment from two threads; returns both
/// tracking ids in that order.
fn race(server: &Server, actions: [&str; 2]) -> [String; 2] {
    let calls = actions
        .iter()
        .map(|action| {
            let body = json!({"actionId": action}).to_string();
            let req = Request::connect("StartAction", body.as_bytes());
            (Conn::open(server.addr), req)
        })
        .collect();
    let ids: Vec<String> = send_together(calls).iter().map(started_id).collect();
    [ids[0].clone(), ids[1].clone()]
}

/// Races two starts `rounds` times, with `setup` filling all but one place first; asserts
/// that each time exactly one of them runs and the other is blocked by `limit`.
fn race_rounds(
    server: &Server,
    rounds: usize,
    limit: &str,
    setup: impl Fn(&Server) -> Vec<String>,
    actions: impl Fn(usize) -> [String; 2],
) {
    let mut wins = [0usize; 2];
    for round in 0..rounds {
        let holders = setup(server);
        let names = actions(round);
        let ids = race(server, [&names[0], &names[1]]);
        let entries: Vec<Value> = ids.iter().map(|id| server.status(id)).collect();
        let blocked: Vec<bool> = entries.iter().map(|e| e["blocked"] == true).collect();
        assert!(
            blocked[0] != blocked[1],
            "round {round}: exactly one of two simultaneous starts may run for the last place \
             of {limit}; blocked = {blocked:?}:\n{}\n{}",
            entries[0],
            entries[1]
        );
        let (winner, loser) = if blocked[0] { (1, 0) } else { (0, 1) };
        wins[winner] += 1;
        let reason = assert_blocked(&entries[loser]);
        assert!(
            reason.contains(limit),
            "round {round}: blocked for another reason than {limit}: {reason:?}"
        );
        let mut finished = holders;
        finished.push(ids[winner].clone());
        release(server, &finished);
    }
    // Not an assertion (either thread may win every time); it shows the race was real.
    eprintln!("{limit}: {rounds} rounds, wins by caller {wins:?}");
}

#[test]
fn two_starts_racing_for_the_last_max_concurrent_place_never_both_run() {
    let server = Server::start(config_with(vec![gated("solo", 1)]));
    race_rounds(
        &server,
        30,
        "maxConcurrent",
        |_| Vec::new(),
        |_| ["solo".to_string(), "solo".to_string()],
    );
}

#[test]
fn two_starts_racing_for_the_last_execution_slot_never_both_run() {
    // Two slots service-wide; one is taken before each round, so two different actions
    // (each with room under its own maxConcurrent) race for the other.
    let mut config = config_with(vec![gated("holder", 1), gated("x", 5), gated("y", 5)]);
    config["maxConcurrentExecutions"] = json!(2);
    let server = Server::start(config);
    race_rounds(
        &server,
        30,
        "maxConcurrentExecutions",
        |server| {
            let id = server.start_action("holder");
            server.wait_started(&id);
            vec![id]
        },
        |_| ["x".to_string(), "y".to_string()],
    );
}

#[test]
fn two_starts_racing_for_the_last_max_rate_place_never_both_run() {
    // One action per round, each allowing one start per second, so no round waits for a
    // window to pass; maxConcurrent is high so that only the rate decides.
    const ROUNDS: usize = 20;
    let actions: Vec<Value> = (0..ROUNDS)
        .map(|i| {
            let mut action = gated(&format!("rate{i}"), 10);
            action["maxRate"] = json!([{"limit": 1, "duration": "1s"}]);
            action
        })
        .collect();
    let server = Server::start(config_with(actions));
    race_rounds(
        &server,
        ROUNDS,
        "maxRate",
        |_| Vec::new(),
        |round| [format!("rate{round}"), format!("rate{round}")],
    );
}

// ---------------------------------------------------------------------------------------
// Blocked runs cannot erase the history

/// alice may do anything; bob and the token may only start `busy`.
fn audit_config(quick_title: &str) -> Value {
    crate::live_permissions::with_identities(json!({
        "logHistoryLimit": 5,
        "defaultPermissions": {"view": false, "exec": false, "logs": false, "kill": false},
        "accessControlLists": [
            {"name": "admins", "matchUsergroups": ["admins"], "addToEveryAction": true,
             "permissions": {"view": true, "exec": true, "logs": true, "kill": true}},
            {"name": "pressers", "matchUsergroups": ["users", "automation"],
             "permissions": {"view": true, "exec": true}},
        ],
        "actions": [
            {"id": "busy", "title": "Busy", "shell": GATED, "maxConcurrent": 1,
             "acls": ["pressers"]},
            {"id": "quick", "title": quick_title, "shell": "echo hi"},
        ],
    }))
}

#[test]
fn blocked_runs_never_push_real_runs_out_of_the_history() {
    use crate::live_permissions::Board;
    let board = Board::start(audit_config("Quick"));
    let alice = &board.alice;
    let mut real: Vec<String> = (0..3)
        .map(|_| {
            let entry = board.ok(alice, "StartActionAndWait", json!({"actionId": "quick"}));
            entry["logEntry"]["executionTrackingId"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let busy = board.ok(alice, "StartAction", json!({"actionId": "busy"}));
    real.push(busy["executionTrackingId"].as_str().unwrap().to_string());
    board.reload(&audit_config("Quick again"));

    // Bob and the token press the busy button far more often than the history holds.
    let before = board.server.log_count("user=bob");
    for i in 0..120 {
        let who = if i % 4 == 0 { &board.token } else { &board.bob };
        let reply = board.ok(who, "StartAction", json!({"actionId": "busy"}));
        assert!(reply["executionTrackingId"].is_string(), "{reply}");
    }
    // The blocked runs' log lines name who pressed, and the flood costs a handful of them
    // (the rest are counted, not written: see hostile_clients).
    assert!(
        wait_until(SOON, || board.server.log_count("user=bob") > before),
        "the blocked runs' log lines do not name the user"
    );
    let lines = board.server.log_count("blocked: ");
    assert!(lines <= 10, "{lines} lines about 120 blocked presses");
    for id in &real {
        let status = board.call(alice, "ExecutionStatus", json!({"executionTrackingId": id}));
        assert_eq!(status.status, 200, "{id} was evicted: {}", status.text());
    }
    let logs = board.ok(alice, "GetLogs", json!({"startOffset": 0}));
    let shown = logs["logs"].as_array().unwrap().len() as u64;
    let total = shown + logs["countRemaining"].as_u64().unwrap_or(0);
    assert!(total <= 5 + 32, "the blocked runs are not bounded: {total}");
    assert!(total >= 5, "{logs}");

    std::fs::write(board.server.path("go"), "").expect("write go");
    let entry = crate::live_permissions::finished(&board, alice, &real[3]);
    assert_eq!(entry["exitCode"], 0, "{entry}");
}
