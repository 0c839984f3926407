//! Home Assistant through MQTT, against a real broker (Debian's mosquitto, started by each
//! test on a free loopback port) and its command-line clients: the discovery payloads and
//! the keys Home Assistant requires, presses as the `runAs` caller, an event per finish, a
//! blocked press that leaves the last outcome, a flood of presses that keeps another
//! action's last run, a refused press leaving no trace, reloads, the
//! last will, a broker restart in the middle of a run, and a fleet of boards on one broker.
//! (Home Assistant itself reads these in `tests/homeassistant`.) These are `#[ignore]`d because a fresh clone need not have
//! mosquitto; `scripts/test.sh` installs it and runs them by name (`-- --ignored mqtt::`).
//!
//! The two tests at the end need no broker and always run: a broker that never answers, or
//! refuses, holds nothing but the MQTT client.

use std::net::TcpListener;
use std::time::Duration;

use serde_json::{Value, json};

use crate::broker::{Broker, write_file};

mod bridge;
mod moved;
mod planted;
use crate::harness::{
    GATED, Server, TempDir, UNTIL_STOPPED, poll_every, repeat_for, to_yaml, wait_until,
};

/// Long enough for a reconnection after the backoff has grown a few steps.
const WAIT: Duration = Duration::from_secs(30);

/// A config for a board named `node` on `broker`, with `extra` merged into the `mqtt`
/// section and `rest` into the top level.
fn board(broker: &Broker, node: &str, extra: Value, rest: Value) -> Value {
    let mut mqtt = json!({"broker": broker.url(), "nodeId": node});
    merge(&mut mqtt, extra);
    let mut config = json!({"killGracePeriod": 1, "mqtt": mqtt});
    merge(&mut config, rest);
    config
}

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, from) {
        a.extend(b);
    }
}

fn availability(node: &str) -> String {
    format!("actiond/{node}/availability")
}

fn state_topic(node: &str, binding: &str) -> String {
    format!("actiond/{node}/{binding}/state")
}

fn press_topic(node: &str, binding: &str) -> String {
    format!("actiond/{node}/{binding}/press")
}

fn event_topic(node: &str, binding: &str) -> String {
    format!("actiond/{node}/{binding}/event")
}

fn config_topic(component: &str, node: &str, binding: &str) -> String {
    format!("homeassistant/{component}/{node}/{binding}/config")
}

fn parse(payload: &str) -> Value {
    serde_json::from_str(payload).unwrap_or_else(|e| panic!("not JSON ({e}): {payload}"))
}

/// Waits until the board's retained availability is `online`.
fn wait_online(broker: &Broker, node: &str) {
    broker.wait_retained(&availability(node), WAIT, |p| p == "online");
}

fn logs(server: &Server) -> Vec<Value> {
    let reply = server.ok("GetLogs", json!({"startOffset": 0}));
    reply["logs"].as_array().cloned().unwrap_or_default()
}

/// The keys Home Assistant documents as required for each component, and what a discovered
/// entity needs to join its device and follow availability.
fn assert_home_assistant_keys(topic: &str, payload: &Value, node: &str) {
    let component = topic.split('/').nth(1).unwrap();
    let required: &[&str] = match component {
        "button" => &["command_topic"],
        "sensor" | "binary_sensor" | "event" => &["state_topic"],
        other => panic!("{topic}: unexpected component {other}"),
    };
    for key in required
        .iter()
        .chain(&["unique_id", "name", "availability_topic"])
    {
        assert!(
            payload[*key].is_string(),
            "{topic}: {key} missing in {payload}"
        );
    }
    assert_eq!(
        payload["device"]["identifiers"],
        json!([format!("actiond_{node}")]),
        "{topic}"
    );
    assert_eq!(payload["device"]["name"], node);
    assert_eq!(payload["availability_topic"], availability(node));
    assert_eq!(payload["payload_available"], "online");
    assert_eq!(payload["payload_not_available"], "offline");
    let unique = payload["unique_id"].as_str().unwrap();
    assert!(
        unique
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
        "{unique}"
    );
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn discovery_announces_one_device_with_home_assistants_keys() {
    let broker = Broker::start_with_user("actiond", "s3cret");
    let secrets = TempDir::new();
    let password = write_file(secrets.path(), "mqtt.secret", "s3cret\n");
    let servers = write_file(
        secrets.path(),
        "servers.yaml",
        "- {id: a, name: Alpha}\n- {id: b, name: Beta}\n",
    );
    let watcher = broker.subscribe("#");
    let config = board(
        &broker,
        "board-a",
        json!({"username": "actiond", "passwordFile": password}),
        json!({
            "entities": [{"file": servers, "name": "server"}],
            "actions": [
                {"id": "door", "title": "Garage door", "shell": "true"},
                {"id": "hidden", "title": "Hidden", "shell": "true", "hidden": true},
                {"id": "needsInput", "title": "Needs input", "shell": "echo {{ n }}",
                 "arguments": [{"name": "n", "type": "int"}]},
                {"id": "ping", "title": "Ping {{ .CurrentEntity.name }}", "shell": "true",
                 "entity": "server"},
            ],
        }),
    );
    let server = Server::start(config);
    wait_online(&broker, "board-a");

    let retained = broker.retained("homeassistant/#");
    let topics: Vec<&str> = retained.iter().map(|(t, _)| t.as_str()).collect();
    let mut want = Vec::new();
    for b in ["door", "ping-a", "ping-b"] {
        want.push(config_topic("button", "board-a", b));
    }
    for b in ["door", "hidden", "needsInput", "ping-a", "ping-b"] {
        want.push(config_topic("sensor", "board-a", b));
        want.push(config_topic(
            "sensor",
            "board-a",
            &format!("{b}_last_finished"),
        ));
        want.push(config_topic("binary_sensor", "board-a", b));
        want.push(config_topic("event", "board-a", b));
    }
    want.sort();
    assert_eq!(topics, want);
    for (topic, payload) in &retained {
        assert_home_assistant_keys(topic, &parse(payload), "board-a");
    }
    let button = parse(
        &broker
            .retained_one(&config_topic("button", "board-a", "ping-b"))
            .unwrap(),
    );
    assert_eq!(button["name"], "Ping Beta");
    assert_eq!(button["command_topic"], press_topic("board-a", "ping-b"));
    assert_eq!(button["payload_press"], "PRESS");
    let sensor = parse(
        &broker
            .retained_one(&config_topic("sensor", "board-a", "door"))
            .unwrap(),
    );
    assert_eq!(sensor["state_topic"], state_topic("board-a", "door"));
    assert_eq!(
        sensor["json_attributes_topic"],
        state_topic("board-a", "door")
    );
    let state = parse(
        &broker
            .retained_one(&state_topic("board-a", "door"))
            .unwrap(),
    );
    assert_eq!(state["state"], "never_run");
    assert_eq!(state["running"], false);

    // `online` comes after the configs and states, so Home Assistant never shows a board
    // as available with half of its entities.
    let seen = watcher.messages();
    let online = seen
        .iter()
        .position(|m| m.topic == availability("board-a") && m.payload == "online")
        .expect("online seen live");
    let last_config = seen
        .iter()
        .rposition(|m| m.topic.starts_with("homeassistant/"))
        .unwrap();
    assert!(last_config < online, "online before the last config");

    // A wrong password is refused by the broker and said once, however often it retries.
    let wrong = write_file(secrets.path(), "wrong.secret", "nope\n");
    let other = Server::start(board(
        &broker,
        "board-b",
        json!({"username": "actiond", "passwordFile": wrong}),
        json!({"actions": [{"id": "x", "shell": "true"}]}),
    ));
    // (mosquitto answers a wrong password with "not authorized", code 5, not code 4.)
    assert!(wait_until(WAIT, || other.log_contains("MQTT: cannot connect")));
    assert!(wait_until(WAIT, || other.log_contains("not authorized")
        || other.log_contains("username or password")));
    // That it is said once however often the client retries is timed on the virtual clock
    // (tests/virtual_clock.rs).
    assert_eq!(other.log_count("MQTT: cannot connect"), 1, "logged once");
    assert!(broker.retained_one(&availability("board-b")).is_none());

    // Home Assistant's birth message (it restarted) brings the discovery again, live. It is
    // obeyed at most every few seconds, so it is repeated until it is.
    let again = broker.subscribe("homeassistant/button/#");
    let door = config_topic("button", "board-a", "door");
    let discovered = poll_every(Duration::from_millis(500), WAIT, || {
        if again.on(&door).iter().any(|m| !m.retain) {
            return Some(());
        }
        broker.publish("homeassistant/status", "online", false);
        None
    });
    assert!(discovered.is_some(), "no discovery after the birth message");
    assert!(server.log_shows("Home Assistant came online"));
    drop(server);
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_press_runs_as_the_run_as_caller_and_the_state_follows_every_run() {
    let broker = Broker::start();
    let watcher = broker.subscribe("actiond/#");
    let server = Server::start(board(
        &broker,
        "garage",
        json!({"runAs": {"username": "door-bot", "usergroup": "automation"}}),
        json!({
            "defaultPermissions": {"view": false, "exec": false, "logs": false, "kill": false},
            "accessControlLists": [
                {"name": "auto", "matchUsergroups": ["automation"], "addToEveryAction": true,
                 "permissions": {"exec": true, "logs": true}},
                {"name": "guests", "matchUsergroups": ["guest"], "addToEveryAction": true,
                 "permissions": {"view": true, "exec": true, "logs": true}},
            ],
            "actions": [{"id": "door", "title": "Door",
                         "shell": format!("echo \"by $ACTIOND_USER\"; {GATED}")}],
        }),
    ));
    wait_online(&broker, "garage");
    let state = state_topic("garage", "door");
    broker.publish(&press_topic("garage", "door"), "PRESS", false);
    // While the first run runs, the last outcome is still that it never ran.
    let running = watcher.wait_for(&state, WAIT, |m| m.json()["running"] == true);
    let r = running.json();
    assert_eq!(r["state"], "never_run");
    assert!(r["attributes"]["exit_code"].is_null());

    std::fs::write(server.path("go"), "").unwrap();
    let done = watcher.wait_for(&state, WAIT, |m| m.json()["state"] == "succeeded");
    let d = done.json();
    assert_eq!(d["running"], false);
    assert_eq!(d["attributes"]["exit_code"], 0);
    assert_eq!(d["attributes"]["user"], "door-bot");
    assert_eq!(d["attributes"]["output"], "by door-bot\n");
    // Times in ISO 8601 with the offset: 2026-11-27T21:45:09+00:00.
    for key in ["started", "finished"] {
        let t = d["attributes"][key].as_str().unwrap();
        assert_eq!(t.len(), 25, "{key}: {t}");
        assert_eq!(&t[10..11], "T", "{key}: {t}");
        assert!(matches!(&t[19..20], "+" | "-"), "{key}: {t}");
    }
    assert!(
        d["attributes"]["duration"]
            .as_f64()
            .is_some_and(|s| s >= 0.0)
    );
    // And one event for the finish, not retained.
    let event = watcher.wait_for(&event_topic("garage", "door"), WAIT, |_| true);
    assert!(!event.retain);
    let e = event.json();
    assert_eq!(e["event_type"], "succeeded");
    assert_eq!(e["exit_code"], 0);
    assert_eq!(e["user"], "door-bot");
    assert_eq!(e["finished"], d["attributes"]["finished"]);
    assert_eq!(
        broker.retained_one(&state).map(|p| parse(&p)),
        Some(d.clone())
    );

    // The engine recorded it like any run, as the runAs caller.
    let entries = logs(&server);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["user"], "door-bot");
    assert_eq!(entries[0]["userClass"], "automation");
    let tracking = entries[0]["executionTrackingId"].clone();
    assert_eq!(d["attributes"]["tracking_id"], tracking);

    // A run started elsewhere (the API, as the guest) is published too.
    let entry = server.run("door");
    assert_eq!(entry["exitCode"], 0);
    watcher.wait_for(&state, WAIT, |m| {
        let j = m.json();
        j["attributes"]["user"] == "guest" && j["state"] == "succeeded"
    });
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_blocked_press_keeps_the_last_outcome_and_every_finish_is_an_event() {
    let broker = Broker::start();
    let watcher = broker.subscribe("actiond/#");
    let server = Server::start(board(
        &broker,
        "barn",
        json!({}),
        json!({"actions": [{"id": "gate", "title": "Gate",
                            "shell": format!("{GATED}; rm -f go")}]}),
    ));
    wait_online(&broker, "barn");
    let state = state_topic("barn", "gate");
    let events = event_topic("barn", "gate");
    let press = || broker.publish(&press_topic("barn", "gate"), "PRESS", false);
    let go = || std::fs::write(server.path("go"), "").unwrap();
    // Two identical runs: two events, though the state says "succeeded" throughout.
    for n in 1..=2 {
        press();
        broker.wait_retained(&state, WAIT, |p| parse(p)["running"] == true);
        go();
        assert!(wait_until(WAIT, || watcher.on(&events).len() == n));
    }
    let first = parse(&broker.retained_one(&state).unwrap());
    assert_eq!(first["state"], "succeeded");
    let ids: Vec<Value> = watcher
        .on(&events)
        .iter()
        .map(|m| m.json()["tracking_id"].clone())
        .collect();
    assert_ne!(ids[0], ids[1]);
    assert_eq!(first["attributes"]["tracking_id"], ids[1]);

    // A run, then a press while it runs: blocked. The state keeps the last real outcome,
    // and the blocked press is an event of its own.
    press();
    broker.wait_retained(&state, WAIT, |p| parse(p)["running"] == true);
    press();
    assert!(wait_until(WAIT, || watcher.on(&events).len() == 3));
    let blocked = watcher.on(&events)[2].json();
    assert_eq!(blocked["event_type"], "blocked");
    assert!(blocked["duration"].is_null());
    let during = parse(&broker.retained_one(&state).unwrap());
    assert_eq!(during["state"], "succeeded");
    assert_eq!(during["running"], true);
    assert_eq!(during["attributes"]["tracking_id"], ids[1]);
    let states = watcher.on(&state);
    assert!(
        states.iter().all(|m| m.json()["state"] != "blocked"),
        "{states:?}"
    );
    go();
    // (The watcher holds every state since the start: the new run's is the one with a
    // tracking id not seen before.)
    let after = watcher.wait_for(&state, WAIT, |m| {
        let id = &m.json()["attributes"]["tracking_id"];
        m.json()["running"] == false && id.is_string() && !ids.contains(id)
    });
    assert_eq!(after.json()["state"], "succeeded");
    assert!(wait_until(WAIT, || watcher.on(&events).len() == 4));
    let last = watcher.on(&events)[3].json();
    assert_eq!(last["event_type"], "succeeded");
    assert_eq!(
        last["tracking_id"],
        after.json()["attributes"]["tracking_id"]
    );
    // No event is retained: Home Assistant would ignore it, and the broker replay it.
    assert!(broker.retained_one(&events).is_none());
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_burst_of_runs_leaves_the_state_of_the_last_one() {
    // Far more events than a stream subscriber's queue holds (the smallest allowed): the MQTT
    // client is not such a subscriber, coalesces what it sees and reads the state from the
    // engine, so the retained state is the last run's whatever the burst.
    let broker = Broker::start();
    let server = Server::start(board(
        &broker,
        "burst",
        json!({}),
        json!({"eventQueueLength": 16, "actions": [{"id": "n", "shell": "echo $ACTIOND_TRACKING_ID"}]}),
    ));
    wait_online(&broker, "burst");
    let mut last = Value::Null;
    for _ in 0..40 {
        last = server.run("n")["executionTrackingId"].clone();
    }
    let state = broker.wait_retained(&state_topic("burst", "n"), WAIT, |p| {
        parse(p)["attributes"]["tracking_id"] == last
    });
    let state = parse(&state);
    assert_eq!(state["state"], "succeeded");
    assert_eq!(state["running"], false);
    assert_eq!(
        state["attributes"]["output"],
        format!("{}\n", last.as_str().unwrap())
    );
}

/// Any client of the broker pressing a cheap action in a loop takes that action's own older
/// runs out of the history, never another action's last run: in memory, in the history file
/// and after a restart.
#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_flood_of_presses_keeps_another_actions_last_run() {
    const LIMIT: usize = 10;
    const PRESSES: usize = 80;
    let broker = Broker::start();
    let state = TempDir::new();
    let config = board(
        &broker,
        "flood",
        json!({}),
        json!({
            "stateDirectory": state.path(),
            "logHistoryLimit": LIMIT,
            "logHistoryPageSize": 1000,
            "maxConcurrentExecutions": 64,
            "prometheus": {"enabled": true},
            "actions": [
                {"id": "guarded", "shell": "true"},
                {"id": "status", "shell": "true", "maxConcurrent": 64},
            ],
        }),
    );
    let server = Server::start(config.clone());
    wait_online(&broker, "flood");
    let alice = server.run("guarded")["executionTrackingId"].clone();
    broker.publish_many(&press_topic("flood", "status"), "PRESS", PRESSES);
    // Every press has ended, run or blocked (when more than 64 ran at once).
    assert!(
        wait_until(WAIT, || {
            let resp = crate::client::send(server.addr, &crate::client::Request::get("/metrics"));
            let ended: usize = resp
                .text()
                .lines()
                .filter(|l| l.starts_with("actiond_executions_total{action=\"status\""))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<usize>().ok())
                .sum();
            ended == PRESSES
        }),
        "the {PRESSES} presses never all ended"
    );
    // The runs that ran (blocked ones have a ring of their own).
    let kept = |server: &Server| {
        let ran: Vec<Value> = logs(server)
            .into_iter()
            .filter(|e| e["blocked"] != true)
            .map(|e| e["executionTrackingId"].clone())
            .collect();
        assert_eq!(ran.len(), LIMIT, "{ran:?}");
        ran
    };
    let before = kept(&server);
    assert_eq!(before.last(), Some(&alice), "{before:?}");
    let file = std::fs::read_to_string(state.path().join("history.jsonl")).expect("history");
    assert!(
        file.contains(alice.as_str().unwrap()),
        "the file lost the run"
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
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_denied_or_retained_press_is_refused_and_recorded_nowhere() {
    let broker = Broker::start();
    // Left on the broker before the board starts: it must not press at connection.
    broker.publish(&press_topic("lab", "allowed"), "PRESS", true);
    let server = Server::start(board(
        &broker,
        "lab",
        json!({}),
        json!({
            "defaultPermissions": {"view": false, "exec": false, "logs": false, "kill": false},
            "accessControlLists": [
                {"name": "mqtt-runs", "matchUsernames": ["mqtt"],
                 "permissions": {"exec": true, "logs": true}},
                {"name": "guests", "matchUsergroups": ["guest"], "addToEveryAction": true,
                 "permissions": {"view": true, "logs": true}},
            ],
            "actions": [
                {"id": "allowed", "shell": "touch allowed-ran", "acls": ["mqtt-runs"]},
                {"id": "denied", "shell": "touch denied-ran"},
            ],
        }),
    ));
    wait_online(&broker, "lab");
    // The denied action is not announced at all: the runAs caller may neither run it nor
    // read it.
    let configs = broker.retained("homeassistant/#");
    assert!(
        configs.iter().all(|(t, _)| !t.contains("/denied/")),
        "{configs:?}"
    );
    assert!(
        configs
            .iter()
            .any(|(t, _)| t.contains("/button/lab/allowed/"))
    );

    // The retained press the broker replayed at the subscription is deleted from it.
    assert!(wait_until(WAIT, || broker
        .retained_one(&press_topic("lab", "allowed"))
        .is_none()));
    broker.publish(&press_topic("lab", "denied"), "PRESS", false);
    // An empty retained message (a deletion, as actiond sends): nothing to say about that.
    broker.publish(&press_topic("lab", "allowed"), "", true);
    broker.publish(&press_topic("lab", "allowed"), "not a press", false);
    // Larger than any packet the client buffers: skipped as it streams in, and the
    // connection goes on.
    broker.publish(&press_topic("lab", "allowed"), &"P".repeat(100_000), false);
    broker.publish(&press_topic("lab", "allowed"), "PRESS", false);
    assert!(wait_until(WAIT, || server.path("allowed-ran").exists()));
    assert!(wait_until(WAIT, || server.log_contains("refused a press of denied")));
    assert!(server.log_shows("ignored a retained press of allowed"));
    assert!(server.log_shows("the payload is not PRESS"));
    // One line about a payload: the "not a press", not the empty message before it.
    assert_eq!(server.log_count("the payload is not PRESS"), 1);
    assert!(
        broker
            .retained_one(&press_topic("lab", "allowed"))
            .is_none()
    );
    assert!(server.log_shows("skipped a message of 100"));
    assert_eq!(
        server.log_count("MQTT: connected"),
        1,
        "the big message broke nothing"
    );
    let entries = logs(&server);
    assert_eq!(
        entries.len(),
        1,
        "only the live press of allowed: {entries:?}"
    );
    assert_eq!(entries[0]["actionId"], "allowed");
    assert!(!server.path("denied-ran").exists());
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn reloads_republish_changes_and_empty_what_was_removed() {
    let broker = Broker::start();
    let actions = |ids: &[(&str, &str)]| -> Value {
        json!({"actions": ids.iter().map(|(id, title)| json!({"id": id, "title": title, "shell": "true"})).collect::<Vec<_>>()})
    };
    let server = Server::start(board(
        &broker,
        "hall",
        json!({}),
        actions(&[("a", "Lamp"), ("b", "Fan")]),
    ));
    wait_online(&broker, "hall");
    assert!(
        broker
            .retained_one(&config_topic("button", "hall", "b"))
            .is_some()
    );
    let watcher = broker.subscribe("#");

    let edited = board(&broker, "hall", json!({}), actions(&[("a", "Lamp 2")]));
    let path = server.path("config.yaml");
    let tmp = server.path("config.yaml.tmp");
    std::fs::write(&tmp, to_yaml(&edited)).unwrap();
    std::fs::rename(&tmp, &path).unwrap();

    for component in ["button", "sensor", "binary_sensor"] {
        watcher.wait_for(&config_topic(component, "hall", "b"), WAIT, |m| {
            m.payload.is_empty()
        });
    }
    watcher.wait_for(&state_topic("hall", "b"), WAIT, |m| m.payload.is_empty());
    // (The watcher first saw the retained config of before the reload.)
    watcher.wait_for(&config_topic("button", "hall", "a"), WAIT, |m| {
        !m.payload.is_empty() && m.json()["name"] == "Lamp 2"
    });
    let left: Vec<String> = broker
        .retained("#")
        .into_iter()
        .map(|(t, _)| t)
        .filter(|t| t.contains("/b/"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = server.stop();

    // An action removed while actiond was stopped: its retained messages are found on the
    // broker at the next start and emptied.
    let again = Server::start(board(
        &broker,
        "hall",
        json!({}),
        actions(&[("c", "Heater")]),
    ));
    wait_online(&broker, "hall");
    assert!(wait_until(WAIT, || {
        broker.retained("#").iter().all(|(t, _)| !t.contains("/a/"))
    }));
    assert!(
        broker
            .retained_one(&config_topic("button", "hall", "c"))
            .is_some()
    );
    drop(again);
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_stopped_board_says_offline_and_a_killed_one_by_its_last_will() {
    let broker = Broker::start();
    let config = board(
        &broker,
        "shed",
        json!({}),
        json!({"actions": [{"id": "x", "shell": "sleep 60"}]}),
    );
    let server = Server::start(config.clone());
    wait_online(&broker, "shed");
    // A run the shutdown kills: its last state is published before `offline`.
    server.start_action("x");
    broker.wait_retained(&state_topic("shed", "x"), WAIT, |p| {
        parse(p)["running"] == true
    });
    let watcher = broker.subscribe("actiond/shed/#");
    let _ = server.stop();
    assert_eq!(
        broker.retained_one(&availability("shed")).as_deref(),
        Some("offline")
    );
    let last = parse(&broker.retained_one(&state_topic("shed", "x")).unwrap());
    assert_eq!(last["state"], "killed");
    assert_eq!(last["running"], false);
    let seen = watcher.messages();
    let at = |want: &dyn Fn(&crate::broker::Message) -> bool| seen.iter().position(want);
    let killed = at(&|m| m.topic.ends_with("/x/state") && m.payload.contains("killed"));
    let offline = at(&|m| m.topic.ends_with("/availability") && m.payload == "offline");
    assert!(killed.is_some() && killed < offline, "{seen:?}");

    let server = Server::start(config);
    wait_online(&broker, "shed");
    server.signal(nix::sys::signal::Signal::SIGKILL);
    broker.wait_retained(&availability("shed"), WAIT, |p| p == "offline");
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_broker_restarting_mid_run_loses_no_state() {
    let mut broker = Broker::start();
    let server = Server::start(board(
        &broker,
        "cellar",
        json!({}),
        json!({"actions": [{"id": "pump", "title": "Pump", "shell": GATED}]}),
    ));
    wait_online(&broker, "cellar");
    let state = state_topic("cellar", "pump");
    let id = server.start_action("pump");
    broker.wait_retained(&state, WAIT, |p| parse(p)["running"] == true);

    // The broker dies, the run ends while it is away, and it comes back empty (it keeps no
    // retained messages on disk).
    broker.kill();
    std::fs::write(server.path("go"), "").unwrap();
    let entry = server.wait_finished(&id, WAIT);
    assert_eq!(entry["exitCode"], 0);
    broker.restart();

    let p = parse(&broker.wait_retained(&state, WAIT, |p| parse(p)["running"] == false));
    assert_eq!(p["state"], "succeeded");
    assert_eq!(p["running"], false);
    assert_eq!(p["attributes"]["tracking_id"], json!(id));
    wait_online(&broker, "cellar");
    assert!(
        broker
            .retained_one(&config_topic("button", "cellar", "pump"))
            .is_some()
    );
    assert_eq!(server.log_count("lost the connection"), 1);
    assert!(
        server.log_count("cannot connect") <= 1,
        "the outage is logged once"
    );
    assert_eq!(server.log_count("MQTT: connected"), 2);
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_fleet_of_three_boards_shares_one_broker_and_each_press_reaches_one_board() {
    let broker = Broker::start();
    let nodes = ["board-1", "board-2", "board-3"];
    let servers: Vec<Server> = nodes
        .iter()
        .map(|n| {
            Server::start(board(
                &broker,
                n,
                json!({}),
                json!({"actions": [{"id": "ring", "title": "Ring", "shell": "echo x >> pressed"}]}),
            ))
        })
        .collect();
    for n in nodes {
        wait_online(&broker, n);
    }
    let devices: std::collections::BTreeSet<String> = broker
        .retained("homeassistant/button/#")
        .iter()
        .map(|(_, p)| {
            parse(p)["device"]["identifiers"][0]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        devices.into_iter().collect::<Vec<_>>(),
        ["actiond_board-1", "actiond_board-2", "actiond_board-3"]
    );

    broker.publish(&press_topic("board-2", "ring"), "PRESS", false);
    broker.publish(&press_topic("board-3", "ring"), "PRESS", false);
    // Runs that have ended: a run is listed from its start, before its shell has written.
    let ran = |s: &Server| {
        logs(s)
            .iter()
            .filter(|e| e["executionFinished"] == true)
            .count()
    };
    assert!(wait_until(WAIT, || ran(&servers[1]) == 1 && ran(&servers[2]) == 1));
    broker.publish(&press_topic("board-3", "ring"), "PRESS", false);
    assert!(wait_until(WAIT, || ran(&servers[2]) == 2));
    assert_eq!(ran(&servers[0]), 0, "board-1 was never pressed");
    assert_eq!(ran(&servers[1]), 1);
    let lines = |s: &Server| {
        std::fs::read_to_string(s.path("pressed"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    assert_eq!(
        [lines(&servers[0]), lines(&servers[1]), lines(&servers[2])],
        [0, 1, 2]
    );
}

/// An entity file of `n` instances, each named `<prefix><i>`.
fn instances(n: usize, prefix: &str) -> String {
    (0..n)
        .map(|i| format!("- {{key: k{i}, name: {prefix}{i}, host: h{i}.lan}}\n"))
        .collect()
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_thousand_instances_are_announced_within_the_bounds_without_stalling_the_board() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    let broker = Broker::start();
    let files = TempDir::new();
    let servers = files.path().join("servers.yaml");
    std::fs::write(&servers, instances(1000, "n")).unwrap();
    // Four actions per instance, as a board managing many hosts has: 4,000 bindings, five
    // entities each, far over what one board announces.
    let actions: Vec<Value> = (0..4)
        .map(|a| {
            json!({"id": format!("do{a}"), "title": format!("Do{a} {{{{ .CurrentEntity.name }}}}"),
                   "entity": "server", "shell": "true"})
        })
        .collect();
    let config = board(
        &broker,
        "many",
        json!({}),
        json!({
            "entities": [{"file": servers.to_string_lossy(), "name": "server"}],
            "actions": actions,
        }),
    );
    let server = Server::start(config.clone());
    wait_online(&broker, "many");
    let configs = || broker.retained("homeassistant/#").len();
    // Five messages per binding: the bound is met exactly (2,000 is a multiple of 5).
    assert!(wait_until(WAIT, || configs() == 2000), "{}", configs());
    assert!(wait_until(WAIT, || server.log_contains(
        "3600 actions are not announced to Home Assistant"
    )));
    assert!(server.log_shows("left out: do0-k400, do0-k401"));

    // Every title changes: the 2,000 messages are published again while readiness is
    // polled, and each poll notes how many of them the broker has handed on so far.
    let watcher = Arc::new(broker.subscribe("homeassistant/#"));
    assert!(wait_until(WAIT, || watcher.messages().len() >= 2000));
    let before = watcher.messages().len();
    let stop = Arc::new(AtomicBool::new(false));
    let polls = Arc::new(Mutex::new(Vec::new()));
    let poller = {
        let (stop, polls, watcher, addr) =
            (stop.clone(), polls.clone(), watcher.clone(), server.addr);
        std::thread::spawn(move || {
            repeat_for(UNTIL_STOPPED, Duration::from_millis(5), || {
                let began = Instant::now();
                let resp =
                    crate::client::send(addr, &crate::client::Request::connect("GetReadyz", b"{}"));
                assert_eq!(resp.status, 200);
                let seen = watcher.messages().len();
                polls.lock().unwrap().push((began.elapsed(), seen));
                !stop.load(Ordering::SeqCst)
            })
        })
    };
    std::fs::write(&servers, instances(1000, "renamed")).unwrap();
    watcher.wait_for(&config_topic("button", "many", "do0-k399"), WAIT, |m| {
        m.payload.contains("Do0 renamed399")
    });
    assert!(wait_until(WAIT, || watcher.messages().len() >= before + 2000));
    // A few polls more, after the last message.
    let polled = polls.lock().unwrap().len();
    assert!(wait_until(WAIT, || polls.lock().unwrap().len() >= polled + 5));
    stop.store(true, Ordering::SeqCst);
    poller.join().unwrap();
    let polls = polls.lock().unwrap().clone();
    let slowest = polls.iter().map(|(took, _)| *took).max().unwrap();
    // Generous for a debug build on a busy machine: the stall this prevents was seconds.
    assert!(
        slowest < Duration::from_secs(3),
        "readiness took {slowest:?}"
    );
    // Polls that finished while the publish was under way: the board answered between
    // its chunks. (None are needed when the whole publish passed between two polls.)
    let during = polls
        .iter()
        .filter(|(_, seen)| *seen > before && *seen < before + 2000)
        .count();
    eprintln!(
        "{} polls, {during} during the publish, slowest {slowest:?}",
        polls.len()
    );
    assert!(!polls.is_empty());
    let after = watcher.messages();
    assert_eq!(
        after.len(),
        before + 2000,
        "only the changed messages, once each"
    );

    // A reload that changes nothing MQTT shows publishes nothing.
    let reloaded = server.log_count("config reloaded");
    let mut unrelated = config;
    unrelated["logHistoryLimit"] = json!(150);
    let tmp = server.path("config.yaml.tmp");
    std::fs::write(&tmp, to_yaml(&unrelated)).unwrap();
    std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
    assert!(wait_until(WAIT, || server.log_count("config reloaded") > reloaded));
    // Wall time: a publish that must not come has no event to wait for; the reload is
    // applied and published from one task, so 2 s is ample.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        watcher.messages().len(),
        after.len(),
        "a reload with no change republished"
    );
    assert_eq!(configs(), 2000);
}

// ---------------------------------------------------------------------------------------
// Without a broker: these always run.

/// A config whose broker is at `port` on loopback.
fn unreachable_board(port: u16) -> Value {
    json!({
        "killGracePeriod": 1,
        "mqtt": {"broker": format!("mqtt://127.0.0.1:{port}"), "nodeId": "lonely"},
        "actions": [{"id": "t", "shell": "true"}],
    })
}

#[test]
fn a_broker_that_never_answers_holds_only_the_mqtt_client() {
    // Accepts connections and never reads or writes: the client waits for its CONNACK.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let (done, held_until) = std::sync::mpsc::channel::<()>();
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for c in silent.incoming().take(1) {
            conns.push(c);
        }
        // Held, silent, until the test is done.
        let _ = held_until.recv();
        drop(conns);
    });
    let server = Server::start(unreachable_board(port));
    for _ in 0..20 {
        assert_eq!(server.run("t")["exitCode"], 0);
    }
    let (status, _) = server.call("GetReadyz", json!({}));
    assert_eq!(status, 200);
    let _ = done.send(());
    let _ = server.stop();
    let _ = held.join();
}

#[test]
fn a_refused_broker_is_logged_once_and_retried() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let server = Server::start(unreachable_board(port));
    assert!(wait_until(WAIT, || server.log_contains("MQTT: cannot connect")));
    // That retries (the backoff starts below a second) say nothing more is timed on the
    // virtual clock (tests/virtual_clock.rs).
    assert_eq!(server.log_count("MQTT: cannot connect"), 1);
    assert_eq!(server.run("t")["exitCode"], 0);
    let log = server.stop_and_log();
    assert!(!log.contains("MQTT: connected"));
}
