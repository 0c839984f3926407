//! The history journal's format: one JSON line when an execution starts, one when
//! it finishes (with its capped output), in the state directory's `history.jsonl`. Reading
//! it back after a restart turns every finished line into a record, and every start without
//! a finish (the service died while it ran) into a record marked as interrupted. A torn last
//! line (power lost mid-write) is skipped and reported; so is any other unreadable line.
//! Arguments are never written, so no password reaches the disk. Compaction keeps one line
//! per execution: the newest `logHistoryLimit` that ran and the newest blocked ones, as the
//! history in memory does. A run the history had already let go when it finished (more than
//! `logHistoryLimit` runs started after it) is written with `evicted`: its finish completes
//! its start line where that is still in the file, and never brings it back where a
//! compaction has dropped it, so the file never holds a run the history did not. This
//! module is pure: the store writes the bytes (and runs the compaction on its thread), the
//! engine decides when.

use serde::{Deserialize, Serialize};

use crate::execution::{Flags, Restored, Snapshot, TrackingId};
use crate::history::MAX_BLOCKED;

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
pub fn started_line(s: &Snapshot, binding: &str) -> Vec<u8> {
    let mut out = Vec::new();
    write_started(&mut out, s, binding);
    out
}

/// The line written when an execution has finished (its snapshot is final).
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
    #[serde(default)]
    blocked: bool,
    #[serde(default)]
    evicted: bool,
}

/// One execution as compaction keeps it.
struct Kept<'b> {
    /// Its place in the order of first lines, which is the order the history holds them.
    first: usize,
    line: &'b [u8],
    finished: bool,
    blocked: bool,
}

/// The journal rewritten with one line per execution, as the history in memory holds them:
/// the newest `limit` that ran and the newest [`MAX_BLOCKED`] blocked ones, in order of
/// their first line. Each keeps its finish line if it has one, else its start line (it is
/// still running, or it was when a service died). An `evicted` finish line whose execution
/// has no earlier line is dropped: a compaction let it go before it finished, as the
/// history did. Unreadable and torn lines are dropped, and so is a second copy of a line (a
/// rewrite after a failed write may hold some twice). Lines are copied as they are, but
/// for that mark.
pub fn compact(bytes: &[u8], limit: usize) -> Vec<u8> {
    let mut kept: std::collections::HashMap<std::borrow::Cow<'_, str>, Kept<'_>> =
        std::collections::HashMap::new();
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
        match kept.get_mut(&key.id) {
            Some(k) => {
                if finished || !k.finished {
                    k.line = raw;
                    k.finished |= finished;
                    k.blocked = key.blocked;
                }
            }
            None if key.evicted => {}
            None => {
                let blocked = key.blocked;
                kept.insert(
                    key.id,
                    Kept {
                        first: count,
                        line: raw,
                        finished,
                        blocked,
                    },
                );
                count += 1;
            }
        }
    }
    let mut lines: Vec<Kept<'_>> = kept.into_values().collect();
    lines.sort_unstable_by_key(|k| k.first);
    // Newest first, each kind up to its own bound, as `History::insert` evicts.
    let (mut ran, mut blocked) = (limit, MAX_BLOCKED);
    let mut keep = vec![false; lines.len()];
    for (i, k) in lines.iter().enumerate().rev() {
        let left = if k.blocked { &mut blocked } else { &mut ran };
        if *left > 0 {
            *left -= 1;
            keep[i] = true;
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

/// Bad lines of the history file named one by one at start; the rest are counted.
const NAMED_BAD_LINES: usize = 3;

/// Reads a journal. `now` is the local time written as the finish of interrupted records.
pub fn restore(bytes: &[u8], now: &str) -> Restore {
    let mut out = Restore::default();
    // Tracking id → (its line in order of first appearance, its finish if any).
    let mut order: Vec<String> = Vec::new();
    let mut seen: std::collections::HashMap<String, (Line, bool)> =
        std::collections::HashMap::new();
    let ends_cleanly = bytes.is_empty() || bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let last = lines.len().saturating_sub(1);
    let mut unreadable = 0usize;
    for (i, raw) in lines.iter().enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed: Option<Line> = serde_json::from_slice(raw).ok().filter(|l: &Line| l.v == 1);
        let Some(l) = parsed else {
            if i == last && !ends_cleanly {
                out.problems.push(format!(
                    "the last line of {FILE} was cut off (power lost while writing?) and was skipped"
                ));
            } else if unreadable < NAMED_BAD_LINES {
                out.problems.push(format!(
                    "line {} of {FILE} could not be read and was skipped",
                    i + 1
                ));
                unreadable += 1;
            } else {
                unreadable += 1;
            }
            continue;
        };
        let finished = l.kind == Kind::Finished;
        match seen.get_mut(&l.id) {
            Some(entry) if finished => *entry = (l, true),
            Some(_) => {}
            // A run the history let go while it ran, whose start line a compaction dropped.
            None if l.evicted => {}
            None => {
                order.push(l.id.clone());
                seen.insert(l.id.clone(), (l, finished));
            }
        }
    }
    if unreadable > NAMED_BAD_LINES {
        // One line per bad line would let a file of garbage flood the journal at start.
        out.problems.push(format!(
            "{} more lines of {FILE} could not be read and were skipped",
            unreadable - NAMED_BAD_LINES
        ));
    }
    for id in order {
        let Some((l, finished)) = seen.remove(&id) else {
            continue;
        };
        let mut tracking_id = TrackingId::new();
        if tracking_id.push_str(&l.id).is_err() {
            out.problems.push(format!(
                "a record of {FILE} has an impossible tracking id and was skipped"
            ));
            continue;
        }
        let (flags, stderr, datetime_finished) = if finished {
            let flags = Flags {
                execution_started: l.started,
                execution_finished: true,
                blocked: l.blocked,
                timed_out: l.timed_out,
                exit_code: l.exit_code,
            };
            (flags, l.stderr.clone(), l.datetime_finished.clone())
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
        out.records.push(Restored {
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
        });
    }
    out
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

    fn blocked(id: &str) -> Vec<u8> {
        finished(id, b"", Outcome::Blocked("busy".into()))
    }

    #[test]
    fn finished_records_come_back_as_they_were() {
        let mut file = started("a");
        file.extend(finished("a", b"out \xff", Outcome::Exited(3)));
        file.extend(finished("b", b"", Outcome::Blocked("full".into())));
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
        assert!(b.stderr.contains("actiond: blocked: full"));
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
    fn a_file_of_garbage_names_three_lines_and_counts_the_rest() {
        let mut file = b"x\n".repeat(100_000);
        file.extend(finished("ok", b"", Outcome::Exited(0)));
        let r = restore(&file, "now");
        assert_eq!(r.records.len(), 1);
        assert_eq!(
            r.problems,
            [
                format!("line 1 of {FILE} could not be read and was skipped"),
                format!("line 2 of {FILE} could not be read and was skipped"),
                format!("line 3 of {FILE} could not be read and was skipped"),
                format!("99997 more lines of {FILE} could not be read and were skipped"),
            ]
        );
    }

    #[test]
    fn garbage_lines_are_reported_and_skipped() {
        let mut file = b"not json\n{\"v\":9}\n".to_vec();
        file.extend(finished("ok", b"", Outcome::Exited(0)));
        let r = restore(&file, "now");
        assert_eq!(r.records.len(), 1);
        assert_eq!(r.problems.len(), 2);
    }
}
