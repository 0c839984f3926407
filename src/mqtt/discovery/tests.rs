//! Tables for the pure half of the MQTT client: topics, the entity set a caller gets, the
//! device and its page's address, the discovery payloads checked against Home Assistant's
//! documented keys, the diff after a reload, the state payload and the event payload.

use std::sync::Arc;

use serde_json::{Value, json};

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

/// A zone of a fixed offset, so the published times are known.
struct Fixed(i32);

impl Zone for Fixed {
    fn offset(&self, _: i64) -> i32 {
        self.0
    }
}

fn settings() -> Mqtt {
    crate::config::parse("mqtt: {broker: b}\n", Source::Embedded, "/".into(), &|_| {
        None
    })
    .unwrap()
    .0
    .mqtt
    .unwrap()
}

fn device(node: &Node) -> Device {
    Device::new(&settings(), "actiond", node, &Board::default())
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
  - {id: ping, title: 'Ping {{ .CurrentEntity.name }}', shell: 'true', entity: server,
     icon: 'mdi:lan-connect'}
  - {id: reboot, title: Reboot, shell: 'true', deviceClass: restart, icon: '&#128260;'}
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
    assert_eq!(n.event("door"), "actiond/garage-pi/door/event");
    let configs = [
        (
            Component::Button,
            "homeassistant/button/garage-pi/door/config",
        ),
        (
            Component::Sensor,
            "homeassistant/sensor/garage-pi/door/config",
        ),
        (
            Component::BinarySensor,
            "homeassistant/binary_sensor/garage-pi/door/config",
        ),
        (
            Component::Event,
            "homeassistant/event/garage-pi/door/config",
        ),
        (
            Component::Finished,
            "homeassistant/sensor/garage-pi/door_last_finished/config",
        ),
    ];
    for (component, topic) in configs {
        assert_eq!(n.config(component, "door"), topic);
        assert!(n.is_config(topic), "{topic}");
    }
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
        ("homeassistant/event/garage-pi/door/config", true),
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
        ("reboot", true, true),
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
    // Icons Home Assistant ships go to it; HTML icons do not. Classes go as configured.
    let looks: Vec<(String, Option<String>, Option<ButtonClass>)> = entities(&c, &mqtt_caller())
        .into_iter()
        .map(|e| (e.binding, e.icon, e.device_class))
        .filter(|(_, icon, class)| icon.is_some() || class.is_some())
        .collect();
    assert_eq!(
        looks,
        [
            ("ping-a".into(), Some("mdi:lan-connect".into()), None),
            ("ping-b".into(), Some("mdi:lan-connect".into()), None),
            ("reboot".into(), None, Some(ButtonClass::Restart)),
        ]
    );
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
/// discovered entity to belong to a device and follow availability; and no key it does not
/// know for the platform (its schemas refuse the whole message for one).
fn assert_home_assistant_accepts(topic: &str, payload: &Value, node: &Node) {
    let component = topic.split('/').nth(1).unwrap();
    let common = [
        "name",
        "unique_id",
        "device",
        "origin",
        "availability_topic",
        "payload_available",
        "payload_not_available",
        "entity_category",
        "icon",
        "device_class",
    ];
    let (required, own): (&[&str], &[&str]) = match component {
        "button" => (&["command_topic"], &["command_topic", "payload_press"]),
        "sensor" => (
            &["state_topic"],
            &[
                "state_topic",
                "value_template",
                "options",
                "json_attributes_topic",
                "json_attributes_template",
            ],
        ),
        "binary_sensor" => (
            &["state_topic"],
            &["state_topic", "value_template", "payload_on", "payload_off"],
        ),
        "event" => (
            &["state_topic", "event_types"],
            &["state_topic", "event_types"],
        ),
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
    for key in payload.as_object().unwrap().keys() {
        assert!(
            common.contains(&key.as_str()) || own.contains(&key.as_str()),
            "{topic}: {key} is not a key of {component}"
        );
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
    assert_eq!(ids, &[json!(format!("actiond_{}", node.id()))]);
    assert_eq!(payload["origin"]["name"], "actiond");
    assert_eq!(payload["availability_topic"], node.availability());
    assert_eq!(payload["payload_available"], ONLINE);
    assert_eq!(payload["payload_not_available"], OFFLINE);
    for (key, value) in payload.as_object().unwrap() {
        if key.ends_with("_topic") {
            let t = value.as_str().unwrap();
            assert!(!t.contains(['+', '#']) && !t.is_empty(), "{key}: {t}");
        }
        assert!(!value.is_null(), "{topic}: {key} is null");
    }
    // Only Home Assistant's classes and categories for the platform.
    let classes: &[&str] = match component {
        "button" => &["restart", "identify", "update"],
        "sensor" => &["enum", "timestamp"],
        "binary_sensor" => &["running"],
        _ => &[],
    };
    if let Some(class) = payload.get("device_class") {
        assert!(
            classes.contains(&class.as_str().unwrap()),
            "{topic}: {class}"
        );
    }
    if let Some(category) = payload.get("entity_category") {
        assert_eq!(category, "diagnostic", "{topic}");
    }
}

#[test]
fn discovery_payloads_carry_home_assistants_keys() {
    let node = Node::new("homeassistant", "garage-pi");
    let c = setup(ACTIONS);
    let all = configs(&node, &device(&node), &entities(&c, &mqtt_caller()));
    // 6 buttons (plain, defaulted, ping-a, ping-b, reboot; not hidden, required, confirm)
    // plus two sensors, a binary sensor and an event for each of the 8 bindings.
    assert_eq!(all.len(), 5 + 4 * 8);
    let mut unique_ids = BTreeSet::new();
    for (topic, payload) in &all {
        let p = parsed(payload);
        assert_home_assistant_accepts(topic, &p, &node);
        assert!(
            unique_ids.insert(p["unique_id"].as_str().unwrap().to_string()),
            "unique_id repeated: {topic}"
        );
    }
    // Each entity, whole (the device and the availability keys were checked above).
    let without_common = |topic: &str| -> Value {
        let mut p = parsed(&all[topic]);
        for key in [
            "device",
            "origin",
            "availability_topic",
            "payload_available",
            "payload_not_available",
        ] {
            p.as_object_mut().unwrap().remove(key);
        }
        p
    };
    let words = "{{ {'succeeded': 'Succeeded', 'failed': 'Failed', 'killed': 'Killed', \
                 'timed_out': 'Timed out', 'blocked': 'Blocked', 'failed_to_start': 'Failed to \
                 start', 'never_run': 'Never run'}[value_json.state] }}";
    let cases = [
        (
            "homeassistant/button/garage-pi/plain/config",
            json!({
                "name": "Plain", "unique_id": "actiond_garage-pi_plain_press",
                "command_topic": "actiond/garage-pi/plain/press", "payload_press": "PRESS",
            }),
        ),
        (
            "homeassistant/button/garage-pi/ping-b/config",
            json!({
                "name": "Ping Beta", "unique_id": "actiond_garage-pi_ping-b_press",
                "command_topic": "actiond/garage-pi/ping-b/press", "payload_press": "PRESS",
                "icon": "mdi:lan-connect",
            }),
        ),
        (
            "homeassistant/button/garage-pi/reboot/config",
            json!({
                "name": "Reboot", "unique_id": "actiond_garage-pi_reboot_press",
                "command_topic": "actiond/garage-pi/reboot/press", "payload_press": "PRESS",
                "device_class": "restart",
            }),
        ),
        (
            "homeassistant/sensor/garage-pi/ping-b/config",
            json!({
                "name": "Ping Beta last run", "unique_id": "actiond_garage-pi_ping-b_last_run",
                "state_topic": "actiond/garage-pi/ping-b/state",
                "value_template": words,
                "device_class": "enum",
                "options": ["Succeeded", "Failed", "Killed", "Timed out", "Failed to start",
                            "Never run"],
                "entity_category": "diagnostic",
                "json_attributes_topic": "actiond/garage-pi/ping-b/state",
                "json_attributes_template": "{{ value_json.attributes | tojson }}",
            }),
        ),
        (
            "homeassistant/sensor/garage-pi/plain_last_finished/config",
            json!({
                "name": "Plain last finished",
                "unique_id": "actiond_garage-pi_plain_last_finished",
                "state_topic": "actiond/garage-pi/plain/state",
                "value_template": "{{ value_json.attributes.finished }}",
                "device_class": "timestamp",
                "entity_category": "diagnostic",
            }),
        ),
        (
            "homeassistant/binary_sensor/garage-pi/plain/config",
            json!({
                "name": "Plain running", "unique_id": "actiond_garage-pi_plain_running",
                "state_topic": "actiond/garage-pi/plain/state",
                "value_template": "{{ 'ON' if value_json.running else 'OFF' }}",
                "payload_on": "ON", "payload_off": "OFF",
                "device_class": "running",
                "entity_category": "diagnostic",
            }),
        ),
        (
            "homeassistant/event/garage-pi/plain/config",
            json!({
                "name": "Plain finished", "unique_id": "actiond_garage-pi_plain_finished",
                "state_topic": "actiond/garage-pi/plain/event",
                "event_types": ["succeeded", "failed", "killed", "timed_out", "blocked",
                                "failed_to_start"],
                "entity_category": "diagnostic",
            }),
        ),
    ];
    for (topic, want) in cases {
        assert_eq!(without_common(topic), want, "{topic}");
    }
    // One device for the whole board, the same in every payload.
    let devices: BTreeSet<String> = all
        .values()
        .map(|p| parsed(p)["device"].to_string())
        .collect();
    assert_eq!(devices.len(), 1, "{devices:?}");
    assert!(!all.contains_key("homeassistant/button/garage-pi/hidden/config"));
    assert!(!all.contains_key("homeassistant/button/garage-pi/confirm/config"));
    // The sensor's template knows every state the state topic can carry.
    for label in OUTCOMES.map(|(l, _)| l).iter().chain(&[NEVER_RUN]) {
        assert!(words.contains(&format!("'{label}': ")), "{label}");
    }
}

#[test]
fn a_binding_named_like_a_timestamp_sensor_does_not_take_its_topic() {
    // `door_last_finished` is the object id of door's timestamp sensor: the first entity
    // keeps the topic, and no payload is written over another.
    let yaml =
        "actions:\n  - {id: door, shell: 'true'}\n  - {id: door_last_finished, shell: 'true'}\n";
    let node = Node::new("homeassistant", "n");
    let all = configs(
        &node,
        &device(&node),
        &entities(&setup(yaml), &mqtt_caller()),
    );
    let taken = parsed(&all["homeassistant/sensor/n/door_last_finished/config"]);
    assert_eq!(taken["unique_id"], "actiond_n_door_last_finished");
    assert_eq!(taken["device_class"], "timestamp");
    assert!(all.contains_key("homeassistant/sensor/n/door_last_finished_last_finished/config"));
}

#[test]
fn the_device_page() {
    let node = Node::new("homeassistant", "garage-pi");
    let mut s = settings();
    let pi = Board {
        hostname: "garage-pi".into(),
        model: Some("Raspberry Pi 4 Model B Rev 1.4".into()),
        vendor: None,
        listening: Some("0.0.0.0:1337".parse().unwrap()),
    };
    // The name: deviceName, else pageTitle unless it names the product, else the node id.
    let names = [
        (None, "Garage", "Garage"),
        (Some("Garage door"), "Garage", "Garage door"),
        (None, "actiond", "garage-pi"),
        (None, "OliveTin", "garage-pi"),
        (None, " ", "garage-pi"),
    ];
    for (configured, title, want) in names {
        s.device_name = configured.map(str::to_string);
        assert_eq!(Device::new(&s, title, &node, &pi).name, want, "{title:?}");
    }
    s.device_name = None;
    s.suggested_area = Some("Garage".into());
    let d = Device::new(&s, "Garage", &node, &pi);
    assert_eq!(
        d,
        Device {
            name: "Garage".into(),
            model: "Raspberry Pi 4 Model B Rev 1.4".into(),
            manufacturer: None,
            suggested_area: Some("Garage".into()),
            configuration_url: Some("http://garage-pi.local:1337/".into()),
        }
    );
    let all = configs(&node, &d, &entities(&setup(ACTIONS), &mqtt_caller()));
    let payload = parsed(all.values().next().unwrap());
    assert_eq!(
        payload["device"],
        json!({
            "identifiers": ["actiond_garage-pi"],
            "name": "Garage",
            "model": "Raspberry Pi 4 Model B Rev 1.4",
            "sw_version": format!("actiond {}", env!("CARGO_PKG_VERSION")),
            "suggested_area": "Garage",
            "configuration_url": "http://garage-pi.local:1337/",
        })
    );
    // A board that says nothing of itself is named by the machine it runs on; DMI's
    // vendor is the manufacturer.
    let vm = Board {
        vendor: Some("QEMU".into()),
        ..Board::default()
    };
    let d = Device::new(&settings(), "actiond", &node, &vm);
    assert_eq!(d.model, format!("Linux {}", std::env::consts::ARCH));
    assert_eq!(d.manufacturer.as_deref(), Some("QEMU"));
    assert_eq!(d.configuration_url, None);
}

#[test]
fn the_pages_address() {
    let board = |hostname: &str, listening: &str| Board {
        hostname: hostname.into(),
        listening: Some(listening.parse().unwrap()),
        ..Board::default()
    };
    let cases: &[(Option<&str>, Board, Option<&str>)] = &[
        // Configured: as written, whatever actiond listens on (a proxy in front).
        (
            Some("https://pi.example.net/actiond/"),
            board("pi", "127.0.0.1:1337"),
            Some("https://pi.example.net/actiond/"),
        ),
        // Every interface: the board's mDNS name.
        (
            None,
            board("pi", "0.0.0.0:1337"),
            Some("http://pi.local:1337/"),
        ),
        (
            None,
            board("pi", "[::]:8080"),
            Some("http://pi.local:8080/"),
        ),
        (
            None,
            board("pi.lan\n", "0.0.0.0:1337"),
            Some("http://pi.local:1337/"),
        ),
        (None, board("", "0.0.0.0:1337"), None),
        (None, board("my_pi", "0.0.0.0:1337"), None),
        (None, board("-pi", "0.0.0.0:1337"), None),
        // One address: that address.
        (
            None,
            board("pi", "192.168.1.20:1337"),
            Some("http://192.168.1.20:1337/"),
        ),
        (
            None,
            board("pi", "[fd00::20]:1337"),
            Some("http://[fd00::20]:1337/"),
        ),
        // Loopback: no other machine reaches it.
        (None, board("pi", "127.0.0.1:1337"), None),
        (None, board("pi", "[::1]:1337"), None),
        (None, Board::default(), None),
    ];
    for (public, b, want) in cases {
        assert_eq!(page_url(*public, b).as_deref(), *want, "{b:?}");
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
        let got = diff(&digests(&map(old)), &map(new));
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(t, p)| (t.to_string(), p.to_string()))
            .collect();
        assert_eq!(got, want, "{old:?} → {new:?}");
    }
    // A real reload: an action removed, a title changed, a permission taken away.
    let node = Node::new("homeassistant", "n");
    let d = device(&node);
    let before = configs(&node, &d, &entities(&setup(ACTIONS), &mqtt_caller()));
    let edited = ACTIONS
        .replace(
            "  - {id: hidden, title: Hidden, shell: 'true', hidden: true}\n",
            "",
        )
        .replace("title: Plain,", "title: Plainer,");
    let after = configs(&node, &d, &entities(&setup(&edited), &mqtt_caller()));
    let diffed = diff(&digests(&before), &after);
    let emptied: Vec<&str> = diffed
        .iter()
        .filter(|(_, p)| p.is_empty())
        .map(|(t, _)| t.as_str())
        .collect();
    assert_eq!(
        emptied,
        [
            "homeassistant/binary_sensor/n/hidden/config",
            "homeassistant/event/n/hidden/config",
            "homeassistant/sensor/n/hidden/config",
            "homeassistant/sensor/n/hidden_last_finished/config",
        ]
    );
    let changed: Vec<&str> = diffed
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(t, _)| t.as_str())
        .collect();
    assert_eq!(
        changed,
        [
            "homeassistant/binary_sensor/n/plain/config",
            "homeassistant/button/n/plain/config",
            "homeassistant/event/n/plain/config",
            "homeassistant/sensor/n/plain/config",
            "homeassistant/sensor/n/plain_last_finished/config",
        ]
    );
    // A new device name changes every payload (the device is in each).
    let mut renamed = settings();
    renamed.device_name = Some("Hall".into());
    let moved = configs(
        &node,
        &Device::new(&renamed, "actiond", &node, &Board::default()),
        &entities(&setup(&edited), &mqtt_caller()),
    );
    assert_eq!(diff(&digests(&after), &moved).len(), after.len());
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

fn flags(started: bool, blocked: bool, timed_out: bool, code: i32) -> Flags {
    Flags {
        execution_started: started,
        execution_finished: true,
        blocked,
        timed_out,
        exit_code: code,
    }
}

#[test]
fn every_outcome_is_an_event_type_and_every_run_a_sensor_option() {
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
            assert!(OUTCOMES.iter().any(|(l, _)| *l == state), "{state}");
        }
    }
}

#[test]
fn state_payloads() {
    let utc = Fixed(0);
    let never = parsed(&state_payload(None, false, &utc));
    assert_eq!(
        never,
        json!({"state": NEVER_RUN, "running": false, "attributes": {
            "exit_code": null, "started": null, "finished": null, "duration": null,
            "user": null, "tracking_id": null, "output": null,
        }})
    );
    let ms = |n| Some(Duration::from_millis(n));
    let cases = [
        (
            flags(true, false, false, 0),
            ms(1234),
            "succeeded",
            json!(1.234),
        ),
        (flags(true, false, false, 3), ms(5), "failed", json!(0.005)),
        (
            flags(true, false, true, -1),
            ms(3000),
            "timed_out",
            json!(3.0),
        ),
        (flags(true, false, false, -1), ms(1), "killed", json!(0.001)),
        (
            flags(false, false, false, -1),
            ms(0),
            "failed_to_start",
            json!(0.0),
        ),
        // Restored after a restart: the duration is not known.
        (flags(true, false, false, 0), None, "succeeded", Value::Null),
    ];
    for (f, took, state, duration) in cases {
        for running in [false, true] {
            let s = snapshot(f, "out\n", "");
            let run = Run { snapshot: &s, took };
            let p = parsed(&state_payload(Some(&run), running, &Fixed(3600)));
            assert_eq!(
                p,
                json!({"state": state, "running": running, "attributes": {
                    "exit_code": f.exit_code,
                    "started": "2026-11-22T03:55:34+01:00",
                    "finished": "2026-11-22T03:55:35+01:00",
                    "duration": duration,
                    "user": "mqtt",
                    "tracking_id": "tid",
                    "output": "out\n",
                }}),
                "{f:?}"
            );
        }
    }
    // stderr follows stdout on its own line; only the last 1 KiB is kept, cut at a
    // character boundary.
    let state_of = |stdout: &str, stderr: &str| {
        let s = snapshot(flags(true, false, false, 1), stdout, stderr);
        let run = Run {
            snapshot: &s,
            took: None,
        };
        parsed(&state_payload(Some(&run), false, &utc))["attributes"]["output"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(state_of("a", "b"), "a\nb");
    assert_eq!(state_of("a\n", "b"), "a\nb");
    assert_eq!(state_of("", "b"), "b");
    let long = format!("{}é{}", "x".repeat(2000), "y".repeat(OUTPUT_TAIL - 1));
    assert_eq!(state_of(&long, ""), "y".repeat(OUTPUT_TAIL - 1));
    let out = state_of(&"é".repeat(1000), "");
    assert!(out.len() <= OUTPUT_TAIL && out.len() >= OUTPUT_TAIL - 1);
}

#[test]
fn event_payloads() {
    let cases = [
        (flags(true, false, false, 0), "succeeded", json!(0.25)),
        (flags(true, false, false, 2), "failed", json!(0.25)),
        (flags(true, false, true, -1), "timed_out", json!(0.25)),
        (flags(true, false, false, -1), "killed", json!(0.25)),
        (
            flags(false, false, false, -1),
            "failed_to_start",
            json!(0.25),
        ),
        // A blocked press never ran: no duration.
        (flags(false, true, false, -1), "blocked", Value::Null),
    ];
    for (f, event_type, duration) in cases {
        let s = snapshot(f, "not in the event", "");
        let run = Run {
            snapshot: &s,
            took: Some(Duration::from_millis(250)),
        };
        let e = parsed(&event_payload(&run, &Fixed(-18_000)));
        assert_eq!(
            e,
            json!({
                "event_type": event_type,
                "exit_code": f.exit_code,
                "started": "2026-11-22T03:55:34-05:00",
                "finished": "2026-11-22T03:55:35-05:00",
                "duration": duration,
                "user": "mqtt",
                "tracking_id": "tid",
            }),
            "{f:?}"
        );
    }
}

#[test]
fn the_bounds_keep_whole_bindings_in_order_and_name_the_rest() {
    let node = Node::new("homeassistant", "n");
    let d = device(&node);
    let all = entities(&setup(ACTIONS), &mqtt_caller());
    let everything = within(&node, &d, all.clone(), usize::MAX, usize::MAX);
    assert!(everything.left_out.is_empty());
    assert_eq!(everything.configs, configs(&node, &d, &all));
    let per: Vec<usize> = all
        .iter()
        .map(|e| {
            within(&node, &d, vec![e.clone()], usize::MAX, usize::MAX)
                .configs
                .len()
        })
        .collect();
    // Room for the first binding's messages and one more: the second is left out whole,
    // and so is every binding after it, even one that would fit.
    let room = per[0] + 1;
    let cut = within(&node, &d, all.clone(), room, usize::MAX);
    assert_eq!(cut.entities, all[..1]);
    assert_eq!(cut.configs.len(), per[0]);
    let names: Vec<&str> = all[1..].iter().map(|e| e.binding.as_str()).collect();
    assert_eq!(cut.left_out, names);
    // The byte bound: nothing fits in 100 bytes.
    let none = within(&node, &d, all.clone(), usize::MAX, 100);
    assert!(none.configs.is_empty() && none.entities.is_empty());
    assert_eq!(none.left_out.len(), all.len());
    let bytes: usize = everything
        .configs
        .iter()
        .map(|(t, p)| t.len() + p.len())
        .sum();
    assert_eq!(
        within(&node, &d, all.clone(), usize::MAX, bytes).left_out,
        Vec::<String>::new()
    );
    assert!(
        !within(&node, &d, all, usize::MAX, bytes - 1)
            .left_out
            .is_empty()
    );
}
