//! Clients on the LAN that try to crowd out, guess or flood: slow bodies from eight addresses
//! holding every connection slot while a ninth asks for readiness; a password guessed from
//! forty addresses; a busy button pressed two thousand times while the log is counted. The
//! addresses are loopback ones (every 127.0.0.0/8 address is loopback on Linux), with
//! `trustedProxies` emptied so loopback gets no exemption.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::{Request, Response, assert_error, connect_from, send_from};
use crate::harness::{GATED, SOON, Server, UNTIL_STOPPED, fd_count, repeat_for, wait_until};
use crate::identity::{login_from, phc};

fn v4(a: u8, b: u8, c: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, a, b, c))
}

/// A connection that sends its head at once and then its body a byte every 2 s, reopened
/// as soon as the service closes it: what an attacker keeps up.
fn slow_bodies(addr: SocketAddr, from: IpAddr, count: usize, stop: Arc<AtomicBool>) -> usize {
    const HEAD: &[u8] = b"POST /api/GetReadyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\
        Content-Type: application/json\r\nConnect-Protocol-Version: 1\r\n\
        Content-Length: 1000\r\n\r\n";
    let open = || {
        let mut s = connect_from(addr, from).ok()?;
        s.write_all(HEAD).ok()?;
        s.set_nonblocking(true).ok()?;
        Some(s)
    };
    // Whether the service closed it or answered (408, 429): then it is reopened.
    let alive = |s: &mut TcpStream| {
        let mut buf = [0u8; 512];
        match s.read(&mut buf) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => s.write(b" ").is_ok(),
            _ => false,
        }
    };
    let mut socks: Vec<Option<TcpStream>> = (0..count).map(|_| None).collect();
    let mut opened = 0;
    repeat_for(UNTIL_STOPPED, Duration::ZERO, || {
        for sock in socks.iter_mut() {
            if !sock.as_mut().is_some_and(alive) {
                *sock = open();
                opened += 1;
            }
        }
        // Every 2 s, or at once when stopped.
        !wait_until(Duration::from_secs(2), || stop.load(Ordering::SeqCst))
    });
    opened
}

/// 8 addresses x 32 connections sending a body byte every 2 s hold all 256 slots (the
/// default `maxConnections`, and 32 is the default share of one address). A ninth address
/// asks for readiness all along, over three client timeouts: it must be answered within a
/// second each time, because the connection that has waited longest on its client gives way.
#[test]
fn slow_bodies_from_eight_addresses_do_not_keep_out_a_ninth() {
    let server = Server::start(json!({
        "killGracePeriod": 1,
        "trustedProxies": [],
        "actions": [{"id": "a", "title": "A", "shell": "true"}],
    }));
    let pid = server.pid();
    // Settle: one call, so lazily opened descriptors exist before the baseline is taken.
    send_from(server.addr, v4(0, 2, 1), &Request::get("/readyz"));
    let baseline = fd_count(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let attackers: Vec<_> = (0..8)
        .map(|i| {
            let (addr, stop) = (server.addr, Arc::clone(&stop));
            thread::spawn(move || slow_bodies(addr, v4(0, 1, 10 + i), 32, stop))
        })
        .collect();
    assert!(
        wait_until(SOON, || fd_count(pid) >= baseline + 250),
        "the attack never held the slots: {} descriptors over {baseline}",
        fd_count(pid) - baseline
    );
    let began = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut most = 0;
    let period = Duration::from_secs(32).saturating_sub(began.elapsed());
    let asked = repeat_for(period, Duration::from_millis(150), || {
        let t = Instant::now();
        let resp = send_from(server.addr, v4(0, 2, 1), &Request::get("/readyz"));
        let took = t.elapsed();
        assert_eq!(resp.status, 200, "readyz: {}", resp.text());
        slowest = slowest.max(took);
        most = most.max(fd_count(pid).saturating_sub(baseline));
        true
    });
    stop.store(true, Ordering::SeqCst);
    let opened: usize = attackers.into_iter().map(|a| a.join().unwrap()).sum();
    eprintln!(
        "{asked} readiness calls, the slowest {slowest:?}; the attackers opened {opened} \
         connections; the service held at most {most} beyond its baseline"
    );
    assert!(
        slowest < Duration::from_secs(1),
        "readiness took {slowest:?} behind slow bodies"
    );
    // The slots, and the one connection accepted and judged while every slot is taken.
    assert!(most <= 256 + 1, "the service held {most} connections");
}

/// Idle connections (they send nothing) from `from`, each reopened as soon as the service
/// closes it; counts the connections refused at once for holding more than an even share.
fn idle_churn(addr: SocketAddr, from: IpAddr, count: usize, stop: Arc<AtomicBool>) -> usize {
    let mut socks: Vec<Option<TcpStream>> = (0..count).map(|_| None).collect();
    let mut refused = 0;
    repeat_for(UNTIL_STOPPED, Duration::from_millis(2), || {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        for sock in socks.iter_mut() {
            let mut buf = [0u8; 1024];
            let alive = sock.as_mut().is_some_and(|s| match s.read(&mut buf) {
                Err(e) if e.kind() == ErrorKind::WouldBlock => true,
                Ok(n) => {
                    refused +=
                        usize::from(String::from_utf8_lossy(&buf[..n]).contains("even share"));
                    false
                }
                Err(_) => false,
            });
            if !alive {
                *sock = connect_from(addr, from)
                    .and_then(|s| s.set_nonblocking(true).map(|()| s))
                    .ok();
            }
        }
        true
    });
    refused
}

/// 16 addresses x 32 idle connections, each reopened as soon as it is closed: twice the 256
/// slots, so every slot is taken and the kernel's queue is never empty. A newcomer from
/// another address asking for readiness must still be answered, each time, well within the
/// client timeout; the crowd's connections beyond an even share of the slots are refused at
/// once (429) rather than each closing someone else's; and the service never holds more than
/// its slots. The timings are printed, not asserted: they measure the machine.
#[test]
fn a_crowd_reconnecting_as_fast_as_it_is_closed_does_not_keep_out_a_newcomer() {
    let server = Server::start(json!({
        "trustedProxies": [],
        "actions": [{"id": "a", "title": "A", "shell": "true"}],
    }));
    let pid = server.pid();
    send_from(server.addr, v4(0, 4, 1), &Request::get("/readyz"));
    let baseline = fd_count(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let crowd: Vec<_> = (0..16)
        .map(|i| {
            let (addr, stop) = (server.addr, Arc::clone(&stop));
            thread::spawn(move || idle_churn(addr, v4(0, 3, 10 + i), 32, stop))
        })
        .collect();
    assert!(
        wait_until(SOON, || fd_count(pid) >= baseline + 250),
        "the crowd never held the slots"
    );
    let mut took = Vec::new();
    let mut most = 0;
    repeat_for(Duration::from_secs(10), Duration::from_millis(200), || {
        let t = Instant::now();
        let resp = send_from(server.addr, v4(0, 4, 1), &Request::get("/readyz"));
        took.push(t.elapsed());
        assert_eq!(resp.status, 200, "readyz: {}", resp.text());
        most = most.max(fd_count(pid).saturating_sub(baseline));
        true
    });
    stop.store(true, Ordering::SeqCst);
    let refused: usize = crowd.into_iter().map(|c| c.join().unwrap()).sum();
    took.sort();
    let slowest = took[took.len() - 1];
    eprintln!(
        "{} readiness calls: median {:?}, slowest {slowest:?}; {refused} of the crowd's \
         connections refused for their share; at most {most} connections held",
        took.len(),
        took[took.len() / 2],
    );
    assert!(
        slowest < SOON,
        "readiness took {slowest:?} behind the crowd"
    );
    assert!(
        refused > 0,
        "no connection of the crowd was refused for its share"
    );
    // The slots, and the one connection accepted and judged while every slot is taken.
    assert!(most <= 256 + 1, "the service held {most} connections");
}

fn login_outcome(resp: &Response) -> &'static str {
    match (resp.status, resp.json()["success"].as_bool()) {
        (200, Some(true)) => "ok",
        (200, Some(false)) => "refused",
        (429, _) => {
            assert_error(resp, 429, "resource_exhausted");
            "throttled"
        }
        _ => panic!("a login answered {} {}", resp.status, resp.text()),
    }
}

/// 40 addresses x 5 guesses at alice: before, 200 guesses were checked; now the username's
/// ceiling (`loginFailuresPerUsername`, 20 a minute) holds across addresses. alice herself,
/// from where she logged in before, is not locked out; from a new address she is told why.
#[test]
fn guesses_from_forty_addresses_meet_the_usernames_ceiling_but_not_alice_at_home() {
    let password = "alice at home";
    let server = Server::start(json!({
        "killGracePeriod": 1,
        "trustedProxies": [],
        "authLocalUsers": {"enabled": true, "users": [
            {"username": "alice", "usergroup": "admins", "password": phc(password)}]},
        "actions": [{"id": "a", "title": "A", "shell": "true"}],
    }));
    let home = v4(0, 0, 1);
    assert_eq!(
        login_outcome(&login_from(&server, home, "alice", password)),
        "ok"
    );
    let (mut refused, mut throttled) = (0, 0);
    let began = Instant::now();
    for a in 0..40 {
        for _ in 0..5 {
            match login_outcome(&login_from(&server, v4(0, 3, a), "alice", "guess")) {
                "refused" => refused += 1,
                "throttled" => throttled += 1,
                other => panic!("a guess gave {other}"),
            }
        }
    }
    assert_eq!(
        (refused, throttled),
        (20, 180),
        "checked and throttled guesses"
    );
    assert_eq!(
        login_outcome(&login_from(&server, home, "alice", password)),
        "ok",
        "alice from home"
    );
    let elsewhere = login_from(&server, v4(0, 4, 1), "alice", password);
    assert_eq!(login_outcome(&elsewhere), "throttled");
    assert!(
        elsewhere.text().contains("many addresses"),
        "{}",
        elsewhere.text()
    );
    let log = server.stop_and_log();
    let lines = |needle: &str| log.lines().filter(|l| l.contains(needle)).count();
    // Five lines of each kind, then one per 10 s (and a summary): 200 guesses cost a handful.
    let most = 5 + 2 * (began.elapsed().as_secs() as usize / 10 + 1);
    assert!(lines("being guessed from many addresses") <= most, "{log}");
    assert!(lines("failed login") <= most, "{log}");
}

/// 40 addresses flood logins (made-up names, wrong passwords, each address again as soon as
/// it is answered) so the hasher's queue is never empty: each address holds at most one of
/// its places, and alice, from where she logged in before, takes a place kept for her kind
/// and logs in at her first or second try. Before, she was told "busy" 18 times of 18.
#[test]
fn alice_at_home_logs_in_while_forty_addresses_flood_the_password_checks() {
    const FLOODERS: u8 = 40;
    let password = "alice at home";
    let server = Server::start(json!({
        "killGracePeriod": 1,
        "trustedProxies": [],
        "authLocalUsers": {"enabled": true, "users": [
            {"username": "alice", "usergroup": "admins", "password": phc(password)}]},
        "actions": [{"id": "a", "title": "A", "shell": "true"}],
    }));
    let home = v4(0, 0, 1);
    assert_eq!(
        login_outcome(&login_from(&server, home, "alice", password)),
        "ok"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let (busy, checked) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let addr = server.addr;
    let flooders: Vec<_> = (0..FLOODERS)
        .map(|a| {
            let (stop, busy, checked) =
                (Arc::clone(&stop), Arc::clone(&busy), Arc::clone(&checked));
            thread::spawn(move || {
                let from = v4(0, 5, a);
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let body = json!({"username": format!("nobody{a}x{n}"), "password": "guess"});
                    let req = crate::identity::request("LocalUserLogin", &body, &[]);
                    let sent = std::panic::AssertUnwindSafe(|| send_from(addr, from, &req));
                    let Ok(resp) = std::panic::catch_unwind(sent) else {
                        continue;
                    };
                    match (resp.status, resp.text()) {
                        (200, _) => checked.fetch_add(1, Ordering::Relaxed),
                        (429, t) if t.contains("being checked") => {
                            busy.fetch_add(1, Ordering::Relaxed)
                        }
                        _ => 0,
                    };
                }
            })
        })
        .collect();
    // The flood has filled the queue: logins are being turned away.
    assert!(
        wait_until(SOON, || busy.load(Ordering::Relaxed) >= 40),
        "the flood never filled the queue ({} busy, {} checked)",
        busy.load(Ordering::Relaxed),
        checked.load(Ordering::Relaxed)
    );
    // Two tries 200 ms apart, the second only if the first did not get in.
    let mut tries = Vec::new();
    repeat_for(Duration::from_secs(1), Duration::from_millis(200), || {
        let outcome = login_outcome(&login_from(&server, home, "alice", password));
        tries.push(outcome);
        outcome != "ok" && tries.len() < 2
    });
    let (busy_then, checked_then) = (
        busy.load(Ordering::Relaxed),
        checked.load(Ordering::Relaxed),
    );
    stop.store(true, Ordering::Relaxed);
    for f in flooders {
        f.join().unwrap();
    }
    eprintln!("alice: {tries:?}; the flood: {busy_then} busy, {checked_then} checked meanwhile");
    assert_eq!(tries.last(), Some(&"ok"), "alice at home: {tries:?}");
}

/// The number of lines a flood left out, from what the log says of them: the counts appended
/// to the lines it wrote, and its summaries.
fn left_out(log: &str, line: &str, summary: &str) -> usize {
    let number_before = |text: &str, marker: &str| -> usize {
        let Some(at) = text.find(marker) else {
            return 0;
        };
        let digits: String = text[..at]
            .trim_end()
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect();
        digits
            .chars()
            .rev()
            .collect::<String>()
            .parse()
            .unwrap_or(0)
    };
    log.lines()
        .map(|l| {
            if l.contains(line) {
                number_before(l, " similar line")
            } else if l.contains(summary) {
                number_before(l, summary)
            } else {
                0
            }
        })
        .sum()
}

/// 2,000 presses of a button that is already running: each is recorded as blocked, but the
/// log holds a handful of lines, and what they left out is counted, to the last press.
#[test]
fn two_thousand_presses_of_a_busy_button_cost_a_handful_of_log_lines() {
    const PRESSES: usize = 2000;
    let server = Server::start(json!({
        "killGracePeriod": 1,
        "actions": [{"id": "busy", "title": "Busy", "shell": GATED}],
    }));
    let first = server.start_action("busy");
    server.wait_started(&first);
    let mut conn = server.conn();
    let began = Instant::now();
    for i in 0..PRESSES {
        let resp = conn.send(&Request::connect("StartAction", br#"{"actionId":"busy"}"#));
        assert_eq!(resp.status, 200, "press {i}: {}", resp.text());
    }
    let flood = began.elapsed();
    let summary = "more lines about blocked starts left out of the log";
    assert!(
        wait_until(Duration::from_secs(15), || server.log_contains(summary)),
        "no summary of the left-out lines"
    );
    std::fs::write(server.path("go"), "").unwrap();
    let log = server.stop_and_log();
    let written = log.lines().filter(|l| l.contains("blocked: ")).count();
    // Five lines, then one per 10 s while the presses come.
    let most = 5 + flood.as_secs() as usize / 10 + 1;
    eprintln!("{PRESSES} presses in {flood:?}: {written} lines about them");
    assert!(
        written <= most,
        "{written} lines about blocked starts in {flood:?}"
    );
    assert_eq!(
        written + left_out(&log, "blocked: ", summary),
        PRESSES,
        "every blocked press is either a line or counted in one:\n{log}"
    );
}

/// A guest pressing a cheap action as fast as it ends writes a handful of `finished` lines,
/// and what they left out is counted; a caller with a token keeps a line per run. Every run
/// is in the history either way.
#[test]
fn a_guests_runs_finish_in_a_handful_of_lines_and_a_token_keeps_one_per_run() {
    const PRESSES: usize = 40;
    let server = Server::start(json!({
        "actions": [{"id": "quick", "title": "Quick", "shell": "true"}],
        "authApiTokens": [{"name": "ha", "username": "ha",
            "sha256": "eb6bc07d764f0e79f09bd55764ba5040c7df0f83fcb674993af54f86d558660c"}],
    }));
    let mut conn = server.conn();
    let began = Instant::now();
    for i in 0..PRESSES {
        let resp = conn.send(&Request::connect(
            "StartActionAndWait",
            br#"{"actionId":"quick"}"#,
        ));
        assert_eq!(resp.status, 200, "guest press {i}: {}", resp.text());
    }
    let guests_took = began.elapsed();
    let summary = "more lines about guests' finished runs left out of the log";
    assert!(
        wait_until(Duration::from_secs(15), || server.log_contains(summary)),
        "no summary of the left-out lines"
    );
    for i in 0..PRESSES {
        let resp = conn.send(
            &Request::connect("StartActionAndWait", br#"{"actionId":"quick"}"#)
                .header("Authorization", "Bearer tok-0123456789-abcdefghij"),
        );
        assert_eq!(resp.status, 200, "token press {i}: {}", resp.text());
    }
    let logs = server.ok("GetLogs", json!({"startOffset": 0}));
    assert_eq!(
        logs["totalCount"],
        (2 * PRESSES).to_string(),
        "every run is in the history"
    );
    let log = server.stop_and_log();
    let guest_lines = log
        .lines()
        .filter(|l| l.contains("finished") && l.contains("user=guest"))
        .count();
    let token_lines = log
        .lines()
        .filter(|l| l.contains("finished") && l.contains("user=ha"))
        .count();
    let most = 5 + guests_took.as_secs() as usize / 10 + 1;
    assert!(
        guest_lines <= most,
        "{guest_lines} lines of guests' runs:\n{log}"
    );
    assert_eq!(token_lines, PRESSES, "a line per run of the token's");
    assert_eq!(
        guest_lines + left_out(&log, "user=guest", summary),
        PRESSES,
        "every guest run is either a line or counted in one:\n{log}"
    );
}
