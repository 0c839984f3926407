//! Tests of `journal`, kept apart so the module reads on its own.

use super::*;
use crate::execution::tests::{execution, execution_of};
use crate::execution::{Execution, Outcome};

/// Whose `e`'s lines are.
fn whose(e: &Execution) -> Whose<'_> {
    Whose {
        binding: &e.binding_id,
        holder: &e.holder,
    }
}

fn finished(id: &str, out: &[u8], outcome: Outcome) -> Vec<u8> {
    let e = execution(id, "act");
    e.set_running();
    e.push_stdout(out);
    e.finish(outcome, 3);
    finished_line(&e.snapshot(), whose(&e))
}

fn started(id: &str) -> Vec<u8> {
    let e = execution(id, "act");
    e.set_running();
    started_line(&e.snapshot(), whose(&e))
}

/// The finish line of a run the history let go while it ran.
fn evicted(id: &str) -> Vec<u8> {
    let e = execution(id, "act");
    e.set_running();
    e.finish(Outcome::Exited(0), 3);
    let mut out = Vec::new();
    write_finished_evicted(&mut out, &e.snapshot(), whose(&e));
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
        b.stderr
            .contains("actiond: blocked: act is already running 1 time(s) and maxConcurrent is 1"),
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
    lines_of(&execution(id, binding))
}

/// The two lines of `e`, started and finished.
fn lines_of(e: &Execution) -> Vec<u8> {
    e.set_running();
    let mut out = started_line(&e.snapshot(), whose(e));
    e.finish(Outcome::Exited(0), 3);
    out.extend(finished_line(&e.snapshot(), whose(e)));
    out
}

#[test]
fn memory_compaction_and_restore_let_the_same_runs_go() {
    // (one lower-case letter per press: its action; `B` a blocked press of `a`; a digit
    // names the caller of the presses after it (a guest's network, `0` alice); limit)
    let cases = [
        ("gaffffffffffffff", 4),
        ("aaaaaaffffffffBffBf", 6),
        ("abcffffffffffBBBcf", 5),
        ("abababab", 3),
        ("f", 1),
        ("aaaffff", 1),
        ("0o1abcdefghijklmnopqrstuvwxyz", 20),
        ("0oo1abcdefgh2ab0p1ijkB2cd", 6),
        ("0a1a2a3a0a1a2aBa3a", 4),
    ];
    for (presses, limit) in cases {
        let mut file = Vec::new();
        let mut history = crate::history::History::new(limit);
        let mut holder = crate::execution::Holder::Guest(None);
        for (i, b) in presses.chars().enumerate() {
            if let Some(n) = b.to_digit(10) {
                holder = if n == 0 {
                    crate::execution::Holder::User("alice".into())
                } else {
                    let ip = std::net::IpAddr::from([192, 168, 1, n as u8]);
                    crate::execution::Holder::Guest(Some(crate::config::Network::of(ip)))
                };
                continue;
            }
            let id = format!("r{i}");
            let blocked = b == 'B';
            let binding = if blocked {
                "a".to_string()
            } else {
                b.to_string()
            };
            let e = execution_of(&id, &binding, holder.clone());
            if blocked {
                e.set_running();
                e.finish(Outcome::Blocked(busy()), 3);
                file.extend(finished_line(&e.snapshot(), whose(&e)));
            } else {
                file.extend(lines_of(&e));
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

#[test]
fn a_guest_pressing_many_actions_keeps_alices_run_on_disk() {
    use crate::execution::Holder;
    let guest = Holder::Guest(Some(crate::config::Network::of([10, 0, 0, 66].into())));
    let mut file = lines_of(&execution_of(
        "alice",
        "other",
        Holder::User("alice".into()),
    ));
    for i in 0..300 {
        let e = execution_of(&format!("g{i}"), &format!("q{}", i % 30), guest.clone());
        file.extend(lines_of(&e));
    }
    let out = compact(&file, 20);
    let kept: Vec<String> = ids_and_kinds(&out).into_iter().map(|(id, _)| id).collect();
    assert_eq!(kept.len(), 20);
    assert_eq!((kept[0].as_str(), kept[1].as_str()), ("alice", "g281"));
    let r = in_pieces(&file, 4096, Keep::history(20), usize::MAX);
    assert_eq!(r.records[0].tracking_id.as_str(), "alice");
    assert_eq!(r.records[0].holder, Holder::User("alice".into()));
    assert_eq!(r.records[1].holder, guest);
    assert_eq!(r.records.len(), 20);
}

#[test]
fn a_line_from_before_holders_were_kept_is_its_users() {
    use crate::execution::Holder;
    let alice = execution_of("alice", "other", Holder::User("alice".into()));
    let guest = execution_of("g", "q", Holder::Guest(None));
    let file = [lines_of(&alice), lines_of(&guest)].concat();
    let text = String::from_utf8(file).unwrap();
    assert!(text.contains(r#""holder":"user:alice""#), "{text}");
    assert!(text.contains(r#""holder":"guest:""#), "{text}");
    // As an earlier version wrote them: no holder at all.
    let old = text
        .replace(
            r#""user":"guest","userClass":"guest","holder":"user:alice","#,
            r#""user":"alice","userClass":"admins","#,
        )
        .replace(r#""holder":"guest:","#, "");
    assert!(!old.contains("holder"));
    let r = restore(old.as_bytes(), "now");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let holders: Vec<&Holder> = r.records.iter().map(|r| &r.holder).collect();
    assert_eq!(
        holders,
        [&Holder::User("alice".into()), &Holder::Guest(None)]
    );
    // Compaction reads them alike, and keeps their finish lines.
    let kept = ids_and_kinds(&compact(old.as_bytes(), 10));
    assert_eq!(kept, [("alice".to_string(), true), ("g".to_string(), true)]);
}
