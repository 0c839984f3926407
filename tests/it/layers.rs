//! The config in layers, seen from outside: a `board:` file below the config and the files of
//! an `overlay:` directory above it are watched like the config itself (an overlay
//! directory made after the start included), switching the board line keeps the users and
//! their sessions, across a restart too, and `--check-config` and the support report say
//! which file each action is in.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{SOON, Server, TempDir, replace, run_binary, to_yaml, wait_until};
use crate::identity::{cookie, phc, who_am_i};
use crate::live_permissions::login;

const ALICE_PW: &str = "alice layers";

/// A board panel with these action ids (each echoes its id), as YAML.
fn panel(title: &str, ids: &[&str]) -> String {
    let actions: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "title": id, "shell": format!("echo {id}")}))
        .collect();
    to_yaml(&json!({"pageTitle": title, "actions": actions}))
}

/// The admin's config: alice, the board `board`, the overlay `config.d`, and `extra`.
fn admin(board: &Path, extra: Value) -> Value {
    let mut config = json!({
        "board": board.to_str().expect("utf-8 path"),
        "overlay": "config.d",
        "authLocalUsers": {"enabled": true, "users": [
            {"username": "alice", "usergroup": "admins", "password": phc(ALICE_PW)},
        ]},
    });
    if let (Some(to), Value::Object(from)) = (config.as_object_mut(), extra) {
        to.extend(from);
    }
    config
}

/// Whether `id` runs (and prints its id), or is unknown.
fn runs(server: &Server, id: &str) -> bool {
    let (status, body) = server.call("StartActionAndWait", json!({"actionId": id}));
    status == 200 && body["logEntry"]["stdout"] == format!("{id}\n")
}

/// Waits for the next reload after `before` of them and for `id` to run.
fn reloaded_and_runs(server: &Server, before: usize, id: &str) {
    assert!(
        wait_until(SOON, || server.log_count("config reloaded") > before),
        "no reload after the change"
    );
    assert!(runs(server, id), "{id} does not run after the reload");
}

#[test]
fn the_board_file_and_the_overlay_directory_are_watched_like_the_config() {
    let boards = TempDir::new();
    let a = boards.path().join("a.yaml");
    let b = boards.path().join("b.yaml");
    std::fs::write(&a, panel("A", &["a1"])).expect("board a");
    std::fs::write(&b, panel("B", &["b1"])).expect("board b");
    let server = Server::start(admin(&a, json!({})));
    assert!(
        wait_until(SOON, || server.log_contains("for changes")),
        "the watcher never started"
    );
    assert!(runs(&server, "a1"));

    // The package's upgrade replaces the board file by a rename.
    let before = server.log_count("config reloaded");
    replace(&a, &panel("A", &["a1", "a2"]));
    reloaded_and_runs(&server, before, "a2");

    // The overlay directory did not exist at the start; made now, its files are read.
    let before = server.log_count("config reloaded");
    let overlay = server.path("config.d");
    std::fs::create_dir(&overlay).expect("config.d");
    std::fs::write(
        overlay.join("10-mine.yaml"),
        to_yaml(&json!({"actions": [{"id": "o1", "title": "o1", "shell": "echo o1"}]})),
    )
    .expect("overlay file");
    reloaded_and_runs(&server, before, "o1");

    // An overlay file written later is seen too (the directory is watched from now on); its
    // action of the board's id replaces the board's.
    let before = server.log_count("config reloaded");
    replace(
        &overlay.join("20-more.yaml"),
        &to_yaml(&json!({"actions": [{"id": "a1", "title": "mine", "shell": "echo mine"}]})),
    );
    assert!(
        wait_until(SOON, || server.log_count("config reloaded") > before),
        "no reload after the second overlay file"
    );
    let entry = server.run("a1");
    assert_eq!(entry["stdout"], "mine\n", "{entry}");

    // The board line switched (what actiond-board does): the other board's actions, and the
    // file of the new board is the one watched.
    let before = server.log_count("config reloaded");
    replace(&server.path("config.yaml"), &to_yaml(&admin(&b, json!({}))));
    reloaded_and_runs(&server, before, "b1");
    assert!(!runs(&server, "a2"), "the old board's action still runs");
    let before = server.log_count("config reloaded");
    replace(&b, &panel("B", &["b1", "b2"]));
    reloaded_and_runs(&server, before, "b2");
}

#[test]
fn a_board_switch_keeps_the_users_and_their_sessions_across_a_restart() {
    let boards = TempDir::new();
    let state = TempDir::new();
    let a = boards.path().join("a.yaml");
    let b = boards.path().join("b.yaml");
    std::fs::write(&a, panel("A", &["a1"])).expect("board a");
    std::fs::write(&b, panel("B", &["b1"])).expect("board b");
    let settings = json!({"stateDirectory": state.path().to_str().expect("utf-8")});
    let server = Server::start(admin(&a, settings.clone()));
    let sid = login(&server, "alice", ALICE_PW);
    let me = |server: &Server| {
        who_am_i(server, &[("Cookie", &cookie(&sid))])["authenticatedUser"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(me(&server), "alice");

    // The switch itself, while the service runs: the users are the admin's, untouched.
    assert!(wait_until(SOON, || server.log_contains("for changes")));
    let before = server.log_count("config reloaded");
    replace(
        &server.path("config.yaml"),
        &to_yaml(&admin(&b, settings.clone())),
    );
    reloaded_and_runs(&server, before, "b1");
    assert_eq!(me(&server), "alice");
    server.stop();

    // And the restart actiond-board does for a drop-in: the session is still alice's.
    let server = Server::start(admin(&b, settings));
    assert_eq!(me(&server), "alice");
    assert!(runs(&server, "b1"));
}

#[test]
fn check_config_and_the_support_report_say_which_file_each_action_is_in() {
    let dir = TempDir::new();
    let board = dir.path().join("board.yaml");
    std::fs::write(&board, panel("Board", &["up", "down"])).expect("board");
    std::fs::create_dir(dir.path().join("config.d")).expect("config.d");
    std::fs::write(
        dir.path().join("config.d/10-local.yaml"),
        to_yaml(&json!({"actions": [
            {"id": "down", "title": "Down, mine", "shell": "echo mine"},
            {"id": "backup", "title": "Backup", "shell": "echo backup"},
        ]})),
    )
    .expect("overlay");
    let config = admin(
        &board,
        json!({"insecureAllowDumpSos": true, "defaultPolicy": {"showDiagnostics": true}}),
    );
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, to_yaml(&config)).expect("config");
    let run = run_binary(
        &["--check-config", path.to_str().expect("utf-8")],
        dir.path(),
        SOON,
    );
    assert_eq!(run.status.code(), Some(0), "{}{}", run.stdout, run.stderr);
    let overlay = dir.path().join("config.d/10-local.yaml");
    for line in [
        format!("  {} (board): up\n", board.display()),
        format!("  {} (config): no actions\n", path.display()),
        format!("  {} (overlay): down, backup\n", overlay.display()),
    ] {
        assert!(
            run.stdout.contains(&line),
            "no {line:?} in:\n{}",
            run.stdout
        );
    }

    // A broken action in an overlay file is named with its file.
    std::fs::write(
        dir.path().join("config.d/20-broken.yaml"),
        "actions:\n  - {id: broken, title: Broken}\n",
    )
    .expect("broken overlay");
    let run = run_binary(
        &["--check-config", path.to_str().expect("utf-8")],
        dir.path(),
        SOON,
    );
    assert_eq!(run.status.code(), Some(2), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("error: config.d/20-broken.yaml: actions[0]: "),
        "{}",
        run.stderr
    );
    std::fs::remove_file(dir.path().join("config.d/20-broken.yaml")).expect("remove");

    // The page's diagnostics: the support report names each file with its actions.
    let server = Server::start(json!({"board": board.to_str(), "overlay": overlay.parent(),
        "insecureAllowDumpSos": true, "defaultPolicy": {"showDiagnostics": true}}));
    let report = server.ok("SosReport", json!({}));
    let text = report["alert"].as_str().expect("the report");
    for line in [
        format!("actions from {} (board): up\n", board.display()),
        format!(
            "actions from {} (overlay): down, backup\n",
            overlay.display()
        ),
    ] {
        assert!(text.contains(&line), "no {line:?} in:\n{text}");
    }
}
