//! One IPv6 /64 is a whole household: every device of a home LAN takes its addresses from the
//! router's one prefix. These tests give loopback a few addresses of a /64 of their own (and
//! one of another /64), start the service on `[::]`, and act as a hostile device of the
//! household and as alice beside it: one device failing logins, holding connections,
//! opening guest event streams or starting slow actions must not lock the other devices of
//! the /64 out, while the /64 together is still held to a bound of its own.
//!
//! Adding the addresses needs root (`ip -6 addr replace … dev lo`), so they are ignored by a
//! plain `cargo test` and run by name by `scripts/test.sh`, which needs root; run without
//! it, they fail, saying so, rather than pass without testing anything.

use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpStream};
use std::process::Command;
use std::sync::Once;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{self, Request, Response, assert_error};
use crate::events::{EventStream, Next, assert_end_error, subscribe};
use crate::harness::{GATED, Server, config_with};
use crate::identity::cookie;
use crate::live_permissions::{ALICE_PW, BOB_PW, merge, with_identities};

/// The household's /64 (the service listens on its `::1`), and an address of another /64.
const HOME: &str = "fd30:30:a::";
const ELSEWHERE: &str = "fd30:30:b::5";

/// An address of the household: `home(0xbad)` is fd30:30:a::bad.
fn home(n: u16) -> IpAddr {
    let base: Ipv6Addr = format!("{HOME}1").parse().unwrap();
    let mut segments = base.segments();
    segments[7] = n;
    IpAddr::V6(Ipv6Addr::from(segments))
}

const ALICE: u16 = 0xa11c;
const BAD: u16 = 0xbad;
const BOB: u16 = 0xb0b;
/// The hostile device's further addresses: 0xb001, 0xb002, ...
const MORE: u16 = 0xb000;

/// Gives loopback the addresses these tests use, once per run.
fn addresses() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let mut all: Vec<String> = [1, ALICE, BAD, BOB]
            .into_iter()
            .chain((1..=4).map(|n| MORE + n))
            .map(|n| home(n).to_string())
            .collect();
        all.push(ELSEWHERE.to_string());
        for address in all {
            let out = Command::new("ip")
                .args(["-6", "addr", "replace", &format!("{address}/128")])
                .args(["dev", "lo", "nodad"])
                .output()
                .expect("run ip(8)");
            assert!(
                out.status.success(),
                "cannot add {address} to lo (these tests need root and iproute2): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    });
}

/// Starts the service on `[::]`; the tests reach it at the household's `::1`.
fn start(config: Value) -> (Server, SocketAddr) {
    addresses();
    let server = Server::start_listening(config, "[::]:0");
    let at = SocketAddr::new(home(1), server.addr.port());
    (server, at)
}

fn login(at: SocketAddr, from: IpAddr, username: &str, password: &str) -> Response {
    let body = json!({"username": username, "password": password}).to_string();
    client::send_from(
        at,
        from,
        &Request::connect("LocalUserLogin", body.as_bytes()),
    )
}

/// Logs alice in from her own address of the home /64 and hands back her session id.
fn alice_session(at: SocketAddr) -> String {
    let resp = login(at, home(ALICE), "alice", ALICE_PW);
    assert_eq!(outcome(&resp), "ok");
    resp.header("Set-Cookie")
        .and_then(|c| c.split(';').next()?.strip_prefix("svc-sid-local="))
        .expect("a session cookie")
        .to_string()
}

/// "ok", "refused" (wrong password) or the 429's message.
fn outcome(resp: &Response) -> String {
    match (resp.status, resp.json()["success"].as_bool()) {
        (200, Some(true)) => "ok".into(),
        (200, Some(false)) => "refused".into(),
        (429, _) => assert_error(resp, 429, "resource_exhausted"),
        _ => panic!("a login answered {} {}", resp.status, resp.text()),
    }
}

/// A device of the household failing 20 logins with made-up names (its address's cap)
/// keeps neither alice, who logged in from the household before, nor bob, who never did,
/// out; it stops itself. Its further addresses together meet the /64's cap, four times an
/// address's: then bob waits for the minute, alice still logs in.
#[test]
#[ignore = "needs root to add IPv6 addresses to lo; run by name by scripts/test.sh"]
fn one_device_failing_logins_does_not_lock_its_64_out() {
    let (_server, at) = start(with_identities(json!({})));
    assert_eq!(outcome(&login(at, home(ALICE), "alice", ALICE_PW)), "ok");
    for i in 0..20 {
        let name = format!("nobody{i}");
        assert_eq!(outcome(&login(at, home(BAD), &name, "x")), "refused", "{i}");
    }
    let own = outcome(&login(at, home(BAD), "bob", BOB_PW));
    assert!(own.contains("from your address"), "{own}");
    assert_eq!(outcome(&login(at, home(ALICE), "alice", ALICE_PW)), "ok");
    assert_eq!(outcome(&login(at, home(BOB), "bob", BOB_PW)), "ok");
    // bob's success made the household known for him; alice's next device too. Three more
    // addresses of the device, 20 failures each: the /64 holds 80.
    for n in 1..=3 {
        for i in 0..20 {
            let name = format!("nobody{n}-{i}");
            assert_eq!(outcome(&login(at, home(MORE + n), &name, "x")), "refused");
        }
    }
    let carol = outcome(&login(at, home(MORE + 4), "carol", "x"));
    assert!(carol.contains("IPv6 network (its /64)"), "{carol}");
    assert_eq!(outcome(&login(at, home(ALICE), "alice", ALICE_PW)), "ok");
    assert_eq!(outcome(&login(at, home(BOB), "bob", BOB_PW)), "ok");
    let elsewhere: IpAddr = ELSEWHERE.parse().unwrap();
    assert_eq!(outcome(&login(at, elsewhere, "carol", "x")), "refused");
}

/// A connection holding half a request (its head not finished), as a hostile device keeps
/// them.
fn hold(at: SocketAddr, from: IpAddr) -> TcpStream {
    use std::io::Write;
    let mut sock = client::connect_from(at, from).expect("connect");
    sock.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\n")
        .expect("half a request");
    sock
}

fn readyz(at: SocketAddr, from: IpAddr) -> Response {
    client::send_from(at, from, &Request::get("/readyz"))
}

/// A device holding its address's share of the connections leaves the other devices of
/// its /64 theirs; the /64 together holds at most a quarter of the slots, and other networks
/// keep the rest; inside the /64's quarter, a device holding it gives way to another address
/// of the /64 under an even split of it.
#[test]
#[ignore = "needs root to add IPv6 addresses to lo; run by name by scripts/test.sh"]
fn one_device_holding_its_connections_leaves_the_64_room() {
    let mut config = config_with(vec![]);
    merge(
        &mut config,
        // A long clientTimeout: the held connections must outlast a slow test machine.
        json!({"maxConnections": 32, "maxConnectionsPerAddress": 4, "clientTimeout": 120}),
    );
    let (_server, at) = start(config);
    let mut held: Vec<TcpStream> = (0..4).map(|_| hold(at, home(BAD))).collect();
    let resp = readyz(at, home(BAD));
    let message = assert_error(&resp, 429, "resource_exhausted");
    assert!(message.contains("maxConnectionsPerAddress"), "{message}");
    assert_eq!(readyz(at, home(ALICE)).status, 200);
    // A second address of the device: the /64 holds 8, a quarter of 32.
    let _more = hold_all(at, home(MORE + 1), 4);
    assert_eq!(readyz(at, ELSEWHERE.parse().unwrap()).status, 200);
    // Until the device's connections have waited on it a moment, they are requests under
    // way, and alice's address of the full /64 is refused.
    let resp = readyz(at, home(ALICE));
    if resp.status == 429 {
        let message = assert_error(&resp, 429, "resource_exhausted");
        assert!(message.contains("its /64"), "{message}");
    }
    // Then alice, under an even split of the /64's 8, takes the place of the device's
    // connection that has waited longest, of its address holding the most. Wall time: only a
    // connection that has waited 250 ms on its client gives way, and that is the clock's.
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        readyz(at, home(ALICE)).status,
        200,
        "alice is kept out by her /64"
    );
    let wait = Duration::from_millis(300);
    let closed = held
        .iter_mut()
        .map(|sock| ended(sock, wait))
        .filter(|&gone| gone)
        .count();
    assert!(closed >= 1, "none of the device's connections gave way");
}

/// `n` connections from `from` held, each half a request: one the service refused (a
/// connection of a request just answered may not have left its share yet) is made again.
fn hold_all(at: SocketAddr, from: IpAddr, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..50 {
        let mut sock = hold(at, from);
        // A refusal is the service closing the socket: a read that ends within 100 ms.
        if ended(&mut sock, Duration::from_millis(100)) {
            continue;
        }
        held.push(sock);
        if held.len() == n {
            return held;
        }
    }
    panic!("{from} could not hold {n} connections");
}

/// Whether the service closed a held connection (an end of stream, or a reset).
fn ended(sock: &mut TcpStream, wait: Duration) -> bool {
    use std::io::Read;
    sock.set_read_timeout(Some(wait)).expect("read timeout");
    let mut buf = [0u8; 512];
    loop {
        match sock.read(&mut buf) {
            Ok(0) => return true,
            // Whatever it said before closing (a 408 for the half request).
            Ok(_) => continue,
            Err(e) => {
                return !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
            }
        }
    }
}

/// A device's guest streams holding its /64's quarter of the event streams (16 of 64,
/// from four addresses) do not keep out alice's page, logged in from the same /64, nor a guest
/// page of another address of it: a stream of the device's gives way, and is told why.
#[test]
#[ignore = "needs root to add IPv6 addresses to lo; run by name by scripts/test.sh"]
fn guest_streams_of_one_device_do_not_keep_a_users_page_out() {
    let (_server, at) = start(with_identities(json!({})));
    let open = |from: IpAddr, req: &Request| {
        let stream = EventStream::start(client::connect_from(at, from).expect("connect"), req);
        stream.assert_stream_head();
        stream
    };
    let mut device: Vec<EventStream> = (1..=4)
        .flat_map(|n| (0..4).map(move |_| home(MORE + n)))
        .map(|from| open(from, &subscribe()))
        .collect();
    let sid = alice_session(at);
    let mut page = open(home(ALICE), &subscribe().header("Cookie", &cookie(&sid)));
    let mut guest_page = open(home(BOB), &subscribe());
    for (name, stream) in [
        ("alice's page", &mut page),
        ("a guest page", &mut guest_page),
    ] {
        assert!(
            matches!(stream.next(Duration::from_millis(300)), Next::Timeout),
            "{name} ended"
        );
    }
    let mut ended = 0;
    for stream in &mut device {
        if let Next::Frame(f) = stream.next(Duration::from_millis(20))
            && f.is_end()
        {
            assert_end_error(&f.json(), "resource_exhausted");
            ended += 1;
        }
    }
    assert_eq!(ended, 2, "one stream of the device for each newcomer");
}

/// The guests of one /64 are one caller of the pool of running executions: two addresses of
/// a device together run half of `maxConcurrentExecutions` (8 of 16), and alice, logged in
/// from the same /64, and a guest of another /64 still run beside them.
#[test]
#[ignore = "needs root to add IPv6 addresses to lo; run by name by scripts/test.sh"]
fn guests_of_one_64_are_one_caller_of_the_pool() {
    let mut actions: Vec<Value> = (0..10)
        .map(|i| json!({"id": format!("s{i}"), "title": format!("S{i}"), "shell": GATED}))
        .collect();
    actions.push(json!({"id": "other", "title": "Other", "shell": "echo alice"}));
    let (server, at) = start(with_identities(json!({
        "defaultPermissions": {"view": true, "exec": true, "logs": true, "kill": false},
        "accessControlLists": [
            {"name": "admins", "matchUsergroups": ["admins"], "addToEveryAction": true,
             "permissions": {"view": true, "exec": true, "logs": true, "kill": true}},
        ],
        "actions": actions,
    })));
    let call = |from: IpAddr, op: &str, body: Value, headers: &[(&str, &str)]| {
        let mut req = Request::connect(op, body.to_string().as_bytes());
        for (name, value) in headers {
            req = req.header(name, value);
        }
        let resp = client::send_from(at, from, &req);
        assert_eq!(resp.status, 200, "{op} {body}: {}", resp.text());
        resp.json()
    };
    // StartAction by the guest of `from`: the entry once it runs or was blocked.
    let press = |from: IpAddr, action: &str| {
        let id = call(from, "StartAction", json!({"actionId": action}), &[])["executionTrackingId"]
            .clone();
        crate::harness::poll_until(crate::harness::SOON, || {
            let entry = call(
                from,
                "ExecutionStatus",
                json!({"executionTrackingId": id}),
                &[],
            )["logEntry"]
                .clone();
            (entry["executionStarted"] == true || entry["executionFinished"] == true)
                .then_some(entry)
        })
        .expect("the run neither started nor was blocked")
    };
    for i in 0..9 {
        let from = home(if i % 2 == 0 { BAD } else { MORE + 1 });
        let entry = press(from, &format!("s{i}"));
        if i < 8 {
            assert_eq!(entry["blocked"], false, "s{i}: {entry}");
        } else {
            let reason = crate::harness::assert_blocked(&entry);
            assert!(
                reason.contains("8 executions of this caller are running, its share (8)"),
                "{reason}"
            );
        }
    }
    let sid = alice_session(at);
    let session = cookie(&sid);
    let run = call(
        home(ALICE),
        "StartActionAndWait",
        json!({"actionId": "other"}),
        &[("Cookie", &session)],
    );
    assert_eq!(run["logEntry"]["blocked"], false, "{run}");
    assert_eq!(run["logEntry"]["exitCode"], 0, "{run}");
    let entry = press(ELSEWHERE.parse().unwrap(), "s9");
    assert_eq!(entry["blocked"], false, "a guest of another /64: {entry}");
    std::fs::write(server.path("go"), "").expect("write go");
}
