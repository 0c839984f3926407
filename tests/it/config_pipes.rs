//! F7 (30o), at the config level: what a pipe stage or a group writes holds every value it
//! expanded or read, and a filter passes its input on, so a value reaches a program that
//! reads its input as commands (`crontab -`, `psql`, `python3`, `sqlite3`) behind a `( )`
//! or `{ }` group, a loop or a filter as surely as behind `echo`. Each such action is
//! refused at its path, naming the standard input; the safe neighbours (a count, a log, a
//! publish, a copy into a plain file) load untouched.

use crate::config_check::{assert_exit, assert_refusals, check, output};

/// One action per command, each with one text argument `v` of `kind`, and the `int`s `hour`
/// and `minute` where it uses them.
fn config(rows: &[(&str, &str)]) -> String {
    let mut yaml = String::from("actions:\n");
    for (i, (shell, kind)) in rows.iter().enumerate() {
        let ints = if shell.contains("{{ hour }}") {
            "      - {name: hour, type: int}\n      - {name: minute, type: int}\n"
        } else {
            ""
        };
        yaml.push_str(&format!(
            "  - id: a{i}\n    title: action {i}\n    arguments:\n{ints}      - {{name: v, \
             type: {kind}}}\n    shell: {}\n",
            serde_json::to_string(shell).expect("a string")
        ));
    }
    yaml
}

/// The finding's own config, as the tester wrote it, is refused at load.
#[test]
fn config_the_cron_job_idiom_with_a_value_is_refused() {
    let yaml = r#"actions:
  - id: setAlarm
    title: Set the wake-up alarm
    arguments:
      - {name: hour, type: int}
      - {name: minute, type: int}
      - {name: url, type: url}    # the Home Assistant webhook that opens the blinds
    shell: |
      (crontab -l 2>/dev/null | grep -v wakeup; echo "{{ minute }} {{ hour }} * * * curl -fsS {{ url }} # wakeup") | crontab -
"#;
    assert_refusals(yaml, &[("actions[0].shell", "standard input")], &[]);
    // With only its `int`s in the line, the same idiom loads.
    let yaml = yaml.replace(" -fsS {{ url }}", " -fsS http://ha.lan/hook");
    let yaml = yaml.replace(
        "      - {name: url, type: url}    # the Home Assistant webhook that opens the blinds\n",
        "",
    );
    let run = check(&yaml);
    assert_exit(&run, 0);
    assert!(!output(&run).contains("actions[0]"), "{}", output(&run));
}

/// Variants: groups, subshells, loops and filters in front of a program that reads its
/// input as commands; and the neighbours that must load.
#[test]
fn config_a_value_through_a_group_or_a_filter_into_a_command_reader_is_refused() {
    let refused: &[(&str, &str)] = &[
        (
            "(crontab -l; echo \"0 7 * * * curl -fsS {{ v }}\") | crontab -",
            "url",
        ),
        (
            "{ crontab -l | grep -v wakeup; echo \"{{ minute }} {{ hour }} * * * curl {{ v }} \
             # wakeup\"; } | sort -u | crontab -",
            "url",
        ),
        (
            "{ crontab -l | grep -v wakeup; echo \"0 7 * * * curl {{ v }}\"; } | uniq | \
             crontab -",
            "url",
        ),
        (
            "echo \"0 7 * * * curl {{ v }}\" | cat - /tmp/old | crontab -",
            "url",
        ),
        ("echo {{ v }} | cat | psql app", "ascii_sentence"),
        ("echo {{ v }} | tr a-z A-Z | psql app", "ascii_sentence"),
        ("echo {{ v }} | base64 -d | python3", "ascii"),
        ("echo {{ v }} | base64 --decode | sqlite3 db", "ascii"),
        ("echo {{ v }} | sort -u | sqlite3 db", "ascii_sentence"),
        ("(echo \"{{ v }}\") | python3", "ascii_sentence"),
        (
            "{ echo \"INSERT INTO t VALUES ('\"; echo {{ v }}; echo \"');\"; } | psql app",
            "ascii_sentence",
        ),
        ("echo {{ v }} | { true; psql app; }", "ascii_sentence"),
        (
            "echo {{ v }} | while read -r l; do echo \"$l\"; done | psql app",
            "ascii_sentence",
        ),
        (
            "echo {{ v }} > /tmp/q.txt; { psql app; } < /tmp/q.txt",
            "ascii_sentence",
        ),
    ];
    let clean: &[(&str, &str)] = &[
        ("crontab -l | grep -c x; echo {{ v }}", "ascii_sentence"),
        ("echo {{ v }} | wc -c", "ascii_sentence"),
        ("printf '%s\\n' {{ v }} | grep -F -e x", "ascii_sentence"),
        ("echo {{ v }} | logger -t blinds", "ascii_sentence"),
        (
            "echo {{ v }} | mosquitto_pub -l -t home/blinds",
            "ascii_sentence",
        ),
        ("echo {{ v }} | tee /tmp/blinds.log", "ascii_sentence"),
        ("echo {{ v }} | grep -c x | psql app", "ascii_sentence"),
        (
            "printf '%s\\n' {{ v }} | while read -r f; do rm -f -- \"$f\"; done",
            "ascii_sentence",
        ),
        (
            "(crontab -l; echo \"{{ minute }} {{ hour }} * * * /opt/wake\") | crontab -; echo \
             {{ v }}",
            "ascii_sentence",
        ),
    ];
    let rows: Vec<(&str, &str)> = refused.iter().chain(clean).copied().collect();
    let yaml = config(&rows);
    let paths: Vec<String> = (0..rows.len())
        .map(|i| format!("actions[{i}].shell"))
        .collect();
    let want: Vec<(&str, &str)> = paths[..refused.len()]
        .iter()
        .map(|p| (p.as_str(), "standard input"))
        .collect();
    let clean: Vec<&str> = paths[refused.len()..].iter().map(String::as_str).collect();
    assert_refusals(&yaml, &want, &clean);
}
