//! What a board shows Home Assistant over MQTT, as pure functions of the engine's setup: the
//! topics of one node, which bindings get which entities (decided by the one permission
//! function for the `runAs` caller), the board's device, the retained discovery payloads in
//! Home Assistant's documented schema, the state payload of a binding and the event of a
//! finished run, and the messages that bring the broker from one set of entities to the next
//! after a reload. It must not do I/O, start anything or read the engine's tables: the client
//! hands it a setup, a caller, what it read of the board, and snapshots.
//!
//! Topics (`<node>` is the node id, `<b>` a binding id; both are `[A-Za-z0-9_-]`):
//!
//! | topic | retained | payload |
//! |---|---|---|
//! | `actiond/<node>/availability` | yes | `online`, or `offline` (also the last will) |
//! | `actiond/<node>/<b>/press` | no | `PRESS` from Home Assistant's button |
//! | `actiond/<node>/<b>/state` | yes | the binding's state as JSON (`state_payload`) |
//! | `actiond/<node>/<b>/event` | no | one per finished run (`event_payload`) |
//! | `<prefix>/{button,sensor,binary_sensor,event}/<node>/<b>/config` | yes | discovery |
//! | `<prefix>/sensor/<node>/<b>_last_finished/config` | yes | the timestamp's discovery |
//!
//! Home Assistant's keys sent, and why: every entity has `unique_id` (so Home Assistant
//! keeps it across restarts and ties it to the device), `name`, `device` (`identifiers`, one
//! device per board, named by `deviceName` or `pageTitle` while the node id stays its id,
//! plus the board's `model`, actiond's `sw_version`, and `manufacturer`, `suggested_area` and
//! `configuration_url` when known), `origin` (recommended, it names actiond in Home
//! Assistant's log), and `availability_topic` with `payload_available` /
//! `payload_not_available`. A `button` has its required `command_topic` and `payload_press`,
//! and an `icon` and a `device_class` when configured. The others have their required
//! `state_topic` and are `entity_category: diagnostic`, so the device's controls stay on the
//! dashboard Home Assistant makes and the rest goes to the device page. The last-run sensor
//! is an `enum` with its `options` (words, through a `value_template`: an MQTT entity has no
//! translations) and takes its attributes from the same topic; the timestamp sensor is of
//! class `timestamp`; the binary sensor of class `running` (none is disabled by default:
//! Home Assistant would keep a disabled one after its action is removed); the `event` lists the outcomes as its `event_types` and fires on every finish, so an
//! automation on it runs once per run, however alike two runs are.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};

use crate::clock::iso8601;
use crate::config::{Action, ButtonClass, Mqtt, home_assistant_icon};
use crate::engine::Setup;
use crate::execution::Snapshot;
use crate::permissions::{Caller, Decision, Verb, decide};
use crate::schedule::Zone;

/// The payload Home Assistant's button publishes, and the only one that presses.
pub const PRESS: &str = "PRESS";
pub const ONLINE: &str = "online";
pub const OFFLINE: &str = "offline";
/// What the state says of a binding with no finished run that ran.
pub const NEVER_RUN: &str = "never_run";
/// How much of the latest run's output the state carries: its last 1 KiB.
pub const OUTPUT_TAIL: usize = 1024;

/// Every way a run ends (the outcome labels of `metrics::outcome`), with the words the
/// last-run sensor shows. Home Assistant translates the states of its own integrations'
/// enum sensors; a sensor discovered over MQTT cannot carry translations, so it would show
/// `timed_out` as written. The state topic keeps the labels (for automations and other
/// readers); the sensor's template shows the words. The event entity's types are the labels.
pub const OUTCOMES: [(&str, &str); 6] = [
    ("succeeded", "Succeeded"),
    ("failed", "Failed"),
    ("killed", "Killed"),
    ("timed_out", "Timed out"),
    ("blocked", "Blocked"),
    ("failed_to_start", "Failed to start"),
];

/// What the last-run sensor shows for a binding that never finished a run.
pub const NEVER_RUN_WORDS: &str = "Never run";

/// An outcome the last-run sensor never shows: a blocked press did not run, so it never
/// replaces the outcome of the last run that did. The event entity reports it.
const NOT_A_RUN: &str = "blocked";

/// The first level of actiond's own topics.
const BASE: &str = "actiond";

/// The Home Assistant entities a binding can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Component {
    /// Presses the action.
    Button,
    /// The last run's outcome (an `enum` sensor).
    Sensor,
    /// On while a run of the action runs.
    BinarySensor,
    /// Fires on every finish, with its outcome as the event type.
    Event,
    /// When the last run finished (a `timestamp` sensor).
    Finished,
}

impl Component {
    /// Home Assistant's platform: the topic level of the discovery message.
    pub fn as_str(self) -> &'static str {
        match self {
            Component::Button => "button",
            Component::Sensor | Component::Finished => "sensor",
            Component::BinarySensor => "binary_sensor",
            Component::Event => "event",
        }
    }

    /// The end of the entity's unique id, and of its object id after the binding's.
    fn suffix(self) -> &'static str {
        match self {
            Component::Button => "press",
            Component::Sensor => "last_run",
            Component::BinarySensor => "running",
            Component::Event => "finished",
            Component::Finished => "last_finished",
        }
    }

    /// The object id (the discovery topic's last level but one) of a binding's entity. The
    /// timestamp sensor shares its platform with the last-run sensor, whose object id is the
    /// binding id alone (as it was before the timestamp existed, so that an upgrade keeps
    /// Home Assistant's entities), so its own carries its suffix.
    fn object_id(self, binding: &str) -> String {
        match self {
            Component::Finished => format!("{binding}_{}", self.suffix()),
            _ => binding.to_string(),
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

    /// The topic of the non-retained event of each finish.
    pub fn event(&self, binding: &str) -> String {
        format!("{}/{binding}/event", self.base)
    }

    pub fn config(&self, component: Component, binding: &str) -> String {
        format!(
            "{}/{}/{}/{}/config",
            self.prefix,
            component.as_str(),
            self.id,
            component.object_id(binding)
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
    /// The sensors and the event: the caller may read its logs.
    pub state: bool,
    /// The button's icon, when the action's is one Home Assistant ships (`mdi:…`).
    pub icon: Option<String>,
    /// The button's device class (`deviceClass`).
    pub device_class: Option<ButtonClass>,
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
                icon: home_assistant_icon(&b.action.icon).map(str::to_string),
                device_class: b.action.device_class,
            })
        })
        .collect()
}

/// What the board's device page in Home Assistant shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub name: String,
    pub model: String,
    /// The hardware's maker, when the board says (DMI); a Raspberry Pi's model names it.
    pub manufacturer: Option<String>,
    pub suggested_area: Option<String>,
    /// The page's address, the device page's "Visit" link.
    pub configuration_url: Option<String>,
}

/// What the MQTT client learns about the board it runs on (read once, by `mqtt`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Board {
    /// `/proc/sys/kernel/hostname`.
    pub hostname: String,
    /// The hardware model (`/proc/device-tree/model`, or DMI's product name), if known.
    pub model: Option<String>,
    /// DMI's vendor, if known.
    pub vendor: Option<String>,
    /// Where the page is served.
    pub listening: Option<SocketAddr>,
}

/// Titles that name the product rather than the board: actiond's default `pageTitle`, and
/// OliveTin's, which configs written for it carry. Two boards would get one name.
const PRODUCT_TITLES: [&str; 2] = ["actiond", "OliveTin"];

impl Device {
    /// The device of a board: named by `mqtt.deviceName`, else by `pageTitle` (unless that
    /// names the product), else by the node id, which stays the device's id whatever its name.
    pub fn new(settings: &Mqtt, page_title: &str, node: &Node, board: &Board) -> Device {
        let title = page_title.trim();
        let name = settings.device_name.clone().unwrap_or_else(|| {
            if title.is_empty() || PRODUCT_TITLES.iter().any(|p| p.eq_ignore_ascii_case(title)) {
                node.id().to_string()
            } else {
                title.to_string()
            }
        });
        Device {
            name,
            model: board
                .model
                .clone()
                .unwrap_or_else(|| format!("Linux {}", std::env::consts::ARCH)),
            manufacturer: board.vendor.clone(),
            suggested_area: settings.suggested_area.clone(),
            configuration_url: page_url(settings.public_url.as_deref(), board),
        }
    }
}

/// The page's address for Home Assistant's link: `publicUrl` as configured (behind a proxy,
/// or to name the board otherwise); else, when actiond listens on every interface,
/// `http://<hostname>.local:<port>/` (the name mDNS gives the board); else the address it
/// listens on, unless that is loopback, which no other machine reaches.
pub fn page_url(public_url: Option<&str>, board: &Board) -> Option<String> {
    if let Some(url) = public_url {
        return Some(url.to_string());
    }
    let addr = board.listening?;
    let ip = addr.ip();
    if ip.is_loopback() {
        return None;
    }
    if ip.is_unspecified() {
        // mDNS publishes the first label of the hostname under .local.
        let host = board.hostname.trim().split('.').next().unwrap_or("");
        let ok = !host.is_empty()
            && host.len() <= 63
            && !host.starts_with('-')
            && host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        return ok.then(|| format!("http://{host}.local:{}/", addr.port()));
    }
    // A SocketAddr writes an IPv6 address in brackets.
    Some(format!("http://{addr}/"))
}

/// The `device` of every discovery message: the same in each, so Home Assistant makes one.
fn device_json(node: &Node, device: &Device) -> Value {
    let mut out = json!({
        "identifiers": [format!("{BASE}_{}", node.id)],
        "name": device.name,
        "model": device.model,
        "sw_version": format!("actiond {}", env!("CARGO_PKG_VERSION")),
    });
    for (key, value) in [
        ("manufacturer", &device.manufacturer),
        ("suggested_area", &device.suggested_area),
        ("configuration_url", &device.configuration_url),
    ] {
        if let Some(v) = value {
            out[key] = json!(v);
        }
    }
    out
}

/// The last-run sensor's options (the words of every outcome a run that ran can have, and
/// "Never run") and the template that turns the state's label into its words.
fn last_run_words() -> (Vec<&'static str>, String) {
    let words: Vec<&str> = OUTCOMES
        .iter()
        .filter(|(label, _)| *label != NOT_A_RUN)
        .map(|(_, words)| *words)
        .chain([NEVER_RUN_WORDS])
        .collect();
    let to_words = OUTCOMES
        .iter()
        .chain(&[(NEVER_RUN, NEVER_RUN_WORDS)])
        .map(|(label, words)| format!("'{label}': '{words}'"))
        .collect::<Vec<_>>()
        .join(", ");
    (words, format!("{{{{ {{{to_words}}}[value_json.state] }}}}"))
}

/// At most this many discovery messages a board publishes (five per action that shows a
/// state, one per button): an entity file of thousands of instances would otherwise flood the
/// broker and Home Assistant with tens of thousands of retained messages at every reload.
pub const MAX_CONFIGS: usize = 2000;
/// At most this many bytes of discovery payloads a board publishes, whatever their titles.
pub const MAX_CONFIG_BYTES: usize = 2 * 1024 * 1024;

/// What a board announces: the discovery messages (topic → payload) of the entities kept
/// within the bounds, those entities, and the bindings left out (in binding order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Announced {
    pub configs: BTreeMap<String, String>,
    pub entities: Vec<Entity>,
    pub left_out: Vec<String>,
}

/// The retained discovery messages for `entities`: topic → payload.
#[cfg(test)]
pub fn configs(node: &Node, device: &Device, entities: &[Entity]) -> BTreeMap<String, String> {
    within(node, device, entities.to_vec(), usize::MAX, usize::MAX).configs
}

/// The discovery messages of `entities` in binding order, as long as they stay within
/// `max_messages` and `max_bytes` of payload: the first binding that would go over, and every
/// one after it, is left out whole (a binding is never announced by half), so what is kept
/// does not depend on the order a reload happens to meet them.
pub fn within(
    node: &Node,
    device: &Device,
    entities: Vec<Entity>,
    max_messages: usize,
    max_bytes: usize,
) -> Announced {
    let version = env!("CARGO_PKG_VERSION");
    let device_json = device_json(node, device);
    let common = |e: &Entity, c: Component, name: String| -> Value {
        json!({
            "name": name,
            "unique_id": format!("{BASE}_{}_{}_{}", node.id, e.binding, c.suffix()),
            "device": device_json,
            "origin": {"name": "actiond", "sw_version": version},
            "availability_topic": node.availability(),
            "payload_available": ONLINE,
            "payload_not_available": OFFLINE,
        })
    };
    let (words, words_template) = last_run_words();
    let mut out = Announced::default();
    let mut bytes = 0usize;
    for e in entities {
        if !out.left_out.is_empty() {
            out.left_out.push(e.binding);
            continue;
        }
        let mut mine: Vec<(String, String)> = Vec::new();
        let mut add = |c: Component, name: String, extra: Value| {
            let topic = node.config(c, &e.binding);
            // The timestamp sensor's object id could be another binding's (`x` has
            // `x_last_finished`, which a binding may be named): the first one keeps it.
            if out.configs.contains_key(&topic) || mine.iter().any(|(t, _)| *t == topic) {
                return;
            }
            let mut payload = common(&e, c, name);
            if let (Value::Object(p), Value::Object(x)) = (&mut payload, extra) {
                p.extend(x.into_iter().filter(|(_, v)| !v.is_null()));
            }
            mine.push((topic, payload.to_string()));
        };
        if e.button {
            add(
                Component::Button,
                e.title.clone(),
                json!({
                    "command_topic": node.press(&e.binding),
                    "payload_press": PRESS,
                    "icon": e.icon,
                    "device_class": e.device_class.map(ButtonClass::as_str),
                }),
            );
        }
        if e.state {
            let state_topic = node.state(&e.binding);
            add(
                Component::Sensor,
                format!("{} last run", e.title),
                json!({
                    "state_topic": state_topic,
                    "value_template": words_template,
                    "device_class": "enum",
                    "options": words,
                    "entity_category": "diagnostic",
                    "json_attributes_topic": state_topic,
                    "json_attributes_template": "{{ value_json.attributes | tojson }}",
                }),
            );
            add(
                Component::Finished,
                format!("{} last finished", e.title),
                json!({
                    "state_topic": state_topic,
                    // null (never run) renders as None, which Home Assistant reads as
                    // "unknown".
                    "value_template": "{{ value_json.attributes.finished }}",
                    "device_class": "timestamp",
                    "entity_category": "diagnostic",
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
                    // Not disabled by default, though it flips twice per run: Home
                    // Assistant (2026.2) keeps the registry entry of a disabled entity
                    // whose discovery message is removed, so a deleted action would leave
                    // it behind on the device page. Its category keeps it off the
                    // dashboard Home Assistant makes.
                    "entity_category": "diagnostic",
                }),
            );
            add(
                Component::Event,
                format!("{} finished", e.title),
                json!({
                    "state_topic": node.event(&e.binding),
                    "event_types": OUTCOMES.map(|(label, _)| label),
                    "entity_category": "diagnostic",
                }),
            );
        }
        let size: usize = mine.iter().map(|(t, p)| t.len() + p.len()).sum();
        if out.configs.len() + mine.len() > max_messages || bytes + size > max_bytes {
            out.left_out.push(e.binding);
            continue;
        }
        bytes += size;
        out.configs.extend(mine);
        out.entities.push(e);
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

/// What the broker holds of a board's discovery: topic → a digest of its payload (the
/// payloads themselves would double what the session keeps, for a comparison).
pub type Published = BTreeMap<String, u64>;

/// The digest `Published` keeps of a payload.
pub fn digest(payload: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    payload.hash(&mut h);
    h.finish()
}

/// The digests of `configs`.
#[cfg(test)]
pub fn digests(configs: &BTreeMap<String, String>) -> Published {
    configs
        .iter()
        .map(|(t, p)| (t.clone(), digest(p)))
        .collect()
}

/// The retained messages that take the broker from `old` (what it holds) to `new` (topic →
/// payload): each new or changed one, and an empty payload for each one that is gone, which
/// makes Home Assistant delete that entity and the broker forget the message. What is the
/// same is not sent again.
pub fn diff(old: &Published, new: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = old
        .keys()
        .filter(|t| !new.contains_key(*t))
        .map(|t| (t.clone(), String::new()))
        .collect();
    out.extend(
        new.iter()
            .filter(|(t, p)| old.get(*t) != Some(&digest(p)))
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

/// One finished run, as MQTT tells of it.
pub struct Run<'a> {
    pub snapshot: &'a Snapshot,
    /// How long it took; `None` when not known (a record restored after a restart).
    pub took: Option<Duration>,
}

impl Run<'_> {
    fn outcome(&self) -> &'static str {
        crate::metrics::outcome(&self.snapshot.flags)
    }

    /// Seconds, to the millisecond; none for a blocked press, which never ran.
    fn duration(&self) -> Option<f64> {
        let took = self.took.filter(|_| !self.snapshot.flags.blocked)?;
        Some((took.as_secs_f64() * 1000.0).round() / 1000.0)
    }

    /// What the run's state and its event say alike.
    fn facts(&self, zone: &dyn Zone) -> Value {
        let s = self.snapshot;
        json!({
            "exit_code": s.flags.exit_code,
            "started": iso8601(&s.datetime_started, zone),
            "finished": iso8601(&s.datetime_finished, zone),
            "duration": self.duration(),
            "user": s.user,
            "tracking_id": s.execution_tracking_id,
        })
    }
}

/// The retained state of a binding: its last finished run that ran (none if it never
/// finished one), and whether a run of it is running now. A blocked press is not a run, so
/// it never takes the last run's place (its event says it was blocked), and a run still
/// going shows as `running` beside the outcome of the one before it. Every key is always
/// there (null when unknown), so Home Assistant's templates never meet a missing one.
pub fn state_payload(last: Option<&Run>, running: bool, zone: &dyn Zone) -> String {
    let Some(run) = last else {
        let attributes = json!({
            "exit_code": null, "started": null, "finished": null, "duration": null,
            "user": null, "tracking_id": null, "output": null,
        });
        return json!({"state": NEVER_RUN, "running": running, "attributes": attributes})
            .to_string();
    };
    let s = run.snapshot;
    let mut output = s.stdout.clone();
    if !s.stderr.is_empty() {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&s.stderr);
    }
    let mut attributes = run.facts(zone);
    attributes["output"] = json!(tail(&output, OUTPUT_TAIL));
    json!({"state": run.outcome(), "running": running, "attributes": attributes}).to_string()
}

/// The event of one finish, for Home Assistant's event entity: its outcome as the event
/// type, and the run's exit code, times, duration, user and tracking id as attributes.
pub fn event_payload(run: &Run, zone: &dyn Zone) -> String {
    let mut event = run.facts(zone);
    event["event_type"] = json!(run.outcome());
    event.to_string()
}

#[cfg(test)]
mod tests;
