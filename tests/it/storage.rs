//! The history file against real storage conditions, which a SIGKILL cannot show:
//!
//! - **Order.** Under `strace`, the fsync that makes a run's finish record durable must
//!   complete before the first byte that reports the run as finished leaves for a client
//!   (the StartActionAndWait answer, the `executionFinished` event), and the fsync of a start
//!   record before StartAction's answer. This is what a power cut tests.
//! - **A slow disk.** `strace` delays every `fdatasync` by a second, as a worn SD card might:
//!   the records queued meanwhile share the next fsync (group commit), starts beyond
//!   `historyQueueLength` waiting records are refused with `resource_exhausted` naming the
//!   setting, and every start that was accepted runs and is recorded.
//! - **Busy presses.** A flood of presses of a busy action under the same slow disk: its
//!   blocked records hold at most a quarter of the queue, and another action's press runs.
//! - **A full disk** (a small tmpfs filled up): starts are refused with `unavailable` naming
//!   the cause, a run that ends meanwhile is not reported as finished, and once there is
//!   space again everything waiting is written, reported, and found after a restart.
//!
//! They need strace (and root for the tmpfs): `#[ignore]`d, run by `scripts/test.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::client::{Conn, Request, assert_error};
use crate::durability::{all_logs, crash, persistent};
use crate::events::{EventStream, Next};
use crate::harness::{
    GATED, SOON, Server, TempDir, all_processes, send_together, shell_action, wait_until,
};

/// The actiond that `strace` started for `server` (the wrapper's child).
fn traced(server: &Server) -> i32 {
    let mut pid = None;
    wait_until(SOON, || {
        pid = all_processes()
            .into_iter()
            .find(|p| {
                p.ppid == server.pid()
                    && std::fs::read_link(format!("/proc/{}/exe", p.pid))
                        .is_ok_and(|exe| exe.ends_with("actiond"))
            })
            .map(|p| p.pid);
        pid.is_some()
    });
    pid.expect("strace's child is actiond")
}

/// SIGTERM to the traced actiond, then waits for strace to end with it.
fn stop_traced(mut server: Server) {
    kill(Pid::from_raw(traced(&server)), Signal::SIGTERM).expect("SIGTERM actiond");
    server
        .wait_exit(Duration::from_secs(20))
        .expect("strace ends with actiond");
}

fn quick() -> Value {
    let mut quick = shell_action("quick", "echo \"out-$ACTIOND_TRACKING_ID\"");
    quick["maxConcurrent"] = json!(64);
    quick
}

/// One line of strace's output: the thread and what it printed.
struct Call<'a> {
    tid: &'a str,
    text: &'a str,
}

fn calls(trace: &str) -> Vec<Call<'_>> {
    trace
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(tid, text)| Call {
            tid,
            text: text.trim_start(),
        })
        .collect()
}

fn is_history_write(c: &Call<'_>) -> bool {
    c.text.starts_with("write") && c.text.contains("history.jsonl>")
}

fn is_socket_write(c: &Call<'_>) -> bool {
    ["write(", "writev(", "sendto("]
        .iter()
        .any(|s| c.text.starts_with(s))
        && (c.text.contains("<TCP") || c.text.contains("socket:["))
}

/// Whether one buffer of a socket write mentions every one of `needles`. A `writev` carries
/// several messages at once (an event stream sends the queued events together), so the
/// needles must meet in one of its buffers, never across two messages.
fn one_buffer_holds(c: &Call<'_>, needles: &[&str]) -> bool {
    c.text
        .split("iov_base=")
        .any(|buffer| needles.iter().all(|n| buffer.contains(n)))
}

/// The index of the line where the first fsync of the history file after line `after`
/// returned successfully: the whole call, or its `resumed` half on the same thread.
fn sync_after(calls: &[Call<'_>], after: usize) -> Option<usize> {
    let is_sync = |t: &str| t.starts_with("fdatasync(") || t.starts_with("fsync(");
    let mut waiting: Vec<&str> = Vec::new();
    for (i, c) in calls.iter().enumerate().skip(after + 1) {
        if is_sync(c.text) && c.text.contains("history.jsonl>") {
            if c.text.ends_with("<unfinished ...>") {
                waiting.push(c.tid);
            } else if c.text.ends_with("= 0") {
                return Some(i);
            }
        } else if (c.text.starts_with("<... fdatasync resumed>")
            || c.text.starts_with("<... fsync resumed>"))
            && waiting.contains(&c.tid)
            && c.text.ends_with("= 0")
        {
            return Some(i);
        }
    }
    None
}

/// Asserts that the record of `id` (its line holding `kind`) was written and fsynced before
/// the first socket write that mentions `id` and `told`; returns the three line numbers.
fn assert_synced_before_told(trace: &str, id: &str, kind: &str, told: &str) -> [usize; 3] {
    let calls = calls(trace);
    let quoted = format!("\\\"{id}\\\"");
    let record = calls
        .iter()
        .position(|c| is_history_write(c) && c.text.contains(&quoted) && c.text.contains(kind))
        .unwrap_or_else(|| panic!("no write of the {kind} record of {id} in the trace"));
    let synced = sync_after(&calls, record)
        .unwrap_or_else(|| panic!("no fsync of the history file after the record of {id}"));
    let reported = calls
        .iter()
        .position(|c| is_socket_write(c) && one_buffer_holds(c, &[&quoted, told]))
        .unwrap_or_else(|| panic!("no answer mentioning {id} and {told} in the trace"));
    assert!(
        record < synced && synced < reported,
        "{id}: the {kind} record was written at line {record}, fsynced at {synced}, and the \
         client was told at {reported}:\n{}\n{}\n{}",
        calls[record].text,
        calls[synced].text,
        calls[reported].text
    );
    [record, synced, reported]
}

#[test]
#[ignore = "needs strace: scripts/test.sh runs it"]
fn every_answer_that_reports_a_run_follows_the_fsync_of_its_record() {
    let state = TempDir::new();
    let trace_dir = TempDir::new();
    let trace_file = trace_dir.path().join("trace");
    let trace_arg = trace_file.to_str().expect("UTF-8 path");
    let server = Server::start_wrapped(
        persistent(&state, 50, vec![quick()]),
        &[],
        &[
            "strace",
            "-f",
            "-qq",
            "-y",
            "-s",
            "65536",
            "-e",
            "signal=none",
            "-e",
            "trace=fdatasync,fsync,write,writev,sendto",
            "-o",
            trace_arg,
            "--",
        ],
    );
    let mut stream = EventStream::subscribe(server.addr);
    let started = server.ok(
        "StartAction",
        json!({"actionId": "quick", "uniqueTrackingId": "order-start"}),
    );
    assert_eq!(started["executionTrackingId"], "order-start");
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": "quick", "uniqueTrackingId": "order-wait"}),
    );
    assert_eq!(reply["logEntry"]["executionFinished"], true, "{reply}");
    // The event of the second run's end reaches the subscriber.
    let deadline = Instant::now() + SOON;
    loop {
        match stream.next(deadline.saturating_duration_since(Instant::now())) {
            Next::Frame(f) if String::from_utf8_lossy(&f.payload).contains("order-wait") => {
                if String::from_utf8_lossy(&f.payload).contains("executionFinished") {
                    break;
                }
            }
            Next::Frame(_) => {}
            other => panic!("no executionFinished event for order-wait: {other:?}"),
        }
    }
    server.wait_finished("order-start", SOON);
    drop(stream);
    stop_traced(server);

    let trace = std::fs::read_to_string(&trace_file).expect("strace's output");
    let start = assert_synced_before_told(
        &trace,
        "order-start",
        "\\\"kind\\\":\\\"started\\\"",
        "executionTrackingId",
    );
    let end = assert_synced_before_told(
        &trace,
        "order-wait",
        "\\\"kind\\\":\\\"finished\\\"",
        "\\\"executionFinished\\\":true",
    );
    // Both kinds of report were traced: the answer and the event, each after the fsync.
    let calls = calls(&trace);
    let reports = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            is_socket_write(c)
                && one_buffer_holds(c, &["order-wait", "\\\"executionFinished\\\":true"])
        })
        .map(|(i, _)| i)
        .collect::<Vec<_>>();
    assert!(reports.len() >= 2, "the answer and the event: {reports:?}");
    assert!(
        reports.iter().all(|i| *i > end[1]),
        "{reports:?} after {end:?}"
    );
    eprintln!("order: start {start:?}, end {end:?} (record, fsync, first report)");
}

/// `/metrics` as (name → value) for the history file's series.
fn history_metrics(server: &Server) -> (f64, f64) {
    let resp = crate::client::send(server.addr, &Request::get("/metrics"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let text = resp.text();
    let value = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
    };
    (
        value("actiond_history_file_records_total "),
        value("actiond_history_file_syncs_total "),
    )
}

#[test]
#[ignore = "needs strace: scripts/test.sh runs it"]
fn a_slow_disk_shares_fsyncs_and_refuses_starts_beyond_the_queue() {
    const QUEUE: usize = 4;
    const PRESSES: usize = 24;
    let state = TempDir::new();
    let mut config = persistent(&state, 1000, vec![quick()]);
    config["historyQueueLength"] = json!(QUEUE);
    config["maxConcurrentExecutions"] = json!(64);
    config["prometheus"] = json!({"enabled": true});
    // Every fdatasync takes a second longer: a disk far slower than the work.
    let server = Server::start_wrapped(
        config.clone(),
        &[],
        &[
            "strace",
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            "signal=none",
            "-e",
            "trace=fdatasync",
            "-e",
            "inject=fdatasync:delay_enter=1000000",
            "--",
        ],
    );
    let calls = (0..PRESSES)
        .map(|i| {
            let body = json!({"actionId": "quick", "uniqueTrackingId": format!("slow-{i}")});
            let bytes = serde_json::to_vec(&body).expect("JSON");
            (
                Conn::open(server.addr),
                Request::connect("StartAction", &bytes),
            )
        })
        .collect();
    let answers = send_together(calls);
    let mut accepted = Vec::new();
    let mut refused = 0;
    for (i, resp) in answers.iter().enumerate() {
        if resp.status == 200 {
            accepted.push(format!("slow-{i}"));
        } else {
            let message = assert_error(resp, 429, "resource_exhausted");
            assert!(
                message.contains("historyQueueLength") && message.contains("history.jsonl"),
                "the refusal names the setting and the file: {message}"
            );
            refused += 1;
        }
    }
    assert!(
        refused > 0 && accepted.len() >= QUEUE,
        "{} accepted, {refused} refused: {PRESSES} starts at once against a 1 s fsync and a \
         queue of {QUEUE} must be partly refused",
        accepted.len()
    );
    for id in &accepted {
        let entry = server.wait_finished(id, Duration::from_secs(60));
        assert_eq!(entry["exitCode"], 0, "{entry}");
    }
    let (records, syncs) = history_metrics(&server);
    eprintln!(
        "slow disk: {} accepted, {refused} refused; {records} records in {syncs} fsyncs",
        accepted.len()
    );
    // Each accepted run wrote two records; the fsyncs they needed were shared.
    assert!(records >= 2.0 * accepted.len() as f64, "{records} records");
    assert!(
        syncs < records,
        "group commit: {records} records, {syncs} fsyncs"
    );
    stop_traced(server);
    let server = Server::start(config_without_prometheus(config));
    let history = all_logs(&server);
    let ids: Vec<&str> = history
        .iter()
        .filter_map(|e| e["executionTrackingId"].as_str())
        .collect();
    for id in &accepted {
        assert!(
            ids.contains(&id.as_str()),
            "{id} is missing after the restart"
        );
    }
    assert_eq!(
        ids.len(),
        accepted.len(),
        "refused starts left no record: {ids:?}"
    );
}

/// A slow disk and a flood of presses of a busy action (the press of any MQTT client, or
/// a guest): the blocked records hold only their share of the queue (a quarter), and another
/// user's press of another action still runs. Before, the flood's blocked records filled
/// the whole queue and that press was refused.
#[test]
#[ignore = "needs strace: scripts/test.sh runs it"]
fn busy_presses_leave_the_disk_queue_to_runs() {
    const QUEUE: usize = 8;
    const FLOOD: usize = 40;
    let state = TempDir::new();
    let config = {
        let mut config = persistent(
            &state,
            1000,
            vec![quick(), shell_action("busy", "sleep 30")],
        );
        config["historyQueueLength"] = json!(QUEUE);
        config
    };
    let server = Server::start_wrapped(
        config,
        &[],
        &[
            "strace",
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            "signal=none",
            "-e",
            "trace=fdatasync",
            "-e",
            "inject=fdatasync:delay_enter=500000",
            "--",
        ],
    );
    server.ok(
        "StartAction",
        json!({"actionId": "busy", "uniqueTrackingId": "busy-run"}),
    );
    let addr = server.addr;
    let flood = thread::spawn(move || {
        let calls = (0..FLOOD)
            .map(|i| {
                let body = json!({"actionId": "busy", "uniqueTrackingId": format!("busy-{i}")});
                let bytes = serde_json::to_vec(&body).expect("JSON");
                (Conn::open(addr), Request::connect("StartAction", &bytes))
            })
            .collect();
        send_together(calls)
    });
    // The flood has reached the engine (its first blocked presses are said) and its records
    // wait behind a fsync of half a second meanwhile.
    assert!(
        wait_until(SOON, || server.log_contains("blocked: ")),
        "the flood never reached the engine"
    );
    let (status, body) = server.call(
        "StartAction",
        json!({"actionId": "quick", "uniqueTrackingId": "legit"}),
    );
    assert_eq!(status, 200, "another user's press is refused: {body}");
    let answers = flood.join().expect("the flood's thread");
    let mut refused = 0;
    for resp in answers.iter().filter(|r| r.status != 200) {
        let message = assert_error(resp, 429, "resource_exhausted");
        assert!(
            message.contains("a quarter of historyQueueLength"),
            "the refusal names the blocked presses' share: {message}"
        );
        refused += 1;
    }
    eprintln!("slow disk: {refused} of {FLOOD} busy presses refused, the other press ran");
    assert!(
        refused > 0,
        "{FLOOD} busy presses never filled their share of {QUEUE}"
    );
    let entry = server.wait_finished("legit", Duration::from_secs(60));
    assert_eq!(entry["exitCode"], 0, "{entry}");
    stop_traced(server);
}

fn config_without_prometheus(mut config: Value) -> Value {
    config
        .as_object_mut()
        .expect("a mapping")
        .remove("prometheus");
    config
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct Tmpfs {
    dir: TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = TempDir::new();
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .status()
            .expect("run mount");
        assert!(status.success(), "mount a tmpfs (needs root): {status}");
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the file system: writes `filler` until the disk is full.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.path().join("filler");
        let mut f = std::fs::File::create(&path).expect("create the filler");
        let block = vec![b'x'; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.flush();
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
#[ignore = "mounts a tmpfs (root): scripts/test.sh runs it"]
fn a_full_disk_refuses_starts_reports_nothing_unwritten_and_catches_up() {
    let disk = Tmpfs::mount("512k");
    let state_dir = disk.path().join("state");
    // Its finish record is longer than a page: tmpfs hands out whole pages, so a short record
    // would still fit in the page the file already has, and the full disk would go unnoticed.
    let mut gated = shell_action(
        "gated",
        &format!("{GATED}; head -c 8192 /dev/zero | tr '\\0' x"),
    );
    gated["timeout"] = json!(120);
    let mut config = crate::harness::config_with(vec![quick(), gated]);
    config["stateDirectory"] = json!(state_dir.to_str().expect("UTF-8 path"));
    config["logHistoryPageSize"] = json!(1000);
    let mut server = Server::start(config.clone());
    server.run("quick");
    // A run that will end while its record cannot be written, and a client waiting for it.
    let addr = server.addr;
    let waiter = thread::spawn(move || {
        let mut conn = Conn::open(addr);
        let body = json!({"actionId": "gated", "uniqueTrackingId": "during"});
        let bytes = serde_json::to_vec(&body).expect("JSON");
        conn.send(&Request::connect("StartActionAndWait", &bytes))
    });
    let started = wait_until(SOON, || {
        let (status, body) =
            server.call("ExecutionStatus", json!({"executionTrackingId": "during"}));
        status == 200 && body["logEntry"]["executionStarted"] == true
    });
    assert!(started, "the gated run started");

    let filler = disk.fill();
    std::fs::write(server.path("go"), b"").expect("open the gate");
    assert!(
        wait_until(SOON, || server
            .log_contains("history.jsonl cannot be written")),
        "the writer says that it cannot write"
    );
    let (status, body) = server.call("StartAction", json!({"actionId": "quick"}));
    assert_eq!(status, 503, "{body}");
    let message = crate::client::assert_json_error(&body, "unavailable");
    assert!(
        message.contains("No space left on device") && message.contains("history.jsonl"),
        "the refusal says why: {message}"
    );
    // However long it takes, a run whose end is not on disk is not reported as finished.
    // Wall time: a report that must not come has no event to wait for; half a second gives
    // the writer's retries time to go wrong.
    thread::sleep(Duration::from_millis(500));
    let entry = server.status("during");
    assert_eq!(entry["executionFinished"], false, "{entry}");
    assert!(
        !waiter.is_finished(),
        "StartActionAndWait answered before its record was written"
    );

    std::fs::remove_file(&filler).expect("free the disk");
    let during = waiter.join().expect("the waiter");
    assert_eq!(during.status, 200, "{}", during.text());
    let entry = &during.json()["logEntry"];
    assert_eq!(entry["executionFinished"], true, "{entry}");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    server.run("quick");

    crash(&mut server);
    let server = Server::start(config);
    let history = all_logs(&server);
    let finished: Vec<&str> = history
        .iter()
        .filter(|e| e["executionFinished"] == true && e["exitCode"] == 0)
        .filter_map(|e| e["executionTrackingId"].as_str())
        .collect();
    assert!(finished.contains(&"during"), "{history:?}");
    assert_eq!(
        finished.len(),
        3,
        "two quick runs and `during`: {history:?}"
    );
    assert_eq!(
        history.len(),
        3,
        "the refused start left no record: {history:?}"
    );
    let log = server.stop_and_log();
    assert!(
        !log.contains("could not be read") && !log.contains("cut off"),
        "the rewritten file is clean: {log}"
    );
}
