//! When a group of watched files (the config with its board and includes, or the entity
//! files) may be applied: pure, the caller passes the time and the events. Each group settles
//! on its own, so an entity file that a script rewrites every second never holds back a config
//! change.
//!
//! A group is ready once nothing of it changed for `SETTLE` and no file of it is still open
//! for writing: a file whose last event was a write (IN_MODIFY) with no IN_CLOSE_WRITE (nor a
//! rename or removal) after it is held by a writer that may not be done (`truncate`, part of
//! the text, the descriptor kept open). The entity files' wait is capped: `CAP` after their
//! first change they are applied as they read then (a bad entity file only keeps its type's
//! old instances). The config's is not: a config read half written may lack its access rules,
//! so it waits as long as a writer holds it open or it keeps changing, and says what it waits
//! for, at growing intervals (`waiting`). It must not read files, sleep or log.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;

/// A change is applied once nothing changed for this long: a script that writes a file in
/// two steps a second apart is applied once, whole.
pub const SETTLE: Duration = Duration::from_secs(2);

/// An entity file that has not settled this long after its first change is applied as it
/// reads then: neither a writer that keeps it open nor a file that keeps changing holds its
/// reload back for longer. The config waits this long before it says that it keeps changing.
pub const CAP: Duration = Duration::from_secs(10);

/// A wait said in the log is said again after this, then after twice as long each time, up
/// to `REMIND_MAX`: a writer that holds the config open for a day leaves a few lines.
pub const REMIND: Duration = Duration::from_secs(10);
pub const REMIND_MAX: Duration = Duration::from_secs(600);

/// The changes of one group not applied yet.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Group {
    /// The first change not applied yet; `None` when nothing waits.
    first: Option<Instant>,
    /// The last change.
    last: Option<Instant>,
    /// Files whose last event was a write with nothing after it: a writer holds them open.
    open: BTreeSet<PathBuf>,
    /// When the wait was last said in the log, and the pause before it is said again.
    said: Option<(Instant, Duration)>,
    /// Applied at `CAP` however it reads (the entity files), or only once settled (the
    /// config).
    capped: bool,
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
    /// A capped group `CAP` since its first change without settling: apply it as it reads
    /// now. `open` names the files a writer still held (none: they kept changing).
    Forced { open: Vec<PathBuf> },
}

/// What a group waits for, to be said in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The files a writer holds open; none: the files keep changing.
    pub open: Vec<PathBuf>,
    /// Since the first change.
    pub since: Duration,
}

impl Group {
    /// A group applied at `CAP` at the latest (the entity files).
    pub fn capped() -> Group {
        Group {
            capped: true,
            ..Group::default()
        }
    }

    /// A group applied only once settled (the config).
    pub fn uncapped() -> Group {
        Group::default()
    }

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
        *self = Group {
            capped: self.capped,
            ..Group::default()
        };
    }

    /// What the group may do at `now`. The watcher asks `waiting` first, which decides when
    /// a held group is looked at next.
    pub fn check(&self, now: Instant) -> Ready {
        let (Some(first), Some(last)) = (self.first, self.last) else {
            return Ready::Idle;
        };
        let cap = self.capped.then(|| first + CAP);
        if let Some(cap) = cap
            && now >= cap
        {
            return Ready::Forced {
                open: self.open.iter().cloned().collect(),
            };
        }
        let until_cap = |at: Instant| cap.map_or(at, |cap| at.min(cap));
        let quiet = last + SETTLE;
        if !self.open.is_empty() {
            // Woken when the wait is next to be said, and at the cap.
            let say = self.said.map_or(quiet, |(at, pause)| at + pause);
            return Ready::Wait(until_cap(say.max(now)));
        }
        if now >= quiet {
            Ready::Settled
        } else {
            Ready::Wait(until_cap(quiet))
        }
    }

    /// What the group waits for, when that is due to be said: files a writer holds open past
    /// `SETTLE` of quiet, or (the config) files that keep changing `CAP` after their first
    /// change. Said at once, then after `REMIND`, then at doubling pauses.
    pub fn waiting(&mut self, now: Instant) -> Option<Waiting> {
        let (first, last) = (self.first?, self.last?);
        let quiet = last + SETTLE;
        let held = !self.open.is_empty() && now >= quiet;
        let changing = !self.capped && self.open.is_empty() && now < quiet && now >= first + CAP;
        let due = self.said.is_none_or(|(at, pause)| now >= at + pause);
        if !(held || changing) || !due {
            return None;
        }
        let pause = self
            .said
            .map_or(REMIND, |(_, pause)| (pause * 2).min(REMIND_MAX));
        self.said = Some((now, pause));
        Some(Waiting {
            open: self.open.iter().cloned().collect(),
            since: now - first,
        })
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
        let t0 = cases_t0();
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
        run(Group::capped(), &cases);
    }

    /// Each case from a fresh `group`; every step asks `waiting` first, as the watcher does.
    fn run(group: Group, cases: &[Vec<Step<'_>>]) {
        let t0 = cases_t0();
        for (i, steps) in cases.iter().enumerate() {
            let mut g = group.clone();
            for (ms, event, want) in steps {
                let now = at(t0, *ms);
                if let Some((path, writing)) = event {
                    g.note(now, Path::new(path), *writing);
                }
                g.waiting(now);
                assert_eq!(g.check(now), *want, "case {i} at {ms} ms");
            }
        }
    }

    /// One start for every table, so that expected times can be made before the run.
    fn cases_t0() -> Instant {
        static T0: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        *T0.get_or_init(Instant::now)
    }

    /// The config never applies while a file is open or the files keep changing, however
    /// long: it waits, and looks again when the wait is due to be said.
    #[test]
    fn the_config_waits_for_its_writers_without_a_cap() {
        let t0 = cases_t0();
        let wait = |ms| Ready::Wait(at(t0, ms));
        let cases: Vec<Vec<Step<'_>>> = vec![
            // Held open 14 s: said at 2 s, again at 12 s, then 32 s; settled 2 s after the
            // close.
            vec![
                (0, Some(("c", true)), wait(2_000)),
                (2_000, None, wait(12_000)),
                (10_000, None, wait(12_000)),
                (12_000, None, wait(32_000)),
                (14_000, Some(("c", false)), wait(16_000)),
                (16_000, None, Ready::Settled),
            ],
            // Changing every second for 20 s: never forced; settled 2 s after the last.
            (0..20)
                .map(|s| (s * 1_000, Some(("c", false)), wait(s * 1_000 + 2_000)))
                .chain([(21_000, None, Ready::Settled)])
                .collect(),
            // Two steps 3.5 s apart: the first is settled (and then refused as falling open
            // by the watcher, not here), the second settles 2 s after it.
            vec![
                (0, Some(("c", false)), wait(2_000)),
                (2_000, None, Ready::Settled),
            ],
        ];
        run(Group::uncapped(), &cases);
    }

    #[test]
    fn a_wait_is_said_at_doubling_pauses_and_lost_events_forget_it() {
        let t0 = Instant::now();
        let mut g = Group::uncapped();
        g.note(t0, Path::new("c"), true);
        let held = |s: u64| {
            Some(Waiting {
                open: vec![PathBuf::from("c")],
                since: Duration::from_secs(s),
            })
        };
        assert_eq!(g.waiting(at(t0, 1_000)), None, "not quiet yet");
        assert_eq!(g.waiting(at(t0, 2_000)), held(2));
        assert_eq!(g.waiting(at(t0, 3_000)), None, "said once");
        assert_eq!(g.waiting(at(t0, 12_000)), held(12));
        assert_eq!(g.waiting(at(t0, 31_999)), None);
        assert_eq!(g.waiting(at(t0, 32_000)), held(32));
        assert_eq!(g.waiting(at(t0, 72_000)), held(72));
        g.overflow(at(t0, 73_000));
        assert_eq!(g.waiting(at(t0, 74_000)), None, "nothing known open");
        // The config keeps changing: said once it has for `CAP`.
        let mut g = Group::uncapped();
        for s in 0..12 {
            g.note(at(t0, s * 1_000), Path::new("c"), false);
            let said = g.waiting(at(t0, s * 1_000));
            let want = (s == 10).then(|| Waiting {
                open: vec![],
                since: Duration::from_secs(10),
            });
            assert_eq!(said, want, "at {s} s");
        }
        // An entity group is forced at the cap instead of saying it keeps changing.
        let mut e = Group::capped();
        for s in 0..12 {
            e.note(at(t0, s * 1_000), Path::new("e"), false);
            assert_eq!(e.waiting(at(t0, s * 1_000)), None);
        }
        let mut g = Group::uncapped();
        g.note(t0, Path::new("c"), true);
        g.overflow(at(t0, 3_000));
        assert_eq!(g.check(at(t0, 5_000)), Ready::Settled);
        g.applied();
        assert_eq!(g.check(at(t0, 5_000)), Ready::Idle);
        assert_eq!(g.last(), None);
        assert_eq!(g, Group::uncapped(), "still uncapped");
    }
}
