//! One connection to the broker, from CONNECT to its end: the subscriptions, the full
//! publish that makes the broker's retained messages match the engine, and the loop that
//! follows presses, execution changes, reloads, keep-alive and shutdown. It owns the socket
//! and its timeouts; what is published comes from `discovery`, what runs goes through
//! `Engine::start` as the `runAs` caller.
//!
//! Every message is re-read from the engine when it is sent, and a new connection starts
//! with a full publish, so nothing waits in memory for a broker to come back: a message
//! lost with a connection is replaced by the current truth on the next one.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::{Instant, timeout};
use tracing::{debug, info, warn};

use super::codec::{self, Connect, Decoder, Incoming, QoS, Will};
use super::discovery::{
    self, Announced, Board, Device, Entity, MAX_CONFIG_BYTES, MAX_CONFIGS, Node, OFFLINE, ONLINE,
    PRESS, Published,
};
use super::runs::Runs;
use crate::config::Mqtt;
use crate::engine::{Engine, Setup, StartRequest};
use crate::events::{ActionWatch, Changed};
use crate::permissions::{Caller, Provider};
use crate::ratelog;

/// Seconds of silence after which the broker may drop us; we ping at a third of it.
pub const KEEP_ALIVE_SECS: u16 = 30;
const PING_EVERY: Duration = Duration::from_secs(10);
/// No packet at all from the broker for this long (pings included) ends the connection.
const DEAD_AFTER: Duration = Duration::from_secs(45);
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A write the broker does not take within this long ends the connection: a broker that
/// stopped reading must not hold the client forever.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection being closed waits for the broker to close its side after the
/// DISCONNECT (mosquitto does at once); a broker that does not is cut off then.
const LINGER: Duration = Duration::from_secs(1);
/// Incoming packets larger than this are skipped unread (presses and Home Assistant's
/// birth message are a few bytes; our own retained configs and states are a few KiB).
const MAX_INCOMING: usize = 64 * 1024;
/// Home Assistant's birth message triggers a full publish at most this often, so a client
/// repeating it cannot make the board flood the broker.
const REPUBLISH_AT_MOST_EVERY: Duration = Duration::from_secs(5);
/// Execution states are published at most this often (a press flood on a busy button
/// changes its state hundreds of times a second); the states that change meanwhile are
/// coalesced and published together, read from the engine when they are sent.
const STATES_AT_MOST_EVERY: Duration = Duration::from_millis(500);
/// Messages per write of a publish: between two writes the session yields to the runtime, so
/// that a board with thousands of entities never holds the event loop for long (the messages
/// themselves are built off the loop).
const CHUNK_MESSAGES: usize = 64;

/// How a session ended.
pub enum Ended {
    /// actiond is stopping; the board said `offline` and disconnected.
    Stopped,
    /// The `mqtt` section changed; the session was closed for the new one.
    Reconfigured,
    /// The connection broke, or the broker misbehaved.
    Lost(Lost),
}

/// Why a connection could not be made or was lost. Its `Display` is the reason the log
/// gives after "cannot connect to …:" or "lost the connection to …:".
#[derive(Debug)]
pub enum Lost {
    /// The password file could not be read.
    Password(std::path::PathBuf, crate::files::ReadError),
    /// The task that reads the password file failed.
    PasswordTask(tokio::task::JoinError),
    /// TCP connect failed.
    Connect(std::io::Error),
    /// TCP connect took longer than `CONNECT_TIMEOUT`.
    ConnectTimeout,
    /// The broker sent no CONNACK within `CONNECT_TIMEOUT`.
    NoConnAck,
    /// The broker refused the CONNECT with this return code.
    Refused(u8),
    /// The broker answered CONNECT with another packet, named by kind and size.
    NotConnAck(String),
    /// The broker sent a CONNACK on a connected session.
    SecondConnAck,
    /// A packet could not be encoded, or the broker's could not be decoded.
    Packet(codec::Error),
    Write(std::io::Error),
    /// The broker took nothing for `WRITE_TIMEOUT`.
    WriteTimeout,
    Read(std::io::Error),
    /// The broker closed the connection.
    Closed,
    /// Nothing from the broker, pings included, for `DEAD_AFTER`.
    Silent,
    /// The task that builds the discovery messages failed.
    Build(tokio::task::JoinError),
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lost::Password(path, e) => {
                write!(f, "cannot read passwordFile {}: {e}", path.display())
            }
            Lost::PasswordTask(e) => write!(f, "cannot read passwordFile: {e}"),
            Lost::Connect(e) => write!(f, "{e}"),
            Lost::ConnectTimeout => {
                write!(f, "no answer within {} s", CONNECT_TIMEOUT.as_secs())
            }
            Lost::NoConnAck => write!(f, "no CONNACK within {} s", CONNECT_TIMEOUT.as_secs()),
            Lost::Refused(code) => f.write_str(codec::connack_reason(*code)),
            Lost::NotConnAck(what) => write!(
                f,
                "the broker answered CONNECT with {what} instead of a CONNACK"
            ),
            Lost::SecondConnAck => f.write_str("the broker sent a second CONNACK"),
            Lost::Packet(e) => write!(f, "{e}"),
            Lost::Write(e) => write!(f, "cannot write to the broker: {e}"),
            Lost::WriteTimeout => write!(
                f,
                "the broker took nothing for {} s",
                WRITE_TIMEOUT.as_secs()
            ),
            Lost::Read(e) => write!(f, "cannot read from the broker: {e}"),
            Lost::Closed => f.write_str("the broker closed the connection"),
            Lost::Silent => write!(
                f,
                "no answer from the broker for {} s",
                DEAD_AFTER.as_secs()
            ),
            Lost::Build(e) => write!(f, "cannot build the discovery messages: {e}"),
        }
    }
}

impl std::error::Error for Lost {}

impl From<codec::Error> for Lost {
    fn from(e: codec::Error) -> Lost {
        Lost::Packet(e)
    }
}

/// The caller MQTT presses come from.
pub fn caller(settings: &Mqtt) -> Caller {
    Caller {
        username: settings.run_as_username.clone(),
        usergroup: settings.run_as_usergroup.clone(),
        provider: Provider::Mqtt,
        sid: None,
    }
}

/// The socket and its packet decoder.
pub struct Conn {
    stream: TcpStream,
    decoder: Decoder,
    buf: Vec<u8>,
    next_id: u16,
}

impl Conn {
    async fn send(&mut self, bytes: &[u8]) -> Result<(), Lost> {
        match timeout(WRITE_TIMEOUT, self.stream.write_all(bytes)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Lost::Write(e)),
            Err(_) => Err(Lost::WriteTimeout),
        }
    }

    /// Sends the last packets (ending with DISCONNECT) and closes the connection cleanly:
    /// the write side first, then whatever the broker still sends (the PUBACKs of those
    /// packets, messages in flight) is read until it closes its side, for at most `LINGER`.
    /// A socket closed with bytes unread resets the connection, and a broker that sees the
    /// reset drops the packets it had not processed yet: mosquitto 2.0 kept a moved board's
    /// entities, having taken only the first of their deletes.
    async fn end(&mut self, bytes: &[u8]) {
        if self.send(bytes).await.is_err() {
            return;
        }
        let _ = self.stream.shutdown().await;
        let drained = async {
            while let Ok(n) = self.stream.read(&mut self.buf).await {
                if n == 0 {
                    break;
                }
            }
        };
        let _ = timeout(LINGER, drained).await;
    }

    /// The next packet. Cancel-safe: bytes read are in the decoder before it can yield.
    async fn packet(&mut self) -> Result<Incoming, Lost> {
        loop {
            if let Some(p) = self.decoder.next()? {
                return Ok(p);
            }
            let n = self.stream.read(&mut self.buf).await.map_err(Lost::Read)?;
            if n == 0 {
                return Err(Lost::Closed);
            }
            self.decoder.feed(&self.buf[..n]);
        }
    }

    fn id(&mut self) -> u16 {
        self.next_id = self.next_id.checked_add(1).unwrap_or(1);
        self.next_id
    }

    /// Appends a retained QoS 1 PUBLISH to `out` (an empty payload deletes the retained
    /// message). PUBACKs are not waited for: a message lost with the connection is
    /// replaced by the full publish of the next one.
    fn push(&mut self, out: &mut Vec<u8>, topic: &str, payload: &[u8]) {
        self.push_as(out, topic, payload, true);
    }

    /// `push`, not retained: an event happens once (Home Assistant ignores a retained one,
    /// which the broker would replay at every subscription).
    fn push_as(&mut self, out: &mut Vec<u8>, topic: &str, payload: &[u8], retain: bool) {
        let id = self.id();
        if let Err(e) = codec::publish(out, topic, payload, QoS::AtLeastOnce, retain, id) {
            warn!("MQTT: not published to {topic}: {e}");
        }
    }
}

/// The password file holds one password: MQTT allows 65,535 bytes, nobody needs more than this.
const MAX_PASSWORD_BYTES: u64 = 4096;

/// Reads the password file; a trailing newline (as `echo` writes) is not part of it.
fn password(settings: &Mqtt) -> Result<Option<Vec<u8>>, Lost> {
    let Some(path) = &settings.password_file else {
        return Ok(None);
    };
    // A FIFO in its place is refused unopened, and a password is short.
    let mut bytes = crate::files::read(path, MAX_PASSWORD_BYTES)
        .map_err(|e| Lost::Password(path.clone(), e))?;
    while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        bytes.pop();
    }
    Ok(Some(bytes))
}

/// Opens a connection: TCP, CONNECT with the last will (`offline`, retained), CONNACK.
pub async fn connect(settings: &Mqtt, node: &Node) -> Result<Conn, Lost> {
    // Off the event loop: the file may sit on a slow or hung filesystem.
    let password = {
        let settings = settings.clone();
        tokio::task::spawn_blocking(move || password(&settings))
            .await
            .map_err(Lost::PasswordTask)??
    };
    let stream = timeout(
        CONNECT_TIMEOUT,
        TcpStream::connect((settings.host.as_str(), settings.port)),
    )
    .await
    .map_err(|_| Lost::ConnectTimeout)?
    .map_err(Lost::Connect)?;
    let _ = stream.set_nodelay(true);
    let mut conn = Conn {
        stream,
        decoder: Decoder::new(MAX_INCOMING),
        buf: vec![0; 4096],
        next_id: 0,
    };
    let availability = node.availability();
    let mut out = Vec::new();
    codec::connect(
        &mut out,
        &Connect {
            client_id: &node.client_id(),
            keep_alive_secs: KEEP_ALIVE_SECS,
            username: settings.username.as_deref(),
            password: password.as_deref(),
            will: Some(Will {
                topic: &availability,
                payload: OFFLINE.as_bytes(),
                qos: QoS::AtLeastOnce,
                retain: true,
            }),
        },
    )?;
    conn.send(&out).await?;
    match timeout(CONNECT_TIMEOUT, conn.packet()).await {
        Err(_) => Err(Lost::NoConnAck),
        Ok(Err(e)) => Err(e),
        Ok(Ok(Incoming::ConnAck { code: 0, .. })) => Ok(conn),
        Ok(Ok(Incoming::ConnAck { code, .. })) => Err(Lost::Refused(code)),
        // Named by kind and size: a hostile broker's bytes never reach the log.
        Ok(Ok(other)) => Err(Lost::NotConnAck(describe(&other))),
    }
}

/// A connected session.
pub struct Session<'a> {
    pub engine: &'a Arc<Engine>,
    pub watch: &'a ActionWatch,
    pub settings: Mqtt,
    pub node: Node,
    pub conn: Conn,
    /// What the client read of the board, for the device.
    board: &'a Board,
    caller: Caller,
    /// What each binding's state and events have told so far.
    runs: Runs,
    /// The discovery messages the broker holds now (topic → digest of the payload), updated
    /// as each write goes out, so that a publish cut short by a newer reload is resumed from
    /// what was really sent.
    configs: Published,
    /// How many bindings the bounds left out, and the first: said again only when it changes.
    left_out: (usize, Option<String>),
    /// Bindings with a state topic, and bindings with a button.
    states: BTreeSet<String>,
    buttons: BTreeSet<String>,
    last_full: Option<Instant>,
    last_rx: Instant,
    /// When states were last published.
    last_states: Option<Instant>,
    /// The packet ids of the QoS 1 messages acknowledged last, newest at the back: a copy the
    /// broker sends again (DUP) of one of them is a press already taken.
    acked: VecDeque<u16>,
    /// When the discovery messages another client overwrote are put back: at most once per
    /// `REPUBLISH_AT_MOST_EVERY`, so a client that keeps overwriting costs one diff each time.
    repair_at: Option<Instant>,
    last_repair: Option<Instant>,
    /// The digests (of topic and payload) of discovery messages of ours that a newer one
    /// replaced, the last `SUPERSEDED_KEPT`: the broker's copy of one may still be on its
    /// way back to us, and it is ours, not another client's.
    superseded: VecDeque<(u64, u64)>,
    /// The discovery topics of ours forgotten as overwritten, until the repair puts them back:
    /// another client's message there is an overwrite, not a message where we have none.
    forgotten: BTreeSet<String>,
}

impl<'a> Session<'a> {
    pub fn new(
        engine: &'a Arc<Engine>,
        watch: &'a ActionWatch,
        settings: Mqtt,
        node: Node,
        conn: Conn,
        board: &'a Board,
    ) -> Session<'a> {
        Session {
            engine,
            watch,
            board,
            runs: Runs::default(),
            caller: caller(&settings),
            settings,
            node,
            conn,
            configs: Published::new(),
            left_out: (0, None),
            states: BTreeSet::new(),
            buttons: BTreeSet::new(),
            last_full: None,
            last_rx: Instant::now(),
            last_states: None,
            acked: VecDeque::with_capacity(ACKED_KEPT),
            repair_at: None,
            last_repair: None,
            superseded: VecDeque::new(),
            forgotten: BTreeSet::new(),
        }
    }

    /// Runs the session until it ends; `same` tells whether a new `mqtt` section can be
    /// served by this connection.
    pub async fn serve(
        mut self,
        reloads: &mut watch::Receiver<u64>,
        stop: &mut watch::Receiver<bool>,
        same: impl Fn(&Mqtt, &Mqtt) -> bool,
    ) -> Ended {
        if let Err(e) = self.start().await {
            return Ended::Lost(e);
        }
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.reset();
        loop {
            let step = tokio::select! {
                p = self.conn.packet() => match p {
                    Ok(p) => self.incoming(p).await,
                    Err(e) => Err(e),
                },
                () = repair_due(self.repair_at) => self.repair().await,
                changed = coalesced(self.watch, self.last_states) => {
                    self.last_states = Some(Instant::now());
                    self.publish_states(changed).await
                }
                r = reloads.changed() => {
                    if r.is_err() {
                        return self.farewell().await;
                    }
                    let config = self.engine.config();
                    match &config.mqtt {
                        Some(new) if same(&self.settings, new) => {
                            self.settings = new.clone();
                            self.caller = caller(new);
                            self.reload(reloads).await
                        }
                        _ => return self.close().await,
                    }
                }
                _ = ping.tick() => {
                    if self.last_rx.elapsed() > DEAD_AFTER {
                        Err(Lost::Silent)
                    } else {
                        let mut out = Vec::new();
                        codec::pingreq(&mut out);
                        self.conn.send(&out).await
                    }
                }
                _ = super::stopped(stop) => return self.farewell().await,
            };
            if let Err(e) = step {
                return Ended::Lost(e);
            }
        }
    }

    /// Subscribes, then makes the broker match the engine: configs, states, `online`.
    async fn start(&mut self) -> Result<(), Lost> {
        let filters = self.node.filters();
        let list: Vec<(&str, QoS)> = filters
            .iter()
            .map(|f| (f.as_str(), QoS::AtMostOnce))
            .collect();
        let mut out = Vec::new();
        let id = self.conn.id();
        codec::subscribe(&mut out, id, &list)?;
        self.conn.send(&out).await?;
        self.full_publish().await
    }

    /// Publishes every config and state of the current setup, then `online`. Anything the
    /// watch noted before is covered by it.
    async fn full_publish(&mut self) -> Result<(), Lost> {
        let _ = self.watch.take();
        let (built, changes) = self.build(&Published::new()).await?;
        self.configs.clear();
        self.states = discovery::bindings(&built.entities, |e| e.state);
        self.buttons = discovery::bindings(&built.entities, |e| e.button);
        self.runs.keep_only(&self.states);
        self.log_left_out(&built.left_out);
        self.send_configs(changes, None).await?;
        let states: Vec<String> = self.states.iter().cloned().collect();
        self.send_states(&states).await?;
        let mut out = Vec::new();
        self.conn
            .push(&mut out, &self.node.availability(), ONLINE.as_bytes());
        self.last_full = Some(Instant::now());
        self.conn.send(&out).await
    }

    /// The entities and discovery messages of the setup in force for the `runAs` caller,
    /// within the bounds, and what brings the broker from `held` to them: built off the event
    /// loop (thousands of entity instances make megabytes of JSON).
    async fn build(&self, held: &Published) -> Result<(Announced, Vec<(String, String)>), Lost> {
        let setup = self.engine.setup();
        let device = self.device(&setup);
        let (node, caller, held) = (self.node.clone(), self.caller.clone(), held.clone());
        tokio::task::spawn_blocking(move || {
            let entities = discovery::entities(&setup, &caller);
            let mut built =
                discovery::within(&node, &device, entities, MAX_CONFIGS, MAX_CONFIG_BYTES);
            let changes = discovery::diff(&held, &built.configs);
            // Only the changes are sent: the payloads are not kept.
            built.configs.clear();
            (built, changes)
        })
        .await
        .map_err(Lost::Build)
    }

    /// Sends `changes` a chunk at a time, noting each in `configs` once written, and yields
    /// between chunks. Stops early, returning false, when `newer` says a reload came in
    /// meanwhile: the newest setup wins, and its diff starts from what was really sent.
    async fn send_configs(
        &mut self,
        changes: Vec<(String, String)>,
        newer: Option<&watch::Receiver<u64>>,
    ) -> Result<bool, Lost> {
        for chunk in changes.chunks(CHUNK_MESSAGES) {
            if newer.is_some_and(|r| r.has_changed().unwrap_or(false)) {
                return Ok(false);
            }
            let mut out = Vec::new();
            for (topic, payload) in chunk {
                self.conn.push(&mut out, topic, payload.as_bytes());
            }
            self.conn.send(&out).await?;
            for (topic, payload) in chunk {
                let old = if payload.is_empty() {
                    self.configs.remove(topic)
                } else {
                    self.configs
                        .insert(topic.clone(), discovery::digest(payload))
                };
                if let Some(old) = old {
                    if self.superseded.len() == SUPERSEDED_KEPT {
                        self.superseded.pop_front();
                    }
                    self.superseded.push_back((discovery::digest(topic), old));
                }
            }
            tokio::task::yield_now().await;
        }
        Ok(true)
    }

    /// Publishes the states of `bindings` a chunk at a time, yielding between chunks.
    async fn send_states(&mut self, bindings: &[String]) -> Result<(), Lost> {
        for chunk in bindings.chunks(CHUNK_MESSAGES) {
            let mut out = Vec::new();
            for b in chunk {
                self.push_state(&mut out, b);
            }
            if !out.is_empty() {
                self.conn.send(&out).await?;
            }
            tokio::task::yield_now().await;
        }
        Ok(())
    }

    /// Says at warn level which bindings the bounds leave without entities, once per change.
    fn log_left_out(&mut self, left_out: &[String]) {
        let now = (left_out.len(), left_out.first().cloned());
        if now == self.left_out {
            return;
        }
        self.left_out = now;
        if left_out.is_empty() {
            info!("MQTT: every action is announced to Home Assistant again");
            return;
        }
        let named: Vec<&str> = left_out.iter().take(5).map(String::as_str).collect();
        let more = left_out.len().saturating_sub(named.len());
        warn!(
            "MQTT: {} actions are not announced to Home Assistant: a board announces at most \
             {MAX_CONFIGS} entities and {} MiB of discovery, in config order; left out: {}{}",
            left_out.len(),
            MAX_CONFIG_BYTES / (1024 * 1024),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }

    /// The board's device as the config in force describes it.
    fn device(&self, setup: &Setup) -> Device {
        Device::new(
            &self.settings,
            &setup.config.page_title,
            &self.node,
            self.board,
        )
    }

    /// Appends a binding's current state, read from the engine as the `runAs` caller, and an
    /// event for each of its runs that finished since the last look. Nothing when that
    /// caller may no longer read it: a reload took the permission away, and the session's
    /// handling of that reload is about to empty the state topic, so nothing (not even
    /// "never run") is published for it meanwhile.
    fn push_state(&mut self, out: &mut Vec<u8>, binding: &str) {
        let Some(look) = self.runs.look(self.engine, binding, &self.caller) else {
            return;
        };
        self.conn
            .push(out, &self.node.state(binding), look.state.as_bytes());
        let topic = self.node.event(binding);
        for event in look.events {
            self.conn.push_as(out, &topic, event.as_bytes(), false);
        }
    }

    async fn publish_states(&mut self, changed: Changed) -> Result<(), Lost> {
        let ids: Vec<String> = match changed {
            Changed::All => self.states.iter().cloned().collect(),
            Changed::These(ids) => ids
                .into_iter()
                .filter(|id| self.states.contains(id))
                .collect(),
        };
        self.send_states(&ids).await
    }

    /// After a reload: changed and new configs re-published, removed ones emptied, nothing
    /// that is the same sent again; states for bindings that gained one, emptied for those
    /// that lost it. A reload that comes in meanwhile cuts this one short: the session's loop
    /// then takes it, and the newest setup is published from what was sent so far.
    async fn reload(&mut self, reloads: &watch::Receiver<u64>) -> Result<(), Lost> {
        let setup = self.engine.setup();
        let (built, changes) = self.build(&self.configs).await?;
        self.log_left_out(&built.left_out);
        if !self.send_configs(changes, Some(reloads)).await? {
            return Ok(());
        }
        let states = discovery::bindings(&built.entities, |e| e.state);
        let gone: Vec<String> = self.states.difference(&states).cloned().collect();
        for chunk in gone.chunks(CHUNK_MESSAGES) {
            let mut out = Vec::new();
            for b in chunk {
                self.conn.push(&mut out, &self.node.state(b), b"");
            }
            self.conn.send(&out).await?;
        }
        self.runs.keep_only(&states);
        let new: Vec<String> = states.difference(&self.states).cloned().collect();
        self.states = states;
        self.buttons = discovery::bindings(&built.entities, |e| e.button);
        self.send_states(&new).await?;
        log_entities(&setup, &built.entities, &self.node);
        Ok(())
    }

    async fn incoming(&mut self, packet: Incoming) -> Result<(), Lost> {
        self.last_rx = Instant::now();
        match packet {
            Incoming::Publish(p) => {
                if let Some(id) = p.id {
                    let mut out = Vec::new();
                    codec::puback(&mut out, id);
                    self.conn.send(&out).await?;
                    if !first_delivery(&mut self.acked, id, p.dup) {
                        return Ok(());
                    }
                }
                self.published(p).await
            }
            Incoming::SubAck { codes, .. } => {
                for (filter, code) in self.node.filters().iter().zip(codes) {
                    if code == 0x80
                        && let Some(more) = ratelog::MQTT_SUBSCRIPTION.admit()
                    {
                        warn!(
                            "MQTT: the broker refused the subscription to {filter}; check \
                             its access rules for user {:?}{more}",
                            self.settings.username.as_deref().unwrap_or("(none)")
                        );
                    }
                }
                Ok(())
            }
            Incoming::TooLarge { len, .. } => {
                if let Some(more) = ratelog::MQTT_TOO_LARGE.admit() {
                    warn!("MQTT: skipped a message of {len} bytes (at most {MAX_INCOMING}){more}");
                }
                Ok(())
            }
            Incoming::ConnAck { .. } => Err(Lost::SecondConnAck),
            Incoming::PubAck(_) | Incoming::UnsubAck(_) | Incoming::PingResp => Ok(()),
        }
    }

    /// A message on one of our subscriptions.
    async fn published(&mut self, p: codec::Publish) -> Result<(), Lost> {
        if let Some(binding) = self.node.pressed(&p.topic) {
            let binding = binding.to_string();
            self.press(&binding, &p);
            return self.clear_press(&p).await;
        }
        let stale = p.retain
            && !p.payload.is_empty()
            && ((self.node.is_config(&p.topic) && !self.configs.contains_key(&p.topic))
                || self
                    .node
                    .state_of(&p.topic)
                    .is_some_and(|b| !self.states.contains(b)));
        if stale {
            // A retained message of ours for an entity that no longer exists (removed while
            // actiond was stopped, or under another runAs): delete it.
            if let Some(more) = ratelog::MQTT_STALE.admit() {
                debug!(topic = %p.topic, "clearing a stale retained message{more}");
            }
            let mut out = Vec::new();
            self.conn.push(&mut out, &p.topic, b"");
            return self.conn.send(&out).await;
        }
        let theirs = || discovery::digest(&String::from_utf8_lossy(&p.payload));
        // Another client's discovery message under this node where actiond has none, written
        // while actiond is connected (so it arrives live, unmarked): someone else's entity on
        // the board's device. Deleted at once, as one found at connection is; a copy of ours
        // that a newer message replaced is not another client's.
        if self.node.is_config(&p.topic)
            && !p.retain
            && !p.payload.is_empty()
            && !self.configs.contains_key(&p.topic)
            && !self.forgotten.contains(&p.topic)
            && !self
                .superseded
                .contains(&(discovery::digest(&p.topic), theirs()))
        {
            if let Some(more) = ratelog::MQTT_OVERWRITTEN.admit() {
                warn!(
                    topic = %p.topic,
                    "MQTT: another client of the broker wrote a discovery message under this \
                     node, where actiond announces nothing; deleting it{more}"
                );
            }
            let mut out = Vec::new();
            self.conn.push(&mut out, &p.topic, b"");
            return self.conn.send(&out).await;
        }
        // A message marked retained is the broker's copy from before this session, replayed
        // as it subscribed and since replaced by the full publish; another client's write
        // while actiond is connected arrives live, unmarked.
        if self.node.is_config(&p.topic)
            && !p.retain
            && let Some(&ours) = self.configs.get(&p.topic)
            && theirs() != ours
            && !self
                .superseded
                .contains(&(discovery::digest(&p.topic), theirs()))
        {
            self.overwritten(&p.topic);
            return Ok(());
        }
        if p.topic == self.node.ha_status()
            && p.payload == ONLINE.as_bytes()
            && self
                .last_full
                .is_none_or(|t| t.elapsed() >= REPUBLISH_AT_MOST_EVERY)
        {
            info!("MQTT: Home Assistant came online; publishing discovery again");
            return self.full_publish().await;
        }
        Ok(())
    }

    /// Another client wrote one of this node's discovery messages (a button's name, its press
    /// topic, its device could now be anyone's): forgotten as sent, so the next repair's diff
    /// puts ours back.
    fn overwritten(&mut self, topic: &str) {
        self.configs.remove(topic);
        self.forgotten.insert(topic.to_string());
        if let Some(more) = ratelog::MQTT_OVERWRITTEN.admit() {
            warn!(
                %topic,
                "MQTT: another client of the broker wrote this node's discovery message; \
                 publishing ours again (two actiond with one nodeId do this too){more}"
            );
        }
        if self.repair_at.is_none() {
            let now = Instant::now();
            let next = self.last_repair.map(|t| t + REPUBLISH_AT_MOST_EVERY);
            self.repair_at = Some(next.map_or(now, |n| n.max(now)));
        }
    }

    /// Puts back the discovery messages forgotten as overwritten: the diff from what the
    /// broker holds of ours.
    async fn repair(&mut self) -> Result<(), Lost> {
        self.repair_at = None;
        self.last_repair = Some(Instant::now());
        let (_, changes) = self.build(&self.configs).await?;
        self.send_configs(changes, None).await?;
        self.forgotten.clear();
        Ok(())
    }

    /// Deletes any retained copy of a message taken on a press topic, run or refused: an
    /// empty retained message on the topic. A broker replays a retained copy at every
    /// subscription, and a bridge hands the central broker's copy on as a live message (its
    /// retain flag cleared) at every reconnection of the bridge, where it would run again;
    /// deleted on actiond's broker, the copy is deleted on the central one too through a
    /// bridge that carries the press topics `both` ways. Sent for every message but an empty
    /// one (which is this deletion coming back, or someone else's): whether a live message had
    /// a retained copy cannot be told, and the deletion is a few bytes per message taken.
    async fn clear_press(&mut self, p: &codec::Publish) -> Result<(), Lost> {
        if p.payload.is_empty() {
            return Ok(());
        }
        let mut out = Vec::new();
        self.conn.push(&mut out, &p.topic, b"");
        self.conn.send(&out).await
    }

    /// A press: only a button's topic, only `PRESS`, never a retained message; then the
    /// engine's one start path decides, as the `runAs` caller.
    fn press(&mut self, binding: &str, p: &codec::Publish) {
        // An empty message is how a retained press is cleared (the broker hands it on to
        // those subscribed at the time, as a plain message): nothing to run or to say.
        if p.payload.is_empty() {
            return;
        }
        if p.retain {
            if let Some(more) = ratelog::MQTT_RETAINED_PRESS.admit() {
                warn!(
                    "MQTT: ignored a retained press of {binding}: a retained press would run \
                     again at every reconnection; deleting it from the broker{more}"
                );
            }
            return;
        }
        if p.payload != PRESS.as_bytes() {
            if let Some(more) = ratelog::MQTT_BAD_PAYLOAD.admit() {
                warn!(
                    "MQTT: ignored a message on the press topic of {binding}: the payload is \
                     not {PRESS}{more}"
                );
            }
            return;
        }
        if !self.buttons.contains(binding) {
            if let Some(more) = ratelog::MQTT_REFUSED_PRESS.admit() {
                warn!(
                    "MQTT: refused a press of {binding}: it has no button for user {:?} (not \
                     an action it may run, hidden, or it needs input){more}",
                    self.caller.username
                );
            }
            return;
        }
        let req = StartRequest {
            binding_id: binding.to_string(),
            ..StartRequest::default()
        };
        match self.engine.start(req, &self.caller) {
            Ok(exec) => debug!(action = %binding, id = %exec.tracking_id, "pressed over MQTT"),
            Err(e) => {
                if let Some(more) = ratelog::MQTT_REFUSED_PRESS.admit() {
                    warn!("MQTT: refused a press of {binding}: {e}{more}");
                }
            }
        }
    }

    /// The `mqtt` section changed to something this connection cannot serve: when the
    /// board moves (another broker, node id or prefix), its entities are deleted where they
    /// were; then the connection is closed.
    async fn close(mut self) -> Ended {
        let config = self.engine.config();
        let moved = config.mqtt.as_ref().is_none_or(|new| {
            (
                new.host.as_str(),
                new.port,
                &new.discovery_prefix,
                &new.node_id,
            ) != (
                self.settings.host.as_str(),
                self.settings.port,
                &self.settings.discovery_prefix,
                &self.settings.node_id,
            )
        });
        let mut out = Vec::new();
        if moved {
            info!(
                "MQTT: the mqtt settings changed; removing node {} from {}",
                self.node.id(),
                self.settings.broker
            );
            for topic in self.configs.keys().cloned().collect::<Vec<_>>() {
                self.conn.push(&mut out, &topic, b"");
            }
            for b in self.states.clone() {
                self.conn.push(&mut out, &self.node.state(&b), b"");
            }
            self.conn.push(&mut out, &self.node.availability(), b"");
        }
        codec::disconnect(&mut out);
        self.conn.end(&out).await;
        Ended::Reconfigured
    }

    /// actiond is stopping: the last states, `offline`, DISCONNECT.
    async fn farewell(mut self) -> Ended {
        if let Some(changed) = self.watch.take() {
            let _ = self.publish_states(changed).await;
        }
        let mut out = Vec::new();
        self.conn
            .push(&mut out, &self.node.availability(), OFFLINE.as_bytes());
        codec::disconnect(&mut out);
        self.conn.end(&out).await;
        Ended::Stopped
    }
}

/// A packet by its kind and size, never its content.
fn describe(packet: &Incoming) -> String {
    match packet {
        Incoming::ConnAck { .. } => "a CONNACK".into(),
        Incoming::Publish(p) => format!(
            "a PUBLISH ({} bytes of topic, {} of payload)",
            p.topic.len(),
            p.payload.len()
        ),
        Incoming::PubAck(_) => "a PUBACK".into(),
        Incoming::SubAck { codes, .. } => format!("a SUBACK ({} codes)", codes.len()),
        Incoming::UnsubAck(_) => "an UNSUBACK".into(),
        Incoming::PingResp => "a PINGRESP".into(),
        Incoming::TooLarge { kind, len } => format!("a packet of type {kind} and {len} bytes"),
    }
}

/// How many acknowledged QoS 1 packet ids a session remembers. A broker resends a message
/// it holds no PUBACK for, which is one of the few it sent last.
const ACKED_KEPT: usize = 32;

/// Whether a QoS 1 message with packet id `id` is new, remembering it if so. actiond
/// subscribes at QoS 0, so a broker should never send QoS 1; one that does (a bridge, a buggy
/// broker) may send a message again with DUP set, and a press must not run twice for it.
/// A message without DUP is new even if its id was seen: the broker may reuse an id once it
/// holds the PUBACK.
fn first_delivery(acked: &mut VecDeque<u16>, id: u16, dup: bool) -> bool {
    if dup && acked.contains(&id) {
        return false;
    }
    acked.retain(|&seen| seen != id);
    if acked.len() == ACKED_KEPT {
        acked.pop_front();
    }
    acked.push_back(id);
    true
}

/// How many replaced discovery messages of ours a session recognises when the broker's copy
/// comes back late.
const SUPERSEDED_KEPT: usize = 256;

/// When a repair is due; never, while none is.
async fn repair_due(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The next execution changes, no sooner than `STATES_AT_MOST_EVERY` after the last publish
/// of states: what changes meanwhile waits in the watch, coalesced. Cancel-safe: the watch is
/// taken only when this returns.
async fn coalesced(watch: &ActionWatch, last: Option<Instant>) -> Changed {
    if let Some(last) = last {
        tokio::time::sleep_until(last + STATES_AT_MOST_EVERY).await;
    }
    watch.changed().await
}

/// Says at debug level what the board announces, so an operator can see why an action has no
/// button.
fn log_entities(setup: &Setup, entities: &[Entity], node: &Node) {
    debug!(
        node = node.id(),
        bindings = setup.bindings().len(),
        buttons = entities.iter().filter(|e| e.button).count(),
        states = entities.iter().filter(|e| e.state).count(),
        "MQTT entities"
    );
}

#[cfg(test)]
mod tests;
