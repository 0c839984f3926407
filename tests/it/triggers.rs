//! Triggers (docs/configuration.md, "Triggers") in real time: start-up runs, an `@every 1s` and a
//! six-field every-second schedule, re-arming on reload (a removed trigger stops, a new one
//! starts, an unchanged one is not doubled), and file triggers fed hostile file names whose
//! details must reach the command as plain text. Each run is checked in the history too:
//! the system user that ran it and the tags naming the trigger.
//!
//! Waits are bounds, not expectations: a schedule that fires once a second is given seconds to
//! fire a few times, and "no duplicate timer" is judged by an upper bound that a doubled timer
//! would break whatever the machine's speed.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{SOON, Server, TempDir, fd_count, to_yaml, wait_until};

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// Every entry in the history (page size raised by the configs below).
fn history(server: &Server) -> Vec<Value> {
    let reply = server.ok("GetLogs", json!({"startOffset": 0}));
    reply["logs"].as_array().cloned().unwrap_or_default()
}

fn entries_of(server: &Server, action: &str) -> Vec<Value> {
    history(server)
        .into_iter()
        .filter(|e| e["actionId"] == action)
        .collect()
}

#[test]
fn startup_actions_run_once_as_the_startup_user_even_where_guests_must_log_in() {
    // Guests must log in, and the defaults are off for everyone: the ACL grants the
    // trigger users' group `system` exec, and the gate does not stop them.
    let yaml = "\
authRequireGuestsToLogin: true
defaultPermissions: {view: false, exec: false, logs: false, kill: false}
accessControlLists:
  - {name: triggers, matchUsergroups: [system], permissions: {exec: true}}
actions:
  - {id: boot, title: Boot, shell: 'echo booted >> boot.log', execOnStartup: true, acls: [triggers]}
  - {id: idle, title: Idle, shell: 'echo idle >> idle.log', acls: [triggers]}
  - {id: refused, title: Refused, shell: 'echo no >> refused.log', execOnStartup: true}
";
    let server = Server::start_yaml(yaml);
    let boot = server.path("boot.log");
    assert!(wait_until(SOON, || lines(&boot) == 1), "the start-up run");
    assert!(!server.path("idle.log").exists());
    assert!(
        !server.path("refused.log").exists(),
        "no ACL grants exec on it"
    );
    assert!(wait_until(SOON, || server
        .log_contains("startup trigger of refused: not started")));
    // The guest is still refused: the trigger user is not the guest.
    let (status, _) = server.call("GetLogs", json!({"startOffset": 0}));
    assert_eq!(status, 401);
    // That it stays one over minutes is timed on the virtual clock (tests/virtual_clock.rs).
    assert_eq!(lines(&boot), 1, "start-up runs once");
}

#[test]
fn startup_runs_are_recorded_with_the_system_user_and_a_tag() {
    let yaml = "\
logHistoryPageSize: 100
actions:
  - {id: boot, title: Boot, shell: 'echo hello', execOnStartup: true}
";
    let server = Server::start_yaml(yaml);
    assert!(wait_until(SOON, || entries_of(&server, "boot")
        .iter()
        .any(|e| e["executionFinished"] == true)));
    let e = &entries_of(&server, "boot")[0];
    assert_eq!(e["user"], "startup");
    assert_eq!(e["userClass"], "system");
    assert_eq!(e["tags"], json!(["startup"]));
    assert_eq!(e["stdout"], "hello\n");
    assert_eq!(e["exitCode"], 0);
}

#[test]
fn schedules_fire_every_second_and_follow_reloads() {
    let config = |actions: Vec<Value>| json!({"logHistoryPageSize": 200, "actions": actions});
    let tick = json!({"id": "tick", "title": "Tick", "shell": "echo . >> tick.log",
                      "execOnCron": "@every 1s"});
    let gone = json!({"id": "gone", "title": "Gone", "shell": "echo . >> gone.log",
                      "execOnCron": ["* * * * * *"]});
    let server = Server::start(config(vec![tick.clone(), gone]));
    let (tick_log, gone_log) = (server.path("tick.log"), server.path("gone.log"));
    assert!(wait_until(SOON, || lines(&tick_log) >= 3), "@every 1s");
    assert!(wait_until(SOON, || lines(&gone_log) >= 2), "six fields");

    let e = entries_of(&server, "tick").remove(0);
    assert_eq!(e["user"], "cron");
    assert_eq!(e["userClass"], "system");
    assert_eq!(e["tags"], json!(["cron", "@every 1s"]));
    assert_eq!(
        entries_of(&server, "gone")[0]["tags"],
        json!(["cron", "* * * * * *"])
    );

    // Reload: `tick` unchanged, `gone` removed, `tock` new.
    let tock = json!({"id": "tock", "title": "Tock", "shell": "echo . >> tock.log",
                      "execOnCron": "@every 1s"});
    let new = to_yaml(&config(vec![tick, tock]));
    let tmp = server.path("config.yaml.tmp");
    std::fs::write(&tmp, new).unwrap();
    std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
    let tock_log = server.path("tock.log");
    assert!(
        wait_until(SOON, || lines(&tock_log) >= 1),
        "the new trigger"
    );
    // A run of `gone` may have been under way while the reload landed: counted from the
    // second run of `tock` on, a second after it.
    assert!(wait_until(SOON, || lines(&tock_log) >= 2));
    let (ticks, gones, tocks) = (lines(&tick_log), lines(&gone_log), lines(&tock_log));
    assert!(wait_until(SOON, || lines(&tock_log) >= tocks + 5));
    assert_eq!(lines(&gone_log), gones, "a removed trigger stops");
    // While `tock` runs 5 times, the one timer of `tick` runs 5 times, give or take one at
    // either edge and one for the load; two timers would run about 10. The exact rhythm is
    // timed on the virtual clock (tests/virtual_clock.rs).
    let more_ticks = lines(&tick_log) - ticks;
    assert!(
        (3..=7).contains(&more_ticks),
        "{more_ticks} ticks while tock ran 5 times"
    );
}

#[test]
fn a_schedule_obeys_the_permission_function_and_the_limits() {
    let yaml = "\
logHistoryPageSize: 200
defaultPermissions: {view: true, exec: false, logs: true, kill: false}
accessControlLists:
  - {name: triggers, matchUsergroups: [system], permissions: {exec: true}}
actions:
  - {id: denied, title: Denied, shell: 'echo . >> denied.log', execOnCron: '@every 1s'}
  - {id: slow, title: Slow, shell: 'sleep 3', execOnCron: '@every 1s', acls: [triggers]}
";
    let server = Server::start_yaml(yaml);
    // `slow` runs (the ACL grants the system group exec) and, with maxConcurrent 1, the
    // ticks that come while it runs are recorded as blocked.
    assert!(wait_until(SOON, || entries_of(&server, "slow")
        .iter()
        .any(|e| e["blocked"] == true)));
    let slow = entries_of(&server, "slow");
    assert!(slow.iter().any(|e| e["executionStarted"] == true));
    assert!(slow.iter().all(|e| e["user"] == "cron"));
    // `denied` never ran and left no entry.
    assert!(entries_of(&server, "denied").is_empty());
    assert!(!server.path("denied.log").exists());
}

/// Names a shell would act on if any of them reached it unquoted. The canary for each is a
/// file named `pwned` in the commands' working directory.
const HOSTILE: &[&str] = &[
    "; touch pwned",
    "$(touch pwned)",
    "`touch pwned`",
    "x && touch pwned",
    "it's \"quoted\"",
    "new\nline; touch pwned",
    "  spaced  name .txt",
    "$HOME-{{ filename }}",
    // A name starting with `-` is not run for: `a_file_named_like_an_option_...`.
];

#[test]
fn file_triggers_pass_hostile_names_as_plain_text() {
    let inbox = TempDir::new();
    let dir = inbox.path().to_str().unwrap().to_string();
    let config = json!({
        "logHistoryPageSize": 200,
        "actions": [{
            "id": "seen", "title": "Seen", "maxConcurrent": 20,
            "shell": "printf '[%s][%s][%s][%s][%s]' {{ filepath }} {{ filename }} {{ filedir }} \
                      {{ fileext }} {{ filesizebytes }}; printf '%s' \"$FILENAME\" >&2",
            "execOnFileCreatedInDir": dir,
        }]
    });
    let server = Server::start(config);
    // Give the watch a moment to be in place (it is armed as the service starts).
    assert!(wait_until(SOON, || server
        .log_contains("fileCreatedInDir of seen: watching")));
    for (i, name) in HOSTILE.iter().enumerate() {
        std::fs::write(inbox.path().join(name), "x".repeat(i)).unwrap();
    }
    let done = || {
        entries_of(&server, "seen")
            .iter()
            .filter(|e| e["executionFinished"] == true)
            .count()
    };
    assert!(
        wait_until(SOON, || done() == HOSTILE.len()),
        "{} of {} runs",
        done(),
        HOSTILE.len()
    );
    let entries = entries_of(&server, "seen");
    for (i, name) in HOSTILE.iter().enumerate() {
        let path = format!("{dir}/{name}");
        let ext = Path::new(name)
            .extension()
            .map(|e| e.to_str().unwrap())
            .unwrap_or("");
        let want = format!("[{path}][{name}][{dir}][{ext}][{i}]");
        let e = entries
            .iter()
            .find(|e| e["stdout"] == want.as_str())
            .unwrap_or_else(|| panic!("no run printed {want:?}: {entries:#?}"));
        assert_eq!(e["stderr"], *name, "the FILENAME variable");
        assert_eq!(e["exitCode"], 0);
        assert_eq!(e["user"], "fileindir");
        assert_eq!(e["userClass"], "system");
        assert_eq!(e["tags"], json!(["fileCreatedInDir", dir]));
    }
    assert!(!server.path("pwned").exists(), "a file name was run");
    assert!(!inbox.path().join("pwned").exists(), "a file name was run");
}

/// A symlink dropped into a watched directory would hand the action another file than the
/// one dropped (`holiday.jpg -> /etc/shadow`, copied to a share by a command running as root,
/// fe30n F5), a FIFO would hang it, and a directory carries names its dropper chose (fe30u
/// F11: `mv {{ filepath }} /srv/www/current.pdf` placed `current.pdf/.htaccess`): none is run
/// for, and the log says why; a regular file beside them is.
#[test]
fn a_dropped_symlink_fifo_or_directory_is_not_run_for() {
    let inbox = TempDir::new();
    let secret = TempDir::new();
    std::fs::write(secret.path().join("secret"), "SECRET").unwrap();
    let dir = inbox.path().to_str().unwrap().to_string();
    let server = Server::start(json!({
        "actions": [{
            "id": "share", "title": "Share", "maxConcurrent": 5,
            "shell": "cat {{ filepath }}",
            "execOnFileCreatedInDir": dir,
        }]
    }));
    assert!(wait_until(SOON, || server
        .log_contains("fileCreatedInDir of share: watching")));
    std::os::unix::fs::symlink(
        secret.path().join("secret"),
        inbox.path().join("holiday.jpg"),
    )
    .unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(inbox.path().join("pipe.jpg"))
        .status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    std::fs::create_dir(inbox.path().join("album.jpg")).unwrap();
    std::fs::write(inbox.path().join("album.jpg").join(".htaccess"), "x").unwrap();
    std::fs::write(inbox.path().join("real.jpg"), "PHOTO").unwrap();
    assert!(wait_until(SOON, || entries_of(&server, "share")
        .iter()
        .any(
            |e| e["stdout"] == "PHOTO" && e["executionFinished"] == true
        )));
    assert!(server.log_shows("\"holiday.jpg\" in"));
    assert!(server.log_shows("\"pipe.jpg\" in"));
    assert!(server.log_shows("\"album.jpg\" in"));
    // Time for a run of the others, were there one.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let runs = entries_of(&server, "share");
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert!(!runs.iter().any(|e| e["stdout"] == "SECRET"));
}

#[test]
fn a_changed_file_runs_once_per_quiet_spell() {
    let inbox = TempDir::new();
    let dir = inbox.path().to_str().unwrap().to_string();
    let config = json!({
        "logHistoryPageSize": 200,
        "actions": [{
            "id": "changed", "title": "Changed",
            "shell": "echo {{ filename }}:{{ filesizebytes }}",
            "execOnFileChangedInDir": dir,
        }]
    });
    let server = Server::start(config);
    assert!(wait_until(SOON, || server
        .log_contains("fileChangedInDir of changed: watching")));
    let file = inbox.path().join("data.csv");
    // Five writes in a burst are one change.
    for n in 1..=5 {
        std::fs::write(&file, "y".repeat(n)).unwrap();
    }
    let outputs = || -> Vec<String> {
        entries_of(&server, "changed")
            .iter()
            .filter(|e| e["executionFinished"] == true)
            .map(|e| e["stdout"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(wait_until(SOON, || outputs().len() == 1));
    // Another file changed after the burst's run: a second run for the burst, had there been
    // one, would have started before this file's (its quiet spell ends first), so once this
    // file's run is seen and every run has finished, the burst's runs are all there.
    std::fs::write(inbox.path().join("other.csv"), "o").unwrap();
    assert!(wait_until(SOON, || {
        let all = entries_of(&server, "changed");
        all.len() == outputs().len() && outputs().contains(&"other.csv:1\n".to_string())
    }));
    assert_eq!(outputs(), ["other.csv:1\n", "data.csv:5\n"]);
    // A later change is another run.
    std::fs::write(&file, "zz").unwrap();
    assert!(wait_until(SOON, || outputs().len() == 3));
    assert_eq!(outputs()[0], "data.csv:2\n", "newest first");
}

#[test]
fn file_details_come_from_the_trigger_alone() {
    // A person may press the button of a file-triggered action, but may not choose the file:
    // the trigger's arguments are not offered and a value sent by hand is refused, so nobody
    // can point an upload handler at /etc/shadow. A restart repeats what the trigger gave.
    let inbox = TempDir::new();
    let dir = inbox.path().to_str().unwrap().to_string();
    let server = Server::start(json!({
        "logHistoryPageSize": 200,
        "actions": [{
            "id": "upload", "title": "Upload",
            "shell": "printf '[%s]' {{ filepath }}",
            "execOnFileCreatedInDir": dir,
        }]
    }));
    let binding = server.ok("GetActionBinding", json!({"bindingId": "upload"}));
    assert_eq!(
        binding["action"]["arguments"],
        json!([]),
        "trigger arguments offered to people: {binding}"
    );
    let (status, reply) = server.call(
        "StartActionAndWait",
        json!({"actionId": "upload", "arguments": [{"name": "filepath", "value": "/etc/shadow"}]}),
    );
    assert_eq!(status, 400, "{reply}");
    assert_eq!(reply["code"], "invalid_argument", "{reply}");
    assert!(
        reply["message"].as_str().unwrap().contains("filepath"),
        "{reply}"
    );
    // By hand without the file details: the command runs with them empty.
    let by_hand = server.ok("StartActionAndWait", json!({"actionId": "upload"}));
    assert_eq!(by_hand["logEntry"]["stdout"], "[]", "{by_hand}");

    assert!(wait_until(SOON, || server
        .log_contains("fileCreatedInDir of upload: watching")));
    std::fs::write(inbox.path().join("photo.jpg"), "x").unwrap();
    let want = format!("[{dir}/photo.jpg]");
    // Finished, not only printed: a restart while it still runs is blocked (maxConcurrent 1),
    // which under load it was now and then.
    let triggered = || {
        entries_of(&server, "upload").into_iter().find(|e| {
            e["stdout"] == want.as_str()
                && e["user"] == "fileindir"
                && e["executionFinished"] == true
        })
    };
    assert!(wait_until(SOON, || triggered().is_some()));
    let id = triggered().unwrap()["executionTrackingId"].clone();
    let restarted = server.ok("RestartAction", json!({"executionTrackingId": id}));
    let new_id = restarted["executionTrackingId"].clone();
    assert!(wait_until(SOON, || entries_of(&server, "upload")
        .iter()
        .any(|e| {
            e["executionTrackingId"] == new_id && e["stdout"] == want.as_str()
        })));
}

#[test]
fn a_restart_cannot_carry_a_persons_value_into_a_trigger_argument() {
    // A person ran the action when `filepath` was an ordinary argument of theirs; the config
    // then gave the action a file trigger, which fills `filepath` itself. Restarting the
    // person's run repeats the person's value, not a trigger's: it is refused like a start
    // by hand, so a reload cannot turn an old value into a file the trigger vouches for.
    let inbox = TempDir::new();
    let action = |trigger: bool| {
        let mut a =
            json!({"id": "handle", "title": "Handle", "shell": "printf '[%s]' {{ filepath }}"});
        if trigger {
            a["execOnFileCreatedInDir"] = json!(inbox.path().to_str().unwrap());
        } else {
            a["arguments"] = json!([{"name": "filepath", "type": "very_dangerous_raw_string"}]);
        }
        to_yaml(&json!({"actions": [a]}))
    };
    let server = Server::start_yaml(&action(false));
    let run = server.ok(
        "StartActionAndWait",
        json!({"actionId": "handle", "arguments": [{"name": "filepath", "value": "/etc/shadow"}]}),
    );
    assert_eq!(run["logEntry"]["stdout"], "[/etc/shadow]", "{run}");
    let id = run["logEntry"]["executionTrackingId"].clone();

    let tmp = server.path("config.yaml.tmp");
    std::fs::write(&tmp, action(true)).unwrap();
    std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
    assert!(wait_until(SOON, || server
        .log_contains("fileCreatedInDir of handle: watching")));
    let (status, reply) = server.call("RestartAction", json!({"executionTrackingId": id}));
    assert_eq!(status, 400, "{reply}");
    assert_eq!(reply["code"], "invalid_argument", "{reply}");
    assert!(
        reply["message"].as_str().unwrap().contains("filepath"),
        "{reply}"
    );
    assert_eq!(entries_of(&server, "handle").len(), 1, "nothing new ran");
}

#[test]
fn re_arming_file_triggers_leaks_no_descriptor() {
    let (a, b) = (TempDir::new(), TempDir::new());
    let config = |dir: &Path, title: &str| {
        to_yaml(&json!({
            "actions": [{"id": "w", "title": title, "shell": "true",
                         "execOnFileChangedInDir": dir.to_str().unwrap()}]
        }))
    };
    let server = Server::start_yaml(&config(a.path(), "first"));
    let watches = || server.log_count("fileChangedInDir of w: watching");
    assert!(wait_until(SOON, || watches() == 1));
    let before = fd_count(server.pid());
    // Each reload moves the watch to the other directory: the old one must be closed.
    for round in 0..6 {
        let dir = if round % 2 == 0 { b.path() } else { a.path() };
        let tmp = server.path("config.yaml.tmp");
        std::fs::write(&tmp, config(dir, &format!("round {round}"))).unwrap();
        std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
        assert!(wait_until(SOON, || watches() == round + 2), "round {round}");
    }
    // A reload that changes something else leaves the watch alone (no new one is armed).
    let tmp = server.path("config.yaml.tmp");
    std::fs::write(&tmp, config(a.path(), "same directory")).unwrap();
    std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
    assert!(wait_until(SOON, || entries_title_is(
        &server,
        "same directory"
    )));
    assert!(
        wait_until(SOON, || fd_count(server.pid()) <= before),
        "{} descriptors after the reloads, {before} before",
        fd_count(server.pid())
    );
    // The triggers re-arm in the order of the reloads: a watch moved to `b` by one more
    // reload comes after a second watch of `a`, had that reload armed one.
    let watching = |dir: &Path| {
        server.log_count(&format!(
            "fileChangedInDir of w: watching {}",
            dir.display()
        ))
    };
    let tmp = server.path("config.yaml.tmp");
    std::fs::write(&tmp, config(b.path(), "moved again")).unwrap();
    std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
    assert!(wait_until(SOON, || watching(b.path()) == 4));
    assert_eq!(watching(a.path()), 4, "the first watch and rounds 1, 3, 5");
    assert_eq!(watches(), 8);
}

/// Whether the action `w` carries `title` (the reload that set it has landed).
fn entries_title_is(server: &Server, title: &str) -> bool {
    let (status, reply) = server.call("GetActionBinding", json!({"bindingId": "w"}));
    status == 200 && reply["action"]["title"] == title
}

/// 2,000 files dropped at once in a watched directory, half with names that are not UTF-8,
/// for an action the trigger user may not run: every line they cause (a bad name, files
/// ignored beyond the waiting bound, a run not started) is rate-limited, and what was left out
/// is counted, not lost silently.
#[test]
fn a_flood_of_files_costs_the_log_a_bounded_number_of_lines() {
    use std::os::unix::ffi::OsStrExt;
    let inbox = TempDir::new();
    let config = json!({
        "defaultPermissions": {"view": true, "exec": false, "logs": true, "kill": false},
        "actions": [{
            "id": "dropped", "title": "Dropped", "shell": "echo {{ filename }}",
            "execOnFileCreatedInDir": inbox.path().to_str().unwrap(),
        }]
    });
    let server = Server::start(config);
    assert!(wait_until(SOON, || server
        .log_contains("fileCreatedInDir of dropped: watching")));
    for i in 0..2000u32 {
        // A lone 0xFF byte: not UTF-8.
        let bytes = if i % 2 == 0 {
            [b"bad-\xff".as_slice(), i.to_string().as_bytes()].concat()
        } else {
            format!("good-{i}.txt").into_bytes()
        };
        std::fs::write(inbox.path().join(std::ffi::OsStr::from_bytes(&bytes)), "x").unwrap();
    }
    // Each kind is summed up once its budget allows (within one period, 10 s).
    let said = |needle: &str| server.log_contains(needle);
    assert!(
        wait_until(Duration::from_secs(25), || said(
            "more lines about file names not UTF-8 left out of the log"
        ) && said(
            "more lines about triggers not started left out of the log"
        )),
        "no summary of the lines left out"
    );
    let log = server.stop_and_log();
    let caused: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("of dropped:") || l.contains("left out of the log"))
        .filter(|l| !l.contains(": watching"))
        .collect();
    assert!(
        caused.len() <= 40,
        "{} lines for 2,000 files:\n{}",
        caused.len(),
        caused.join("\n")
    );
    assert!(log.contains("is not UTF-8; not run for it"), "{log}");
    assert!(
        log.contains("fileindir trigger of dropped: not started"),
        "{log}"
    );
}

/// A file named like an option (`-rf`, `--help`, `-`, an extension `--y`) would reach the
/// program as one, quoted or not: its run is refused, and the log names the file and how to
/// allow such names; an action that declares `filename` with `allowLeadingDash: true` runs
/// for them (and passes `--` before it).
#[test]
fn a_file_named_like_an_option_is_not_run_for_unless_allowed() {
    let inbox = TempDir::new();
    let dir = inbox.path().to_str().unwrap().to_string();
    let config = json!({
        "actions": [
            {"id": "byname", "title": "N", "maxConcurrent": 10,
             "shell": "printf '[%s]' {{ filename }}", "execOnFileCreatedInDir": dir},
            {"id": "allowed", "title": "A", "maxConcurrent": 10,
             "shell": "printf '[%s]' -- {{ filename }}", "execOnFileCreatedInDir": dir,
             "arguments": [{"name": "filename", "type": "very_dangerous_raw_string",
                            "allowLeadingDash": true}]},
        ]
    });
    let server = Server::start(config);
    assert!(wait_until(SOON, || server
        .log_contains("fileCreatedInDir of allowed: watching")));
    let dashed = ["-rf", "--help", "-"];
    for name in dashed.iter().chain(&["x.--y", "ok.txt"]) {
        std::fs::write(inbox.path().join(name), "x").unwrap();
    }
    let printed = |action: &str| -> Vec<String> {
        let mut out: Vec<String> = entries_of(&server, action)
            .iter()
            .filter(|e| e["executionFinished"] == true)
            .map(|e| e["stdout"].as_str().unwrap().to_string())
            .collect();
        out.sort();
        out
    };
    // `allowed` runs for every name but the one whose extension starts with `-`.
    assert!(
        wait_until(SOON, || printed("allowed").len() == 4),
        "{:?}",
        printed("allowed")
    );
    assert_eq!(
        printed("allowed"),
        ["[--][--help]", "[--][-]", "[--][-rf]", "[--][ok.txt]"]
    );
    // Five refusals (four of `byname`, `x.--y` of `allowed`): within the rate limit, each said.
    assert!(wait_until(SOON, || server.log_count("not started") == 5));
    assert_eq!(printed("byname"), ["[ok.txt]"]);
    for name in dashed.iter().chain(&["x.--y"]) {
        let file = format!("the file {dir}/{name}: not run for it");
        assert!(server.log_contains(&file), "{file}");
    }
    assert!(server.log_contains(
        "trigger of byname: not started: argument \"filename\": must not start with '-'"
    ));
    assert!(server.log_contains("declare the argument \"fileext\" with `allowLeadingDash: true`"));
    assert!(server.log_contains("Pass {{ filepath }}, which is absolute"));
}
