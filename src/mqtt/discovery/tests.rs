//! Tables for the pure half of the MQTT client: topics, the entity set a caller gets, the
//! discovery payloads checked against Home Assistant's documented required keys, the diff
//! after a reload and the state payload.

use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::config::{Source, parse};
use crate::engine::Setup;
use crate::entities::EntitySet;
use crate::execution::Flags;
use crate::permissions::Provider;

fn setup(yaml: &str) -> Setup {
    let config = parse(yaml, Source::Embedded, "/".into(), &|_| None)
        .unwrap_or_else(|(e, _)| panic!("{e:?}"))
        .0;
    let mut entities = EntitySet::default();
    let file = crate::entities::parse("- {id: a, name: Alpha}\n- {id: b, name: Beta}\n", "s.yaml")
        .unwrap();
    entities.replace("server", file.instances);
    Setup::new(Arc::new(config), Arc::new(entities))
}

fn mqtt_caller() -> Caller {
    Caller {
        username: "mqtt".into(),
        usergroup: "automation".into(),
        provider: Provider::Mqtt,
        sid: None,
    }
}

const ACTIONS: &str = "
defaultPermissions: {view: false, exec: false, logs: false, kill: false}
accessControlLists:
  - {name: auto, matchUsergroups: [automation], addToEveryAction: true,
     permissions: {exec: true, logs: true}}
  - {name: logs-only, matchUsernames: [nobody-else], permissions: {logs: true}}
actions:
  - {id: plain, title: Plain, shell: 'true'}
  - {id: hidden, title: Hidden, shell: 'true', hidden: true}
  - id: defaulted
    title: Defaulted
    shell: 'echo {{ n }}'
    arguments: [{name: n, type: int, default: 3}]
  - id: required
    title: Required
    shell: 'echo {{ n }}'
    arguments: [{name: n, type: int}]
  - id: confirm
    title: Confirm
    shell: reboot
    arguments: [{name: sure, type: confirmation}]
  - {id: ping, title: 'Ping {{ .CurrentEntity.name }}', shell: 'true', entity: server}
";

#[test]
fn node_ids_from_hostnames() {
    let cases = [
        ("garage-pi", "garage-pi"),
        ("garage-pi.lan\n", "garage-pi_lan"),
        ("NAS 2", "NAS_2"),
        ("héllo", "h_llo"),
        ("", "actiond"),
        ("  \n", "actiond"),
    ];
    for (host, want) in cases {
        assert_eq!(node_id_from_hostname(host), want, "{host:?}");
        assert!(is_id(want));
    }
    assert_eq!(node_id_from_hostname(&"x".repeat(100)).len(), 64);
}

#[test]
fn topics_of_a_node() {
    let n = Node::new("homeassistant", "garage-pi");
    assert_eq!(n.client_id(), "actiond-garage-pi");
    assert_eq!(n.availability(), "actiond/garage-pi/availability");
    assert_eq!(n.press("door"), "actiond/garage-pi/door/press");
    assert_eq!(n.state("door"), "actiond/garage-pi/door/state");
    assert_eq!(
        n.config(Component::BinarySensor, "door"),
        "homeassistant/binary_sensor/garage-pi/door/config"
    );
    assert_eq!(
        n.filters(),
        [
            "actiond/garage-pi/+/press",
            "homeassistant/status",
            "homeassistant/+/garage-pi/+/config",
            "actiond/garage-pi/+/state",
        ]
    );
    let pressed = [
        ("actiond/garage-pi/door/press", Some("door")),
        ("actiond/garage-pi/ping-a_b/press", Some("ping-a_b")),
        ("actiond/other-pi/door/press", None),
        ("actiond/garage-pi/door/state", None),
        ("actiond/garage-pi/a/b/press", None),
        ("actiond/garage-pi//press", None),
        ("actiond/garage-pi/press", None),
        ("actiond/garage-pi-2/door/press", None),
        ("xactiond/garage-pi/door/press", None),
    ];
    for (topic, want) in pressed {
        assert_eq!(n.pressed(topic), want, "{topic}");
    }
    assert_eq!(n.state_of("actiond/garage-pi/door/state"), Some("door"));
    assert_eq!(n.state_of("actiond/garage-pi/door/press"), None);
    let configs = [
        ("homeassistant/button/garage-pi/door/config", true),
        ("homeassistant/sensor/garage-pi/door/config", true),
        ("homeassistant/button/other/door/config", false),
        ("homeassistant/button/garage-pi/door/state", false),
        ("homeassistant/button/garage-pi/a/b/config", false),
        ("other/button/garage-pi/door/config", false),
        ("homeassistant/status", false),
    ];
    for (topic, want) in configs {
        assert_eq!(n.is_config(topic), want, "{topic}");
    }
    // A prefix of several levels.
    let deep = Node::new("ha/disc", "n");
    assert!(deep.is_config("ha/disc/button/n/x/config"));
    assert!(!deep.is_config("ha/button/n/x/config"));
}

#[test]
fn entities_follow_the_permission_function_and_the_arguments() {
    let c = setup(ACTIONS);
    let got: Vec<(String, bool, bool)> = entities(&c, &mqtt_caller())
        .into_iter()
        .map(|e| (e.binding, e.button, e.state))
        .collect();
    let want = [
        ("plain", true, true),
        ("hidden", false, true),
        ("defaulted", true, true),
        ("required", false, true),
        ("confirm", false, true),
        ("ping-a", true, true),
        ("ping-b", true, true),
    ];
    let want: Vec<(String, bool, bool)> = want
        .iter()
        .map(|(b, x, s)| (b.to_string(), *x, *s))
        .collect();
    assert_eq!(got, want);
    // Entity titles are rendered per instance.
    let titles: Vec<String> = entities(&c, &mqtt_caller())
        .into_iter()
        .map(|e| e.title)
        .collect();
    assert!(titles.contains(&"Ping Beta".to_string()), "{titles:?}");
    // A disabled action (an error in the config) is offered neither as a button nor as a
    // state: it never runs.
    let broken = setup(&format!(
        "{ACTIONS}  - {{id: broken, title: Broken, shell: 'echo {{{{ nope }}}}'}}\n"
    ));
    assert!(
        broken
            .action("broken")
            .is_some_and(|a| a.disabled.is_some())
    );
    let ids: Vec<String> = entities(&broken, &mqtt_caller())
        .into_iter()
        .map(|e| e.binding)
        .collect();
    assert_eq!(ids.len(), want.len(), "{ids:?}");
    assert!(!ids.contains(&"broken".to_string()), "{ids:?}");
    // A caller no ACL names gets nothing: the defaults grant nothing.
    let mut stranger = mqtt_caller();
    stranger.usergroup = "other".into();
    assert!(entities(&c, &stranger).is_empty());
    // Logs without exec: states, no buttons.
    let mut reader = mqtt_caller();
    reader.username = "nobody-else".into();
    reader.usergroup = String::new();
    let c2 = setup(&ACTIONS.replace(
        "  - {id: plain, title: Plain, shell: 'true'}",
        "  - {id: plain, title: Plain, shell: 'true', acls: [logs-only]}",
    ));
    let e = entities(&c2, &reader);
    assert_eq!(e.len(), 1);
    assert_eq!(
        (e[0].binding.as_str(), e[0].button, e[0].state),
        ("plain", false, true)
    );
}

fn parsed(payload: &str) -> Value {
    serde_json::from_str(payload).expect("discovery payload is JSON")
}

/// The keys Home Assistant's MQTT documentation marks as required, or needs for a
/// discovered entity to belong to a device and follow availability.
fn assert_home_assistant_accepts(topic: &str, payload: &Value, node: &Node) {
    let component = topic.split('/').nth(1).unwrap();
    let required: &[&str] = match component {
        "button" => &["command_topic"],
        "sensor" | "binary_sensor" => &["state_topic"],
        other => panic!("unexpected component {other}"),
    };
    for key in required
        .iter()
        .chain(&["unique_id", "name", "device", "availability_topic"])
    {
        let v = payload
            .get(*key)
            .unwrap_or_else(|| panic!("{topic}: no {key}"));
        assert!(!v.is_null(), "{topic}: {key} is null");
    }
    // Topic levels and ids: HA's character class for discovery topics.
    let levels: Vec<&str> = topic.split('/').collect();
    assert_eq!(levels.len(), 5, "{topic}");
    assert!(is_id(levels[2]) && is_id(levels[3]), "{topic}");
    assert_eq!(levels[4], "config");
    let unique = payload["unique_id"].as_str().unwrap();
    assert!(is_id(unique), "{unique}");
    // At least one of identifiers or connections identifies the device.
    let ids = payload["device"]["identifiers"].as_array().unwrap();
    assert!(!ids.is_empty());
    assert_eq!(payload["device"]["name"], node.id());
    assert_eq!(payload["origin"]["name"], "actiond");
    assert_eq!(payload["availability_topic"], node.availability());
    assert_eq!(payload["payload_available"], ONLINE);
    assert_eq!(payload["payload_not_available"], OFFLINE);
    for (key, value) in payload.as_object().unwrap() {
        if key.ends_with("_topic") {
            let t = value.as_str().unwrap();
            assert!(!t.contains(['+', '#']) && !t.is_empty(), "{key}: {t}");
        }
    }
}

#[test]
fn discovery_payloads_carry_home_assistants_required_keys() {
    let node = Node::new("homeassistant", "garage-pi");
    let c = setup(ACTIONS);
    let all = configs(&node, &entities(&c, &mqtt_caller()));
    // 5 buttons (plain, defaulted, ping-a, ping-b... and not hidden, required, confirm)
    // plus a sensor and a binary sensor for each of the 7 bindings.
    assert_eq!(all.len(), 4 + 2 * 7);
    let mut unique_ids = BTreeSet::new();
    for (topic, payload) in &all {
        let p = parsed(payload);
        assert_home_assistant_accepts(topic, &p, &node);
        assert!(
            unique_ids.insert(p["unique_id"].as_str().unwrap().to_string()),
            "unique_id repeated: {topic}"
        );
    }
    let button = parsed(&all["homeassistant/button/garage-pi/plain/config"]);
    assert_eq!(button["command_topic"], "actiond/garage-pi/plain/press");
    assert_eq!(button["payload_press"], PRESS);
    assert_eq!(button["name"], "Plain");
    let sensor = parsed(&all["homeassistant/sensor/garage-pi/ping-b/config"]);
    assert_eq!(sensor["state_topic"], "actiond/garage-pi/ping-b/state");
    assert_eq!(sensor["json_attributes_topic"], sensor["state_topic"]);
    assert_eq!(sensor["name"], "Ping Beta last run");
    assert_eq!(sensor["device_class"], "enum");
    let running = parsed(&all["homeassistant/binary_sensor/garage-pi/plain/config"]);
    assert_eq!(running["device_class"], "running");
    assert_eq!(running["state_topic"], "actiond/garage-pi/plain/state");
    // One device for the whole board, the same in every payload.
    let devices: BTreeSet<String> = all
        .values()
        .map(|p| parsed(p)["device"].to_string())
        .collect();
    assert_eq!(devices.len(), 1, "{devices:?}");
    assert!(!all.contains_key("homeassistant/button/garage-pi/hidden/config"));
    assert!(!all.contains_key("homeassistant/button/garage-pi/confirm/config"));
}

#[test]
fn every_outcome_is_one_of_the_sensors_options() {
    for bits in 0..16u8 {
        for exit_code in [-1, 0, 1, 7] {
            let flags = Flags {
                execution_started: bits & 1 != 0,
                execution_finished: true,
                blocked: bits & 2 != 0,
                timed_out: bits & 4 != 0,
                exit_code,
            };
            let state = crate::metrics::outcome(&flags);
            assert!(STATES.contains(&state), "{state}");
        }
    }
}

#[test]
fn reload_diffs_republish_changes_and_empty_removed_configs() {
    let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(t, p)| (t.to_string(), p.to_string()))
            .collect()
    };
    type Pairs = &'static [(&'static str, &'static str)];
    let cases: &[(Pairs, Pairs, Pairs)] = &[
        (&[], &[], &[]),
        (&[("a", "1")], &[("a", "1")], &[]),
        (&[], &[("a", "1")], &[("a", "1")]),
        (&[("a", "1")], &[], &[("a", "")]),
        (&[("a", "1")], &[("a", "2")], &[("a", "2")]),
        (
            &[("a", "1"), ("b", "1"), ("c", "1")],
            &[("b", "1"), ("c", "2"), ("d", "1")],
            &[("a", ""), ("c", "2"), ("d", "1")],
        ),
    ];
    for (old, new, want) in cases {
        let got = diff(&map(old), &map(new));
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(t, p)| (t.to_string(), p.to_string()))
            .collect();
        assert_eq!(got, want, "{old:?} → {new:?}");
    }
    // A real reload: an action removed, a title changed, a permission taken away.
    let node = Node::new("homeassistant", "n");
    let before = configs(&node, &entities(&setup(ACTIONS), &mqtt_caller()));
    let edited = ACTIONS
        .replace(
            "  - {id: hidden, title: Hidden, shell: 'true', hidden: true}\n",
            "",
        )
        .replace("title: Plain,", "title: Plainer,");
    let after = configs(&node, &entities(&setup(&edited), &mqtt_caller()));
    let d = diff(&before, &after);
    let emptied: Vec<&str> = d
        .iter()
        .filter(|(_, p)| p.is_empty())
        .map(|(t, _)| t.as_str())
        .collect();
    assert_eq!(
        emptied,
        [
            "homeassistant/binary_sensor/n/hidden/config",
            "homeassistant/sensor/n/hidden/config"
        ]
    );
    let changed: Vec<&str> = d
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(t, _)| t.as_str())
        .collect();
    assert_eq!(
        changed,
        [
            "homeassistant/binary_sensor/n/plain/config",
            "homeassistant/button/n/plain/config",
            "homeassistant/sensor/n/plain/config"
        ]
    );
}

fn snapshot(flags: Flags, stdout: &str, stderr: &str) -> Snapshot {
    Snapshot {
        datetime_started: "2026-11-22 03:55:34".into(),
        datetime_finished: if flags.execution_finished {
            "2026-11-22 03:55:35".into()
        } else {
            String::new()
        },
        action_title: "T".into(),
        action_id: "door".into(),
        action_icon: String::new(),
        stdout: stdout.into(),
        stderr: stderr.into(),
        flags,
        user: "mqtt".into(),
        user_class: "automation".into(),
        tags: vec![],
        execution_tracking_id: "tid".into(),
    }
}

fn flags(started: bool, finished: bool, blocked: bool, timed_out: bool, code: i32) -> Flags {
    Flags {
        execution_started: started,
        execution_finished: finished,
        blocked,
        timed_out,
        exit_code: code,
    }
}

#[test]
fn state_payloads() {
    let never = parsed(&state_payload(None, false));
    assert_eq!(never["state"], NEVER_RUN);
    assert_eq!(never["running"], false);
    let cases = [
        (
            flags(true, false, false, false, 0),
            true,
            RUNNING,
            Value::Null,
        ),
        (
            flags(true, true, false, false, 0),
            false,
            "succeeded",
            Value::from(0),
        ),
        (
            flags(true, true, false, false, 3),
            false,
            "failed",
            Value::from(3),
        ),
        (
            flags(true, true, false, true, -1),
            false,
            "timed_out",
            Value::from(-1),
        ),
        (
            flags(true, true, false, false, -1),
            false,
            "killed",
            Value::from(-1),
        ),
        (
            flags(false, true, true, false, -1),
            true,
            "blocked",
            Value::from(-1),
        ),
        (
            flags(false, true, false, false, -1),
            false,
            "failed_to_start",
            Value::from(-1),
        ),
    ];
    for (f, running, state, code) in cases {
        let p = parsed(&state_payload(Some(&snapshot(f, "out\n", "")), running));
        assert_eq!(p["state"], state, "{f:?}");
        assert_eq!(p["running"], running);
        let a = &p["attributes"];
        assert_eq!(a["exit_code"], code, "{f:?}");
        assert_eq!(a["started"], "2026-11-22 03:55:34");
        assert_eq!(a["finished"].is_null(), !f.execution_finished);
        assert_eq!(a["user"], "mqtt");
        assert_eq!(a["tracking_id"], "tid");
        assert_eq!(a["output"], "out\n");
    }
    // stderr follows stdout on its own line; only the last 1 KiB is kept, cut at a
    // character boundary.
    let p = parsed(&state_payload(
        Some(&snapshot(flags(true, true, false, false, 1), "a", "b")),
        false,
    ));
    assert_eq!(p["attributes"]["output"], "a\nb");
    let long = format!("{}é{}", "x".repeat(2000), "y".repeat(OUTPUT_TAIL - 1));
    let p = parsed(&state_payload(
        Some(&snapshot(flags(true, true, false, false, 0), &long, "")),
        false,
    ));
    let out = p["attributes"]["output"].as_str().unwrap();
    assert_eq!(out, "y".repeat(OUTPUT_TAIL - 1));
    let p = parsed(&state_payload(
        Some(&snapshot(
            flags(true, true, false, false, 0),
            &"é".repeat(1000),
            "",
        )),
        false,
    ));
    let out = p["attributes"]["output"].as_str().unwrap();
    assert!(out.len() <= OUTPUT_TAIL && out.len() >= OUTPUT_TAIL - 1);
}
