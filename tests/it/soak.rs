//! A soak of about a minute: thousands of executions that each print far more than the output
//! cap, several at a time, with ten event subscribers reading every event and the history
//! persisted in a state directory. Whatever the service keeps per execution, per event or per
//! history record must be released or bounded, so after the first few hundred runs its memory
//! stays flat; its descriptors return to their number before the soak; the history holds
//! `logHistoryLimit` entries, the history file at most about twice that many lines; no child
//! is left unreaped; and a restart after SIGKILL brings the final history back.
//!
//! Sizes: 3000 runs of 100 KB each through 8 KiB caps is 300 MB of output, all of it published
//! as events to each subscriber, so the readers only classify envelopes by their first bytes
//! instead of parsing JSON. They still fall behind now and then, and are cut off as the event bus
//! says (the default queue of 256 events); they subscribe again, and at the end every one of
//! them must be live. What the soak bounds is the service: memory, descriptors, history.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::json;

use crate::client::{Conn, Request};
use crate::events::{EventStream, Next};
use crate::harness::{
    Server, TempDir, UNTIL_STOPPED, config_with, fd_count, poll_every, repeat_for, vm_kib,
    wait_until, zombie_children,
};

const RUNS: usize = 3000;
const WARM_UP: usize = 300;
const THREADS: usize = 6;
const SUBSCRIBERS: usize = 10;
const LIMIT: usize = 100;
const OUTPUT_BYTES: usize = 100_000;
/// RSS may grow this much after the warm-up: allocator noise, not per-run state (3000 runs
/// keeping even 8 KiB each would be 24 MiB).
const RSS_GROWTH_KIB: u64 = 16 * 1024;
/// The history file is rewritten once twice logHistoryLimit lines were handed to it since
/// the last rewrite, and records queued behind that rewrite go through it rather than being
/// appended first: the file never holds more than this, however many runs end at once.
const MAX_LINES: usize = 2 * LIMIT + 1;

/// What one subscriber saw.
#[derive(Debug, Default, Clone)]
struct Seen {
    started: usize,
    finished: usize,
    chunks: usize,
    chunk_bytes: usize,
    /// Times the service cut this subscriber off for falling behind (and it subscribed
    /// again, as the end-stream message asks).
    cut_off: usize,
    /// Whether it saw the end of a run whose tracking id starts with [`FINAL`].
    saw_final: bool,
}

/// Tracking-id prefix of the runs made after the soak to show that every subscriber is
/// still live.
const FINAL: &str = "soak-final";

/// Reads events until the end of a [`FINAL`] run arrives or `stop` is set. A subscriber cut
/// off for falling behind (by design, ten debug-built readers on a small machine do
/// not keep up with thousands of runs' output) subscribes again, as a real client would.
fn read_events(addr: std::net::SocketAddr, stop: Arc<AtomicBool>) -> Seen {
    let mut seen = Seen::default();
    let mut stream = EventStream::subscribe(addr);
    while !stop.load(Ordering::SeqCst) {
        match stream.next(Duration::from_millis(500)) {
            Next::Frame(frame) => {
                let p = &frame.payload;
                if frame.is_end() {
                    let end = String::from_utf8_lossy(p);
                    assert!(
                        end.contains("resource_exhausted"),
                        "a subscription ended otherwise than by falling behind: {end}"
                    );
                    seen.cut_off += 1;
                    drop(stream);
                    stream = EventStream::subscribe(addr);
                } else if p.starts_with(b"{\"outputChunk\"") {
                    seen.chunks += 1;
                    seen.chunk_bytes += p.len();
                } else if p.starts_with(b"{\"executionStarted\"") {
                    seen.started += 1;
                } else if p.starts_with(b"{\"executionFinished\"") {
                    seen.finished += 1;
                    if String::from_utf8_lossy(p).contains(FINAL) {
                        seen.saw_final = true;
                        break;
                    }
                }
            }
            Next::Timeout => {}
            other => panic!("a subscription failed: {other:?} after {seen:?}"),
        }
    }
    seen
}

fn history_lines(path: &std::path::Path) -> usize {
    std::fs::read(path)
        .map(|b| b.iter().filter(|c| **c == b'\n').count())
        .unwrap_or(0)
}

/// Runs `count` executions of `big` on one keep-alive connection, counting them in `done`.
fn run_many(addr: std::net::SocketAddr, count: usize, done: &AtomicUsize) {
    let mut conn = Conn::open(addr);
    let req = Request::connect("StartActionAndWait", br#"{"actionId":"big"}"#);
    for i in 0..count {
        let resp = conn.send(&req);
        assert_eq!(resp.status, 200, "run {i}: {}", resp.text());
        let entry = &resp.json()["logEntry"];
        assert_eq!(entry["exitCode"], 0, "run {i}: {entry}");
        assert_eq!(entry["blocked"], false, "run {i}: {entry}");
        done.fetch_add(1, Ordering::SeqCst);
    }
}

// About a minute and a half: scripts/test.sh runs it by name as its own step, beside the
// other tests rather than inside every `cargo test`.
#[test]
#[ignore = "the soak takes about 85 s: scripts/test.sh runs it by name"]
fn soak_thousands_of_big_runs_with_readers_and_persistence_stay_bounded() {
    let state = TempDir::new();
    let mut config = config_with(vec![json!({
        "id": "big",
        "title": "Big",
        // exec, no shell: one process per run, so the soak measures actiond, not sh.
        "exec": ["cat", "payload.txt"],
        "maxConcurrent": THREADS,
    })]);
    config["stateDirectory"] = json!(state.path().to_str().expect("UTF-8 path"));
    config["logHistoryLimit"] = json!(LIMIT);
    config["maxOutputBytes"] = json!(8192);
    let server = Server::start(config.clone());
    let pid = server.pid();
    let line: String = "0123456789abcdefghijklmnopqrstuvwxyz".repeat(2) + "\n";
    let payload = line.repeat(OUTPUT_BYTES / line.len() + 1);
    std::fs::write(server.path("payload.txt"), &payload[..OUTPUT_BYTES]).expect("payload");

    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..SUBSCRIBERS)
        .map(|_| {
            let (addr, stop) = (server.addr, Arc::clone(&stop));
            thread::spawn(move || read_events(addr, stop))
        })
        .collect();

    let began = Instant::now();
    let done = Arc::new(AtomicUsize::new(0));
    // Warm-up on one connection, closed afterwards: buffers, the history and the journal
    // reach their working size, and the descriptors their steady number.
    run_many(server.addr, WARM_UP, &done);
    // Settled: the same count twice, 100 ms apart.
    let mut last = None;
    let settled = poll_every(Duration::from_millis(100), Duration::from_secs(5), || {
        let now = fd_count(pid);
        (last.replace(now) == Some(now)).then_some(())
    })
    .is_some();
    assert!(settled, "descriptors never settled after the warm-up");
    let fd_baseline = fd_count(pid);
    let rss_warm = vm_kib(pid, "VmRSS");

    // Sample memory and the history file while the soak runs.
    let samples = Arc::new(Mutex::new((Vec::new(), 0usize)));
    let sampler = {
        let (samples, stop, path) = (
            Arc::clone(&samples),
            Arc::clone(&stop),
            state.path().join("history.jsonl"),
        );
        thread::spawn(move || {
            repeat_for(UNTIL_STOPPED, Duration::from_millis(200), || {
                if stop.load(Ordering::SeqCst) {
                    return false;
                }
                let rss = vm_kib(pid, "VmRSS");
                let lines = history_lines(&path);
                let mut s = samples.lock().unwrap();
                s.0.push(rss);
                s.1 = s.1.max(lines);
                true
            });
        })
    };

    let per_thread = (RUNS - WARM_UP) / THREADS;
    let runners: Vec<_> = (0..THREADS)
        .map(|_| {
            let (addr, done) = (server.addr, Arc::clone(&done));
            thread::spawn(move || run_many(addr, per_thread, &done))
        })
        .collect();
    for r in runners {
        r.join().expect("runner thread");
    }
    let total = done.load(Ordering::SeqCst);
    let run_time = began.elapsed();
    assert_eq!(total, WARM_UP + per_thread * THREADS);
    eprintln!("{total} runs of {OUTPUT_BYTES} bytes in {run_time:?}");

    // Every subscriber is still live after the soak: runs tagged FINAL go on until each has
    // seen the end of one (a subscriber still catching up may be cut off once more and
    // subscribe again after the first of them).
    let mut finals = 0;
    repeat_for(Duration::from_secs(20), Duration::from_millis(200), || {
        if readers.iter().all(|r| r.is_finished()) {
            return false;
        }
        server.ok(
            "StartActionAndWait",
            json!({"actionId": "big", "uniqueTrackingId": format!("{FINAL}-{finals}")}),
        );
        finals += 1;
        true
    });
    stop.store(true, Ordering::SeqCst);
    sampler.join().expect("sampler");
    for (i, r) in readers.into_iter().enumerate() {
        let seen = r.join().expect("reader thread");
        eprintln!("subscriber {i}: {seen:?}");
        assert!(
            seen.saw_final,
            "subscriber {i} is not live after the soak: {seen:?}"
        );
        assert!(
            seen.finished > 0 && seen.chunks > 0,
            "subscriber {i}: {seen:?}"
        );
    }
    eprintln!("{finals} final runs until every subscriber had seen one");

    let (rss, most_lines) = samples.lock().unwrap().clone();
    let rss_max = rss.iter().copied().max().unwrap_or(0);
    let rss_end = vm_kib(pid, "VmRSS");
    eprintln!(
        "RSS: {rss_warm} KiB after the warm-up, at most {rss_max} KiB, {rss_end} KiB at the \
         end; history file at most {most_lines} lines"
    );
    assert!(
        rss_max.max(rss_end) < rss_warm + RSS_GROWTH_KIB,
        "RSS grew from {rss_warm} KiB to {} KiB",
        rss_max.max(rss_end)
    );
    assert!(
        most_lines <= MAX_LINES,
        "the history file reached {most_lines} lines (logHistoryLimit {LIMIT})"
    );

    let back = wait_until(Duration::from_secs(5), || fd_count(pid) <= fd_baseline);
    assert!(
        back,
        "descriptors: {} after the soak, {fd_baseline} before",
        fd_count(pid)
    );
    let reaped = wait_until(Duration::from_secs(5), || zombie_children(pid).is_empty());
    assert!(reaped, "unreaped children: {:?}", zombie_children(pid));

    let page = server.ok("GetLogs", json!({"startOffset": 0}));
    assert_eq!(
        page["totalCount"],
        LIMIT.to_string(),
        "{}",
        page["totalCount"]
    );
    let newest = page["logs"][0].clone();

    // The history file describes the final history: a restart after SIGKILL brings it back.
    let mut server = server;
    server.signal(Signal::SIGKILL);
    server.wait_exit(Duration::from_secs(10)).expect("killed");
    let restarted = Server::start(config);
    let page = restarted.ok("GetLogs", json!({"startOffset": 0}));
    assert_eq!(page["totalCount"], LIMIT.to_string());
    assert_eq!(page["logs"][0], newest, "the newest entry after a restart");
    eprintln!("soak total {:?}", began.elapsed());
}
