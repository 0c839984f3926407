//! Recording: which records the engine writes to the history file, and what it does once
//! each is on disk. A run's start line is queued when it is admitted; only once it is on
//! disk is the run launched and announced (so a run that exists is never forgotten by a
//! crash), and StartAction answers. Its finish line is queued when its process is gone;
//! only once it is on disk does the run show as finished to anyone: waiters, ExecutionStatus,
//! GetLogs, the `executionFinished` event, MQTT. A blocked run has one line, its finish.
//!
//! Without a state directory a record is "on disk" at once: `record` hands it straight back
//! and the engine acts on it in the same call, so nothing waits and nothing is queued.
//!
//! It bounds what waits for the disk: a start is refused when `historyQueueLength` records
//! already wait (storage is slower than the work), or while the file cannot be written (a
//! full disk), with a message saying which. A finish line is never refused: each running
//! execution has at most one, so those are bounded by `maxConcurrentExecutions`. It asks
//! for a compaction once the file holds twice `logHistoryLimit` lines. The line format is
//! `journal`'s and the writing is the store's; this module must not format lines or touch
//! files itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use tracing::warn;

use super::Error;
use crate::config::{Config, HistorySync};
use crate::execution::Execution;
use crate::executor::Plan;
use crate::history::History;
use crate::journal;
use crate::store::{self, Journal, Store};

/// What a started run needs once its start line is on disk: the plan of its process, and
/// the password values to redact from its output events.
pub struct Launch {
    pub plan: Plan,
    pub secrets: Vec<String>,
}

/// What a record is for.
pub enum Kind {
    /// A run's start: launch it.
    Started(Box<Launch>),
    /// A run's end, after it ran this long (if it ran): show it. `evicted`: the history
    /// had let the run go by then.
    Finished {
        ran: Option<Duration>,
        evicted: bool,
    },
    /// A blocked run, which starts and ends in one record.
    Blocked,
}

/// One record on its way to the history file.
pub struct Line {
    pub exec: Arc<Execution>,
    pub kind: Kind,
}

impl store::Record for Line {
    /// Encoded on the journal's thread, off the event loop: serializing a record is a tenth
    /// of the service's own work per execution (callgrind, docs/PERFORMANCE.md).
    fn encode(&self, out: &mut Vec<u8>) {
        let binding = &self.exec.binding_id;
        match self.kind {
            Kind::Started(_) => journal::write_started(out, &self.exec.snapshot(), binding),
            Kind::Finished { evicted: true, .. } => {
                journal::write_finished_evicted(out, &self.exec.final_snapshot(), binding)
            }
            Kind::Finished { .. } | Kind::Blocked => {
                journal::write_finished(out, &self.exec.final_snapshot(), binding)
            }
        }
    }
}

/// Batches of records that are on disk, from the journal's thread to the engine.
pub type OnDisk = mpsc::UnboundedReceiver<Vec<Line>>;

/// The history file of one engine, or nothing when the history is kept in memory only.
pub struct Recorder {
    journal: Option<Journal<Line>>,
    /// Records handed to the journal and not yet back from it.
    waiting: AtomicUsize,
    /// Lines appended since the file was last compacted (about: a compaction leaves about
    /// one line per record of the history).
    lines: AtomicUsize,
    /// `logHistoryLimit`, shared with the compaction on the journal's thread.
    limit: Arc<AtomicUsize>,
}

fn sync_of(config: &Config) -> store::Sync {
    match config.history_sync {
        HistorySync::Always => store::Sync::Always,
        HistorySync::Every(d) => store::Sync::Every(d),
    }
}

impl Recorder {
    /// Starts the history file of `store` with the records of `history` as its content (a
    /// torn last line of the previous file must not stay, or the next line would be glued to
    /// it), or keeps everything in memory without a state directory. The receiver gets the
    /// records once they are on disk.
    pub fn open(store: &Store, history: &History, config: &Config) -> (Recorder, Option<OnDisk>) {
        let limit = Arc::new(AtomicUsize::new(config.limits.log_history_limit));
        let mut initial = Vec::new();
        for e in history.newest_first().collect::<Vec<_>>().into_iter().rev() {
            let s = e.snapshot();
            if s.flags.execution_finished {
                journal::write_finished(&mut initial, &s, &e.binding_id);
            } else {
                journal::write_started(&mut initial, &s, &e.binding_id);
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let compact_limit = Arc::clone(&limit);
        let options = store::Options {
            initial,
            sync: sync_of(config),
            compact: Box::new(move |bytes: &[u8]| {
                journal::compact(bytes, compact_limit.load(Ordering::Relaxed))
            }),
            // The engine may be gone at shutdown; then nobody waits for these.
            written: Box::new(move |lines: Vec<Line>| {
                let _ = tx.send(lines);
            }),
        };
        let journal = store.journal(journal::FILE, options);
        let on_disk = journal.is_some().then_some(rx);
        let recorder = Recorder {
            journal,
            waiting: AtomicUsize::new(0),
            lines: AtomicUsize::new(history.len()),
            limit,
        };
        (recorder, on_disk)
    }

    /// Hands a record to the history file. Without one, hands it straight back: the caller
    /// acts on it at once.
    #[must_use = "a record handed back must be acted on now"]
    pub fn record(&self, line: Line) -> Option<Line> {
        let Some(journal) = &self.journal else {
            return Some(line);
        };
        self.waiting.fetch_add(1, Ordering::SeqCst);
        journal.append(line);
        // One compaction per `logHistoryLimit` runs (two lines each), never one per run.
        let limit = self.limit.load(Ordering::Relaxed);
        if self.lines.fetch_add(1, Ordering::SeqCst) + 1 > 2 * limit {
            self.lines.store(limit, Ordering::SeqCst);
            journal.compact();
        }
        None
    }

    /// Counts records back from the journal.
    pub fn back(&self, n: usize) {
        self.waiting.fetch_sub(n, Ordering::SeqCst);
    }

    /// Whether a start may queue a record now: not while the file cannot be written, nor
    /// while `queue_length` records already wait for the disk.
    pub fn room(&self, queue_length: usize) -> Result<(), Error> {
        let Some(journal) = &self.journal else {
            return Ok(());
        };
        if let Some(why) = journal.failing() {
            return Err(Error::HistoryUnwritable(why));
        }
        let waiting = self.waiting.load(Ordering::SeqCst);
        if waiting >= queue_length {
            return Err(Error::HistoryBehind {
                waiting,
                file: journal.path().display().to_string(),
            });
        }
        Ok(())
    }

    /// Follows a reload: the history's limit and the sync level.
    pub fn configure(&self, config: &Config) {
        self.limit
            .store(config.limits.log_history_limit, Ordering::Relaxed);
        if let Some(journal) = &self.journal {
            journal.set_sync(sync_of(config));
        }
    }

    /// What the history file's writer has done, when there is one.
    pub fn stats(&self) -> Option<store::Stats> {
        self.journal.as_ref().map(Journal::stats)
    }

    /// Waits (briefly) until every record is on disk and fsynced; at shutdown.
    pub fn flush(&self) {
        if let Some(journal) = &self.journal
            && !journal.flush(Duration::from_secs(2))
        {
            warn!("the history file could not be flushed in time");
        }
    }
}
