//! EventStream seen from a client: a Connect server-streaming call answered
//! with HTTP 200 and a chunked body of envelopes, one per event and flushed as it happens,
//! ended by exactly one end-stream envelope. These tests read that body incrementally with a
//! small reader of their own (the unary client in `client.rs` waits for the whole body, which
//! a stream never gives), every read bounded by a deadline, and check the order and content of
//! the events of real runs, the end of the stream on deadline and shutdown, the request rules,
//! the `logs` permission, and that a client which stops reading is cut off without costing the
//! other subscribers or the executor anything.

mod stream;

use crate::client::{self, SERVICE, assert_entry_shape};
use crate::harness::{SOON, Server, config_with, poll_every, shell_action};
use nix::sys::signal::Signal;
use serde_json::json;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

pub(crate) use stream::*;

// ---------------------------------------------------------------------------------------
// Events of a run

#[test]
fn one_run_streams_started_then_its_output_then_finished() {
    // The action prints on stdout, then waits for a file that only this test creates once it
    // has received that first line: the test gets past that point only if the chunk was
    // flushed while the action still ran, not buffered until the end.
    let mut talk = shell_action(
        "talk",
        "echo one; while [ ! -e go ]; do sleep 0.01; done; echo two >&2",
    );
    talk["timeout"] = json!(15);
    let server = Server::start(config_with(vec![talk]));
    let mut stream = EventStream::subscribe(server.addr);

    let id = server.start_action("talk");
    let started = stream.event();
    assert_eq!(started.kind, "executionStarted", "{}", started.body);
    assert_eq!(started.tracking_id(), id);
    assert_entry_shape(started.entry());
    assert_eq!(started.entry()["actionId"], "talk");
    assert_eq!(started.entry()["executionFinished"], false);

    let before_go = stream.events_until(|e| e.kind == "outputChunk" && e.output().contains("one"));
    std::fs::write(server.path("go"), b"").expect("write go");
    let after_go = stream.events_until(|e| e.kind == "executionFinished");

    let (finished, between) = after_go.split_last().expect("at least the finished event");
    let chunks: Vec<&Event> = before_go.iter().chain(between).collect();
    for chunk in &chunks {
        assert_eq!(
            chunk.kind, "outputChunk",
            "between start and end: {chunk:?}"
        );
        assert_eq!(chunk.tracking_id(), id, "{chunk:?}");
    }
    assert_eq!(finished.tracking_id(), id);
    let entry = finished.entry();
    assert_entry_shape(entry);
    assert_eq!(entry["executionFinished"], true, "{entry}");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    assert_eq!(entry["stdout"], "one\n", "{entry}");
    assert_eq!(entry["stderr"], "two\n", "{entry}");

    // The two pipes are read independently, so their relative order is best effort: the
    // chunks hold each stream's text whole and nothing else.
    let all: String = chunks.iter().map(|c| c.output()).collect();
    let (stdout, stderr) = (
        entry["stdout"].as_str().unwrap_or_default(),
        entry["stderr"].as_str().unwrap_or_default(),
    );
    assert_eq!(all.len(), stdout.len() + stderr.len(), "chunks {all:?}");
    assert!(
        all.contains(stdout) && all.contains(stderr),
        "chunks {all:?}"
    );

    // Nothing else about this run follows (a duplicate finish would show up here).
    match stream.next(Duration::from_millis(300)) {
        Next::Timeout => {}
        other => panic!("unexpected after executionFinished: {other:?}"),
    }
}

#[test]
fn large_output_arrives_in_whole_utf8_chunks_of_at_most_4096_bytes() {
    // 33334 × "aé" = 100002 bytes, written in 64 KiB blocks (`dd obs=`), so that the
    // service's pipe reads are larger than a chunk and must be cut. Neither 4096 nor 65536 is
    // a multiple of the 3-byte pattern, so again and again a 4096-byte cut, and the end of a
    // read, falls inside a two-byte `é`: a cut by bytes would show.
    let mut config = config_with(vec![shell_action(
        "big",
        "yes aé | head -n 33334 | tr -d '\\n' | dd obs=65536 2>/dev/null",
    )]);
    // Big enough to keep the whole output in the entry too, for the comparison.
    config["maxOutputBytes"] = json!(262_144);
    let server = Server::start(config);
    let mut stream = EventStream::subscribe(server.addr);

    let id = server.start_action("big");
    let mut frames = Vec::new();
    let finished = loop {
        let frame = stream.frame();
        let event = frame.event();
        assert_eq!(event.tracking_id(), id, "{event:?}");
        if event.kind == "executionFinished" {
            break event;
        }
        frames.push((frame, event));
    };
    assert_eq!(frames[0].1.kind, "executionStarted");

    let expected = "aé".repeat(33_334);
    let mut all = String::new();
    for (frame, event) in &frames[1..] {
        std::str::from_utf8(&frame.payload).expect("the payload is UTF-8");
        let output = event.output();
        assert!(
            !output.is_empty() && output.len() <= MAX_CHUNK,
            "a chunk of {} bytes",
            output.len()
        );
        assert!(
            !output.contains('\u{FFFD}'),
            "a character was split: {output:?}"
        );
        all.push_str(output);
    }
    assert_eq!(all.len(), expected.len());
    assert!(all == expected, "the chunks do not add up to the output");
    assert_eq!(finished.entry()["stdout"], expected.as_str());
}

#[test]
fn a_blocked_start_streams_started_then_finished_blocked() {
    let mut config = config_with(vec![shell_action(
        "one",
        "while [ ! -e go ]; do sleep 0.01; done",
    )]);
    config["actions"][0]["timeout"] = json!(15);
    let server = Server::start(config);
    let mut stream = EventStream::subscribe(server.addr);

    // maxConcurrent defaults to 1: the second press while the first runs is blocked.
    let first = server.start_action("one");
    let second = server.start_action("one");
    let events = stream.events_until(|e| e.is("executionFinished", &second));
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e.kind.as_str(), e.tracking_id()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("executionStarted", first.as_str()),
            ("executionStarted", second.as_str()),
            ("executionFinished", second.as_str()),
        ]
    );
    let blocked = events[2].entry();
    assert_eq!(blocked["blocked"], true, "{blocked}");
    assert_eq!(blocked["executionFinished"], true, "{blocked}");
    assert_eq!(blocked["exitCode"], -1, "{blocked}");

    std::fs::write(server.path("go"), b"").expect("write go");
    let rest = stream.events_until(|e| e.kind == "executionFinished");
    assert!(rest.iter().all(|e| e.tracking_id() == first), "{rest:?}");
    assert_eq!(
        rest.last().map(|e| e.entry()["blocked"].clone()),
        Some(json!(false))
    );
}

#[test]
fn the_subscription_exists_when_the_headers_arrive() {
    let server = Server::start(config_with(vec![shell_action("hi", "echo hi")]));
    // A race between subscribing and answering would show only now and then: try a few
    // times, each time starting the action the moment the head has been read.
    for round in 0..10 {
        let mut stream = EventStream::subscribe(server.addr);
        let id = server.start_action("hi");
        let first = stream.event();
        assert!(
            first.is("executionStarted", &id),
            "round {round}: the first event is {first:?}, not the start of {id}"
        );
        // The next round subscribes only after this run has ended, so that its first event
        // cannot be one of this run's.
        stream.events_until(|e| e.is("executionFinished", &id));
    }
}

/// A quiet stream carries keep-alives (an `outputChunk` of no execution and no text, flag 0)
/// after about 5 s without an event, so a client can tell a dead connection from a quiet one;
/// the events of a run still come whole after them.
#[test]
fn a_quiet_stream_carries_keep_alives_and_then_every_event() {
    let server = Server::start(config_with(vec![shell_action("hi", "echo hi")]));
    let mut stream = EventStream::subscribe(server.addr);
    let began = Instant::now();
    match stream.next_envelope(Duration::from_secs(12)) {
        Next::Frame(f) => {
            assert_eq!(
                (f.flags, String::from_utf8_lossy(&f.payload).into_owned()),
                (0, r#"{"outputChunk":{}}"#.to_string()),
                "the first envelope of a quiet stream"
            );
            // One event, as every message of the stream holds.
            assert_eq!(f.event().kind, "outputChunk");
        }
        other => panic!("no keep-alive within 12 s of quiet: {other:?}"),
    }
    let quiet = began.elapsed();
    assert!(
        quiet >= Duration::from_secs(4),
        "a keep-alive after {quiet:?}, before the stream was quiet for long"
    );
    let id = server.start_action("hi");
    let events = stream.events_until(|e| e.is("executionFinished", &id));
    assert!(events[0].is("executionStarted", &id), "{events:?}");
    // The reader skips a keep-alive as the Connect clients do.
    match stream.next(Duration::from_secs(7)) {
        Next::Timeout => assert!(stream.keep_alives >= 1, "no keep-alive after the run"),
        other => panic!("nothing but keep-alives was due: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// How a stream ends

#[test]
fn the_deadline_ends_the_stream_with_deadline_exceeded() {
    let server = Server::start(config_with(vec![]));
    let began = Instant::now();
    // The short route, which the API document's examples use.
    let mut stream = EventStream::open(
        server.addr,
        &subscribe_at("/api/EventStream").header("Connect-Timeout-Ms", "500"),
    );
    stream.assert_stream_head();
    let (events, end) = stream.finish();
    let elapsed = began.elapsed();
    assert!(events.is_empty(), "no event was due: {events:?}");
    assert_end_error(&end, "deadline_exceeded");
    assert!(
        elapsed >= Duration::from_millis(500),
        "ended after {elapsed:?}, before the 500 ms deadline"
    );
}

#[test]
fn sigterm_ends_the_stream_with_an_empty_end_stream() {
    let mut server = Server::start(config_with(vec![]));
    let mut stream = EventStream::open(
        server.addr,
        &subscribe_at("/api/svc.api.v1.ActionApiService/EventStream"),
    );
    stream.assert_stream_head();
    server.signal(Signal::SIGTERM);
    let (events, end) = stream.finish();
    assert!(events.is_empty(), "no event was due: {events:?}");
    assert_eq!(end, json!({}), "a clean end carries no error");
    let status = server.wait_exit(SOON).expect("actiond exits after SIGTERM");
    assert_eq!(status.code(), Some(0), "{status:?}");
}

// ---------------------------------------------------------------------------------------
// Request rules

#[test]
fn zero_or_two_request_envelopes_end_the_stream_with_unimplemented() {
    let server = Server::start(config_with(vec![]));
    let path = format!("{SERVICE}EventStream");
    let two = [envelope(0, b"{}"), envelope(0, b"{}")].concat();
    for (what, body) in [("zero", Vec::new()), ("two", two)] {
        let resp = client::send(server.addr, &stream_request_at(&path, &body));
        let message = assert_refused_in_stream(&resp, "unimplemented");
        eprintln!("{what} envelopes: {message}");
    }
}

#[test]
fn a_compressed_request_envelope_ends_the_stream_with_internal() {
    let server = Server::start(config_with(vec![]));
    let body = envelope(0x01, b"{}");
    let resp = client::send(
        server.addr,
        &stream_request_at(&format!("{SERVICE}EventStream"), &body),
    );
    assert_refused_in_stream(&resp, "internal");
}

#[test]
fn a_wrong_content_type_is_http_415() {
    let server = Server::start(config_with(vec![]));
    for content_type in ["application/json", "application/proto"] {
        let req = subscribe().set_header("Content-Type", content_type);
        let resp = client::send(server.addr, &req);
        assert_eq!(resp.status, 415, "{content_type}: {:?}", resp.text());
    }
}

#[test]
fn a_guest_who_must_log_in_is_refused_in_the_stream() {
    const TOKEN: &str = "events-gate-token-7f3a9c";
    let mut config = config_with(vec![]);
    config["authRequireGuestsToLogin"] = json!(true);
    config["authApiTokens"] = json!([token_entry("t", TOKEN, "robot")]);
    let server = Server::start(config);

    let resp = client::send(server.addr, &subscribe());
    assert_refused_in_stream(&resp, "unauthenticated");

    // The gate is about guests only: a caller with a token is subscribed (the deadline ends
    // its stream, which shows it was accepted).
    let mut stream = EventStream::open(
        server.addr,
        &subscribe_as(TOKEN).header("Connect-Timeout-Ms", "200"),
    );
    stream.assert_stream_head();
    let (_, end) = stream.finish();
    assert_end_error(&end, "deadline_exceeded");
}

#[test]
fn streams_beyond_max_event_subscribers_are_refused_until_one_closes() {
    let mut config = config_with(vec![]);
    config["maxEventSubscribers"] = json!(2);
    let server = Server::start(config);

    let first = EventStream::subscribe(server.addr);
    let _second = EventStream::subscribe(server.addr);
    let resp = client::send(server.addr, &subscribe());
    assert_refused_in_stream(&resp, "resource_exhausted");

    // Closing a stream frees its place; the service notices the closed connection by itself,
    // so poll. A probe that is accepted ends at its short deadline and frees its place again.
    drop(first);
    let freed = poll_every(Duration::from_millis(50), SOON, || {
        let mut probe = EventStream::open(
            server.addr,
            &subscribe().header("Connect-Timeout-Ms", "100"),
        );
        probe.assert_stream_head();
        let (_, end) = probe.finish();
        if end["error"]["code"] == "deadline_exceeded" {
            return Some(());
        }
        assert_end_error(&end, "resource_exhausted");
        None
    });
    assert!(
        freed.is_some(),
        "the place of a closed stream was not freed within {SOON:?}"
    );
}

#[test]
fn one_address_holds_at_most_four_streams_and_others_still_get_theirs() {
    let mut config = config_with(vec![]);
    // Loopback is a trusted proxy by default, which carries everyone and counts for no one.
    config["trustedProxies"] = json!([]);
    let server = Server::start(config);
    let ip = |last: u8| std::net::IpAddr::from([127, 0, 0, last]);
    let open_from = |last: u8| {
        let sock = client::connect_from(server.addr, ip(last)).expect("connect");
        let stream = EventStream::start(sock, &subscribe());
        stream.assert_stream_head();
        stream
    };
    // The default maxEventStreamsPerAddress is 4, of maxEventSubscribers' 64.
    let held: Vec<EventStream> = (0..4).map(|_| open_from(2)).collect();
    let resp = client::send_from(
        server.addr,
        ip(2),
        &subscribe().header("Connect-Timeout-Ms", "3000"),
    );
    let message = assert_refused_in_stream(&resp, "resource_exhausted");
    assert!(
        message.contains("4 event streams") && message.contains("maxEventStreamsPerAddress"),
        "{message}"
    );
    // Another address still gets its stream, and is refused only past its own four.
    let _others: Vec<EventStream> = (0..4).map(|_| open_from(3)).collect();
    let resp = client::send_from(
        server.addr,
        ip(3),
        &subscribe().header("Connect-Timeout-Ms", "3000"),
    );
    assert_refused_in_stream(&resp, "resource_exhausted");
    drop(held);
}

/// 16 addresses with four streams each take all 64 places. A 17th address still gets its
/// stream: the newest of one crowd address is closed for it, and told why; that address,
/// now under its even share no more than the newcomer, is refused rather than taking the
/// place back.
#[test]
fn a_seventeenth_address_gets_a_stream_when_sixteen_hold_every_place() {
    let mut config = config_with(vec![]);
    config["trustedProxies"] = json!([]);
    let server = Server::start(config);
    let ip = |c: u8, d: u8| std::net::IpAddr::from([127, 0, c, d]);
    let open_from = |from| {
        let sock = client::connect_from(server.addr, from).expect("connect");
        let stream = EventStream::start(sock, &subscribe());
        stream.assert_stream_head();
        stream
    };
    let mut crowd: Vec<(u8, EventStream)> = (1..=16u8)
        .flat_map(|d| (0..4).map(move |_| d))
        .map(|d| (d, open_from(ip(5, d))))
        .collect();
    let _newcomer = open_from(ip(6, 1));
    // Exactly one of the crowd's streams ends, with the reason; the others go on.
    let mut cut = None;
    let deadline = Instant::now() + SOON;
    while cut.is_none() && Instant::now() < deadline {
        for (i, (_, stream)) in crowd.iter_mut().enumerate() {
            match stream.next(Duration::from_millis(10)) {
                Next::Timeout => {}
                Next::Frame(f) if f.is_end() => {
                    assert!(cut.is_none(), "a second stream was cut");
                    cut = Some((i, f.json()));
                }
                other => panic!("stream {i}: {other:?}"),
            }
        }
    }
    let (i, end) = cut.expect("no stream of the crowd was closed for the newcomer");
    assert_eq!(end["error"]["code"], "resource_exhausted", "{end}");
    let message = end["error"]["message"].as_str().unwrap();
    assert!(message.contains("even share"), "{message}");
    let from = crowd.remove(i).0;
    for (i, (_, stream)) in crowd.iter_mut().enumerate() {
        assert!(
            matches!(stream.next(Duration::from_millis(10)), Next::Timeout),
            "stream {i} ended too"
        );
    }
    let again = client::send_from(
        server.addr,
        ip(5, from),
        &subscribe().header("Connect-Timeout-Ms", "3000"),
    );
    let message = assert_refused_in_stream(&again, "resource_exhausted");
    assert!(message.contains("64 event streams"), "{message}");
}

// ---------------------------------------------------------------------------------------
// Slow subscribers

/// A connection that backs up into the service after a few kilobytes when its client stops
/// reading, instead of megabytes. Two settings, made before connecting because both are
/// negotiated in the handshake: the smallest receive buffer (a small advertised window),
/// and a small maximum segment size. The second matters most on loopback, whose 64 KiB
/// segments make Linux size the service's send buffer at megabytes (ten segments, doubled);
/// with 536-byte segments it is some tens of kilobytes. Neither std nor tokio can set the
/// segment size; nix's safe `setsockopt` can.
pub(crate) fn connect_with_small_window(addr: SocketAddr) -> TcpStream {
    use nix::sys::socket::{setsockopt, sockopt::TcpMaxSeg};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("tokio runtime for the client socket");
    let stream = runtime
        .block_on(async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.set_recv_buffer_size(1024)?;
            setsockopt(&socket, TcpMaxSeg, &536).map_err(io::Error::from)?;
            socket.connect(addr).await?.into_std()
        })
        .unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    stream.set_nonblocking(false).expect("blocking socket");
    stream
}

#[test]
fn a_stalled_subscriber_is_cut_off_while_another_gets_every_event() {
    const RUNS: usize = 40;
    const LINES: usize = 200;
    // Each run prints LINES lines (about 20 KB) one write at a time, so the events come in
    // small bursts that a reading client keeps up with even with the smallest queue; all runs
    // together (about 1.6 MB of events) are far more than the stalled client's share of the
    // service's buffers can hold: at most 16 + 16 queued events, hyper's write buffer (16
    // pieces or 400 KB) and the socket buffers of a small-window connection.
    let script = format!(
        "i=0; while [ $i -lt {LINES} ]; do \
         echo \"$ACTIOND_TRACKING_ID line $i of a run that a stalled client never reads\"; \
         i=$((i+1)); done"
    );
    let mut config = config_with(vec![shell_action("chatty", &script)]);
    config["eventQueueLength"] = json!(16);
    let server = Server::start(config);

    let stalled_sock = connect_with_small_window(server.addr);
    let mut stalled = EventStream::start(stalled_sock, &subscribe());
    stalled.assert_stream_head();
    let mut reader = EventStream::subscribe(server.addr);

    // The reading subscriber is drained by its own thread while the runs go on.
    let reading = thread::spawn(move || {
        let mut frames = Vec::new();
        let mut finished = 0;
        while finished < RUNS {
            let frame = reader.frame();
            if frame.event().kind == "executionFinished" {
                finished += 1;
            }
            frames.push(frame);
        }
        (frames, reader)
    });

    // If publishing ever waited on the stalled client, the run whose events filled its share
    // of the buffers would wait out the service's stall limit (10 s) or forever. That is
    // what the bound below catches; it is not a speed expectation (a run here takes
    // milliseconds, and seconds on a loaded machine).
    const STALL_LIMIT: Duration = Duration::from_secs(10);
    let began = Instant::now();
    let mut ids = Vec::new();
    let mut slowest = Duration::ZERO;
    for _ in 0..RUNS {
        let run_began = Instant::now();
        let entry = server.run("chatty");
        slowest = slowest.max(run_began.elapsed());
        assert_eq!(entry["exitCode"], 0, "{entry}");
        ids.push(entry["executionTrackingId"].as_str().unwrap().to_string());
    }
    assert!(
        slowest < STALL_LIMIT,
        "a run took {slowest:?} with a stalled subscriber: publishing waited for it"
    );
    eprintln!(
        "{RUNS} runs with a stalled subscriber took {:?}, the slowest {slowest:?}",
        began.elapsed()
    );

    let (frames, mut reader) = reading.join().expect("reader thread");
    let events: Vec<Event> = frames.iter().map(Frame::event).collect();
    for id in &ids {
        let of_run: Vec<&Event> = events.iter().filter(|e| e.tracking_id() == id).collect();
        assert!(of_run[0].is("executionStarted", id), "{:?}", of_run[0]);
        assert!(
            of_run[of_run.len() - 1].is("executionFinished", id),
            "{:?}",
            of_run.last()
        );
        assert_eq!(
            of_run
                .iter()
                .filter(|e| e.kind == "executionFinished")
                .count(),
            1
        );
        let output: String = of_run[1..of_run.len() - 1]
            .iter()
            .map(|e| e.output())
            .collect();
        let expected: String = (0..LINES)
            .map(|i| format!("{id} line {i} of a run that a stalled client never reads\n"))
            .collect();
        assert!(output == expected, "run {id}: the reader missed output");
    }
    // Still subscribed: nothing ended its stream.
    match reader.next(Duration::from_millis(100)) {
        Next::Timeout => {}
        other => panic!("the reading subscriber's stream changed: {other:?}"),
    }

    // Now read the stalled one. It gets what was queued for it before it was cut off, in
    // the same order as everyone (a prefix of the reader's events), then the end-stream
    // resource_exhausted; had the service given up on it entirely, the connection is closed.
    let (stalled_frames, ending) = stalled.rest(SOON);
    let (received, end) = match stalled_frames.split_last() {
        Some((last, before)) if last.is_end() => (before, Some(last.json())),
        _ => (&stalled_frames[..], None),
    };
    assert!(
        received.len() < frames.len(),
        "the stalled subscriber got all {} events: it was never cut off",
        frames.len()
    );
    assert!(
        received == &frames[..received.len()],
        "the stalled subscriber's {} events are not the first ones of the stream",
        received.len()
    );
    match end {
        Some(end) => {
            let message = assert_end_error(&end, "resource_exhausted");
            assert!(
                matches!(ending, Next::End),
                "after the end-stream: {ending:?}"
            );
            eprintln!(
                "stalled subscriber: {} events, then {message:?}",
                received.len()
            );
        }
        None => match ending {
            Next::Closed(why) => eprintln!(
                "stalled subscriber: {} events, then dropped ({why})",
                received.len()
            ),
            other => panic!(
                "the stalled subscriber was not cut off: after {} events, {other:?}",
                received.len()
            ),
        },
    }
}

// ---------------------------------------------------------------------------------------
// Permissions

#[test]
fn events_of_an_action_reach_only_subscribers_with_logs_on_it() {
    const VIEWER: &str = "events-viewer-token-51b2";
    const WATCHER: &str = "events-watcher-token-c09e";
    let mut public = shell_action("public", "echo public");
    public["acls"] = json!(["viewers"]);
    let mut config = config_with(vec![public, shell_action("private", "echo private")]);
    config["defaultPermissions"] = json!({"view": true, "exec": true, "logs": false, "kill": true});
    config["authApiTokens"] = json!([
        token_entry("viewer", VIEWER, "viewer"),
        token_entry("watcher", WATCHER, "watcher"),
    ]);
    config["accessControlLists"] = json!([
        // logs on `public` only (the action lists this ACL).
        {"name": "viewers", "matchUsernames": ["viewer"],
         "permissions": {"view": true, "exec": true, "logs": true, "kill": true}},
        // logs on everything.
        {"name": "watchers", "matchUsernames": ["watcher"], "addToEveryAction": true,
         "permissions": {"view": true, "exec": true, "logs": true, "kill": true}},
    ]);
    let server = Server::start(config);

    let mut viewer = EventStream::open(server.addr, &subscribe_as(VIEWER));
    viewer.assert_stream_head();
    let mut watcher = EventStream::open(server.addr, &subscribe_as(WATCHER));
    watcher.assert_stream_head();

    // `private` runs to its end before `public` starts, and every subscriber gets events in
    // publishing order: by the time the viewer has `public`'s end, anything of `private` it
    // could have been sent is already behind it.
    let private = server.run("private");
    let private_id = private["executionTrackingId"].as_str().unwrap().to_string();
    let public = server.run("public");
    let public_id = public["executionTrackingId"].as_str().unwrap().to_string();

    let seen = viewer.events_until(|e| e.is("executionFinished", &public_id));
    assert!(
        seen.iter().all(|e| e.tracking_id() == public_id),
        "the viewer, without logs on `private`, saw: {seen:?}"
    );
    assert!(seen[0].is("executionStarted", &public_id), "{:?}", seen[0]);

    let all = watcher.events_until(|e| e.is("executionFinished", &public_id));
    for id in [&private_id, &public_id] {
        assert!(
            all.iter().any(|e| e.is("executionStarted", id)),
            "watcher missed the start of {id}: {all:?}"
        );
        assert!(
            all.iter().any(|e| e.is("executionFinished", id)),
            "watcher missed the end of {id}: {all:?}"
        );
    }
    let private_output: String = all
        .iter()
        .filter(|e| e.is("outputChunk", &private_id))
        .map(|e| e.output())
        .collect();
    assert_eq!(private_output, "private\n");
}
