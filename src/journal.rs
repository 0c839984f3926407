//! The history journal's format (SPEC §9): one JSON line when an execution starts, one when
//! it finishes (with its capped output), in the state directory's `history.jsonl`. Reading
//! it back after a restart turns every finished line into a record, and every start without
//! a finish (the service died while it ran) into a record marked as interrupted. A torn last
//! line (power lost mid-write) is skipped and reported; so is any other unreadable line.
//! Arguments are never written, so no password reaches the disk. This module is pure: the
//! store writes the bytes, the engine decides when.

use serde::{Deserialize, Serialize};

use crate::execution::{Flags, Restored, Snapshot, TrackingId};

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

#[derive(Debug, Clone, Serialize, Deserialize)]
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
}

fn line(kind: Kind, s: &Snapshot, binding: &str) -> Vec<u8> {
    let finished = kind == Kind::Finished;
    let text = |t: &str| {
        if finished {
            t.to_string()
        } else {
            String::new()
        }
    };
    let l = Line {
        v: 1,
        kind,
        id: s.execution_tracking_id.clone(),
        binding: binding.to_string(),
        title: s.action_title.clone(),
        icon: s.action_icon.clone(),
        user: s.user.clone(),
        user_class: s.user_class.clone(),
        tags: s.tags.clone(),
        datetime_started: s.datetime_started.clone(),
        datetime_finished: text(&s.datetime_finished),
        stdout: text(&s.stdout),
        stderr: text(&s.stderr),
        started: s.flags.execution_started,
        blocked: s.flags.blocked,
        timed_out: s.flags.timed_out,
        exit_code: s.flags.exit_code,
    };
    let mut bytes = serde_json::to_vec(&l).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// The line written when an execution starts.
pub fn started_line(s: &Snapshot, binding: &str) -> Vec<u8> {
    line(Kind::Started, s, binding)
}

/// The line written when an execution has finished (its snapshot is final).
pub fn finished_line(s: &Snapshot, binding: &str) -> Vec<u8> {
    line(Kind::Finished, s, binding)
}

/// What a journal holds: records oldest first, and what could not be read.
#[derive(Debug, Default)]
pub struct Restore {
    pub records: Vec<Restored>,
    pub problems: Vec<String>,
}

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
    for (i, raw) in lines.iter().enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed: Option<Line> = serde_json::from_slice(raw).ok().filter(|l: &Line| l.v == 1);
        let Some(l) = parsed else {
            out.problems.push(if i == last && !ends_cleanly {
                format!("the last line of {FILE} was cut off (power lost while writing?) and was skipped")
            } else {
                format!("line {} of {FILE} could not be read and was skipped", i + 1)
            });
            continue;
        };
        let finished = l.kind == Kind::Finished;
        match seen.get_mut(&l.id) {
            Some(entry) if finished => *entry = (l, true),
            Some(_) => {}
            None => {
                order.push(l.id.clone());
                seen.insert(l.id.clone(), (l, finished));
            }
        }
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

    #[test]
    fn garbage_lines_are_reported_and_skipped() {
        let mut file = b"not json\n{\"v\":9}\n".to_vec();
        file.extend(finished("ok", b"", Outcome::Exited(0)));
        let r = restore(&file, "now");
        assert_eq!(r.records.len(), 1);
        assert_eq!(r.problems.len(), 2);
    }
}
