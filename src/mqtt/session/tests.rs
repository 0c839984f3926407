//! A session against a scripted broker on loopback, on tokio's virtual clock: keep-alive,
//! the silent broker, the farewell, and the bound on Home Assistant's birth republishes.
//! The engine is a real one without a state directory; no test presses a button, so no
//! process is started.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

use super::*;
use crate::config::{Source, parse};
use crate::entities::EntitySet;
use crate::events::Bus;
use crate::executor::Reaper;
use crate::store::Store;

const CONFIG: &str = "
mqtt: {broker: b}
actions:
  - {id: plain, title: Plain, shell: 'true'}
";

/// A packet the client sent: its type (the fixed header's high nibble) and, for a PUBLISH,
/// its topic and payload.
#[derive(Debug)]
struct Sent {
    kind: u8,
    topic: String,
    payload: Vec<u8>,
}

const PUBLISH: u8 = 3;
const PINGREQ: u8 = 12;
const DISCONNECT: u8 = 14;

/// The broker's end of the connection.
struct Broker(TcpStream);

impl Broker {
    async fn next(&mut self) -> Sent {
        let first = self.0.read_u8().await.expect("a packet");
        let (mut len, mut shift) = (0usize, 0);
        loop {
            let b = self.0.read_u8().await.expect("its length");
            len |= usize::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let mut body = vec![0; len];
        self.0.read_exact(&mut body).await.expect("its body");
        let kind = first >> 4;
        let (mut topic, mut payload) = (String::new(), Vec::new());
        if kind == PUBLISH {
            let n = usize::from(u16::from_be_bytes([body[0], body[1]]));
            topic = String::from_utf8(body[2..2 + n].to_vec()).unwrap();
            // QoS 1 and 2 carry a packet id after the topic.
            let id = if first & 0x06 != 0 { 2 } else { 0 };
            payload = body[2 + n + id..].to_vec();
        }
        Sent {
            kind,
            topic,
            payload,
        }
    }

    /// The next packet that is not part of a full publish (SUBSCRIBE, configs, states).
    async fn next_other_than_configs(&mut self) -> Sent {
        loop {
            let p = self.next().await;
            let ours =
                p.kind == PUBLISH && (p.topic.ends_with("/config") || p.topic.ends_with("/state"));
            if !ours && p.kind != 8 {
                return p;
            }
        }
    }

    /// Reads until the `online` that ends a full publish.
    async fn until_online(&mut self, node: &Node) {
        loop {
            let p = self.next().await;
            if p.kind == PUBLISH && p.topic == node.availability() && p.payload == ONLINE.as_bytes()
            {
                return;
            }
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.0.write_all(bytes).await.unwrap();
    }
}

struct Harness {
    engine: Arc<Engine>,
    watch: Arc<ActionWatch>,
    settings: Mqtt,
    node: Node,
    board: Board,
    listener: TcpListener,
}

async fn harness() -> Harness {
    let config = Arc::new(
        parse(CONFIG, Source::Embedded, "/".into(), &|_| None)
            .unwrap_or_else(|(e, _)| panic!("{e:?}"))
            .0,
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut settings = config.mqtt.clone().unwrap();
    settings.host = "127.0.0.1".into();
    settings.port = listener.local_addr().unwrap().port();
    let bus = Arc::new(Bus::new(8, 64, crate::api::encode_event));
    let watch = bus.watch_actions();
    let engine = Engine::new(
        config,
        EntitySet::default(),
        Arc::new(Reaper::default()),
        bus,
        &Store::new(None),
        Vec::new(),
    );
    Harness {
        engine,
        watch,
        settings,
        node: Node::new("homeassistant", "sessiontest"),
        board: Board::default(),
        listener,
    }
}

/// Connects a session to the harness's broker, which accepts it with a CONNACK; the session
/// serves on its own task until `stop` says so.
async fn serve(
    h: &Harness,
    stop: watch::Receiver<bool>,
) -> (Broker, tokio::task::JoinHandle<(Ended, Instant)>) {
    let accept = async {
        let (stream, _) = h.listener.accept().await.unwrap();
        let mut broker = Broker(stream);
        assert_eq!(broker.next().await.kind, 1, "CONNECT first");
        broker.send(&[0x20, 0x02, 0x00, 0x00]).await;
        broker
    };
    let (conn, broker) = tokio::join!(connect(&h.settings, &h.node), accept);
    let conn = conn.expect("connects");
    let (engine, watch, settings, node, board) = (
        Arc::clone(&h.engine),
        Arc::clone(&h.watch),
        h.settings.clone(),
        h.node.clone(),
        h.board.clone(),
    );
    let session = tokio::spawn(async move {
        let mut stop = stop;
        let mut reloads = engine.setup_changes();
        let session = Session::new(&engine, &watch, settings, node, conn, &board);
        let ended = session.serve(&mut reloads, &mut stop, |_, _| true).await;
        (ended, Instant::now())
    });
    (broker, session)
}

#[tokio::test(start_paused = true)]
async fn a_silent_broker_is_pinged_every_ten_seconds_and_dropped_after_forty_five() {
    let h = harness().await;
    let (_stop, stopping) = watch::channel(false);
    let (mut broker, session) = serve(&h, stopping).await;
    let begun = Instant::now();
    broker.until_online(&h.node).await;
    for n in 1..=4u64 {
        let p = broker.next_other_than_configs().await;
        assert_eq!(p.kind, PINGREQ);
        assert_eq!(begun.elapsed().as_secs(), 10 * n);
    }
    let (ended, at) = session.await.unwrap();
    let Ended::Lost(why) = ended else {
        panic!("the session should be lost")
    };
    assert_eq!(why.to_string(), "no answer from the broker for 45 s");
    // The first look after 45 s of silence: the fifth tick.
    assert_eq!((at - begun).as_secs(), 50);
}

#[tokio::test(start_paused = true)]
async fn a_broker_that_answers_pings_keeps_the_session_and_a_stop_says_offline() {
    let h = harness().await;
    let (stop, stopping) = watch::channel(false);
    let (mut broker, session) = serve(&h, stopping).await;
    broker.until_online(&h.node).await;
    for _ in 0..10 {
        assert_eq!(broker.next_other_than_configs().await.kind, PINGREQ);
        broker.send(&[0xd0, 0x00]).await;
    }
    // 100 s on the virtual clock, well past 45: every PINGRESP counted as an answer.
    stop.send(true).unwrap();
    let farewell = broker.next_other_than_configs().await;
    assert_eq!(
        (
            farewell.kind,
            farewell.topic.as_str(),
            &farewell.payload[..]
        ),
        (PUBLISH, h.node.availability().as_str(), OFFLINE.as_bytes())
    );
    assert_eq!(broker.next().await.kind, DISCONNECT);
    assert!(matches!(session.await.unwrap().0, Ended::Stopped));
}

#[tokio::test(start_paused = true)]
async fn home_assistant_births_republish_at_most_every_five_seconds() {
    let h = harness().await;
    let (_stop, stopping) = watch::channel(false);
    let (mut broker, _session) = serve(&h, stopping).await;
    broker.until_online(&h.node).await;
    let begun = Instant::now();
    let mut birth = Vec::new();
    codec::publish(
        &mut birth,
        &h.node.ha_status(),
        ONLINE.as_bytes(),
        QoS::AtMostOnce,
        false,
        0,
    )
    .unwrap();
    // At once: the full publish that opened the session is fresh, so nothing is sent again
    // (the next packet is the first ping, 10 s in).
    broker.send(&birth).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    broker.send(&birth).await;
    assert_eq!(broker.next_other_than_configs().await.kind, PINGREQ);
    assert_eq!(begun.elapsed().as_secs(), 10);
    // Five seconds after the last full publish: published again, ending with `online`.
    broker.send(&[0xd0, 0x00]).await;
    broker.send(&birth).await;
    broker.until_online(&h.node).await;
    assert_eq!(begun.elapsed().as_secs(), 10);
}

#[test]
fn a_qos1_message_sent_again_marked_dup_is_taken_once() {
    let mut acked = VecDeque::new();
    // (id, DUP, new?)
    let table = [
        (7, false, true),
        (7, true, false),
        (8, true, true),
        (7, false, true),
        (7, true, false),
    ];
    for (id, dup, new) in table {
        assert_eq!(
            first_delivery(&mut acked, id, dup),
            new,
            "id {id}, dup {dup}"
        );
    }
    // Only the last few ids are kept.
    for id in 100..100 + ACKED_KEPT as u16 {
        first_delivery(&mut acked, id, false);
    }
    assert_eq!(acked.len(), ACKED_KEPT);
    assert!(
        first_delivery(&mut acked, 7, true),
        "an id long gone is new again"
    );
}
