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

/// F7 (30o): what a pipe stage or a group writes holds every value it expanded or read, and
/// a filter passes what it reads on (changed or not), so the value reaches an interpreter
/// behind a group, a subshell or a filter as surely as behind `echo`. A stage that prints
/// none of its input (`wc -c`, `grep -c`) stops it; a loop of programs that read no input
/// reads none of it.
const FLOWS: &[Row] = &[
    (
        "(echo 'import os'; echo {{ v }}) | python3",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "{ true; echo {{ v }}; } | python3",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | cat | python3",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | tr x x | python3",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | sort -u | python3",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | base64 -d | python3",
        "b3BlbignTUFSSycsJ3cnKQ==",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | { cat; } | python3",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | (python3)",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | { true; python3; }",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} > f; { python3; } < f",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    (
        "echo {{ v }} | while read -r l; do echo \"$l\"; done | python3",
        "open('MARK','w')",
        Quoting::Single,
        true,
    ),
    // Stages that print none of it, and a loop whose programs read no input.
    (
        "echo {{ v }} | wc -c | python3",
        "open('MARK','w')",
        Quoting::Single,
        false,
    ),
    (
        "echo {{ v }} | grep -c x | python3",
        "open('MARK','w')",
        Quoting::Single,
        false,
    ),
    (
        "printf '%s\\n' {{ v }} | while read -r l; do rm -f -- \"$l\"; done",
        "open('MARK','w')",
        Quoting::Single,
        false,
    ),
];

#[test]
#[ignore = "needs dash, bash, busybox and python3: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn a_value_through_a_group_or_a_filter_reaches_an_interpreter_and_is_refused() {
    check_rows(FLOWS, 908);
}
