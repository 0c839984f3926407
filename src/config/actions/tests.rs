//! Tests of `config::actions`, kept apart so the module reads on its own.

use super::*;
use crate::arguments::{ArgType, Choice};
use crate::config::fixtures::*;

#[test]
fn an_action_with_every_key() {
    let (c, warnings) = ok("
accessControlLists: [{name: ops}]
entities: [{file: servers.yaml, name: server}]
actions:
  - id: ping_host
    title: Ping host
    icon: '<b>P</b>'
    shell: ping -c 1 {{ host }}
    timeout: 10
    hidden: true
    maxConcurrent: 2
    maxRate:
      - {limit: 3, duration: 1m}
      - {limit: 10, duration: 1h30m}
    acls: ops
    popupOnStart: execution-dialog-stdout-only
    workingDirectory: scripts
    execOnStartup: true
    execOnCron: '@hourly'
    execOnFileCreatedInDir: [/tmp/in]
    execOnFileChangedInDir: /tmp/watch
    entity: server
    arguments:
      - name: host
        title: Host
        type: ascii_identifier
        default: 1.5
        description: Which host
        entity: server
        rejectNull: true
        allowLeadingDash: true
        choices:
          - {value: 1.5, title: One and a half}
          - {value: true}
          - {value: }
        suggestions:
          plex:
          wifi: WiFi controller
          7: seven
");
    // The directory is not there where the tests run: a warning, never an error.
    assert!(
        warnings
            .iter()
            .all(|w| w.path == "actions[0].workingDirectory"),
        "{warnings:?}"
    );
    let a = &c.actions[0];
    assert_eq!(a.id, "ping_host");
    assert_eq!(a.title, "Ping host");
    assert_eq!(a.icon, "<b>P</b>");
    assert_eq!(a.command, CommandSpec::Shell("ping -c 1 {{ host }}".into()));
    assert_eq!(a.timeout, Duration::from_secs(10));
    assert!(a.hidden);
    assert_eq!(a.max_concurrent, 2);
    assert_eq!(
        a.max_rate,
        vec![
            RateRule {
                limit: 3,
                window: Duration::from_secs(60)
            },
            RateRule {
                limit: 10,
                window: Duration::from_secs(5400)
            },
        ]
    );
    assert_eq!(a.acls, vec!["ops"]);
    assert_eq!(a.popup_on_start, Popup::ExecutionDialogStdoutOnly);
    assert_eq!(a.working_directory, Some(base().join("scripts")));
    assert!(a.exec_on_startup);
    assert_eq!(a.exec_on_cron, vec!["@hourly"]);
    assert_eq!(a.exec_on_file_created_in_dir, vec!["/tmp/in"]);
    assert_eq!(a.exec_on_file_changed_in_dir, vec!["/tmp/watch"]);
    assert_eq!(a.entity.as_deref(), Some("server"));
    // The file triggers add the file arguments after the declared ones.
    let added: Vec<&str> = a.arguments[1..].iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        added,
        [
            "filepath",
            "filename",
            "filedir",
            "fileext",
            "filesizebytes"
        ]
    );
    assert_eq!(
        a.arguments[..1],
        vec![Argument {
            name: "host".into(),
            title: "Host".into(),
            rule: ArgType::AsciiIdentifier,
            default: Some("1.5".into()),
            choices: vec![
                Choice {
                    value: "1.5".into(),
                    title: "One and a half".into()
                },
                Choice {
                    value: "1".into(),
                    title: "1".into()
                },
                Choice {
                    value: String::new(),
                    title: String::new()
                },
            ],
            description: "Which host".into(),
            suggestions: vec![
                ("plex".into(), String::new()),
                ("wifi".into(), "WiFi controller".into()),
                ("7".into(), "seven".into()),
            ],
            entity: Some("server".into()),
            reject_null: true,
            dash: crate::arguments::Dash::Allow,
            unknown_program: false,
            from_trigger: false,
        }]
    );
}

#[test]
fn cron_lines_are_checked_at_their_path() {
    let problems = errors(
        "actions:\n  - {title: x, shell: y, execOnCron: ['@every 5m', '61 * * * *']}\n  - {title: z, shell: y, execOnCron: '@sometimes'}\n",
    );
    let got: Vec<(&str, bool)> = problems
        .iter()
        .map(|p| (p.path.as_str(), p.message.contains("invalid cron line")))
        .collect();
    assert_eq!(
        got,
        [
            ("actions[0].execOnCron[1]", true),
            ("actions[1].execOnCron", true)
        ],
        "{problems:?}"
    );
    assert!(problems[0].message.contains("minute: 61 is outside 0-59"));
    // Seconds first, and OliveTin's switch for them, are accepted.
    let (c, warnings) = ok(
        "cronSupportForSeconds: true\nactions:\n  - {title: x, shell: y, execOnCron: '*/10 * * * * *'}\n",
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.actions[0].exec_on_cron, ["*/10 * * * * *"]);
}

#[test]
fn a_scheduled_action_with_a_required_argument_is_warned_about() {
    let (_, warnings) = ok(
        "actions:\n  - title: x\n    shell: echo {{ a }}\n    execOnCron: '@daily'\n    arguments: [{name: a, type: ascii, rejectNull: true}]\n",
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].message.contains("required and has no default"));
    assert_eq!(warnings[0].path, "actions[0]");
}

#[test]
fn action_defaults() {
    let (c, _) = ok(
        "defaultTimeout: 45\ndefaultIconForActions: '&#9731;'\ndefaultPopupOnStart: execution-button\nactions:\n  - title: Bare\n    shell: 'true'\n    arguments:\n      - name: who\n        default: false\n",
    );
    let a = &c.actions[0];
    assert_eq!(a.id, "bare");
    assert_eq!(a.icon, "&#9731;");
    assert_eq!(a.timeout, Duration::from_secs(45));
    assert_eq!(a.popup_on_start, Popup::ExecutionButton);
    assert_eq!(a.max_concurrent, 1);
    assert!(!a.hidden && !a.exec_on_startup);
    assert!(a.max_rate.is_empty() && a.acls.is_empty() && a.exec_on_cron.is_empty());
    assert_eq!(a.working_directory, None);
    assert_eq!(a.entity, None);
    let arg = &a.arguments[0];
    // The title falls back to the name, and a YAML boolean reads as OliveTin reads it.
    assert_eq!(arg.title, "who");
    assert_eq!(arg.rule, ArgType::Untyped);
    assert_eq!(arg.default.as_deref(), Some("0"));
    assert!(!arg.reject_null);
    assert_eq!(arg.dash, crate::arguments::Dash::Refuse);
}

#[test]
fn action_errors_have_exact_paths() {
    let cases: &[(&str, &str, &str)] = &[
        ("actions:\n  - shell: x\n", "actions[0]", "needs a title"),
        ("actions:\n  - title: x\n", "actions[0]", "needs shell"),
        (
            "actions:\n  - {title: x, shell: ''}\n",
            "actions[0].shell",
            "shell is empty",
        ),
        (
            "actions:\n  - {title: x, exec: 'ls -l'}\n",
            "actions[0].exec",
            "exec is a list",
        ),
        (
            "actions:\n  - {title: x, exec: []}\n",
            "actions[0].exec",
            "at least the program",
        ),
        (
            "actions:\n  - {title: x, shell: y, id: 'has space'}\n",
            "actions[0].id",
            "invalid id",
        ),
        (
            "actions:\n  - {title: x, shell: y, id: '{{ x }}'}\n",
            "actions[0].id",
            "invalid id",
        ),
        (
            "actions:\n  - {title: x, shell: y, timeout: 86401}\n",
            "actions[0].timeout",
            "at most 86400 seconds",
        ),
        (
            "actions:\n  - {title: x, shell: y, timeout: soon}\n",
            "actions[0].timeout",
            "expected a whole number",
        ),
        (
            "actions:\n  - {title: x, shell: y, maxConcurrent: many}\n",
            "actions[0].maxConcurrent",
            "expected a whole number",
        ),
        (
            "actions:\n  - {title: x, shell: y, hidden: [true]}\n",
            "actions[0].hidden",
            "expected a boolean",
        ),
        (
            "actions:\n  - {title: x, shell: y, maxRate: [{limit: 0, duration: 1m}]}\n",
            "actions[0].maxRate[0].limit",
            "at least 1",
        ),
        (
            "actions:\n  - {title: x, shell: y, maxRate: [{limit: 1, duration: 5x}]}\n",
            "actions[0].maxRate[0].duration",
            "unknown unit",
        ),
        (
            "actions:\n  - {title: x, shell: y, maxRate: [{limit: 1, duration: 30}]}\n",
            "actions[0].maxRate[0].duration",
            "unit is missing",
        ),
        (
            "actions:\n  - {title: x, shell: y, maxRate: [{limit: 1, duration: 0s}]}\n",
            "actions[0].maxRate[0].duration",
            "longer than zero",
        ),
        (
            "actions:\n  - {title: x, shell: y, maxRate: [{limit: 1, duration: -1m}]}\n",
            "actions[0].maxRate[0].duration",
            "negative",
        ),
        (
            "actions:\n  - {title: x, shell: y, maxRate: [{duration: 1m}]}\n",
            "actions[0].maxRate[0]",
            "needs a limit",
        ),
        (
            "actions:\n  - {title: x, shell: y, maxRate: [{limit: 2}]}\n",
            "actions[0].maxRate[0]",
            "needs a duration",
        ),
        (
            "actions:\n  - {title: x, shell: y, execOnCron: [[a]]}\n",
            "actions[0].execOnCron[0]",
            "expected text, found a list",
        ),
        (
            "actions:\n  - {id: a, title: x, shell: y}\n  - {id: a, title: z, shell: y}\n",
            "actions[1].id",
            "duplicate id \"a\" (first used by actions[0])",
        ),
    ];
    for (text, path, needle) in cases {
        assert_error(text, path, needle);
    }
}

#[test]
fn an_action_with_only_an_id_uses_it_as_title() {
    let (c, _) = ok("actions:\n  - {id: reboot, shell: reboot}\n");
    assert_eq!(c.actions[0].title, "reboot");
}

#[test]
fn unknown_popup_falls_back_to_the_default() {
    let text =
        format!("defaultPopupOnStart: execution-dialog\n{ONE_ACTION}    popupOnStart: fireworks\n");
    assert_warning(
        &text,
        "actions[0].popupOnStart",
        "unknown value \"fireworks\"",
    );
    assert_eq!(
        ok(&text).0.actions[0].popup_on_start,
        Popup::ExecutionDialog
    );
}

#[test]
fn olivetin_leniencies_warn_and_load() {
    for (written, secs) in [("0", 3), ("-5", 3), ("2", 3), ("3", 3), ("86400", 86_400)] {
        let text = format!("{ONE_ACTION}    timeout: {written}\n");
        let (c, warnings) = ok(&text);
        assert_eq!(c.actions[0].timeout, Duration::from_secs(secs), "{written}");
        assert_eq!(
            warnings.len(),
            usize::from(secs == 3 && written != "3"),
            "{warnings:?}"
        );
    }
    assert_warning(
        &format!("{ONE_ACTION}    timeout: 0\n"),
        "actions[0].timeout",
        "timeout 0 is below 3 seconds, so it is 3",
    );
    for (written, n) in [("0", 1), ("-1", 1), ("4", 4)] {
        let (c, _) = ok(&format!("{ONE_ACTION}    maxConcurrent: {written}\n"));
        assert_eq!(c.actions[0].max_concurrent, n, "{written}");
    }
    assert_warning(
        &format!("{ONE_ACTION}    maxConcurrent: 0\n"),
        "actions[0].maxConcurrent",
        "maxConcurrent 0 is below 1, so it is 1",
    );
}

#[test]
fn device_classes_are_home_assistants() {
    let cases: &[(&str, Option<ButtonClass>)] = &[
        ("restart", Some(ButtonClass::Restart)),
        ("identify", Some(ButtonClass::Identify)),
        ("update", Some(ButtonClass::Update)),
        (" restart ", Some(ButtonClass::Restart)),
        ("reboot", None),
        ("Restart", None),
        ("", None),
    ];
    for (class, want) in cases {
        let (c, warnings) = loads(&format!("{ONE_ACTION}    deviceClass: '{class}'\n"));
        assert_eq!(c.actions[0].device_class, *want, "{class:?}");
        // A class Home Assistant does not know is left out, with a warning; the action
        // runs.
        assert_eq!(
            warnings.is_empty(),
            want.is_some(),
            "{class:?}: {warnings:?}"
        );
        assert!(c.actions[0].disabled.is_none());
    }
    assert_warning(
        &format!("{ONE_ACTION}    deviceClass: reboot\n"),
        "actions[0].deviceClass",
        "\"reboot\" is not one of Home Assistant's button classes",
    );
    let (c, _) = ok(ONE_ACTION);
    assert_eq!(c.actions[0].device_class, None);
}
