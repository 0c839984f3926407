//! An execution's life, top to bottom, in one task of its own (`life`): its start record made
//! durable; its launch, announced; its process supervised until an `Outcome`; the record
//! concluded; its finish record made durable; its end shown to everyone at once (the
//! execution's waiters, the running table, the metrics, the event that the event streams
//! and MQTT follow). A blocked run's life is shorter (`blocked`): its one record made
//! durable, then its start and end shown. Each record is queued when the life begins or
//! reaches it, and the life waits for it (`recorder::Durable`): nothing acts on a record
//! before it is on disk, and the journal's thread only wakes the life that waits.
//!
//! It must not decide whether a run may start (that is the start path, `start`) nor touch
//! processes (that is the executor's).

use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, info};

use super::recorder::{Durable, Kind};
use super::{Engine, lock};
use crate::events::Event;
use crate::execution::{Cause, Execution, Flags};
use crate::executor::{self, Executor, Observer, Plan};
use crate::output::Chunker;
use crate::ratelog;

/// What a started run needs to be launched: the plan of its process, and the password
/// values to redact from its output events.
pub struct Launch {
    pub plan: Plan,
    pub secrets: Vec<String>,
}

impl<X: Executor> Engine<X> {
    /// Begins the life of an admitted run: its start record is queued now, in the order of
    /// admission (and counted at once against `historyQueueLength`), and the rest follows on
    /// a task of its own.
    pub(super) fn live(self: &Arc<Self>, exec: Arc<Execution>, launch: Launch) {
        let start = self.recorder.record(Arc::clone(&exec), Kind::Started);
        // Without a history file the record is durable at once: the run is announced now, so
        // that the StartAction waiting for it answers in this turn of the event loop, not
        // after a wake-up of its connection (2,500 instructions a press, callgrind).
        let start = if start.is_durable() {
            self.announce(&exec);
            None
        } else {
            Some(start)
        };
        tokio::spawn(life(Arc::clone(self), exec, launch, start));
    }

    /// Begins the life of a blocked run, which never launches: its one record is queued now,
    /// and shown now when it is durable at once (no history file).
    pub(super) fn block(self: &Arc<Self>, exec: Arc<Execution>) {
        let record = self.recorder.record(Arc::clone(&exec), Kind::Blocked);
        if record.is_durable() {
            self.show_blocked(&exec);
            return;
        }
        tokio::spawn(blocked(Arc::clone(self), exec, record));
    }

    /// Shows a blocked run whose record is on disk: its start, then its end.
    fn show_blocked(&self, exec: &Execution) {
        self.announce(exec);
        self.show_end(exec, None);
    }

    /// Shows the end of `exec` (which ran for `ran`, if it ran), counts and announces it.
    fn show_end(&self, exec: &Execution, ran: Option<Duration>) -> Flags {
        lock(&self.running).remove(exec.tracking_id.as_str());
        exec.commit();
        let snapshot = exec.snapshot();
        let flags = snapshot.flags;
        self.metrics.finished(&exec.binding_id, &flags, ran);
        self.publish(Some(&exec.binding_id), &Event::ExecutionFinished(snapshot));
        flags
    }

    /// Announces a run whose first record is on disk, and wakes who waits for that (the
    /// StartAction reply).
    fn announce(&self, exec: &Execution) {
        exec.mark_recorded();
        self.publish(
            Some(&exec.binding_id),
            &Event::ExecutionStarted(exec.snapshot()),
        );
    }
}

/// The life of a run, from its queued start record to its end shown. `start`: the wait for
/// the start record, unless `live` found it durable at once and announced the run.
async fn life<X: Executor>(
    engine: Arc<Engine<X>>,
    exec: Arc<Execution>,
    launch: Launch,
    start: Option<Durable>,
) {
    // The start record made durable: a run that exists is never forgotten by a crash. One
    // that never will be (the journal's thread is gone) is not launched. Then it is
    // announced, so that its start precedes its output on every stream.
    if let Some(start) = start {
        if !start.wait(&engine.recorder).await {
            return;
        }
        engine.announce(&exec);
    }
    // Launch.
    let cause = exec.cause.as_ref().unwrap_or(&Cause::Request);
    debug!(
        action = %exec.binding_id,
        id = %exec.tracking_id,
        user = %exec.user,
        origin = %cause,
        "starting"
    );
    // Supervised until an outcome; its output is published as it comes.
    let grace_secs = launch.plan.grace.as_secs();
    let mut watch = Watch::new(&engine, launch.secrets);
    let outcome = executor::run(launch.plan, &exec, &engine.executor, &mut watch).await;
    // Concluded: the final state is decided, not shown yet.
    exec.conclude(outcome, grace_secs);
    watch.finish(&exec);
    // The finish record made durable. More than `logHistoryLimit` runs started while this
    // one ran: the history let it go, and its finish must not bring it back into the file
    // where a compaction dropped it.
    let ran = exec.started.map(|t| t.elapsed());
    let evicted = !lock(&engine.history).contains(&exec.tracking_id);
    let finish = engine
        .recorder
        .record(Arc::clone(&exec), Kind::Finished { evicted });
    if !finish.wait(&engine.recorder).await {
        return;
    }
    // The end shown, to everyone at once.
    let flags = engine.show_end(&exec, ran);
    // The one INFO line of a run: who pressed, and how it ended (the start is at debug; two
    // lines per run cost 7 000 instructions and a write, a fifteenth of the service's own
    // work per press). A guest's is rate-limited, with a count: the history holds the run.
    let more = if exec.by_guest {
        match ratelog::GUEST_FINISHED.admit() {
            Some(more) => more,
            None => return,
        }
    } else {
        ratelog::LeftOut(0)
    };
    info!(
        action = %exec.binding_id,
        id = %exec.tracking_id,
        user = %exec.user,
        origin = %cause,
        exit_code = flags.exit_code,
        timed_out = flags.timed_out,
        "finished{more}"
    );
}

/// The life of a blocked run (concluded already): its one record made durable, then its
/// start and its end shown.
async fn blocked<X: Executor>(engine: Arc<Engine<X>>, exec: Arc<Execution>, record: Durable) {
    if record.wait(&engine.recorder).await {
        engine.show_blocked(&exec);
    }
}

/// Publishes a running execution's output as `outputChunk` events: UTF-8 safe, at most
/// 4 KiB each, password values redacted.
struct Watch<'a, X: Executor> {
    engine: &'a Engine<X>,
    stdout: Chunker,
    stderr: Chunker,
}

impl<'a, X: Executor> Watch<'a, X> {
    fn new(engine: &'a Engine<X>, secrets: Vec<String>) -> Self {
        Watch {
            engine,
            stdout: Chunker::new(secrets.clone()),
            stderr: Chunker::new(secrets),
        }
    }

    fn send(&self, exec: &Execution, chunks: Vec<String>) {
        for output in chunks {
            let event = Event::OutputChunk {
                tracking_id: exec.tracking_id.to_string(),
                output,
            };
            self.engine.publish(Some(&exec.binding_id), &event);
        }
    }

    /// Publishes what the chunkers still hold, once the process is gone.
    fn finish(mut self, exec: &Execution) {
        let mut rest = self.stdout.finish();
        rest.extend(self.stderr.finish());
        self.send(exec, rest);
    }
}

impl<X: Executor> Observer for Watch<'_, X> {
    fn output(&mut self, exec: &Execution, stderr: bool, data: &[u8]) {
        let chunks = if stderr {
            self.stderr.feed(data)
        } else {
            self.stdout.feed(data)
        };
        self.send(exec, chunks);
    }
}

#[cfg(test)]
mod tests {
    //! The life of a run whose program does not exist: the spawn fails before any process is
    //! made (`spawn::resolve`), so the whole life runs in-process, against a history file in
    //! a directory of the test's own, with an idle reaper.
    use std::path::PathBuf;

    use super::*;
    use crate::config::{Source, parse};
    use crate::engine::StartRequest;
    use crate::entities::EntitySet;
    use crate::events::Bus;
    use crate::executor::Reaper;
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
        let config = parse(text, Source::Embedded, "/".into(), &|_| None)
            .unwrap_or_else(|(e, _)| panic!("{e:?}"))
            .0;
        let bus = Arc::new(Bus::new(8, 64, crate::api::encode_event));
        Engine::new(
            Arc::new(config),
            EntitySet::default(),
            Arc::new(Reaper::default()),
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
        let req = StartRequest {
            binding_id: "missing".into(),
            ..StartRequest::default()
        };
        engine.start(req, &caller()).expect("admitted")
    }

    fn state_dir() -> PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("actiond-lifecycle-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The lines of the history file that mention `id`.
    fn lines_of(dir: &std::path::Path, id: &str) -> Vec<String> {
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
}
