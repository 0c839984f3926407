//! Hostile and careless clients against the bounds of a thousand idle connections,
//! clients that send their headers a byte at a time, oversized bodies, login floods, password
//! hashing floods and an event subscriber that never reads. Each test asserts the bound
//! itself where the operating system shows it (descriptors and memory of the service in
//! /proc) and, above all, that the service keeps doing its job for everyone else meanwhile:
//! readiness answers and actions run.
//!
//! Every wait is bounded. The connection test holds up to a thousand sockets in this process;
//! it reads the descriptor limit from /proc/self/limits and holds fewer when the limit is low
//! (saying so), because raising it would need nix's `resource` feature.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{self, Conn, Request, Response, assert_error, assert_json_error};
use crate::events::{EventStream, Next, connect_with_small_window, subscribe};
use crate::harness::{
    Server, UNTIL_STOPPED, config_with, fd_count, repeat_for, send_together, shell_action, vm_kib,
    wait_until,
};
use crate::identity::phc;

/// Only a hang detector.
const HANG: Duration = Duration::from_secs(15);

/// How long a readiness call may take while the service is under attack. Far above its
/// normal time (about a millisecond), far below what a service stuck behind the attack
/// would take.
const RESPONSIVE: Duration = Duration::from_secs(2);

/// A config with one harmless action and the given top-level keys.
fn config(extra: Value) -> Value {
    let mut config = config_with(vec![shell_action("hello", "echo hello")]);
    let (Value::Object(base), Value::Object(extra)) = (&mut config, extra) else {
        panic!("configs are mappings");
    };
    base.extend(extra);
    config
}

/// GetReadyz on a fresh connection; returns how long it took. Panics unless it answers 200.
fn readyz(addr: SocketAddr) -> Duration {
    let began = Instant::now();
    let resp = client::send(addr, &Request::connect("GetReadyz", b"{}"));
    assert_eq!(resp.status, 200, "GetReadyz: {}", resp.text());
    began.elapsed()
}

/// A thread that keeps checking, until `stop` is set, that the service answers readiness
/// and runs `hello`; returns the slowest call it saw and how many rounds it made.
fn keep_checking(addr: SocketAddr, stop: Arc<AtomicBool>) -> thread::JoinHandle<(Duration, usize)> {
    thread::spawn(move || {
        let mut slowest = Duration::ZERO;
        let rounds = repeat_for(UNTIL_STOPPED, Duration::from_millis(20), || {
            if stop.load(Ordering::SeqCst) {
                return false;
            }
            slowest = slowest.max(readyz(addr));
            let began = Instant::now();
            let (status, body) =
                client::connect_json(addr, "StartActionAndWait", &json!({"actionId": "hello"}));
            slowest = slowest.max(began.elapsed());
            assert_eq!(status, 200, "StartActionAndWait under attack: {body}");
            assert_eq!(body["logEntry"]["stdout"], "hello\n", "{body}");
            true
        });
        (slowest, rounds - 1)
    })
}

/// Stops a checker and asserts what it saw.
fn assert_kept_answering(stop: &AtomicBool, checker: thread::JoinHandle<(Duration, usize)>) {
    stop.store(true, Ordering::SeqCst);
    let (slowest, rounds) = checker.join().expect("checker thread");
    eprintln!("checker: {rounds} rounds, slowest call {slowest:?}");
    assert!(rounds > 0, "the checker never completed a round");
    assert!(
        slowest < RESPONSIVE,
        "a readiness or start call took {slowest:?} under attack"
    );
}

// ---------------------------------------------------------------------------------------
// Connections

/// The soft RLIMIT_NOFILE of this process, from /proc/self/limits.
fn open_files_limit() -> usize {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("read /proc/self/limits");
    limits
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("Max open files")?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .unwrap_or(1024)
}

/// Reads a held connection until the service closes it; `Some(first bytes)` once closed
/// (possibly after a 408 answer), `None` if it is still open at `deadline`.
fn closed_by_server(sock: &mut TcpStream, deadline: Instant) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        sock.set_read_timeout(Some(left)).expect("read timeout");
        let mut buf = [0u8; 1024];
        match sock.read(&mut buf) {
            Ok(0) => return Some(got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return None;
            }
            Err(_) => return Some(got),
        }
    }
}

#[test]
fn idle_connections_beyond_max_connections_wait_and_are_all_dropped_by_the_header_timeout() {
    // 250 slots and a thousand idle clients: four rounds of one header timeout each. (With 64
    // slots it would be sixteen rounds, far too long for one test; the bound is the same.)
    const MAX_CONNECTIONS: usize = 250;
    const WANTED: usize = 1000;
    let limit = open_files_limit();
    // Leave room for the rest of the suite, which runs in this process at the same time.
    let held_count = if limit >= WANTED + 1024 {
        WANTED
    } else {
        limit / 2
    };
    if held_count < WANTED {
        eprintln!("RLIMIT_NOFILE is {limit}: holding {held_count} connections instead of {WANTED}");
    }
    let server = Server::start(config(json!({
        "maxConnections": MAX_CONNECTIONS,
        "headerReadTimeout": 1,
    })));
    // Settle: one call, so lazily opened descriptors exist before the baseline is taken.
    readyz(server.addr);
    let pid = server.pid();
    let baseline = fd_count(pid);

    // The clients connect one after the other and then send nothing. A connection the
    // service has no slot for waits in the kernel's accept queue; once that is full too, the
    // kernel drops the client's SYN and the client retries, so a connect can take seconds.
    let began = Instant::now();
    let connector = thread::spawn({
        let addr = server.addr;
        move || {
            let mut slowest = Duration::ZERO;
            let held: Vec<TcpStream> = (0..held_count)
                .map(|i| {
                    let began = Instant::now();
                    let sock = TcpStream::connect_timeout(&addr, HANG)
                        .unwrap_or_else(|e| panic!("connection {i} of {held_count}: {e}"));
                    slowest = slowest.max(began.elapsed());
                    sock
                })
                .collect();
            (held, slowest)
        }
    });
    // The service never holds more than MAX_CONNECTIONS sockets, however many clients wait.
    let mut most = 0;
    wait_until(HANG * 2, || {
        most = most.max(fd_count(pid));
        connector.is_finished()
    });
    let (mut held, slowest_connect) = connector.join().expect("connector thread");
    let connected = began.elapsed();

    // A fresh client asks for readiness: it waits behind the held connections, and is
    // answered once the header timeout has cleared the ones before it.
    let probe = thread::spawn({
        let addr = server.addr;
        move || {
            let began = Instant::now();
            let resp = client::send(addr, &Request::connect("GetReadyz", b"{}"));
            (resp.status, began.elapsed())
        }
    });
    wait_until((HANG * 3).saturating_sub(began.elapsed()), || {
        most = most.max(fd_count(pid));
        probe.is_finished()
    });
    let (status, waited) = probe.join().expect("probe thread");
    eprintln!(
        "{held_count} idle clients connected within {connected:?} (slowest connect \
         {slowest_connect:?}); descriptors: baseline {baseline}, at most {most}; the probe \
         was answered after {waited:?}"
    );
    // The slots, and the one newcomer accepted to be judged while every slot is taken (it
    // waits for the connection closed to make room, or is refused).
    assert!(
        most <= baseline + MAX_CONNECTIONS + 1,
        "the service held {} connections at once, more than maxConnections {MAX_CONNECTIONS} \
         and the newcomer being judged",
        most - baseline
    );
    assert!(
        most >= baseline + MAX_CONNECTIONS / 2,
        "the service never took the connections it had room for (at most {most} descriptors, \
         baseline {baseline})"
    );
    assert_eq!(status, 200, "the probe behind the idle connections");
    // Each round of MAX_CONNECTIONS idle clients costs one header timeout; the probe came
    // last, so it waits for what is left of them at most.
    let rounds = held_count.div_ceil(MAX_CONNECTIONS) as u64;
    assert!(
        connected + waited <= Duration::from_secs(rounds + 4),
        "{held_count} idle clients and the probe behind them took {:?} ({rounds} rounds of 1 s)",
        connected + waited
    );

    // Every idle connection was closed by the service, none left hanging.
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut answered_408 = 0;
    for (i, sock) in held.iter_mut().enumerate() {
        let got = closed_by_server(sock, deadline)
            .unwrap_or_else(|| panic!("idle connection {i} is still open"));
        if got.starts_with(b"HTTP/1.1 408") {
            answered_408 += 1;
        } else {
            assert!(
                got.is_empty(),
                "idle connection {i} got {:?}",
                String::from_utf8_lossy(&got)
            );
        }
    }
    eprintln!("{answered_408} of {held_count} idle connections got a 408 before the close");
    drop(held);

    // The service works as before, and holds no connection it no longer needs.
    let entry = server.run("hello");
    assert_eq!(entry["stdout"], "hello\n", "{entry}");
    let back = wait_until(HANG, || fd_count(pid) <= baseline);
    assert!(
        back,
        "descriptors did not return to {baseline}: {}",
        fd_count(pid)
    );
}

/// Sends `bytes` one at a time, `gap` apart, until done or the socket fails.
fn trickle(mut sock: TcpStream, bytes: &'static [u8], gap: Duration) {
    for b in bytes {
        if sock.write_all(&[*b]).is_err() {
            return;
        }
        // Wall time: a slow client is one whose bytes come apart in time, and the header
        // timeout it meets runs on the same clock.
        thread::sleep(gap);
    }
}

#[test]
fn clients_sending_headers_a_byte_at_a_time_are_dropped_after_the_header_timeout() {
    const SLOW_CLIENTS: usize = 20;
    // 35 bytes at 300 ms each would take over ten seconds.
    const REQUEST: &[u8] = b"GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let server = Server::start(config(json!({"headerReadTimeout": 1})));

    let stop = Arc::new(AtomicBool::new(false));
    let checker = keep_checking(server.addr, Arc::clone(&stop));
    let slow: Vec<_> = (0..SLOW_CLIENTS)
        .map(|_| {
            let sock =
                TcpStream::connect_timeout(&server.addr, Duration::from_secs(5)).expect("connect");
            sock.set_nodelay(true).expect("nodelay");
            let writer = sock.try_clone().expect("clone socket");
            let began = Instant::now();
            thread::spawn(move || trickle(writer, REQUEST, Duration::from_millis(300)));
            (sock, began)
        })
        .collect();
    for (i, (mut sock, began)) in slow.into_iter().enumerate() {
        let got = closed_by_server(&mut sock, began + HANG)
            .unwrap_or_else(|| panic!("slow client {i} still connected after {HANG:?}"));
        let after = began.elapsed();
        assert!(
            !got.starts_with(b"HTTP/1.1 200"),
            "slow client {i} was served: {:?}",
            String::from_utf8_lossy(&got)
        );
        // Dropped at the timeout: not before (it was sending), and not at the end of its
        // ten-second request.
        assert!(
            after >= Duration::from_millis(900) && after < Duration::from_secs(4),
            "slow client {i} was dropped after {after:?} (headerReadTimeout 1 s)"
        );
    }
    assert_kept_answering(&stop, checker);
}

// ---------------------------------------------------------------------------------------
// Bodies

#[test]
fn oversized_bodies_of_every_framing_are_refused_while_the_service_keeps_answering() {
    const LIMIT: usize = 4096;
    const SENDERS: usize = 6;
    const PER_SENDER: usize = 12;
    let server = Server::start(config(json!({"maxRequestBodyBytes": LIMIT})));
    readyz(server.addr);
    let pid = server.pid();
    let rss_before = vm_kib(pid, "VmRSS");

    let stop = Arc::new(AtomicBool::new(false));
    let checker = keep_checking(server.addr, Arc::clone(&stop));
    let big = Arc::new(vec![b' '; 1024 * 1024]);
    let senders: Vec<_> = (0..SENDERS)
        .map(|s| {
            let addr = server.addr;
            let big = Arc::clone(&big);
            thread::spawn(move || {
                for i in 0..PER_SENDER {
                    // Valid JSON once complete (whitespace around `{}`), so only the size can
                    // be the reason for a refusal.
                    let req = match (s + i) % 3 {
                        // A megabyte with its length declared.
                        0 => Request::connect("StartActionAndWait", &big),
                        // A megabyte in 64 KiB chunks, no length given.
                        1 => Request::connect("StartActionAndWait", b"")
                            .chunked(big.chunks(64 * 1024).map(<[u8]>::to_vec).collect()),
                        // A declared gigabyte of which only 64 KiB ever come.
                        _ => Request::connect("StartActionAndWait", &big[..64 * 1024])
                            .header("Content-Length", "1073741824"),
                    };
                    let resp = Conn::open(addr)
                        .try_send(&req)
                        .unwrap_or_else(|e| panic!("sender {s} request {i}: no answer: {e}"));
                    assert_error(&resp, 429, "resource_exhausted");
                }
            })
        })
        .collect();
    for s in senders {
        s.join().expect("sender thread");
    }
    assert_kept_answering(&stop, checker);
    // The bodies were counted and dropped, never kept.
    let rss_after = vm_kib(pid, "VmRSS");
    eprintln!("RSS {rss_before} KiB before, {rss_after} KiB after the oversized bodies");
    assert!(
        rss_after < rss_before + 8 * 1024,
        "RSS grew from {rss_before} KiB to {rss_after} KiB"
    );
    let entry = server.run("hello");
    assert_eq!(entry["exitCode"], 0, "{entry}");
}

// ---------------------------------------------------------------------------------------
// Logins and hashing

/// A config with the local user alice.
fn users_config() -> Value {
    config(json!({
        "authLocalUsers": {
            "enabled": true,
            "users": [{"username": "alice", "usergroup": "admins", "password": phc(ALICE_PW)}],
        },
    }))
}

const ALICE_PW: &str = "alice's abuse-test password";

fn login_request(password: &str) -> Request {
    Request::connect(
        "LocalUserLogin",
        json!({"username": "alice", "password": password})
            .to_string()
            .as_bytes(),
    )
}

/// What a login answered: `Some(success)` for a checked password, `None` for a throttled
/// attempt (429 resource_exhausted). Panics on anything else.
fn login_outcome(resp: &Response) -> Option<bool> {
    match resp.status {
        200 => Some(resp.json()["success"] == true),
        429 => {
            assert_json_error(&resp.json(), "resource_exhausted");
            None
        }
        other => panic!("LocalUserLogin answered {other}: {}", resp.text()),
    }
}

/// Logs alice in and returns her `Cookie` header value.
fn session_cookie(server: &Server) -> String {
    let resp = client::send(server.addr, &login_request(ALICE_PW));
    assert_eq!(login_outcome(&resp), Some(true), "{}", resp.text());
    let set_cookie = resp.header("Set-Cookie").expect("a session cookie");
    set_cookie
        .split(';')
        .next()
        .expect("name=value")
        .trim()
        .to_string()
}

#[test]
fn a_login_flood_from_one_address_is_throttled_after_five_while_the_service_works() {
    let server = Server::start(users_config());
    let stop = Arc::new(AtomicBool::new(false));
    let checker = keep_checking(server.addr, Arc::clone(&stop));
    let mut outcomes = Vec::new();
    for i in 0..30 {
        let resp = client::send(server.addr, &login_request(&format!("guess {i}")));
        outcomes.push(login_outcome(&resp));
    }
    let checked = outcomes.iter().filter(|o| o.is_some()).count();
    assert_eq!(
        &outcomes[..5],
        &[Some(false); 5],
        "the first five guesses are checked and refused: {outcomes:?}"
    );
    assert_eq!(checked, 5, "only five guesses may be checked: {outcomes:?}");
    // The right password is refused too while the address is throttled.
    let resp = client::send(server.addr, &login_request(ALICE_PW));
    assert_eq!(login_outcome(&resp), None, "{}", resp.text());
    assert_kept_answering(&stop, checker);
}

#[test]
fn a_concurrent_login_flood_from_one_address_gets_no_more_than_five_guesses_checked() {
    // The same rule when the guesses arrive together instead of one after the other: a
    // brute-force client opens many connections at once, and each guess that is checked is
    // a guess. Five failures in a minute lock the address, so at most five are checked.
    const GUESSES: usize = 20;
    let server = Server::start(users_config());
    let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));
    let answers = send_together(
        (0..GUESSES)
            .map(|i| {
                let conn = Conn::open_from(server.addr, from);
                (conn, login_request(&format!("concurrent guess {i}")))
            })
            .collect(),
    );
    let outcomes: Vec<Option<bool>> = answers.iter().map(login_outcome).collect();
    let checked = outcomes.iter().filter(|o| o.is_some()).count();
    eprintln!("{GUESSES} simultaneous guesses: {checked} checked, the rest throttled");
    assert!(
        outcomes.iter().all(|o| *o != Some(true)),
        "a wrong guess logged in: {outcomes:?}"
    );
    assert!(
        checked <= 5,
        "{checked} of {GUESSES} simultaneous wrong passwords from one address were checked \
         (answered success:false) instead of at most 5 before resource_exhausted: \
         {outcomes:?}"
    );
}

/// The memory of one argon2 hash with actiond's parameters (m = 19456 KiB).
const ARGON2_BLOCK_KIB: u64 = 19_456;

/// What hashing may add to the service's memory: one block, and as much again for the
/// allocator's slack. Hashing runs one at a time so that a board pays for one block only.
const ARGON2_BOUND_KIB: u64 = 2 * ARGON2_BLOCK_KIB;

#[test]
fn password_hashes_one_after_another_keep_one_argon2_block_of_memory() {
    // No concurrency at all: twelve hashes in turn. Each needs its 19 MiB block while it
    // runs; whether the service then keeps one block, or a block per hash it ever made,
    // shows in its resident memory afterwards.
    const HASHES: usize = 12;
    let server = Server::start(config(json!({})));
    readyz(server.addr);
    let pid = server.pid();
    let rss_before = vm_kib(pid, "VmRSS");
    let mut after_each = Vec::new();
    for i in 0..HASHES {
        let body = json!({"password": format!("one after another {i}")}).to_string();
        let resp = client::send(
            server.addr,
            &Request::connect("PasswordHash", body.as_bytes()),
        );
        assert_eq!(resp.status, 200, "hash {i}: {}", resp.text());
        after_each.push(vm_kib(pid, "VmRSS"));
    }
    let hwm = vm_kib(pid, "VmHWM");
    eprintln!("RSS {rss_before} KiB before; after each hash {after_each:?}; peak {hwm} KiB");
    let most = after_each.iter().copied().max().unwrap_or(0).max(hwm);
    assert!(
        most < rss_before + ARGON2_BOUND_KIB,
        "{HASHES} hashes made one after another left the service at {most} KiB resident, \
         {} KiB more than before: more than one argon2 block ({ARGON2_BLOCK_KIB} KiB) is kept",
        most - rss_before
    );
}

#[test]
fn hashing_and_login_floods_run_one_hash_at_a_time_and_block_nothing_else() {
    // One argon2 block is 19 MiB. Sixteen hashes and sixteen logins (from sixteen addresses,
    // so the throttle stays out of it) arrive together; if they ran side by side, or each
    // left its block behind, the service's peak memory would grow by hundreds of MiB.
    const CALLERS: usize = 16;
    let server = Server::start(users_config());
    // Once a local user exists, only a logged-in user may hash (identity.rs tests that).
    let cookie = session_cookie(&server);
    readyz(server.addr);
    let pid = server.pid();
    let hwm_before = vm_kib(pid, "VmHWM");

    let stop = Arc::new(AtomicBool::new(false));
    let checker = keep_checking(server.addr, Arc::clone(&stop));
    let calls = (0..2 * CALLERS)
        .map(|i| {
            if i < CALLERS {
                let body = json!({"password": format!("hash me {i}")}).to_string();
                (
                    Conn::open(server.addr),
                    Request::connect("PasswordHash", body.as_bytes()).header("Cookie", &cookie),
                )
            } else {
                let from = IpAddr::V4(Ipv4Addr::new(127, 0, 1, i as u8));
                (
                    Conn::open_from(server.addr, from),
                    login_request(&format!("wrong {i}")),
                )
            }
        })
        .collect();
    let answers = send_together(calls);
    assert_kept_answering(&stop, checker);

    let statuses: Vec<(usize, u16, Value)> = answers
        .iter()
        .enumerate()
        .map(|(i, resp)| (i, resp.status, resp.json()))
        .collect();
    let hashes = statuses
        .iter()
        .filter(|(i, s, _)| *i < CALLERS && *s == 200)
        .count();
    let busy = statuses
        .iter()
        .filter(|(i, s, _)| *i < CALLERS && *s == 429)
        .count();
    for (i, status, body) in statuses.iter() {
        match (*i < CALLERS, status) {
            (true, 200) => assert!(body["hash"].is_string(), "{body}"),
            (true, 429) => {
                assert_json_error(body, "resource_exhausted");
            }
            // A login is checked (one at a time, queued) and refused, or, beyond the places
            // of the hasher's queue (`MAX_QUEUED_VERIFICATIONS`), told busy at once.
            (false, 200) => assert_eq!(body, &json!({"success": false})),
            (false, 429) => {
                assert_json_error(body, "resource_exhausted");
            }
            _ => panic!("caller {i} got {status}: {body}"),
        }
    }
    let checked = statuses
        .iter()
        .filter(|(i, s, _)| *i >= CALLERS && *s == 200)
        .count();
    assert!(checked >= 1, "no login of {CALLERS} was checked");
    // The logins hold the one hasher in turn, so every hash may have found it busy.
    eprintln!("PasswordHash: {hashes} hashed, {busy} busy");
    assert!(busy >= 1, "{hashes} hashed, {busy} busy of {CALLERS}");
    let hwm_after = vm_kib(pid, "VmHWM");
    eprintln!("peak RSS {hwm_before} KiB before, {hwm_after} KiB after the floods");
    assert!(
        hwm_after < hwm_before + ARGON2_BOUND_KIB,
        "peak RSS grew by {} KiB during the floods: more than one argon2 block ({} KiB) at \
         a time was resident",
        hwm_after - hwm_before,
        ARGON2_BLOCK_KIB
    );
    // Busy is momentary: with the floods over, a hash is made.
    let body = json!({"password": "later"}).to_string();
    let req = Request::connect("PasswordHash", body.as_bytes()).header("Cookie", &cookie);
    let resp = client::send(server.addr, &req);
    assert_eq!(resp.status, 200, "{}", resp.text());
}

// ---------------------------------------------------------------------------------------
// Event subscribers

#[test]
fn a_subscriber_that_never_reads_costs_no_answers_and_no_memory_over_500_runs() {
    const RUNS: usize = 500;
    const THREADS: usize = 4;
    // About 2 KB per run, in a few writes, so each run is a handful of events.
    let mut chatty = shell_action(
        "chatty",
        "for i in 1 2 3 4; do printf '%0500d\\n' \"$i\"; done",
    );
    chatty["maxConcurrent"] = json!(THREADS);
    let mut config = config_with(vec![chatty, shell_action("hello", "echo hello")]);
    config["eventQueueLength"] = json!(64);
    let server = Server::start(config);
    let pid = server.pid();

    let stalled_sock = connect_with_small_window(server.addr);
    let mut stalled = EventStream::start(stalled_sock, &subscribe());
    stalled.assert_stream_head();

    let stop = Arc::new(AtomicBool::new(false));
    let checker = keep_checking(server.addr, Arc::clone(&stop));
    let rss = Arc::new(Mutex::new(Vec::new()));
    let began = Instant::now();
    let runners: Vec<_> = (0..THREADS)
        .map(|t| {
            let addr = server.addr;
            let rss = Arc::clone(&rss);
            thread::spawn(move || {
                let mut conn = Conn::open(addr);
                let req = Request::connect("StartActionAndWait", br#"{"actionId":"chatty"}"#);
                for i in 0..RUNS / THREADS {
                    let resp = conn.send(&req);
                    assert_eq!(resp.status, 200, "{}", resp.text());
                    let entry = &resp.json()["logEntry"];
                    assert_eq!(entry["exitCode"], 0, "thread {t} run {i}: {entry}");
                    assert_eq!(entry["stdout"].as_str().map(str::len), Some(4 * 501));
                    if t == 0 && i % 10 == 0 {
                        rss.lock().unwrap().push(vm_kib(pid, "VmRSS"));
                    }
                }
            })
        })
        .collect();
    for r in runners {
        r.join().expect("runner thread");
    }
    let elapsed = began.elapsed();
    assert_kept_answering(&stop, checker);
    eprintln!("{RUNS} runs with a stalled subscriber took {elapsed:?}");
    assert!(
        elapsed < Duration::from_secs(40),
        "{RUNS} runs took {elapsed:?}"
    );

    // Memory: after the first runs (buffers, history and queues filling) it stays flat.
    let samples = rss.lock().unwrap().clone();
    let warm = samples[samples.len() / 4];
    let most = samples.iter().copied().max().unwrap_or(0);
    eprintln!("RSS samples (KiB): warm {warm}, max {most}, all {samples:?}");
    assert!(
        most < warm + 8 * 1024,
        "RSS grew from {warm} KiB to {most} KiB with a stalled subscriber"
    );

    // The stalled subscriber was cut off instead of holding the events of 500 runs: what it
    // gets when it finally reads ends within a bound, with resource_exhausted or a close.
    let (frames, ending) = stalled.rest(HANG);
    let end = frames.last().filter(|f| f.is_end());
    match (end, &ending) {
        (Some(end), Next::End) => {
            let end: Value = serde_json::from_slice(&end.payload).expect("end-stream JSON");
            assert_eq!(end["error"]["code"], "resource_exhausted", "{end}");
        }
        (None, Next::Closed(_)) => {}
        // When the runs outlast the server's patience with a client that reads nothing (a
        // slow or loaded machine), the server lets the stream go: what was already handed to
        // the connection drains, then the body ends without an end-stream message, which a
        // Connect client reports as an error. Cut off all the same.
        (None, Next::End) => {}
        other => panic!(
            "the stalled subscriber was not cut off ({} frames): {other:?}",
            frames.len()
        ),
    }
    eprintln!(
        "the stalled subscriber got {} frames before it was cut off",
        frames.len()
    );
}
