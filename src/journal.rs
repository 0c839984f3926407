//! The history journal's format: one JSON line when an execution starts, one when
//! it finishes (with its capped output), in the state directory's `history.jsonl`. Reading
//! it back after a restart turns every finished line into a record, and every start without
//! a finish (the service died while it ran) into a record marked as interrupted. A torn last
//! line (power lost mid-write) is skipped and reported; so is any other unreadable line.
//! Arguments are never written, so no password reaches the disk. Compaction keeps one line
//! per execution: `logHistoryLimit` that ran, let go by the history's own rule
//! (`history::Shares`: the oldest of the action holding the most), and the newest blocked
//! ones, as the history in memory does. A run the history had already let go when it finished (more than
//! `logHistoryLimit` runs started after it) is written with `evicted`: its finish completes
//! its start line where that is still in the file, and never brings it back where a
//! compaction has dropped it, so the file never holds a run the history did not. The file
//! is read back in pieces (`Restorer`), keeping only the records the history will hold and
//! the hashed ids of those let go, so a large file costs the history's memory, not its own
//! size. This module is pure: the store writes the bytes (and runs the compaction on its thread), the
//! engine decides when.

use serde::{Deserialize, Serialize};

use crate::execution::{Flags, Restored, Snapshot, TrackingId};
use std::hash::BuildHasher;

use crate::history::{MAX_BLOCKED, MAX_HISTORY, Shares};

/// The journal's file name in the state directory.
pub const FILE: &str = "history.jsonl";

/// The stderr notice of a record whose execution was interrupted by the service stopping.
pub const INTERRUPTED: &str = "actiond: the service stopped while this was running; it is recorded as finished, and its output was not kept\n";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Kind {
    Started,
    Finished,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line {
    /// The format's version.
    v: u32,
    kind: Kind,
    id: String,
    binding: String,
    title: String,
    icon: String,
    user: String,
    user_class: String,
    tags: Vec<String>,
    datetime_started: String,
    #[serde(default)]
    datetime_finished: String,
    #[serde(default)]
    stdout: String,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    started: bool,
    #[serde(default)]
    blocked: bool,
    #[serde(default)]
    timed_out: bool,
    #[serde(default)]
    exit_code: i32,
    #[serde(default)]
    evicted: bool,
}

/// A line as it is written: the snapshot's text borrowed, not copied.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LineOut<'a> {
    v: u32,
    kind: Kind,
    id: &'a str,
    binding: &'a str,
    title: &'a str,
    icon: &'a str,
    user: &'a str,
    user_class: &'a str,
    tags: &'a [String],
    datetime_started: &'a str,
    datetime_finished: &'a str,
    stdout: &'a str,
    stderr: &'a str,
    started: bool,
    blocked: bool,
    timed_out: bool,
    exit_code: i32,
    /// Only on the finish line of a run the history had let go: written only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    evicted: bool,
}

fn write(out: &mut Vec<u8>, kind: Kind, s: &Snapshot, binding: &str, evicted: bool) {
    let finished = kind == Kind::Finished;
    fn text(finished: bool, t: &str) -> &str {
        if finished { t } else { "" }
    }
    let l = LineOut {
        v: 1,
        kind,
        id: &s.execution_tracking_id,
        binding,
        title: &s.action_title,
        icon: &s.action_icon,
        user: &s.user,
        user_class: &s.user_class,
        tags: &s.tags,
        datetime_started: &s.datetime_started,
        datetime_finished: text(finished, &s.datetime_finished),
        stdout: text(finished, &s.stdout),
        stderr: text(finished, &s.stderr),
        started: s.flags.execution_started,
        blocked: s.flags.blocked,
        timed_out: s.flags.timed_out,
        exit_code: s.flags.exit_code,
        evicted,
    };
    // Writing plain strings and numbers into a Vec cannot fail; a line that did would be
    // left out rather than written half.
    let before = out.len();
    if serde_json::to_writer(&mut *out, &l).is_ok() {
        out.push(b'\n');
    } else {
        out.truncate(before);
    }
}

/// Appends the line written when an execution starts.
pub fn write_started(out: &mut Vec<u8>, s: &Snapshot, binding: &str) {
    write(out, Kind::Started, s, binding, false);
}

/// Appends the line written when an execution has finished (its snapshot is final).
pub fn write_finished(out: &mut Vec<u8>, s: &Snapshot, binding: &str) {
    write(out, Kind::Finished, s, binding, false);
}

/// Appends the finish line of an execution the history let go while it ran: it completes
/// the execution's start line if the file still has it, and is dropped otherwise.
pub fn write_finished_evicted(out: &mut Vec<u8>, s: &Snapshot, binding: &str) {
    write(out, Kind::Finished, s, binding, true);
}

/// The line written when an execution starts.
#[cfg(test)]
pub fn started_line(s: &Snapshot, binding: &str) -> Vec<u8> {
    let mut out = Vec::new();
    write_started(&mut out, s, binding);
    out
}

/// The line written when an execution has finished (its snapshot is final).
#[cfg(test)]
pub fn finished_line(s: &Snapshot, binding: &str) -> Vec<u8> {
    let mut out = Vec::new();
    write_finished(&mut out, s, binding);
    out
}

/// What compaction reads of a line: whose it is, which kind, and what the history does
/// with it. serde skips the rest (the output) without keeping it.
#[derive(Deserialize)]
struct Key<'a> {
    v: u32,
    kind: Kind,
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    binding: std::borrow::Cow<'a, str>,
    #[serde(default)]
    blocked: bool,
    #[serde(default)]
    evicted: bool,
}

/// One execution as compaction keeps it.
struct Kept<'b> {
    /// Its place in the order of first lines, which is the order the history holds them.
    first: u64,
    line: &'b [u8],
    finished: bool,
    /// As its first line says: a blocked run has one line, a run that ran starts unblocked.
    blocked: bool,
}

/// The journal rewritten with one line per execution, as the history in memory holds them:
/// `limit` that ran, let go as `History::insert` lets them go (`Shares`: the oldest of the
/// action holding the most, in the order of first lines), and the newest [`MAX_BLOCKED`]
/// blocked ones, in order of their first line. Each keeps its finish line if it has one,
/// else its start line (it is still running, or it was when a service died). An `evicted`
/// finish line whose execution has no earlier line is dropped, and so is any later line of
/// an execution let go: a compaction let it go before it finished, as the history did.
/// Unreadable and torn lines are dropped, and so is a second copy of a line (a rewrite
/// after a failed write may hold some twice). Lines are copied as they are, but for that
/// mark.
pub fn compact(bytes: &[u8], limit: usize) -> Vec<u8> {
    use std::borrow::Cow;
    use std::collections::{HashMap, HashSet};
    let mut kept: HashMap<Cow<'_, str>, Kept<'_>> = HashMap::new();
    // Runs that ran, by first line, to let go as the history does; and those let go.
    let mut shares = Shares::default();
    let mut ran: HashMap<u64, Cow<'_, str>> = HashMap::new();
    let mut gone: HashSet<Cow<'_, str>> = HashSet::new();
    let mut count = 0;
    for raw in bytes.split_inclusive(|b| *b == b'\n') {
        let Some(line) = raw.strip_suffix(b"\n") else {
            continue; // a torn last line
        };
        let Ok(key) = serde_json::from_slice::<Key<'_>>(line) else {
            continue;
        };
        if key.v != 1 {
            continue;
        }
        let finished = key.kind == Kind::Finished;
        if let Some(k) = kept.get_mut(&key.id) {
            if finished || !k.finished {
                k.line = raw;
                k.finished |= finished;
            }
            continue;
        }
        if key.evicted || gone.contains(&key.id) {
            continue;
        }
        kept.insert(
            key.id.clone(),
            Kept {
                first: count,
                line: raw,
                finished,
                blocked: key.blocked,
            },
        );
        if !key.blocked {
            shares.add(&key.binding, count);
            ran.insert(count, key.id);
            while shares.len() > limit.max(1) {
                let Some(id) = shares.evict().and_then(|seq| ran.remove(&seq)) else {
                    break;
                };
                kept.remove(&id);
                gone.insert(id);
            }
        }
        count += 1;
    }
    let mut lines: Vec<Kept<'_>> = kept.into_values().collect();
    lines.sort_unstable_by_key(|k| k.first);
    // Blocked runs: the newest, up to their own bound, as `History::insert` evicts them.
    let mut blocked = MAX_BLOCKED;
    let mut keep = vec![true; lines.len()];
    for (i, _) in lines.iter().enumerate().rev().filter(|(_, k)| k.blocked) {
        if blocked > 0 {
            blocked -= 1;
        } else {
            keep[i] = false;
        }
    }
    let mut out = Vec::with_capacity(bytes.len());
    for (k, _) in lines.iter().zip(&keep).filter(|(_, keep)| **keep) {
        // A kept `evicted` finish line is its run's only line from now on: without the
        // mark, or the next compaction would take it for one whose start was dropped.
        match k.line.strip_suffix(EVICTED_TAIL) {
            Some(head) => {
                out.extend_from_slice(head);
                out.extend_from_slice(b"}\n");
            }
            None => out.extend_from_slice(k.line),
        }
    }
    out
}

/// How an `evicted` finish line ends: the mark is the last field `LineOut` writes.
const EVICTED_TAIL: &[u8] = b",\"evicted\":true}\n";

/// What a journal holds: records oldest first, and what could not be read.
#[derive(Debug, Default)]
pub struct Restore {
    pub records: Vec<Restored>,
    pub problems: Vec<String>,
}

/// How every line actiond writes opens (`LineOut`'s first two fields, as serde writes
/// them): a line that opens otherwise cannot be a record, and is skipped on its first bytes,
/// never parsed.
const OPENING: &[u8] = br#"{"v":1,"kind":""#;

/// Reads a journal held whole in memory. `now` is the local time written as the finish of
/// interrupted records. Keeps every record; [`Restorer`] is the same reading, in pieces and
/// keeping only what the history will hold.
#[cfg(test)]
pub fn restore(bytes: &[u8], now: &str) -> Restore {
    let mut r = Restorer::new(Keep::all(), usize::MAX);
    r.feed(bytes);
    r.finish(now)
}

/// How many records a restore keeps: runs that ran, let go by `Shares` as `History::insert`
/// lets them go, and the newest blocked ones, each kind up to its bound.
#[derive(Debug, Clone, Copy)]
pub struct Keep {
    pub ran: usize,
    pub blocked: usize,
}

impl Keep {
    /// What a history of `limit` holds.
    pub fn history(limit: usize) -> Keep {
        Keep {
            ran: limit.clamp(1, MAX_HISTORY),
            blocked: MAX_BLOCKED,
        }
    }

    #[cfg(test)]
    fn all() -> Keep {
        Keep {
            ran: usize::MAX,
            blocked: usize::MAX,
        }
    }
}

/// One execution being restored: its place in the order of first lines, its newest line
/// (the finish once there is one) and whether that is its finish.
struct Entry {
    seq: u64,
    line: Line,
    finished: bool,
}

impl Entry {
    fn blocked(&self) -> bool {
        self.finished && self.line.blocked
    }
}

/// Reads a journal piece by piece (`feed` any split of its bytes, then `finish`), holding
/// at most the records [`Keep`] allows, one line and the ids of the executions it let go:
/// memory is bounded by the history, not the file. An execution let go stays gone: a later
/// line of it (its finish) neither brings it back nor places it among the newest, as the
/// whole file read at once and handed to the history would not. Lines longer than
/// `max_line` bytes, or that do not open as every line actiond writes ([`OPENING`]), cannot
/// be records: they are skipped as their bytes come, never parsed or held.
pub struct Restorer {
    keep: Keep,
    max_line: usize,
    /// The line being read, without its newline: one buffer for every line, so that a
    /// file of short lines costs no allocation per line.
    partial: Vec<u8>,
    /// The line being read cannot be a record (it does not open as one, or it is longer
    /// than `max_line`): its bytes are dropped as they come, unparsed.
    junk: bool,
    /// The bytes of the line being read.
    line_bytes: usize,
    /// The line being read holds a byte that is not white space.
    inked: bool,
    /// The first line is the end of one cut by where the reading began: it is dropped.
    cut_first: bool,
    /// Lines seen, the one being read excluded.
    line_no: usize,
    entries: std::collections::HashMap<String, Entry>,
    /// Tracking ids by first line, oldest first, of the executions that ran and of blocked ones.
    ran: std::collections::BTreeMap<u64, String>,
    blocked: std::collections::BTreeMap<u64, String>,
    /// The executions that ran, by action, to let go as the history does.
    shares: Shares,
    next_seq: u64,
    /// The ids of executions let go, hashed (8 bytes each, whatever the id's length): a
    /// collision would at worst leave out one record, and the hasher's key is random, so a
    /// file cannot be made to collide.
    gone: std::collections::HashSet<u64>,
    hasher: std::collections::hash_map::RandomState,
    skipped: Skipped,
    impossible_ids: usize,
    problems: Vec<String>,
}

/// The lines a reading skipped as unreadable, said in one line of the log.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Skipped {
    lines: usize,
    bytes: usize,
    /// Of them, empty (or blank) lines.
    empty: usize,
    /// The first one's line number.
    first: usize,
}

impl Restorer {
    pub fn new(keep: Keep, max_line: usize) -> Restorer {
        Restorer {
            keep,
            max_line,
            partial: Vec::new(),
            junk: false,
            line_bytes: 0,
            inked: false,
            cut_first: false,
            line_no: 0,
            entries: std::collections::HashMap::new(),
            ran: std::collections::BTreeMap::new(),
            blocked: std::collections::BTreeMap::new(),
            shares: Shares::default(),
            next_seq: 0,
            gone: std::collections::HashSet::new(),
            hasher: std::collections::hash_map::RandomState::new(),
            skipped: Skipped::default(),
            impossible_ids: 0,
            problems: Vec::new(),
        }
    }

    /// Tells the reading that it starts inside the journal: its first line is a cut one.
    pub fn after_cut(mut self) -> Restorer {
        self.cut_first = true;
        self
    }

    /// Reads the next bytes of the journal.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.line_bytes == 0 && !self.cut_first {
                // A run of empty lines, counted at once rather than line by line.
                let empty = bytes.iter().take_while(|b| **b == b'\n').count();
                if empty > 0 {
                    self.skip_empty(empty);
                    bytes = &bytes[empty..];
                    continue;
                }
            }
            let (piece, ended) = match bytes.iter().position(|b| *b == b'\n') {
                Some(i) => (&bytes[..i], Some(i + 1)),
                None => (bytes, None),
            };
            self.line_bytes += piece.len();
            self.inked = self.inked || !piece.iter().all(u8::is_ascii_whitespace);
            if !self.junk {
                if self.partial.len() + piece.len() > self.max_line {
                    self.junk = true;
                } else {
                    self.partial.extend_from_slice(piece);
                    let n = self.partial.len().min(OPENING.len());
                    self.junk = self.partial[..n] != OPENING[..n];
                }
                if self.junk {
                    self.partial.clear();
                }
            }
            let Some(next) = ended else { return };
            self.line_bytes += 1;
            bytes = &bytes[next..];
            self.end_line(false);
        }
    }

    /// The records, oldest first, and what could not be read. `now` is the local time
    /// written as the finish of interrupted records.
    pub fn finish(mut self, now: &str) -> Restore {
        if self.line_bytes > 0 {
            self.end_line(true);
        }
        let s = self.skipped;
        if s.lines > 0 {
            // One line for them all: a file of garbage must not flood the log at start.
            let first = if s.lines == 1 {
                format!("line {} of {FILE}", s.first)
            } else {
                format!("{} lines of {FILE}, the first line {},", s.lines, s.first)
            };
            self.problems.push(format!(
                "{first} could not be read and skipped ({} bytes, {} empty)",
                s.bytes, s.empty
            ));
        }
        if self.impossible_ids > 0 {
            self.problems.push(format!(
                "{} lines of {FILE} have an impossible tracking id and were skipped",
                self.impossible_ids
            ));
        }
        let mut entries: Vec<(String, Entry)> = self.entries.into_iter().collect();
        entries.sort_unstable_by_key(|(_, e)| e.seq);
        let records = entries
            .into_iter()
            .map(|(id, e)| restored(&id, e, now))
            .collect();
        Restore {
            records,
            problems: self.problems,
        }
    }

    /// Skips `n` empty lines.
    fn skip_empty(&mut self, n: usize) {
        let s = &mut self.skipped;
        if s.lines == 0 {
            s.first = self.line_no + 1;
        }
        s.lines += n;
        s.bytes += n;
        s.empty += n;
        self.line_no += n;
    }

    /// Reads the line in `partial`; `last`: it is the journal's end, with no newline.
    fn end_line(&mut self, last: bool) {
        let junk = std::mem::replace(&mut self.junk, false);
        let bytes = std::mem::replace(&mut self.line_bytes, 0);
        if std::mem::take(&mut self.cut_first) {
            self.partial.clear();
            self.inked = false;
            return;
        }
        // Only the opening of a record was checked: the rest is for the parser. The buffer
        // is kept for the next line.
        let parsed = if junk || self.partial.len() < OPENING.len() {
            None
        } else {
            serde_json::from_slice::<Line>(&self.partial)
                .ok()
                .filter(|l| l.v == 1)
        };
        let blank = !std::mem::replace(&mut self.inked, false);
        self.partial.clear();
        self.line_no += 1;
        if let Some(l) = parsed {
            self.take(l);
        } else if last && !blank {
            self.problems.push(format!(
                "the last line of {FILE} was cut off (power lost while writing?) and was skipped"
            ));
        } else {
            let s = &mut self.skipped;
            if s.lines == 0 {
                s.first = self.line_no;
            }
            s.lines += 1;
            s.bytes += bytes;
            s.empty += usize::from(blank);
        }
    }

    fn take(&mut self, l: Line) {
        let finished = l.kind == Kind::Finished;
        if let Some(entry) = self.entries.get_mut(&l.id) {
            if finished {
                let was = entry.blocked();
                entry.line = l;
                entry.finished = true;
                if entry.blocked() != was {
                    // Its kind changed: it moves to the other kind's order, at its place.
                    let (seq, id) = (entry.seq, entry.line.id.clone());
                    let binding = entry.line.binding.clone();
                    self.order(was).remove(&seq);
                    self.order(!was).insert(seq, id);
                    self.share(&binding, seq, !was);
                    self.trim(!was);
                }
            }
            return;
        }
        // A run the history let go while it ran, whose start line a compaction dropped; or
        // one this reading let go.
        if l.evicted || self.gone.contains(&self.hasher.hash_one(&l.id)) {
            return;
        }
        if TrackingId::parse(&l.id).is_none() {
            self.impossible_ids += 1;
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry {
            seq,
            line: l,
            finished,
        };
        let blocked = entry.blocked();
        self.order(blocked).insert(seq, entry.line.id.clone());
        self.share(&entry.line.binding, seq, blocked);
        self.entries.insert(entry.line.id.clone(), entry);
        self.trim(blocked);
    }

    fn order(&mut self, blocked: bool) -> &mut std::collections::BTreeMap<u64, String> {
        if blocked {
            &mut self.blocked
        } else {
            &mut self.ran
        }
    }

    /// Lets the oldest of a kind go beyond its bound.
    fn trim(&mut self, blocked: bool) {
        let most = if blocked {
            self.keep.blocked
        } else {
            self.keep.ran
        };
        while self.order(blocked).len() > most {
            let Some(id) = self.victim(blocked) else {
                break;
            };
            self.entries.remove(&id);
            let hash = self.hasher.hash_one(&id);
            self.gone.insert(hash);
        }
    }
}

impl Restorer {
    /// Follows execution `seq` of `binding` into its kind's order: the runs that ran are
    /// let go by `Shares`, as the history lets them go.
    fn share(&mut self, binding: &str, seq: u64, blocked: bool) {
        if blocked {
            self.shares.remove(binding, seq);
        } else {
            self.shares.add(binding, seq);
        }
    }

    /// Takes the execution of a kind to let go out of its order: the oldest blocked one,
    /// or the run `Shares` chooses (the oldest of the action holding the most).
    fn victim(&mut self, blocked: bool) -> Option<String> {
        if blocked {
            return self.blocked.pop_first().map(|(_, id)| id);
        }
        let seq = self.shares.evict()?;
        self.ran.remove(&seq)
    }
}

/// The record of a restored execution: as its finish line says, or interrupted.
fn restored(id: &str, e: Entry, now: &str) -> Restored {
    let Entry {
        line: l, finished, ..
    } = e;
    // Checked when the execution was first seen.
    let Some(tracking_id) = TrackingId::parse(id) else {
        unreachable!("tracking ids are checked when first read")
    };
    let (flags, stderr, datetime_finished) = if finished {
        let flags = Flags {
            execution_started: l.started,
            execution_finished: true,
            blocked: l.blocked,
            timed_out: l.timed_out,
            exit_code: l.exit_code,
        };
        (flags, l.stderr, l.datetime_finished)
    } else {
        let flags = Flags {
            execution_started: true,
            execution_finished: true,
            blocked: false,
            timed_out: false,
            exit_code: -1,
        };
        (flags, INTERRUPTED.to_string(), now.to_string())
    };
    Restored {
        tracking_id,
        binding_id: l.binding,
        title: l.title,
        icon: l.icon,
        user: l.user,
        user_class: l.user_class,
        tags: l.tags,
        datetime_started: l.datetime_started,
        datetime_finished,
        stdout: if finished { l.stdout } else { String::new() },
        stderr,
        flags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::Outcome;
    use crate::execution::tests::execution;

    fn finished(id: &str, out: &[u8], outcome: Outcome) -> Vec<u8> {
        let e = execution(id, "act");
        e.set_running();
        e.push_stdout(out);
        e.finish(outcome, 3);
        finished_line(&e.snapshot(), "act")
    }

    fn started(id: &str) -> Vec<u8> {
        let e = execution(id, "act");
        e.set_running();
        started_line(&e.snapshot(), "act")
    }

    /// The finish line of a run the history let go while it ran.
    fn evicted(id: &str) -> Vec<u8> {
        let e = execution(id, "act");
        e.set_running();
        e.finish(Outcome::Exited(0), 3);
        let mut out = Vec::new();
        write_finished_evicted(&mut out, &e.snapshot(), "act");
        out
    }

    fn busy() -> crate::execution::Blocked {
        crate::execution::Blocked::Concurrent {
            binding_id: "act".into(),
            running: 1,
            max: 1,
        }
    }

    fn blocked(id: &str) -> Vec<u8> {
        finished(id, b"", Outcome::Blocked(busy()))
    }

    #[test]
    fn finished_records_come_back_as_they_were() {
        let mut file = started("a");
        file.extend(finished("a", b"out \xff", Outcome::Exited(3)));
        file.extend(finished("b", b"", Outcome::Blocked(busy())));
        let r = restore(&file, "now");
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(r.records.len(), 2);
        let a = &r.records[0];
        assert_eq!(
            (a.tracking_id.as_str(), a.stdout.as_str(), a.flags.exit_code),
            ("a", "out \u{FFFD}", 3)
        );
        assert!(a.flags.execution_finished && a.flags.execution_started);
        let b = &r.records[1];
        assert!(b.flags.blocked && !b.flags.execution_started);
        // The reason's words are in the file as earlier versions wrote them.
        assert!(
            b.stderr.contains(
                "actiond: blocked: act is already running 1 time(s) and maxConcurrent is 1"
            ),
            "{}",
            b.stderr
        );
    }

    #[test]
    fn a_start_without_a_finish_is_an_interrupted_run() {
        let mut file = finished("old", b"x", Outcome::Exited(0));
        file.extend(started("cut"));
        let r = restore(&file, "2026-01-01 00:00:00");
        let cut = &r.records[1];
        assert_eq!(cut.flags.exit_code, -1);
        assert!(cut.flags.execution_finished && cut.flags.execution_started);
        assert!(cut.stderr.starts_with("actiond:"));
        assert_eq!(cut.datetime_finished, "2026-01-01 00:00:00");
    }

    #[test]
    fn a_file_cut_at_any_byte_keeps_every_complete_record() {
        let mut file = Vec::new();
        for i in 0..5 {
            file.extend(started(&format!("r{i}")));
            file.extend(finished(
                &format!("r{i}"),
                format!("output {i}\n").as_bytes(),
                Outcome::Exited(0),
            ));
        }
        let whole = restore(&file, "now").records.len();
        assert_eq!(whole, 5);
        for cut in 0..file.len() {
            let r = restore(&file[..cut], "now");
            let complete_lines = file[..cut].iter().filter(|b| **b == b'\n').count();
            // Every complete line's execution is there; at most one torn line is reported.
            let ids_in_complete_lines = complete_lines.div_ceil(2);
            assert!(r.records.len() >= ids_in_complete_lines, "cut at {cut}");
            assert!(r.problems.len() <= 1, "cut at {cut}: {:?}", r.problems);
            // A cut just before a newline leaves a whole record; any other cut inside a line
            // is reported as such.
            if let Some(p) = r.problems.first() {
                assert!(p.contains("cut off"), "cut at {cut}: {p}");
            }
        }
    }

    fn ids_and_kinds(bytes: &[u8]) -> Vec<(String, bool)> {
        bytes
            .split_inclusive(|b| *b == b'\n')
            .map(|l| {
                let k: Key<'_> = serde_json::from_slice(l).unwrap();
                (k.id.to_string(), k.kind == Kind::Finished)
            })
            .collect()
    }

    #[test]
    fn compaction_keeps_one_line_per_execution_the_newest_ones() {
        // (file as lines, limit) -> (id, finished) per line of the result
        type Case = (Vec<Vec<u8>>, usize, Vec<(&'static str, bool)>);
        let cases: Vec<Case> = vec![
            (vec![], 10, vec![]),
            (
                vec![
                    started("a"),
                    finished("a", b"x", Outcome::Exited(0)),
                    started("b"),
                ],
                10,
                vec![("a", true), ("b", false)],
            ),
            // The order is that of each execution's first line, as the history's.
            (
                vec![
                    started("a"),
                    started("b"),
                    finished("a", b"", Outcome::Exited(1)),
                ],
                10,
                vec![("a", true), ("b", false)],
            ),
            // The limit keeps the newest.
            (
                vec![
                    started("a"),
                    started("b"),
                    started("c"),
                    finished("b", b"", Outcome::Exited(0)),
                ],
                2,
                vec![("b", true), ("c", false)],
            ),
            // A rewrite after a failure may hold lines twice; a finish never loses to a start.
            (
                vec![
                    started("a"),
                    finished("a", b"x", Outcome::Exited(0)),
                    started("a"),
                    finished("a", b"x", Outcome::Exited(0)),
                    started("b"),
                    started("b"),
                ],
                10,
                vec![("a", true), ("b", false)],
            ),
            // A run the history let go while it ran: its finish completes its start line...
            (
                vec![started("a"), started("b"), evicted("a")],
                10,
                vec![("a", true), ("b", false)],
            ),
            // ...and never brings it back once a compaction has dropped that line, where it
            // would push out a run the history still holds.
            (
                vec![started("b"), started("c"), evicted("a")],
                2,
                vec![("b", false), ("c", false)],
            ),
            // Blocked runs are kept beside the limit, as the history keeps them in a ring
            // of their own: they never push out a run that ran.
            (
                vec![
                    started("a"),
                    blocked("x"),
                    started("b"),
                    blocked("y"),
                    started("c"),
                ],
                2,
                vec![("x", true), ("b", false), ("y", true), ("c", false)],
            ),
            // Garbage, other versions and a torn last line are dropped.
            (
                vec![
                    b"not json\n".to_vec(),
                    b"{\"v\":9,\"kind\":\"started\",\"id\":\"z\"}\n".to_vec(),
                    started("a"),
                    b"{\"v\":1,\"kind\":\"fini".to_vec(),
                ],
                10,
                vec![("a", false)],
            ),
        ];
        for (i, (lines, limit, want)) in cases.into_iter().enumerate() {
            let file = lines.concat();
            let out = compact(&file, limit);
            let want: Vec<(String, bool)> = want
                .into_iter()
                .map(|(id, f)| (id.to_string(), f))
                .collect();
            assert_eq!(ids_and_kinds(&out), want, "case {i}");
            // Lines are copied whole, and what was kept restores as before.
            let again = restore(&out, "now");
            assert!(again.problems.is_empty(), "case {i}: {:?}", again.problems);
            assert_eq!(
                compact(&out, limit),
                out,
                "case {i}: compaction is idempotent"
            );
        }
        let a = finished("a", b"out\n", Outcome::Exited(3));
        assert_eq!(compact(&[started("a"), a.clone()].concat(), 1), a);
    }

    #[test]
    fn blocked_runs_are_kept_up_to_their_own_bound() {
        let mut lines = vec![started("ran")];
        lines.extend((0..MAX_BLOCKED + 5).map(|i| blocked(&format!("b{i}"))));
        let out = compact(&lines.concat(), 1);
        let ids: Vec<String> = ids_and_kinds(&out).into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids.len(), MAX_BLOCKED + 1);
        assert_eq!(ids[0], "ran");
        assert_eq!(ids[1], "b5", "the oldest blocked ones go");
    }

    #[test]
    fn an_evicted_finish_restores_only_a_run_whose_start_is_there() {
        let file = [started("a"), evicted("a"), evicted("gone")].concat();
        let r = restore(&file, "now");
        let ids: Vec<&str> = r.records.iter().map(|r| r.tracking_id.as_str()).collect();
        assert_eq!(ids, ["a"]);
        assert!(r.records[0].flags.execution_finished && r.records[0].flags.exit_code == 0);
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }

    #[test]
    fn unreadable_lines_are_skipped_and_counted_in_one_problem() {
        let ok = |id: &str| finished(id, b"", Outcome::Exited(0));
        // (lines before the record `ok` and after it) -> the one problem, if any
        let cases: Vec<(Vec<u8>, Option<String>)> = vec![
            (
                b"x\n".repeat(100_000),
                Some(format!(
                    "100000 lines of {FILE}, the first line 1, could not be read and skipped \
                 (200000 bytes, 0 empty)"
                )),
            ),
            (
                b"{}\n\n  \n".to_vec(),
                Some(format!(
                    "3 lines of {FILE}, the first line 1, could not be read and skipped \
                 (7 bytes, 2 empty)"
                )),
            ),
            // Binary, another version, a record's opening with nothing after it.
            (
                [
                    &b"\x00\xff\xfe{\n"[..],
                    b"{\"v\":2,\"kind\":\"started\"}\n",
                    OPENING,
                    b"\n",
                ]
                .concat(),
                Some(format!(
                    "3 lines of {FILE}, the first line 1, could not be read and skipped \
                     (46 bytes, 0 empty)"
                )),
            ),
            (
                b"not json\n".to_vec(),
                Some(format!(
                    "line 1 of {FILE} could not be read and skipped (9 bytes, 0 empty)"
                )),
            ),
            (Vec::new(), None),
        ];
        for (i, (junk, want)) in cases.into_iter().enumerate() {
            let file = [junk, ok("ok"), ok("ok2")].concat();
            for piece in [1, 3, 4096] {
                let r = in_pieces(&file, piece, Keep::all(), usize::MAX);
                assert_eq!(ids(&r), ["ok", "ok2"], "case {i}, pieces of {piece}");
                assert_eq!(
                    r.problems.first(),
                    want.as_ref(),
                    "case {i}, pieces of {piece}"
                );
                assert!(r.problems.len() <= 1, "case {i}: {:?}", r.problems);
            }
        }
    }

    #[test]
    fn garbage_lines_are_reported_and_skipped() {
        let mut file = b"not json\n{\"v\":9}\n".to_vec();
        file.extend(finished("ok", b"", Outcome::Exited(0)));
        let r = restore(&file, "now");
        assert_eq!(r.records.len(), 1);
        assert_eq!(
            r.problems,
            [format!(
                "2 lines of {FILE}, the first line 1, could not be read and skipped (17 bytes, 0 empty)"
            )]
        );
    }

    fn ids(r: &Restore) -> Vec<&str> {
        r.records.iter().map(|r| r.tracking_id.as_str()).collect()
    }

    /// Restores `file` fed in pieces of `piece` bytes.
    fn in_pieces(file: &[u8], piece: usize, keep: Keep, max_line: usize) -> Restore {
        let mut r = Restorer::new(keep, max_line);
        for chunk in file.chunks(piece) {
            r.feed(chunk);
        }
        r.finish("now")
    }

    #[test]
    fn any_split_of_the_file_restores_the_same() {
        let mut file = started("a");
        file.extend(b"garbage\n\n");
        file.extend(started("b"));
        file.extend(finished("a", b"out", Outcome::Exited(2)));
        file.extend(blocked("x"));
        file.extend(&started("c")[..20]);
        let whole = restore(&file, "now");
        assert_eq!(ids(&whole), ["a", "b", "x"]);
        assert_eq!(whole.problems.len(), 2, "{:?}", whole.problems);
        for piece in 1..file.len() {
            let r = in_pieces(&file, piece, Keep::all(), usize::MAX);
            assert_eq!(ids(&r), ids(&whole), "pieces of {piece}");
            assert_eq!(r.problems, whole.problems, "pieces of {piece}");
            assert_eq!(r.records[0].stdout, "out");
        }
    }

    #[test]
    fn only_the_newest_of_each_kind_are_kept_and_one_let_go_stays_gone() {
        // (lines, kept that ran, kept blocked) -> ids restored, oldest first
        type Case = (Vec<Vec<u8>>, usize, usize, Vec<&'static str>);
        let cases: Vec<Case> = vec![
            (
                vec![started("a"), started("b"), started("c")],
                2,
                32,
                vec!["b", "c"],
            ),
            // `a` was let go when `c` came: its finish does not bring it back as the newest.
            (
                vec![
                    started("a"),
                    started("b"),
                    started("c"),
                    finished("a", b"", Outcome::Exited(0)),
                ],
                2,
                32,
                vec!["b", "c"],
            ),
            // Blocked runs never push out one that ran.
            (
                vec![
                    started("a"),
                    blocked("x"),
                    blocked("y"),
                    started("b"),
                    blocked("z"),
                ],
                2,
                2,
                vec!["a", "y", "b", "z"],
            ),
            // A finish completes a kept start at its place.
            (
                vec![
                    started("a"),
                    started("b"),
                    finished("a", b"", Outcome::Exited(0)),
                    started("c"),
                ],
                3,
                32,
                vec!["a", "b", "c"],
            ),
        ];
        for (i, (lines, ran, blocked, want)) in cases.into_iter().enumerate() {
            let r = in_pieces(&lines.concat(), 7, Keep { ran, blocked }, usize::MAX);
            assert_eq!(ids(&r), want, "case {i}");
            assert!(r.problems.is_empty(), "case {i}: {:?}", r.problems);
        }
    }

    #[test]
    fn a_line_over_the_bound_is_skipped_unread_and_a_cut_first_line_dropped() {
        let long = finished("long", &[b'x'; 4000], Outcome::Exited(0));
        let bound = started("b").len() + 10;
        assert!(long.len() > bound, "{}", long.len());
        let long_len = long.len();
        let file = [b"ut\":1}\n".to_vec(), started("a"), long, started("b")].concat();
        let mut r = Restorer::new(Keep::all(), bound).after_cut();
        for chunk in file.chunks(100) {
            r.feed(chunk);
        }
        let r = r.finish("now");
        assert_eq!(ids(&r), ["a", "b"]);
        assert_eq!(
            r.problems,
            [format!(
                "line 2 of {FILE} could not be read and skipped ({long_len} bytes, 0 empty)"
            )]
        );
    }

    #[test]
    fn impossible_tracking_ids_are_counted_in_one_problem() {
        let line = String::from_utf8(started("zz")).unwrap();
        let bad = line.replace("\"zz\"", &format!("\"{}\"", "i".repeat(65)));
        let file = [bad.as_bytes(), bad.as_bytes(), &started("ok")].concat();
        let r = restore(&file, "now");
        assert_eq!(ids(&r), ["ok"]);
        assert_eq!(
            r.problems,
            [format!(
                "2 lines of {FILE} have an impossible tracking id and were skipped"
            )]
        );
    }

    /// A run of `binding` that started and finished, as two lines.
    fn run_of(id: &str, binding: &str) -> Vec<u8> {
        let e = execution(id, binding);
        e.set_running();
        let mut out = started_line(&e.snapshot(), binding);
        e.finish(Outcome::Exited(0), 3);
        out.extend(finished_line(&e.snapshot(), binding));
        out
    }

    #[test]
    fn memory_compaction_and_restore_let_the_same_runs_go() {
        // (one letter per press: its action; `B` a blocked press of `a`, limit)
        let cases = [
            ("gaffffffffffffff", 4),
            ("aaaaaaffffffffBffBf", 6),
            ("abcffffffffffBBBcf", 5),
            ("abababab", 3),
            ("f", 1),
            ("aaaffff", 1),
        ];
        for (presses, limit) in cases {
            let mut file = Vec::new();
            let mut history = crate::history::History::new(limit);
            for (i, b) in presses.chars().enumerate() {
                let id = format!("r{i}");
                let blocked = b == 'B';
                let binding = if blocked {
                    "a".to_string()
                } else {
                    b.to_string()
                };
                let e = execution(&id, &binding);
                if blocked {
                    file.extend(finished(&id, b"", Outcome::Blocked(busy())));
                } else {
                    file.extend(run_of(&id, &binding));
                }
                history.insert(std::sync::Arc::new(e), blocked);
            }
            let mut memory: Vec<String> = history
                .newest_first()
                .map(|e| e.tracking_id.to_string())
                .collect();
            memory.reverse();
            let compacted: Vec<String> = ids_and_kinds(&compact(&file, limit))
                .into_iter()
                .map(|(id, _)| id)
                .collect();
            assert_eq!(compacted, memory, "{presses} in {limit}: compaction");
            let restored = in_pieces(&file, 11, Keep::history(limit), usize::MAX);
            assert_eq!(ids(&restored), memory, "{presses} in {limit}: restore");
        }
    }

    #[test]
    fn a_flood_of_one_action_keeps_another_actions_last_run_on_disk() {
        let mut file = run_of("alice", "guarded");
        for i in 0..300 {
            file.extend(run_of(&format!("g{i}"), "status"));
        }
        let out = compact(&file, 50);
        let kept: Vec<String> = ids_and_kinds(&out).into_iter().map(|(id, _)| id).collect();
        assert_eq!(kept.len(), 50);
        assert_eq!((kept[0].as_str(), kept[1].as_str()), ("alice", "g251"));
        let r = restore_kept(&file, 50);
        assert_eq!(r[0], "alice");
        assert_eq!(r.len(), 50);
    }

    fn restore_kept(file: &[u8], limit: usize) -> Vec<String> {
        let r = in_pieces(file, 4096, Keep::history(limit), usize::MAX);
        ids(&r).into_iter().map(str::to_string).collect()
    }
}
