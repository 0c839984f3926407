//! When a group of watched files (the config with its board and includes, or the entity
//! files) may be applied: pure, the caller passes the time and the events. Each group settles
//! on its own, so an entity file that a script rewrites every second never holds back a config
//! change, and the wait is capped: `CAP` after its first change a group is applied as it reads
//! then, and the watcher says so at warn level.
//!
//! A group is ready once nothing of it changed for `SETTLE` and no file of it is still open
//! for writing: a file whose last event was a write (IN_MODIFY) with no IN_CLOSE_WRITE (nor a
//! rename or removal) after it is held by a writer that may not be done (`truncate`, part of
//! the text, the descriptor kept open). It must not read files, sleep or log.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;

/// A change is applied once nothing changed for this long: a script that writes a file in
/// two steps a second apart is applied once, whole.
pub const SETTLE: Duration = Duration::from_secs(2);

/// A group that has not settled this long after its first change is applied as it reads
/// then: neither a writer that keeps a file open nor files that keep changing hold a reload
/// back for longer.
pub const CAP: Duration = Duration::from_secs(10);

/// The changes of one group not applied yet.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Group {
    /// The first change not applied yet; `None` when nothing waits.
    first: Option<Instant>,
    /// The last change.
    last: Option<Instant>,
    /// Files whose last event was a write with nothing after it: a writer holds them open.
    open: BTreeSet<PathBuf>,
    /// Whether the wait for those writers was said in the log.
    held_said: bool,
}

/// What a group may do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ready {
    /// Nothing waits.
    Idle,
    /// Not yet: look again at this time (or at the next event).
    Wait(Instant),
    /// Quiet for `SETTLE` and no file open: read it twice, then apply it.
    Settled,
    /// `CAP` since the first change without settling: apply it as it reads now. `open` names
    /// the files a writer still held (none: they kept changing).
    Forced { open: Vec<PathBuf> },
}

impl Group {
    /// An event for `path` at `now`; `writing` when it was a write (IN_MODIFY), which leaves
    /// the file open until a later event of another kind closes it.
    pub fn note(&mut self, now: Instant, path: &Path, writing: bool) {
        self.touch(now);
        if writing {
            self.open.insert(path.to_path_buf());
        } else {
            self.open.remove(path);
        }
    }

    /// A change with no file to it: events were lost (what was open is unknown, so nothing
    /// is taken as open), or the files read differently with no event.
    pub fn touch(&mut self, now: Instant) {
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    /// Events were lost: anything may have changed, and nothing is known to be open.
    pub fn overflow(&mut self, now: Instant) {
        self.touch(now);
        self.open.clear();
    }

    /// The last change, to tell whether another came while the files were read.
    pub fn last(&self) -> Option<Instant> {
        self.last
    }

    /// The group was applied (or found unchanged): nothing waits any more.
    pub fn applied(&mut self) {
        *self = Group::default();
    }

    pub fn check(&self, now: Instant) -> Ready {
        let (Some(first), Some(last)) = (self.first, self.last) else {
            return Ready::Idle;
        };
        let cap = first + CAP;
        if now >= cap {
            return Ready::Forced {
                open: self.open.iter().cloned().collect(),
            };
        }
        let quiet = last + SETTLE;
        if !self.open.is_empty() {
            // Woken once quiet, to say what it waits for (`held`), then at the cap.
            let said = self.held_said || now >= quiet;
            return Ready::Wait(if said { cap } else { quiet.min(cap) });
        }
        if now >= quiet {
            Ready::Settled
        } else {
            Ready::Wait(quiet.min(cap))
        }
    }

    /// The files a writer holds open past `SETTLE` of quiet, once per wait: the watcher says
    /// it is waiting for them.
    pub fn held(&mut self, now: Instant) -> Option<Vec<PathBuf>> {
        let last = self.last?;
        if self.held_said || self.open.is_empty() || now < last + SETTLE {
            return None;
        }
        self.held_said = true;
        Some(self.open.iter().cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One step: at `ms`, an event (`Some((path, writing))`) or a look (`None`), and what
    /// `check` says then.
    type Step<'a> = (u64, Option<(&'a str, bool)>, Ready);

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[test]
    fn the_table_of_settling() {
        let t0 = Instant::now();
        let wait = |ms| Ready::Wait(at(t0, ms));
        let forced = |open: &[&str]| Ready::Forced {
            open: open.iter().map(PathBuf::from).collect(),
        };
        let cases: Vec<Vec<Step<'_>>> = vec![
            // Nothing happened.
            vec![(0, None, Ready::Idle)],
            // A whole write (write, close): settled 2 s later.
            vec![
                (0, Some(("c", true)), wait(2_000)),
                (1, Some(("c", false)), wait(2_001)),
                (2_000, None, wait(2_001)),
                (2_001, None, Ready::Settled),
            ],
            // Two steps 1.2 s apart: 2 s after the second.
            vec![
                (0, Some(("c", false)), wait(2_000)),
                (1_200, Some(("c", false)), wait(3_200)),
                (3_200, None, Ready::Settled),
            ],
            // Written and kept open: not settled while open, however quiet; settled 2 s
            // after the close.
            vec![
                (0, Some(("c", true)), wait(2_000)),
                (5_000, None, wait(10_000)),
                (6_000, Some(("c", false)), wait(8_000)),
                (8_000, None, Ready::Settled),
            ],
            // Kept open past the cap: forced, naming the file.
            vec![
                (0, Some(("c", true)), wait(2_000)),
                (9_999, None, wait(10_000)),
                (10_000, None, forced(&["c"])),
            ],
            // Changing every second: forced at the cap, with nothing open.
            (0..10)
                .map(|s| {
                    (
                        s * 1_000,
                        Some(("e", false)),
                        wait((s * 1_000 + 2_000).min(10_000)),
                    )
                })
                .chain([(10_000, None, forced(&[]))])
                .collect(),
            // A rename over an open file closes it (the writer writes to a file gone).
            vec![
                (0, Some(("c", true)), wait(2_000)),
                (100, Some(("c", false)), wait(2_100)),
                (2_100, None, Ready::Settled),
            ],
            // One file open keeps the group; another file's close does not release it.
            vec![
                (0, Some(("a", true)), wait(2_000)),
                (10, Some(("b", true)), wait(2_010)),
                (20, Some(("b", false)), wait(2_020)),
                (3_000, None, wait(10_000)),
            ],
        ];
        for (i, steps) in cases.iter().enumerate() {
            let mut g = Group::default();
            for (ms, event, want) in steps {
                let now = at(t0, *ms);
                if let Some((path, writing)) = event {
                    g.note(now, Path::new(path), *writing);
                }
                assert_eq!(g.check(now), *want, "case {i} at {ms} ms");
            }
        }
    }

    #[test]
    fn a_held_file_is_said_once_and_lost_events_forget_it() {
        let t0 = Instant::now();
        let mut g = Group::default();
        g.note(t0, Path::new("c"), true);
        assert_eq!(g.held(at(t0, 1_000)), None, "not quiet yet");
        assert_eq!(g.held(at(t0, 2_000)), Some(vec![PathBuf::from("c")]));
        assert_eq!(g.held(at(t0, 3_000)), None, "said once");
        g.overflow(at(t0, 3_000));
        assert_eq!(g.check(at(t0, 5_000)), Ready::Settled);
        g.applied();
        assert_eq!(g.check(at(t0, 5_000)), Ready::Idle);
        assert_eq!(g.last(), None);
    }
}
