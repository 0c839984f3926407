//! Recording: the records the engine writes to the history file, and the wait for each to be
//! on disk. `record` queues a line and gives back a [`Durable`], which the execution's life
//! (`lifecycle`) awaits before it acts on the line: a run is launched and announced only once
//! its start line is on disk (so a run that exists is never forgotten by a crash), and shows
//! as finished only once its finish line is. A blocked run has one line, its finish. The
//! journal's thread only completes what an execution awaits: it acts on nothing itself.
//!
//! Without a state directory a record is "on disk" at once: its `Durable` is ready, so
//! nothing waits and nothing is queued.
//!
//! It bounds what waits for the disk: a start is refused when `historyQueueLength` records
//! already wait (storage is slower than the work), or while the file cannot be written (a
//! full disk), with a message saying which. Blocked runs, which anyone may make in a loop by
//! pressing a busy button, may hold only a quarter of that queue ([`blocked_share`]): a
//! press that would be blocked beyond it is refused, so the rest of the queue stays for
//! runs that run and a flood of busy presses cannot refuse another caller's run. A finish line is never refused: each running
//! execution has at most one, so those are bounded by `maxConcurrentExecutions`. It asks
//! for a compaction once the file holds twice `logHistoryLimit` lines. The line format is
//! `journal`'s and the writing is the store's; this module must not format lines or touch
//! files itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::oneshot;
use tracing::warn;

use super::Error;
use crate::config::{Config, HistorySync};
use crate::execution::Execution;
use crate::history::History;
use crate::journal;
use crate::store::{self, Journal, Store};

/// What a record is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A run's start.
    Started,
    /// A run's end. `evicted`: the history had let the run go by then.
    Finished { evicted: bool },
    /// A blocked run, which starts and ends in one record.
    Blocked,
}

/// One record on its way to the history file, and whom to tell once it is on disk.
pub struct Line {
    exec: Arc<Execution>,
    kind: Kind,
    durable: oneshot::Sender<()>,
}

/// A record's wait for the disk, which its execution awaits before it acts on the record.
#[must_use = "a record is acted on only once it is durable"]
pub struct Durable {
    on_disk: Option<oneshot::Receiver<()>>,
    /// It is a blocked run's, counted against the blocked runs' share of the queue.
    blocked: bool,
}

impl Durable {
    /// Whether the record is durable already: there is no history file.
    pub fn is_durable(&self) -> bool {
        self.on_disk.is_none()
    }

    /// Resolves once the record is on disk (and fsynced, per the sync level); false when it
    /// never will be (the journal's thread is gone), and then nothing may act on it.
    pub async fn wait(self, recorder: &Recorder) -> bool {
        let Some(on_disk) = self.on_disk else {
            return true;
        };
        let durable = on_disk.await.is_ok();
        recorder.waiting.fetch_sub(1, Ordering::SeqCst);
        if self.blocked {
            recorder.waiting_blocked.fetch_sub(1, Ordering::SeqCst);
        }
        durable
    }
}

/// How many of the `queue_length` records waiting for the disk may be blocked runs': a
/// quarter, and at least one.
pub fn blocked_share(queue_length: usize) -> usize {
    (queue_length / 4).max(1)
}

impl store::Record for Line {
    /// Encoded on the journal's thread, off the event loop: serializing a record is a tenth
    /// of the service's own work per execution (callgrind, docs/PERFORMANCE.md).
    fn encode(&self, out: &mut Vec<u8>) {
        let binding = journal::Whose {
            binding: &self.exec.binding_id,
            holder: &self.exec.holder,
        };
        match self.kind {
            Kind::Started => journal::write_started(out, &self.exec.snapshot(), binding),
            Kind::Finished { evicted: true, .. } => {
                journal::write_finished_evicted(out, &self.exec.final_snapshot(), binding)
            }
            Kind::Finished { .. } | Kind::Blocked => {
                journal::write_finished(out, &self.exec.final_snapshot(), binding)
            }
        }
    }
}

/// The history file of one engine, or nothing when the history is kept in memory only.
pub struct Recorder {
    journal: Option<Journal<Line>>,
    /// Records handed to the journal whose execution has not yet seen them on disk.
    waiting: AtomicUsize,
    /// Of those, blocked runs' records.
    waiting_blocked: AtomicUsize,
    /// Lines appended since the file was last compacted (about: a compaction leaves about
    /// one line per record of the history).
    lines: AtomicUsize,
    /// `logHistoryLimit`, shared with the compaction on the journal's thread.
    limit: Arc<AtomicUsize>,
}

fn sync_of(config: &Config) -> store::SyncPolicy {
    match config.history_sync {
        HistorySync::Always => store::SyncPolicy::Always,
        HistorySync::Every(d) => store::SyncPolicy::Every(d),
    }
}

impl Recorder {
    /// Starts the history file of `store` with the records of `history` as its content (a
    /// torn last line of the previous file must not stay, or the next line would be glued to
    /// it), or keeps everything in memory without a state directory.
    pub fn open(store: &Store, history: &History, config: &Config) -> Recorder {
        let limit = Arc::new(AtomicUsize::new(config.limits.log_history_limit));
        // Encoded one at a time by the journal's thread as it writes them, never the whole
        // file at once; nobody waits for them.
        let mut initial: Vec<Line> = history
            .newest_first()
            .map(|e| Line {
                kind: if e.phase().is_finished() {
                    Kind::Finished { evicted: false }
                } else {
                    Kind::Started
                },
                exec: Arc::clone(e),
                durable: oneshot::channel().0,
            })
            .collect();
        initial.reverse();
        let compact_limit = Arc::clone(&limit);
        let options = store::Options {
            initial,
            sync: sync_of(config),
            compact: Box::new(move |bytes: &[u8]| {
                journal::compact(bytes, compact_limit.load(Ordering::Relaxed))
            }),
            // The journal's thread only wakes the executions that wait for these (in the
            // order they were queued); one gone at shutdown waits for nothing.
            written: Box::new(|lines: Vec<Line>| {
                for line in lines {
                    let _ = line.durable.send(());
                }
            }),
        };
        let journal = store.journal(journal::FILE, options);
        Recorder {
            journal,
            waiting: AtomicUsize::new(0),
            waiting_blocked: AtomicUsize::new(0),
            lines: AtomicUsize::new(history.len()),
            limit,
        }
    }

    /// Queues the record of `kind` for `exec` now, in the order of the calls; the history
    /// file's line is encoded from `exec` as it is when the writer takes it. Without a file,
    /// the record is durable at once.
    pub fn record(&self, exec: Arc<Execution>, kind: Kind) -> Durable {
        let blocked = kind == Kind::Blocked;
        let Some(journal) = &self.journal else {
            return Durable {
                on_disk: None,
                blocked,
            };
        };
        let (durable, on_disk) = oneshot::channel();
        self.waiting.fetch_add(1, Ordering::SeqCst);
        if blocked {
            self.waiting_blocked.fetch_add(1, Ordering::SeqCst);
        }
        journal.append(Line {
            exec,
            kind,
            durable,
        });
        // One compaction per `logHistoryLimit` runs (two lines each), never one per run.
        let limit = self.limit.load(Ordering::Relaxed);
        if self.lines.fetch_add(1, Ordering::SeqCst) + 1 > 2 * limit {
            self.lines.store(limit, Ordering::SeqCst);
            journal.compact();
        }
        Durable {
            on_disk: Some(on_disk),
            blocked,
        }
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

    /// Whether a start that a limit blocks may queue its record now: not while blocked runs'
    /// records already hold their share of the queue ([`blocked_share`]).
    pub fn room_for_blocked(&self, queue_length: usize) -> Result<(), Error> {
        let Some(journal) = &self.journal else {
            return Ok(());
        };
        let waiting = self.waiting_blocked.load(Ordering::SeqCst);
        let share = blocked_share(queue_length);
        if waiting >= share {
            return Err(Error::BlockedBehind {
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
