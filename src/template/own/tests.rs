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
        // A module run with `-m` reads its input as data only when known to (fe30v F1).
        (
            "echo {{ a }} | python3 -m pickle",
            Some("standard input"),
            false,
        ),
        (
            "echo {{ a }} | python3 -mcode",
            Some("standard input"),
            false,
        ),
        ("echo {{ a }} | python3 -m json.tool", None, false),
        ("echo {{ a }} | perl -mstrict /opt/x.pl", None, false),
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

/// F7 (30o): what a pipe stage or a group writes holds every value it expanded or read, its
/// input too unless it prints none of it (`prints_input`), and every command of a group
/// reads what reaches the group (a pipe before it, a redirection after it). Each row: a
/// `shell:` command and whether a text value is refused (the words of the place); an `int`
/// value never is.
#[test]
fn a_value_through_a_filter_or_a_group_reaches_the_program_after_it() {
    let stdin = Some("standard input");
    let table: &[(&str, Option<&str>)] = &[
        // The finding's config, and its variants.
        (
            "(crontab -l 2>/dev/null | grep -v wakeup; echo \"{{ a }} * * * curl -fsS {{ a }} \
             # wakeup\") | crontab -",
            stdin,
        ),
        (
            "(crontab -l; echo \"0 7 * * * curl {{ a }}\") | crontab -",
            stdin,
        ),
        (
            "{ crontab -l | grep -v w; echo \"0 7 * * * {{ a }}\"; } | sort -u | crontab -",
            stdin,
        ),
        ("echo {{ a }} | uniq | crontab -", stdin),
        ("echo {{ a }} | cat - /tmp/old | crontab -", stdin),
        // Filters pass what they read on, changed or not.
        ("echo {{ a }} | cat | psql app", stdin),
        ("echo {{ a }} | tr a-z A-Z | psql app", stdin),
        ("echo {{ a }} | base64 -d | python3", stdin),
        ("echo {{ a }} | base64 --decode | sqlite3 db", stdin),
        ("echo {{ a }} | sort -u | sqlite3 db", stdin),
        ("echo {{ a }} | sed s/x/y/ | python3", stdin),
        ("echo {{ a }} | awk '{print}' | python3", stdin),
        ("echo {{ a }} | cut -c1- | python3", stdin),
        ("echo {{ a }} | xargs echo | python3", stdin),
        ("echo {{ a }} | tee /tmp/copy.txt | python3", stdin),
        ("echo {{ a }} | gzip | gunzip | python3", stdin),
        ("echo {{ a }} | grep x | python3", stdin),
        ("echo {{ a }} | wc --files0-from=- | python3", stdin),
        ("echo {{ a }} | sha256sum -c | python3", stdin),
        ("echo {{ a }} | grep -ec | python3", stdin),
        ("echo {{ a }} | myfilter | python3", stdin),
        ("echo \"$A\" | cat | python3", stdin),
        // Groups: what their commands write, and what reaches them.
        ("(echo \"{{ a }}\") | python3", stdin),
        (
            "{ echo \"INSERT (\"; echo {{ a }}; echo \");\"; } | psql app",
            stdin,
        ),
        ("echo {{ a }} | { psql; }", stdin),
        ("echo {{ a }} | ( psql )", stdin),
        ("echo {{ a }} | { true; psql; }", stdin),
        ("echo {{ a }} | { cat | psql; }", stdin),
        ("echo {{ a }} | { { cat; }; } | psql", stdin),
        ("echo {{ a }} | if true; then cat; fi | psql", stdin),
        ("echo {{ a }} | for i in 1; do cat; done | psql", stdin),
        ("echo {{ a }} | case x in x) cat ;; esac | psql", stdin),
        (
            "echo {{ a }} | while read -r l; do echo \"$l\"; done | psql",
            stdin,
        ),
        ("echo {{ a }} | { x=$(python3); }", stdin),
        ("echo {{ a }} > /tmp/f.txt; { psql; } < /tmp/f.txt", stdin),
        ("echo {{ a }} > /tmp/f.txt; cat /tmp/f.txt | psql", stdin),
        (
            "echo {{ a }} > /tmp/f.txt; while read -r l; do psql; done < /tmp/f.txt",
            stdin,
        ),
        ("echo {{ a }} > /tmp/f.txt; exec < /tmp/f.txt; psql", stdin),
        // Here-documents flow like a pipe's writer.
        ("cat <<E | psql\n$ACTIOND_ARG_A\nE", stdin),
        ("{ cat <<E\n$ACTIOND_ARG_A\nE\n} | psql", stdin),
        ("{ cat; } <<E | psql\n$ACTIOND_ARG_A\nE", stdin),
        ("{ psql; } <<E\n$ACTIOND_ARG_A\nE", stdin),
        // bash's process substitutions.
        ("psql < <(echo \"$A\")", stdin),
        ("echo {{ a }} > /tmp/f.txt; psql < <(cat /tmp/f.txt)", stdin),
        ("cat <(echo \"$A\") | psql", stdin),
        ("echo {{ a }} | tee >(psql)", stdin),
        ("echo {{ a }} | { psql < <(cat); }", stdin),
        // Into files run by convention, through a group.
        (
            "echo {{ a }} | { cat > /etc/cron.d/job; }",
            Some("by convention"),
        ),
        (
            "echo {{ a }} > /tmp/f.txt; { cat > /etc/cron.d/job; } < /tmp/f.txt",
            Some("by convention"),
        ),
        (
            "echo {{ a }} | tee /tmp/w.txt | cat > /etc/cron.d/job",
            Some("by convention"),
        ),
        (
            "echo {{ a }} | tee >(cat > /etc/cron.d/job)",
            Some("by convention"),
        ),
        (
            "echo {{ a }} | ( cat > /tmp/job ); sh /tmp/job",
            Some("/tmp/job"),
        ),
        // Behind `sudo`, `runuser --` and in the script of `su -c`, whose shell has the input.
        ("echo {{ a }} | sudo crontab -", stdin),
        ("echo {{ a }} | sudo -u pi psql app", stdin),
        ("echo {{ a }} | runuser -u pi -- crontab -", stdin),
        ("echo {{ a }} | su pi -c 'crontab -'", stdin),
        ("echo {{ a }} | su pi -c 'cat | psql'", stdin),
        (
            "echo {{ a }} | su pi -c 'cat > /etc/cron.d/job'",
            Some("by convention"),
        ),
        ("echo {{ a }} | su pi -c 'cat > /tmp/x.txt'", None),
        ("echo {{ a }} | sudo tee /tmp/x.txt", None),
        ("echo {{ a }} | sudo -S systemctl restart x", None),
        // Functions: a call writes what the body writes.
        ("f() { echo {{ a }}; }; f | psql", stdin),
        ("function f { echo \"$A\"; }; f | python3", stdin),
        ("f() { echo {{ a }}; }; f | wc -c | psql", None),
        ("f() { echo hi; }; f | psql; echo {{ a }}", None),
        // Stages that print none of their input, and programs that read none.
        ("crontab -l | grep -c x", None),
        ("echo {{ a }} | wc -c", None),
        ("echo {{ a }} | wc -l | psql", None),
        ("echo {{ a }} | grep -c x | psql", None),
        ("echo {{ a }} | grep -q x && psql -c 'select 1'", None),
        ("echo {{ a }} | grep -Fqx -e x | psql", None),
        ("echo {{ a }} | md5sum | psql", None),
        (
            "echo {{ a }} > /tmp/f.txt; grep -c x /tmp/f.txt | psql",
            None,
        ),
        (
            "echo {{ a }} > /tmp/f.txt; sha256sum /tmp/f.txt | psql",
            None,
        ),
        (
            "echo {{ a }} > /tmp/f.txt; head -n1 /tmp/f.txt | psql",
            stdin,
        ),
        ("printf '%s\\n' {{ a }} | grep -F -e x", None),
        ("echo {{ a }} | logger -t x", None),
        ("echo {{ a }} | mosquitto_pub -l -t x", None),
        ("echo {{ a }} | tee /tmp/file.txt", None),
        ("echo {{ a }} | tee >(wc -c) | logger", None),
        ("{ echo {{ a }} | wc -c; echo x; } | psql", None),
        ("( echo {{ a }} | wc -c ) | psql", None),
        ("echo {{ a }} | { wc -c > /tmp/n; }", None),
        ("echo {{ a }} | { cat > /tmp/log.txt; }", None),
        (
            "printf '%s\\n' {{ a }} | while read -r f; do rm -f -- \"$f\"; done",
            None,
        ),
        (
            "printf '%s\\n' {{ a }} | while read -r s; do systemctl status -- \"$s\"; done",
            None,
        ),
        (
            "(crontab -l; echo '0 7 * * * /opt/x') | crontab -; echo {{ a }}",
            None,
        ),
        ("cat <<E | psql\nselect 1;\nE\necho {{ a }}", None),
        ("cat <<'E' | psql\n$ACTIOND_ARG_A\nE", None),
        ("cat <<E | wc -c | psql\n$ACTIOND_ARG_A\nE", None),
        ("diff <(sort /a) <(sort /b); echo {{ a }}", None),
        ("x=$(echo \"$A\"); { echo hi; } | psql", None),
    ];
    for &(text, refused) in table {
        check(text, shell(text, false), refused);
        // A file named as data given to a program that reads it as code is refused whatever
        // the action's values (`Read::Stored`): any press may have written into it.
        let data = text.contains("f.txt")
            && ![" -c x ", "sha256sum", "tee /tmp/copy.txt"]
                .iter()
                .any(|t| text.contains(t));
        let int = data.then_some("a file named as data");
        check(&format!("{text} (int)"), shell(text, true), int);
    }
}

/// `prints_input`: the programs known to print none of what reaches their input, as used.
#[test]
fn a_sink_prints_none_of_its_input_and_anything_else_passes_it_on() {
    let table: &[(&[&str], bool)] = &[
        (&["wc", "-l"], false),
        (&["wc", "--files0-from=-"], true),
        (&["grep", "-c", "x"], false),
        (&["grep", "-qF", "x"], false),
        (&["grep", "--count", "x"], false),
        (&["grep", "-l", "x"], false),
        (&["grep", "-F", "x"], true),
        (&["grep", "-ec"], true),
        (&["grep", "-e", "-c"], true),
        (&["grep", "--", "-c"], true),
        (&["sha256sum"], false),
        (&["sha256sum", "-c"], true),
        (&["md5sum", "--check"], true),
        (&["logger", "-t", "x"], false),
        (&["mosquitto_pub", "-l", "-t", "x"], false),
        (&["sponge", "/tmp/f"], false),
        (&["sponge"], true),
        (&["dd", "of=/tmp/f"], false),
        (&["dd"], true),
        (&["rm", "-f", "x"], false),
        (&["sudo", "systemctl", "restart", "x"], false),
        (&["read", "-r", "l"], false),
        (&["true"], false),
        (&["cat"], true),
        (&["tee", "/tmp/f"], true),
        (&["tr", "a", "b"], true),
        (&["base64", "-d"], true),
        (&["sort", "-u"], true),
        (&["sed", "s/a/b/"], true),
        (&["awk", "{print}"], true),
        (&["xargs", "echo"], true),
        (&["gzip"], true),
        (&["myfilter"], true),
    ];
    for &(words, want) in table {
        let values: Vec<Option<&[u8]>> = words.iter().map(|w| Some(w.as_bytes())).collect();
        assert_eq!(super::prints_input(&values), want, "{words:?}");
    }
    // A program the model cannot name passes it on.
    assert!(super::prints_input(&[None, Some(b"-c")]));
}
