//! Home Assistant over MQTT (the `mqtt:` section): the board announces one device with a
//! button per action its `runAs` caller may run, and per action it may read a last-run
//! sensor, a last-finished timestamp, a running binary sensor and an event that fires on
//! every finish, through Home Assistant's MQTT discovery; presses arrive on command topics
//! and start runs through the engine's one start path as that caller.
//!
//! The client is written here rather than taken from a crate: actiond needs a small subset of
//! MQTT 3.1.1, and measured on the release build this subset costs far less than `rumqttc`
//! (see `Cargo.toml`). The parts: `codec` (packets, pure), `discovery` (topics, entities and
//! payloads, pure), `runs` (which finishes each binding has reported), `session` (one
//! connection) and, here, the task that keeps a session going: it reads what the device page
//! says of the board once, connects with backoff, logs a broker that is down once per change
//! of state, follows reloads, and says `offline` when actiond stops.
//!
//! The engine never waits for MQTT. Execution changes reach the client through an
//! `events::ActionWatch`, which coalesces them and cannot overflow or be cut off, and the
//! client re-reads each state from the engine when it publishes. A broker that is slow or
//! gone holds only this task. Nothing is queued for a broker that is away: each connection
//! begins by publishing the current state of everything.

mod codec;
pub mod discovery;
mod runs;
mod session;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{info, warn};

use crate::config::Mqtt;
use crate::engine::Engine;
use crate::events::ActionWatch;
use crate::ratelog;
use discovery::{Board, Node};
use session::{Ended, Session};

/// The running client: stop it to say `offline` and disconnect.
pub struct Client {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Client {
    /// Starts the client task. It idles while the config has no `mqtt` section, and
    /// follows reloads that add, change or remove it. `listening` is where the page is
    /// served, for the device page's link.
    pub fn spawn(
        engine: Arc<Engine>,
        watch: Arc<ActionWatch>,
        listening: Option<SocketAddr>,
    ) -> Client {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(run(engine, watch, stopped, listening));
        Client { stop, task }
    }

    /// Publishes the last states and `offline`, disconnects, and returns within `bound`
    /// whatever the broker does.
    pub async fn stop(self, bound: Duration) {
        let _ = self.stop.send(true);
        let mut task = self.task;
        if tokio::time::timeout(bound, &mut task).await.is_err() {
            task.abort();
        }
    }
}

/// Resolves once actiond is stopping (or the client's owner is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is dropped here, never held across an await.
    let _ = stop.wait_for(|s| *s).await;
}

/// The node id in force: the configured one, else the hostname made safe.
fn node_id(settings: &Mqtt, board: &Board) -> String {
    settings
        .node_id
        .clone()
        .unwrap_or_else(|| discovery::node_id_from_hostname(&board.hostname))
}

/// What the device page says of the board, read once at start (the unit runs with
/// `ProtectHostname=`, which hides a later rename anyway): its hostname, and its hardware
/// model from the device tree (a Raspberry Pi's `Raspberry Pi 4 Model B Rev 1.4`) or DMI.
fn read_board(listening: Option<SocketAddr>) -> Board {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|t| {
                t.trim_matches(|c: char| c == '\0' || c.is_whitespace())
                    .to_string()
            })
            .filter(|t| known(t))
    };
    let hostname = read("/proc/sys/kernel/hostname").unwrap_or_default();
    let model = read("/proc/device-tree/model")
        .or_else(|| read("/sys/devices/virtual/dmi/id/product_name"));
    let vendor = read("/sys/devices/virtual/dmi/id/sys_vendor");
    Board {
        hostname,
        model,
        vendor,
        listening,
    }
}

/// Whether a DMI or device-tree string says something: firmware often leaves placeholders.
fn known(text: &str) -> bool {
    const PLACEHOLDERS: [&str; 5] = [
        "to be filled by o.e.m.",
        "default string",
        "system product name",
        "system manufacturer",
        "not specified",
    ];
    !text.is_empty()
        && text.len() <= 128
        && !text.chars().any(char::is_control)
        && !PLACEHOLDERS.contains(&text.to_ascii_lowercase().as_str())
}

/// Whether a connection made with `old` can go on serving `new` (only `runAs` or what the
/// device page says differs, or nothing): the rest needs a new connection.
fn same_connection(old: &Mqtt, new: &Mqtt) -> bool {
    let key = |m: &Mqtt| {
        (
            m.host.clone(),
            m.port,
            m.username.clone(),
            m.password_file.clone(),
            m.discovery_prefix.clone(),
            m.node_id.clone(),
        )
    };
    key(old) == key(new)
}

/// Delays between connection attempts: 1 s doubling to 30 s, each shortened by up to half
/// at random so that a fleet of boards does not reconnect to a restarted broker in step.
#[derive(Debug, Default)]
struct Backoff {
    failures: u32,
}

/// A session that lasted this long resets the backoff.
const SESSION_LASTED: Duration = Duration::from_secs(60);

const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

impl Backoff {
    /// The next delay; `random` is any number, its low bits choose the jitter.
    fn next(&mut self, random: u32) -> Duration {
        let full = BACKOFF_FIRST
            .saturating_mul(1 << self.failures.min(5))
            .min(BACKOFF_MAX);
        self.failures = self.failures.saturating_add(1);
        let fraction = 0.5 + f64::from(random % 1000) / 2000.0;
        full.mul_f64(fraction)
    }

    fn reset(&mut self) {
        self.failures = 0;
    }
}

/// What the log last said about the broker, so each change is said once.
#[derive(Debug, Default, PartialEq, Eq)]
enum Link {
    #[default]
    Unknown,
    Up,
    Down(String),
}

impl Link {
    /// A broker that accepts and drops makes a change each time: the lines are rate-limited.
    fn up(&mut self, settings: &Mqtt, node: &Node) {
        if *self != Link::Up
            && let Some(more) = ratelog::MQTT_LINK.admit()
        {
            info!(
                "MQTT: connected to {} as node {}{more}",
                settings.broker,
                node.id()
            );
        }
        *self = Link::Up;
    }

    fn down(&mut self, settings: &Mqtt, why: String) {
        let said = matches!(self, Link::Down(before) if *before == why);
        if !said && let Some(more) = ratelog::MQTT_LINK.admit() {
            if *self == Link::Up {
                warn!(
                    "MQTT: lost the connection to {}: {why}; reconnecting with backoff{more}",
                    settings.broker
                );
            } else {
                warn!(
                    "MQTT: cannot connect to {}: {why}; retrying with backoff (said again only \
                     when this changes){more}",
                    settings.broker
                );
            }
        }
        *self = Link::Down(why);
    }
}

async fn run(
    engine: Arc<Engine>,
    watch: Arc<ActionWatch>,
    mut stop: watch::Receiver<bool>,
    listening: Option<SocketAddr>,
) {
    let board = read_board(listening);
    let mut reloads = engine.setup_changes();
    let mut link = Link::default();
    let mut backoff = Backoff::default();
    loop {
        let config = engine.config();
        let Some(settings) = config.mqtt.clone() else {
            // Nothing to publish to: sleep until a reload brings a broker. The watch is not
            // followed meanwhile (waking for every start and finish cost each execution about
            // 5 000 instructions of a task with nothing to do); what it collects meanwhile is
            // bounded, and a session's opening full publish takes and covers it.
            tokio::select! {
                r = reloads.changed() => if r.is_err() { return },
                _ = stopped(&mut stop) => return,
            }
            continue;
        };
        let node = Node::new(&settings.discovery_prefix, &node_id(&settings, &board));
        let ended = match session::connect(&settings, &node).await {
            Ok(conn) => {
                link.up(&settings, &node);
                let began = tokio::time::Instant::now();
                let ended = Session::new(&engine, &watch, settings.clone(), node, conn, &board)
                    .serve(&mut reloads, &mut stop, same_connection)
                    .await;
                // Only a session that lasted proves the broker well: one that accepts and
                // drops at once must not earn a reconnection (and a full publish) a second.
                if began.elapsed() >= SESSION_LASTED {
                    backoff.reset();
                }
                ended
            }
            Err(e) => Ended::Lost(e),
        };
        match ended {
            Ended::Stopped => return,
            Ended::Reconfigured => continue,
            Ended::Lost(why) => link.down(&settings, why.to_string()),
        }
        // Wait before the next attempt, unless the settings change or actiond stops.
        let delay = tokio::time::sleep(backoff.next(getrandom::u32().unwrap_or(0)));
        tokio::pin!(delay);
        loop {
            tokio::select! {
                _ = &mut delay => break,
                r = reloads.changed() => {
                    if r.is_err() {
                        return;
                    }
                    if engine.config().mqtt.as_ref() != Some(&settings) {
                        backoff.reset();
                        break;
                    }
                }
                _ = stopped(&mut stop) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap_with_jitter_and_resets() {
        let mut b = Backoff::default();
        // A random number ending in 500 takes three quarters of the delay.
        let delays: Vec<u128> = (0..8).map(|_| b.next(1500).as_millis()).collect();
        assert_eq!(delays, [750, 1500, 3000, 6000, 12000, 22500, 22500, 22500]);
        b.reset();
        assert_eq!(b.next(0), Duration::from_millis(500));
        assert_eq!(b.next(0), Duration::from_millis(1000));
    }

    fn settings() -> Mqtt {
        Mqtt {
            broker: "mqtt://b".into(),
            host: "b".into(),
            port: 1883,
            username: None,
            password_file: None,
            discovery_prefix: "homeassistant".into(),
            node_id: Some("n".into()),
            run_as_username: "mqtt".into(),
            run_as_usergroup: "mqtt".into(),
            device_name: None,
            suggested_area: None,
            public_url: None,
        }
    }

    #[test]
    fn only_a_new_caller_keeps_the_connection() {
        let old = settings();
        let mut same = settings();
        same.run_as_usergroup = "automation".into();
        same.device_name = Some("Garage".into());
        same.suggested_area = Some("Garage".into());
        same.public_url = Some("https://g.example/".into());
        assert!(same_connection(&old, &same));
        let changes: [fn(&mut Mqtt); 5] = [
            |m| m.port = 1884,
            |m| m.username = Some("u".into()),
            |m| m.password_file = Some("/p".into()),
            |m| m.discovery_prefix = "ha".into(),
            |m| m.node_id = None,
        ];
        for change in changes {
            let mut new = settings();
            change(&mut new);
            assert!(!same_connection(&old, &new), "{new:?}");
        }
    }

    #[test]
    fn placeholders_are_not_models() {
        for text in ["Raspberry Pi 4 Model B Rev 1.4", "OptiPlex 7050", "QEMU"] {
            assert!(known(text), "{text}");
        }
        for text in ["", "To Be Filled By O.E.M.", "Default string", "a\u{1}b"] {
            assert!(!known(text), "{text:?}");
        }
    }

    #[test]
    fn the_link_is_logged_once_per_change() {
        let s = settings();
        let mut link = Link::default();
        link.down(&s, "refused".into());
        assert_eq!(link, Link::Down("refused".into()));
        link.down(&s, "refused".into());
        link.up(&s, &Node::new("homeassistant", "n"));
        assert_eq!(link, Link::Up);
    }
}
