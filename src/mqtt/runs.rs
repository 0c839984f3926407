//! Which runs of each binding a session has told Home Assistant about: the last finished run
//! that ran (what the retained state says) and every finish since the session began (one
//! event each). It reads the engine's history as the `runAs` caller, newest first, and stops
//! at what it saw at its last look; it must not publish (the session does) nor hold the
//! history's lock beyond one walk.
//!
//! A look is driven by the session's `ActionWatch`, which coalesces: two runs that finish
//! between two looks are both found here, because each look compares the history with the
//! previous one instead of counting notifications. What "new" means rests on the history's
//! order: records are inserted in the order they are made (all on the event loop, so their
//! start instants follow that order) and evicted oldest first, so a record newer than the
//! newest one seen last time was never seen. A session's first look at a binding only notes
//! where the history stands: runs that finished while nobody was connected are in the state,
//! not replayed as events hours later.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use super::discovery::{self, Run};
use crate::clock::LocalZone;
use crate::engine::Engine;
use crate::execution::Execution;
use crate::permissions::Caller;

/// What one look at a binding found.
pub struct Look {
    /// The binding's retained state payload.
    pub state: String,
    /// One event payload per run that finished since the last look, oldest first.
    pub events: Vec<String>,
}

/// What the session saw of one binding.
#[derive(Default)]
struct Seen {
    /// The newest record seen (its start instant and tracking id). `None` while the history
    /// held only records restored after a restart, which have no instant and are older than
    /// any record made since.
    horizon: Option<(Instant, String)>,
    /// Records seen before they finished; each gets its event once it has.
    pending: Vec<Arc<Execution>>,
    /// The last finished run that ran.
    last: Option<Arc<Execution>>,
}

/// The runs every binding of one session has reported.
#[derive(Default)]
pub struct Runs {
    seen: BTreeMap<String, Seen>,
}

/// Whether `a` started after `b` (a record restored after a restart has no instant and is
/// older than every other).
fn newer(a: &Execution, b: &Execution) -> bool {
    match (a.started, b.started) {
        (Some(x), Some(y)) => x > y,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

fn finished(e: &Execution) -> bool {
    e.phase().flags().execution_finished
}

impl Runs {
    /// Looks at `binding` for `caller`: its state, and the events of the runs that finished
    /// since the last look. `None` when `caller` may no longer read it (a reload took the
    /// permission away; handling that reload empties its topics).
    pub fn look(&mut self, engine: &Engine, binding: &str, caller: &Caller) -> Option<Look> {
        let first = !self.seen.contains_key(binding);
        let seen = self.seen.entry(binding.to_string()).or_default();
        // Newest first: the records made since the last look, or at the first look all of
        // them (only to find the running ones and the last finished run).
        let mut fresh: Vec<Arc<Execution>> = Vec::new();
        let horizon = seen.horizon.clone();
        engine
            .visit_newest(binding, caller, |e| {
                let new = first
                    || match (&horizon, e.started) {
                        (None, started) => started.is_some(),
                        (Some((h, id)), Some(t)) => {
                            t > *h || (t == *h && e.tracking_id.as_str() != id.as_str())
                        }
                        (Some(_), None) => false,
                    };
                if new {
                    fresh.push(Arc::clone(e));
                }
                new
            })
            .ok()?;
        if let Some(newest) = fresh.first()
            && let Some(t) = newest.started
        {
            seen.horizon = Some((t, newest.tracking_id.to_string()));
        }
        // What finished since the last look: pending records that have, and new ones.
        let mut done: Vec<Arc<Execution>> = Vec::new();
        seen.pending.retain(|e| {
            let over = finished(e);
            if over {
                done.push(Arc::clone(e));
            }
            !over
        });
        for e in fresh {
            if finished(&e) {
                done.push(e);
            } else {
                seen.pending.push(e);
            }
        }
        done.sort_by(|a, b| {
            if newer(a, b) {
                std::cmp::Ordering::Greater
            } else if newer(b, a) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Equal
            }
        });
        for e in done.iter().filter(|e| !e.phase().flags().blocked) {
            if seen.last.as_ref().is_none_or(|l| !newer(l, e)) {
                seen.last = Some(Arc::clone(e));
            }
        }
        let events = if first {
            Vec::new()
        } else {
            done.iter()
                .map(|e| {
                    let snapshot = e.snapshot();
                    let run = Run {
                        snapshot: &snapshot,
                        took: e.took(),
                    };
                    discovery::event_payload(&run, &LocalZone)
                })
                .collect()
        };
        let last = seen.last.as_ref().map(|e| (e.snapshot(), e.took()));
        let run = last.as_ref().map(|(snapshot, took)| Run {
            snapshot,
            took: *took,
        });
        Some(Look {
            state: discovery::state_payload(run.as_ref(), engine.is_running(binding), &LocalZone),
            events,
        })
    }

    /// Forgets the bindings not in `keep` (after a reload): a binding that comes back is
    /// looked at afresh.
    pub fn keep_only(&mut self, keep: &BTreeSet<String>) {
        self.seen.retain(|b, _| keep.contains(b));
    }
}
