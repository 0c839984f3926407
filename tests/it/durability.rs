//! History persistence tested the hard way: the service is SIGKILLed in the middle of
//! its work, as a power cut or the OOM killer would stop it, and a new service started on the
//! same state directory must bring back every execution that had finished, whole and exactly as
//! GetLogs showed it before (output, flags, times), and every execution that was running marked
//! as finished with exitCode -1 and an `actiond:` notice. Then the history file is cut at many
//! byte positions, as a power cut during a write leaves it: each complete record before the cut
//! must survive and a torn last line must be skipped and reported in the log. Further tests
//! check that a password never reaches the disk, that the file stays bounded over many runs,
//! that a restored run cannot be restarted (its arguments are not kept), and that a graceful
//! stop records the runs it kills.
//!
//! The tests know the file only as JSON lines that mention tracking ids and carry output: which
//! executions a truncated file still describes is worked out from the test's own tracking ids
//! and output markers found in its complete lines, not from the service's record format.
//! Executions of a killed service outlive it as orphans; each script writes its process group
//! id (`$$`) to a file so the test can kill the group.

use std::path::{Path, PathBuf};
use std::time::Instant;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::client::{Request, assert_entry_shape, assert_error, is_datetime};
use crate::harness::{
    GroupGuard, SOON, Server, TempDir, config_with, group_members, notices, read_pid_file,
    shell_action, wait_until,
};

/// The history file's name in the state directory (docs/configuration.md, "what is written to disk").
const HISTORY: &str = "history.jsonl";

/// A config keeping its history in `state`, showing the whole history on one GetLogs page.
pub(crate) fn persistent(state: &TempDir, limit: usize, actions: Vec<Value>) -> Value {
    let mut config = config_with(actions);
    config["stateDirectory"] = json!(state.path().to_str().expect("UTF-8 temp path"));
    config["logHistoryLimit"] = json!(limit);
    config["logHistoryPageSize"] = json!(1000);
    config
}

fn history_path(state: &TempDir) -> PathBuf {
    state.path().join(HISTORY)
}

fn line_count(path: &Path) -> usize {
    std::fs::read(path)
        .map(|b| b.iter().filter(|c| **c == b'\n').count())
        .unwrap_or(0)
}

/// Stops the service the way a power cut does: SIGKILL, no chance to write anything more.
pub(crate) fn crash(server: &mut Server) {
    server.signal(Signal::SIGKILL);
    let status = server.wait_exit(SOON).expect("actiond exits after SIGKILL");
    assert_eq!(status.code(), None, "killed by a signal: {status:?}");
}

/// The whole history, newest first, paging until nothing remains.
pub(crate) fn all_logs(server: &Server) -> Vec<Value> {
    let mut entries = Vec::new();
    loop {
        let page = server.ok("GetLogs", json!({"startOffset": entries.len()}));
        let logs = page["logs"]
            .as_array()
            .unwrap_or_else(|| panic!("no logs array: {page}"));
        entries.extend(logs.iter().cloned());
        if page["countRemaining"] == "0" || logs.is_empty() {
            let total: usize = page["totalCount"]
                .as_str()
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("totalCount: {page}"));
            assert_eq!(total, entries.len(), "totalCount vs entries: {page}");
            return entries;
        }
    }
}

fn id_of(entry: &Value) -> &str {
    entry["executionTrackingId"]
        .as_str()
        .unwrap_or_else(|| panic!("no tracking id: {entry}"))
}

/// StartActionAndWait with a chosen tracking id; returns the entry.
fn run_as(server: &Server, action: &str, id: &str) -> Value {
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": action, "uniqueTrackingId": id}),
    );
    reply["logEntry"].clone()
}

/// StartAction with a chosen tracking id.
fn start_as(server: &Server, action: &str, id: &str) {
    server.ok(
        "StartAction",
        json!({"actionId": action, "uniqueTrackingId": id}),
    );
}

/// Lines of actiond's log at WARN level or above.
fn warnings(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
        .collect()
}

// ---------------------------------------------------------------------------------------
// A history with every kind of record, interrupted by SIGKILL

/// A run the test made, and how to recognise its records in the file.
#[derive(Debug, Clone)]
struct Run {
    id: String,
    /// Text found only in the record written when the run finished (its output, or for a
    /// run recorded only when finished, its quoted tracking id); `None` for a run that was
    /// still going when the service died.
    finish_marker: Option<String>,
}

impl Run {
    fn finished(id: &str, marker: &str) -> Run {
        Run {
            id: id.to_string(),
            finish_marker: Some(marker.to_string()),
        }
    }

    fn running(id: &str) -> Run {
        Run {
            id: id.to_string(),
            finish_marker: None,
        }
    }
}

/// What a crash left behind: the history GetLogs showed just before it, the runs, the file,
/// the state directory and the orphaned process groups (killed when dropped).
struct Crashed {
    before: Vec<Value>,
    runs: Vec<Run>,
    file: Vec<u8>,
    config: Value,
    /// Removed with the test; the crashed service wrote in it.
    _state: TempDir,
    _orphans: Vec<GroupGuard>,
    /// The dead service; kept so its config directory (with the pid files) stays.
    _server: Server,
}

/// The actions of the crash tests.
fn crash_actions() -> Vec<Value> {
    let mut long = shell_action(
        "long",
        "echo $$ > \"pid-$ACTIOND_TRACKING_ID\"; echo \"started-$ACTIOND_TRACKING_ID\"; exec sleep 30",
    );
    long["maxConcurrent"] = json!(3);
    long["timeout"] = json!(120);
    let mut slow = shell_action("slow", "echo \"out-$ACTIOND_TRACKING_ID\"; exec sleep 30");
    slow["timeout"] = json!(1);
    vec![
        shell_action(
            "quick",
            "echo \"out-$ACTIOND_TRACKING_ID\"; echo \"err-$ACTIOND_TRACKING_ID\" >&2",
        ),
        shell_action("fails", "echo \"out-$ACTIOND_TRACKING_ID\"; exit 7"),
        slow,
        long,
    ]
}

/// Runs one of every ending an execution can have (exited 0, exited 7, timed out, killed,
/// blocked, and three still running), SIGKILLs the service, and returns what is left.
fn crashed_history() -> Crashed {
    let state = TempDir::new();
    let config = persistent(&state, 50, crash_actions());
    let mut server = Server::start(config.clone());
    let mut runs = Vec::new();

    for i in 0..4 {
        let id = format!("dq-{i:02}");
        let entry = run_as(&server, "quick", &id);
        assert_eq!(entry["exitCode"], 0, "{entry}");
        runs.push(Run::finished(&id, &format!("out-{id}")));
    }
    let entry = run_as(&server, "fails", "df-00");
    assert_eq!(entry["exitCode"], 7, "{entry}");
    runs.push(Run::finished("df-00", "out-df-00"));
    let entry = run_as(&server, "slow", "dt-00");
    assert_eq!(entry["timedOut"], true, "{entry}");
    runs.push(Run::finished("dt-00", "out-dt-00"));

    // A run killed through the API.
    start_as(&server, "long", "dk-00");
    read_pid_file(&server.path("pid-dk-00"), SOON);
    let reply = server.ok("KillAction", json!({"executionTrackingId": "dk-00"}));
    assert_eq!(reply["killed"], true, "{reply}");
    let entry = server.wait_finished("dk-00", SOON);
    assert_eq!(entry["exitCode"], -1, "{entry}");
    // Its start record has no output yet; its finish record has what it printed.
    runs.push(Run::finished("dk-00", "started-dk-00"));

    // Three runs still going when the service dies, and a fourth blocked by maxConcurrent.
    let mut orphans = Vec::new();
    for i in 0..3 {
        let id = format!("dl-{i:02}");
        start_as(&server, "long", &id);
        let pgid = read_pid_file(&server.path(&format!("pid-{id}")), SOON);
        orphans.push(GroupGuard(pgid));
        runs.push(Run::running(&id));
    }
    let entry = run_as(&server, "long", "db-00");
    assert_eq!(entry["blocked"], true, "{entry}");
    // A blocked run is recorded once, when finished: any record of it is that one.
    runs.push(Run::finished("db-00", "\"db-00\""));

    // Finished runs after the running ones, so interrupted records are not simply the last.
    for i in 4..6 {
        let id = format!("dq-{i:02}");
        run_as(&server, "quick", &id);
        runs.push(Run::finished(&id, &format!("out-{id}")));
    }

    // The journal is written by its own thread: wait until it holds every record, so that
    // what the crash loses is only what a crash may lose.
    let path = history_path(&state);
    let complete = wait_until(SOON, || {
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned();
        runs.iter().all(|r| {
            text.contains(&format!("\"{}\"", r.id))
                && r.finish_marker.as_ref().is_none_or(|m| text.contains(m))
        })
    });
    assert!(complete, "the history file never recorded every run");
    let before = all_logs(&server);
    assert_eq!(before.len(), runs.len(), "GetLogs before the crash");

    crash(&mut server);
    let file = std::fs::read(&path).expect("read the history file");
    Crashed {
        before,
        runs,
        file,
        config,
        _state: state,
        _orphans: orphans,
        _server: server,
    }
}

/// How a run must come back from a given file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Absent,
    Finished,
    Interrupted,
}

/// What `bytes` can bring back of `run`, judged by its complete lines only.
fn expect_from(complete: &str, run: &Run) -> Expect {
    let lines: Vec<&str> = complete
        .lines()
        .filter(|l| l.contains(&format!("\"{}\"", run.id)))
        .collect();
    if lines.is_empty() {
        return Expect::Absent;
    }
    match &run.finish_marker {
        Some(m) if lines.iter().any(|l| l.contains(m.as_str())) => Expect::Finished,
        _ => Expect::Interrupted,
    }
}

/// The expectations for a file cut to `bytes`: one set if its last line is torn (or absent),
/// and a second one when the tail is a whole JSON value that merely lacks its newline, which
/// a service may read either way.
fn expectations(runs: &[Run], bytes: &[u8]) -> (Vec<Expect>, Vec<Expect>, bool) {
    let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let complete = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let tail = &bytes[end..];
    let tail_is_whole = !tail.is_empty() && serde_json::from_slice::<Value>(tail).is_ok();
    let strict: Vec<Expect> = runs.iter().map(|r| expect_from(&complete, r)).collect();
    let lenient = if tail_is_whole {
        let with_tail = String::from_utf8_lossy(bytes).into_owned();
        runs.iter().map(|r| expect_from(&with_tail, r)).collect()
    } else {
        strict.clone()
    };
    let torn = !tail.is_empty() && !tail_is_whole;
    (strict, lenient, torn)
}

/// Asserts an interrupted run's record against what GetLogs showed while it ran.
fn assert_interrupted(restored: &Value, before: &Value) {
    assert_entry_shape(restored);
    for field in [
        "executionTrackingId",
        "actionId",
        "actionTitle",
        "actionIcon",
        "user",
        "userClass",
        "datetimeStarted",
        "tags",
    ] {
        assert_eq!(
            restored[field], before[field],
            "{field} changed:\n{restored}\n{before}"
        );
    }
    assert_eq!(restored["executionStarted"], true, "{restored}");
    assert_eq!(restored["executionFinished"], true, "{restored}");
    assert_eq!(restored["blocked"], false, "{restored}");
    assert_eq!(restored["timedOut"], false, "{restored}");
    assert_eq!(restored["exitCode"], -1, "{restored}");
    // Finished, so it has a finish time ("" only while unfinished).
    let finished = restored["datetimeFinished"].as_str().unwrap_or_default();
    assert!(is_datetime(finished), "datetimeFinished {finished:?}");
    let notices = notices(restored);
    assert!(
        notices
            .iter()
            .any(|n| n.contains("stopped") && n.contains("running")),
        "no `actiond:` notice saying the service stopped while it ran: {restored}"
    );
}

/// Asserts that `after` (GetLogs of a service started on a file cut to `bytes`) holds exactly
/// what the file's complete records describe, in the order of `before`.
fn assert_restored(crashed: &Crashed, bytes: &[u8], after: &[Value], what: &str) {
    let (strict, lenient, _) = expectations(&crashed.runs, bytes);
    let mut expected_order = Vec::new();
    for (run, (s, l)) in crashed.runs.iter().zip(strict.iter().zip(&lenient)) {
        let before = crashed
            .before
            .iter()
            .find(|e| id_of(e) == run.id)
            .expect("every run was in GetLogs before the crash");
        let found = after.iter().find(|e| id_of(e) == run.id);
        let got = match found {
            None => Expect::Absent,
            Some(e) if e["exitCode"] == -1 && e["stderr"] != before["stderr"] => {
                Expect::Interrupted
            }
            Some(_) => Expect::Finished,
        };
        assert!(
            got == *s || got == *l,
            "{what}: run {} came back as {got:?}, expected {s:?} (or {l:?}); it was:\n{before}\n\
             and is:\n{found:?}",
            run.id
        );
        match (got, found) {
            (Expect::Finished, Some(e)) => assert_eq!(
                e, before,
                "{what}: a finished run must come back exactly as it was"
            ),
            (Expect::Interrupted, Some(e)) => assert_interrupted(e, before),
            _ => {}
        }
        if got != Expect::Absent {
            expected_order.push(run.id.clone());
        }
    }
    assert_eq!(
        after.len(),
        expected_order.len(),
        "{what}: unexpected entries in {after:?}"
    );
    // Newest first, as before the crash.
    let before_order: Vec<&str> = crashed
        .before
        .iter()
        .map(id_of)
        .filter(|id| expected_order.iter().any(|e| e == id))
        .collect();
    let after_order: Vec<&str> = after.iter().map(id_of).collect();
    assert_eq!(after_order, before_order, "{what}: order of the history");
}

#[test]
fn after_sigkill_finished_runs_come_back_whole_and_running_ones_marked_interrupted() {
    let crashed = crashed_history();
    let interrupted = ["dl-00", "dl-01", "dl-02"];

    let server = Server::start(crashed.config.clone());
    let after = all_logs(&server);
    assert_restored(&crashed, &crashed.file, &after, "whole file");
    for id in interrupted {
        assert!(after.iter().any(|e| id_of(e) == id), "{id} not restored");
    }
    // ExecutionStatus finds restored records too.
    let entry = server.status("dl-00");
    assert_eq!(
        Some(&entry),
        after.iter().find(|e| id_of(e) == "dl-00"),
        "ExecutionStatus of a restored run"
    );

    // Restored records hold no place: all three `long` slots are free although three
    // interrupted runs of it are in the history.
    for i in 0..3 {
        let id = format!("new-long-{i}");
        start_as(&server, "long", &id);
        let entry = server.status(&id);
        assert_eq!(
            entry["blocked"], false,
            "an interrupted run still counts as running: {entry}"
        );
        let _group = GroupGuard(read_pid_file(&server.path(&format!("pid-{id}")), SOON));
        server.ok("KillAction", json!({"executionTrackingId": id}));
        server.wait_finished(&id, SOON);
    }
    // New runs take new ids; a restored id is taken.
    let entry = run_as(&server, "quick", "after-crash");
    assert_eq!(entry["stdout"], "out-after-crash\n", "{entry}");
    let (status, body) = server.call(
        "StartAction",
        json!({"actionId": "quick", "uniqueTrackingId": "dq-00"}),
    );
    assert_eq!(status, 409, "a restored tracking id reused: {body}");
    assert_eq!(body["code"], "already_exists", "{body}");

    let log = server.stop_and_log();
    let warned = warnings(&log);
    assert!(
        warned.iter().all(|l| !l.contains(HISTORY)),
        "the intact file was reported as damaged: {warned:?}"
    );

    // A second restart brings back the same records, the interrupted ones included (their
    // finish time is not re-stamped).
    let server = Server::start(crashed.config.clone());
    let again = all_logs(&server);
    for entry in &after {
        let id = id_of(entry);
        let later = again.iter().find(|e| id_of(e) == id);
        assert_eq!(Some(entry), later, "{id} changed across a second restart");
    }
}

/// A small deterministic PRNG (xorshift64*), so the cut positions are the same on every run
/// and a failure can be reproduced.
struct Prng(u64);

impl Prng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

#[test]
fn a_history_file_cut_at_any_byte_keeps_every_complete_record() {
    const RANDOM_CUTS: usize = 40;
    let crashed = crashed_history();
    let file = &crashed.file;
    let len = file.len();
    let newlines: Vec<usize> = file
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i)
        .collect();
    assert!(newlines.len() >= 10, "a short history: {newlines:?}");

    // Special places: nothing, inside the first line, exactly at a line boundary, just
    // before the last newline (a whole record without its newline), one byte into the last
    // line; then random ones.
    let mut cuts = vec![
        0,
        newlines[0] / 2,
        newlines[newlines.len() / 2] + 1,
        len - 1,
        newlines[newlines.len() - 2] + 2,
    ];
    let mut prng = Prng(0x5EED_D00D_F00D);
    cuts.extend((0..RANDOM_CUTS).map(|_| prng.below(len)));
    eprintln!(
        "file of {len} bytes, {} lines; cuts {cuts:?}",
        newlines.len()
    );

    for cut in cuts {
        let bytes = &file[..cut];
        let state = TempDir::new();
        std::fs::write(state.path().join(HISTORY), bytes).expect("write the cut file");
        let mut config = crashed.config.clone();
        config["stateDirectory"] = json!(state.path().to_str().expect("UTF-8 path"));
        let server = Server::start(config);
        let after = all_logs(&server);
        let what = format!("cut at byte {cut} of {len}");
        assert_restored(&crashed, bytes, &after, &what);
        let log = server.stop_and_log();

        let (_, _, torn) = expectations(&crashed.runs, bytes);
        let reported: Vec<&str> = warnings(&log)
            .into_iter()
            .filter(|l| l.contains(HISTORY))
            .collect();
        if torn {
            assert!(
                !reported.is_empty(),
                "{what}: the torn last line was not reported in the log"
            );
        } else {
            assert!(
                reported.is_empty(),
                "{what}: a file of whole lines was reported as damaged: {reported:?}"
            );
        }
    }
}

#[test]
fn a_torn_file_is_repaired_so_later_records_are_not_lost() {
    // The service skips a torn last line at start; it must not then append its own records
    // to that fragment (which would glue the next record onto it and lose it), whether or
    // not anything before the tear could be restored.
    let crashed = crashed_history();
    let file = &crashed.file;
    let first_newline = file.iter().position(|b| *b == b'\n').expect("a line");
    let last_newline = file.iter().rposition(|b| *b == b'\n').expect("a line");
    let second_last = file[..last_newline]
        .iter()
        .rposition(|b| *b == b'\n')
        .expect("two lines");
    for cut in [first_newline / 2, second_last + 5] {
        let what = format!("cut at byte {cut}");
        let state = TempDir::new();
        std::fs::write(state.path().join(HISTORY), &file[..cut]).expect("write the cut file");
        let mut config = crashed.config.clone();
        config["stateDirectory"] = json!(state.path().to_str().expect("UTF-8 path"));

        let mut server = Server::start(config.clone());
        let restored = all_logs(&server).len();
        // A run that is recorded only when it starts, then the service dies again.
        start_as(&server, "long", "after-tear");
        let _group = GroupGuard(read_pid_file(&server.path("pid-after-tear"), SOON));
        let recorded = wait_until(SOON, || {
            String::from_utf8_lossy(&std::fs::read(history_path(&state)).unwrap_or_default())
                .contains("\"after-tear\"")
        });
        assert!(recorded, "{what}: the start was never written");
        crash(&mut server);

        let server = Server::start(config);
        let after = all_logs(&server);
        let log = server.stop_and_log();
        let entry = after
            .iter()
            .find(|e| id_of(e) == "after-tear")
            .unwrap_or_else(|| {
                panic!(
                    "{what}: the run started after the torn file was read is lost; the file \
                     holds:\n{}",
                    String::from_utf8_lossy(&std::fs::read(history_path(&state)).unwrap())
                )
            });
        assert_eq!(entry["exitCode"], -1, "{what}: {entry}");
        assert_eq!(after.len(), restored + 1, "{what}");
        let reported: Vec<&str> = warnings(&log)
            .into_iter()
            .filter(|l| l.contains(HISTORY))
            .collect();
        assert!(
            reported.is_empty(),
            "{what}: the file was still damaged at the second start: {reported:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// What is never written, and how big the file gets

#[test]
fn a_password_argument_never_reaches_the_history_file() {
    const SECRET: &str = "Pw-9c41e7-never-on-disk";
    let state = TempDir::new();
    let password_arg = json!([{"name": "pw", "type": "password"}]);
    let mut shown = shell_action("shown", "echo \"pw=$PW\"; echo \"$PW\" >&2");
    shown["arguments"] = password_arg.clone();
    let mut held = shell_action("held", "echo $$ > pid-held; echo \"$PW\"; exec sleep 30");
    held["arguments"] = password_arg;
    held["timeout"] = json!(120);
    let config = persistent(&state, 50, vec![shown, held]);
    let mut server = Server::start(config.clone());

    let args = json!([{"name": "pw", "value": SECRET}]);
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": "shown", "arguments": args}),
    );
    let entry = &reply["logEntry"];
    assert_eq!(entry["exitCode"], 0, "{entry}");
    assert!(
        !entry.to_string().contains(SECRET),
        "the password is shown: {entry}"
    );
    server.ok(
        "StartAction",
        json!({"actionId": "held", "arguments": args}),
    );
    let _group = GroupGuard(read_pid_file(&server.path("pid-held"), SOON));

    let path = history_path(&state);
    let both = wait_until(SOON, || line_count(&path) >= 3);
    assert!(both, "the history file has {} lines", line_count(&path));
    crash(&mut server);

    let assert_nowhere = |when: &str| {
        for file in std::fs::read_dir(state.path()).expect("state dir") {
            let file = file.expect("dir entry").path();
            let bytes = std::fs::read(&file).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                !text.contains(SECRET),
                "{when}: the password is in {}",
                file.display()
            );
        }
    };
    assert_nowhere("after the crash");

    // The restart rewrites the file from the restored records: still no password.
    let server = Server::start(config);
    let after = all_logs(&server);
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(!Value::from(after).to_string().contains(SECRET));
    server.stop();
    assert_nowhere("after a restart and a stop");
}

#[test]
fn the_history_file_stays_bounded_over_200_runs_and_restores_the_newest() {
    const LIMIT: usize = 20;
    const RUNS: usize = 200;
    // compacted to the newest logHistoryLimit entries; docs/configuration.md bounds the file
    // at twice that many lines before a rewrite. A few lines more are allowed for writes
    // that race with the rewrite.
    const MAX_LINES: usize = 2 * LIMIT + 4;
    let state = TempDir::new();
    let config = persistent(
        &state,
        LIMIT,
        vec![shell_action("quick", "echo \"out-$ACTIOND_TRACKING_ID\"")],
    );
    let mut server = Server::start(config.clone());
    let path = history_path(&state);
    let began = Instant::now();
    let mut most = 0;
    for i in 0..RUNS {
        let id = format!("b-{i:03}");
        let entry = run_as(&server, "quick", &id);
        assert_eq!(entry["exitCode"], 0, "{entry}");
        let lines = line_count(&path);
        most = most.max(lines);
        assert!(
            lines <= MAX_LINES,
            "after {} runs the history file has {lines} lines (logHistoryLimit {LIMIT})",
            i + 1
        );
    }
    eprintln!(
        "{RUNS} runs in {:?}; the file never had more than {most} lines",
        began.elapsed()
    );
    let newest: Vec<String> = (RUNS - LIMIT..RUNS)
        .rev()
        .map(|i| format!("b-{i:03}"))
        .collect();
    let before = all_logs(&server);
    assert_eq!(
        before.iter().map(id_of).collect::<Vec<_>>(),
        newest,
        "the live history"
    );
    // Let the writer catch up, then lose the service.
    let last = format!("out-{}", newest[0]);
    let written = wait_until(SOON, || {
        String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).contains(&last)
    });
    assert!(written, "the last run never reached the file");
    crash(&mut server);

    let server = Server::start(config);
    let after = all_logs(&server);
    assert_eq!(after, before, "restored history after {RUNS} runs");
    server.stop();
    assert!(
        line_count(&path) <= MAX_LINES,
        "{} lines",
        line_count(&path)
    );
}

// ---------------------------------------------------------------------------------------
// Restored runs and a graceful stop

#[test]
fn restored_runs_cannot_be_restarted_and_a_graceful_stop_records_what_it_killed() {
    let state = TempDir::new();
    let mut args = shell_action("args", "echo \"hi $NAME\"");
    args["arguments"] = json!([{"name": "name", "type": "ascii", "default": "x"}]);
    let mut long = shell_action("long", "echo $$ > pid; exec sleep 30");
    long["timeout"] = json!(120);
    let config = persistent(&state, 50, vec![args, long]);
    let server = Server::start(config.clone());

    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": "args", "uniqueTrackingId": "with-args",
               "arguments": [{"name": "name", "value": "Ada"}]}),
    );
    assert_eq!(reply["logEntry"]["stdout"], "hi Ada\n", "{reply}");
    // Before the restart, RestartAction works: the arguments are in memory.
    let again = server.ok("RestartAction", json!({"executionTrackingId": "with-args"}));
    let again_id = again["executionTrackingId"]
        .as_str()
        .expect("new id")
        .to_string();
    assert_eq!(server.wait_finished(&again_id, SOON)["stdout"], "hi Ada\n");

    start_as(&server, "long", "stopped-by-sigterm");
    let group = GroupGuard(read_pid_file(&server.path("pid"), SOON));
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    let gone = wait_until(SOON, || group_members(group.0).is_empty());
    assert!(gone, "the shutdown left {:?}", group_members(group.0));
    // Dropped now, not at the end: a guard that outlives its group could kill a later group
    // that happens to get the same id (pids wrap quickly while the suite runs).
    drop(group);

    let server = Server::start(config);
    let logs = all_logs(&server);
    let killed = logs
        .iter()
        .find(|e| id_of(e) == "stopped-by-sigterm")
        .expect("the run stopped by the shutdown is restored");
    // The shutdown took it down through the ladder and recorded that: a killed run, not an
    // interrupted one.
    assert_eq!(killed["executionFinished"], true, "{killed}");
    assert_eq!(killed["exitCode"], -1, "{killed}");
    assert!(!notices(killed).is_empty(), "no notice: {killed}");
    assert!(
        notices(killed)
            .iter()
            .all(|n| !(n.contains("stopped") && n.contains("while"))),
        "a run the shutdown killed and recorded is marked as interrupted: {killed}"
    );

    for id in ["with-args", "stopped-by-sigterm"] {
        let req = Request::connect(
            "RestartAction",
            json!({"executionTrackingId": id}).to_string().as_bytes(),
        );
        let resp = crate::client::send(server.addr, &req);
        let message = assert_error(&resp, 400, "failed_precondition");
        eprintln!("RestartAction of restored {id}: {message}");
    }
    // The action itself runs as before.
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": "args", "arguments": [{"name": "name", "value": "Bo"}]}),
    );
    assert_eq!(reply["logEntry"]["stdout"], "hi Bo\n", "{reply}");
}
