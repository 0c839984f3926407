//! Files put in actiond's way, as a careless script or a local attacker would: a FIFO in place
//! of an entity file, an include, the config or the sessions file (which a blocking open would
//! wait on for ever); a config written in two steps a second or seconds apart, or written
//! in part and held open by its writer past the entity files' 10 s; an entity file rewritten every second while the config changes; a
//! reload that takes rights away from nobody but gives them to guests; a sessions file of
//! 300,000 entries. Throughout, readiness must answer within a second, and what the file could
//! not give keeps what was there before.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Request, send};
use crate::harness::{
    SOON, Server, TempDir, UNTIL_STOPPED, poll_every, repeat_for, replace, run_binary, to_yaml,
    wait_until, write,
};
use crate::identity::{phc, sha256_hex};
use crate::live_permissions::login;

/// A reload waits for files to settle (2 s of quiet and two equal reads): its effect is
/// expected within this.
const RELOAD: Duration = Duration::from_secs(10);

/// Readiness under test must answer within this.
const PROMPT: Duration = Duration::from_secs(1);

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.expect("mkfifo").success(), "mkfifo {}", path.display());
}

/// Replaces `path` by a FIFO the way `mkfifo f && mv f <path>` does.
fn fifo_over(path: &Path) {
    let tmp = path.with_extension("fifo-tmp");
    mkfifo(&tmp);
    std::fs::rename(&tmp, path).expect("mv the FIFO over the file");
}

/// GET /readyz on a fresh connection, which must answer 200 within `PROMPT`.
fn assert_ready_promptly(server: &Server) {
    let began = Instant::now();
    let resp = send(server.addr, &Request::get("/readyz"));
    let took = began.elapsed();
    assert_eq!(resp.status, 200, "readyz: {}", resp.text());
    assert!(took < PROMPT, "readyz took {took:?}");
}

/// Waits until the log holds `needle` `n` times, checking readiness all along.
fn wait_log_ready(server: &Server, needle: &str, n: usize) {
    let said = poll_every(Duration::from_millis(100), RELOAD, || {
        if server.log_count(needle) >= n {
            return Some(());
        }
        assert_ready_promptly(server);
        None
    });
    assert!(said.is_some(), "the log never said {needle:?} ({n} times)");
}

/// Asks for readiness every 100 ms for `period`: each answer must be prompt.
fn ready_all_along(server: &Server, period: Duration) {
    repeat_for(period, Duration::from_millis(100), || {
        assert_ready_promptly(server);
        true
    });
}

fn watching(server: &Server) {
    assert!(
        wait_until(SOON, || server.log_contains("for changes")),
        "the service never said it watches its files"
    );
}

/// The titles of the instances of entity type `kind`.
fn titles(server: &Server, kind: &str) -> Vec<String> {
    let reply = server.ok("GetEntities", json!({}));
    let defs = reply["entityDefinitions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let Some(def) = defs.iter().find(|d| d["title"] == kind) else {
        return Vec::new();
    };
    def["instances"]
        .as_array()
        .expect("instances")
        .iter()
        .map(|i| i["title"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn entity_config(file: &str) -> Value {
    json!({
        "killGracePeriod": 1,
        "entities": [{"file": file, "name": "server"}],
        "actions": [{"id": "ping", "title": "Ping {{ .CurrentEntity.title }}",
                     "shell": "true", "entity": "server"},
                    {"id": "hello", "title": "Hello", "shell": "echo hello"}],
    })
}

#[test]
fn an_entity_file_replaced_by_a_fifo_keeps_its_instances_and_the_service_answers() {
    let server = Server::start(entity_config("servers.yaml"));
    watching(&server);
    std::fs::write(server.path("servers.yaml"), "- {title: alpha}\n").unwrap();
    wait_log_ready(&server, "entities reloaded", 1);
    assert_eq!(titles(&server, "server"), ["alpha"]);

    fifo_over(&server.path("servers.yaml"));
    wait_log_ready(&server, "a FIFO (named pipe), not a regular file", 1);
    assert!(server.log_shows("its previous instances stay"));
    assert_eq!(titles(&server, "server"), ["alpha"]);
    ready_all_along(&server, Duration::from_secs(1));
    // The watcher lives on: a file again is read again.
    let tmp = server.path("servers.yaml.tmp");
    std::fs::write(&tmp, "- {title: beta}\n").unwrap();
    std::fs::rename(&tmp, server.path("servers.yaml")).unwrap();
    wait_log_ready(&server, "entities reloaded", 2);
    assert_eq!(titles(&server, "server"), ["beta"]);
}

#[test]
fn a_fifo_as_entity_file_or_sessions_file_at_start_is_refused_and_the_service_starts() {
    let elsewhere = TempDir::new();
    let fifo = elsewhere.path().join("servers.yaml");
    mkfifo(&fifo);
    let state = TempDir::new();
    mkfifo(&state.path().join("sessions.json"));
    mkfifo(&state.path().join("history.jsonl"));
    let mut config = entity_config(fifo.to_str().unwrap());
    config["stateDirectory"] = json!(state.path());
    let server = Server::start(config);
    assert_ready_promptly(&server);
    assert!(
        wait_until(SOON, || server.log_contains("a FIFO (named pipe)")),
        "the log does not name the FIFO"
    );
    assert!(server.log_shows("cannot read the sessions file"));
    assert_eq!(titles(&server, "server"), Vec::<String>::new());
    assert!(server.log_shows("cannot read the history file"));
    // The FIFOs in the state directory were replaced by real (empty) files, and runs are
    // recorded.
    for name in ["sessions.json", "history.jsonl"] {
        let meta = std::fs::metadata(state.path().join(name)).unwrap();
        assert!(meta.is_file(), "{name} is still not a file");
    }
    let entry = server.run("hello");
    assert_eq!(entry["exitCode"], 0, "{entry}");
}

#[test]
fn a_fifo_as_config_or_include_is_refused_on_reload_and_at_start() {
    // The include directory must exist before the service starts.
    let include_dir = TempDir::new();
    std::fs::create_dir(include_dir.path().join("config.d")).unwrap();
    let server = Server::start(json!({
        "killGracePeriod": 1,
        "include": include_dir.path().join("config.d"),
        "actions": [{"id": "a", "title": "A", "shell": "true"}],
    }));
    watching(&server);

    // A FIFO made in the include directory is only created (no text comes with it): it is
    // met by the next reload, here a config saved again.
    mkfifo(&include_dir.path().join("config.d/50-fifo.yaml"));
    let text = std::fs::read_to_string(server.path("config.yaml")).unwrap();
    std::fs::write(server.path("config.yaml.tmp"), text).unwrap();
    std::fs::rename(server.path("config.yaml.tmp"), server.path("config.yaml")).unwrap();
    wait_log_ready(&server, "config not reloaded", 1);
    assert!(server.log_shows("a FIFO (named pipe)"));
    std::fs::remove_file(include_dir.path().join("config.d/50-fifo.yaml")).unwrap();

    fifo_over(&server.path("config.yaml"));
    wait_log_ready(&server, "config not reloaded", 2);
    ready_all_along(&server, Duration::from_millis(500));
    let entry = server.run("a");
    assert_eq!(entry["exitCode"], 0, "{entry}");

    // At start, before anything listens: refused at once with the reason, no hang.
    let dir = TempDir::new();
    let fifo = dir.path().join("config.yaml");
    mkfifo(&fifo);
    let out = run_binary(
        &[
            "--config",
            fifo.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        dir.path(),
        SOON,
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("a FIFO (named pipe)"), "{}", out.stderr);
    let out = run_binary(
        &["--check-config", fifo.to_str().unwrap()],
        dir.path(),
        SOON,
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
}

/// The locked config: guests may view and read logs; only admins may run `reboot`, through
/// an ACL added to every action (an action that named the ACL would be disabled, not opened,
/// by a config that lost it; this one falls open without its rules, as the tester's did).
fn locked() -> Value {
    json!({
        "killGracePeriod": 1,
        "defaultPermissions": {"view": true, "exec": false, "logs": true, "kill": false},
        "authLocalUsers": {"enabled": true, "users": [
            {"username": "alice", "usergroup": "admins", "password": phc("alice pw")}]},
        "accessControlLists": [{"name": "admin", "matchUsergroups": ["admins"],
                                "addToEveryAction": true,
                                "permissions": {"exec": true, "kill": true}}],
        "actions": [{"id": "reboot", "title": "Reboot", "shell": "echo rebooted"}],
    })
}

/// Whether the guest may start `reboot` now.
fn guest_may_reboot(server: &Server) -> bool {
    let (status, _) = server.call("StartAction", json!({"actionId": "reboot"}));
    status == 200
}

/// A script writes the config with `>`, then appends its access rules with `>>` 1.2 s later:
/// the first half alone (OliveTin's allow-all defaults) must never be in force.
#[test]
fn a_config_written_in_two_steps_is_applied_once_whole() {
    let server = Server::start(locked());
    watching(&server);
    assert!(!guest_may_reboot(&server));
    // The first half has everything but the access rules; the second appends them.
    let mut whole = locked();
    whole["actions"][0]["title"] = json!("Reboot now");
    let mut rest = json!({});
    for key in ["accessControlLists", "defaultPermissions"] {
        rest[key] = whole.as_object_mut().unwrap().remove(key).unwrap();
    }
    let (first, second) = (to_yaml(&whole), to_yaml(&rest));
    let path = server.path("config.yaml");
    std::fs::write(&path, &first).unwrap();
    repeat_for(
        Duration::from_millis(1200),
        Duration::from_millis(50),
        || {
            assert!(!guest_may_reboot(&server), "the first half is in force");
            true
        },
    );
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(second.as_bytes()).unwrap();
    drop(f);
    wait_log_ready(&server, "config reloaded", 1);
    repeat_for(Duration::from_secs(4), Duration::from_millis(100), || {
        assert!(!guest_may_reboot(&server), "a guest may reboot");
        true
    });
    assert_eq!(
        server.log_count("config reloaded"),
        1,
        "applied once, whole"
    );
    let (status, body) = server.call("GetDashboard", json!({"title": ""}));
    assert_eq!(status, 200);
    assert!(body.to_string().contains("Reboot now"), "{body}");
    assert!(!server.log_contains("what they did not have"));
}

/// The locked config with its reboot retitled, split into the part before the access rules
/// (OliveTin's allow-all defaults, alone) and the rules.
fn halves() -> (String, String) {
    halves_without(&["accessControlLists", "defaultPermissions"])
}

/// The locked config with its reboot retitled, split into the part without `keys` and them.
fn halves_without(keys: &[&str]) -> (String, String) {
    split(locked(), keys)
}

/// `whole` with its reboot retitled, split into the part without `keys` and them.
fn split(mut whole: Value, keys: &[&str]) -> (String, String) {
    whole["actions"][0]["title"] = json!("Reboot now");
    let mut rest = json!({});
    for &key in keys {
        rest[key] = whole.as_object_mut().unwrap().remove(key).unwrap();
    }
    (to_yaml(&whole), to_yaml(&rest))
}

/// Asks every 100 ms for `duration` whether the guest may reboot, which it never may.
fn guest_never_reboots(server: &Server, duration: Duration, when: &str) {
    repeat_for(duration, Duration::from_millis(100), || {
        assert!(!guest_may_reboot(server), "a guest may reboot {when}");
        true
    });
}

/// The whole file is in force: once, retitled, the guest still without reboot.
fn applied_once_whole(server: &Server) {
    wait_log_ready(server, "config reloaded", 1);
    assert!(!guest_may_reboot(server), "a guest may reboot");
    let (status, body) = server.call("GetDashboard", json!({"title": ""}));
    assert_eq!(status, 200);
    assert!(body.to_string().contains("Reboot now"), "{body}");
    assert_eq!(
        server.log_count("config reloaded"),
        1,
        "applied once, whole"
    );
}

/// A writer truncates the config, writes the part before the access rules and keeps the file
/// open for 14 s, past the 10 s an entity file waits at most: the part (OliveTin's allow-all
/// defaults) is never in force while it is open, the log says what the reload waits for, and
/// the whole file is applied once it is closed.
#[test]
fn a_config_held_open_by_its_writer_is_applied_only_once_closed() {
    use std::io::Write;
    let server = Server::start(locked());
    watching(&server);
    let (first, second) = halves();
    let path = server.path("config.yaml");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.write_all(first.as_bytes()).unwrap();
    guest_never_reboots(
        &server,
        Duration::from_secs(14),
        "while the writer holds the file",
    );
    assert_eq!(server.log_count("config reloaded"), 0, "applied while open");
    assert!(
        server.log_shows("the config has changed but"),
        "the wait for the writer is not said"
    );
    assert!(server.log_shows("still open for writing"));
    assert!(!server.log_contains("applying the change as the files read now"));
    // Said at 2 s and again at 12 s: rate-limited, not once per event or second.
    let said = server.log_count("still open for writing");
    assert!((1..=2).contains(&said), "said {said} times");
    f.write_all(second.as_bytes()).unwrap();
    drop(f);
    applied_once_whole(&server);
    assert!(!server.log_contains("what they did not have"));
}

/// A writer truncates the config, writes the part before the access rules and holds it
/// open; another process runs `touch` on it (an open for writing and a close) and a reader
/// holds it open: neither the touch's close nor the quiet applies the part. Once the writer
/// has written the rest and closed, the whole file is applied though the reader still holds
/// it: the kernel says no writer, and a reader holds nothing back.
#[test]
fn a_config_held_open_is_not_released_by_another_process_touching_it() {
    use std::io::Write;
    let server = Server::start(locked());
    watching(&server);
    let (first, second) = halves();
    let path = server.path("config.yaml");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.write_all(first.as_bytes()).unwrap();
    guest_never_reboots(&server, Duration::from_millis(500), "after the first half");
    let touched = std::process::Command::new("touch")
        .arg(&path)
        .status()
        .unwrap();
    assert!(touched.success());
    // `: >> config.yaml` from a shell too: another open for writing and close.
    let appended = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(": >> '{}'", path.display()))
        .status()
        .unwrap();
    assert!(appended.success());
    guest_never_reboots(
        &server,
        Duration::from_secs(5),
        "after another process's close",
    );
    assert_eq!(server.log_count("config reloaded"), 0, "applied while open");
    assert!(server.log_shows("still open for writing"));
    // A reader (as less) opens it; the writer finishes and closes.
    let reader = std::fs::File::open(&path).unwrap();
    f.write_all(second.as_bytes()).unwrap();
    drop(f);
    applied_once_whole(&server);
    drop(reader);
    assert!(!server.log_contains("cannot tell whether a writer"));
}

/// `config.yaml` is a symlink to `real/current.yaml` (etckeeper, stow): an edit of the target
/// is applied, and so is an edit of the file the link is repointed to.
#[test]
fn a_config_reached_through_a_symlink_follows_its_target() {
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    let mut open = locked();
    open["defaultPermissions"]["exec"] = json!(true);
    std::fs::write(dir.path().join("real/current.yaml"), to_yaml(&open)).unwrap();
    let link = dir.path().join("config.yaml");
    std::os::unix::fs::symlink("real/current.yaml", &link).unwrap();
    let server = Server::start_yaml_as("", Some(link.to_str().unwrap()));
    assert!(wait_until(SOON, || server.log_contains("leads through a symlink to")));
    watching(&server);
    assert!(guest_may_reboot(&server));
    std::fs::write(dir.path().join("real/current.yaml"), to_yaml(&locked())).unwrap();
    assert!(
        wait_until(RELOAD, || !guest_may_reboot(&server)),
        "the edit of the link's target is not applied"
    );
    // Repointed to another file (`ln -sfn`), whose later edit is applied too.
    std::fs::create_dir(dir.path().join("other")).unwrap();
    let mut next = locked();
    next["actions"][0]["title"] = json!("Reboot next");
    std::fs::write(dir.path().join("other/next.yaml"), to_yaml(&next)).unwrap();
    let tmp = dir.path().join("config.yaml.new");
    std::os::unix::fs::symlink("other/next.yaml", &tmp).unwrap();
    std::fs::rename(&tmp, &link).unwrap();
    wait_log_ready(&server, "config reloaded", 2);
    std::fs::write(dir.path().join("other/next.yaml"), to_yaml(&open)).unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || guest_may_reboot(&server)),
        "the edit of the repointed link's target is not applied"
    );
}

/// The config reached through a linked directory (`etc` → `v1`) and through a chain whose
/// middle link is repointed: repointing either link is applied, and so is a later edit of the
/// new target, written the way the docs recommend (a temporary file renamed over).
#[test]
fn a_config_behind_a_linked_directory_or_a_chain_follows_every_link() {
    let dir = TempDir::new();
    let mut open = locked();
    open["defaultPermissions"]["exec"] = json!(true);
    for d in ["v1", "v2", "l1", "l2", "t"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    std::fs::write(dir.path().join("v1/config.yaml"), to_yaml(&open)).unwrap();
    std::fs::write(dir.path().join("v2/config.yaml"), to_yaml(&locked())).unwrap();
    let etc = dir.path().join("etc");
    std::os::unix::fs::symlink("v1", &etc).unwrap();
    let config = etc.join("config.yaml");
    let server = Server::start_yaml_as("", Some(config.to_str().unwrap()));
    assert!(wait_until(SOON, || server.log_contains("leads through a symlink to")));
    watching(&server);
    assert!(guest_may_reboot(&server));
    // `ln -sfn v2 etc`: the directory link repointed.
    let tmp = dir.path().join("etc.new");
    std::os::unix::fs::symlink("v2", &tmp).unwrap();
    std::fs::rename(&tmp, &etc).unwrap();
    assert!(
        wait_until(RELOAD, || !guest_may_reboot(&server)),
        "repointing the directory link is not applied"
    );
    // The new target is looked up off the event loop after the reload, then watched.
    let v2 = std::fs::canonicalize(dir.path().join("v2")).unwrap();
    assert!(server.log_shows(&format!("{}/config.yaml", v2.display())));
    // An edit in the new directory, by a temporary file renamed over.
    let staged = dir.path().join("v2/config.yaml.tmp");
    std::fs::write(&staged, to_yaml(&open)).unwrap();
    std::fs::rename(&staged, dir.path().join("v2/config.yaml")).unwrap();
    assert!(
        wait_until(RELOAD, || guest_may_reboot(&server)),
        "an edit behind the repointed directory link is not applied"
    );
    drop(server);

    // A chain: l1/config.yaml -> ../l2/mid.yaml -> ../t/a.yaml; the middle link repointed.
    std::fs::write(dir.path().join("t/a.yaml"), to_yaml(&open)).unwrap();
    std::fs::write(dir.path().join("t/b.yaml"), to_yaml(&locked())).unwrap();
    let mid = dir.path().join("l2/mid.yaml");
    std::os::unix::fs::symlink("../t/a.yaml", &mid).unwrap();
    let first = dir.path().join("l1/config.yaml");
    std::os::unix::fs::symlink("../l2/mid.yaml", &first).unwrap();
    let server = Server::start_yaml_as("", Some(first.to_str().unwrap()));
    watching(&server);
    assert!(guest_may_reboot(&server));
    let tmp = dir.path().join("l2/mid.new");
    std::os::unix::fs::symlink("../t/b.yaml", &tmp).unwrap();
    std::fs::rename(&tmp, &mid).unwrap();
    assert!(
        wait_until(RELOAD, || !guest_may_reboot(&server)),
        "repointing the chain's middle link is not applied"
    );
}

/// `cat half > config.yaml; sleep 3.5; cat rest >> config.yaml`: the first half settles
/// (quiet for 2 s, closed, read the same twice) and is refused, since it would fall back to
/// the allow-all defaults; the guest never gains anything, and the whole file is applied.
#[test]
fn a_config_written_in_two_steps_seconds_apart_never_falls_open() {
    two_steps_seconds_apart(halves());
}

/// The same with the ACLs in the first step and `defaultPermissions` alone in the second
/// (4 s apart): the first step drops a key the config in force writes, whose default would
/// let guests reboot, and is held.
#[test]
fn a_config_with_its_acls_before_its_defaults_never_falls_open() {
    two_steps_seconds_apart(halves_without(&["defaultPermissions"]));
}

fn two_steps_seconds_apart((first, second): (String, String)) {
    use std::io::Write;
    let server = Server::start(locked());
    watching(&server);
    let path = server.path("config.yaml");
    std::fs::write(&path, &first).unwrap();
    guest_never_reboots(&server, Duration::from_millis(4000), "after the first half");
    assert!(
        server.log_shows(
            "config.yaml no longer writes defaultPermissions, which it writes in the config in \
             force, and without it guests would gain exec on reboot"
        ),
        "the first half is not refused by the time the second comes"
    );
    assert!(server.log_shows("to apply this on purpose, write the key"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(second.as_bytes()).unwrap();
    drop(f);
    applied_once_whole(&server);
    guest_never_reboots(&server, Duration::from_secs(1), "after the whole file");
    assert!(!server.log_contains("what they did not have"));
}

/// A board file lets guests reboot through its ACL; the config replaces the board's ACLs with
/// its own. Written in two steps 4 s apart, its first step lacks `accessControlLists`, and
/// the board's would stand in for them: held, naming the file, though the merged config still
/// has the key. The whole file is applied.
#[test]
fn a_board_never_stands_in_for_the_acls_of_a_config_written_in_two_steps() {
    use std::io::Write;
    let server = Server::start(locked());
    watching(&server);
    write(
        &server.path("board.yaml"),
        "accessControlLists:\n  - {name: status, matchUsergroups: [guest], addToEveryAction: \
         true, permissions: {view: true, exec: true}}\n",
    );
    let mut whole = locked();
    whole["board"] = json!("board.yaml");
    replace(&server.path("config.yaml"), &to_yaml(&whole));
    wait_log_ready(&server, "config reloaded", 1);
    assert!(
        !guest_may_reboot(&server),
        "the config's ACLs replace the board's"
    );
    let (first, second) = split(whole, &["accessControlLists"]);
    let path = server.path("config.yaml");
    std::fs::write(&path, &first).unwrap();
    guest_never_reboots(&server, Duration::from_millis(4000), "after the first step");
    assert!(
        server.log_shows(
            "config.yaml no longer writes accessControlLists, which it writes in the config in \
             force, and without it guests would gain exec on reboot"
        ),
        "the first step is not held"
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(second.as_bytes()).unwrap();
    drop(f);
    wait_log_ready(&server, "config reloaded", 2);
    guest_never_reboots(&server, Duration::from_secs(1), "after the whole file");
}

/// A lockdown overlay (exec off) sits on a config that lets guests reboot. The overlay
/// directory redeployed (`rm -rf` and `mkdir`, its file back 4 s later) would leave the config
/// alone in force between: held, naming the file that is gone. Taking the lockdown away on
/// purpose (its file removed, then another that writes the key) is applied.
#[test]
fn an_overlay_directory_replaced_whole_never_widens_to_the_layer_below() {
    let server = Server::start(locked());
    watching(&server);
    let overlay = server.path("config.d");
    std::fs::create_dir(&overlay).unwrap();
    let lockdown = "defaultPermissions: {view: true, exec: false, logs: true, kill: false}\n";
    write(&overlay.join("90-lockdown.yaml"), lockdown);
    let mut open = locked();
    open["defaultPermissions"]["exec"] = json!(true);
    open["overlay"] = json!("config.d");
    replace(&server.path("config.yaml"), &to_yaml(&open));
    wait_log_ready(&server, "config reloaded", 1);
    assert!(
        !guest_may_reboot(&server),
        "the overlay's lockdown is in force"
    );

    std::fs::remove_dir_all(&overlay).unwrap();
    std::fs::create_dir(&overlay).unwrap();
    guest_never_reboots(
        &server,
        Duration::from_millis(4000),
        "while the overlay is empty",
    );
    assert!(
        server.log_shows(
            "90-lockdown.yaml, which writes defaultPermissions in the config in force, is gone, \
             and without it guests would gain exec on reboot"
        ),
        "the empty overlay is not held"
    );
    assert!(server.log_shows("or restart actiond"));
    write(&overlay.join("90-lockdown.yaml"), lockdown);
    guest_never_reboots(
        &server,
        Duration::from_millis(3000),
        "with the overlay back",
    );

    // On purpose: the lockdown removed, then a file that writes the key.
    std::fs::remove_file(overlay.join("90-lockdown.yaml")).unwrap();
    thread::sleep(Duration::from_millis(3000));
    assert!(!guest_may_reboot(&server));
    write(
        &overlay.join("50-open.yaml"),
        "defaultPermissions: {view: true, exec: true, logs: true, kill: false}\n",
    );
    assert!(
        wait_until(Duration::from_secs(10), || guest_may_reboot(&server)),
        "the key written in a new file is not applied"
    );
}

/// While a script rewrites an entity file every second, a config change that takes exec away
/// from guests is applied as promptly as ever (the two settle apart), and the entity file,
/// which never settles, is applied at the cap with a warning.
#[test]
fn an_entity_file_that_keeps_changing_holds_back_no_config_change() {
    let entities = TempDir::new();
    let file = entities.path().join("servers.yaml");
    std::fs::write(&file, "- {key: a, name: A}\n").unwrap();
    let mut config = locked();
    config["entities"] = json!([{"file": file, "name": "server"}]);
    let mut open = config.clone();
    open["defaultPermissions"]["exec"] = json!(true);
    let server = Server::start(open);
    watching(&server);
    assert!(guest_may_reboot(&server));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let written = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let writer = {
        let (stop, file, written) = (
            std::sync::Arc::clone(&stop),
            file.clone(),
            std::sync::Arc::clone(&written),
        );
        thread::spawn(move || {
            repeat_for(UNTIL_STOPPED, Duration::from_secs(1), || {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    return false;
                }
                let n = written.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                std::fs::write(&file, format!("- {{key: a, name: A{n}}}\n")).unwrap();
                true
            })
        })
    };
    // The entity file has changed twice: it is already unsettled when the config changes.
    assert!(wait_until(SOON, || written
        .load(std::sync::atomic::Ordering::Relaxed)
        >= 2));
    let changed = Instant::now();
    std::fs::write(server.path("config.yaml"), to_yaml(&config)).unwrap();
    let in_force = poll_every(Duration::from_millis(200), Duration::from_secs(12), || {
        if !guest_may_reboot(&server) {
            return Some(());
        }
        assert_ready_promptly(&server);
        None
    });
    assert!(
        in_force.is_some(),
        "the config change is not in force {:?} after it",
        changed.elapsed()
    );
    let forced = "the entity files have not settled 10 s after changing (they kept changing)";
    let ok = wait_until(Duration::from_secs(15), || server.log_contains(forced));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert!(ok, "the forced reload of the entity file is not said");
    assert!(!guest_may_reboot(&server));
}

#[test]
fn a_reload_that_widens_rights_says_who_gains_what_and_an_empty_file_is_not_applied() {
    let server = Server::start(locked());
    watching(&server);
    // Emptied in place (what `>` leaves before the text comes): not applied.
    std::fs::write(server.path("config.yaml"), "").unwrap();
    wait_log_ready(&server, "the file is empty", 1);
    assert!(!guest_may_reboot(&server));

    // Without the key the config in force writes, it would fall back to OliveTin's allow-all
    // defaults: held (a file still being written?) until the key is written out.
    let mut open = locked();
    open.as_object_mut().unwrap().remove("defaultPermissions");
    let tmp = server.path("config.yaml.tmp");
    std::fs::write(&tmp, to_yaml(&open)).unwrap();
    std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
    wait_log_ready(
        &server,
        "config.yaml no longer writes defaultPermissions",
        1,
    );
    assert!(!guest_may_reboot(&server));
    // Written out: applied, and the guests' gain said.
    open["defaultPermissions"] = json!({"view": true, "exec": true, "logs": true, "kill": true});
    std::fs::write(&tmp, to_yaml(&open)).unwrap();
    std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
    wait_log_ready(&server, "config reloaded", 1);
    assert!(guest_may_reboot(&server));
    let log = server.stop_and_log();
    let line = log
        .lines()
        .find(|l| l.contains("this reload gives guests what they did not have"))
        .unwrap_or_else(|| panic!("no line about the guests' gain:\n{log}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("exec on reboot; kill on reboot"), "{line}");
    assert!(
        log.contains("write a temporary file and rename it over instead"),
        "the widening reload does not say that quiet means whole for 2 s only:\n{log}"
    );
}

/// 300,000 sessions of one user (about 60 MB): more than a sessions file of actiond ever
/// holds. It is refused at start as too large, replaced, and the first login is prompt.
#[test]
fn a_sessions_file_of_300000_entries_is_refused_at_start_and_logins_stay_prompt() {
    let state = TempDir::new();
    let password = "alice pw";
    let hash = phc(password);
    let fingerprint = sha256_hex(&hash);
    let mut text = String::with_capacity(300_000 * 200);
    text.push_str(r#"{"version":2,"sessions":{"#);
    for i in 0..300_000u32 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#""{}":{{"username":"alice","passwordFingerprint":"{fingerprint}","expires":4102444800,"serial":{i}}}"#,
            sha256_hex(&i.to_string())
        ));
    }
    text.push_str("}}");
    std::fs::write(state.path().join("sessions.json"), &text).unwrap();
    drop(text);
    let mut config = locked();
    config["stateDirectory"] = json!(state.path());
    config["authLocalUsers"]["users"][0]["password"] = json!(hash);
    let began = Instant::now();
    let server = Server::start(config);
    assert_ready_promptly(&server);
    assert!(began.elapsed() < SOON, "start took {:?}", began.elapsed());
    assert!(
        server.log_shows("cannot read the sessions file"),
        "the oversized file was not refused"
    );
    let began = Instant::now();
    login(&server, "alice", password);
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "the first login took {:?}",
        began.elapsed()
    );
    let size = std::fs::metadata(state.path().join("sessions.json"))
        .unwrap()
        .len();
    assert!(size < 10_000, "the sessions file holds {size} bytes");
}

/// A local attacker who can write the state directory puts a FIFO and a symlink where the
/// state files' temporary copies go, and a symlink in the history file's place: a login, runs
/// and a compaction go on, nothing outside the directory is written, and readiness answers.
#[test]
fn fifos_and_symlinks_in_the_state_files_places_are_removed_never_opened_or_followed() {
    let state = TempDir::new();
    let elsewhere = TempDir::new();
    let victim = elsewhere.path().join("victim");
    std::fs::write(&victim, b"not actiond's").unwrap();
    mkfifo(&state.path().join(".sessions.json.tmp"));
    mkfifo(&state.path().join(".history.jsonl.tmp"));
    let mut config = locked();
    config["stateDirectory"] = json!(state.path());
    // Small, so that a few runs make the journal compact through its temporary file.
    config["logHistoryLimit"] = json!(3);
    config["defaultPermissions"]["exec"] = json!(true);
    let password = "alice pw";
    config["authLocalUsers"]["users"][0]["password"] = json!(phc(password));
    let server = Server::start(config);
    assert_ready_promptly(&server);
    login(&server, "alice", password);
    assert_ready_promptly(&server);
    std::fs::remove_file(state.path().join(".sessions.json.tmp")).ok();
    std::os::unix::fs::symlink(&victim, state.path().join(".sessions.json.tmp")).unwrap();
    login(&server, "alice", password);
    for _ in 0..12 {
        let entry = server.run("reboot");
        assert_eq!(entry["exitCode"], 0, "{entry}");
    }
    assert_ready_promptly(&server);
    assert_eq!(std::fs::read(&victim).unwrap(), b"not actiond's");
    assert!(
        !state.path().join(".history.jsonl.tmp").exists(),
        "the journal never compacted through its temporary file"
    );
    for name in ["sessions.json", "history.jsonl"] {
        let meta = std::fs::symlink_metadata(state.path().join(name)).unwrap();
        assert!(meta.is_file(), "{name} is not a regular file");
    }
}
