//! Programs that read a value as their own commands, run for real: GNU sed's `e`, sqlite3's
//! `.system`, a `git config` value git later runs, `git rebase -x`, `gdb -ex`, an
//! interpreter reading its program from a pipe (python3, perl, tclsh), and `find -exec {}`
//! running the file a test matched. Each hostile row, rendered as the model quotes the value
//! (what a build that accepted it ran), runs the value in every shell, and the model now
//! refuses it; each safe row (the value as data) is accepted and runs nothing.

use super::findings::{Quoting, Row, check_rows};

/// Each row: the template, the value, how its context is quoted, and whether it runs it.
const ROWS: &[Row] = &[
    // F02: a sed script.
    (
        "printf 'a\\n' > f && sed -n {{ v }} f",
        "1e touch MARK",
        Quoting::Single,
        true,
    ),
    // F03: sqlite3's operand and its input.
    (
        "sqlite3 db {{ v }}",
        ".system touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | sqlite3 db",
        ".shell touch MARK",
        Quoting::Single,
        true,
    ),
    // F04: git settings and commands.
    (
        "git init -q r && git -C r config core.fsmonitor {{ v }} && git -C r status --short",
        "touch ../MARK; false",
        Quoting::Single,
        true,
    ),
    (
        "git init -q r && git -C r -c user.name=a -c user.email=a@b commit -q --allow-empty -m \
         1 && git -C r -c user.name=a -c user.email=a@b commit -q --allow-empty -m 2 && git -C \
         r -c user.name=a -c user.email=a@b rebase -q -x {{ v }} HEAD~1",
        "touch ../MARK",
        Quoting::Single,
        true,
    ),
    // F08: a debugger's command, and interpreters reading their program from a pipe.
    (
        "gdb -batch -nx -ex {{ v }}",
        "shell touch MARK",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | python3",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | perl",
        "system touch, MARK",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | tclsh",
        "exec touch MARK",
        Quoting::Single,
        true,
    ),
    // F09: `find -exec {}` runs the file the value matches.
    (
        "printf '#!/bin/sh\\ntouch MARK\\n' > t && chmod +x t && find . -maxdepth 1 -name {{ v \
         }} -exec {} \\;",
        "t",
        Quoting::Single,
        true,
    ),
    // The value as data: accepted, and it runs nothing.
    (
        "printf 'a\\n' > f && grep -F -e {{ v }} f",
        "1e touch MARK",
        Quoting::Single,
        false,
    ),
    (
        "echo {{ v }} | python3 -c 'import sys; sys.stdin.read()'",
        "open('MARK','w')",
        Quoting::Single,
        false,
    ),
    (
        "git init -q r && git -C r config user.name {{ v }} && git -C r status --short",
        "touch ../MARK; false",
        Quoting::Single,
        false,
    ),
    (
        "printf '#!/bin/sh\\ntouch MARK\\n' > t && find . -maxdepth 1 -name {{ v }} -exec ls \
         {} \\;",
        "t",
        Quoting::Single,
        false,
    ),
];

#[test]
#[ignore = "needs dash, bash, busybox, sqlite3, git, gdb, python3, perl and tclsh: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn a_program_reading_the_value_as_its_commands_runs_it_and_is_refused() {
    check_rows(ROWS, 907);
}
