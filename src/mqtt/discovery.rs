//! What a board shows Home Assistant over MQTT, as pure functions of the engine's setup: the
//! topics of one node, which bindings get which entities (decided by the one permission
//! function for the `runAs` caller), the retained discovery payloads in Home Assistant's
//! documented schema, the state payload of a binding, and the messages that bring the
//! broker from one set of entities to the next after a reload. It must not do I/O, start
//! anything or read the engine's tables: the client hands it a setup, a caller and
//! snapshots.
//!
//! Topics (`<node>` is the node id, `<b>` a binding id; both are `[A-Za-z0-9_-]`):
//!
//! | topic | retained | payload |
//! |---|---|---|
//! | `actiond/<node>/availability` | yes | `online`, or `offline` (also the last will) |
//! | `actiond/<node>/<b>/press` | no | `PRESS` from Home Assistant's button |
//! | `actiond/<node>/<b>/state` | yes | the binding's state as JSON (`state_payload`) |
//! | `<prefix>/{button,sensor,binary_sensor}/<node>/<b>/config` | yes | discovery |
//!
//! Home Assistant's keys sent, and why: every entity has `unique_id` (so Home Assistant
//! keeps it across restarts and ties it to the device), `name`, `device` (`identifiers`,
//! one device per board, plus `name`, `manufacturer`, `model`, `sw_version`), `origin`
//! (recommended, it names actiond in Home Assistant's log), and `availability_topic` with
//! `payload_available` / `payload_not_available`. A `button` has its required
//! `command_topic` and `payload_press`. A `sensor` and a `binary_sensor` have their required
//! `state_topic` and a `value_template`; the sensor is an `enum` with its `options`, so
//! automations can choose an outcome from a list, and takes its attributes from the same
//! topic (`json_attributes_topic`, `json_attributes_template`). The binary sensor is of
//! class `running`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::config::Action;
use crate::engine::Setup;
use crate::execution::Snapshot;
use crate::permissions::{Caller, Decision, Verb, decide};

/// The payload Home Assistant's button publishes, and the only one that presses.
pub const PRESS: &str = "PRESS";
pub const ONLINE: &str = "online";
pub const OFFLINE: &str = "offline";
/// What the sensor shows for a binding with no execution in the history.
pub const NEVER_RUN: &str = "never_run";
/// What the sensor shows while the latest execution has not finished.
pub const RUNNING: &str = "running";
/// How much of the latest run's output the state carries: its last 1 KiB.
pub const OUTPUT_TAIL: usize = 1024;

/// Every state the sensor can show: the outcome labels of `metrics::outcome`, and the two
/// states of a binding without a finished latest run.
pub const STATES: [&str; 8] = [
    "succeeded",
    "failed",
    "killed",
    "timed_out",
    "blocked",
    "failed_to_start",
    RUNNING,
    NEVER_RUN,
];

/// The first level of actiond's own topics.
const BASE: &str = "actiond";

/// The kinds of Home Assistant entity a binding can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Component {
    Button,
    Sensor,
    BinarySensor,
}

impl Component {
    pub fn as_str(self) -> &'static str {
        match self {
            Component::Button => "button",
            Component::Sensor => "sensor",
            Component::BinarySensor => "binary_sensor",
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Component::Button => "press",
            Component::Sensor => "last_run",
            Component::BinarySensor => "running",
        }
    }
}

/// Whether `s` can be one topic level and part of Home Assistant's ids.
pub fn is_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The node id a board gets when the config names none: its hostname, with every character
/// Home Assistant's ids do not allow replaced by `_` (`garage-pi.lan` → `garage-pi_lan`).
pub fn node_id_from_hostname(hostname: &str) -> String {
    let id: String = hostname
        .trim()
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() {
        "actiond".to_string()
    } else {
        id
    }
}

/// The topics of one board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    prefix: String,
    id: String,
    base: String,
}

impl Node {
    pub fn new(discovery_prefix: &str, node_id: &str) -> Node {
        Node {
            prefix: discovery_prefix.to_string(),
            id: node_id.to_string(),
            base: format!("{BASE}/{node_id}"),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The client id this board uses on the broker; one per node id.
    pub fn client_id(&self) -> String {
        format!("{BASE}-{}", self.id)
    }

    pub fn availability(&self) -> String {
        format!("{}/availability", self.base)
    }

    pub fn press(&self, binding: &str) -> String {
        format!("{}/{binding}/press", self.base)
    }

    pub fn state(&self, binding: &str) -> String {
        format!("{}/{binding}/state", self.base)
    }

    pub fn config(&self, component: Component, binding: &str) -> String {
        format!(
            "{}/{}/{}/{binding}/config",
            self.prefix,
            component.as_str(),
            self.id
        )
    }

    /// Home Assistant's status topic: `online` there is its birth message.
    pub fn ha_status(&self) -> String {
        format!("{}/status", self.prefix)
    }

    /// The subscriptions of a session: presses, Home Assistant's birth, and this node's
    /// retained configs and states (to clear those of bindings that no longer exist).
    pub fn filters(&self) -> [String; 4] {
        [
            format!("{}/+/press", self.base),
            self.ha_status(),
            format!("{}/+/{}/+/config", self.prefix, self.id),
            format!("{}/+/state", self.base),
        ]
    }

    /// The binding `topic` presses, if it is one of this node's press topics.
    pub fn pressed<'t>(&self, topic: &'t str) -> Option<&'t str> {
        self.binding_in(topic, "press")
    }

    /// The binding of one of this node's state topics.
    pub fn state_of<'t>(&self, topic: &'t str) -> Option<&'t str> {
        self.binding_in(topic, "state")
    }

    fn binding_in<'t>(&self, topic: &'t str, leaf: &str) -> Option<&'t str> {
        let rest = topic.strip_prefix(self.base.as_str())?.strip_prefix('/')?;
        let binding = rest.strip_suffix(leaf)?.strip_suffix('/')?;
        is_id(binding).then_some(binding)
    }

    /// Whether `topic` is one of this node's discovery config topics.
    pub fn is_config(&self, topic: &str) -> bool {
        let Some(rest) = topic
            .strip_prefix(self.prefix.as_str())
            .and_then(|r| r.strip_prefix('/'))
        else {
            return false;
        };
        let levels: Vec<&str> = rest.split('/').collect();
        matches!(levels.as_slice(), [_, node, binding, "config"] if *node == self.id && is_id(binding))
    }
}

/// What one binding shows over MQTT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    pub binding: String,
    pub title: String,
    /// A button: the caller may exec it, it is not hidden, and it needs no input.
    pub button: bool,
    /// A last-run sensor and a running binary sensor: the caller may read its logs.
    pub state: bool,
}

/// Whether a press with no input may start `action`: every argument a person would fill in
/// has a default, and none asks for a confirmation (a button in Home Assistant, or an
/// automation pressing it, cannot confirm anything).
pub fn pressable(action: &Action) -> bool {
    action.arguments.iter().all(|a| {
        if matches!(a.rule, crate::arguments::ArgType::Confirmation) {
            return false;
        }
        a.rule.is_display_only() || a.default.as_deref().is_some_and(|d| !d.is_empty())
    }) && crate::arguments::resolve(&action.arguments, &[]).is_ok()
}

/// The entities `caller` gets for `setup`, in binding order. A binding with neither a
/// button nor a state has none.
pub fn entities(setup: &Setup, caller: &Caller) -> Vec<Entity> {
    let auth = &setup.config.auth;
    setup
        .bindings()
        .iter()
        .filter(|b| is_id(&b.id))
        // A disabled action never runs: no button, and no state that could ever change.
        .filter(|b| b.action.disabled.is_none())
        .filter_map(|b| {
            let allowed = |verb| decide(auth, caller, &b.action, verb) == Decision::Allow;
            let button = !b.action.hidden && allowed(Verb::Exec) && pressable(&b.action);
            let state = allowed(Verb::Logs);
            (button || state).then(|| Entity {
                binding: b.id.clone(),
                title: b.action.title.clone(),
                button,
                state,
            })
        })
        .collect()
}

/// The retained discovery messages for `entities`: topic → payload.
pub fn configs(node: &Node, entities: &[Entity]) -> BTreeMap<String, String> {
    let version = env!("CARGO_PKG_VERSION");
    let device = json!({
        "identifiers": [format!("{BASE}_{}", node.id)],
        "name": node.id,
        "manufacturer": "actiond",
        "model": "actiond",
        "sw_version": version,
    });
    let common = |e: &Entity, c: Component, name: String| -> Value {
        json!({
            "name": name,
            "unique_id": format!("{BASE}_{}_{}_{}", node.id, e.binding, c.suffix()),
            "device": device,
            "origin": {"name": "actiond", "sw_version": version},
            "availability_topic": node.availability(),
            "payload_available": ONLINE,
            "payload_not_available": OFFLINE,
        })
    };
    let mut out = BTreeMap::new();
    for e in entities {
        let mut add = |c: Component, name: String, extra: Value| {
            let mut payload = common(e, c, name);
            if let (Value::Object(p), Value::Object(x)) = (&mut payload, extra) {
                p.extend(x);
            }
            out.insert(node.config(c, &e.binding), payload.to_string());
        };
        if e.button {
            add(
                Component::Button,
                e.title.clone(),
                json!({"command_topic": node.press(&e.binding), "payload_press": PRESS}),
            );
        }
        if e.state {
            let state_topic = node.state(&e.binding);
            add(
                Component::Sensor,
                format!("{} last run", e.title),
                json!({
                    "state_topic": state_topic,
                    "value_template": "{{ value_json.state }}",
                    "device_class": "enum",
                    "options": STATES,
                    "json_attributes_topic": state_topic,
                    "json_attributes_template": "{{ value_json.attributes | tojson }}",
                }),
            );
            add(
                Component::BinarySensor,
                format!("{} running", e.title),
                json!({
                    "state_topic": state_topic,
                    "value_template": "{{ 'ON' if value_json.running else 'OFF' }}",
                    "payload_on": "ON",
                    "payload_off": "OFF",
                    "device_class": "running",
                }),
            );
        }
    }
    out
}

/// The bindings of `entities` for which `has` holds (`|e| e.state`: those with a state
/// topic; `|e| e.button`: those that may be pressed).
pub fn bindings(entities: &[Entity], has: impl Fn(&Entity) -> bool) -> BTreeSet<String> {
    entities
        .iter()
        .filter(|e| has(e))
        .map(|e| e.binding.clone())
        .collect()
}

/// The retained messages that take the broker from `old` to `new` (both topic → payload):
/// each new or changed one, and an empty payload for each one that is gone, which makes
/// Home Assistant delete that entity and the broker forget the message.
pub fn diff(
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = old
        .keys()
        .filter(|t| !new.contains_key(*t))
        .map(|t| (t.clone(), String::new()))
        .collect();
    out.extend(
        new.iter()
            .filter(|(t, p)| old.get(*t) != Some(*p))
            .map(|(t, p)| (t.clone(), p.clone())),
    );
    out
}

/// The last `max` bytes of `text`, starting at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The retained state of a binding: its latest execution (none if it never ran) and
/// whether any execution of it is running now. The latest may be a blocked press while an
/// earlier run goes on, so `running` is given separately.
pub fn state_payload(latest: Option<&Snapshot>, running: bool) -> String {
    let Some(s) = latest else {
        return json!({"state": NEVER_RUN, "running": running, "attributes": {}}).to_string();
    };
    let finished = s.flags.execution_finished;
    let state = if finished {
        crate::metrics::outcome(&s.flags)
    } else {
        RUNNING
    };
    let mut output = s.stdout.clone();
    if !s.stderr.is_empty() {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&s.stderr);
    }
    json!({
        "state": state,
        "running": running,
        "attributes": {
            "exit_code": finished.then_some(s.flags.exit_code),
            "started": s.datetime_started,
            "finished": (!s.datetime_finished.is_empty()).then_some(&s.datetime_finished),
            "user": s.user,
            "tracking_id": s.execution_tracking_id,
            "output": tail(&output, OUTPUT_TAIL),
        },
    })
    .to_string()
}

#[cfg(test)]
mod tests;
