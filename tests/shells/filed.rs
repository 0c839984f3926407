//! A value written into a file that the command then runs or splits, run for real: `sh
//! FILE`, the file as the program (`./f`, which the shells run as a script when it has no
//! `#!`), `. FILE`, `bash FILE` after `tee`, and `xargs -a FILE`. Each hostile row, rendered
//! as the model quotes the value (what a build that accepted it ran), runs the value in every
//! shell, and the model now refuses it; the safe row (the value written, another file run) is
//! accepted and runs nothing.

use super::findings::{Quoting, Row, check_rows};

/// Each row: the template, the value, how its context is quoted, and whether it runs it.
const ROWS: &[Row] = &[
    (
        "printf '%s\\n' {{ v }} > job.sh && sh job.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} > f && chmod +x f && ./f",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > s.sh && . ./s.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} | tee s.sh > /dev/null && bash s.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > list && xargs -a list touch",
        "x MARK",
        Quoting::Single,
        true,
    ),
    // The value written, another file run: accepted, and it runs nothing.
    (
        "printf '%s\\n' {{ v }} > out.txt && printf 'true\\n' > job.sh && sh job.sh",
        "touch MARK",
        Quoting::Single,
        false,
    ),
];

#[test]
#[ignore = "needs dash, bash and busybox: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn a_value_written_into_a_file_the_command_runs_runs_and_is_refused() {
    check_rows(ROWS, 905);
}
