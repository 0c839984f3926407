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
    // Written by a here-document, and read by programs that take code from a file: an
    // interpreter's script, `awk -f`, GNU `sed -f` (its `e` runs a command), `curl -K` (its
    // options: `output` writes a file), and an interpreter reading it on its input.
    (
        "v={{ v }}\ncat > job.sh <<E\n$v\nE\nsh job.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > p.py && python3 p.py",
        "open('MARK', 'w')",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > a.awk && awk -f a.awk /dev/null",
        "BEGIN { system(\"touch MARK\") }",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > s.sed && echo x | sed -f s.sed",
        "e touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > k && curl -s -K k file:///etc/hostname",
        "output = MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > p.py && python3 < p.py",
        "open('MARK', 'w')",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} | curl -s -K - file:///etc/hostname",
        "output = MARK",
        Quoting::Single,
        true,
    ),
    // The eleventh attack (fe30k F1, F6): a shell reading the file on its input, sqlite3's
    // `.read` of it (its `.shell` runs a command), and a copy of it run.
    (
        "printf '%s\\n' {{ v }} > j.sh && sh -s < j.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > q.sql && sqlite3 :memory: '.read q.sql'",
        ".shell touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > j.sh && cp j.sh run.sh && sh run.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    // The twelfth attack (fe30m F1-F4): the file run by another name (`./` inside its path,
    // a directory and its name after `cd`), written by `dd of=`, or copied by `cat >`.
    (
        "mkdir -p d && printf '%s\\n' {{ v }} > d/job.sh && sh d/./job.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "mkdir -p d && cd d && printf '%s\\n' {{ v }} > job.sh && cd .. && sh d/job.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} | dd of=j.sh status=none && sh j.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "printf '%s\\n' {{ v }} > j.in && cat j.in > j.sh && sh j.sh",
        "touch MARK",
        Quoting::Single,
        true,
    ),
    // The value written and handled as data (`cat`, `cp`, `grep`, `rm`), or a script the
    // author wrote by a here-document given the value as an argument: accepted, runs nothing.
    (
        "printf '%s\\n' {{ v }} > out.txt && cat out.txt && cp out.txt o2.txt && grep -c x o2.txt; rm -f out.txt",
        "touch MARK",
        Quoting::Single,
        false,
    ),
    (
        "cat > job.sh <<'E'\nprintf '%s\\n' \"$1\"\nE\nsh job.sh {{ v }}",
        "touch MARK",
        Quoting::Single,
        false,
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
