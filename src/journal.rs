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

use crate::execution::{Flags, Holder, Restored, Snapshot, TrackingId};
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
    /// Whose run it is (`Holder`'s text); absent from lines written before it was kept.
    #[serde(default)]
    holder: String,
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
    holder: &'a Holder,
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

/// Whose a line is: its binding and its holder.
#[derive(Debug, Clone, Copy)]
pub struct Whose<'a> {
    pub binding: &'a str,
    pub holder: &'a Holder,
}

fn write(out: &mut Vec<u8>, kind: Kind, s: &Snapshot, whose: Whose<'_>, evicted: bool) {
    let finished = kind == Kind::Finished;
    fn text(finished: bool, t: &str) -> &str {
        if finished { t } else { "" }
    }
    let l = LineOut {
        v: 1,
        kind,
        id: &s.execution_tracking_id,
        binding: whose.binding,
        title: &s.action_title,
        icon: &s.action_icon,
        user: &s.user,
        user_class: &s.user_class,
        holder: whose.holder,
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
pub fn write_started(out: &mut Vec<u8>, s: &Snapshot, whose: Whose<'_>) {
    write(out, Kind::Started, s, whose, false);
}

/// Appends the line written when an execution has finished (its snapshot is final).
pub fn write_finished(out: &mut Vec<u8>, s: &Snapshot, whose: Whose<'_>) {
    write(out, Kind::Finished, s, whose, false);
}

/// Appends the finish line of an execution the history let go while it ran: it completes
/// the execution's start line if the file still has it, and is dropped otherwise.
pub fn write_finished_evicted(out: &mut Vec<u8>, s: &Snapshot, whose: Whose<'_>) {
    write(out, Kind::Finished, s, whose, true);
}

/// The line written when an execution starts.
#[cfg(test)]
pub fn started_line(s: &Snapshot, whose: Whose<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    write_started(&mut out, s, whose);
    out
}

/// The line written when an execution has finished (its snapshot is final).
#[cfg(test)]
pub fn finished_line(s: &Snapshot, whose: Whose<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    write_finished(&mut out, s, whose);
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
    #[serde(borrow, default)]
    user: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    user_class: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    holder: std::borrow::Cow<'a, str>,
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
            let holder = Holder::of_line(&key.holder, &key.user, &key.user_class);
            shares.add(&holder, &key.binding, count);
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
                    let holder = holder_of(&entry.line);
                    self.order(was).remove(&seq);
                    self.order(!was).insert(seq, id);
                    self.share(&holder, &binding, seq, !was);
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
        self.share(&holder_of(&entry.line), &entry.line.binding, seq, blocked);
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
    /// Follows execution `seq` of `holder` and `binding` into its kind's order: the runs
    /// that ran are let go by `Shares`, as the history lets them go.
    fn share(&mut self, holder: &Holder, binding: &str, seq: u64, blocked: bool) {
        if blocked {
            self.shares.remove(holder, binding, seq);
        } else {
            self.shares.add(holder, binding, seq);
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

/// Whose run a line is: as it says, or (a line written before that was kept) its user's.
fn holder_of(l: &Line) -> Holder {
    Holder::of_line(&l.holder, &l.user, &l.user_class)
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
    let holder = holder_of(&l);
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
        holder,
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
mod tests;
