//! When a group of watched files (the config with its board and includes, or the entity
//! files) may be applied: pure, the caller passes the time and the events. Each group settles
//! on its own, so an entity file that a script rewrites every second never holds back a config
//! change.
//!
//! A group is ready once nothing of it changed for `SETTLE` and no file of it is still open.
//! Open handles are counted per file: each IN_OPEN adds one, each IN_CLOSE_WRITE or
//! IN_CLOSE_NOWRITE takes one away (the kernel reports one close per open, also for a file
//! since renamed over or removed, under the name it had). A second process that opens and
//! closes the file (`touch`, `: >>`) while the writer holds it therefore leaves it open.
//! inotify does not say whether an open is for reading or writing until the close: where the
//! kernel can be asked who writes (`kernel`), a counted open holds nothing by itself (the
//! quiet group is settled and the kernel asked, so a reader never holds a reload back); where
//! it cannot, a reader that holds the file (`less`) holds the reload too, and the log says so. actiond's
//! own reads open and close the file as well; they balance, and they are no change. A file
//! written (IN_MODIFY) with no close after it is open too: its writer opened it before the
//! watch began. Where the count cannot be trusted (events were lost, or a close came for an
//! open never seen: a handle from before the watch), the group is applied after the quiet and
//! two equal reads alone, and `unsure` says why, for the log. The count is only the first
//! word: before a settled group is applied the watcher asks the kernel whether any process
//! holds one of its files open for writing (`held`, a lease probe that sees every handle, by
//! whatever name it was opened, before or after actiond started); a group so held waits, and
//! is asked again `PROBE_AGAIN` later, since its writer may close it where no watch sees it
//! (`sure`: the kernel said no writer, so the count's doubts need not be said). The entity
//! files' wait is capped: `CAP` after their first change they are applied as they read then (a bad entity
//! file only keeps its type's old instances). The config's is not: a config read half written
//! may lack its access rules, so it waits as long as a handle holds it open or it keeps
//! changing, and says what it waits for, at growing intervals (`waiting`). It must not read
//! files, sleep or log.

use std::collections::{BTreeMap, BTreeSet};
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

/// A group the kernel said a writer holds is asked again this long after: its writer's close
/// may come through a name or link no watch sees.
pub const PROBE_AGAIN: Duration = Duration::from_secs(1);

/// Most files counted open at once per group: past it, the count is given up (`unsure`).
const MAX_COUNTED: usize = 1024;

/// What happened to a file of a group, as inotify told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Opened (for reading or writing: not known until it is closed). No change by itself.
    Opened,
    /// Written (IN_MODIFY): a change, and a writer holds it open.
    Written,
    /// Closed; `wrote` when it had been opened for writing (a change then).
    Closed { wrote: bool },
    /// Renamed away (to a name the group does not read, such as `50-open.yaml.disabled`, or
    /// out of its directory): a change, since the group lost a file, and the handles on it
    /// now belong to another name. A rename to a name the group reads comes with a
    /// `Replaced` of that name too.
    MovedAway,
    /// Replaced, made or removed (a rename over it, a creation, a removal): a change.
    Replaced,
    /// Written, as the file's own watch saw it (by any name or hard link): a change, and no
    /// word on its handles (those opened by its watched name are counted from its
    /// directory's events; the others are the kernel's to tell).
    Changed,
}

/// Why the open handles of a group could not be counted, so that it was applied after the
/// quiet and two equal reads alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsure {
    /// The kernel's queue overflowed: opens and closes were lost.
    Lost,
    /// A close came for an open never seen: a handle opened before actiond watched the file.
    Unseen(PathBuf),
    /// Too many files open at once to count.
    TooMany,
}

/// The changes of one group not applied yet.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Group {
    /// The first change not applied yet; `None` when nothing waits.
    first: Option<Instant>,
    /// The last change.
    last: Option<Instant>,
    /// Handles open on each file, as counted from opens and closes. Kept across reloads: a
    /// handle open when a change is applied is still open after it.
    handles: BTreeMap<PathBuf, u32>,
    /// Files written with no close after it: a writer opened them before the count began.
    written: BTreeSet<PathBuf>,
    /// Why the count may be wrong, since the last reload.
    unsure: Option<Unsure>,
    /// The files the kernel said a writer held open at the last probe, and when it was.
    writers: Vec<PathBuf>,
    probed: Option<Instant>,
    /// When the wait was last said in the log, and the pause before it is said again.
    said: Option<(Instant, Duration)>,
    /// Applied at `CAP` however it reads (the entity files), or only once settled (the
    /// config).
    capped: bool,
    /// Whether the kernel answers who holds the files open for writing (`kernel`): then a
    /// counted open, which may be a reader's, holds nothing by itself; the kernel is asked.
    kernel: bool,
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
    /// now. `open` names the files a handle still held (none: they kept changing).
    Forced { open: Vec<PathBuf> },
}

/// What a group waits for, to be said in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The files a handle holds open; none: the files keep changing.
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

    /// `event` for `path` at `now`.
    pub fn note(&mut self, now: Instant, path: &Path, event: Event) {
        match event {
            Event::Opened => {
                if let Some(n) = self.handles.get_mut(path) {
                    *n += 1;
                } else if self.handles.len() < MAX_COUNTED {
                    self.handles.insert(path.to_path_buf(), 1);
                } else {
                    self.unsure = Some(Unsure::TooMany);
                }
            }
            Event::Written => {
                self.touch(now);
                self.written.insert(path.to_path_buf());
            }
            Event::Closed { wrote } => {
                if wrote {
                    self.touch(now);
                }
                self.written.remove(path);
                match self.handles.get_mut(path) {
                    Some(n) if *n > 1 => *n -= 1,
                    Some(_) => {
                        self.handles.remove(path);
                    }
                    None => {
                        if self.unsure.is_none() {
                            self.unsure = Some(Unsure::Unseen(path.to_path_buf()));
                        }
                    }
                }
            }
            Event::MovedAway => {
                self.touch(now);
                self.handles.remove(path);
                self.written.remove(path);
            }
            Event::Replaced => {
                self.touch(now);
                self.written.remove(path);
            }
            Event::Changed => self.touch(now),
        }
    }

    /// A change with no file to it: the files read differently with no event.
    pub fn touch(&mut self, now: Instant) {
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    /// Events were lost: anything may have changed, and what is open is unknown.
    pub fn overflow(&mut self, now: Instant) {
        self.touch(now);
        self.handles.clear();
        self.written.clear();
        self.unsure = Some(Unsure::Lost);
    }

    /// Whether the kernel answers who holds the group's files open for writing (the lease
    /// probe works here). When it does, an open counted from IN_OPEN (which does not say
    /// whether it is for reading or writing) no longer holds the group: once quiet, the
    /// group is settled and the kernel asked, so a reader of a file (`less`, a world-readable
    /// board file held open by anyone) never holds back a reload, while a writer does.
    pub fn kernel(&mut self, answers: bool) {
        self.kernel = answers;
    }

    /// The kernel said, at `now`, that a writer holds `paths` open (none: no writer).
    pub fn held(&mut self, now: Instant, paths: Vec<PathBuf>) {
        self.writers = paths;
        self.probed = Some(now);
    }

    /// The kernel said no file of the group is open for writing: whatever the count missed
    /// (a handle from before the watch, lost events) no longer matters.
    pub fn sure(&mut self) {
        self.unsure = None;
        self.writers.clear();
        self.probed = None;
    }

    /// The last change, to tell whether another came while the files were read.
    pub fn last(&self) -> Option<Instant> {
        self.last
    }

    /// Why the count of open handles may be wrong, to be said when the group is applied.
    pub fn unsure(&self) -> Option<&Unsure> {
        self.unsure.as_ref()
    }

    /// The group was applied (or found unchanged): nothing waits any more. The handles still
    /// open stay counted.
    pub fn applied(&mut self) {
        *self = Group {
            capped: self.capped,
            kernel: self.kernel,
            handles: std::mem::take(&mut self.handles),
            ..Group::default()
        };
    }

    /// The files held open now: by a writer the kernel named, by one seen writing, or (when
    /// the kernel cannot be asked) by any counted handle, since a count cannot tell a reader.
    fn open(&self) -> Vec<PathBuf> {
        let mut open: BTreeSet<&PathBuf> = BTreeSet::new();
        if !self.kernel {
            open.extend(self.handles.keys());
        }
        open.extend(&self.written);
        open.extend(&self.writers);
        open.into_iter().cloned().collect()
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
            return Ready::Forced { open: self.open() };
        }
        let until_cap = |at: Instant| cap.map_or(at, |cap| at.min(cap));
        let quiet = last + SETTLE;
        if !self.open().is_empty() {
            // Woken when the wait is next to be said, and at the cap.
            // `waiting`, asked first, has moved a due saying on once the group is quiet; a
            // saying due before the quiet waits for it (no look at every turn meanwhile).
            let say = self.said.map_or(quiet, |(at, pause)| at + pause);
            let counted = (!self.kernel && !self.handles.is_empty()) || !self.written.is_empty();
            if let (false, Some(probed)) = (counted, self.probed) {
                // Held only by what the kernel said: asked again once quiet.
                let again = (probed + PROBE_AGAIN).max(quiet);
                if now >= again {
                    return Ready::Settled;
                }
                return Ready::Wait(until_cap(say.max(quiet).min(again)));
            }
            return Ready::Wait(until_cap(say.max(quiet)));
        }
        if now >= quiet {
            Ready::Settled
        } else {
            Ready::Wait(until_cap(quiet))
        }
    }

    /// What the group waits for, when that is due to be said: files a handle holds open past
    /// `SETTLE` of quiet, or (the config) files that keep changing `CAP` after their first
    /// change. Said at once, then after `REMIND`, then at doubling pauses.
    pub fn waiting(&mut self, now: Instant) -> Option<Waiting> {
        let (first, last) = (self.first?, self.last?);
        let quiet = last + SETTLE;
        let open = self.open();
        let held = !open.is_empty() && now >= quiet;
        let changing = !self.capped && open.is_empty() && now < quiet && now >= first + CAP;
        let due = self.said.is_none_or(|(at, pause)| now >= at + pause);
        if !(held || changing) || !due {
            return None;
        }
        let pause = self
            .said
            .map_or(REMIND, |(_, pause)| (pause * 2).min(REMIND_MAX));
        self.said = Some((now, pause));
        Some(Waiting {
            open,
            since: now - first,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One step: at `ms`, an event (`Some((path, event))`) or a look (`None`), and what
    /// `check` says then.
    type Step<'a> = (u64, Option<(&'a str, Event)>, Ready);

    const W: Event = Event::Written;
    const C: Event = Event::Closed { wrote: true };
    const O: Event = Event::Opened;
    const R: Event = Event::Closed { wrote: false };

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
                (0, Some(("c", W)), wait(2_000)),
                (1, Some(("c", C)), wait(2_001)),
                (2_000, None, wait(2_001)),
                (2_001, None, Ready::Settled),
            ],
            // Two steps 1.2 s apart: 2 s after the second.
            vec![
                (0, Some(("c", C)), wait(2_000)),
                (1_200, Some(("c", C)), wait(3_200)),
                (3_200, None, Ready::Settled),
            ],
            // Written and kept open: not settled while open, however quiet; settled 2 s
            // after the close.
            vec![
                (0, Some(("c", W)), wait(2_000)),
                (5_000, None, wait(10_000)),
                (6_000, Some(("c", C)), wait(8_000)),
                (8_000, None, Ready::Settled),
            ],
            // Kept open past the cap: forced, naming the file.
            vec![
                (0, Some(("c", W)), wait(2_000)),
                (9_999, None, wait(10_000)),
                (10_000, None, forced(&["c"])),
            ],
            // Changing every second: forced at the cap, with nothing open.
            (0..10)
                .map(|s| {
                    (
                        s * 1_000,
                        Some(("e", C)),
                        wait((s * 1_000 + 2_000).min(10_000)),
                    )
                })
                .chain([(10_000, None, forced(&[]))])
                .collect(),
            // A rename over an open file closes it (the writer writes to a file gone).
            vec![
                (0, Some(("c", W)), wait(2_000)),
                (100, Some(("c", C)), wait(2_100)),
                (2_100, None, Ready::Settled),
            ],
            // One file open keeps the group; another file's close does not release it.
            vec![
                (0, Some(("a", W)), wait(2_000)),
                (10, Some(("b", W)), wait(2_010)),
                (20, Some(("b", C)), wait(2_020)),
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
                if let Some((path, event)) = event {
                    g.note(now, Path::new(path), *event);
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
                (0, Some(("c", W)), wait(2_000)),
                (2_000, None, wait(12_000)),
                (10_000, None, wait(12_000)),
                (12_000, None, wait(32_000)),
                (14_000, Some(("c", C)), wait(16_000)),
                (16_000, None, Ready::Settled),
            ],
            // Changing every second for 20 s: never forced; settled 2 s after the last.
            (0..20)
                .map(|s| (s * 1_000, Some(("c", C)), wait(s * 1_000 + 2_000)))
                .chain([(21_000, None, Ready::Settled)])
                .collect(),
            // Two steps 3.5 s apart: the first is settled (and then refused as falling open
            // by the watcher, not here), the second settles 2 s after it.
            vec![
                (0, Some(("c", C)), wait(2_000)),
                (2_000, None, Ready::Settled),
            ],
        ];
        run(Group::uncapped(), &cases);
    }

    /// Open handles counted from opens and closes: a second process's open and close (touch)
    /// while the writer holds the file leaves it open; readers count as handles; actiond's own
    /// reads balance and are no change; a rename away takes the handles with the file.
    #[test]
    fn the_table_of_open_handles() {
        let t0 = cases_t0();
        let wait = |ms| Ready::Wait(at(t0, ms));
        let moved = Event::MovedAway;
        let cases: Vec<Vec<Step<'_>>> = vec![
            // The writer opens, truncates and writes half; `touch` opens and closes for
            // writing at 3 s; held until the writer closes at 15 s, settled 2 s later.
            vec![
                (0, Some(("c", O)), Ready::Idle),
                (1, Some(("c", W)), wait(2_001)),
                (3_000, Some(("c", O)), wait(13_000)),
                (3_001, Some(("c", C)), wait(13_000)),
                (5_001, None, wait(13_000)),
                (15_000, Some(("c", W)), wait(17_000)),
                (15_001, Some(("c", C)), wait(17_001)),
                (17_001, None, Ready::Settled),
            ],
            // A reader (less) holds the file while a writer writes it whole: held until the
            // reader closes, which is no change.
            vec![
                (0, Some(("c", O)), Ready::Idle),
                (10, Some(("c", O)), Ready::Idle),
                (20, Some(("c", W)), wait(2_020)),
                (30, Some(("c", C)), wait(2_030)),
                (2_030, None, wait(12_030)),
                (4_000, Some(("c", R)), Ready::Settled),
            ],
            // actiond's own read (open, close without writing) of a quiet file: no change.
            vec![
                (0, Some(("c", O)), Ready::Idle),
                (1, Some(("c", R)), Ready::Idle),
            ],
            // Its own read in the middle of the quiet neither holds nor restarts it.
            vec![
                (0, Some(("c", O)), Ready::Idle),
                (1, Some(("c", W)), wait(2_001)),
                (2, Some(("c", C)), wait(2_002)),
                (1_000, Some(("c", O)), wait(2_002)),
                (1_001, Some(("c", R)), wait(2_002)),
                (2_002, None, Ready::Settled),
            ],
            // A writer from before the watch (written, no open seen): open until a close.
            vec![
                (0, Some(("c", W)), wait(2_000)),
                (2_000, None, wait(12_000)),
                (3_000, Some(("c", C)), wait(5_000)),
                (5_000, None, Ready::Settled),
            ],
            // The file renamed away while a writer holds it: its handles go with it, and the
            // rename is a change of its own.
            vec![
                (0, Some(("c", O)), Ready::Idle),
                (1, Some(("c", W)), wait(2_001)),
                (2, Some(("c", moved)), wait(2_002)),
                (2_002, None, Ready::Settled),
            ],
            // A quiet file renamed away (`mv 50-open.yaml 50-open.yaml.disabled`): no event
            // follows under a name the group reads, and the rename alone settles.
            vec![
                (0, Some(("c", moved)), wait(2_000)),
                (2_000, None, Ready::Settled),
            ],
            // Renamed over while a reader holds the old file: the old file's close comes
            // under the name, and balances.
            vec![
                (0, Some(("c", O)), Ready::Idle),
                (5, Some(("c", Event::Replaced)), wait(2_005)),
                (2_005, None, wait(12_005)),
                (3_000, Some(("c", R)), Ready::Settled),
            ],
        ];
        run(Group::uncapped(), &cases);
    }

    /// Where the count cannot be trusted the group is applied after the quiet alone, and says
    /// why; a handle open when the group is applied stays counted.
    #[test]
    fn an_uncountable_group_says_why_and_handles_outlive_a_reload() {
        let t0 = Instant::now();
        let c = Path::new("c");
        // A close with no open seen: a handle from before the watch.
        let mut g = Group::uncapped();
        g.note(t0, c, C);
        assert_eq!(g.unsure(), Some(&Unsure::Unseen(PathBuf::from("c"))));
        assert_eq!(g.check(at(t0, 2_000)), Ready::Settled);
        g.applied();
        assert_eq!(g.unsure(), None, "said once, at the reload");
        // Lost events forget the handles and say so.
        let mut g = Group::uncapped();
        g.note(t0, c, O);
        g.overflow(at(t0, 10));
        assert_eq!(g.unsure(), Some(&Unsure::Lost));
        assert_eq!(g.check(at(t0, 2_010)), Ready::Settled);
        // A reader open across a reload still holds the next change.
        let mut g = Group::uncapped();
        g.note(t0, c, O);
        g.note(t0, Path::new("d"), W);
        g.note(t0, Path::new("d"), C);
        g.note(t0, Path::new("d"), O);
        g.note(t0, Path::new("d"), R);
        g.applied();
        assert_eq!(g.check(at(t0, 1)), Ready::Idle);
        g.note(at(t0, 100), c, W);
        g.note(at(t0, 101), Path::new("x"), O);
        g.note(at(t0, 102), Path::new("x"), C);
        assert!(
            matches!(g.check(at(t0, 5_000)), Ready::Wait(_)),
            "still open"
        );
        assert_eq!(
            g.waiting(at(t0, 5_000)).map(|w| w.open),
            Some(vec![PathBuf::from("c")])
        );
        // Too many files open at once: given up.
        let mut g = Group::uncapped();
        for i in 0..=MAX_COUNTED {
            g.note(t0, Path::new(&format!("f{i}")), O);
        }
        assert_eq!(g.unsure(), Some(&Unsure::TooMany));
    }

    /// Where the kernel answers who writes, a counted open (a reader's, maybe) holds nothing:
    /// the quiet group is settled so the kernel is asked; a writer it names holds the group
    /// and is asked again. Where it cannot be asked, the same open holds the group.
    #[test]
    fn a_counted_open_holds_only_where_the_kernel_cannot_be_asked() {
        let t0 = Instant::now();
        let (c, board) = (Path::new("c"), Path::new("board"));
        for kernel in [true, false] {
            let mut g = Group::uncapped();
            g.kernel(kernel);
            g.note(t0, board, O);
            g.note(at(t0, 10), c, W);
            g.note(at(t0, 20), c, C);
            if kernel {
                assert_eq!(
                    g.check(at(t0, 2_020)),
                    Ready::Settled,
                    "a reader holds nothing"
                );
                assert_eq!(g.waiting(at(t0, 2_020)), None);
                g.held(at(t0, 2_020), vec![PathBuf::from("board")]);
                assert!(g.waiting(at(t0, 2_020)).is_some(), "a writer is said");
                assert_eq!(g.check(at(t0, 2_020)), Ready::Wait(at(t0, 3_020)));
                assert_eq!(g.check(at(t0, 3_020)), Ready::Settled, "asked again");
            } else {
                assert!(matches!(g.check(at(t0, 2_020)), Ready::Wait(_)), "held");
            }
            // A writer seen writing still holds, either way.
            let mut g = Group::uncapped();
            g.kernel(kernel);
            g.note(t0, c, O);
            g.note(at(t0, 10), c, W);
            assert!(matches!(g.check(at(t0, 5_000)), Ready::Wait(_)));
        }
    }

    /// A file the count thinks closed (its writer's handle came through a rename or a link
    /// no watch sees) but the kernel says is open for writing: held, asked again
    /// `PROBE_AGAIN` later, said as open; applied once the kernel says no writer.
    #[test]
    fn a_writer_the_kernel_reports_holds_the_group_and_is_asked_again() {
        let t0 = Instant::now();
        let c = Path::new("c");
        let mut g = Group::uncapped();
        g.note(t0, c, Event::Replaced);
        assert_eq!(g.check(at(t0, 2_000)), Ready::Settled);
        g.held(at(t0, 2_000), vec![PathBuf::from("c")]);
        assert!(g.waiting(at(t0, 2_000)).is_some(), "the wait is said");
        assert_eq!(g.check(at(t0, 2_000)), Ready::Wait(at(t0, 3_000)));
        assert_eq!(g.check(at(t0, 2_500)), Ready::Wait(at(t0, 3_000)));
        assert_eq!(g.check(at(t0, 3_000)), Ready::Settled, "asked again");
        // Written meanwhile: the quiet comes first.
        g.note(at(t0, 2_900), c, W);
        g.note(at(t0, 2_950), c, C);
        assert_eq!(g.unsure(), Some(&Unsure::Unseen(PathBuf::from("c"))));
        assert_eq!(g.check(at(t0, 3_000)), Ready::Wait(at(t0, 4_950)));
        assert_eq!(g.check(at(t0, 4_950)), Ready::Settled);
        g.sure();
        assert_eq!(g.unsure(), None, "the kernel said no writer");
        assert_eq!(g.check(at(t0, 4_950)), Ready::Settled);
    }

    #[test]
    fn a_wait_is_said_at_doubling_pauses_and_lost_events_forget_it() {
        let t0 = Instant::now();
        let mut g = Group::uncapped();
        g.note(t0, Path::new("c"), W);
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
            g.note(at(t0, s * 1_000), Path::new("c"), C);
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
            e.note(at(t0, s * 1_000), Path::new("e"), C);
            assert_eq!(e.waiting(at(t0, s * 1_000)), None);
        }
        let mut g = Group::uncapped();
        g.note(t0, Path::new("c"), W);
        g.overflow(at(t0, 3_000));
        assert_eq!(g.check(at(t0, 5_000)), Ready::Settled);
        g.applied();
        assert_eq!(g.check(at(t0, 5_000)), Ready::Idle);
        assert_eq!(g.last(), None);
        assert_eq!(g, Group::uncapped(), "still uncapped");
    }
}
