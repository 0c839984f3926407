//! An execution's life, in process. First a run whose program does not exist: the spawn
//! fails before any process is made (`spawn::resolve`), with an idle reaper. Then runs on a
//! simulated process table (`executor::fake`) on tokio's paused clock: a child that exits,
//! one that hangs until killed, one that ignores SIGTERM, one whose child outlives it (in its
//! group, outside it, or left behind as a daemon), each through the real start path,
//! supervision and kill ladder. Every test has a history file in a directory of its own;
//! the bus's encoder notes in the table's log what the engine shows, with how many of the
//! run's lines were on disk at that moment, so the log holds the whole life in order.
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;

use super::*;
use crate::config::{Source, parse};
use crate::engine::StartRequest;
use crate::entities::EntitySet;
use crate::events::{Bus, Encoder, Form, Subscription};
use crate::execution::{KillReason, Outcome, Phase, Stop};
use crate::executor::fake::{Happened, Step, Table};
use crate::executor::{Exit, Reaper};
use crate::permissions::{Caller, Provider};
use crate::store::Store;

const CONFIG: &str = "
defaultPermissions: {view: true, exec: true, logs: true, kill: true}
actions:
  - {id: missing, title: Missing, exec: [actiond-lifecycle-test-no-such-program],
     maxRate: [{limit: 1, duration: 1h}]}
";

fn engine(dir: Option<PathBuf>) -> Arc<Engine> {
    engine_of(CONFIG, dir)
}

fn engine_of(text: &str, dir: Option<PathBuf>) -> Arc<Engine> {
    engine_on(
        text,
        dir,
        Arc::new(Reaper::default()),
        crate::api::encode_event,
    )
}

/// An engine of `text` whose processes come from `executor`, and whose bus encodes with
/// `encode`.
fn engine_on<X: Executor>(
    text: &str,
    dir: Option<PathBuf>,
    executor: X,
    encode: Encoder,
) -> Arc<Engine<X>> {
    let config = parse(text, Source::Embedded, "/".into(), &|_| None)
        .unwrap_or_else(|(e, _)| panic!("{e:?}"))
        .0;
    let bus = Arc::new(Bus::new(8, 64, encode));
    Engine::new(
        Arc::new(config),
        EntitySet::default(),
        executor,
        bus,
        &Store::new(dir),
        Vec::new(),
    )
}

fn caller() -> Caller {
    Caller {
        username: "alice".into(),
        usergroup: "admins".into(),
        provider: Provider::Local,
        sid: None,
    }
}

fn press(engine: &Arc<Engine>) -> Arc<Execution> {
    press_on(engine, "missing")
}

fn press_on<X: Executor>(engine: &Arc<Engine<X>>, binding_id: &str) -> Arc<Execution> {
    let req = StartRequest {
        binding_id: binding_id.into(),
        ..StartRequest::default()
    };
    engine.start(req, &caller()).expect("admitted")
}

fn state_dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("actiond-lifecycle-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The lines of the history file that mention `id`.
fn lines_of(dir: &Path, id: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(crate::journal::FILE))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(id))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn each_step_of_a_life_waits_for_its_record_on_disk() {
    let dir = state_dir();
    let engine = engine(Some(dir.clone()));
    let exec = press(&engine);
    let id = exec.tracking_id.to_string();
    // Queued by the start path, acted on by nobody yet: the life waits for the disk.
    assert!(!exec.phase().is_finished());
    exec.recorded().await;
    // (The finish may follow at once: the spawn fails and the writer runs on its own.)
    assert!(
        !lines_of(&dir, &id).is_empty(),
        "the start line is on disk first"
    );
    exec.wait().await;
    assert_eq!(lines_of(&dir, &id).len(), 2, "then the finish line");
    let flags = exec.snapshot().flags;
    assert!(flags.execution_finished && !flags.execution_started && !flags.blocked);
    assert_eq!(flags.exit_code, -1);
    assert_eq!(engine.counts(), (1, 0), "no longer running once shown");
    // The writer completes a batch's records before it counts them written (a flush must
    // not return before the records are shown), so the count may lag the finish briefly.
    let since = std::time::Instant::now();
    while engine.history_file().unwrap().waiting != 0 {
        assert!(
            since.elapsed().as_secs() < 10,
            "the finish line is never counted"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_blocked_run_has_one_record_and_shows_once_it_is_on_disk() {
    let dir = state_dir();
    let engine = engine(Some(dir.clone()));
    press(&engine).wait().await;
    // maxRate: one start an hour.
    let blocked = press(&engine);
    // Concluded at once, shown only once its record is on disk.
    assert!(!blocked.phase().is_finished());
    blocked.wait().await;
    let id = blocked.tracking_id.to_string();
    assert_eq!(lines_of(&dir, &id).len(), 1, "its one line");
    assert!(blocked.snapshot().flags.blocked);
    assert_eq!(engine.counts(), (2, 0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn blocked_presses_hold_only_their_share_of_the_queue() {
    // A queue of 8: blocked runs may hold 2 of the records waiting for the disk.
    let config = format!(
        "{CONFIG}  - {{id: other, title: Other, exec: [actiond-lifecycle-test-no-such-program]}}
historyQueueLength: 8
"
    );
    let dir = state_dir();
    let engine = engine_of(&config, Some(dir.clone()));
    press(&engine).wait().await;
    // Nothing yields between these presses: no record reaches the disk meanwhile.
    let first = press(&engine);
    let second = press(&engine);
    let req = StartRequest {
        binding_id: "missing".into(),
        ..StartRequest::default()
    };
    let Err(refused) = engine.start(req, &caller()) else {
        panic!("a third blocked press is admitted")
    };
    assert!(matches!(
        refused,
        crate::engine::Error::BlockedBehind { waiting: 2, .. }
    ));
    assert!(
        refused.to_string().contains("historyQueueLength"),
        "{refused}"
    );
    // The rest of the queue is kept for runs: another action's press runs.
    let req = StartRequest {
        binding_id: "other".into(),
        ..StartRequest::default()
    };
    let other = engine.start(req, &caller()).expect("a run is admitted");
    for e in [&first, &second] {
        e.wait().await;
        assert!(e.snapshot().flags.blocked);
    }
    other.wait().await;
    assert!(!other.snapshot().flags.blocked);
    // Once on disk, a blocked press is recorded again.
    press(&engine).wait().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn without_a_state_directory_a_life_runs_through_without_waiting() {
    let engine = engine(None);
    let exec = press(&engine);
    exec.wait().await;
    assert_eq!(exec.snapshot().flags.exit_code, -1);
    assert!(engine.history_file().is_none());
    let blocked = press(&engine);
    blocked.wait().await;
    assert!(blocked.snapshot().flags.blocked);
}

// ---- On the fake process table ----

/// The actions of the fake's tests: each runs the fake program of its name (`install`), with
/// a 10 s timeout and a 4 s grace.
const FAKE: &str = "
defaultPermissions: {view: true, exec: true, logs: true, kill: true}
killGracePeriod: 4
actions:
  - {id: exits, title: Exits, exec: [exits], timeout: 10}
  - {id: hangs, title: Hangs, exec: [hangs], timeout: 10}
  - {id: stubborn, title: Stubborn, exec: [stubborn], timeout: 10}
  - {id: forks, title: Forks, exec: [forks], timeout: 10}
  - {id: escapes, title: Escapes, exec: [escapes], timeout: 10}
  - {id: daemon, title: Daemon, exec: [daemon], timeout: 10}
";

/// What each fake program does.
fn install(table: &Table) {
    let s = Duration::from_secs;
    table.install(
        "exits",
        vec![
            Step::Stdout("hello\n"),
            Step::Sleep(s(1)),
            Step::Stderr("careful\n"),
            Step::Sleep(s(1)),
            Step::Exit(3),
        ],
    );
    table.install("hangs", vec![Step::Stdout("waiting\n"), Step::Hang]);
    table.install("stubborn", vec![Step::IgnoreTerm, Step::Hang]);
    // Its child, in its group, ignores SIGTERM and outlives it.
    let stubborn_child = vec![Step::IgnoreTerm, Step::Hang];
    table.install(
        "forks",
        vec![
            Step::Fork {
                script: stubborn_child,
                setsid: false,
            },
            Step::Hang,
        ],
    );
    // Its child leaves the group (`setsid`).
    table.install(
        "escapes",
        vec![
            Step::Fork {
                script: vec![Step::Hang],
                setsid: true,
            },
            Step::Hang,
        ],
    );
    // Backgrounds a child that keeps the pipes, then exits.
    table.install(
        "daemon",
        vec![
            Step::Stdout("started\n"),
            Step::Fork {
                script: vec![Step::Hang],
                setsid: false,
            },
            Step::Sleep(s(1)),
            Step::Exit(0),
        ],
    );
}

thread_local! {
    /// This thread's test's table and state directory, for `note_shown` (the bus's encoder
    /// is a plain function, and it runs on the test's thread: the runtime has one).
    static WATCHED: RefCell<Option<(Table, PathBuf)>> = const { RefCell::new(None) };
}

/// The bus's encoder: notes in the table's log each start and end the engine shows, with
/// how many of the run's lines are on disk at that moment, and each output chunk.
fn note_shown(event: &Event, _: Form) -> Vec<u8> {
    let (what, id) = match event {
        Event::ExecutionStarted(s) => ("started", &s.execution_tracking_id),
        Event::ExecutionFinished(s) => ("finished", &s.execution_tracking_id),
        Event::OutputChunk {
            tracking_id,
            output,
        } => {
            WATCHED.with(|w| {
                if let Some((table, _)) = &*w.borrow() {
                    table.note(format!("output {tracking_id} {output:?}"));
                }
            });
            return Vec::new();
        }
        _ => return Vec::new(),
    };
    WATCHED.with(|w| {
        if let Some((table, dir)) = &*w.borrow() {
            let lines = lines_of(dir, id).len();
            table.note(format!("{what} shown, {lines} lines on disk"));
        }
    });
    Vec::new()
}

/// An engine on a fake table, with a history file and a subscriber that makes the bus
/// encode its events.
struct Rig {
    engine: Arc<Engine<Table>>,
    table: Table,
    dir: PathBuf,
    _events: Subscription,
}

impl Rig {
    fn new() -> Rig {
        let table = Table::new();
        install(&table);
        let dir = state_dir();
        WATCHED.with(|w| *w.borrow_mut() = Some((table.clone(), dir.clone())));
        let engine = engine_on(FAKE, Some(dir.clone()), table.clone(), note_shown);
        let events = engine.bus().subscribe(caller()).expect("subscribed");
        Rig {
            engine,
            table,
            dir,
            _events: events,
        }
    }

    /// Presses `action` and waits until its end is shown.
    async fn run(&self, action: &str) -> Arc<Execution> {
        let exec = press_on(&self.engine, action);
        exec.wait().await;
        exec
    }

    fn outcome(exec: &Execution) -> Outcome {
        match exec.phase() {
            Phase::Finished(outcome) => outcome,
            other => panic!("not finished: {other:?}"),
        }
    }

    /// The pid of the leader the table started for `program`.
    fn leader(&self, program: &str) -> i32 {
        self.table
            .log()
            .into_iter()
            .find_map(|(_, h)| match h {
                Happened::Started { pid, program: p } if p == program => Some(pid),
                _ => None,
            })
            .expect("started")
    }

    /// The pid of the child `parent` forked (`setsid`: into a group of its own).
    fn child_of(&self, parent: i32, setsid: bool) -> i32 {
        self.table
            .log()
            .into_iter()
            .find_map(|(_, h)| match h {
                Happened::Forked {
                    parent: p,
                    pid,
                    setsid: s,
                } if p == parent && s == setsid => Some(pid),
                _ => None,
            })
            .expect("forked")
    }

    /// The log without the times, the shape of a life.
    fn steps(&self) -> Vec<Happened> {
        self.table.log().into_iter().map(|(_, h)| h).collect()
    }

    /// When `what` was noted.
    fn noted(&self, what: &str) -> Duration {
        self.table
            .log()
            .into_iter()
            .find_map(|(at, h)| match h {
                Happened::Note(note) if note == what => Some(at),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{what:?} not in {:#?}", self.table.log()))
    }

    /// The history file's lines of `exec`: its start, then its finish.
    fn assert_recorded(&self, exec: &Execution) {
        let lines = lines_of(&self.dir, &exec.tracking_id);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].contains(r#""kind":"started""#), "{}", lines[0]);
        assert!(lines[1].contains(r#""kind":"finished""#), "{}", lines[1]);
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        WATCHED.with(|w| *w.borrow_mut() = None);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const STARTED: &str = "started shown, 1 lines on disk";
const FINISHED: &str = "finished shown, 2 lines on disk";

#[tokio::test(start_paused = true)]
async fn a_run_that_exits_is_recorded_launched_supervised_and_shown_in_order() {
    let rig = Rig::new();
    let exec = rig.run("exits").await;
    assert_eq!(Rig::outcome(&exec), Outcome::Exited(3));
    let pid = rig.leader("exits");
    let id = &exec.tracking_id;
    // Its start on disk, then shown, then the launch; its output shown as it came; its end
    // on disk before it is shown.
    assert_eq!(
        rig.steps(),
        [
            Happened::Note(STARTED.into()),
            Happened::Started {
                pid,
                program: "exits".into()
            },
            Happened::Note(format!("output {id} \"hello\\n\"")),
            Happened::Note(format!("output {id} \"careful\\n\"")),
            Happened::Ended {
                pid,
                exit: Exit::Code(3)
            },
            Happened::Note(FINISHED.into()),
        ]
    );
    assert_eq!(rig.noted(FINISHED), Duration::from_secs(2));
    let snapshot = exec.snapshot();
    assert_eq!(snapshot.stdout, "hello\n");
    assert!(
        snapshot.stderr.starts_with("careful\n"),
        "{}",
        snapshot.stderr
    );
    assert_eq!(snapshot.flags.exit_code, 3);
    rig.assert_recorded(&exec);
    assert!(rig.table.signals().is_empty());
    assert!(rig.table.alive().is_empty());
    assert_eq!(rig.engine.counts(), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_run_that_hangs_gets_sigterm_at_its_timeout() {
    let rig = Rig::new();
    let exec = rig.run("hangs").await;
    let stop = Stop::Term;
    assert_eq!(Rig::outcome(&exec), Outcome::TimedOut { seconds: 10, stop });
    let pid = rig.leader("hangs");
    let ten = Duration::from_secs(10);
    // SIGCONT follows, but reaches nobody.
    assert_eq!(rig.table.signals(), [(ten, -pid, Signal::SIGTERM)]);
    assert_eq!(rig.noted(FINISHED), ten);
    assert!(exec.snapshot().flags.timed_out);
    rig.assert_recorded(&exec);
    assert!(rig.table.alive().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_run_that_ignores_sigterm_gets_sigkill_after_exactly_the_grace() {
    let rig = Rig::new();
    let exec = rig.run("stubborn").await;
    let stop = Stop::Kill;
    assert_eq!(Rig::outcome(&exec), Outcome::TimedOut { seconds: 10, stop });
    let pid = rig.leader("stubborn");
    let (ten, fourteen) = (Duration::from_secs(10), Duration::from_secs(14));
    assert_eq!(
        rig.table.signals(),
        [
            (ten, -pid, Signal::SIGTERM),
            (ten, -pid, Signal::SIGCONT),
            (fourteen, -pid, Signal::SIGKILL),
        ]
    );
    assert_eq!(rig.noted(FINISHED), fourteen);
    rig.assert_recorded(&exec);
    assert!(rig.table.alive().is_empty());
}

#[tokio::test(start_paused = true)]
async fn killaction_stops_a_run_at_once_and_records_who() {
    let rig = Rig::new();
    let exec = press_on(&rig.engine, "hangs");
    // Launched (the clock stands still while the record goes to disk: no timer is set).
    exec.recorded().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let result = rig
        .engine
        .kill(&exec.tracking_id, &caller())
        .await
        .expect("may kill");
    assert!(result.killed && !result.already_completed);
    exec.wait().await;
    let reason = KillReason::User("alice".into());
    assert_eq!(Rig::outcome(&exec), Outcome::Killed(reason, Stop::Term));
    let (pid, three) = (rig.leader("hangs"), Duration::from_secs(3));
    assert_eq!(rig.table.signals(), [(three, -pid, Signal::SIGTERM)]);
    assert_eq!(rig.noted(FINISHED), three);
    // The output before the kill is kept.
    assert_eq!(exec.snapshot().stdout, "waiting\n");
    rig.assert_recorded(&exec);
    assert!(rig.table.alive().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_kill_before_the_launch_is_carried_out_once_the_process_exists() {
    let rig = Rig::new();
    let exec = press_on(&rig.engine, "hangs");
    // Its start record is not on disk yet: nothing is launched, and the kill is kept.
    assert!(exec.request_kill(KillReason::Shutdown));
    exec.wait().await;
    let stop = Stop::Term;
    assert_eq!(
        Rig::outcome(&exec),
        Outcome::Killed(KillReason::Shutdown, stop)
    );
    let pid = rig.leader("hangs");
    let steps = rig.steps();
    assert_eq!(
        steps[..3],
        [
            Happened::Note(STARTED.into()),
            Happened::Started {
                pid,
                program: "hangs".into()
            },
            Happened::Signal {
                to: -pid,
                signal: Signal::SIGTERM,
                reached: 1
            },
        ]
    );
    assert_eq!(steps.last(), Some(&Happened::Note(FINISHED.into())));
    assert_eq!(
        rig.table.signals(),
        [(Duration::ZERO, -pid, Signal::SIGTERM)]
    );
    rig.assert_recorded(&exec);
    assert!(rig.table.alive().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_child_that_outlives_its_leader_in_the_group_gets_the_group_sigkill() {
    let rig = Rig::new();
    let exec = rig.run("forks").await;
    assert_eq!(
        Rig::outcome(&exec),
        Outcome::TimedOut {
            seconds: 10,
            stop: Stop::Kill
        }
    );
    let pid = rig.leader("forks");
    let child = rig.child_of(pid, false);
    let (ten, fourteen) = (Duration::from_secs(10), Duration::from_secs(14));
    let log = rig.table.log();
    let ended = |who: i32| {
        log.iter()
            .find_map(|(at, h)| match h {
                Happened::Ended { pid, exit } if *pid == who => Some((*at, *exit)),
                _ => None,
            })
            .expect("ended")
    };
    // SIGTERM ends the leader; its child holds the pipes until the group's SIGKILL.
    assert_eq!(ended(pid), (ten, Exit::Signal(Signal::SIGTERM as i32)));
    assert_eq!(
        ended(child),
        (fourteen, Exit::Signal(Signal::SIGKILL as i32))
    );
    assert_eq!(
        rig.table.signals(),
        [
            (ten, -pid, Signal::SIGTERM),
            (ten, -pid, Signal::SIGCONT),
            (fourteen, -pid, Signal::SIGKILL),
        ]
    );
    assert_eq!(rig.noted(FINISHED), fourteen);
    rig.assert_recorded(&exec);
    assert!(rig.table.alive().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_child_that_left_the_group_is_stopped_with_it() {
    let rig = Rig::new();
    let exec = rig.run("escapes").await;
    let stop = Stop::Term;
    assert_eq!(Rig::outcome(&exec), Outcome::TimedOut { seconds: 10, stop });
    let pid = rig.leader("escapes");
    let child = rig.child_of(pid, true);
    let ten = Duration::from_secs(10);
    // The group's signal does not reach it: its own does.
    assert_eq!(
        rig.table.signals(),
        [(ten, -pid, Signal::SIGTERM), (ten, child, Signal::SIGTERM)]
    );
    rig.assert_recorded(&exec);
    assert!(rig.table.alive().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_backgrounded_child_ends_the_run_250_ms_after_its_leader_and_is_left_running() {
    let rig = Rig::new();
    let exec = rig.run("daemon").await;
    assert_eq!(Rig::outcome(&exec), Outcome::Exited(0));
    let pid = rig.leader("daemon");
    assert_eq!(rig.noted(FINISHED), Duration::from_millis(1250));
    assert_eq!(exec.snapshot().stdout, "started\n");
    assert!(rig.table.signals().is_empty());
    rig.assert_recorded(&exec);
    // A daemon left by a normal exit is not killed (that is what `&` asked for).
    assert_eq!(rig.table.alive(), [rig.child_of(pid, false)]);
    assert!(rig.table.kill(-pid, Some(Signal::SIGKILL)));
    assert!(rig.table.alive().is_empty());
}

#[tokio::test(start_paused = true)]
async fn shutdown_runs_the_ladder_on_every_running_execution() {
    let rig = Rig::new();
    // Both launched before any time passes. The history writer is a thread of its own, which
    // does not hold the paused clock: while the second record went to disk, the clock could
    // jump to the first run's timeout (a run timed out at 10 s now and then). A blocking
    // task holds it: tokio does not advance a paused clock while one runs.
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let hold = tokio::task::spawn_blocking(move || {
        let _ = wait.recv();
    });
    let calm = press_on(&rig.engine, "hangs");
    let stubborn = press_on(&rig.engine, "stubborn");
    calm.recorded().await;
    stubborn.recorded().await;
    let _ = done.send(());
    hold.await.expect("the hold ends");
    tokio::time::sleep(Duration::from_secs(1)).await;
    rig.engine.shutdown().await;
    calm.wait().await;
    stubborn.wait().await;
    let shutdown = KillReason::Shutdown;
    assert_eq!(
        Rig::outcome(&calm),
        Outcome::Killed(shutdown.clone(), Stop::Term)
    );
    assert_eq!(
        Rig::outcome(&stubborn),
        Outcome::Killed(shutdown, Stop::Kill)
    );
    let (calm_pid, stubborn_pid) = (rig.leader("hangs"), rig.leader("stubborn"));
    let (one, five) = (Duration::from_secs(1), Duration::from_secs(5));
    let signals = rig.table.signals();
    assert!(
        signals.contains(&(one, -calm_pid, Signal::SIGTERM)),
        "{signals:?}"
    );
    assert!(
        signals.contains(&(one, -stubborn_pid, Signal::SIGTERM)),
        "{signals:?}"
    );
    assert!(
        signals.contains(&(five, -stubborn_pid, Signal::SIGKILL)),
        "{signals:?}"
    );
    assert_eq!(signals.len(), 4, "{signals:?}");
    rig.assert_recorded(&calm);
    rig.assert_recorded(&stubborn);
    assert!(rig.table.alive().is_empty());
}
