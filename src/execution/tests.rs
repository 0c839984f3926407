//! Tests of `execution`, kept apart so the module reads on its own.

use super::*;
use crate::config::{CommandSpec, CommandTemplate, Popup};
use crate::template::Template;
use std::time::Duration;

#[test]
fn blocked_reasons_read_as_before() {
    let rate = |secs, millis| Blocked::Rate {
        binding_id: "a".into(),
        count: 2,
        window: Duration::from_secs(secs) + Duration::from_millis(millis),
        limit: 2,
    };
    for (b, want) in [
        (
            rate(0, 250),
            "a ran 2 time(s) in the last 250 ms and maxRate allows 2",
        ),
        (
            rate(45, 0),
            "a ran 2 time(s) in the last 45 s and maxRate allows 2",
        ),
        (
            rate(300, 0),
            "a ran 2 time(s) in the last 5 min and maxRate allows 2",
        ),
        (
            rate(7200, 0),
            "a ran 2 time(s) in the last 2 h and maxRate allows 2",
        ),
        (
            Blocked::Executions { running: 3, max: 3 },
            "3 executions are running and maxConcurrentExecutions is 3",
        ),
    ] {
        assert_eq!(b.to_string(), want);
    }
}

pub fn action(id: &str) -> Arc<Action> {
    Arc::new(Action {
        id: id.into(),
        title: format!("Title of {id}"),
        icon: "&#x1F600;".into(),
        command: CommandSpec::Shell("true".into()),
        template: CommandTemplate::Shell(Template::shell("true").unwrap()),
        timeout: Duration::from_secs(30),
        arguments: vec![],
        entity: None,
        hidden: false,
        max_concurrent: 1,
        max_rate: vec![],
        acls: vec![],
        popup_on_start: Popup::Nothing,
        working_directory: None,
        exec_on_startup: false,
        exec_on_cron: vec![],
        exec_on_file_created_in_dir: vec![],
        exec_on_file_changed_in_dir: vec![],
        plain_get: Default::default(),
        device_class: None,
        disabled: None,
        entity_dash: crate::arguments::Dash::Refuse,
    })
}

pub fn execution(id: &str, binding: &str) -> Execution {
    execution_of(id, binding, Holder::Guest(None))
}

/// `execution`, of `holder`.
pub fn execution_of(id: &str, binding: &str, holder: Holder) -> Execution {
    let tid = TrackingId::parse(id).unwrap();
    Execution::new(NewExecution {
        tracking_id: tid,
        binding_id: binding.into(),
        action: action(binding),
        user: "guest".into(),
        user_class: "guest".into(),
        holder,
        by_guest: false,
        tags: vec![],
        arguments: Some(vec![]),
        cause: Cause::Request,
        secret_owner: None,
        secrets: vec![],
        max_output_bytes: 64,
    })
}

#[test]
fn only_a_trigger_gives_values_for_trigger_arguments_and_restarts_keep_the_source() {
    let id = TrackingId::parse("t-1").unwrap();
    let by_request = Cause::Request.restarted(&id);
    let by_trigger = Cause::Trigger.restarted(&id);
    let cases = [
        (Cause::Request, false, "request"),
        (Cause::Trigger, true, "trigger"),
        (by_request.clone(), false, "restart of t-1"),
        (by_trigger.clone(), true, "restart of t-1"),
        (by_request.restarted(&id), false, "restart of t-1"),
        (by_trigger.restarted(&id), true, "restart of t-1"),
    ];
    for (cause, trigger_values, shown) in cases {
        assert_eq!(cause.trigger_values(), trigger_values, "{cause:?}");
        assert_eq!(cause.to_string(), shown);
    }
}

#[test]
fn the_state_table_of_spec_section_4() {
    // (phase, started, finished, blocked, timedOut, exitCode)
    let table = [
        (Phase::Accepted, false, false, false, false, 0),
        (Phase::Running, true, false, false, false, 0),
        (
            Phase::Finished(Outcome::Exited(0)),
            true,
            true,
            false,
            false,
            0,
        ),
        (
            Phase::Finished(Outcome::Exited(3)),
            true,
            true,
            false,
            false,
            3,
        ),
        (
            Phase::Finished(Outcome::Signalled(9)),
            true,
            true,
            false,
            false,
            -1,
        ),
        (
            Phase::Finished(Outcome::Killed(KillReason::User("u".into()), Stop::Kill)),
            true,
            true,
            false,
            false,
            -1,
        ),
        (
            Phase::Finished(Outcome::TimedOut {
                seconds: 1,
                stop: Stop::Term,
            }),
            true,
            true,
            false,
            true,
            -1,
        ),
        (
            Phase::Finished(Outcome::Blocked(Blocked::Executions { running: 1, max: 1 })),
            false,
            true,
            true,
            false,
            -1,
        ),
        (
            Phase::Finished(Outcome::SpawnFailed(SpawnError::EmptyCommand)),
            false,
            true,
            false,
            false,
            -1,
        ),
    ];
    for (phase, started, finished, blocked, timed_out, code) in table {
        let f = phase.flags();
        assert_eq!(
            (
                f.execution_started,
                f.execution_finished,
                f.blocked,
                f.timed_out,
                f.exit_code
            ),
            (started, finished, blocked, timed_out, code),
            "{phase:?}"
        );
    }
}

#[test]
fn tracking_ids() {
    assert_eq!(TrackingId::parse("a.b_c-D9").unwrap(), "a.b_c-D9");
    assert!(TrackingId::parse(&"x".repeat(64)).is_some());
    for bad in ["", "has space", "slash/", "ünï", "semi;colon"] {
        assert!(TrackingId::parse(bad).is_none(), "{bad}");
    }
    assert!(TrackingId::parse(&"x".repeat(65)).is_none());
    let id = TrackingId::random();
    assert_eq!(id.len(), 36);
    assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 4);
}

#[test]
fn random_ids_stay_distinct_version_4_uuids_across_refills_of_the_pool() {
    // Several pools' worth: every id a v4 UUID (RFC 4122 variant), none repeated.
    let ids: Vec<TrackingId> = (0..3 * super::RANDOM_POOL / 16 + 5)
        .map(|_| TrackingId::random())
        .collect();
    let mut seen = std::collections::HashSet::new();
    for id in &ids {
        let uuid = uuid::Uuid::parse_str(id).unwrap();
        assert_eq!(uuid.get_version_num(), 4);
        assert_eq!(uuid.get_variant(), uuid::Variant::RFC4122);
        assert!(seen.insert(id.to_string()), "{id} repeated");
    }
}

#[test]
fn finishing_adds_notices_and_freezes_the_record() {
    let e = execution("t1", "a");
    e.set_running();
    e.push_stdout(b"out");
    e.push_stderr(b"err");
    e.finish(
        Outcome::TimedOut {
            seconds: 5,
            stop: Stop::Kill,
        },
        3,
    );
    let s = e.snapshot();
    assert_eq!(s.stdout, "out");
    assert_eq!(
        s.stderr,
        "err\nactiond: timed out after 5 s; its process group outlived SIGTERM by 3 s and got SIGKILL\n"
    );
    assert!(s.flags.timed_out && s.flags.execution_finished);
    assert_eq!(s.datetime_finished.len(), 19);
    // Later outcomes and output do not change a finished record.
    e.finish(Outcome::Exited(0), 3);
    assert!(e.snapshot().flags.timed_out);
    assert!(!e.request_kill(KillReason::User("x".into())));
}

#[test]
fn truncation_is_reported_in_stderr() {
    let e = execution("t2", "a");
    e.push_stdout(&[b'x'; 100]);
    e.finish(Outcome::Exited(0), 3);
    let s = e.snapshot();
    assert!(
        s.stdout.contains("actiond: … 36 bytes omitted …"),
        "{}",
        s.stdout
    );
    assert!(
        s.stderr
            .contains("actiond: stdout was 100 bytes; 36 bytes in the middle were omitted")
    );
}

#[test]
fn secrets_never_show_in_the_output() {
    let tid = TrackingId::parse("s").unwrap();
    let e = Execution::new(NewExecution {
        tracking_id: tid,
        binding_id: "a".into(),
        action: action("a"),
        user: "u".into(),
        user_class: "g".into(),
        holder: Holder::User("u".into()),
        by_guest: false,
        tags: vec![],
        arguments: Some(vec![]),
        cause: Cause::Request,
        secret_owner: None,
        secrets: vec!["hunter2".into(), "hunter2-long".into(), String::new()],
        max_output_bytes: 1024,
    });
    e.set_running();
    e.push_stdout(b"pw=hunter2 long=hunter2-long empty ok\n");
    assert_eq!(e.snapshot().stdout, "pw=******** long=******** empty ok\n");
    e.push_stderr(b"hunter2");
    e.finish(Outcome::Exited(0), 3);
    let s = e.snapshot();
    assert!(
        !s.stdout.contains("hunter2") && !s.stderr.contains("hunter2"),
        "{s:?}"
    );
    assert_eq!(redact("nothing here".into(), &["x".into()]), "nothing here");
}

#[test]
fn a_running_record_shows_its_output_so_far() {
    let e = execution("t3", "a");
    e.set_running();
    e.push_stdout(b"so far");
    let s = e.snapshot();
    assert_eq!(s.stdout, "so far");
    assert_eq!(s.datetime_finished, "");
    assert!(s.flags.execution_started && !s.flags.execution_finished);
}
