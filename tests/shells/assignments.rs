//! Where a `$NAME` in a word shaped like an assignment is split and globbed, in the real
//! shells, against what the model notes as standing unquoted (`Analysis::unquoted`, which the
//! config check refuses or warns about for an argument's variable): an assignment before a
//! command's name is never split, a command's argument `X=$NAME` always is, and the
//! declaration utilities (`export`, `local`, `readonly`, `declare`, `typeset`) are split by
//! some shells and not others, so the model notes them.

use std::collections::BTreeSet;

use actiond::template::read_shell;

use super::{PRELUDE, SHELLS, run, scratch};

/// Each row: the command (which prints what `X`, or its argument, holds with `p`), what it
/// prints before the value when the value arrives whole, the shells that split or glob
/// `$NAME` there (NAME `a b`, then `f*` beside files `X=f1` and `X=f2`), and whether the
/// model notes it: wherever any shell splits, and for the declaration utilities, which dash
/// before 0.5.11 and the shells of POSIX.1-2017 split too.
const ROWS: &[(&str, &str, &[&str], bool)] = &[
    // Assignments before a command's name: never split, not noted.
    ("X=$NAME; p \"$X\"", "", &[], false),
    (
        "X=$NAME Y=${NAME} sh -c 'printf \"<%s>\" \"$X\"'",
        "",
        &[],
        false,
    ),
    // A command's argument shaped like an assignment: split by all.
    ("p X=$NAME", "X=", &SPLIT_BY_ALL, true),
    // The declaration utilities: whole here, but not in every shell a board may have.
    ("export X=$NAME; p \"$X\"", "", &[], true),
    ("export -- X=$NAME; p \"$X\"", "", &[], true),
    ("f() { local X=$NAME; p \"$X\"; }; f", "", &[], true),
    ("readonly X=$NAME; p \"$X\"", "", &[], true),
    ("command export X=$NAME; p \"$X\"", "", &["bash"], true),
    (
        "e=export; $e X=$NAME; p \"$X\"",
        "",
        &["bash", "bash --posix"],
        true,
    ),
];

const SPLIT_BY_ALL: [&str; 4] = ["dash", "bash", "bash --posix", "busybox ash"];

#[test]
#[ignore = "needs dash, bash and busybox: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn assignments_split_where_the_shells_do_and_the_model_notes_it() {
    let dir = scratch(901);
    let mut wrong = Vec::new();
    for &(text, before, want, noted) in ROWS {
        let mut split = BTreeSet::new();
        for value in ["a b", "f*"] {
            let script = format!("{PRELUDE}: > X=f1; : > X=f2; NAME='{value}'\n{text}");
            for (name, shell) in SHELLS {
                let got = run(shell, &script, &dir).stdout;
                if got != format!("<{before}{value}>").into_bytes() {
                    split.insert(*name);
                }
            }
        }
        let want: BTreeSet<&str> = want.iter().copied().collect();
        if split != want {
            wrong.push(format!("{text:?} split in {split:?}, expected {want:?}"));
        }
        let (_, analysis) = read_shell(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        if analysis.unquoted.contains_key("NAME") != noted || (!split.is_empty() && !noted) {
            wrong.push(format!("{text:?}: the model notes it: {}", !noted));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
