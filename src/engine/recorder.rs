//! Journal recording: when the engine's records reach the history file. A start line is
//! written before the process exists (so a crash mid-run is visible after a restart) and a
//! finish line when it ends; once the file holds twice `logHistoryLimit` lines it is
//! rewritten with only the records the history keeps. The line format is `journal`'s and
//! the writing is the store's (its own thread appends and fsyncs); this module decides what
//! is written when, and must not format lines or touch files itself.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tracing::warn;

use crate::execution::{Execution, Snapshot};
use crate::history::History;
use crate::journal;
use crate::store::Journal;

/// The history file of one engine, or nothing when the history is kept in memory only.
pub struct Recorder {
    journal: Option<Journal>,
    /// Lines written since the file was last rewritten.
    lines: AtomicUsize,
}

impl Recorder {
    pub fn new(journal: Option<Journal>) -> Recorder {
        Recorder {
            journal,
            lines: AtomicUsize::new(0),
        }
    }

    /// Appends the start line of `exec`.
    #[must_use = "a true answer asks for `compact`"]
    pub fn started(&self, exec: &Execution, limit: usize) -> bool {
        self.append(
            || journal::started_line(&exec.snapshot(), &exec.binding_id),
            limit,
        )
    }

    /// Appends the finish line of `exec`, whose final state is `snapshot`.
    #[must_use = "a true answer asks for `compact`"]
    pub fn finished(&self, exec: &Execution, snapshot: &Snapshot, limit: usize) -> bool {
        self.append(|| journal::finished_line(snapshot, &exec.binding_id), limit)
    }

    /// Appends a line (fsynced by the store's writer thread) and says whether the file now
    /// holds more than twice `limit` (`logHistoryLimit`) lines and should be rewritten: one
    /// rewrite per `limit` executions, never one per execution. The line is built only when
    /// there is a file: serializing it is a tenth of the service's own work per execution
    /// (measured with callgrind, see README "Performance").
    fn append(&self, line: impl FnOnce() -> Vec<u8>, limit: usize) -> bool {
        let Some(journal) = &self.journal else {
            return false;
        };
        journal.append(line());
        self.lines.fetch_add(1, Ordering::SeqCst) + 1 > 2 * limit
    }

    /// Rewrites the file with one line per record in `history`, oldest first. The caller
    /// holds the history's lock; the bytes are handed to the writer thread, not written here.
    pub fn compact(&self, history: &History) {
        let Some(journal) = &self.journal else { return };
        let mut bytes = Vec::new();
        let mut lines = 0;
        for e in history.newest_first().collect::<Vec<_>>().into_iter().rev() {
            let snapshot = e.snapshot();
            let line = if snapshot.flags.execution_finished {
                journal::finished_line(&snapshot, &e.binding_id)
            } else {
                journal::started_line(&snapshot, &e.binding_id)
            };
            bytes.extend(line);
            lines += 1;
        }
        journal.replace(bytes);
        self.lines.store(lines, Ordering::SeqCst);
    }

    /// Waits (briefly) until every line is on disk; at shutdown.
    pub fn flush(&self) {
        if let Some(journal) = &self.journal
            && !journal.flush(Duration::from_secs(2))
        {
            warn!("the history file could not be flushed in time");
        }
    }
}
