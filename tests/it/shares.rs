//! No caller can starve or erase another: the history and the pool of running executions are
//! shared out per caller (a user by name, a guest by its address, an IPv6 /64 together, MQTT
//! and each trigger). A guest pressing many different cheap actions lets its own older runs
//! go, never alice's, in memory and in the history file, across compactions and a restart; a
//! guest starting many slow actions takes at most its address's share of
//! `maxConcurrentExecutions`, and alice, and a guest of another address, still find a slot.
//! Other client addresses are loopback's own (127.0.0.0/8 is all loopback on Linux), so no
//! root is needed.

use std::net::{IpAddr, Ipv4Addr};

use serde_json::{Value, json};

use crate::client::{Request, Response, send_from};
use crate::harness::{GATED, SOON, Server, TempDir, assert_blocked, poll_until};
use crate::identity::{call_with, cookie};
use crate::live_permissions::{ALICE_PW, login, with_identities};

/// Guests may view, run and read runs of every action; alice (admins) may do anything.
fn board(state: &TempDir, actions: Vec<Value>) -> Value {
    with_identities(json!({
        "stateDirectory": state.path(),
        "logHistoryLimit": 20,
        "logHistoryPageSize": 1000,
        "defaultPermissions": {"view": true, "exec": true, "logs": true, "kill": false},
        "accessControlLists": [
            {"name": "admins", "matchUsergroups": ["admins"], "addToEveryAction": true,
             "permissions": {"view": true, "exec": true, "logs": true, "kill": true}},
        ],
        "actions": actions,
    }))
}

fn guest(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

/// A call as the guest from `from`.
fn from(server: &Server, from: IpAddr, op: &str, body: Value) -> Response {
    send_from(
        server.addr,
        from,
        &Request::connect(op, body.to_string().as_bytes()),
    )
}

/// A call as alice, which must succeed.
fn as_alice(server: &Server, alice: &str, op: &str, body: Value) -> Value {
    let resp = call_with(server, op, body.clone(), &[("Cookie", alice)]);
    assert_eq!(resp.status, 200, "{op} {body}: {}", resp.text());
    resp.json()
}

fn tracking_id(v: &Value) -> String {
    v["executionTrackingId"]
        .as_str()
        .unwrap_or_else(|| panic!("no tracking id: {v}"))
        .to_string()
}

// ---------------------------------------------------------------------------------------
// The history

fn history_actions() -> Vec<Value> {
    let mut actions = vec![json!({"id": "other", "title": "Other", "shell": "echo alice"})];
    actions.extend(
        (0..30)
            .map(|i| json!({"id": format!("q{i}"), "title": format!("Q{i}"), "shell": "echo q"})),
    );
    actions
}

/// The guest from 127.0.0.1 presses each of q0..q29 once, waiting for each run.
fn guest_presses_every_action(server: &Server) {
    for i in 0..30 {
        let resp = from(
            server,
            guest(1),
            "StartActionAndWait",
            json!({"actionId": format!("q{i}")}),
        );
        assert_eq!(resp.status, 200, "q{i}: {}", resp.text());
        assert_eq!(resp.json()["logEntry"]["exitCode"], 0, "q{i}");
    }
}

/// alice's run is still in the history, which holds its 20 runs.
fn assert_kept(server: &Server, alice: &str, id: &str, when: &str) {
    let status = call_with(
        server,
        "ExecutionStatus",
        json!({"executionTrackingId": id}),
        &[("Cookie", alice)],
    );
    assert_eq!(
        status.status,
        200,
        "{when}: alice's run is gone: {}",
        status.text()
    );
    assert_eq!(status.json()["logEntry"]["stdout"], "alice\n", "{when}");
    let logs = as_alice(server, alice, "GetLogs", json!({"startOffset": 0}));
    let shown = logs["logs"].as_array().expect("logs").len() as u64;
    let total = shown + logs["countRemaining"].as_u64().unwrap_or(0);
    assert_eq!(total, 20, "{when}: logHistoryLimit runs are kept");
}

#[test]
fn a_guest_pressing_many_actions_cannot_erase_alices_run_nor_after_a_restart() {
    let state = TempDir::new();
    let config = board(&state, history_actions());
    let server = Server::start(config.clone());
    let alice = cookie(&login(&server, "alice", ALICE_PW));
    let run = as_alice(
        &server,
        &alice,
        "StartActionAndWait",
        json!({"actionId": "other"}),
    );
    let id = tracking_id(&run["logEntry"]);
    // Two rounds of one press of each of 30 actions: 60 runs, and the file (rewritten once it
    // holds twice logHistoryLimit lines) compacted three times.
    guest_presses_every_action(&server);
    guest_presses_every_action(&server);
    assert_kept(&server, &alice, &id, "after 60 guest presses");
    let file = std::fs::read_to_string(state.path().join("history.jsonl")).expect("history");
    assert!(
        file.contains(&id),
        "alice's run is not in the file:\n{file}"
    );
    assert!(file.contains(r#""holder":"user:alice""#), "{file}");
    assert!(file.contains(r#""holder":"guest:127.0.0.1""#), "{file}");
    server.stop();

    // The file keeps whose each run is, so the restore lets the same runs go.
    let server = Server::start(config);
    let alice = cookie(&login(&server, "alice", ALICE_PW));
    assert_kept(&server, &alice, &id, "after a restart");
    guest_presses_every_action(&server);
    assert_kept(
        &server,
        &alice,
        &id,
        "after a restart and 30 more guest presses",
    );
}

// ---------------------------------------------------------------------------------------
// The pool of running executions

/// The entry of `id` once it runs or was blocked.
fn settled(server: &Server, alice: &str, id: &str) -> Value {
    poll_until(SOON, || {
        let entry = as_alice(
            server,
            alice,
            "ExecutionStatus",
            json!({"executionTrackingId": id}),
        )["logEntry"]
            .clone();
        (entry["executionStarted"] == true || entry["executionFinished"] == true).then_some(entry)
    })
    .unwrap_or_else(|| panic!("{id} neither ran nor was blocked"))
}

/// StartAction of `action` by the guest of `address`: the entry once it runs or was blocked.
fn guest_starts(server: &Server, alice: &str, address: IpAddr, action: &str) -> Value {
    let resp = from(server, address, "StartAction", json!({"actionId": action}));
    assert_eq!(resp.status, 200, "{action} from {address}: {}", resp.text());
    settled(server, alice, &tracking_id(&resp.json()))
}

fn alice_runs_other(server: &Server, alice: &str, when: &str) {
    let run = as_alice(
        server,
        alice,
        "StartActionAndWait",
        json!({"actionId": "other"}),
    );
    let entry = &run["logEntry"];
    assert_eq!(
        entry["blocked"], false,
        "{when}: alice was blocked: {entry}"
    );
    assert_eq!(entry["exitCode"], 0, "{when}: {entry}");
}

#[test]
fn a_guest_starting_many_slow_actions_leaves_alice_and_other_addresses_a_slot() {
    let state = TempDir::new();
    let mut actions: Vec<Value> = (0..16)
        .map(|i| json!({"id": format!("s{i}"), "title": format!("S{i}"), "shell": GATED}))
        .collect();
    actions.push(json!({"id": "other", "title": "Other", "shell": "echo alice"}));
    // The default maxConcurrentExecutions: 16.
    let server = Server::start(board(&state, actions));
    let alice = cookie(&login(&server, "alice", ALICE_PW));

    // One guest address presses each of 16 slow actions once: half the pool runs, the rest
    // is blocked, saying why.
    let mut ran = Vec::new();
    for i in 0..16 {
        let entry = guest_starts(&server, &alice, guest(1), &format!("s{i}"));
        if i < 8 {
            assert_eq!(entry["blocked"], false, "s{i}: {entry}");
            ran.push(tracking_id(&entry));
        } else {
            let reason = assert_blocked(&entry);
            assert!(
                reason.contains("8 executions of this caller are running, its share (8) of the 16"),
                "s{i}: {reason}"
            );
        }
    }
    alice_runs_other(&server, &alice, "beside one guest's 8 runs");

    // A guest of another address finds the room the first cannot take, up to the guests'
    // share; a third is then held off, and alice still runs.
    for i in 8..12 {
        let entry = guest_starts(&server, &alice, guest(2), &format!("s{i}"));
        assert_eq!(
            entry["blocked"], false,
            "s{i} from another address: {entry}"
        );
        ran.push(tracking_id(&entry));
    }
    let entry = guest_starts(&server, &alice, guest(3), "s12");
    let reason = assert_blocked(&entry);
    assert!(
        reason.contains("12 executions of guests are running, their share (12) of the 16"),
        "{reason}"
    );
    alice_runs_other(&server, &alice, "beside the guests' 12 runs");

    // Once the runs end, the first guest's slots come back.
    std::fs::write(server.path("go"), "").expect("write go");
    for id in &ran {
        server.wait_finished(id, SOON);
    }
    let entry = guest_starts(&server, &alice, guest(1), "s12");
    assert_eq!(entry["blocked"], false, "{entry}");
}
