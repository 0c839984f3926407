//! Executions as the operating system sees them: every row of the
//! LogEntry state table, the process-group kill ladder (checked in /proc, not just in the
//! record), reaping of children and orphans, descriptor and memory bounds over many or huge
//! runs, the output cap, and UTF-8 repair of command output.
//!
//! Scripts report their pids by writing `$$` (the group id, since each execution leads its
//! own group) or `$!` into files of the config directory, which is their working directory.
//! Commands that must still be running when the test looks wait for a `go` file the test
//! creates, so no assertion depends on how fast the machine is.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::{Request, assert_entry_shape, is_datetime};
use crate::harness::{
    GATED, GroupGuard, PidGuard, SOON, Server, UNTIL_STOPPED, assert_blocked, assert_group_gone,
    config_with, fd_count, group_members, notices, proc_stat, read_pid_file, repeat_for,
    shell_action, vm_kib, wait_until, zombie_children,
};

/// Waits (briefly, reaping may lag the answer) until actiond has no zombie children.
fn assert_no_zombie_children(server: &Server) {
    let clean = wait_until(Duration::from_secs(2), || {
        zombie_children(server.pid()).is_empty()
    });
    assert!(
        clean,
        "zombie children of actiond: {:?}",
        zombie_children(server.pid())
    );
}

/// Starts a TERM-ignoring command with two grandchildren and returns (tracking id, pgid)
/// once all three processes exist.
fn start_stubborn_group(server: &Server, action: &str) -> (String, i32) {
    let id = server.start_action(action);
    let pgid = read_pid_file(&server.path("pid"), SOON);
    let all_there = wait_until(SOON, || group_members(pgid).len() >= 3);
    assert!(all_there, "group {pgid}: {:?}", group_members(pgid));
    (id, pgid)
}

/// A shell that ignores SIGTERM (as do its children: an ignored disposition is inherited)
/// and waits on two grandchildren.
const STUBBORN: &str = "trap '' TERM\necho $$ > pid\nsleep 1000 & sleep 1000 & wait\n";

// ---------------------------------------------------------------------------------------
// The state table of an execution (phase and ending → the LogEntry flags)

#[test]
fn exited_execution_records_its_status_and_streams() {
    let server = Server::start(config_with(vec![shell_action(
        "both",
        "echo out; echo err >&2; exit 0",
    )]));
    let entry = server.run("both");
    assert_entry_shape(&entry);
    assert_eq!(entry["executionStarted"], true, "{entry}");
    assert_eq!(entry["executionFinished"], true, "{entry}");
    assert_eq!(entry["blocked"], false, "{entry}");
    assert_eq!(entry["timedOut"], false, "{entry}");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    assert_eq!(entry["stdout"], "out\n", "{entry}");
    assert_eq!(entry["stderr"], "err\n", "{entry}");
    assert_eq!(entry["user"], "guest", "{entry}");
    assert_eq!(entry["userClass"], "guest", "{entry}");
    assert_eq!(entry["tags"], json!([]), "{entry}");
    assert_eq!(entry["actionId"], "both", "{entry}");
    assert_eq!(entry["actionTitle"], "Title both", "{entry}");
    let started = entry["datetimeStarted"].as_str().unwrap_or_default();
    let finished = entry["datetimeFinished"].as_str().unwrap_or_default();
    assert!(is_datetime(started) && is_datetime(finished), "{entry}");
    assert!(started <= finished, "{entry}");
}

#[test]
fn non_zero_exit_status_is_recorded() {
    let server = Server::start(config_with(vec![
        shell_action("seven", "exit 7"),
        shell_action("max", "exit 255"),
    ]));
    for (action, code) in [("seven", 7), ("max", 255)] {
        let entry = server.run(action);
        assert_eq!(entry["exitCode"], code, "{entry}");
        assert_eq!(entry["executionStarted"], true, "{entry}");
        assert_eq!(entry["executionFinished"], true, "{entry}");
        assert_eq!(entry["timedOut"], false, "{entry}");
    }
}

#[test]
fn running_execution_is_started_and_unfinished() {
    let server = Server::start(config_with(vec![shell_action(
        "gated",
        &format!("echo begun; {GATED}; echo end"),
    )]));
    let id = server.start_action("gated");
    let entry = server.wait_started(&id);
    assert_entry_shape(&entry);
    assert_eq!(entry["executionFinished"], false, "{entry}");
    assert_eq!(entry["blocked"], false, "{entry}");
    assert_eq!(entry["timedOut"], false, "{entry}");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    assert_eq!(entry["datetimeFinished"], "", "{entry}");
    assert!(is_datetime(
        entry["datetimeStarted"].as_str().unwrap_or_default()
    ));
    std::fs::write(server.path("go"), "").expect("write go");
    let entry = server.wait_finished(&id, SOON);
    assert_eq!(entry["stdout"], "begun\nend\n", "{entry}");
    assert_eq!(entry["exitCode"], 0, "{entry}");
}

#[test]
fn timed_out_execution_is_marked_and_explained() {
    let mut action = shell_action("slow", "sleep 30");
    action["timeout"] = json!(1);
    let server = Server::start(config_with(vec![action]));
    let began = Instant::now();
    let entry = server.run("slow");
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "{:?}",
        began.elapsed()
    );
    assert_entry_shape(&entry);
    assert_eq!(entry["timedOut"], true, "{entry}");
    assert_eq!(entry["exitCode"], -1, "{entry}");
    assert_eq!(entry["executionStarted"], true, "{entry}");
    assert_eq!(entry["executionFinished"], true, "{entry}");
    assert_eq!(entry["blocked"], false, "{entry}");
    let notices = notices(&entry);
    assert!(
        notices.iter().any(|l| l.to_lowercase().contains("time")),
        "no `actiond:` timeout notice in stderr: {entry}"
    );
}

#[test]
fn killed_execution_says_who_killed_it() {
    let server = Server::start(config_with(vec![shell_action("sleeper", "sleep 1000")]));
    let id = server.start_action("sleeper");
    server.wait_started(&id);
    let reply = server.ok("KillAction", json!({"executionTrackingId": id}));
    assert_eq!(reply["killed"], true, "{reply}");
    let entry = server.wait_finished(&id, SOON);
    assert_eq!(entry["exitCode"], -1, "{entry}");
    assert_eq!(entry["timedOut"], false, "{entry}");
    assert_eq!(entry["executionStarted"], true, "{entry}");
    assert_eq!(entry["blocked"], false, "{entry}");
    let notices = notices(&entry);
    assert!(
        notices
            .iter()
            .any(|l| l.to_lowercase().contains("kill") && l.contains("guest")),
        "no `actiond:` notice naming the kill and `guest`: {entry}"
    );
}

#[test]
fn execution_ended_by_a_signal_has_exit_code_minus_one() {
    let server = Server::start(config_with(vec![shell_action(
        "suicide",
        "echo before; kill -KILL $$",
    )]));
    let entry = server.run("suicide");
    assert_eq!(entry["exitCode"], -1, "{entry}");
    assert_eq!(entry["stdout"], "before\n", "{entry}");
    assert_eq!(entry["timedOut"], false, "{entry}");
    assert_eq!(entry["executionStarted"], true, "{entry}");
    assert_eq!(entry["executionFinished"], true, "{entry}");
}

#[test]
fn failed_spawn_is_recorded_with_a_notice() {
    let server = Server::start(config_with(vec![json!({
        "id": "missing",
        "title": "Missing",
        "exec": ["/nonexistent/program"],
    })]));
    let entry = server.run("missing");
    assert_entry_shape(&entry);
    assert_eq!(entry["executionStarted"], false, "{entry}");
    assert_eq!(entry["executionFinished"], true, "{entry}");
    assert_eq!(entry["blocked"], false, "{entry}");
    assert_eq!(entry["timedOut"], false, "{entry}");
    assert_eq!(entry["exitCode"], -1, "{entry}");
    assert!(!notices(&entry).is_empty(), "no `actiond:` notice: {entry}");
}

#[test]
fn second_press_while_running_is_blocked() {
    let server = Server::start(config_with(vec![shell_action("gated", GATED)]));
    let first = server.start_action("gated");
    server.wait_started(&first);
    assert_blocked(&server.run("gated"));
    // A non-waiting start is blocked the same way and the record says so.
    let id = server.start_action("gated");
    assert_eq!(server.status(&id)["blocked"], true);
    // The first one was not disturbed.
    std::fs::write(server.path("go"), "").expect("write go");
    let entry = server.wait_finished(&first, SOON);
    assert_eq!(entry["exitCode"], 0, "{entry}");
    assert_eq!(entry["blocked"], false, "{entry}");
}

#[test]
fn max_concurrent_allows_that_many_parallel_runs() {
    let mut action = shell_action("pair", GATED);
    action["maxConcurrent"] = json!(2);
    let server = Server::start(config_with(vec![action]));
    let first = server.start_action("pair");
    let second = server.start_action("pair");
    server.wait_started(&first);
    server.wait_started(&second);
    let third = server.start_action("pair");
    assert_eq!(server.status(&third)["blocked"], true);
    std::fs::write(server.path("go"), "").expect("write go");
    for id in [first, second] {
        assert_eq!(server.wait_finished(&id, SOON)["exitCode"], 0);
    }
}

/// The names of the service's threads (`/proc/PID/task/*/comm`).
fn thread_names(pid: i32) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("read the tasks");
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect()
}

/// Starts `n` gated runs of `gated`, each while the ones before it still run, then lets them
/// all finish; the service's thread names once they have.
fn overlapping_runs(server: &Server, n: usize) -> Vec<String> {
    let ids: Vec<String> = (0..n)
        .map(|_| {
            let id = server.start_action("gated");
            server.wait_started(&id);
            id
        })
        .collect();
    std::fs::write(server.path("go"), "").expect("write go");
    for id in ids {
        assert_eq!(server.wait_finished(&id, SOON)["exitCode"], 0);
    }
    thread_names(server.pid())
}

#[test]
fn on_one_cpu_every_spawn_happens_on_the_event_loop() {
    let config = || {
        let mut action = shell_action("gated", GATED);
        action["maxConcurrent"] = json!(4);
        config_with(vec![action])
    };
    // On a board with one core the blocking pool's hand-off only costs CPU: its threads
    // (tokio names them `tokio-rt-worker`; besides the start-up lookup below, nothing else
    // in actiond uses the pool without a reload or MQTT) never appear, however many runs
    // overlap.
    let pinned = Server::start_wrapped(config(), &[], &["taskset", "-c", "0"]);
    let status = std::fs::read_to_string(format!("/proc/{}/status", pinned.pid())).unwrap();
    assert!(
        status.lines().any(|l| l == "Cpus_allowed_list:	0"),
        "taskset did not pin actiond: {status}"
    );
    // The watcher looks up symlinks on the pool once at start (then says what it watches);
    // the pool's thread leaves after 10 s idle, and none may come back for the spawns.
    assert!(
        pinned.log_shows("watching "),
        "the watcher never said what it watches"
    );
    assert!(
        wait_until(Duration::from_secs(20), || {
            !thread_names(pinned.pid())
                .iter()
                .any(|n| n == "tokio-rt-worker")
        }),
        "the pool's start-up thread stayed"
    );
    let names = overlapping_runs(&pinned, 4);
    assert!(!names.iter().any(|n| n == "tokio-rt-worker"), "{names:?}");
    // With more cores the same overlapping runs are spawned on the pool, so the check above
    // can see a pool thread when there is one.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus >= 2 {
        let free = Server::start(config());
        let names = overlapping_runs(&free, 4);
        assert!(names.iter().any(|n| n == "tokio-rt-worker"), "{names:?}");
    }
}

#[test]
fn max_concurrent_executions_blocks_across_actions() {
    let mut config = config_with(vec![shell_action("one", GATED), shell_action("two", GATED)]);
    config["maxConcurrentExecutions"] = json!(1);
    let server = Server::start(config);
    let first = server.start_action("one");
    server.wait_started(&first);
    let entry = server.run("two");
    assert_eq!(entry["blocked"], true, "{entry}");
    assert_eq!(entry["exitCode"], -1, "{entry}");
    std::fs::write(server.path("go"), "").expect("write go");
    server.wait_finished(&first, SOON);
    // With the slot free again, `two` runs.
    let id = server.start_action("two");
    assert_eq!(server.wait_finished(&id, SOON)["blocked"], false);
}

// ---------------------------------------------------------------------------------------
// How commands are run

#[test]
fn exec_runs_its_argv_without_a_shell() {
    let server = Server::start(config_with(vec![json!({
        "id": "argv",
        "title": "Argv",
        "exec": ["printf", "%s|", "a b", "$HOME", "`x`;"],
    })]));
    let entry = server.run("argv");
    assert_eq!(entry["stdout"], "a b|$HOME|`x`;|", "{entry}");
    assert_eq!(entry["exitCode"], 0, "{entry}");
}

#[test]
fn commands_run_in_the_config_directory() {
    let server = Server::start(config_with(vec![shell_action("where", "pwd -P")]));
    let entry = server.run("where");
    let expected = format!("{}\n", server.dir().display());
    assert_eq!(entry["stdout"], expected.as_str(), "{entry}");
}

#[test]
fn commands_see_the_actiond_variables() {
    let server = Server::start(config_with(vec![shell_action(
        "env",
        r#"echo "$ACTIOND|$ACTIOND_TRACKING_ID|$ACTIOND_USER""#,
    )]));
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": "env", "uniqueTrackingId": "env-1"}),
    );
    assert_eq!(reply["logEntry"]["stdout"], "1|env-1|guest\n", "{reply}");
}

#[test]
fn stdin_is_dev_null() {
    // `cat` would wait forever on an inherited terminal or an open pipe.
    let server = Server::start(config_with(vec![shell_action(
        "stdin",
        "cat; readlink /proc/$$/fd/0",
    )]));
    let entry = server.run("stdin");
    assert_eq!(entry["stdout"], "/dev/null\n", "{entry}");
}

/// The service handles SIGTERM, SIGINT, SIGCHLD and SIGIO (and the Rust runtime SIGSEGV and
/// SIGBUS); a command gets none of those handlers, and SIGPIPE at its default, on its first
/// run and on the runs after it (which reset only the handlers the service was found to have).
#[test]
fn commands_get_no_handler_of_the_service() {
    let server = Server::start(config_with(vec![json!({
        "id": "status",
        "title": "Status",
        "exec": ["cat", "/proc/self/status"],
    })]));
    let mask = |status: &str, field: &str| {
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .unwrap_or_else(|| panic!("no {field} in {status}"));
        u64::from_str_radix(line.trim(), 16).unwrap()
    };
    for run in 0..3 {
        let entry = server.run("status");
        let status = entry["stdout"].as_str().unwrap();
        assert_eq!(mask(status, "SigCgt:"), 0, "run {run}: {status}");
        assert_eq!(
            mask(status, "SigIgn:") & (1 << (libc::SIGPIPE - 1)),
            0,
            "run {run}: SIGPIPE ignored: {status}"
        );
        assert_eq!(mask(status, "SigBlk:"), 0, "run {run}: {status}");
    }
}

#[test]
fn execution_leads_its_own_process_group() {
    let server = Server::start(config_with(vec![shell_action(
        "leader",
        &format!("echo $$ > pid; {GATED}"),
    )]));
    let id = server.start_action("leader");
    let pid = read_pid_file(&server.path("pid"), SOON);
    let _guard = GroupGuard(pid);
    let stat = proc_stat(pid).expect("leader is alive");
    assert_eq!(
        stat.pgrp, pid,
        "the command is not its group's leader: {stat:?}"
    );
    let service = proc_stat(server.pid()).expect("actiond is alive");
    assert_ne!(stat.pgrp, service.pgrp);
    std::fs::write(server.path("go"), "").expect("write go");
    server.wait_finished(&id, SOON);
}

// ---------------------------------------------------------------------------------------
// The kill ladder

#[test]
fn kill_escalates_to_sigkill_for_a_group_that_ignores_sigterm() {
    let server = Server::start(config_with(vec![shell_action("stubborn", STUBBORN)]));
    let (id, pgid) = start_stubborn_group(&server, "stubborn");
    let _guard = GroupGuard(pgid);
    let began = Instant::now();
    let reply = server.ok("KillAction", json!({"executionTrackingId": id}));
    assert_eq!(reply["killed"], true, "{reply}");
    assert_group_gone(pgid);
    // Everything ignores SIGTERM, so only the SIGKILL after the grace period (1 s) can have
    // ended them.
    assert!(
        began.elapsed() >= Duration::from_secs(1),
        "group gone after {:?}, before killGracePeriod",
        began.elapsed()
    );
    let entry = server.wait_finished(&id, SOON);
    assert_eq!(entry["exitCode"], -1, "{entry}");
    assert_no_zombie_children(&server);
}

#[test]
fn kill_reaches_grandchildren() {
    let server = Server::start(config_with(vec![shell_action(
        "family",
        "echo $$ > pid\nsleep 1000 & sleep 1000 & wait\n",
    )]));
    let id = server.start_action("family");
    let pgid = read_pid_file(&server.path("pid"), SOON);
    let _guard = GroupGuard(pgid);
    assert!(wait_until(SOON, || group_members(pgid).len() >= 3));
    let reply = server.ok("KillAction", json!({"executionTrackingId": id}));
    assert_eq!(reply["killed"], true, "{reply}");
    assert_group_gone(pgid);
    let entry = server.wait_finished(&id, SOON);
    assert_eq!(entry["exitCode"], -1, "{entry}");
    assert_no_zombie_children(&server);
}

#[test]
fn timeout_runs_the_ladder_on_a_group_that_ignores_sigterm() {
    let mut action = shell_action("stubborn", STUBBORN);
    // Long enough that the group is complete before the timeout even on a loaded machine.
    action["timeout"] = json!(3);
    let server = Server::start(config_with(vec![action]));
    let began = Instant::now();
    let (id, pgid) = start_stubborn_group(&server, "stubborn");
    let _guard = GroupGuard(pgid);
    let entry = server.wait_finished(&id, Duration::from_secs(20));
    assert_eq!(entry["timedOut"], true, "{entry}");
    assert_eq!(entry["exitCode"], -1, "{entry}");
    assert_group_gone(pgid);
    // Timeout (3 s) plus the grace period (1 s) before the SIGKILL.
    assert!(
        began.elapsed() >= Duration::from_secs(4),
        "group gone after {:?}",
        began.elapsed()
    );
    assert_no_zombie_children(&server);
}

// ---------------------------------------------------------------------------------------
// Reaping and resource bounds

#[test]
fn five_hundred_runs_leave_no_zombies_and_no_leaked_descriptors() {
    let server = Server::start(config_with(vec![shell_action("noop", "true")]));
    let mut conn = server.conn();
    let call = Request::connect("StartActionAndWait", br#"{"actionId":"noop"}"#);
    let run = |conn: &mut crate::client::Conn| {
        let resp = conn.send(&call);
        assert_eq!(resp.status, 200, "{}", resp.text());
        let entry = resp.json()["logEntry"].clone();
        assert_eq!(entry["exitCode"], 0, "{entry}");
        assert_eq!(entry["blocked"], false, "{entry}");
    };
    // Warm up: whatever the service opens once (e.g. a signal pipe) is opened now.
    for _ in 0..3 {
        run(&mut conn);
    }
    let fds_before = fd_count(server.pid());
    for _ in 0..500 {
        run(&mut conn);
    }
    assert_no_zombie_children(&server);
    // Same connection open in both counts; a per-run leak would show hundreds.
    let fds_after = fd_count(server.pid());
    assert!(
        fds_after <= fds_before + 2,
        "descriptors grew from {fds_before} to {fds_after} over 500 runs"
    );
}

#[test]
fn huge_output_leaves_memory_flat_and_is_capped() {
    let server = Server::start(config_with(vec![
        shell_action("small", "echo small"),
        shell_action("flood", "head -c 100000000 /dev/zero | tr '\\0' a"),
    ]));
    server.run("small");
    let pid = server.pid();
    let before = vm_kib(pid, "VmRSS");
    // Writing 5 to clear_refs resets the peak (VmHWM) to the current RSS, so the peak read
    // afterwards covers exactly this run. Where that is not permitted, sampling still works.
    let hwm_reset = std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut peak = 0;
            repeat_for(UNTIL_STOPPED, Duration::from_millis(5), || {
                peak = peak.max(vm_kib(pid, "VmRSS"));
                !stop.load(Ordering::Relaxed)
            });
            peak
        })
    };
    let entry = server.run("flood");
    stop.store(true, Ordering::Relaxed);
    let mut peak = sampler.join().expect("sampler");
    if hwm_reset {
        peak = peak.max(vm_kib(pid, "VmHWM"));
    }
    assert!(
        peak < before + 16 * 1024,
        "RSS grew from {before} KiB to a peak of {peak} KiB for 100 MB of output"
    );
    assert_eq!(entry["exitCode"], 0, "{entry}");
    let stdout = entry["stdout"].as_str().unwrap_or_default();
    let (head, omitted, tail) = split_at_marker(stdout);
    assert_eq!(
        omitted,
        100_000_000 - 65_536,
        "marker in {:?}",
        marker_line(stdout)
    );
    assert_eq!(head.len() + tail.len(), 65_536);
    assert!(head.bytes().chain(tail.bytes()).all(|b| b == b'a'));
}

/// Splits capped output into (kept head, omitted byte count, kept tail) around its
/// `actiond: … N bytes omitted …` line; a newline the service added to put the marker on its
/// own line is not part of the head.
fn split_at_marker(text: &str) -> (&str, u64, &str) {
    let start = text
        .find("actiond:")
        .unwrap_or_else(|| panic!("no omission marker in output of {} bytes", text.len()));
    let end = text[start..]
        .find('\n')
        .map(|i| start + i + 1)
        .unwrap_or_else(|| panic!("marker line does not end: {:?}", &text[start..]));
    let marker = &text[start..end];
    let count_text = marker
        .split("bytes omitted")
        .next()
        .and_then(|before| before.split_whitespace().last())
        .unwrap_or_else(|| panic!("marker {marker:?} does not say `N bytes omitted`"));
    let digits: String = count_text.chars().filter(char::is_ascii_digit).collect();
    let omitted = digits
        .parse()
        .unwrap_or_else(|_| panic!("no byte count in marker {marker:?}"));
    let head = text[..start].strip_suffix('\n').unwrap_or(&text[..start]);
    (head, omitted, &text[end..])
}

fn marker_line(text: &str) -> &str {
    text.lines()
        .find(|l| l.starts_with("actiond:"))
        .unwrap_or("")
}

#[test]
fn output_over_the_cap_keeps_the_first_quarter_and_the_last_three() {
    let mut config = config_with(vec![
        shell_action(
            "long",
            "printf HEAD; head -c 10000 /dev/zero | tr '\\0' m; printf TAIL",
        ),
        shell_action(
            "long-err",
            "{ printf HEAD; head -c 10000 /dev/zero | tr '\\0' m; printf TAIL; } >&2",
        ),
    ]);
    config["maxOutputBytes"] = json!(1024);
    let server = Server::start(config);

    let entry = server.run("long");
    let stdout = entry["stdout"].as_str().unwrap_or_default();
    let (head, omitted, tail) = split_at_marker(stdout);
    assert_eq!(head, format!("HEAD{}", "m".repeat(252)), "{stdout:?}");
    assert_eq!(tail, format!("{}TAIL", "m".repeat(764)), "{stdout:?}");
    assert_eq!(omitted, 10_008 - 1024, "{stdout:?}");

    // stderr is capped the same way (the service may add its own notice after it).
    let entry = server.run("long-err");
    let stderr = entry["stderr"].as_str().unwrap_or_default();
    assert!(stderr.starts_with("HEADmmm"), "{stderr:?}");
    assert!(
        stderr.contains(&format!("{}TAIL", "m".repeat(764))),
        "{stderr:?}"
    );
    assert!(
        stderr.contains(&format!("{} bytes omitted", 10_008 - 1024)),
        "{stderr:?}"
    );
    assert!(
        stderr.len() < 1024 + 300,
        "stderr not capped: {} bytes",
        stderr.len()
    );
    assert_eq!(entry["stdout"], "", "{entry}");
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let server = Server::start(config_with(vec![shell_action(
        "bytes",
        r"printf '\377\376ok'",
    )]));
    let entry = server.run("bytes");
    assert_eq!(entry["stdout"], "\u{FFFD}\u{FFFD}ok", "{entry}");
}

#[test]
fn character_split_across_reads_is_kept_whole() {
    // The pause makes the service read the first two bytes of `€` on their own.
    let server = Server::start(config_with(vec![shell_action(
        "euro",
        r"printf '\342\202'; sleep 0.3; printf '\254\n'",
    )]));
    let entry = server.run("euro");
    assert_eq!(entry["stdout"], "€\n", "{entry}");
}

#[test]
fn characters_written_in_fragments_are_kept_whole() {
    // Each `€` is written in two writes (2 + 1 bytes), so reads end inside characters.
    let server = Server::start(config_with(vec![shell_action(
        "euros",
        r"i=0; while [ $i -lt 2000 ]; do printf '\342\202'; printf '\254'; i=$((i+1)); done",
    )]));
    let entry = server.run("euros");
    let stdout = entry["stdout"].as_str().unwrap_or_default();
    assert_eq!(stdout.chars().count(), 2000, "{stdout:?}");
    assert!(stdout.chars().all(|c| c == '€'), "{stdout:?}");
}

// ---------------------------------------------------------------------------------------
// Children that outlive the command

#[test]
fn backgrounded_child_does_not_hold_the_execution_open() {
    let server = Server::start(config_with(vec![shell_action(
        "daemon",
        "echo started; sleep 30 & echo $! > bg.pid",
    )]));
    let began = Instant::now();
    let entry = server.run("daemon");
    let elapsed = began.elapsed();
    let sleeper = read_pid_file(&server.path("bg.pid"), SOON);
    let _guard = PidGuard(sleeper);
    // The sleeper keeps stdout open for 30 s; the execution must end without it.
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    assert_eq!(entry["stdout"], "started\n", "{entry}");
    assert_eq!(entry["executionFinished"], true, "{entry}");
    assert_eq!(entry["timedOut"], false, "{entry}");
}

#[test]
fn detached_grandchild_is_reaped_when_it_exits() {
    let server = Server::start(config_with(vec![shell_action(
        "detach",
        &format!(
            "setsid sh -c 'echo $$ > detached.pid; {GATED}' </dev/null >/dev/null 2>&1 &\n\
             while [ ! -s detached.pid ]; do sleep 0.02; done\n"
        ),
    )]));
    let entry = server.run("detach");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    let pid = read_pid_file(&server.path("detached.pid"), SOON);
    let _guard = PidGuard(pid);
    let stat = proc_stat(pid).expect("detached process is alive");
    assert_eq!(stat.pgrp, pid, "not detached into its own group: {stat:?}");
    // Its parent (the command) has exited, so it is an orphan now. It must have landed on
    // the service (a subreaper), not on PID 1: only then is its reaping the service's job,
    // and only then does this test prove anything (PID 1 here reaps orphans too, lazily).
    let landed = wait_until(SOON, || {
        proc_stat(pid).is_some_and(|s| s.ppid == server.pid())
    });
    assert!(
        landed,
        "orphan {pid} is not a child of actiond {}: {:?}",
        server.pid(),
        proc_stat(pid)
    );
    std::fs::write(server.path("go"), "").expect("write go");
    let reaped = wait_until(SOON, || proc_stat(pid).is_none());
    assert!(
        reaped,
        "detached process {pid} was not reaped after it exited: {:?}",
        proc_stat(pid)
    );
    assert_no_zombie_children(&server);
}

/// A descriptor actiond inherited without close-on-exec (fd 7 here, opened by the shell that
/// starts it, as a supervisor's or a terminal's pipe would be) stays actiond's: an action
/// holds its 0, 1 and 2 and nothing else. And it runs with no_new_privs, so a setuid program
/// it runs gives it no rights, whoever started actiond (the shipped unit sets it for the
/// whole service; here nothing does).
#[test]
fn an_action_holds_no_descriptor_of_actiond_and_gains_no_privileges() {
    let server = Server::start_wrapped(
        config_with(vec![shell_action(
            "look",
            // What a program the action runs holds: ls lists its own, with the directory it
            // reads as 3 (a pipe into tr would add the shell's ends of it).
            "ls /proc/self/fd > fds; tr '\\n' ' ' < fds; echo; grep NoNewPrivs /proc/self/status",
        )]),
        &[],
        &["sh", "-c", "exec \"$@\" 7</dev/null", "sh"],
    );
    let inherited = std::path::PathBuf::from(format!("/proc/{}/fd/7", server.pid()));
    assert_eq!(
        std::fs::read_link(&inherited).ok(),
        Some("/dev/null".into()),
        "actiond was not started holding fd 7, so this test proves nothing"
    );
    let own = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    assert!(
        own.contains("NoNewPrivs:\t0"),
        "actiond itself already has no_new_privs, so this test proves nothing"
    );
    let entry = server.run("look");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    let stdout = entry["stdout"].as_str().unwrap();
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some("0 1 2 3 "),
        "the action's descriptors: {stdout}"
    );
    assert_eq!(lines.next(), Some("NoNewPrivs:\t1"), "{stdout}");
}
