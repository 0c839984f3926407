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
use crate::execution::{Cause, Execution, Flags, Snapshot};
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
        let flags = exec.phase().flags();
        self.metrics.finished(&exec.binding_id, &flags, ran);
        self.publish_run(exec, Event::ExecutionFinished);
        flags
    }

    /// Announces a run whose first record is on disk, and wakes who waits for that (the
    /// StartAction reply).
    fn announce(&self, exec: &Execution) {
        exec.mark_recorded();
        self.publish_run(exec, Event::ExecutionStarted);
    }

    /// Publishes a run's start or end, `event` of its snapshot, to the event streams and
    /// the action watches; only the watches when no stream is subscribed (`Bus::subscribed`).
    fn publish_run(&self, exec: &Execution, event: fn(Snapshot) -> Event) {
        if self.bus.subscribed() {
            self.publish(Some(&exec.binding_id), &event(exec.snapshot()));
        } else {
            self.bus.run_changed(&exec.binding_id);
        }
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
mod tests;
