//! A broker, or a client allowed to publish to it, that means harm: a broker that sends a
//! large PUBLISH before its CONNACK and drops every connection right after the CONNACK, and
//! two thousand presses of a busy button. A small fake broker written here speaks just
//! enough MQTT 3.1.1 for that (no real broker would misbehave on purpose), so these tests
//! need no mosquitto and always run.
//!
//! What must hold: no byte of a packet reaches the log, the reconnections slow down (the
//! backoff is not reset by a session that did not last), the log holds a handful of lines
//! whatever the flood, and the button's state is published a few times, not once per press.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{GATED, Server, UNTIL_STOPPED, poll_until, repeat_for, wait_until};

fn packet(first: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![first];
    let mut len = body.len();
    loop {
        let mut byte = (len % 128) as u8;
        len /= 128;
        if len > 0 {
            byte |= 0x80;
        }
        out.push(byte);
        if len == 0 {
            break;
        }
    }
    out.extend_from_slice(body);
    out
}

fn publish(topic: &str, payload: &[u8]) -> Vec<u8> {
    let mut body = (topic.len() as u16).to_be_bytes().to_vec();
    body.extend_from_slice(topic.as_bytes());
    body.extend_from_slice(payload);
    packet(0x30, &body)
}

const CONNACK: [u8; 4] = [0x20, 2, 0, 0];

/// One packet: its first byte and its body.
fn read_packet(s: &mut TcpStream) -> io::Result<(u8, Vec<u8>)> {
    let mut first = [0u8; 1];
    s.read_exact(&mut first)?;
    let (mut len, mut shift) = (0usize, 0);
    loop {
        let mut b = [0u8; 1];
        s.read_exact(&mut b)?;
        len |= usize::from(b[0] & 0x7F) << shift;
        if b[0] & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    let mut body = vec![0; len];
    s.read_exact(&mut body)?;
    Ok((first[0], body))
}

/// A free loopback port and its listener, non-blocking so the broker thread can stop.
fn listen() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

fn accept(l: &TcpListener, stop: &AtomicBool) -> Option<TcpStream> {
    let accepted = poll_until(UNTIL_STOPPED, || {
        if stop.load(Ordering::SeqCst) {
            return Some(None);
        }
        l.accept().ok().map(|(s, _)| Some(s))
    })??;
    accepted.set_nonblocking(false).unwrap();
    accepted
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    Some(accepted)
}

fn config(port: u16, node: &str) -> serde_json::Value {
    json!({
        "killGracePeriod": 1,
        "mqtt": {"broker": format!("mqtt://127.0.0.1:{port}"), "nodeId": node},
        "actions": [{"id": "busy", "title": "Busy", "shell": GATED}],
    })
}

/// The first connection gets a PUBLISH of 60 KiB before any CONNACK; every later one a
/// CONNACK and then the door. That the backoff is not reset by such sessions is timed on the
/// virtual clock (tests/virtual_clock.rs).
#[test]
fn a_broker_that_publishes_before_connack_and_drops_after_it_is_logged_by_size() {
    let (listener, port) = listen();
    let stop = Arc::new(AtomicBool::new(false));
    let accepted = Arc::new(Mutex::new(Vec::<Instant>::new()));
    let broker = {
        let (stop, accepted) = (Arc::clone(&stop), Arc::clone(&accepted));
        thread::spawn(move || {
            while let Some(mut s) = accept(&listener, &stop) {
                let n = {
                    let mut a = accepted.lock().unwrap();
                    a.push(Instant::now());
                    a.len()
                };
                if read_packet(&mut s).is_err() {
                    continue;
                }
                if n == 1 {
                    let payload: Vec<u8> = (0..60 * 1024).map(|i| (i % 251) as u8).collect();
                    let _ = s.write_all(&publish("not/yours", &payload));
                } else {
                    let _ = s.write_all(&CONNACK);
                }
                // The door once the client has read what it got and answered (its next
                // packet), so a reset cannot throw away what it has not read yet.
                let _ = read_packet(&mut s);
            }
        })
    };
    let server = Server::start(config(port, "hostile"));
    assert!(
        wait_until(Duration::from_secs(30), || accepted.lock().unwrap().len()
            >= 3),
        "the client stopped reconnecting: {} connections",
        accepted.lock().unwrap().len()
    );
    stop.store(true, Ordering::SeqCst);
    broker.join().unwrap();
    let log = server.stop_and_log();
    assert!(
        log.contains("instead of a CONNACK") && log.contains("61440 of payload"),
        "the PUBLISH is not named by kind and size:\n{log}"
    );
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 1000, "a log line of {longest} bytes");
    assert!(
        !log.contains("0, 1, 2, 3"),
        "the payload's bytes reached the log"
    );
}

/// The PUBLISHes actiond sent: when, the topic, the payload.
type Seen = Arc<Mutex<Vec<(Instant, String, Vec<u8>)>>>;

/// Reads what actiond sends, answering SUBSCRIBE and PINGREQ, and keeps the PUBLISHes.
fn follow(mut s: TcpStream, seen: Seen) {
    let mut out = s.try_clone().unwrap();
    while let Ok((first, body)) = read_packet(&mut s) {
        match first >> 4 {
            8 => {
                // SUBSCRIBE: the id, then (length, filter, QoS) per filter.
                let mut at = 2;
                let mut codes = Vec::new();
                while at + 2 <= body.len() {
                    let len = usize::from(u16::from_be_bytes([body[at], body[at + 1]]));
                    at += 2 + len + 1;
                    codes.push(0u8);
                }
                let mut ack = body[..2].to_vec();
                ack.extend(codes);
                let _ = out.write_all(&packet(0x90, &ack));
            }
            3 => {
                let len = usize::from(u16::from_be_bytes([body[0], body[1]]));
                let topic = String::from_utf8_lossy(&body[2..2 + len]).into_owned();
                let qos = (first >> 1) & 3;
                let start = 2 + len + if qos > 0 { 2 } else { 0 };
                seen.lock()
                    .unwrap()
                    .push((Instant::now(), topic, body[start..].to_vec()));
            }
            12 => {
                let _ = out.write_all(&[0xD0, 0]);
            }
            _ => {}
        }
    }
}

#[test]
fn two_thousand_mqtt_presses_of_a_busy_button_cost_a_few_log_lines_and_state_publishes() {
    const PRESSES: usize = 2000;
    let Broker {
        server,
        mut conn,
        seen,
        reader,
    } = connected(
        "flood",
        json!([{"id": "busy", "title": "Busy", "shell": GATED}]),
    );
    let published = |topic: &str| -> Vec<(Instant, Vec<u8>)> {
        let seen = seen.lock().unwrap();
        seen.iter()
            .filter(|(_, t, _)| t == topic)
            .map(|(at, _, p)| (*at, p.clone()))
            .collect()
    };
    assert!(
        wait_until(Duration::from_secs(10), || {
            published("actiond/flood/availability")
                .iter()
                .any(|(_, p)| p == b"online")
        }),
        "actiond never said online"
    );
    let press = publish("actiond/flood/busy/press", b"PRESS");
    conn.write_all(&press).unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || {
            let logs = server.ok("GetLogs", json!({"startOffset": 0}));
            logs["logs"][0]["executionFinished"] == false
        }),
        "the first press did not start the button"
    );
    let flood_began = Instant::now();
    let all: Vec<u8> = press
        .iter()
        .copied()
        .cycle()
        .take(press.len() * PRESSES)
        .collect();
    conn.write_all(&all).unwrap();
    let summary = "more lines about blocked starts left out of the log";
    assert!(
        wait_until(Duration::from_secs(15), || server.log_contains(summary)),
        "no summary of the left-out lines"
    );
    let flood_took = flood_began.elapsed();
    let states = published("actiond/flood/busy/state")
        .into_iter()
        .filter(|(at, _)| *at >= flood_began)
        .count();
    std::fs::write(server.path("go"), "").unwrap();
    let log = server.stop_and_log();
    drop(conn);
    let _ = reader.join();
    let blocked = log.lines().filter(|l| l.contains("blocked: ")).count();
    eprintln!(
        "{PRESSES} presses: {blocked} log lines about them, {states} state publishes in {flood_took:?}"
    );
    // Five lines, then one per 10 s while the presses come.
    let most_lines = 5 + flood_took.as_secs() as usize / 10 + 1;
    assert!(
        blocked <= most_lines,
        "{blocked} lines about blocked starts"
    );
    // One publish per 500 ms at most while the presses come, and the last one after.
    let most = (flood_took.as_millis() / 500) as usize + 2;
    assert!(states <= most, "{states} state publishes in {flood_took:?}");
    assert!(states >= 1, "the blocked presses were never published");
}

/// The MQTT password file replaced by a FIFO: the connection is not made, the log says why,
/// and the service answers (the file is read on the event loop, so a blocking open would
/// freeze it).
#[test]
fn a_fifo_as_the_mqtt_password_file_is_refused_and_the_service_answers() {
    let (_listener, port) = listen();
    let dir = crate::harness::TempDir::new();
    let secret = dir.path().join("mqtt.secret");
    let made = std::process::Command::new("mkfifo").arg(&secret).status();
    assert!(made.unwrap().success());
    let mut config = config(port, "fifo");
    config["mqtt"]["username"] = json!("actiond");
    config["mqtt"]["passwordFile"] = json!(secret);
    let server = Server::start(config);
    assert!(
        wait_until(Duration::from_secs(10), || server
            .log_contains("cannot read passwordFile")),
        "the FIFO is not named"
    );
    assert!(server.log_shows("a FIFO (named pipe)"));
    let mut asked = 0;
    repeat_for(Duration::from_secs(10), Duration::from_millis(100), || {
        let began = Instant::now();
        let resp = crate::client::send(server.addr, &crate::client::Request::get("/readyz"));
        assert_eq!(resp.status, 200);
        assert!(began.elapsed() < Duration::from_secs(1));
        asked += 1;
        asked < 5
    });
}

/// A service whose broker is this test, connected: its CONNECT answered, and what it
/// publishes kept in `seen` by a reader thread that also answers SUBSCRIBE and PINGREQ.
struct Broker {
    server: Server,
    conn: TcpStream,
    seen: Seen,
    reader: thread::JoinHandle<()>,
}

/// Starts a service with `actions` as node `node` of this test's broker, and takes its
/// connection.
fn connected(node: &str, actions: serde_json::Value) -> Broker {
    let (listener, port) = listen();
    let stop = AtomicBool::new(false);
    let mut settings = config(port, node);
    settings["actions"] = actions;
    let server = Server::start(settings);
    let mut conn = accept(&listener, &stop).expect("actiond connects");
    read_packet(&mut conn).expect("CONNECT");
    conn.write_all(&CONNACK).unwrap();
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let (s, seen) = (conn.try_clone().unwrap(), Arc::clone(&seen));
        thread::spawn(move || follow(s, seen))
    };
    Broker {
        server,
        conn,
        seen,
        reader,
    }
}

/// A broker that sends a press at QoS 1 (actiond subscribes at QoS 0, so it should not) and
/// then the same message again marked DUP, as one does that missed the PUBACK: the button runs
/// once. A later message with the same id and no DUP is a new press and runs.
#[test]
fn a_press_the_broker_sends_again_marked_dup_runs_once() {
    let Broker {
        server,
        mut conn,
        seen,
        reader,
    } = connected(
        "dup",
        json!([{"id": "once", "title": "Once", "shell": "true"}]),
    );
    assert!(
        wait_until(Duration::from_secs(10), || {
            seen.lock()
                .unwrap()
                .iter()
                .any(|(_, t, p)| t == "actiond/dup/availability" && p == b"online")
        }),
        "actiond never said online"
    );
    let topic = "actiond/dup/once/press";
    let qos1 = |flags: u8, id: u16| {
        let mut body = (topic.len() as u16).to_be_bytes().to_vec();
        body.extend_from_slice(topic.as_bytes());
        body.extend_from_slice(&id.to_be_bytes());
        body.extend_from_slice(b"PRESS");
        packet(flags, &body)
    };
    // Runs started, and how many of them finished.
    let runs = || {
        let logs = server.ok("GetLogs", json!({"startOffset": 0}));
        let all = logs["logs"].as_array().cloned().unwrap_or_default();
        let done = all
            .iter()
            .filter(|l| l["executionFinished"] == true)
            .count();
        (all.len(), done)
    };
    conn.write_all(&qos1(0x32, 7)).unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || runs() == (1, 1)),
        "the press did not run"
    );
    conn.write_all(&qos1(0x3A, 7)).unwrap();
    // The same id again, not marked: a new message, whose run shows the DUP was read first
    // and left alone.
    conn.write_all(&qos1(0x32, 7)).unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || runs().1 >= 2),
        "the new press did not run"
    );
    assert_eq!(runs(), (2, 2), "the copy marked DUP ran");
    drop(server);
    drop(conn);
    let _ = reader.join();
}

/// Another client of the broker overwrites a button's discovery message (its name, its press
/// topic): actiond puts its own back, and one that keeps overwriting gets one repair per 5 s,
/// not one per message.
#[test]
fn a_discovery_message_another_client_overwrites_is_put_back_at_a_bounded_rate() {
    let Broker {
        server,
        mut conn,
        seen,
        reader,
    } = connected(
        "hijack",
        json!([{"id": "door", "title": "Door", "shell": "true"}]),
    );
    let configs = || -> Vec<(Instant, String, Vec<u8>)> {
        let seen = seen.lock().unwrap();
        seen.iter()
            .filter(|(_, t, _)| t.starts_with("homeassistant/") && t.ends_with("/config"))
            .cloned()
            .collect()
    };
    assert!(
        wait_until(Duration::from_secs(10), || !configs().is_empty()),
        "no discovery message"
    );
    let (_, topic, ours) = configs().remove(0);
    let sent_before = configs().len();
    // The broker hands back what actiond published (it subscribes to its own config topics):
    // its own message is no overwrite.
    conn.write_all(&publish(&topic, &ours)).unwrap();
    let evil = br#"{"name":"Door","command_topic":"actiond/other/reboot/press"}"#;
    conn.write_all(&publish(&topic, evil)).unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || configs().len() > sent_before),
        "the overwritten message was not put back"
    );
    let back = configs().pop().unwrap();
    assert_eq!(
        (&back.1, &back.2),
        (&topic, &ours),
        "not ours that came back"
    );
    assert!(server.log_shows("another client of the broker wrote this node's discovery"));
    // A client that overwrites it 50 times at once: at most one more repair per 5 s.
    let burst = Instant::now();
    for _ in 0..50 {
        conn.write_all(&publish(&topic, evil)).unwrap();
    }
    let repairs = || configs().iter().filter(|(at, ..)| *at >= burst).count();
    repeat_for(Duration::from_secs(7), Duration::from_millis(100), || {
        assert!(repairs() <= 3, "{} repairs for 50 overwrites", repairs());
        true
    });
    assert!(repairs() >= 1, "the overwrites were not repaired");
    drop(server);
    drop(conn);
    let _ = reader.join();
}

/// A broker that never closes its side after actiond's DISCONNECT, and keeps sending, while
/// the board moves to another broker: actiond reads what it sends (a socket closed with bytes
/// unread resets the connection, and a broker drops what it had not processed) for at most
/// its linger, 1 s, then closes. Without the bound the old session would stay open as long as
/// the broker talked. (At a stop, the whole farewell has half a second.)
#[test]
fn a_broker_that_never_closes_after_disconnect_is_read_for_the_linger_only() {
    let (listener, port) = listen();
    let (second, second_port) = listen();
    let stop = Arc::new(AtomicBool::new(false));
    // When the DISCONNECT came, and when the broker's writes first failed (actiond closed).
    let times = Arc::new(Mutex::new((None::<Instant>, None::<Instant>)));
    let broker = {
        let (stop, times) = (Arc::clone(&stop), Arc::clone(&times));
        thread::spawn(move || {
            let Some(mut s) = accept(&listener, &stop) else {
                return;
            };
            if read_packet(&mut s).is_err() {
                return;
            }
            s.write_all(&CONNACK).unwrap();
            loop {
                match read_packet(&mut s) {
                    Ok((0xE0, _)) => break,
                    Ok(_) => {}
                    Err(_) => return,
                }
            }
            times.lock().unwrap().0 = Some(Instant::now());
            // PINGRESP after PINGRESP, never a close.
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if s.write_all(&[0xD0, 0]).is_err() {
                    times.lock().unwrap().1 = Some(Instant::now());
                    return;
                }
                thread::sleep(Duration::from_millis(20));
            }
        })
    };
    // The broker the board moves to: a CONNACK, then it listens.
    let new_broker = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            if let Some(mut s) = accept(&second, &stop)
                && read_packet(&mut s).is_ok()
            {
                let _ = s.write_all(&CONNACK);
                while !stop.load(Ordering::SeqCst) && read_packet(&mut s).is_ok() {}
            }
        })
    };
    let server = Server::start(config(port, "lingering"));
    assert!(
        wait_until(Duration::from_secs(10), || server
            .log_contains("MQTT: connected to")),
        "actiond did not connect"
    );
    std::fs::write(
        server.path("config.yaml"),
        crate::harness::to_yaml(&config(second_port, "lingering")),
    )
    .unwrap();
    assert!(
        wait_until(Duration::from_secs(15), || times
            .lock()
            .unwrap()
            .1
            .is_some()),
        "actiond never closed the old connection: {:?}",
        times.lock().unwrap()
    );
    let (disconnected, closed) = *times.lock().unwrap();
    let held = closed
        .unwrap()
        .duration_since(disconnected.expect("no DISCONNECT"));
    // The bound is 1 s; a loaded machine adds to it, never takes from it.
    assert!(
        held >= Duration::from_millis(900) && held < Duration::from_secs(8),
        "the connection was closed {held:?} after the DISCONNECT"
    );
    stop.store(true, Ordering::SeqCst);
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    broker.join().unwrap();
    new_broker.join().unwrap();
}
