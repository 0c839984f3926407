//! The tables of `own`: each command with whether a text value in it is refused (and the
//! words of the place), and whether an `int` value is; `exec:` forms beside. What the
//! programs do with each is in tests/shells (`own.rs`).

use super::super::judge::{Values, judge};
use super::super::{read_exec, read_shell};

/// One argument `a`, of `type: int` or text, read as `{{ a }}`, `$ACTIOND_ARG_A` or `$A`.
fn values(int: bool) -> Values {
    let mut v = Values {
        any: !int,
        ..Values::default()
    };
    if int {
        v.int.insert("a".into());
    }
    v.variables
        .insert("ACTIOND_ARG_A".into(), ("a".into(), false));
    v.variables.insert("A".into(), ("a".into(), true));
    v
}

fn shell(text: &str, int: bool) -> Result<(), String> {
    let (_, analysis) = read_shell(text).map_err(|e| e.message)?;
    judge(text, &analysis, &values(int)).map_err(|why| why.to_string())
}

fn exec(argv: &[&str], int: bool) -> Result<(), String> {
    let argv: Vec<String> = argv.iter().map(ToString::to_string).collect();
    judge("", &read_exec(&argv), &values(int)).map_err(|why| why.to_string())
}

fn check(what: &str, got: Result<(), String>, want: Option<&str>) {
    match (got, want) {
        (Ok(()), None) => {}
        // `launchers` may find the place first (an option named `--exec`, `-cmd`).
        (Err(why), Some(words)) => assert!(
            why.contains(words) || why.contains("a command an option holds"),
            "{what}: {why}"
        ),
        (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
    }
}

/// Each row: a `shell:` command, the words of its refusal with a text value (`None`:
/// accepted), and whether an `int` value is refused too.
#[test]
fn a_value_a_program_reads_as_its_own_commands_is_refused() {
    let table: &[(&str, Option<&str>, bool)] = &[
        // F02: sed's script, wherever it is.
        ("sed -n {{ a }} data.txt", Some("script of `sed`"), false),
        ("sed -n {{ a }}p data.txt", Some("script of `sed`"), false),
        ("sed -n \"$A\" data.txt", Some("script of `sed`"), false),
        ("sed -e {{ a }} f", Some("script of `sed`"), false),
        ("sed -ne {{ a }} f", Some("script of `sed`"), false),
        ("sed --expression={{ a }} f", Some("script of `sed`"), false),
        (
            "env LC_ALL=C sed -n {{ a }} f",
            Some("script of `sed`"),
            false,
        ),
        // A value as a file with the script given is data.
        ("sed -n 1p -- {{ a }}", None, false),
        ("sed -e 1p {{ a }}", None, false),
        ("sed -f script.sed {{ a }}", None, false),
        // F03: sqlite3's operands after the database, and `-cmd`.
        ("sqlite3 db {{ a }}", Some("`sqlite3`"), false),
        (
            "sqlite3 -cmd {{ a }} db 'select 1'",
            Some("reaches it"),
            false,
        ),
        ("sqlite3 {{ a }} 'select 1'", None, false),
        ("echo {{ a }} | sqlite3 db", Some("standard input"), false),
        // F04: git.
        (
            "git rebase -x {{ a }} HEAD~1",
            Some("a command git runs"),
            false,
        ),
        (
            "git rebase --exec={{ a }} HEAD~1",
            Some("a command git runs"),
            false,
        ),
        (
            "git ls-remote --upload-pack={{ a }} r",
            Some("a command git runs"),
            false,
        ),
        (
            "git clone -u {{ a }} r d",
            Some("a command git runs"),
            false,
        ),
        (
            "git push --receive-pack {{ a }} r",
            Some("a command git runs"),
            false,
        ),
        (
            "git submodule foreach {{ a }}",
            Some("a command git runs"),
            false,
        ),
        (
            "git bisect run ./t {{ a }}",
            Some("a command git runs"),
            false,
        ),
        (
            "git filter-branch --tree-filter {{ a }} HEAD",
            Some("a command git runs"),
            false,
        ),
        (
            "git difftool -y -x {{ a }}",
            Some("a command git runs"),
            false,
        ),
        (
            "git config core.fsmonitor {{ a }}",
            Some("git setting"),
            false,
        ),
        ("git config set alias.x {{ a }}", Some("git setting"), false),
        ("git config {{ a }} true", Some("git setting"), false),
        (
            "git -c include.path=/x/{{ a }}/c status",
            Some("git setting"),
            false,
        ),
        (
            "git --config-env=core.pager=ACTIOND_ARG_A log",
            Some("git setting"),
            false,
        ),
        ("git config user.name {{ a }}", None, false),
        ("git -c user.email={{ a }} commit -m x", None, false),
        ("git config --get {{ a }}", None, false),
        ("git log -n {{ a }}", None, false),
        ("git push -u origin {{ a }}", None, false),
        // F08: a value on the input of a program that may read it as commands.
        ("echo {{ a }} | tclsh", Some("standard input"), false),
        ("echo \"$A\" | perl", Some("standard input"), false),
        (
            "printf '%s\\n' {{ a }} | python3",
            Some("standard input"),
            false,
        ),
        ("echo {{ a }} | node", Some("standard input"), false),
        (
            "echo {{ a }} | awk -f /dev/stdin",
            Some("standard input"),
            false,
        ),
        ("echo {{ a }} | bc", Some("standard input"), false),
        ("echo {{ a }} | ed -s f", Some("standard input"), false),
        ("echo {{ a }} | crontab -", Some("standard input"), false),
        ("python3 <<< {{ a }}", Some("standard input"), false),
        (
            "python3 <<E\n$ACTIOND_ARG_A\nE",
            Some("standard input"),
            false,
        ),
        // Programs known to read their input as data, and interpreters given a script.
        ("echo {{ a }} | grep -c x", None, false),
        ("echo {{ a }} | mosquitto_pub -t t -l", None, false),
        ("echo {{ a }} | python3 /opt/x.py", None, false),
        (
            "echo {{ a }} | python3 -c 'import sys; print(sys.stdin.read())'",
            None,
            false,
        ),
        ("echo {{ a }} | awk '{print $1}'", None, false),
        ("echo {{ a }} | sed s/x/y/", None, false),
        ("python3 <<'E'\nprint(1)\nE\necho {{ a }}", None, false),
        ("echo hi | python3; echo {{ a }}", None, false),
        // F09: `find -exec {}` runs what the tests match.
        (
            "find /usr/bin -name {{ a }} -exec {} --version \\;",
            Some("`find`"),
            false,
        ),
        (
            "find /usr/bin -name {{ a }} -exec ls -l {} \\;",
            None,
            false,
        ),
        ("find /srv -name x -exec {} {{ a }} \\;", None, false),
    ];
    for &(text, refused, int_refused) in table {
        check(text, shell(text, false), refused);
        let int = int_refused.then_some(refused.unwrap_or_default());
        check(&format!("{text} (int)"), shell(text, true), int);
    }
}

#[test]
fn exec_forms_are_read_alike() {
    let table: &[(&[&str], Option<&str>)] = &[
        (
            &["sed", "-n", "{{ a }}", "data.txt"],
            Some("script of `sed`"),
        ),
        (&["sqlite3", "db", "{{ a }}"], Some("`sqlite3`")),
        (
            &["git", "-C", "r", "config", "core.fsmonitor", "{{ a }}"],
            Some("git setting"),
        ),
        (
            &["git", "--config-env=core.fsmonitor=ACTIOND_ARG_A", "status"],
            Some("git setting"),
        ),
        (
            &["git", "--config-env=user.name=ACTIOND_ARG_A", "status"],
            None,
        ),
        (
            &["gdb", "-batch", "-nx", "-ex", "{{ a }}"],
            Some("debugger"),
        ),
        (
            &["gdb", "-batch", "--eval-command={{ a }}"],
            Some("reaches it"),
        ),
        (
            &[
                "find", "/usr/bin", "-name", "{{ a }}", "-exec", "{}", "x", ";",
            ],
            Some("`find`"),
        ),
        (
            &[
                "find", "/usr/bin", "-name", "{{ a }}", "-exec", "ls", "{}", ";",
            ],
            None,
        ),
        (&["grep", "-F", "-e", "{{ a }}", "f"], None),
    ];
    for &(argv, refused) in table {
        check(&argv.join(" "), exec(argv, false), refused);
        check(&format!("{} (int)", argv.join(" ")), exec(argv, true), None);
    }
}
